// Unary operations through the LUT unit: every quantized operation whose output byte is a
// function of its input byte alone (RELU, RELU1, RELU6, LOGISTIC, TANH, HARD_SWISH, RSQRT and
// CAST between equal types; PRELU, MAXIMUM and MINIMUM whose other operand is a constant of one
// value; tables computed with the golden's arithmetic from model/FixedPoint.h), the vendor
// extension's LUT8 (its own table), and MAXIMUM and MINIMUM of two tensors (two tables, then a
// MAXPOOL over the pair). Float RELU, RELU1 and RELU6 run on the float ADD instead; float
// MAXIMUM and MINIMUM on the float MAXPOOL over the pair. DEQUANTIZE of 8-bit tensors and CAST
// from TENSOR_QUANT8_ASYMM to float or int32 widen: one table per output byte, each pass writing
// that byte of every element.
#include <algorithm>
#include <cstring>

#include <Eigen/Core>

#include "driver/compiler/Lowering.h"
#include "model/NpuExtension.h"
#include "model/operations/Shapes.h"

namespace nncosim::driver {
namespace {

std::optional<Table> reluTable(OperationType opType, const Operand& in) {
    const auto act = opType == OperationType::RELU    ? FusedActivation::RELU
                     : opType == OperationType::RELU1 ? FusedActivation::RELU1
                                                      : FusedActivation::RELU6;
    const auto range = fixedpoint::calculateActivationRange(act, in.scale, in.zeroPoint,
                                                            typeMin(in.type), typeMax(in.type));
    if (!range) return std::nullopt;
    return tableOf(in.type, [&](int32_t v) { return std::clamp(v, range->min, range->max); });
}

// LOGISTIC and TANH with the output quantization NNAPI fixes, as the golden computes them.
std::optional<Table> sigmoidTable(OperationType opType, const Operand& in, const Operand& out) {
    const bool logistic = opType == OperationType::LOGISTIC;
    const bool sgn = isSigned(in.type);
    const float expectedScale = logistic ? 1.0f / 256 : 1.0f / 128;
    const int32_t expectedZero = logistic ? (sgn ? -128 : 0) : (sgn ? 0 : 128);
    if (out.scale != expectedScale || out.zeroPoint != expectedZero) return std::nullopt;
    const auto params = fixedpoint::computeSigmoidParams(in.scale);
    if (!params) return std::nullopt;
    using F4 = fixedpoint::FixedPoint<int32_t, fixedpoint::SigmoidParams::kInputIntegerBits>;
    const int32_t lo = typeMin(in.type), hi = typeMax(in.type);
    return tableOf(in.type, [&](int32_t v) {
        const int32_t centred = v - in.zeroPoint;
        if (centred <= -params->inputRangeRadius) return lo;
        if (centred >= params->inputRangeRadius) return hi;
        const F4 x = F4::fromRaw(fixedpoint::multiplyByQuantizedMultiplier(
            centred, params->input.multiplier, params->input.shift));
        const int32_t r = logistic
                              ? fixedpoint::roundingDivideByPOT(fixedpoint::logistic(x).raw(), 23)
                              : fixedpoint::roundingDivideByPOT(fixedpoint::tanh(x).raw(), 24);
        return std::clamp(r + expectedZero, lo, hi);
    });
}

// HARD_SWISH in TFLite's int16 fixed point.
std::optional<Table> hardSwishTable(const Operand& in, const Operand& out) {
    const auto params =
        fixedpoint::computeHardSwishParams({in.scale, in.zeroPoint}, {out.scale, out.zeroPoint});
    if (!params) return std::nullopt;
    return tableOf(in.type, [&](int32_t v) {
        return fixedpoint::hardSwishElement(v, *params, typeMin(out.type), typeMax(out.type));
    });
}

// RSQRT as Android computes it: dequantize, 1 / sqrt in float, quantize.
Table rsqrtTable(const Operand& in, const Operand& out) {
    return tableOf(in.type, [&](int32_t v) -> int32_t {
        const float real =
            fixedpoint::reciprocalSqrt(fixedpoint::dequantizeValue(v, in.scale, in.zeroPoint));
        if (isSigned(out.type))
            return fixedpoint::quantizeValue<int8_t>(real, out.scale, out.zeroPoint);
        return fixedpoint::quantizeValue<uint8_t>(real, out.scale, out.zeroPoint);
    });
}

// The table of a unary operation from `in`'s to `out`'s quantization; nullopt when the NPU
// cannot run it exactly.
std::optional<Table> activationTable(OperationType type, const Operand& in, const Operand& out) {
    switch (type) {
        case OperationType::RELU:
        case OperationType::RELU1:
        case OperationType::RELU6:
            return reluTable(type, in);
        case OperationType::LOGISTIC:
        case OperationType::TANH:
            return sigmoidTable(type, in, out);
        case OperationType::HARD_SWISH:
            return hardSwishTable(in, out);
        case OperationType::RSQRT:
            return rsqrtTable(in, out);
        case OperationType::CAST:  // between quantized types: the stored values unchanged
            if (in.type != out.type) return std::nullopt;
            return tableOf(in.type, [](int32_t v) { return v; });
        default:
            return std::nullopt;
    }
}

// The output elements (bits, little-endian) of DEQUANTIZE (8-bit quantized to float) and of CAST
// from TENSOR_QUANT8_ASYMM to float or int32, per stored input byte, as the golden computes
// them; nullopt for other operations and types.
std::optional<std::array<uint32_t, 256>> wideningValues(OperationType type, const Operand& in,
                                                        const Operand& out) {
    const bool toFloat = floatFormat(out.type).has_value();
    const bool dequantize = type == OperationType::DEQUANTIZE && toFloat &&
                            (isQuant8(in.type) || in.type == OperandType::TENSOR_QUANT8_SYMM);
    const bool cast = type == OperationType::CAST && in.type == OperandType::TENSOR_QUANT8_ASYMM &&
                      (toFloat || out.type == OperandType::TENSOR_INT32);
    if (!dequantize && !cast) return std::nullopt;
    const bool signedBytes = in.type != OperandType::TENSOR_QUANT8_ASYMM;
    std::array<uint32_t, 256> bits{};
    for (int b = 0; b < 256; ++b) {
        const int32_t v = signedBytes ? static_cast<int8_t>(b) : b;
        if (out.type == OperandType::TENSOR_INT32) {
            bits[b] = static_cast<uint32_t>(v);
            continue;
        }
        const float real =
            dequantize ? fixedpoint::dequantizeValue(v, in.scale, in.zeroPoint) : float(v);
        if (out.type == OperandType::TENSOR_FLOAT16) {
            const Eigen::half h(real);
            uint16_t u;
            std::memcpy(&u, &h, 2);
            bits[b] = u;
        } else {
            std::memcpy(&bits[b], &real, 4);
        }
    }
    return bits;
}

/// The fused-activation code of RELU, RELU1 and RELU6; nullopt for other operations.
std::optional<int32_t> reluActivation(OperationType type) {
    switch (type) {
        case OperationType::RELU:
            return static_cast<int32_t>(FusedActivation::RELU);
        case OperationType::RELU1:
            return static_cast<int32_t>(FusedActivation::RELU1);
        case OperationType::RELU6:
            return static_cast<int32_t>(FusedActivation::RELU6);
        default:
            return std::nullopt;
    }
}

Status activationSupported(const Model& model, const Operation& op) {
    const Operand& in = model.main.operands[op.inputs[0]];
    const Operand& out = model.main.operands[op.outputs[0]];
    if (floatFormat(in.type) && out.type == in.type && reluActivation(op.type)) return okStatus();
    if (wideningValues(op.type, in, out)) return okStatus();
    if (!isQuant8(in.type) || out.type != in.type || !activationTable(op.type, in, out))
        return unsupported(op,
                           "only 8-bit quantized tensors with NNAPI's output quantization, "
                           "float RELU, RELU1 and RELU6, or 8-bit DEQUANTIZE and CAST");
    return okStatus();
}

Result<std::vector<uint32_t>> sameShape(const Lowering& lw, const Operation& op) {
    return lw.dims(op.inputs[0]);
}

// The table applied to every element of `input`, streamed as rows.
Status lowerTable(Lowering& lw, const Operation& op, uint32_t input, const Table& table) {
    const npu::Descriptor d =
        lookupDescriptor(lw, lw.operand(input).type, lw.operand(op.outputs[0]).type, table);
    const auto total = static_cast<uint32_t>(elementCount(lw.dims(input)));
    npu::ChainBuilder chain;
    const Status st = chain.stream(d, {lw.address(input), {0, 0, 0, 1}}, std::nullopt,
                                   {lw.address(op.outputs[0]), {0, 0, 0, 1}}, {1, 1, 1, total});
    if (!st.ok()) return lw.fail(op, st.message);
    lw.emitChain(chain);
    return okStatus();
}

}  // namespace

// Per byte k of the output elements a LUT pass writing that byte (rows of one element, which
// ChainBuilder::stream splits into parts that fit a buffer).
Status widenBytes(Lowering& lw, const Operation& op, OperandType in, uint32_t src, uint32_t dst,
                  uint32_t size, uint32_t count, const std::array<uint32_t, 256>& bits) {
    npu::ChainBuilder chain;
    for (uint32_t k = 0; k < size; ++k) {
        Table table{};
        for (int b = 0; b < 256; ++b) table[b] = static_cast<uint8_t>(bits[b] >> (8 * k));
        const npu::Descriptor d = lookupDescriptor(lw, in, in, table);
        const Status st = chain.stream(d, {src, {0, 0, 0, 1}}, std::nullopt,
                                       {dst + k, {0, 0, 0, size}}, {1, 1, 1, count});
        if (!st.ok()) return lw.fail(op, st.message);
    }
    lw.emitChain(chain);
    return okStatus();
}

// One stream row of copies of `value`, read at row stride 0.
Status streamWithConstant(Lowering& lw, const Operation& op, const npu::Descriptor& d, uint32_t src,
                          uint32_t dst, uint32_t count, uint32_t value) {
    const uint32_t size = npu::elementBytes(d);
    std::vector<uint8_t> row(npu::ChainBuilder::kStreamRowElements * size);
    for (size_t i = 0; i < row.size(); i += size) std::memcpy(&row[i], &value, size);
    npu::ChainBuilder chain;
    const Status st =
        chain.stream(d, {src, {0, 0, 0, 1}},
                     npu::StridedTensor{lw.addConstant(row.data(), row.size()), {}, true},
                     {dst, {0, 0, 0, 1}}, {1, 1, 1, count});
    if (!st.ok()) return lw.fail(op, st.message);
    lw.emitChain(chain);
    return okStatus();
}

namespace {

// Float RELU, RELU1 and RELU6: x + (-0), which is x for every x, with the activation's clamp.
Status lowerFloatRelu(Lowering& lw, const Operation& op, npu::Format format) {
    const npu::Descriptor d =
        floatDescriptor(npu::Opcode::ADD, floatStage(format, *reluActivation(op.type)));
    const uint32_t negativeZero = format == npu::Format::FP16 ? 0x8000u : npu::kFp32NegZero;
    return streamWithConstant(lw, op, d, lw.address(op.inputs[0]), lw.address(op.outputs[0]),
                              static_cast<uint32_t>(elementCount(lw.dims(op.inputs[0]))),
                              negativeZero);
}

Status lowerWidening(Lowering& lw, const Operation& op, const std::array<uint32_t, 256>& bits) {
    return widenBytes(lw, op, lw.operand(op.inputs[0]).type, lw.address(op.inputs[0]),
                      lw.address(op.outputs[0]), elementSize(lw.operand(op.outputs[0]).type),
                      static_cast<uint32_t>(elementCount(lw.dims(op.inputs[0]))), bits);
}

Status lowerActivation(Lowering& lw, const Operation& op) {
    const Operand& in = lw.operand(op.inputs[0]);
    if (auto bits = wideningValues(op.type, in, lw.operand(op.outputs[0])))
        return lowerWidening(lw, op, *bits);
    if (auto format = floatFormat(in.type)) return lowerFloatRelu(lw, op, *format);
    auto table = activationTable(op.type, lw.operand(op.inputs[0]), lw.operand(op.outputs[0]));
    if (!table) return lw.fail(op, "quantization");
    return lowerTable(lw, op, op.inputs[0], *table);
}

// PRELU, MAXIMUM and MINIMUM with one operand a constant of a single value (PyTorch's PReLU()
// with one parameter, clamp() converted to MAXIMUM/MINIMUM): a function of the other operand's
// byte. The constant may be broadcast, but must not enlarge the other operand's shape.
struct ConstantOperand {
    uint32_t input = 0;    ///< the position of the operand that varies
    int32_t constant = 0;  ///< the constant's stored value
};

std::optional<ConstantOperand> constantOperand(const Constants& c, const Operation& op) {
    for (uint32_t k : {1u, 0u}) {
        if (op.type == OperationType::PRELU && k == 0) continue;  // alpha is input 1
        const Operand& constant = c.operand(op.inputs[k]);
        const Operand& other = c.operand(op.inputs[1 - k]);
        const uint8_t* data = c.data(op.inputs[k]);
        const uint64_t count = elementCount(constant.dimensions);
        if (!data || count == 0 || !c.isConstant(op.inputs[k]) || c.isConstant(op.inputs[1 - k]) ||
            constant.dimensions.size() > other.dimensions.size())
            continue;
        if (std::any_of(data, data + count, [&](uint8_t b) { return b != data[0]; })) continue;
        // Every dimension of the constant 1 or equal to the other operand's (known) one.
        bool stretches = false;
        for (size_t i = 1; i <= constant.dimensions.size(); ++i) {
            const uint32_t cd = constant.dimensions[constant.dimensions.size() - i];
            const uint32_t od = other.dimensions[other.dimensions.size() - i];
            stretches |= cd != 1 && cd != od;
        }
        if (stretches) continue;
        const int32_t value = isSigned(constant.type) ? static_cast<int8_t>(data[0]) : data[0];
        return ConstantOperand{1 - k, value};
    }
    return std::nullopt;
}

template <typename T>
std::optional<Table> constantOperandTableOf(OperationType type, const Operand& in,
                                            const Operand& constant, int32_t value,
                                            const Operand& out) {
    const fixedpoint::QuantInfo qi{in.scale, in.zeroPoint}, qc{constant.scale, constant.zeroPoint},
        qo{out.scale, out.zeroPoint};
    if (type == OperationType::PRELU) {
        const auto params = fixedpoint::computePreluParams(qi, qc, qo);
        if (!params) return std::nullopt;
        return tableOf(in.type, [&](int32_t v) {
            return fixedpoint::preluElement(v, value, *params, typeMin(out.type),
                                            typeMax(out.type));
        });
    }
    // MAXIMUM, MINIMUM: both requantized to the output, then std::max / std::min.
    const T c = fixedpoint::requantizeValue(static_cast<T>(value), qc, qo);
    return tableOf(in.type, [&](int32_t v) {
        const T x = fixedpoint::requantizeValue(static_cast<T>(v), qi, qo);
        return type == OperationType::MAXIMUM ? std::max(x, c) : std::min(x, c);
    });
}

std::optional<Table> constantOperandTable(const Constants& c, const Operation& op,
                                          const ConstantOperand& k) {
    const Operand& in = c.operand(op.inputs[k.input]);
    const Operand& constant = c.operand(op.inputs[1 - k.input]);
    const Operand& out = c.operand(op.outputs[0]);
    if (isSigned(in.type))
        return constantOperandTableOf<int8_t>(op.type, in, constant, k.constant, out);
    return constantOperandTableOf<uint8_t>(op.type, in, constant, k.constant, out);
}

Status constantOperandSupported(const Model& model, const Operation& op) {
    const Constants c(model);
    const Operand& in = c.operand(op.inputs[0]);
    if (!isQuant8(in.type) || c.operand(op.outputs[0]).type != in.type)
        return unsupported(op, "only 8-bit quantized tensors");
    const auto k = constantOperand(c, op);
    if (!k)
        return unsupported(op,
                           "only with one operand a constant of one value that does not "
                           "broadcast the other");
    if (!constantOperandTable(c, op, *k)) return unsupported(op, "multipliers");
    return okStatus();
}

Result<std::vector<uint32_t>> constantOperandOutputShape(const Lowering& lw, const Operation& op) {
    auto shape = broadcastShape(lw.dims(op.inputs[0]), lw.dims(op.inputs[1]));
    const auto k = constantOperand(lw.constants(), op);
    if (!shape || !k || *shape != lw.dims(op.inputs[k->input]))
        return fail(ErrorStatus::GENERAL_FAILURE, "the constant operand broadcasts the other");
    return *shape;
}

Status lowerConstantOperand(Lowering& lw, const Operation& op) {
    const auto k = constantOperand(lw.constants(), op);
    auto table = k ? constantOperandTable(lw.constants(), op, *k) : std::nullopt;
    if (!table) return lw.fail(op, "quantization");
    return lowerTable(lw, op, op.inputs[k->input], *table);
}

// MAXIMUM and MINIMUM of two tensors: each operand through its requantization table (the
// golden's requantizeValue) into one of two stacked copies of the output's shape, broadcast by
// stride 0, then one MAXPOOL window over the pair. MINIMUM complements on the way in and out (~x
// reverses the order of uint8 and of int8 bytes alike).
template <typename T>
Table toOutputTable(const Operand& in, const Operand& out, bool complement) {
    const fixedpoint::QuantInfo qi{in.scale, in.zeroPoint}, qo{out.scale, out.zeroPoint};
    return tableOf(in.type, [&](int32_t v) {
        const int32_t x = fixedpoint::requantizeValue(static_cast<T>(v), qi, qo);
        return complement ? ~x : x;
    });
}

Table toOutput(const Operand& in, const Operand& out, bool complement) {
    return isSigned(in.type) ? toOutputTable<int8_t>(in, out, complement)
                             : toOutputTable<uint8_t>(in, out, complement);
}

Status pairSupported(const Constants& c, const Operation& op) {
    const Operand& a = c.operand(op.inputs[0]);
    const Operand& b = c.operand(op.inputs[1]);
    const Operand& out = c.operand(op.outputs[0]);
    if ((!isQuant8(a.type) && !floatFormat(a.type)) || b.type != a.type || out.type != a.type)
        return unsupported(op, "only 8-bit quantized, float32 or float16 tensors of one type");
    if (a.dimensions.size() > 4 || b.dimensions.size() > 4) return unsupported(op, "rank above 4");
    if (elementCount(out.dimensions) * elementSize(out.type) > kMaxCount)
        return unsupported(op, "more bytes than the pooling's 16-bit channel count");
    return okStatus();
}

// A quantized MAXIMUM or MINIMUM with a constant operand of one value is one table.
bool byTable(const Constants& c, const Operation& op) {
    return !floatFormat(c.operand(op.outputs[0]).type) && constantOperand(c, op);
}

Status maxMinSupported(const Model& model, const Operation& op) {
    const Constants c(model);
    if (byTable(c, op)) {
        if (!isQuant8(c.operand(op.outputs[0]).type))
            return unsupported(op, "only 8-bit quantized tensors with a constant operand");
        return constantOperandSupported(model, op);
    }
    return pairSupported(c, op);
}

Result<std::vector<uint32_t>> maxMinOutputShape(const Lowering& lw, const Operation& op) {
    if (byTable(lw.constants(), op)) return constantOperandOutputShape(lw, op);
    auto shape = broadcastShape(lw.dims(op.inputs[0]), lw.dims(op.inputs[1]));
    if (!shape) return fail(ErrorStatus::GENERAL_FAILURE, "shapes do not broadcast");
    return *shape;
}

// The two stacked operands, and for MINIMUM the complemented result.
std::vector<uint64_t> maxMinScratch(const Lowering& lw, const Operation& op) {
    if (byTable(lw.constants(), op)) return {};
    const uint64_t n =
        elementCount(lw.dims(op.outputs[0])) * elementSize(lw.operand(op.outputs[0]).type);
    if (op.type == OperationType::MINIMUM) return {2 * n, n};
    return {2 * n};
}

Status lowerMaxMin(Lowering& lw, const Operation& op) {
    if (byTable(lw.constants(), op)) return lowerConstantOperand(lw, op);
    const Operand& out = lw.operand(op.outputs[0]);
    const auto format = floatFormat(out.type);
    const uint32_t size = elementSize(out.type);
    const auto& outD = lw.dims(op.outputs[0]);
    const auto count = static_cast<uint32_t>(elementCount(outD));
    const uint32_t n = count * size;  // bytes of one stacked operand
    if (n == 0) return okStatus();
    if (n > kMaxCount || outD.size() > 4)
        return lw.fail(op, "output beyond the pooling's channels");
    const bool minimum = op.type == OperationType::MINIMUM;
    const uint32_t stack = lw.scratch().at(0);
    const auto outStrides = rowMajorStrides(outD);
    for (uint32_t k = 0; k < 2; ++k) {
        const auto& dims = lw.dims(op.inputs[k]);
        const auto inStrides = rowMajorStrides(dims);
        // Aligned on the right; a dimension of 1 broadcasts (stride 0).
        std::vector<MoveDim> moves;
        for (size_t d = 0; d < outD.size(); ++d) {
            const size_t lead = outD.size() - dims.size();
            const bool broadcast = d < lead || dims[d - lead] == 1;
            moves.push_back(
                {outD[d], broadcast ? 0 : inStrides[d - lead] * size, outStrides[d] * size});
        }
        moves.push_back({size, 1, 1});
        std::optional<Table> table;
        if (!format) table = toOutput(lw.operand(op.inputs[k]), out, minimum);
        MoveEmitter move(lw, size, 0, table);
        NN_RETURN_IF_ERROR(move.block(lw.address(op.inputs[k]), stack + k * n, moves, false));
    }
    if (format && minimum) {
        NN_RETURN_IF_ERROR(negateFloats(lw, op, *format, stack, stack, 2 * count));
    }
    npu::DeviceTensor pair;
    pair.addr = stack;
    pair.h = 2, pair.w = 1, pair.c = n;
    pair.isSigned = isSigned(out.type);
    pair.zeroPoint = out.zeroPoint;
    npu::DeviceTensor larger = pair;
    larger.addr = minimum ? lw.scratch().at(1) : lw.address(op.outputs[0]);
    larger.h = 1;
    npu::OutputStage stage{0, typeMin(out.type), typeMax(out.type)};
    if (format) {
        stage = unclampedFloatStage(*format);
    }
    npu::ChainBuilder chain;
    const Status st = chain.pool(npu::Pooling::MAX, pair, larger, {2, 1, 1, 1, 1, 1, 0, 0}, stage);
    if (!st.ok()) return lw.fail(op, st.message);
    lw.emitChain(chain);
    if (!minimum) return okStatus();
    if (format) return negateFloats(lw, op, *format, larger.addr, lw.address(op.outputs[0]), count);
    MoveEmitter back(lw, 1, 0, tableOf(out.type, [](int32_t v) { return ~v; }));
    return back.block(larger.addr, lw.address(op.outputs[0]), {{n, 1, 1}}, false);
}

// PRELU with an alpha tensor: max(positive part, negative part), each made so that the other
// wins where it is not the golden's branch. Quantized: a LUT writes the positive branch for
// x >= zp and the type's minimum below; another LUT clamps x to at most zp, and the quantized MUL
// by alpha gives the negative branch below zp and exactly the output zero point above (a zero
// product), which the positive branch (at least the zero point) then beats; a MAXPOOL over the
// two stacked results picks. Float: max(x, 0) + min(x, 0) * alpha (an infinite alpha would give
// NaN for x >= 0, where the golden gives x).
std::optional<fixedpoint::PreluParams> preluParams(const Constants& c, const Operation& op) {
    const Operand& in = c.operand(op.inputs[0]);
    const Operand& alpha = c.operand(op.inputs[1]);
    const Operand& out = c.operand(op.outputs[0]);
    auto params = fixedpoint::computePreluParams(
        {in.scale, in.zeroPoint}, {alpha.scale, alpha.zeroPoint}, {out.scale, out.zeroPoint});
    if (!params || params->negative.shift < -31 || params->negative.shift > 31) return std::nullopt;
    return params;
}

// A quantized PRELU whose alpha is a constant of one value: one LUT (constantOperandTable).
bool preluByTable(const Constants& c, const Operation& op) {
    return isQuant8(c.operand(op.inputs[0]).type) && constantOperand(c, op);
}

Status preluSupported(const Model& model, const Operation& op) {
    const Constants c(model);
    const Operand& in = c.operand(op.inputs[0]);
    if (preluByTable(c, op)) return constantOperandSupported(model, op);
    const Operand& alpha = c.operand(op.inputs[1]);
    if ((!isQuant8(in.type) && !floatFormat(in.type)) || alpha.type != in.type ||
        c.operand(op.outputs[0]).type != in.type)
        return unsupported(op, "only 8-bit quantized, float32 or float16 tensors of one type");
    if (in.dimensions.size() > 4 || alpha.dimensions.size() > in.dimensions.size())
        return unsupported(op, "rank above 4, or an alpha of a higher rank");
    if (elementCount(in.dimensions) != 0 && elementCount(alpha.dimensions) != 0 &&
        broadcastShape(in.dimensions, alpha.dimensions) != in.dimensions)
        return unsupported(op, "alpha broadcasts the input");
    if (isQuant8(in.type) && !preluParams(c, op)) return unsupported(op, "multipliers");
    return okStatus();
}

Result<std::vector<uint32_t>> preluOutputShape(const Lowering& lw, const Operation& op) {
    if (preluByTable(lw.constants(), op)) return constantOperandOutputShape(lw, op);
    if (broadcastShape(lw.dims(op.inputs[0]), lw.dims(op.inputs[1])) != lw.dims(op.inputs[0]))
        return fail(ErrorStatus::GENERAL_FAILURE, "alpha broadcasts the input");
    return lw.dims(op.inputs[0]);
}

// Quantized: the two stacked branches and the clamped input; float: the two parts.
std::vector<uint64_t> preluScratch(const Lowering& lw, const Operation& op) {
    if (preluByTable(lw.constants(), op)) return {};
    const uint64_t n = byteSize(lw.operand(op.inputs[0]).type, lw.dims(op.inputs[0]));
    return isQuant8(lw.operand(op.inputs[0]).type) ? std::vector<uint64_t>{2 * n, n}
                                                   : std::vector<uint64_t>{n, n};
}

Status lowerPrelu(Lowering& lw, const Operation& op) {
    if (preluByTable(lw.constants(), op)) return lowerConstantOperand(lw, op);
    const Operand& in = lw.operand(op.inputs[0]);
    const Operand& alpha = lw.operand(op.inputs[1]);
    const Operand& out = lw.operand(op.outputs[0]);
    const auto& dims = lw.dims(op.inputs[0]);
    const auto count = static_cast<uint32_t>(elementCount(dims));
    if (count == 0) return okStatus();
    const auto shape = fourDims(lw, op, op.inputs[0]);  // alpha broadcasts to it
    if (!shape) return shape.status();
    const std::array<uint32_t, 4>& o4 = *shape;
    const npu::StridedTensor alphaRows = operandRows(lw, op.inputs[1], o4);
    const std::array<uint32_t, 4> dense = npu::ChainBuilder::denseStrides(o4);
    const uint32_t x = lw.address(op.inputs[0]);
    const auto stream = [&](const npu::Descriptor& d, uint32_t a,
                            std::optional<npu::StridedTensor> b, uint32_t dst) {
        npu::ChainBuilder chain;
        const Status st = chain.stream(d, {a, dense}, b, {dst, dense}, o4);
        if (!st.ok()) return lw.fail(op, st.message);
        lw.emitChain(chain);
        return okStatus();
    };
    if (auto format = floatFormat(in.type)) {
        const uint32_t positive = lw.scratch().at(0), negative = lw.scratch().at(1);
        npu::OutputStage atLeastZero = unclampedFloatStage(*format), atMostZero = atLeastZero;
        atLeastZero.fpMin = 0;
        atMostZero.fpMax = 0;
        const uint32_t minusZero = *format == npu::Format::FP16 ? 0x8000u : npu::kFp32NegZero;
        NN_RETURN_IF_ERROR(streamWithConstant(
            lw, op, floatDescriptor(npu::Opcode::ADD, atLeastZero), x, positive, count, minusZero));
        NN_RETURN_IF_ERROR(streamWithConstant(lw, op, floatDescriptor(npu::Opcode::ADD, atMostZero),
                                              x, negative, count, minusZero));
        NN_RETURN_IF_ERROR(stream(floatDescriptor(npu::Opcode::MUL, unclampedFloatStage(*format)),
                                  negative, alphaRows, negative));
        return stream(floatDescriptor(npu::Opcode::ADD, unclampedFloatStage(*format)), positive,
                      npu::StridedTensor{negative, dense}, lw.address(op.outputs[0]));
    }
    const auto params = *preluParams(lw.constants(), op);
    const int32_t lo = typeMin(in.type), hi = typeMax(in.type);
    const uint32_t stack = lw.scratch().at(0), clamped = lw.scratch().at(1);
    const Table positiveBranch = tableOf(in.type, [&](int32_t v) {
        return v >= in.zeroPoint ? fixedpoint::preluElement(v, alpha.zeroPoint, params, lo, hi)
                                 : lo;
    });
    const Table atMostZeroPoint =
        tableOf(in.type, [&](int32_t v) { return std::min(v, in.zeroPoint); });
    NN_RETURN_IF_ERROR(
        stream(lookupDescriptor(lw, in.type, in.type, positiveBranch), x, std::nullopt, stack));
    NN_RETURN_IF_ERROR(
        stream(lookupDescriptor(lw, in.type, in.type, atMostZeroPoint), x, std::nullopt, clamped));
    npu::Descriptor negativeBranch;
    negativeBranch.opcode = npu::Opcode::MUL;
    negativeBranch.aSigned = negativeBranch.bSigned = negativeBranch.outSigned = isSigned(in.type);
    negativeBranch.aZeroPoint = in.zeroPoint, negativeBranch.bZeroPoint = alpha.zeroPoint;
    negativeBranch.outZeroPoint = out.zeroPoint;
    negativeBranch.outMultiplier = params.negative.multiplier;
    negativeBranch.outShift = params.negative.shift;
    negativeBranch.actMin = lo, negativeBranch.actMax = hi;
    NN_RETURN_IF_ERROR(stream(negativeBranch, clamped, alphaRows, stack + count));
    // The pair in parts of at most 16-bit channel counts, its two rows `count` bytes apart.
    npu::ChainBuilder chain;
    for (uint32_t first = 0; first < count; first += kMaxCount) {
        npu::DeviceTensor pair;
        pair.addr = stack + first;
        pair.h = 2, pair.w = 1, pair.c = std::min(kMaxCount, count - first);
        pair.pixelStride = count;
        pair.isSigned = isSigned(in.type);
        npu::DeviceTensor larger = pair;
        larger.addr = lw.address(op.outputs[0]) + first;
        larger.h = 1, larger.pixelStride = 0;
        const Status st =
            chain.pool(npu::Pooling::MAX, pair, larger, {2, 1, 1, 1, 1, 1, 0, 0}, {0, lo, hi});
        if (!st.ok()) return lw.fail(op, st.message);
    }
    lw.emitChain(chain);
    return okStatus();
}

// Validated by the device already (model/NpuExtension.h).
Status lut8Supported(const Model&, const Operation&) {
    return okStatus();
}

// The extension's table is indexed by value - lowest value; the NPU's by the raw byte.
Status lowerLut8(Lowering& lw, const Operation& op) {
    const uint8_t* table = lw.constants().data(op.inputs[1]);
    if (!table) return lw.fail(op, "table");
    const Operand& in = lw.operand(op.inputs[0]);
    return lowerTable(lw, op, op.inputs[0], tableOf(in.type, [&](int32_t v) {
                          return table[npu_extension::lutIndex(in.type, v)];
                      }));
}

}  // namespace

Status negateFloats(Lowering& lw, const Operation& op, npu::Format format, uint32_t src,
                    uint32_t dst, uint32_t count) {
    const npu::Descriptor d = floatDescriptor(npu::Opcode::MUL, unclampedFloatStage(format));
    const uint32_t minusOne = format == npu::Format::FP16 ? 0xbc00u : 0xbf800000u;
    return streamWithConstant(lw, op, d, src, dst, count, minusOne);
}

extern const NpuOperation kActivationOperation{
    activationSupported, sameShape, lowerActivation, nullptr, {}, false, nullptr, true};
extern const NpuOperation kPreluOperation{
    preluSupported, preluOutputShape, lowerPrelu, preluScratch, {}, false, nullptr, true};
extern const NpuOperation kMaxMinOperation{
    maxMinSupported, maxMinOutputShape, lowerMaxMin, maxMinScratch, {}, false, nullptr, true};
extern const NpuOperation kLut8Operation{lut8Supported, sameShape, lowerLut8, nullptr, {}, false};

}  // namespace nncosim::driver
