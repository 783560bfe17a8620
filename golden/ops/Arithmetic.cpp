// ADD, SUB, MUL, DIV with NNAPI broadcasting and a fused activation.
//
// Float16 is computed in float32 (Android widens it too). Quantized ADD/SUB/MUL use the
// fixed-point element functions of FixedPoint.h; TENSOR_INT32 arithmetic wraps and DIV floors
// (division by zero gives 0, as in Android).
#include "golden/ops/OpUtils.h"
#include "golden/ops/Operations.h"

namespace nncosim::golden {
namespace {

enum class BinaryOp { kAdd, kSub, kMul, kDiv };

float applyFloat(BinaryOp op, float a, float b) {
    switch (op) {
        case BinaryOp::kAdd:
            return a + b;
        case BinaryOp::kSub:
            return a - b;
        case BinaryOp::kMul:
            return a * b;
        case BinaryOp::kDiv:
            return a / b;
    }
    return 0.0f;
}

int32_t applyInt32(BinaryOp op, int32_t a, int32_t b) {
    switch (op) {
        case BinaryOp::kAdd:
            return fixedpoint::wrappingAdd(a, b);
        case BinaryOp::kSub:
            return fixedpoint::wrappingSub(a, b);
        case BinaryOp::kMul:
            return static_cast<int32_t>(static_cast<uint32_t>(a) * static_cast<uint32_t>(b));
        case BinaryOp::kDiv: {
            if (b == 0 || (a == fixedpoint::kInt32Min && b == -1)) return 0;
            const int32_t q = a / b;
            return (a % b != 0 && ((a < 0) != (b < 0))) ? q - 1 : q;  // floor division
        }
    }
    return 0;
}

template <typename T>
Status runQuant(ExecutionContext& ctx, BinaryOp op, int32_t activation,
                const std::vector<uint32_t>& outDims) {
    auto range = quantActivationRange<T>(ctx, 0, activation);
    if (!range) return range.status();
    const fixedpoint::QuantInfo in1{ctx.inputScale(0), ctx.inputZeroPoint(0)};
    const fixedpoint::QuantInfo in2{ctx.inputScale(1), ctx.inputZeroPoint(1)};
    const fixedpoint::QuantInfo out{ctx.outputScale(0), ctx.outputZeroPoint(0)};
    const T* a = ctx.inputData<T>(0);
    const T* b = ctx.inputData<T>(1);
    T* dst = ctx.outputData<T>(0);
    if (op == BinaryOp::kMul) {
        const auto params = fixedpoint::computeMulParams(in1, in2, out, *range);
        if (!params) return ctx.fail("cannot quantize the output multiplier");
        broadcastBinary(
            a, ctx.inputShape(0), b, ctx.inputShape(1), dst, outDims,
            [&p = *params](T x, T y) { return static_cast<T>(fixedpoint::mulElement(x, y, p)); });
    } else {
        const auto params =
            fixedpoint::computeAddSubParams(in1, in2, out, *range, op == BinaryOp::kSub);
        if (!params) return ctx.fail("cannot quantize the input or output multipliers");
        broadcastBinary(a, ctx.inputShape(0), b, ctx.inputShape(1), dst, outDims,
                        [&p = *params](T x, T y) {
                            return static_cast<T>(fixedpoint::addSubElement(x, y, p));
                        });
    }
    return okStatus();
}

Status execute(ExecutionContext& ctx, BinaryOp op) {
    // NNAPI: operands of rank up to 4. A model of unknown rank meets the rule here.
    for (uint32_t i : {0u, 1u}) {
        if (ctx.inputShape(i).size() > 4)
            return ctx.fail("input ", i, " has rank ", ctx.inputShape(i).size(),
                            ", above NNAPI's limit of 4");
    }
    const auto outDims = broadcastShape(ctx.inputShape(0), ctx.inputShape(1));
    if (!outDims) {
        return ctx.fail("shapes ", toString(ctx.inputShape(0)), " and ",
                        toString(ctx.inputShape(1)), " do not broadcast");
    }
    NN_RETURN_IF_ERROR(ctx.setOutputShape(0, *outDims));
    if (ctx.outputCount(0) == 0) return okStatus();
    const int32_t activation = ctx.scalar<int32_t>(2);
    switch (ctx.inputType(0)) {
        case OperandType::TENSOR_FLOAT32:
        case OperandType::TENSOR_FLOAT16: {
            const auto [lo, hi] = activationRangeFloat(activation);
            const FloatInput a(ctx, 0);
            const FloatInput b(ctx, 1);
            FloatOutput out(ctx, 0);
            broadcastBinary(a.data(), ctx.inputShape(0), b.data(), ctx.inputShape(1), out.data(),
                            *outDims, [op, lo = lo, hi = hi](float x, float y) {
                                return std::min(std::max(applyFloat(op, x, y), lo), hi);
                            });
            out.commit();
            return okStatus();
        }
        case OperandType::TENSOR_QUANT8_ASYMM:
            if (op == BinaryOp::kDiv) break;
            return runQuant<uint8_t>(ctx, op, activation, *outDims);
        case OperandType::TENSOR_QUANT8_ASYMM_SIGNED:
            if (op == BinaryOp::kDiv) break;
            return runQuant<int8_t>(ctx, op, activation, *outDims);
        case OperandType::TENSOR_INT32:
            if (activation != 0) return ctx.fail("TENSOR_INT32 takes no fused activation");
            broadcastBinary(ctx.inputData<int32_t>(0), ctx.inputShape(0), ctx.inputData<int32_t>(1),
                            ctx.inputShape(1), ctx.outputData<int32_t>(0), *outDims,
                            [op](int32_t x, int32_t y) { return applyInt32(op, x, y); });
            return okStatus();
        default:
            break;
    }
    return ctx.fail("unsupported input type ", nameOf(ctx.inputType(0)));
}

}  // namespace

Status executeAdd(ExecutionContext& ctx) {
    return execute(ctx, BinaryOp::kAdd);
}

Status executeSub(ExecutionContext& ctx) {
    return execute(ctx, BinaryOp::kSub);
}

Status executeMul(ExecutionContext& ctx) {
    return execute(ctx, BinaryOp::kMul);
}

Status executeDiv(ExecutionContext& ctx) {
    return execute(ctx, BinaryOp::kDiv);
}

}  // namespace nncosim::golden
