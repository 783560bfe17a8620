// EQUAL, NOT_EQUAL, GREATER, GREATER_EQUAL, LESS, LESS_EQUAL, LOGICAL_AND, LOGICAL_OR,
// LOGICAL_NOT: TENSOR_BOOL8 results with NNAPI broadcasting of the two inputs.
//
// Quantized inputs are compared as real values, each dequantized in float with its own scale and
// zero point (as Android does); float16 compares as float16; TENSOR_BOOL8 compares the stored
// bytes. Zero-sized inputs fail, as in Android.
#include <functional>

#include "golden/ops/OpUtils.h"
#include "golden/ops/Operations.h"

namespace nncosim::golden {
namespace {

using Bool8 = uint8_t;

template <typename T, typename Compare>
void compareTyped(ExecutionContext& ctx, const std::vector<uint32_t>& outDims, Compare compare) {
    broadcastBinary(ctx.inputData<T>(0), ctx.inputShape(0), ctx.inputData<T>(1), ctx.inputShape(1),
                    ctx.outputData<Bool8>(0), outDims,
                    [compare](T a, T b) { return static_cast<Bool8>(compare(a, b)); });
}

template <typename T, typename Compare>
void compareQuant(ExecutionContext& ctx, const std::vector<uint32_t>& outDims, Compare compare) {
    const float scaleA = ctx.inputScale(0), scaleB = ctx.inputScale(1);
    const int32_t zeroA = ctx.inputZeroPoint(0), zeroB = ctx.inputZeroPoint(1);
    compareTyped<T>(ctx, outDims, [=](T a, T b) {
        return compare(dequantizeValue(a, scaleA, zeroA), dequantizeValue(b, scaleB, zeroB));
    });
}

Result<std::vector<uint32_t>> broadcastOutput(ExecutionContext& ctx) {
    auto outDims = broadcastShape(ctx.inputShape(0), ctx.inputShape(1));
    if (!outDims) {
        return ctx.fail("shapes ", toString(ctx.inputShape(0)), " and ",
                        toString(ctx.inputShape(1)), " do not broadcast");
    }
    NN_RETURN_IF_ERROR(ctx.setOutputShape(0, *outDims));
    return *outDims;
}

// Compare is a transparent std:: comparison functor (std::less<> ...).
template <typename Compare>
Status runComparison(ExecutionContext& ctx, Compare compare) {
    NN_RETURN_IF_ERROR(requireNoZeroSizedInput(ctx));
    auto outDims = broadcastOutput(ctx);
    if (!outDims) return outDims.status();
    switch (ctx.inputType(0)) {
        case OperandType::TENSOR_FLOAT32:
            compareTyped<float>(ctx, *outDims, compare);
            return okStatus();
        case OperandType::TENSOR_FLOAT16:
            compareTyped<half>(ctx, *outDims, compare);
            return okStatus();
        case OperandType::TENSOR_INT32:
            compareTyped<int32_t>(ctx, *outDims, compare);
            return okStatus();
        case OperandType::TENSOR_BOOL8:
            compareTyped<Bool8>(ctx, *outDims, compare);
            return okStatus();
        case OperandType::TENSOR_QUANT8_ASYMM:
            compareQuant<uint8_t>(ctx, *outDims, compare);
            return okStatus();
        case OperandType::TENSOR_QUANT8_ASYMM_SIGNED:
            compareQuant<int8_t>(ctx, *outDims, compare);
            return okStatus();
        default:
            return ctx.fail("unsupported input type ", nameOf(ctx.inputType(0)));
    }
}

template <typename Logical>
Status runLogical(ExecutionContext& ctx, Logical logical) {
    NN_RETURN_IF_ERROR(requireNoZeroSizedInput(ctx));
    auto outDims = broadcastOutput(ctx);
    if (!outDims) return outDims.status();
    compareTyped<Bool8>(ctx, *outDims,
                        [logical](Bool8 a, Bool8 b) { return logical(a != 0, b != 0); });
    return okStatus();
}

}  // namespace

Status executeEqual(ExecutionContext& ctx) {
    return runComparison(ctx, std::equal_to<>());
}

Status executeNotEqual(ExecutionContext& ctx) {
    return runComparison(ctx, std::not_equal_to<>());
}

Status executeGreater(ExecutionContext& ctx) {
    return runComparison(ctx, std::greater<>());
}

Status executeGreaterEqual(ExecutionContext& ctx) {
    return runComparison(ctx, std::greater_equal<>());
}

Status executeLess(ExecutionContext& ctx) {
    return runComparison(ctx, std::less<>());
}

Status executeLessEqual(ExecutionContext& ctx) {
    return runComparison(ctx, std::less_equal<>());
}

Status executeLogicalAnd(ExecutionContext& ctx) {
    return runLogical(ctx, std::logical_and<>());
}

Status executeLogicalOr(ExecutionContext& ctx) {
    return runLogical(ctx, std::logical_or<>());
}

Status executeLogicalNot(ExecutionContext& ctx) {
    NN_RETURN_IF_ERROR(requireNoZeroSizedInput(ctx));
    NN_RETURN_IF_ERROR(ctx.setOutputShape(0, ctx.inputShape(0)));
    const size_t n = ctx.inputCount(0);
    Eigen::Map<ArrayX<Bool8>>(ctx.outputData<Bool8>(0), n) =
        (Eigen::Map<const ArrayX<Bool8>>(ctx.inputData<Bool8>(0), n) == Bool8{0}).cast<Bool8>();
    return okStatus();
}

}  // namespace nncosim::golden
