// ADD, SUB, MUL and DIV on the NPU (ADD and MUL descriptors, NNAPI broadcasting), quantized,
// float (FP32, FP16 formats) or int32 (wrapping; DIV float only), and the comparisons (of
// quantized tensors: a SUB whose sign a LUT turns into TENSOR_BOOL8; of float and int32 ones:
// COMPARE); a broadcast constant operand is expanded at compile time so that the operation
// streams contiguous rows.
#include "driver/compiler/Lowering.h"
#include "model/operations/Shapes.h"

namespace nncosim::driver {

// An operand over the 4-D output: per dimension its element stride, 0 where it is broadcast. A
// broadcast constant is expanded to the output's shape (a layout change, as weight packing is).
npu::StridedTensor operandRows(Lowering& lw, uint32_t k, const std::array<uint32_t, 4>& o4) {
    const auto& dims = lw.dims(k);
    std::array<uint32_t, 4> d4{1, 1, 1, 1};
    for (size_t i = 0; i < dims.size(); ++i) d4[4 - dims.size() + i] = dims[i];
    std::array<uint32_t, 4> strides{};
    for (int i = 3, s = 1; i >= 0; --i) {
        strides[i] = (d4[i] == 1 && o4[i] != 1) ? 0 : s;
        s *= d4[i];
    }
    const uint8_t* data = lw.constants().data(k);
    const std::array<uint32_t, 4> dense = npu::ChainBuilder::denseStrides(o4);
    if (!data || strides == dense) return {lw.address(k), strides};
    const uint32_t size = elementSize(lw.operand(k).type);
    std::vector<uint8_t> expanded;
    expanded.reserve(size_t{o4[0]} * dense[0] * size);
    for (uint32_t n = 0; n < o4[0]; ++n)
        for (uint32_t h = 0; h < o4[1]; ++h)
            for (uint32_t w = 0; w < o4[2]; ++w)
                for (uint32_t c = 0; c < o4[3]; ++c) {
                    const uint8_t* element =
                        data + size_t{size} * (n * strides[0] + h * strides[1] + w * strides[2] +
                                               c * strides[3]);
                    expanded.insert(expanded.end(), element, element + size);
                }
    return {lw.addConstant(expanded.data(), expanded.size()), dense};
}

/// The ADD descriptor of quantized ADD/SUB `params` from `a` and `b` to an output of `outType`.
npu::Descriptor addSubDescriptor(const Operand& a, const Operand& b, OperandType outType,
                                 const fixedpoint::AddSubParams& params) {
    npu::Descriptor d;
    d.opcode = npu::Opcode::ADD;
    d.aSigned = isSigned(a.type), d.bSigned = isSigned(b.type), d.outSigned = isSigned(outType);
    d.aZeroPoint = a.zeroPoint, d.bZeroPoint = b.zeroPoint, d.outZeroPoint = params.outputOffset;
    d.leftShift = fixedpoint::AddSubParams::kLeftShift;
    d.aMultiplier = params.input1.multiplier, d.aShift = params.input1.shift;
    d.bMultiplier = params.input2.multiplier, d.bShift = params.input2.shift;
    d.outMultiplier = params.output.multiplier, d.outShift = params.output.shift;
    d.actMin = params.range.min, d.actMax = params.range.max;
    return d;
}

/// The three-way order of x and y: -1, 0 or 1.
static int order(float x, float y) {
    return x < y ? -1 : x > y ? 1 : 0;
}

/// The SUB whose output's sign orders `a` against `b`, when it does so for every pair of values.
std::optional<fixedpoint::AddSubParams> orderingSub(const Operand& a, const Operand& b) {
    if (!isQuant8(a.type) || b.type != a.type) return std::nullopt;
    const int32_t middle = isSigned(a.type) ? 0 : 128;
    const float twiceMax = 2 * std::max(a.scale, b.scale);
    const fixedpoint::QuantInfo out{
        twiceMax / (1 << fixedpoint::AddSubParams::kLeftShift) * 1.0001f, middle};
    auto params = fixedpoint::computeAddSubParams({a.scale, a.zeroPoint}, {b.scale, b.zeroPoint},
                                                  out, {typeMin(a.type), typeMax(a.type)}, true);
    if (!params) return std::nullopt;
    for (int32_t x = typeMin(a.type); x <= typeMax(a.type); ++x) {
        const float real = fixedpoint::dequantizeValue(x, a.scale, a.zeroPoint);
        for (int32_t y = typeMin(b.type); y <= typeMax(b.type); ++y) {
            const int sign = order(static_cast<float>(fixedpoint::addSubElement(x, y, *params)),
                                   static_cast<float>(middle));
            if (sign != order(real, fixedpoint::dequantizeValue(y, b.scale, b.zeroPoint)))
                return std::nullopt;
        }
    }
    return params;
}

namespace {

Status supported(const Model& model, const Operation& op) {
    const Constants c(model);
    const Operand& a = c.operand(op.inputs[0]);
    const Operand& b = c.operand(op.inputs[1]);
    const Operand& out = c.operand(op.outputs[0]);
    const bool int32 = a.type == OperandType::TENSOR_INT32;
    if ((!isQuant8(a.type) && !floatFormat(a.type) && !int32) || b.type != a.type ||
        out.type != a.type)
        return unsupported(op,
                           "only 8-bit quantized, float32, float16 or int32 tensors of one type");
    auto act = c.scalar<int32_t>(op.inputs[2]);
    if (!act) return unsupported(op, "activation must be a constant");
    if (*act < 0 || *act > 3) return unsupported(op, "activation");
    if (a.dimensions.size() > 4 || b.dimensions.size() > 4) return unsupported(op, "rank above 4");
    if (floatFormat(a.type)) return okStatus();
    if (op.type == OperationType::DIV) return unsupported(op, "DIV of float tensors only");
    if (int32) return okStatus();  // no activation (validation)
    auto range = activationRange(*act, out);
    if (!range) return unsupported(op, "activation");
    const fixedpoint::QuantInfo qa{a.scale, a.zeroPoint}, qb{b.scale, b.zeroPoint},
        qo{out.scale, out.zeroPoint};
    if (op.type == OperationType::ADD || op.type == OperationType::SUB) {
        if (!fixedpoint::computeAddSubParams(qa, qb, qo, *range, op.type == OperationType::SUB))
            return unsupported(op, "multipliers");
    } else if (!fixedpoint::computeMulParams(qa, qb, qo, *range)) {
        return unsupported(op, "input scale product must be below the output scale");
    }
    return okStatus();
}

Result<std::vector<uint32_t>> outputShape(const Lowering& lw, const Operation& op) {
    auto shape = broadcastShape(lw.dims(op.inputs[0]), lw.dims(op.inputs[1]));
    if (!shape) return fail(ErrorStatus::GENERAL_FAILURE, "shapes do not broadcast");
    return *shape;
}

/// Streams `d` over inputs 0 and 1 of `op` (broadcast to output 0's shape) into `out`.
Status emitStream(Lowering& lw, const Operation& op, const npu::Descriptor& d, uint32_t out) {
    // The output's rank is the larger input's: operandRows below takes four dimensions.
    const auto shape = fourDims(lw, op, op.outputs[0]);
    if (!shape) return shape.status();
    const std::array<uint32_t, 4>& o4 = *shape;
    npu::ChainBuilder chain;
    const Status st =
        chain.stream(d, operandRows(lw, op.inputs[0], o4), operandRows(lw, op.inputs[1], o4),
                     {out, npu::ChainBuilder::denseStrides(o4)}, o4);
    if (!st.ok()) return lw.fail(op, st.message);
    lw.emitChain(chain);
    return okStatus();
}

Status lower(Lowering& lw, const Operation& op) {
    if (lw.isAddedInDrain(lw.opIndex())) return okStatus();  // by its convolution
    const Operand& a = lw.operand(op.inputs[0]);
    const Operand& b = lw.operand(op.inputs[1]);
    const Operand& out = lw.operand(op.outputs[0]);
    auto act = lw.constants().scalar<int32_t>(op.inputs[2]);
    if (!act) return lw.fail(op, "activation");
    if (auto format = floatFormat(a.type)) {
        const bool product = op.type == OperationType::MUL || op.type == OperationType::DIV;
        npu::Descriptor d =
            floatDescriptor(product ? npu::Opcode::MUL : npu::Opcode::ADD,
                            floatStage(*format, *act), op.type == OperationType::SUB);
        d.divide = op.type == OperationType::DIV;
        return emitStream(lw, op, d, lw.address(op.outputs[0]));
    }
    if (a.type == OperandType::TENSOR_INT32) {
        npu::Descriptor d;
        d.opcode = op.type == OperationType::MUL ? npu::Opcode::MUL : npu::Opcode::ADD;
        d.format = static_cast<uint32_t>(npu::Format::INT32);
        d.negateB = op.type == OperationType::SUB;
        return emitStream(lw, op, d, lw.address(op.outputs[0]));
    }
    auto range = activationRange(*act, out);
    if (!range) return lw.fail(op, "activation");
    const fixedpoint::QuantInfo qa{a.scale, a.zeroPoint}, qb{b.scale, b.zeroPoint},
        qo{out.scale, out.zeroPoint};
    npu::Descriptor d;
    if (op.type == OperationType::ADD || op.type == OperationType::SUB) {
        auto params =
            fixedpoint::computeAddSubParams(qa, qb, qo, *range, op.type == OperationType::SUB);
        if (!params) return lw.fail(op, "multipliers");
        d = addSubDescriptor(a, b, out.type, *params);
    } else {
        auto params = fixedpoint::computeMulParams(qa, qb, qo, *range);
        if (!params) return lw.fail(op, "multiplier");
        d.opcode = npu::Opcode::MUL;
        d.aSigned = isSigned(a.type), d.bSigned = isSigned(b.type),
        d.outSigned = isSigned(out.type);
        d.aZeroPoint = a.zeroPoint, d.bZeroPoint = b.zeroPoint, d.outZeroPoint = out.zeroPoint;
        d.outMultiplier = params->output.multiplier, d.outShift = params->output.shift;
        d.actMin = params->range.min, d.actMax = params->range.max;
    }
    return emitStream(lw, op, d, lw.address(op.outputs[0]));
}

// ---------------------------------------------------------------------------------------------
// EQUAL, NOT_EQUAL, GREATER, GREATER_EQUAL, LESS and LESS_EQUAL of 8-bit quantized tensors.
//
// NNAPI compares the real values, each dequantized in float. The NPU subtracts the two on the ADD
// unit, both rescaled as quantized SUB rescales them, into a byte whose output multiplier is
// just below one around a middle zero point: its sign is the comparison's, where the rescaling
// keeps the order of the real values. Whether it does depends on the scales and zero points only,
// so the claim checks all 65,536 pairs of stored values; a LUT turns the sign into the BOOL8.

/// The format in which COMPARE compares `a` and `b`: float or int32 tensors of one type.
std::optional<npu::Format> compareFormat(const Operand& a, const Operand& b) {
    if (b.type != a.type) return std::nullopt;
    if (a.type == OperandType::TENSOR_INT32) return npu::Format::INT32;
    return floatFormat(a.type);
}

Status comparisonSupported(const Model& model, const Operation& op) {
    const Constants c(model);
    const Operand& a = c.operand(op.inputs[0]);
    const Operand& b = c.operand(op.inputs[1]);
    if (c.operand(op.outputs[0]).type != OperandType::TENSOR_BOOL8)
        return unsupported(op, "the output must be TENSOR_BOOL8");
    if (a.dimensions.size() > 4 || b.dimensions.size() > 4) return unsupported(op, "rank above 4");
    if (!compareFormat(a, b) && !orderingSub(a, b))
        return unsupported(op,
                           "only float or int32 tensors, or 8-bit quantized ones whose scales "
                           "keep their order in the integer rescaling");
    return okStatus();
}

/// Whether the comparison holds for the three-way order `sign`.
bool holds(OperationType type, int sign) {
    switch (type) {
        case OperationType::EQUAL:
            return sign == 0;
        case OperationType::NOT_EQUAL:
            return sign != 0;
        case OperationType::GREATER:
            return sign > 0;
        case OperationType::GREATER_EQUAL:
            return sign >= 0;
        case OperationType::LESS:
            return sign < 0;
        default:  // LESS_EQUAL
            return sign <= 0;
    }
}

/// The COMPARE of `type`.
npu::Compare compareOf(OperationType type) {
    switch (type) {
        case OperationType::EQUAL:
            return npu::Compare::EQ;
        case OperationType::NOT_EQUAL:
            return npu::Compare::NE;
        case OperationType::GREATER:
            return npu::Compare::GT;
        case OperationType::GREATER_EQUAL:
            return npu::Compare::GE;
        case OperationType::LESS:
            return npu::Compare::LT;
        default:  // LESS_EQUAL
            return npu::Compare::LE;
    }
}

std::vector<uint64_t> comparisonScratch(const Lowering& lw, const Operation& op) {
    const uint64_t count = elementCount(lw.dims(op.outputs[0]));
    const auto format = compareFormat(lw.operand(op.inputs[0]), lw.operand(op.inputs[1]));
    return {format ? npu::formatBytes(static_cast<uint32_t>(*format)) * count : count};
}

Status lowerComparison(Lowering& lw, const Operation& op) {
    const Operand& a = lw.operand(op.inputs[0]);
    const Operand& b = lw.operand(op.inputs[1]);
    const uint32_t count = static_cast<uint32_t>(elementCount(lw.dims(op.outputs[0])));
    if (const auto format = compareFormat(a, b)) {
        // The 0 or 1 of each element, an integer of the element's size, then their low bytes.
        npu::Descriptor d;
        d.opcode = npu::Opcode::ADD;
        d.format = static_cast<uint32_t>(*format);
        d.compare = static_cast<uint32_t>(compareOf(op.type));
        const uint32_t results = lw.scratch().at(0);
        NN_RETURN_IF_ERROR(emitStream(lw, op, d, results));
        MoveEmitter move(lw, 1, 0);
        return move.block(results, lw.address(op.outputs[0]),
                          {{count, static_cast<int64_t>(npu::formatBytes(d.format)), 1}}, false);
    }
    auto params = orderingSub(a, b);
    if (!params) return lw.fail(op, "no exact integer comparison for these scales");
    const uint32_t difference = lw.scratch().at(0);
    NN_RETURN_IF_ERROR(emitStream(lw, op, addSubDescriptor(a, b, a.type, *params), difference));
    const int32_t middle = params->outputOffset;
    const Table table = tableOf(a.type, [&](int32_t v) {
        return holds(op.type, v < middle ? -1 : v > middle ? 1 : 0) ? 1 : 0;
    });
    MoveEmitter move(lw, 1, 0, table);
    return move.block(difference, lw.address(op.outputs[0]), {{count, 1, 1}}, false);
}

}  // namespace

extern const NpuOperation kElementwiseOperation{supported, outputShape, lower,   nullptr,
                                                {},        false,       nullptr, true};
extern const NpuOperation kComparisonOperation{
    comparisonSupported, outputShape, lowerComparison, comparisonScratch, {}, false, nullptr, true};

}  // namespace nncosim::driver
