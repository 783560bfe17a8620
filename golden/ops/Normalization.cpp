// L2_NORMALIZATION, LOCAL_RESPONSE_NORMALIZATION, INSTANCE_NORMALIZATION.
//
// Float16 is computed in float32 and rounded back. Quantized L2_NORMALIZATION scales by
// TFLite's fixed-point inverse square root of the integer sum of squares (FixedPoint.h); the
// output has scale 1/128 and zero point 128 (uint8) or 0 (int8). Android takes TFLite's kernel
// for the last axis and its own for other axes; for int8 the two round differently, and both
// are reproduced. Zero-sized inputs fail, as in Android.
#include <cmath>
#include <limits>

#include "golden/ops/OpUtils.h"
#include "golden/ops/Operations.h"

namespace nncosim::golden {
namespace {

// Android's floor on the L2 norm of a float vector (an all-zero vector stays zero).
constexpr float kL2Epsilon = 1e-6f;

using Strided = Eigen::Map<const ArrayX<float>, 0, Eigen::InnerStride<>>;
using StridedOut = Eigen::Map<ArrayX<float>, 0, Eigen::InnerStride<>>;

template <typename T>
void l2NormQuant(ExecutionContext& ctx, const AxisSizes& s, bool lastAxis) {
    constexpr bool kSigned = std::is_same_v<T, int8_t>;
    constexpr int32_t kMin = std::numeric_limits<T>::min();
    constexpr int32_t kMax = std::numeric_limits<T>::max();
    const int32_t zeroPoint = ctx.inputZeroPoint(0);
    const T* in = ctx.inputData<T>(0);
    T* out = ctx.outputData<T>(0);
    for (size_t o = 0; o < s.outer; ++o) {
        for (size_t i = 0; i < s.inner; ++i) {
            const size_t base = o * s.axis * s.inner + i;
            const Eigen::Map<const ArrayX<T>, 0, Eigen::InnerStride<>> x(
                in + base, s.axis, Eigen::InnerStride<>(s.inner));
            const ArrayX<int32_t> diff = x.template cast<int32_t>() - zeroPoint;
            const auto inv = fixedpoint::inverseSqrtMultiplier(diff.square().sum());
            for (size_t k = 0; k < s.axis; ++k) {
                int32_t result;
                if (kSigned && lastAxis) {
                    // TFLite's int8 kernel folds the output scale 2^7 into the shift.
                    result = fixedpoint::multiplyByQuantizedMultiplier(diff[k], inv.multiplier,
                                                                       inv.shift + 7);
                } else {
                    result = fixedpoint::multiplyByQuantizedMultiplierSmallerThanOneExp(
                                 diff[k] * 128, inv.multiplier, inv.shift) +
                             (kSigned ? 0 : 128);
                }
                out[base + k * s.inner] = static_cast<T>(std::clamp(result, kMin, kMax));
            }
        }
    }
}

// LRN along one axis: x * (bias + alpha * sum of x^2 over [k - radius, k + radius])^-beta.
void localResponseNorm(const float* in, float* out, const AxisSizes& s, int32_t radius, float bias,
                       float alpha, float beta) {
    const auto size = static_cast<Eigen::Index>(s.axis);
    ArrayX<float> squares(size);
    forEachAxisVector(in, out, s, [&](const Strided& x, StridedOut& y) {
        squares = x.square();
        for (Eigen::Index k = 0; k < size; ++k) {
            const Eigen::Index begin = std::max<Eigen::Index>(0, k - radius);
            const Eigen::Index end = std::min<Eigen::Index>(size, k + radius + 1);
            const float sum = squares.segment(begin, end - begin).sum();
            y[k] = x[k] * std::pow(bias + alpha * sum, -beta);
        }
    });
}

}  // namespace

Status executeL2Normalization(ExecutionContext& ctx) {
    NN_RETURN_IF_ERROR(requireNoZeroSizedInput(ctx));
    const uint32_t rank = ctx.inputRank(0);
    const auto axis = resolveAxis(ctx.scalarOr<int32_t>(1, -1), rank);
    if (!axis) return ctx.fail("axis out of range for rank ", rank);
    NN_RETURN_IF_ERROR(ctx.setOutputShape(0, ctx.inputShape(0)));
    const AxisSizes s = axisSizes(ctx.inputShape(0), *axis);
    switch (ctx.inputType(0)) {
        case OperandType::TENSOR_FLOAT32:
        case OperandType::TENSOR_FLOAT16: {
            const FloatInput in(ctx, 0);
            FloatOutput out(ctx, 0);
            forEachAxisVector(in.data(), out.data(), s, [](const Strided& x, StridedOut& y) {
                y = x / std::max(std::sqrt(x.square().sum()), kL2Epsilon);
            });
            out.commit();
            return okStatus();
        }
        case OperandType::TENSOR_QUANT8_ASYMM:
            l2NormQuant<uint8_t>(ctx, s, *axis + 1 == rank);
            return okStatus();
        case OperandType::TENSOR_QUANT8_ASYMM_SIGNED:
            l2NormQuant<int8_t>(ctx, s, *axis + 1 == rank);
            return okStatus();
        default:
            return ctx.fail("unsupported input type ", nameOf(ctx.inputType(0)));
    }
}

Status executeLocalResponseNormalization(ExecutionContext& ctx) {
    NN_RETURN_IF_ERROR(requireNoZeroSizedInput(ctx));
    const uint32_t rank = ctx.inputRank(0);
    const auto axis = resolveAxis(ctx.scalarOr<int32_t>(5, -1), rank);
    if (!axis) return ctx.fail("axis out of range for rank ", rank);
    const int32_t radius = ctx.scalar<int32_t>(1);
    if (radius < 0) return ctx.fail("radius ", radius, " is negative");
    NN_RETURN_IF_ERROR(ctx.setOutputShape(0, ctx.inputShape(0)));
    const auto type = ctx.inputType(0);
    if (type != OperandType::TENSOR_FLOAT32 && type != OperandType::TENSOR_FLOAT16) {
        return ctx.fail("unsupported input type ", nameOf(type));
    }
    const FloatInput in(ctx, 0);
    FloatOutput out(ctx, 0);
    localResponseNorm(in.data(), out.data(), axisSizes(ctx.inputShape(0), *axis), radius,
                      ctx.scalar<float>(2), ctx.scalar<float>(3), ctx.scalar<float>(4));
    out.commit();
    return okStatus();
}

Status executeInstanceNormalization(ExecutionContext& ctx) {
    NN_RETURN_IF_ERROR(requireNoZeroSizedInput(ctx));
    if (ctx.inputRank(0) != 4) return ctx.fail("input must be 4-D");
    NN_RETURN_IF_ERROR(ctx.setOutputShape(0, ctx.inputShape(0)));
    const auto type = ctx.inputType(0);
    if (type != OperandType::TENSOR_FLOAT32 && type != OperandType::TENSOR_FLOAT16) {
        return ctx.fail("unsupported input type ", nameOf(type));
    }
    const float gamma = ctx.scalar<float>(1);
    const float beta = ctx.scalar<float>(2);
    const float epsilon = ctx.scalar<float>(3);
    const bool nchw = ctx.scalar<bool>(4);
    const auto dims = toNhwcShape(ctx.inputShape(0), nchw);
    const size_t batches = dims[0], plane = size_t{dims[1]} * dims[2], channels = dims[3];
    // A (batch, channel) plane is contiguous in NCHW and strided by the channel count in NHWC.
    const auto planeStart = [&](size_t n, size_t c) {
        return nchw ? (n * channels + c) * plane : n * plane * channels + c;
    };
    const Eigen::InnerStride<> stride(nchw ? 1 : static_cast<Eigen::Index>(channels));
    const FloatInput in(ctx, 0);
    FloatOutput out(ctx, 0);
    for (size_t n = 0; n < batches; ++n) {
        for (size_t c = 0; c < channels; ++c) {
            const Strided x(in.data() + planeStart(n, c), plane, stride);
            StridedOut y(out.data() + planeStart(n, c), plane, stride);
            const float mean = x.sum() / static_cast<float>(plane);
            const float variance = (x - mean).square().sum() / static_cast<float>(plane);
            const float sigma = std::sqrt(variance + epsilon);
            y = (x - mean) * gamma / sigma + beta;
        }
    }
    out.commit();
    return okStatus();
}

}  // namespace nncosim::golden
