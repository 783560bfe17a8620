// RESHAPE and CONCATENATION: operations that assemble their output from input elements. Only
// CONCATENATION computes, when an input's quantization differs from the output's: it requantizes
// through float exactly as TFLite's reference Concatenation does.
#include <cmath>
#include <cstring>

#include "golden/ops/OpUtils.h"
#include "golden/ops/Operations.h"

namespace nncosim::golden {
namespace {

// Rescales quantized values to another scale and zero point in the uint8 domain (int8 values are
// shifted by 128 first, as Android does), rounding half away from zero.
template <typename T>
void requantize(const T* in, size_t n, float inScale, int32_t inZero, float outScale,
                int32_t outZero, T* out) {
    constexpr int32_t kShift = std::is_same_v<T, int8_t> ? 128 : 0;
    const float inverseOutScale = 1.0f / outScale;
    const float scale = inScale * inverseOutScale;
    const float bias = static_cast<float>(-(inZero + kShift)) * scale;
    for (size_t i = 0; i < n; ++i) {
        const float x = static_cast<float>(static_cast<int32_t>(in[i]) + kShift);
        const int32_t v = static_cast<int32_t>(std::round(x * scale + bias)) + outZero + kShift;
        out[i] = static_cast<T>(std::min(std::max(v, 0), 255) - kShift);
    }
}

// Copies each input's slabs along the axis into place, requantizing 8-bit inputs whose
// quantization differs from the output's.
template <typename T>
void concatenate(ExecutionContext& ctx, uint32_t inputs, uint32_t axis, size_t outer,
                 size_t inner) {
    T* out = ctx.outputData<T>(0);
    const size_t outSlab = ctx.outputCount(0) / std::max<size_t>(outer, 1);
    size_t offset = 0;
    for (uint32_t i = 0; i < inputs; ++i) {
        const size_t slab = size_t{ctx.inputDim(i, axis)} * inner;
        const T* in = ctx.inputData<T>(i);
        const bool rescale = kIsQuant8<T> && (ctx.inputScale(i) != ctx.outputScale(0) ||
                                              ctx.inputZeroPoint(i) != ctx.outputZeroPoint(0));
        for (size_t o = 0; o < outer && slab > 0; ++o) {
            T* dst = out + o * outSlab + offset;
            if (rescale) {
                requantize(in + o * slab, slab, ctx.inputScale(i), ctx.inputZeroPoint(i),
                           ctx.outputScale(0), ctx.outputZeroPoint(0), dst);
            } else {
                std::memcpy(dst, in + o * slab, slab * sizeof(T));
            }
        }
        offset += slab;
    }
}

}  // namespace

Status executeReshape(ExecutionContext& ctx) {
    if (ctx.inputRank(1) != 1) return ctx.fail("the shape must be a 1-D tensor");
    const int32_t* target = ctx.inputData<int32_t>(1);
    const size_t elements = ctx.inputCount(0);
    auto dims =
        reshapeShape(ctx.inputShape(0), std::vector<int32_t>(target, target + ctx.inputCount(1)));
    if (!dims) return ctx.fail(dims.status().message);
    NN_RETURN_IF_ERROR(ctx.setOutputShape(0, std::move(*dims)));
    if (elements > 0) {
        std::memcpy(ctx.outputBytes(0), ctx.inputBytes(0),
                    elements * elementSize(ctx.inputType(0)));
    }
    return okStatus();
}

Status executeConcatenation(ExecutionContext& ctx) {
    const uint32_t inputs = ctx.numInputs() - 1;
    const uint32_t rank = ctx.inputRank(0);
    std::vector<std::vector<uint32_t>> shapes;
    for (uint32_t i = 0; i < inputs; ++i) shapes.push_back(ctx.inputShape(i));
    auto concatenated = concatenationShape(shapes, ctx.scalar<int32_t>(inputs));
    if (!concatenated) return ctx.fail(concatenated.status().message);
    std::vector<uint32_t> dims = std::move(*concatenated);
    const int32_t axisValue = ctx.scalar<int32_t>(inputs);
    const auto axis = static_cast<uint32_t>(axisValue < 0 ? axisValue + int32_t(rank) : axisValue);
    size_t outer = 1, inner = 1;
    for (uint32_t d = 0; d < rank; ++d) {
        if (d < axis) outer *= dims[d];
        if (d > axis) inner *= dims[d];
    }
    NN_RETURN_IF_ERROR(ctx.setOutputShape(0, std::move(dims)));
    if (ctx.outputCount(0) == 0) return okStatus();
    switch (elementSize(ctx.inputType(0))) {
        case 1:
            if (ctx.inputType(0) == OperandType::TENSOR_QUANT8_ASYMM_SIGNED) {
                concatenate<int8_t>(ctx, inputs, axis, outer, inner);
            } else {
                concatenate<uint8_t>(ctx, inputs, axis, outer, inner);
            }
            break;
        case 2:
            concatenate<uint16_t>(ctx, inputs, axis, outer, inner);
            break;
        default:
            concatenate<uint32_t>(ctx, inputs, axis, outer, inner);
            break;
    }
    return okStatus();
}

}  // namespace nncosim::golden
