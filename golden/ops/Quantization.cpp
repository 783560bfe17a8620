// CAST, QUANTIZE, DEQUANTIZE.
//
// CAST converts stored values between TENSOR_FLOAT16, TENSOR_FLOAT32, TENSOR_INT32 and
// TENSOR_QUANT8_ASYMM ignoring quantization parameters (towards uint8 it clamps to [0, 255]
// first, then truncates); any other type casts only to itself, as a copy. QUANTIZE rounds
// value / scale to nearest and adds the zero point in float; DEQUANTIZE computes
// scale * (value - zeroPoint) in float, per channel for TENSOR_QUANT8_SYMM_PER_CHANNEL.
// QUANTIZE and DEQUANTIZE accept zero-sized inputs, CAST does not (as in Android).
#include <cmath>
#include <cstring>
#include <limits>

#include "golden/ops/OpUtils.h"
#include "golden/ops/Operations.h"

namespace nncosim::golden {
namespace {

// One element of CAST; float16 inputs arrive widened to float (exactly).
template <typename To, typename From>
To castValue(From a) {
    if constexpr (std::is_same_v<From, uint8_t>) {
        return castValue<To>(static_cast<int32_t>(a));  // every uint8 value fits every type
    } else if constexpr (std::is_same_v<To, uint8_t>) {
        if (a < From{0}) return 0;
        if (a > From{255}) return 255;
        return static_cast<To>(a);
    } else if constexpr (std::is_same_v<To, int32_t> && std::is_floating_point_v<From>) {
        // Saturating, NaN to zero: what the ARM conversion Android runs on produces.
        if (std::isnan(a)) return 0;
        if (a <= static_cast<From>(std::numeric_limits<int32_t>::min())) {
            return std::numeric_limits<int32_t>::min();
        }
        if (a >= static_cast<From>(std::numeric_limits<int32_t>::max())) {
            return std::numeric_limits<int32_t>::max();
        }
        return static_cast<To>(a);
    } else if constexpr (std::is_same_v<To, half>) {
        return static_cast<half>(static_cast<float>(a));
    } else {
        return static_cast<To>(a);
    }
}

template <typename From>
Status castFrom(ExecutionContext& ctx, const From* in) {
    const size_t n = ctx.inputCount(0);
    const Eigen::Map<const ArrayX<From>> src(in, n);
    auto write = [&](auto* out) {
        using To = std::remove_pointer_t<decltype(out)>;
        Eigen::Map<ArrayX<To>>(out, n) = src.unaryExpr([](From a) { return castValue<To>(a); });
        return okStatus();
    };
    switch (ctx.outputType(0)) {
        case OperandType::TENSOR_FLOAT16:
            return write(ctx.outputData<half>(0));
        case OperandType::TENSOR_FLOAT32:
            return write(ctx.outputData<float>(0));
        case OperandType::TENSOR_INT32:
            return write(ctx.outputData<int32_t>(0));
        case OperandType::TENSOR_QUANT8_ASYMM:
            return write(ctx.outputData<uint8_t>(0));
        default:
            return ctx.fail("cannot cast ", nameOf(ctx.inputType(0)), " to ",
                            nameOf(ctx.outputType(0)));
    }
}

template <typename T>
void quantize(ExecutionContext& ctx) {
    const FloatInput in(ctx, 0);
    const float scale = ctx.outputScale(0);
    const int32_t zeroPoint = ctx.outputZeroPoint(0);
    const size_t n = ctx.inputCount(0);
    Eigen::Map<ArrayX<T>>(ctx.outputData<T>(0), n) =
        Eigen::Map<const ArrayX<float>>(in.data(), n).unaryExpr([=](float x) {
            return quantizeValue<T>(x, scale, zeroPoint);
        });
}

template <typename T>
void dequantize(ExecutionContext& ctx, float* out) {
    const float scale = ctx.inputScale(0);
    const int32_t zeroPoint = ctx.inputZeroPoint(0);
    const size_t n = ctx.inputCount(0);
    Eigen::Map<ArrayX<float>>(out, n) =
        Eigen::Map<const ArrayX<T>>(ctx.inputData<T>(0), n).unaryExpr([=](T v) {
            return dequantizeValue(v, scale, zeroPoint);
        });
}

// Per-channel scales along channelDim; the zero point is 0 by definition of the type.
Status dequantizePerChannel(ExecutionContext& ctx, float* out) {
    const auto& quant = ctx.inputChannelQuant(0);
    if (quant.channelDim >= ctx.inputRank(0) ||
        quant.scales.size() != ctx.inputDim(0, quant.channelDim)) {
        return ctx.fail("per-channel scales do not match the input shape");
    }
    const AxisSizes s = axisSizes(ctx.inputShape(0), quant.channelDim);
    const int8_t* in = ctx.inputData<int8_t>(0);
    for (size_t o = 0; o < s.outer; ++o) {
        for (size_t c = 0; c < s.axis; ++c) {
            const size_t base = (o * s.axis + c) * s.inner;
            Eigen::Map<ArrayX<float>>(out + base, s.inner) =
                Eigen::Map<const ArrayX<int8_t>>(in + base, s.inner).cast<float>() *
                quant.scales[c];
        }
    }
    return okStatus();
}

}  // namespace

Status executeCast(ExecutionContext& ctx) {
    NN_RETURN_IF_ERROR(requireNoZeroSizedInput(ctx));
    NN_RETURN_IF_ERROR(ctx.setOutputShape(0, ctx.inputShape(0)));
    switch (ctx.inputType(0)) {
        case OperandType::TENSOR_FLOAT16: {
            const FloatInput in(ctx, 0);
            return castFrom(ctx, in.data());
        }
        case OperandType::TENSOR_FLOAT32:
            return castFrom(ctx, ctx.inputData<float>(0));
        case OperandType::TENSOR_INT32:
            return castFrom(ctx, ctx.inputData<int32_t>(0));
        case OperandType::TENSOR_QUANT8_ASYMM:
            return castFrom(ctx, ctx.inputData<uint8_t>(0));
        default:
            if (ctx.inputType(0) != ctx.outputType(0)) {
                return ctx.fail("cannot cast ", nameOf(ctx.inputType(0)), " to ",
                                nameOf(ctx.outputType(0)));
            }
            std::memcpy(ctx.outputBytes(0), ctx.inputBytes(0),
                        byteSize(ctx.inputType(0), ctx.inputShape(0)));
            return okStatus();
    }
}

Status executeQuantize(ExecutionContext& ctx) {
    NN_RETURN_IF_ERROR(ctx.setOutputShape(0, ctx.inputShape(0)));
    if (ctx.outputCount(0) == 0) return okStatus();
    const auto in = ctx.inputType(0);
    if (in != OperandType::TENSOR_FLOAT32 && in != OperandType::TENSOR_FLOAT16) {
        return ctx.fail("unsupported input type ", nameOf(in));
    }
    switch (ctx.outputType(0)) {
        case OperandType::TENSOR_QUANT8_ASYMM:
            quantize<uint8_t>(ctx);
            return okStatus();
        case OperandType::TENSOR_QUANT8_ASYMM_SIGNED:
            quantize<int8_t>(ctx);
            return okStatus();
        default:
            return ctx.fail("unsupported output type ", nameOf(ctx.outputType(0)));
    }
}

Status executeDequantize(ExecutionContext& ctx) {
    NN_RETURN_IF_ERROR(ctx.setOutputShape(0, ctx.inputShape(0)));
    if (ctx.outputCount(0) == 0) return okStatus();
    const auto outType = ctx.outputType(0);
    if (outType != OperandType::TENSOR_FLOAT32 && outType != OperandType::TENSOR_FLOAT16) {
        return ctx.fail("unsupported output type ", nameOf(outType));
    }
    FloatOutput out(ctx, 0);
    switch (ctx.inputType(0)) {
        case OperandType::TENSOR_QUANT8_ASYMM:
            dequantize<uint8_t>(ctx, out.data());
            break;
        case OperandType::TENSOR_QUANT8_SYMM:
        case OperandType::TENSOR_QUANT8_ASYMM_SIGNED:
            dequantize<int8_t>(ctx, out.data());
            break;
        case OperandType::TENSOR_QUANT8_SYMM_PER_CHANNEL:
            NN_RETURN_IF_ERROR(dequantizePerChannel(ctx, out.data()));
            break;
        default:
            return ctx.fail("unsupported input type ", nameOf(ctx.inputType(0)));
    }
    out.commit();
    return okStatus();
}

}  // namespace nncosim::golden
