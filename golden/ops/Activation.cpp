// RELU, RELU1, RELU6, LOGISTIC, TANH, SOFTMAX.
//
// Float results use std::exp/std::tanh in float32 (float16 is widened) like Android. Quantized
// LOGISTIC, TANH and SOFTMAX evaluate gemmlowp's fixed-point exp/logistic/tanh on inputs
// rescaled to Q4.27 (Q5.26 for SOFTMAX differences), exactly as TFLite's integer kernels do; their
// outputs must use the fixed scale and zero point NNAPI prescribes.
#include <cmath>

#include "golden/ops/OpUtils.h"
#include "golden/ops/Operations.h"

namespace nncosim::golden {
namespace {

using fixedpoint::FixedPoint;

template <typename T>
Status reluQuant(ExecutionContext& ctx, FusedActivation activation) {
    // Android clamps with the activation range of the input's quantization.
    const auto range = std::is_same_v<T, uint8_t>
                           ? fixedpoint::calculateActivationRangeUint8(
                                 activation, ctx.inputScale(0), ctx.inputZeroPoint(0))
                           : fixedpoint::calculateActivationRangeInt8(activation, ctx.inputScale(0),
                                                                      ctx.inputZeroPoint(0));
    if (!range) return ctx.fail("input scale must be positive");
    const size_t n = ctx.inputCount(0);
    Eigen::Map<ArrayX<T>>(ctx.outputData<T>(0), n) =
        Eigen::Map<const ArrayX<T>>(ctx.inputData<T>(0), n)
            .max(static_cast<T>(range->min))
            .min(static_cast<T>(range->max));
    return okStatus();
}

Status runRelu(ExecutionContext& ctx, FusedActivation activation) {
    NN_RETURN_IF_ERROR(ctx.setOutputShape(0, ctx.inputShape(0)));
    switch (ctx.inputType(0)) {
        case OperandType::TENSOR_FLOAT32:
        case OperandType::TENSOR_FLOAT16: {
            const auto [lo, hi] = activationRangeFloat(static_cast<int32_t>(activation));
            return mapFloat(ctx,
                            [lo = lo, hi = hi](float x) { return std::min(std::max(x, lo), hi); });
        }
        case OperandType::TENSOR_QUANT8_ASYMM:
            return reluQuant<uint8_t>(ctx, activation);
        case OperandType::TENSOR_QUANT8_ASYMM_SIGNED:
            return reluQuant<int8_t>(ctx, activation);
        default:
            return ctx.fail("unsupported input type ", nameOf(ctx.inputType(0)));
    }
}

enum class Sigmoid { kLogistic, kTanh };

// Quantized LOGISTIC / TANH. The output quantization is fixed by NNAPI: logistic 1/256 with zero
// point 0 (uint8) or -128 (int8); tanh 1/128 with zero point 128 (uint8) or 0 (int8).
template <typename T>
Status sigmoidQuant(ExecutionContext& ctx, Sigmoid kind) {
    constexpr bool kSigned = std::is_same_v<T, int8_t>;
    const float expectedScale = kind == Sigmoid::kLogistic ? 1.0f / 256 : 1.0f / 128;
    const int32_t expectedZero =
        kind == Sigmoid::kLogistic ? (kSigned ? -128 : 0) : (kSigned ? 0 : 128);
    if (ctx.outputScale(0) != expectedScale || ctx.outputZeroPoint(0) != expectedZero) {
        return ctx.fail("output must have scale ", expectedScale, " and zero point ", expectedZero);
    }
    const auto params = fixedpoint::computeSigmoidParams(ctx.inputScale(0));
    if (!params) return ctx.fail("cannot quantize the input multiplier");
    const int32_t zeroPoint = ctx.inputZeroPoint(0);
    constexpr int32_t kMin = std::numeric_limits<T>::min();
    constexpr int32_t kMax = std::numeric_limits<T>::max();
    using F4 = FixedPoint<int32_t, fixedpoint::SigmoidParams::kInputIntegerBits>;
    const size_t n = ctx.inputCount(0);
    const T* in = ctx.inputData<T>(0);
    T* out = ctx.outputData<T>(0);
    for (size_t i = 0; i < n; ++i) {
        const int32_t centred = static_cast<int32_t>(in[i]) - zeroPoint;
        int32_t result;
        if (centred <= -params->inputRangeRadius) {
            result = kMin;
        } else if (centred >= params->inputRangeRadius) {
            result = kMax;
        } else {
            const F4 x = F4::fromRaw(fixedpoint::multiplyByQuantizedMultiplier(
                centred, params->input.multiplier, params->input.shift));
            if (kind == Sigmoid::kLogistic) {
                // Q0.31 to Q23.8, then to the output encoding.
                result = fixedpoint::roundingDivideByPOT(fixedpoint::logistic(x).raw(), 23) +
                         expectedZero;
            } else {
                // Q0.31 to Q24.7.
                result =
                    fixedpoint::roundingDivideByPOT(fixedpoint::tanh(x).raw(), 24) + expectedZero;
            }
            result = std::min(std::max(result, kMin), kMax);
        }
        out[i] = static_cast<T>(result);
    }
    return okStatus();
}

Status runSigmoid(ExecutionContext& ctx, Sigmoid kind) {
    NN_RETURN_IF_ERROR(ctx.setOutputShape(0, ctx.inputShape(0)));
    switch (ctx.inputType(0)) {
        case OperandType::TENSOR_FLOAT32:
        case OperandType::TENSOR_FLOAT16:
            if (kind == Sigmoid::kLogistic) {
                return mapFloat(ctx, [](float x) { return 1.0f / (1.0f + std::exp(-x)); });
            }
            return mapFloat(ctx, [](float x) { return std::tanh(x); });
        case OperandType::TENSOR_QUANT8_ASYMM:
            return sigmoidQuant<uint8_t>(ctx, kind);
        case OperandType::TENSOR_QUANT8_ASYMM_SIGNED:
            return sigmoidQuant<int8_t>(ctx, kind);
        default:
            return ctx.fail("unsupported input type ", nameOf(ctx.inputType(0)));
    }
}

void softmaxFloat(const float* in, float* out, const AxisSizes& s, float beta) {
    forEachAxisVector(in, out, s, [beta](const auto& x, auto& y) {
        const float maxValue = x.maxCoeff();
        y = ((x - maxValue) * beta).unaryExpr([](float v) { return std::exp(v); });
        y /= y.sum();
    });
}

template <typename T>
Status softmaxQuant(ExecutionContext& ctx, const AxisSizes& s, float beta) {
    constexpr bool kSigned = std::is_same_v<T, int8_t>;
    if (ctx.outputScale(0) != 1.0f / 256 || ctx.outputZeroPoint(0) != (kSigned ? -128 : 0)) {
        return ctx.fail("output must have scale 1/256 and zero point ", kSigned ? -128 : 0);
    }
    const auto params = fixedpoint::computeSoftmaxParams(beta, ctx.inputScale(0));
    if (!params) return ctx.fail("cannot quantize the input multiplier");
    using ScaledDiff = FixedPoint<int32_t, fixedpoint::SoftmaxParams::kScaledDiffIntegerBits>;
    constexpr int kAccumulationBits = fixedpoint::SoftmaxParams::kAccumulationIntegerBits;
    using Accumulator = FixedPoint<int32_t, kAccumulationBits>;
    using F0 = FixedPoint<int32_t, 0>;
    constexpr int32_t kMin = std::numeric_limits<T>::min();
    constexpr int32_t kMax = std::numeric_limits<T>::max();

    const T* in = ctx.inputData<T>(0);
    T* out = ctx.outputData<T>(0);
    // exp(beta * scale * (x - max)) in Q0.31, or nullopt when the difference is negligible.
    auto expOfDiff = [&](int32_t diff) -> std::optional<F0> {
        if (diff < params->diffMin) return std::nullopt;
        return fixedpoint::expOnNegativeValues(
            ScaledDiff::fromRaw(fixedpoint::multiplyByQuantizedMultiplierGreaterThanOne(
                diff, params->input.multiplier, params->input.shift)));
    };
    for (size_t o = 0; o < s.outer; ++o) {
        for (size_t i = 0; i < s.inner; ++i) {
            const size_t base = o * s.axis * s.inner + i;
            int32_t maxValue = kMin;
            for (size_t k = 0; k < s.axis; ++k) {
                maxValue = std::max<int32_t>(maxValue, in[base + k * s.inner]);
            }
            Accumulator sum = Accumulator::zero();
            for (size_t k = 0; k < s.axis; ++k) {
                if (auto e = expOfDiff(in[base + k * s.inner] - maxValue)) {
                    sum = sum + fixedpoint::rescale<kAccumulationBits>(*e);
                }
            }
            // 1 / sum as a Q0.31 scale and a power of two.
            const uint32_t fixedSum = static_cast<uint32_t>(sum.raw());
            const int headroomPlusOne = fixedpoint::countLeadingZeros(fixedSum);
            const int bitsOverUnit = kAccumulationBits - headroomPlusOne;
            const int32_t shiftedSumMinusOne =
                static_cast<int32_t>((fixedSum << headroomPlusOne) - (uint32_t{1} << 31));
            const F0 shiftedScale =
                fixedpoint::oneOverOnePlusXForXIn01(F0::fromRaw(shiftedSumMinusOne));
            for (size_t k = 0; k < s.axis; ++k) {
                int32_t result = kMin;
                if (auto e = expOfDiff(in[base + k * s.inner] - maxValue)) {
                    result = fixedpoint::roundingDivideByPOT((shiftedScale * *e).raw(),
                                                             bitsOverUnit + 31 - 8) +
                             (kSigned ? -128 : 0);
                    result = std::min(std::max(result, kMin), kMax);
                }
                out[base + k * s.inner] = static_cast<T>(result);
            }
        }
    }
    return okStatus();
}

}  // namespace

Status executeRelu(ExecutionContext& ctx) {
    return runRelu(ctx, FusedActivation::RELU);
}

Status executeRelu1(ExecutionContext& ctx) {
    return runRelu(ctx, FusedActivation::RELU1);
}

Status executeRelu6(ExecutionContext& ctx) {
    return runRelu(ctx, FusedActivation::RELU6);
}

Status executeLogistic(ExecutionContext& ctx) {
    return runSigmoid(ctx, Sigmoid::kLogistic);
}

Status executeTanh(ExecutionContext& ctx) {
    return runSigmoid(ctx, Sigmoid::kTanh);
}

Status executeSoftmax(ExecutionContext& ctx) {
    const uint32_t rank = ctx.inputRank(0);
    const float beta = ctx.scalar<float>(1);
    int32_t axis = ctx.scalarOr<int32_t>(2, -1);
    if (axis < 0) axis += static_cast<int32_t>(rank);
    if (rank == 0 || axis < 0 || axis >= static_cast<int32_t>(rank)) {
        return ctx.fail("axis ", ctx.scalarOr<int32_t>(2, -1), " out of range for rank ", rank);
    }
    if (!(beta > 0.0f)) return ctx.fail("beta must be positive");
    NN_RETURN_IF_ERROR(ctx.setOutputShape(0, ctx.inputShape(0)));
    if (ctx.outputCount(0) == 0) return okStatus();
    const AxisSizes split = axisSizes(ctx.inputShape(0), axis);
    switch (ctx.inputType(0)) {
        case OperandType::TENSOR_FLOAT32:
        case OperandType::TENSOR_FLOAT16: {
            const FloatInput in(ctx, 0);
            FloatOutput out(ctx, 0);
            softmaxFloat(in.data(), out.data(), split, beta);
            out.commit();
            return okStatus();
        }
        case OperandType::TENSOR_QUANT8_ASYMM:
            return softmaxQuant<uint8_t>(ctx, split, beta);
        case OperandType::TENSOR_QUANT8_ASYMM_SIGNED:
            return softmaxQuant<int8_t>(ctx, split, beta);
        default:
            return ctx.fail("unsupported input type ", nameOf(ctx.inputType(0)));
    }
}

}  // namespace nncosim::golden
