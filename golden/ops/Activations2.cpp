// ELU, HARD_SWISH, PRELU, LOG_SOFTMAX.
//
// Float16 is computed in float32 and rounded back. Quantized HARD_SWISH is TFLite's int16
// fixed-point kernel (FixedPoint.h); quantized PRELU rescales positive inputs by
// inputScale / outputScale and negative ones, multiplied by alpha, by
// inputScale * alphaScale / outputScale, with NNAPI broadcasting of input and alpha.
// Only HARD_SWISH accepts zero-sized inputs, as in Android.
#include <cmath>
#include <limits>

#include "golden/ops/OpUtils.h"
#include "golden/ops/Operations.h"

namespace nncosim::golden {
namespace {

template <typename T>
Status hardSwishQuant(ExecutionContext& ctx) {
    const auto params = fixedpoint::computeHardSwishParams(
        {ctx.inputScale(0), ctx.inputZeroPoint(0)}, {ctx.outputScale(0), ctx.outputZeroPoint(0)});
    if (!params) return ctx.fail("cannot quantize the output multiplier");
    constexpr int32_t kMin = std::numeric_limits<T>::min();
    constexpr int32_t kMax = std::numeric_limits<T>::max();
    // One result per stored input value.
    ArrayX<T> table(kMax - kMin + 1);
    for (int32_t v = kMin; v <= kMax; ++v) {
        table[v - kMin] = static_cast<T>(fixedpoint::hardSwishElement(v, *params, kMin, kMax));
    }
    const size_t n = ctx.inputCount(0);
    Eigen::Map<ArrayX<T>>(ctx.outputData<T>(0), n) =
        Eigen::Map<const ArrayX<T>>(ctx.inputData<T>(0), n).unaryExpr([&table](T x) {
            return table[static_cast<int32_t>(x) - kMin];
        });
    return okStatus();
}

template <typename T>
Status preluQuant(ExecutionContext& ctx, const std::vector<uint32_t>& outDims) {
    const auto params = fixedpoint::computePreluParams(
        {ctx.inputScale(0), ctx.inputZeroPoint(0)}, {ctx.inputScale(1), ctx.inputZeroPoint(1)},
        {ctx.outputScale(0), ctx.outputZeroPoint(0)});
    if (!params) return ctx.fail("cannot quantize the output multipliers");
    auto op = [&](T x, T a) {
        return static_cast<T>(fixedpoint::preluElement(x, a, *params, std::numeric_limits<T>::min(),
                                                       std::numeric_limits<T>::max()));
    };
    broadcastBinary(ctx.inputData<T>(0), ctx.inputShape(0), ctx.inputData<T>(1), ctx.inputShape(1),
                    ctx.outputData<T>(0), outDims, op);
    return okStatus();
}

// LOG_SOFTMAX along one axis: (x - max) * beta - log(sum(exp((x - max) * beta))), the
// exponentials taken in double and summed in float as Android does.
void logSoftmaxFloat(const float* in, float* out, const AxisSizes& s, float beta) {
    forEachAxisVector(in, out, s, [beta](const auto& x, auto& y) {
        y = (x - x.maxCoeff()) * beta;
        float sum = 0.0f;
        for (Eigen::Index k = 0; k < y.size(); ++k) {
            sum = static_cast<float>(sum + std::exp(static_cast<double>(y[k])));
        }
        y -= static_cast<float>(std::log(static_cast<double>(sum)));
    });
}

}  // namespace

Status executeElu(ExecutionContext& ctx) {
    NN_RETURN_IF_ERROR(requireNoZeroSizedInput(ctx));
    NN_RETURN_IF_ERROR(ctx.setOutputShape(0, ctx.inputShape(0)));
    const auto type = ctx.inputType(0);
    if (type != OperandType::TENSOR_FLOAT32 && type != OperandType::TENSOR_FLOAT16) {
        return ctx.fail("unsupported input type ", nameOf(type));
    }
    const float alpha = ctx.scalar<float>(1);
    return mapFloat(ctx, [alpha](float x) {
        return std::max(0.0f, x) + std::min(0.0f, alpha * (std::exp(x) - 1.0f));
    });
}

Status executeHardSwish(ExecutionContext& ctx) {
    NN_RETURN_IF_ERROR(ctx.setOutputShape(0, ctx.inputShape(0)));
    if (ctx.outputCount(0) == 0) return okStatus();
    switch (ctx.inputType(0)) {
        case OperandType::TENSOR_FLOAT32:
        case OperandType::TENSOR_FLOAT16:
            return mapFloat(
                ctx, [](float x) { return x * std::min(6.0f, std::max(0.0f, x + 3.0f)) / 6.0f; });
        case OperandType::TENSOR_QUANT8_ASYMM:
            return hardSwishQuant<uint8_t>(ctx);
        case OperandType::TENSOR_QUANT8_ASYMM_SIGNED:
            return hardSwishQuant<int8_t>(ctx);
        default:
            return ctx.fail("unsupported input type ", nameOf(ctx.inputType(0)));
    }
}

Status executePrelu(ExecutionContext& ctx) {
    NN_RETURN_IF_ERROR(requireNoZeroSizedInput(ctx));
    const auto outDims = broadcastShape(ctx.inputShape(0), ctx.inputShape(1));
    if (!outDims) {
        return ctx.fail("shapes ", toString(ctx.inputShape(0)), " and ",
                        toString(ctx.inputShape(1)), " do not broadcast");
    }
    NN_RETURN_IF_ERROR(ctx.setOutputShape(0, *outDims));
    switch (ctx.inputType(0)) {
        case OperandType::TENSOR_FLOAT32:
        case OperandType::TENSOR_FLOAT16: {
            const FloatInput x(ctx, 0);
            const FloatInput alpha(ctx, 1);
            FloatOutput out(ctx, 0);
            broadcastBinary(x.data(), ctx.inputShape(0), alpha.data(), ctx.inputShape(1),
                            out.data(), *outDims,
                            [](float v, float a) { return v >= 0.0f ? v : v * a; });
            out.commit();
            return okStatus();
        }
        case OperandType::TENSOR_QUANT8_ASYMM:
            return preluQuant<uint8_t>(ctx, *outDims);
        case OperandType::TENSOR_QUANT8_ASYMM_SIGNED:
            return preluQuant<int8_t>(ctx, *outDims);
        default:
            return ctx.fail("unsupported input type ", nameOf(ctx.inputType(0)));
    }
}

Status executeLogSoftmax(ExecutionContext& ctx) {
    NN_RETURN_IF_ERROR(requireNoZeroSizedInput(ctx));
    const auto axis = resolveAxis(ctx.scalar<int32_t>(2), ctx.inputRank(0));
    if (!axis) {
        return ctx.fail("axis ", ctx.scalar<int32_t>(2), " out of range for rank ",
                        ctx.inputRank(0));
    }
    NN_RETURN_IF_ERROR(ctx.setOutputShape(0, ctx.inputShape(0)));
    const auto type = ctx.inputType(0);
    if (type != OperandType::TENSOR_FLOAT32 && type != OperandType::TENSOR_FLOAT16) {
        return ctx.fail("unsupported input type ", nameOf(type));
    }
    const FloatInput in(ctx, 0);
    FloatOutput out(ctx, 0);
    logSoftmaxFloat(in.data(), out.data(), axisSizes(ctx.inputShape(0), *axis),
                    ctx.scalar<float>(1));
    out.commit();
    return okStatus();
}

}  // namespace nncosim::golden
