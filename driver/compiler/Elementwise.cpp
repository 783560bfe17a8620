// ADD, SUB and MUL on the NPU (ADD and MUL descriptors, NNAPI broadcasting); a broadcast
// constant operand is expanded at compile time so that the operation streams contiguous rows.
#include "driver/compiler/Lowering.h"
#include "model/operations/Shapes.h"

namespace nncosim::driver {
namespace {

Status supported(const Model& model, const Operation& op) {
    const Constants c(model);
    const Operand& a = c.operand(op.inputs[0]);
    const Operand& b = c.operand(op.inputs[1]);
    const Operand& out = c.operand(op.outputs[0]);
    if (!isQuant8(a.type) || b.type != a.type || out.type != a.type)
        return unsupported(op, "only 8-bit quantized tensors");
    auto act = c.scalar<int32_t>(op.inputs[2]);
    if (!act) return unsupported(op, "activation must be a constant");
    auto range = activationRange(*act, out);
    if (!range) return unsupported(op, "activation");
    if (a.dimensions.size() > 4 || b.dimensions.size() > 4) return unsupported(op, "rank above 4");
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

// An operand over the 4-D output: per dimension its byte stride, 0 where it is broadcast. A
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
    std::vector<uint8_t> expanded;
    expanded.reserve(size_t{o4[0]} * dense[0]);
    for (uint32_t n = 0; n < o4[0]; ++n)
        for (uint32_t h = 0; h < o4[1]; ++h)
            for (uint32_t w = 0; w < o4[2]; ++w)
                for (uint32_t c = 0; c < o4[3]; ++c)
                    expanded.push_back(
                        data[n * strides[0] + h * strides[1] + w * strides[2] + c * strides[3]]);
    return {lw.addConstant(expanded.data(), expanded.size()), dense};
}

Status lower(Lowering& lw, const Operation& op) {
    const Operand& a = lw.operand(op.inputs[0]);
    const Operand& b = lw.operand(op.inputs[1]);
    const Operand& out = lw.operand(op.outputs[0]);
    auto act = lw.constants().scalar<int32_t>(op.inputs[2]);
    auto range = act ? activationRange(*act, out) : std::nullopt;
    if (!range) return lw.fail(op, "activation");
    npu::Descriptor d;
    d.aSigned = isSigned(a.type), d.bSigned = isSigned(b.type), d.outSigned = isSigned(out.type);
    d.aZeroPoint = a.zeroPoint, d.bZeroPoint = b.zeroPoint, d.outZeroPoint = out.zeroPoint;
    const fixedpoint::QuantInfo qa{a.scale, a.zeroPoint}, qb{b.scale, b.zeroPoint},
        qo{out.scale, out.zeroPoint};
    if (op.type == OperationType::ADD || op.type == OperationType::SUB) {
        auto params =
            fixedpoint::computeAddSubParams(qa, qb, qo, *range, op.type == OperationType::SUB);
        if (!params) return lw.fail(op, "multipliers");
        d.opcode = npu::Opcode::ADD;
        d.leftShift = fixedpoint::AddSubParams::kLeftShift;
        d.aMultiplier = params->input1.multiplier, d.aShift = params->input1.shift;
        d.bMultiplier = params->input2.multiplier, d.bShift = params->input2.shift;
        d.outMultiplier = params->output.multiplier, d.outShift = params->output.shift;
        d.actMin = params->range.min, d.actMax = params->range.max;
    } else {
        auto params = fixedpoint::computeMulParams(qa, qb, qo, *range);
        if (!params) return lw.fail(op, "multiplier");
        d.opcode = npu::Opcode::MUL;
        d.outMultiplier = params->output.multiplier, d.outShift = params->output.shift;
        d.actMin = params->range.min, d.actMax = params->range.max;
    }
    const auto& outD = lw.dims(op.outputs[0]);
    std::array<uint32_t, 4> o4{1, 1, 1, 1};
    for (size_t i = 0; i < outD.size(); ++i) o4[4 - outD.size() + i] = outD[i];
    npu::ChainBuilder chain;
    const Status st =
        chain.stream(d, operandRows(lw, op.inputs[0], o4), operandRows(lw, op.inputs[1], o4),
                     {lw.address(op.outputs[0]), npu::ChainBuilder::denseStrides(o4)}, o4);
    if (!st.ok()) return lw.fail(op, st.message);
    lw.emitChain(chain);
    return okStatus();
}

}  // namespace

extern const NpuOperation kElementwiseOperation{supported, outputShape, lower, nullptr, {}, false};

}  // namespace nncosim::driver
