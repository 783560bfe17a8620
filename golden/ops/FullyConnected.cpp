// FULLY_CONNECTED: output[batch, units] = input[batch, inputSize] * weights[units, inputSize]^T
// + bias, as one matrix product (int32 accumulation of zero-point-centred values when quantized).
#include "golden/ops/OpUtils.h"
#include "golden/ops/Operations.h"

namespace nncosim::golden {
namespace {

constexpr uint32_t kInput = 0;
constexpr uint32_t kWeights = 1;
constexpr uint32_t kBias = 2;
constexpr uint32_t kActivation = 3;

template <typename T>
Status runQuant(ExecutionContext& ctx, size_t batches, uint32_t units, uint32_t inputSize) {
    const auto real = fixedpoint::getQuantizedConvolutionMultiplier(
        ctx.inputScale(kInput), ctx.inputScale(kWeights), ctx.inputScale(kBias),
        ctx.outputScale(0));
    if (!real) return ctx.fail("bias scale does not match input scale * weights scale");
    const auto multiplier = fixedpoint::quantizeMultiplier(*real);
    if (!multiplier) return ctx.fail("cannot quantize the output multiplier ", *real);
    auto range = quantActivationRange<T>(ctx, 0, ctx.scalar<int32_t>(kActivation));
    if (!range) return range.status();

    const ArrayX<int32_t> input =
        centered(ctx.inputData<T>(kInput), batches * inputSize, ctx.inputZeroPoint(kInput));
    const ArrayX<int32_t> weights = centered(ctx.inputData<T>(kWeights), size_t{units} * inputSize,
                                             ctx.inputZeroPoint(kWeights));
    // Exact in double (integers below 2^53), then wrapped to int32 as Android accumulates.
    const RowMajorMatrix<double> sums =
        Eigen::Map<const RowMajorMatrix<int32_t>>(input.data(), batches, inputSize).cast<double>() *
        Eigen::Map<const RowMajorMatrix<int32_t>>(weights.data(), units, inputSize)
            .cast<double>()
            .transpose();
    const RowMajorMatrix<int32_t> acc = sums.unaryExpr(&wrapToInt32);
    requantizeRows(acc.data(), batches, units, ctx.inputData<int32_t>(kBias), {*multiplier},
                   ctx.outputZeroPoint(0), *range, ctx.outputData<T>(0));
    return okStatus();
}

}  // namespace

Status executeFullyConnected(ExecutionContext& ctx) {
    auto shape = fullyConnectedShape(ctx.inputShape(kInput), ctx.inputShape(kWeights),
                                     ctx.inputShape(kBias));
    if (!shape) return ctx.fail(shape.status().message);
    const size_t batches = (*shape)[0];
    const uint32_t units = (*shape)[1];
    const uint32_t inputSize = ctx.inputDim(kWeights, 1);
    NN_RETURN_IF_ERROR(ctx.setOutputShape(0, std::move(*shape)));
    if (batches == 0) return okStatus();

    switch (ctx.inputType(kInput)) {
        case OperandType::TENSOR_FLOAT32:
        case OperandType::TENSOR_FLOAT16: {
            const FloatInput input(ctx, kInput);
            const FloatInput weights(ctx, kWeights);
            const FloatInput bias(ctx, kBias);
            FloatOutput output(ctx, 0);
            Eigen::Map<RowMajorMatrix<float>> out(output.data(), batches, units);
            out.noalias() =
                Eigen::Map<const RowMajorMatrix<float>>(input.data(), batches, inputSize) *
                Eigen::Map<const RowMajorMatrix<float>>(weights.data(), units, inputSize)
                    .transpose();
            out.rowwise() += Eigen::Map<const Eigen::RowVectorXf>(bias.data(), units);
            const auto [lo, hi] = activationRangeFloat(ctx.scalar<int32_t>(kActivation));
            out = out.array().max(lo).min(hi).matrix();
            output.commit();
            return okStatus();
        }
        case OperandType::TENSOR_QUANT8_ASYMM:
            return runQuant<uint8_t>(ctx, batches, units, inputSize);
        case OperandType::TENSOR_QUANT8_ASYMM_SIGNED:
            return runQuant<int8_t>(ctx, batches, units, inputSize);
        default:
            return ctx.fail("unsupported input type ", nameOf(ctx.inputType(kInput)));
    }
}

}  // namespace nncosim::golden
