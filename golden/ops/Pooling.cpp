// AVERAGE_POOL_2D, MAX_POOL_2D, L2_POOL_2D over NHWC windows, vectorized over channels. Windows
// cover only the valid (unpadded) input pixels; averages divide by their count. Quantized
// averages round half away from zero, as TFLite's integer AveragePool does.
#include "golden/ops/OpUtils.h"
#include "golden/ops/Operations.h"

namespace nncosim::golden {
namespace {

enum class Pool { kAverage, kMax, kL2 };

struct Window {
    uint32_t h0, h1, w0, w1;  // [h0, h1) x [w0, w1) of valid input pixels
    uint32_t count() const { return (h1 - h0) * (w1 - w0); }
};

// Calls f(outputPixelOffset, window) for every output pixel of batch n.
template <typename F>
void forEachWindow(const std::vector<uint32_t>& in, const std::vector<uint32_t>& out,
                   const WindowParams& p, F f) {
    for (uint32_t n = 0; n < out[0]; ++n) {
        for (uint32_t oh = 0; oh < out[1]; ++oh) {
            const int32_t hs = static_cast<int32_t>(oh) * p.strideH - p.padH.head;
            const uint32_t h0 = std::max(hs, 0);
            const uint32_t h1 = std::min<int32_t>(hs + p.filterH, in[1]);
            for (uint32_t ow = 0; ow < out[2]; ++ow) {
                const int32_t ws = static_cast<int32_t>(ow) * p.strideW - p.padW.head;
                const uint32_t w0 = std::max(ws, 0);
                const uint32_t w1 = std::min<int32_t>(ws + p.filterW, in[2]);
                f(n, ((size_t{n} * out[1] + oh) * out[2] + ow) * out[3], Window{h0, h1, w0, w1});
            }
        }
    }
}

template <typename T>
const T* pixel(const T* in, const std::vector<uint32_t>& dims, uint32_t n, uint32_t h, uint32_t w) {
    return in + ((size_t{n} * dims[1] + h) * dims[2] + w) * dims[3];
}

void poolFloat(Pool kind, const float* in, const std::vector<uint32_t>& inDims, float* out,
               const std::vector<uint32_t>& outDims, const WindowParams& p) {
    const uint32_t c = inDims[3];
    // Plain variables: C++17 lambdas cannot capture structured bindings (clang rejects it).
    const auto range = activationRangeFloat(p.activation);
    const float lo = range.first, hi = range.second;
    ArrayX<float> acc(c);
    forEachWindow(inDims, outDims, p, [&](uint32_t n, size_t offset, const Window& win) {
        if (kind == Pool::kMax) {
            acc.setConstant(std::numeric_limits<float>::lowest());
        } else {
            acc.setZero();
        }
        for (uint32_t h = win.h0; h < win.h1; ++h) {
            for (uint32_t w = win.w0; w < win.w1; ++w) {
                const Eigen::Map<const ArrayX<float>> x(pixel(in, inDims, n, h, w), c);
                switch (kind) {
                    case Pool::kAverage:
                        acc += x;
                        break;
                    case Pool::kMax:
                        acc = acc.max(x);
                        break;
                    case Pool::kL2:
                        acc += x.square();
                        break;
                }
            }
        }
        if (kind == Pool::kAverage) acc /= static_cast<float>(win.count());
        if (kind == Pool::kL2) acc = (acc / static_cast<float>(win.count())).sqrt();
        Eigen::Map<ArrayX<float>>(out + offset, c) = acc.max(lo).min(hi);
    });
}

template <typename T>
Status poolQuant(ExecutionContext& ctx, Pool kind, const std::vector<uint32_t>& inDims,
                 const std::vector<uint32_t>& outDims, const WindowParams& p) {
    auto range = quantActivationRange<T>(ctx, 0, p.activation);
    if (!range) return range.status();
    const NhwcInput<T> input(ctx.inputData<T>(0), ctx.inputShape(0), p.nchw);
    NhwcOutput<T> output(ctx.outputData<T>(0), outDims, p.nchw);
    const T* in = input.data();
    T* out = output.data();
    const uint32_t c = inDims[3];
    ArrayX<int32_t> acc(c);
    forEachWindow(inDims, outDims, p, [&](uint32_t n, size_t offset, const Window& win) {
        if (kind == Pool::kMax) {
            acc.setConstant(std::numeric_limits<int32_t>::min());
        } else {
            acc.setZero();
        }
        for (uint32_t h = win.h0; h < win.h1; ++h) {
            for (uint32_t w = win.w0; w < win.w1; ++w) {
                const auto x = Eigen::Map<const ArrayX<T>>(pixel(in, inDims, n, h, w), c)
                                   .template cast<int32_t>();
                if (kind == Pool::kMax) {
                    acc = acc.max(x);
                } else {
                    acc += x;
                }
            }
        }
        if (kind == Pool::kAverage) {
            const int32_t count = win.count();
            for (int32_t& s : acc) {
                s = s >= 0 ? (s + count / 2) / count : (s - count / 2) / count;
            }
        }
        Eigen::Map<ArrayX<T>>(out + offset, c) =
            acc.max(range->min).min(range->max).template cast<T>();
    });
    output.commit();
    return okStatus();
}

Status execute(ExecutionContext& ctx, Pool kind) {
    auto params = decodeWindowParams(ctx.type(), operationInputs(ctx));
    if (!params) return ctx.fail(params.status().message);
    auto g = windowGeometry(ctx.type(), *params, ctx.inputShape(0));
    if (!g) return ctx.fail(g.status().message);
    WindowParams p = *params;
    p.padH = g->padH;
    p.padW = g->padW;
    const std::vector<uint32_t> inDims = {g->batches, g->inH, g->inW, g->inC};
    const std::vector<uint32_t> outDims = {g->batches, g->outH, g->outW, g->outC};
    NN_RETURN_IF_ERROR(ctx.setOutputShape(0, fromNhwcShape(outDims, p.nchw)));
    if (ctx.outputCount(0) == 0) return okStatus();

    switch (ctx.inputType(0)) {
        case OperandType::TENSOR_FLOAT32:
        case OperandType::TENSOR_FLOAT16:
            return runFloatNhwc(ctx, 0, outDims, p.nchw, [&](const float* in, float* out) {
                poolFloat(kind, in, inDims, out, outDims, p);
            });
        case OperandType::TENSOR_QUANT8_ASYMM:
        case OperandType::TENSOR_QUANT8_ASYMM_SIGNED:
            if (kind == Pool::kL2) break;
            return ctx.inputType(0) == OperandType::TENSOR_QUANT8_ASYMM
                       ? poolQuant<uint8_t>(ctx, kind, inDims, outDims, p)
                       : poolQuant<int8_t>(ctx, kind, inDims, outDims, p);
        default:
            break;
    }
    return ctx.fail("unsupported input type ", nameOf(ctx.inputType(0)));
}

}  // namespace

Status executeAveragePool2D(ExecutionContext& ctx) {
    return execute(ctx, Pool::kAverage);
}

Status executeMaxPool2D(ExecutionContext& ctx) {
    return execute(ctx, Pool::kMax);
}

Status executeL2Pool2D(ExecutionContext& ctx) {
    return execute(ctx, Pool::kL2);
}

}  // namespace nncosim::golden
