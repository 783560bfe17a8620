// FULLY_CONNECTED on the NPU: a 1x1 convolution over the batch rows (CONV descriptors); weights
// given as model inputs are scattered into the packed stream at run time. Float32 and float16
// layers run on the float CONV with a binary32 stream (float32 weights computed at run time
// scattered into it too).
#include "driver/compiler/Lowering.h"
#include "model/operations/Shapes.h"

namespace nncosim::driver {
namespace {

Status supported(const Model& model, const Operation& op) {
    const Constants c(model);
    const Operand& in = c.operand(op.inputs[0]);
    const Operand& w = c.operand(op.inputs[1]);
    const Operand& bias = c.operand(op.inputs[2]);
    const Operand& out = c.operand(op.outputs[0]);
    const bool isFloat = floatFormat(in.type).has_value();
    if ((!isQuant8(in.type) && !isFloat) || out.type != in.type || w.type != in.type)
        return unsupported(op, "only 8-bit quantized, float32 and float16 tensors");
    if (!isFloat && !c.isConstantOrInput(op.inputs[2]))
        return unsupported(op,
                           "the bias must be a constant or a model input (packed at compile time)");
    if (isFloat && bias.type != in.type) return unsupported(op, "bias type");
    if (isFloat && in.type != OperandType::TENSOR_FLOAT32 &&
        (!c.isConstantOrInput(op.inputs[1]) || !c.isConstantOrInput(op.inputs[2])))
        return unsupported(op, "float16 weights computed at run time (they would need widening)");
    auto act = c.scalar<int32_t>(op.inputs[3]);
    if (!act || (isFloat ? *act < 0 || *act > 3 : !activationRange(*act, out)))
        return unsupported(op, "activation must be a constant");
    const uint32_t size = elementSize(in.type);
    if (w.dimensions.size() != 2 || w.dimensions[0] > kMaxCount / size ||
        w.dimensions[1] > kMaxCount / size)
        return unsupported(op, "weights shape beyond the descriptor fields");
    if (ceilDiv(w.dimensions[1] * size, kAlign) > npu::kSpadWords)
        return unsupported(op, "input size beyond the scratchpad");
    if (!isFloat && !channelMultipliers(in, w, bias, out, w.dimensions[0]))
        return unsupported(op, "requantization multiplier");
    return okStatus();
}

Result<std::vector<uint32_t>> outputShape(const Lowering& lw, const Operation& op) {
    return fullyConnectedShape(lw.dims(op.inputs[0]), lw.dims(op.inputs[1]), lw.dims(op.inputs[2]));
}

// A float layer: the binary32 stream of the weights and bias (scattered in when computed at run
// time), one float CONV.
Status lowerFloat(Lowering& lw, const Operation& op, npu::Format format) {
    const Operand& in = lw.operand(op.inputs[0]);
    const uint32_t units = lw.dims(op.inputs[1])[0], inSize = lw.dims(op.inputs[1])[1];
    const uint32_t batches = lw.dims(op.outputs[0])[0], size = elementSize(in.type);
    const uint8_t* w = lw.constants().data(op.inputs[1]);
    const uint8_t* b = lw.constants().data(op.inputs[2]);
    auto act = lw.constants().scalar<int32_t>(op.inputs[3]);
    if (!act) return lw.fail(op, "activation");
    const size_t count = size_t{units} * inSize;
    const auto weights = w ? floatValues(in.type, w, count) : std::vector<float>(count, 0.0f);
    const auto bias = b ? floatValues(in.type, b, units) : std::vector<float>(units, 0.0f);
    const auto stream =
        npu::packFloatConvWeights(weights.data(), bias.data(), units, 1, 1, inSize, size);
    const uint32_t wAddr = lw.addConstant(stream.data(), stream.size());
    if (!w || !b) {
        NN_RETURN_IF_ERROR(
            scatterFloatWeights(lw, op, wAddr, units, inSize, 1, 1, false, false, inSize, 0));
    }
    npu::DeviceTensor input, output;
    input.addr = lw.address(op.inputs[0]);
    input.n = batches, input.c = inSize * size;
    output.addr = lw.address(op.outputs[0]);
    output.n = batches, output.c = units * size;
    npu::ChainBuilder chain;
    const Status st =
        chain.fullyConnected(input, output, wAddr, false, 0, floatStage(format, *act));
    if (!st.ok()) return lw.fail(op, st.message);
    lw.emitChain(chain);
    return okStatus();
}

Status lower(Lowering& lw, const Operation& op) {
    const Operand& in = lw.operand(op.inputs[0]);
    if (auto format = floatFormat(in.type)) return lowerFloat(lw, op, *format);
    const Operand& wOp = lw.operand(op.inputs[1]);
    const Operand& out = lw.operand(op.outputs[0]);
    const uint32_t units = lw.dims(op.inputs[1])[0], inSize = lw.dims(op.inputs[1])[1];
    const uint32_t batches = lw.dims(op.outputs[0])[0];
    auto multipliers = channelMultipliers(in, wOp, lw.operand(op.inputs[2]), out, units);
    auto act = lw.constants().scalar<int32_t>(op.inputs[3]);
    if (!multipliers || !act) return lw.fail(op, "quantization");
    auto range = activationRange(*act, out);
    const uint8_t* w = lw.constants().data(op.inputs[1]);
    const uint8_t* b = lw.constants().data(op.inputs[2]);
    if (!range || !b) return lw.fail(op, "the bias must be known at compile time");
    std::vector<npu::ChannelQuant> quant(units);
    for (uint32_t o = 0; o < units; ++o) {
        std::memcpy(&quant[o].bias, b + size_t{o} * sizeof(int32_t), sizeof(int32_t));
        quant[o].multiplier = (*multipliers)[o].multiplier;
        quant[o].shift = (*multipliers)[o].shift;
    }
    // Packed as a 1x1 convolution; weights computed at run time are scattered in.
    std::vector<uint8_t> placeholders;
    if (!w) placeholders.assign(size_t{units} * inSize, static_cast<uint8_t>(wOp.zeroPoint));
    const auto stream = npu::packConvWeights(w ? w : placeholders.data(), units, 1, 1, inSize,
                                             wOp.zeroPoint, quant);
    const uint32_t wAddr = lw.addConstant(stream.data(), stream.size());
    if (!w) {
        scatterWeights(lw, lw.address(op.inputs[1]), wAddr, units, inSize, 1, 1, false, inSize, 0);
    }
    npu::DeviceTensor input, output;
    input.addr = lw.address(op.inputs[0]);
    input.n = batches, input.c = inSize;
    input.isSigned = isSigned(in.type), input.zeroPoint = in.zeroPoint;
    output.addr = lw.address(op.outputs[0]);
    output.n = batches, output.c = units;
    output.isSigned = isSigned(out.type), output.zeroPoint = out.zeroPoint;
    npu::ChainBuilder chain;
    const Status st = chain.fullyConnected(input, output, wAddr, isSigned(wOp.type), wOp.zeroPoint,
                                           {out.zeroPoint, range->min, range->max});
    if (!st.ok()) return lw.fail(op, st.message);
    lw.emitChain(chain);
    return okStatus();
}

}  // namespace

extern const NpuOperation kFullyConnectedOperation{supported, outputShape, lower,   nullptr,
                                                   {1, 2},    false,       nullptr, true};

}  // namespace nncosim::driver
