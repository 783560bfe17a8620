// MAXIMUM, MINIMUM, POW (NNAPI broadcasting) and SELECT (equal shapes).
//
// Quantized MAXIMUM, MINIMUM and SELECT first requantize each input to the output's scale and
// zero point the way Android does (real value in float, rescaled in double, clamped, rounded),
// then pick. POW is std::pow in float32 (float16 widened). Zero-sized inputs fail, as in Android.
#include <cmath>
#include <limits>

#include "golden/ops/OpUtils.h"
#include "golden/ops/Operations.h"

namespace nncosim::golden {
namespace {

// Android's requantize(), shared with the driver's lookup tables.
using fixedpoint::requantizeValue;

fixedpoint::QuantInfo inputQuant(const ExecutionContext& ctx, uint32_t i) {
    return {ctx.inputScale(i), ctx.inputZeroPoint(i)};
}

// std::max / std::min exactly (the first argument wins ties and NaN comparisons).
template <typename T>
T pick(bool isMinimum, T a, T b) {
    return isMinimum ? (b < a ? b : a) : (a < b ? b : a);
}

template <typename T>
void minMaxTyped(ExecutionContext& ctx, const std::vector<uint32_t>& outDims, bool isMinimum) {
    broadcastBinary(ctx.inputData<T>(0), ctx.inputShape(0), ctx.inputData<T>(1), ctx.inputShape(1),
                    ctx.outputData<T>(0), outDims,
                    [isMinimum](T a, T b) { return pick(isMinimum, a, b); });
}

template <typename T>
void minMaxQuant(ExecutionContext& ctx, const std::vector<uint32_t>& outDims, bool isMinimum) {
    const auto a = inputQuant(ctx, 0);
    const auto b = inputQuant(ctx, 1);
    const fixedpoint::QuantInfo out{ctx.outputScale(0), ctx.outputZeroPoint(0)};
    broadcastBinary(ctx.inputData<T>(0), ctx.inputShape(0), ctx.inputData<T>(1), ctx.inputShape(1),
                    ctx.outputData<T>(0), outDims, [=](T x, T y) {
                        return pick(isMinimum, requantizeValue(x, a, out),
                                    requantizeValue(y, b, out));
                    });
}

Status runMinMax(ExecutionContext& ctx, bool isMinimum) {
    NN_RETURN_IF_ERROR(requireNoZeroSizedInput(ctx));
    const auto outDims = broadcastShape(ctx.inputShape(0), ctx.inputShape(1));
    if (!outDims) {
        return ctx.fail("shapes ", toString(ctx.inputShape(0)), " and ",
                        toString(ctx.inputShape(1)), " do not broadcast");
    }
    NN_RETURN_IF_ERROR(ctx.setOutputShape(0, *outDims));
    switch (ctx.inputType(0)) {
        case OperandType::TENSOR_FLOAT32:
            minMaxTyped<float>(ctx, *outDims, isMinimum);
            return okStatus();
        case OperandType::TENSOR_FLOAT16:
            minMaxTyped<half>(ctx, *outDims, isMinimum);
            return okStatus();
        case OperandType::TENSOR_INT32:
            minMaxTyped<int32_t>(ctx, *outDims, isMinimum);
            return okStatus();
        case OperandType::TENSOR_QUANT8_ASYMM:
            minMaxQuant<uint8_t>(ctx, *outDims, isMinimum);
            return okStatus();
        case OperandType::TENSOR_QUANT8_ASYMM_SIGNED:
            minMaxQuant<int8_t>(ctx, *outDims, isMinimum);
            return okStatus();
        default:
            return ctx.fail("unsupported input type ", nameOf(ctx.inputType(0)));
    }
}

template <typename T>
void selectTyped(ExecutionContext& ctx) {
    const size_t n = ctx.inputCount(0);
    const Eigen::Map<const ArrayX<uint8_t>> condition(ctx.inputData<uint8_t>(0), n);
    Eigen::Map<const ArrayX<T>> a(ctx.inputData<T>(1), n);
    Eigen::Map<const ArrayX<T>> b(ctx.inputData<T>(2), n);
    Eigen::Map<ArrayX<T>> out(ctx.outputData<T>(0), n);
    if constexpr (kIsQuant8<T>) {
        const auto qa = inputQuant(ctx, 1);
        const auto qb = inputQuant(ctx, 2);
        const fixedpoint::QuantInfo q{ctx.outputScale(0), ctx.outputZeroPoint(0)};
        out = (condition != 0)
                  .select(a.unaryExpr([=](T v) { return requantizeValue(v, qa, q); }),
                          b.unaryExpr([=](T v) { return requantizeValue(v, qb, q); }));
    } else {
        out = (condition != 0).select(a, b);
    }
}

}  // namespace

Status executeMaximum(ExecutionContext& ctx) {
    return runMinMax(ctx, /*isMinimum=*/false);
}

Status executeMinimum(ExecutionContext& ctx) {
    return runMinMax(ctx, /*isMinimum=*/true);
}

Status executePow(ExecutionContext& ctx) {
    NN_RETURN_IF_ERROR(requireNoZeroSizedInput(ctx));
    const auto outDims = broadcastShape(ctx.inputShape(0), ctx.inputShape(1));
    if (!outDims) {
        return ctx.fail("shapes ", toString(ctx.inputShape(0)), " and ",
                        toString(ctx.inputShape(1)), " do not broadcast");
    }
    NN_RETURN_IF_ERROR(ctx.setOutputShape(0, *outDims));
    const auto type = ctx.inputType(0);
    if (type != OperandType::TENSOR_FLOAT32 && type != OperandType::TENSOR_FLOAT16) {
        return ctx.fail("unsupported input type ", nameOf(type));
    }
    const FloatInput base(ctx, 0);
    const FloatInput exponent(ctx, 1);
    FloatOutput out(ctx, 0);
    broadcastBinary(base.data(), ctx.inputShape(0), exponent.data(), ctx.inputShape(1), out.data(),
                    *outDims, [](float x, float y) { return std::pow(x, y); });
    out.commit();
    return okStatus();
}

Status executeSelect(ExecutionContext& ctx) {
    NN_RETURN_IF_ERROR(requireNoZeroSizedInput(ctx));
    if (ctx.inputShape(0) != ctx.inputShape(1) || ctx.inputShape(1) != ctx.inputShape(2)) {
        return ctx.fail("condition ", toString(ctx.inputShape(0)), " and inputs ",
                        toString(ctx.inputShape(1)), ", ", toString(ctx.inputShape(2)),
                        " must have the same shape");
    }
    NN_RETURN_IF_ERROR(ctx.setOutputShape(0, ctx.inputShape(1)));
    switch (ctx.inputType(1)) {
        case OperandType::TENSOR_FLOAT32:
            selectTyped<float>(ctx);
            return okStatus();
        case OperandType::TENSOR_FLOAT16:
            selectTyped<half>(ctx);
            return okStatus();
        case OperandType::TENSOR_INT32:
            selectTyped<int32_t>(ctx);
            return okStatus();
        case OperandType::TENSOR_QUANT8_ASYMM:
            selectTyped<uint8_t>(ctx);
            return okStatus();
        case OperandType::TENSOR_QUANT8_ASYMM_SIGNED:
            selectTyped<int8_t>(ctx);
            return okStatus();
        default:
            return ctx.fail("unsupported input type ", nameOf(ctx.inputType(1)));
    }
}

}  // namespace nncosim::golden
