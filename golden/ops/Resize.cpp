// RESIZE_BILINEAR in NHWC (NCHW converted), with the align-corners and half-pixel-centers
// options. Sampling positions (model/operations/ResizeSampling.h, shared with the element map of
// RESIZE_NEAREST_NEIGHBOR) and the interpolation formula follow Android's kernels term by term
// (float32 arithmetic, quantized results truncated to the element type), vectorized over channels.
#include <cmath>
#include <cstring>

#include "golden/ops/OpUtils.h"
#include "golden/ops/Operations.h"
#include "model/operations/ResizeSampling.h"

namespace nncosim::golden {
namespace {

struct ResizeParams {
    uint32_t outH = 0, outW = 0;
    bool nchw = false;
    bool alignCorners = false;
    bool halfPixelCenters = false;
};

template <typename T>
void resizeNhwc(const T* in, const std::vector<uint32_t>& inDims, T* out, const ResizeParams& p) {
    const uint32_t inH = inDims[1], inW = inDims[2], c = inDims[3];
    const float scaleH = resizeScale(inH, p.outH, p.alignCorners);
    const float scaleW = resizeScale(inW, p.outW, p.alignCorners);
    auto at = [&](uint32_t n, int32_t y, int32_t x) {
        return Eigen::Map<const ArrayX<T>>(in + ((size_t{n} * inH + y) * inW + x) * c, c)
            .template cast<float>();
    };
    for (uint32_t n = 0; n < inDims[0]; ++n) {
        for (uint32_t y = 0; y < p.outH; ++y) {
            for (uint32_t x = 0; x < p.outW; ++x) {
                Eigen::Map<ArrayX<T>> dst(out + ((size_t{n} * p.outH + y) * p.outW + x) * c, c);
                const BilinearSample sy = bilinearSample(y, scaleH, inH, p.halfPixelCenters);
                const BilinearSample sx = bilinearSample(x, scaleW, inW, p.halfPixelCenters);
                const float dy = sy.pos - sy.lo, dx = sx.pos - sx.lo;
                // Same terms and order as TFLite's reference ResizeBilinear.
                dst = (at(n, sy.lo, sx.lo) * (1 - dy) * (1 - dx) +
                       at(n, sy.hi, sx.lo) * dy * (1 - dx) + at(n, sy.lo, sx.hi) * (1 - dy) * dx +
                       at(n, sy.hi, sx.hi) * dy * dx)
                          .template cast<T>();
            }
        }
    }
}

template <typename T>
void run(ExecutionContext& ctx, const std::vector<uint32_t>& inDims,
         const std::vector<uint32_t>& outDims, const ResizeParams& p) {
    const NhwcInput<T> in(ctx.inputData<T>(0), ctx.inputShape(0), p.nchw);
    NhwcOutput<T> out(ctx.outputData<T>(0), outDims, p.nchw);
    resizeNhwc(in.data(), inDims, out.data(), p);
    out.commit();
}

Status execute(ExecutionContext& ctx) {
    if (ctx.inputRank(0) != 4) return ctx.fail("input must be 4-D");
    ResizeParams p;
    p.nchw = ctx.scalarOr<bool>(3, false);
    p.alignCorners = ctx.scalarOr<bool>(4, false);
    p.halfPixelCenters = ctx.scalarOr<bool>(5, false);
    if (p.alignCorners && p.halfPixelCenters) {
        return ctx.fail("align_corners and half_pixel_centers are exclusive");
    }
    const std::vector<uint32_t> inDims = toNhwcShape(ctx.inputShape(0), p.nchw);
    if (inDims[1] == 0 || inDims[2] == 0 || inDims[3] == 0) {
        return ctx.fail("only the batch dimension may be 0");
    }
    // Inputs 1 and 2: output width and height, or scales of the input size.
    const auto size = [&](uint32_t i, uint32_t inSize) {
        uint32_t bits = 0;
        std::memcpy(&bits, ctx.inputBytes(i), elementSize(ctx.inputType(i)));
        return resizeOutputSize(ctx.inputType(i), bits, inSize);
    };
    const int64_t width = size(1, inDims[2]), height = size(2, inDims[1]);
    if (width <= 0 || height <= 0) return ctx.fail("output size ", height, "x", width);
    p.outH = static_cast<uint32_t>(height);
    p.outW = static_cast<uint32_t>(width);
    const std::vector<uint32_t> outDims = {inDims[0], p.outH, p.outW, inDims[3]};
    NN_RETURN_IF_ERROR(ctx.setOutputShape(0, fromNhwcShape(outDims, p.nchw)));
    if (ctx.outputCount(0) == 0) return okStatus();

    switch (ctx.inputType(0)) {
        case OperandType::TENSOR_FLOAT32:
        case OperandType::TENSOR_FLOAT16:
            return runFloatNhwc(ctx, 0, outDims, p.nchw, [&](const float* in, float* out) {
                resizeNhwc(in, inDims, out, p);
            });
        case OperandType::TENSOR_QUANT8_ASYMM:
            run<uint8_t>(ctx, inDims, outDims, p);
            return okStatus();
        case OperandType::TENSOR_QUANT8_ASYMM_SIGNED:
            run<int8_t>(ctx, inDims, outDims, p);
            return okStatus();
        default:
            return ctx.fail("unsupported input type ", nameOf(ctx.inputType(0)));
    }
}

}  // namespace

Status executeResizeBilinear(ExecutionContext& ctx) {
    return execute(ctx);
}

}  // namespace nncosim::golden
