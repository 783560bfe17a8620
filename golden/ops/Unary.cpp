// Element-wise unary math: ABS, EXP, LOG, NEG, RSQRT, SIN, SQRT, FLOOR.
//
// Float16 is computed in float32 and rounded back, as Android does. TENSOR_INT32 ABS and NEG wrap
// (the minimum maps to itself). Quantized RSQRT follows Android: dequantize, compute in float,
// quantize with round-to-nearest; with at most 256 distinct inputs it runs as a lookup table.
// Zero-sized inputs fail, as in Android.
#include <cmath>
#include <limits>

#include "golden/ops/OpUtils.h"
#include "golden/ops/Operations.h"

namespace nncosim::golden {
namespace {

template <typename F>
Status mapInt32(ExecutionContext& ctx, F f) {
    const size_t n = ctx.inputCount(0);
    Eigen::Map<ArrayX<int32_t>>(ctx.outputData<int32_t>(0), n) =
        Eigen::Map<const ArrayX<int32_t>>(ctx.inputData<int32_t>(0), n).unaryExpr([&f](int32_t x) {
            return f(x);
        });
    return okStatus();
}

// A quantized operation computed on real values, tabulated over every stored input value.
template <typename T, typename F>
Status mapQuantViaFloat(ExecutionContext& ctx, F f) {
    constexpr int32_t kMin = std::numeric_limits<T>::min();
    constexpr int32_t kMax = std::numeric_limits<T>::max();
    const float inScale = ctx.inputScale(0);
    const int32_t inZeroPoint = ctx.inputZeroPoint(0);
    const float outScale = ctx.outputScale(0);
    const int32_t outZeroPoint = ctx.outputZeroPoint(0);
    ArrayX<T> table(kMax - kMin + 1);
    for (int32_t v = kMin; v <= kMax; ++v) {
        table[v - kMin] =
            quantizeValue<T>(f(dequantizeValue(v, inScale, inZeroPoint)), outScale, outZeroPoint);
    }
    const size_t n = ctx.inputCount(0);
    Eigen::Map<ArrayX<T>>(ctx.outputData<T>(0), n) =
        Eigen::Map<const ArrayX<T>>(ctx.inputData<T>(0), n).unaryExpr([&table](T x) {
            return table[static_cast<int32_t>(x) - kMin];
        });
    return okStatus();
}

enum class Allow { kFloatOnly, kInt32, kQuant8 };

// Runs f on the input's type: float32/float16 always; TENSOR_INT32 or the quantized types when
// the operation allows them.
template <Allow kAllow, typename F>
Status runUnary(ExecutionContext& ctx, F f) {
    NN_RETURN_IF_ERROR(requireNoZeroSizedInput(ctx));
    NN_RETURN_IF_ERROR(ctx.setOutputShape(0, ctx.inputShape(0)));
    switch (ctx.inputType(0)) {
        case OperandType::TENSOR_FLOAT32:
        case OperandType::TENSOR_FLOAT16:
            return mapFloat(ctx, f);
        case OperandType::TENSOR_INT32:
            if constexpr (kAllow == Allow::kInt32) return mapInt32(ctx, f);
            break;
        case OperandType::TENSOR_QUANT8_ASYMM:
            if constexpr (kAllow == Allow::kQuant8) return mapQuantViaFloat<uint8_t>(ctx, f);
            break;
        case OperandType::TENSOR_QUANT8_ASYMM_SIGNED:
            if constexpr (kAllow == Allow::kQuant8) return mapQuantViaFloat<int8_t>(ctx, f);
            break;
        default:
            break;
    }
    return ctx.fail("unsupported input type ", nameOf(ctx.inputType(0)));
}

// Overloads for float and int32 in one callable.
struct Abs {
    float operator()(float x) const { return std::abs(x); }
    int32_t operator()(int32_t x) const { return x < 0 ? fixedpoint::wrappingNeg(x) : x; }
};

struct Neg {
    float operator()(float x) const { return -x; }
    int32_t operator()(int32_t x) const { return fixedpoint::wrappingNeg(x); }
};

}  // namespace

Status executeAbs(ExecutionContext& ctx) {
    return runUnary<Allow::kInt32>(ctx, Abs{});
}

Status executeNeg(ExecutionContext& ctx) {
    return runUnary<Allow::kInt32>(ctx, Neg{});
}

Status executeExp(ExecutionContext& ctx) {
    return runUnary<Allow::kFloatOnly>(ctx, [](float x) { return std::exp(x); });
}

Status executeLog(ExecutionContext& ctx) {
    return runUnary<Allow::kFloatOnly>(ctx, [](float x) { return std::log(x); });
}

Status executeSin(ExecutionContext& ctx) {
    return runUnary<Allow::kFloatOnly>(ctx, [](float x) { return std::sin(x); });
}

Status executeSqrt(ExecutionContext& ctx) {
    return runUnary<Allow::kFloatOnly>(ctx, [](float x) { return std::sqrt(x); });
}

Status executeFloor(ExecutionContext& ctx) {
    return runUnary<Allow::kFloatOnly>(ctx, [](float x) { return std::floor(x); });
}

Status executeRsqrt(ExecutionContext& ctx) {
    return runUnary<Allow::kQuant8>(ctx, [](float x) { return fixedpoint::reciprocalSqrt(x); });
}

}  // namespace nncosim::golden
