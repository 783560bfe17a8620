// Rearrangements between the spatial, depth and batch dimensions of 4-D tensors: DEPTH_TO_SPACE,
// SPACE_TO_DEPTH, BATCH_TO_SPACE_ND, SPACE_TO_BATCH_ND, in NHWC or NCHW (the optional layout
// input). Each is one pass of copyMapped: every output dimension is split into the factors it is
// made of (an output row is an input row times the block plus an offset within the block), each
// factor reads the input through the stride of the dimension it comes from, and the output's
// dimensions are listed in its own layout, so NCHW needs no conversion passes.
#include "golden/ops/DataMovement.h"
#include "golden/ops/OpUtils.h"
#include "golden/ops/Operations.h"

namespace nncosim::golden {
namespace {

/// A 4-D tensor described by its logical NHWC sizes and the element strides of each logical
/// dimension in its actual layout.
struct Tensor4 {
    uint32_t n, h, w, c;
    int64_t sn, sh, sw, sc;
};

Tensor4 describe(const std::vector<uint32_t>& dims, bool nchw) {
    const auto nhwc = toNhwcShape(dims, nchw);
    const auto strides = rowMajorStrides(dims);
    if (nchw) {
        return {nhwc[0], nhwc[1], nhwc[2], nhwc[3], strides[0], strides[2], strides[3], strides[1]};
    }
    return {nhwc[0], nhwc[1], nhwc[2], nhwc[3], strides[0], strides[1], strides[2], strides[3]};
}

/// The axes of each logical output dimension N, H, W, C, flattened in the output's layout.
struct OutputAxes {
    std::vector<AxisOffsets> n, h, w, c;

    std::vector<AxisOffsets> flatten(bool nchw) const {
        std::vector<AxisOffsets> all;
        for (const auto* group : nchw ? std::vector{&n, &c, &h, &w} : std::vector{&n, &h, &w, &c}) {
            all.insert(all.end(), group->begin(), group->end());
        }
        return all;
    }
};

struct Layout {
    bool nchw = false;
    Tensor4 in{};
};

/// Checks the input is 4-D and reads the layout flag at `layoutIndex`.
Result<Layout> readLayout(const ExecutionContext& ctx, uint32_t layoutIndex) {
    if (ctx.inputRank(0) != 4) {
        return ctx.fail("the input must be 4-D, got rank ", ctx.inputRank(0));
    }
    Layout layout;
    layout.nchw = ctx.scalarOr<bool>(layoutIndex, false);
    layout.in = describe(ctx.inputShape(0), layout.nchw);
    return layout;
}

/// A block-size scalar, checked positive.
Result<uint32_t> blockSize(const ExecutionContext& ctx, uint32_t i) {
    const int32_t value = ctx.scalar<int32_t>(i);
    if (value < 1) return ctx.fail("block size ", value, " is not positive");
    return static_cast<uint32_t>(value);
}

/// The two entries of a block-size tensor, checked positive.
Result<std::pair<uint32_t, uint32_t>> blockShape(const ExecutionContext& ctx, uint32_t i) {
    if (ctx.inputShape(i) != std::vector<uint32_t>{2}) {
        return ctx.fail("the block shape must be a 1-D tensor of 2 values");
    }
    const int32_t* block = ctx.inputData<int32_t>(i);
    if (block[0] < 1 || block[1] < 1) {
        return ctx.fail("block shape ", block[0], "x", block[1], " is not positive");
    }
    return std::pair{static_cast<uint32_t>(block[0]), static_cast<uint32_t>(block[1])};
}

Status finish(ExecutionContext& ctx, bool nchw, std::vector<uint32_t> nhwcDims,
              const OutputAxes& axes) {
    NN_RETURN_IF_ERROR(ctx.setOutputShape(0, fromNhwcShape(nhwcDims, nchw)));
    copyMapped(ctx, 0, 0, axes.flatten(nchw));
    return okStatus();
}

}  // namespace

Status executeDepthToSpace(ExecutionContext& ctx) {
    auto layout = readLayout(ctx, 2);
    if (!layout) return layout.status();
    const Tensor4& t = layout->in;
    auto block = blockSize(ctx, 1);
    if (!block) return block.status();
    const uint32_t b = *block;
    if (t.c % (b * b) != 0) return ctx.fail(t.c, " channels do not divide by ", b * b);
    // Output pixel (h * b + i, w * b + j), channel k reads input channel (i * b + j) * depth + k.
    const uint32_t depth = t.c / (b * b);
    OutputAxes axes;
    axes.n = {stridedAxis(t.n, t.sn)};
    axes.h = {stridedAxis(t.h, t.sh), stridedAxis(b, int64_t{b} * depth * t.sc)};
    axes.w = {stridedAxis(t.w, t.sw), stridedAxis(b, int64_t{depth} * t.sc)};
    axes.c = {stridedAxis(depth, t.sc)};
    return finish(ctx, layout->nchw, {t.n, t.h * b, t.w * b, depth}, axes);
}

Status executeSpaceToDepth(ExecutionContext& ctx) {
    auto layout = readLayout(ctx, 2);
    if (!layout) return layout.status();
    const Tensor4& t = layout->in;
    auto block = blockSize(ctx, 1);
    if (!block) return block.status();
    const uint32_t b = *block;
    if (t.h % b != 0 || t.w % b != 0) {
        return ctx.fail(t.h, "x", t.w, " pixels do not divide by block size ", b);
    }
    // Output channel (i * b + j) * depth + k reads input pixel (h * b + i, w * b + j), channel k.
    OutputAxes axes;
    axes.n = {stridedAxis(t.n, t.sn)};
    axes.h = {stridedAxis(t.h / b, b * t.sh)};
    axes.w = {stridedAxis(t.w / b, b * t.sw)};
    axes.c = {stridedAxis(b, t.sh), stridedAxis(b, t.sw), stridedAxis(t.c, t.sc)};
    return finish(ctx, layout->nchw, {t.n, t.h / b, t.w / b, t.c * b * b}, axes);
}

Status executeBatchToSpaceNd(ExecutionContext& ctx) {
    auto layout = readLayout(ctx, 2);
    if (!layout) return layout.status();
    const Tensor4& t = layout->in;
    auto block = blockShape(ctx, 1);
    if (!block) return block.status();
    const auto [bh, bw] = *block;
    if (t.n % (bh * bw) != 0) return ctx.fail(t.n, " batches do not divide by ", bh * bw);
    // Output pixel (h * bh + i, w * bw + j) of batch n comes from input batch (i * bw + j) * N + n.
    const uint32_t batches = t.n / (bh * bw);
    OutputAxes axes;
    axes.n = {stridedAxis(batches, t.sn)};
    axes.h = {stridedAxis(t.h, t.sh), stridedAxis(bh, int64_t{bw} * batches * t.sn)};
    axes.w = {stridedAxis(t.w, t.sw), stridedAxis(bw, int64_t{batches} * t.sn)};
    axes.c = {stridedAxis(t.c, t.sc)};
    return finish(ctx, layout->nchw, {batches, t.h * bh, t.w * bw, t.c}, axes);
}

Status executeSpaceToBatchNd(ExecutionContext& ctx) {
    auto layout = readLayout(ctx, 3);
    if (!layout) return layout.status();
    const Tensor4& t = layout->in;
    auto block = blockShape(ctx, 1);
    if (!block) return block.status();
    const auto [bh, bw] = *block;
    if (ctx.inputShape(2) != std::vector<uint32_t>{2, 2}) {
        return ctx.fail("the paddings must have shape [2, 2]");
    }
    const int32_t* pad = ctx.inputData<int32_t>(2);
    for (int k = 0; k < 4; ++k) {
        if (pad[k] < 0) return ctx.fail("negative padding ", pad[k]);
    }
    const uint32_t paddedH = pad[0] + t.h + pad[1];
    const uint32_t paddedW = pad[2] + t.w + pad[3];
    if (paddedH % bh != 0 || paddedW % bw != 0) {
        return ctx.fail("padded size ", paddedH, "x", paddedW, " does not divide by block ", bh,
                        "x", bw);
    }
    // Padding and the block split do not separate into per-axis offsets, so the padded input is
    // formed first (NHWC, filled with the zero point for quantized types, as Android pads).
    const auto inside = [](uint32_t size, int32_t before, uint32_t extent, int64_t stride) {
        AxisOffsets axis(size);
        for (uint32_t p = 0; p < size; ++p) {
            const int64_t i = int64_t{p} - before;
            axis[p] = i < 0 || i >= extent ? kPadOffset : i * stride;
        }
        return axis;
    };
    const bool quantized = ctx.inputType(0) == OperandType::TENSOR_QUANT8_ASYMM ||
                           ctx.inputType(0) == OperandType::TENSOR_QUANT8_ASYMM_SIGNED;
    const auto padValue = static_cast<uint32_t>(quantized ? ctx.outputZeroPoint(0) : 0);
    const uint32_t bytes = elementSize(ctx.inputType(0));
    std::vector<uint8_t> padded(size_t{t.n} * paddedH * paddedW * t.c * bytes);
    copyMapped(ctx.inputBytes(0), padded.data(), bytes,
               {stridedAxis(t.n, t.sn), inside(paddedH, pad[0], t.h, t.sh),
                inside(paddedW, pad[2], t.w, t.sw), stridedAxis(t.c, t.sc)},
               padValue);

    // Output batch (i * bw + j) * N + n, pixel (h, w) reads padded pixel (h * bh + i, w * bw + j).
    const int64_t pw = t.c, ph = int64_t{paddedW} * pw, pn = int64_t{paddedH} * ph;
    OutputAxes axes;
    axes.n = {stridedAxis(bh, ph), stridedAxis(bw, pw), stridedAxis(t.n, pn)};
    axes.h = {stridedAxis(paddedH / bh, bh * ph)};
    axes.w = {stridedAxis(paddedW / bw, bw * pw)};
    axes.c = {stridedAxis(t.c, 1)};
    const bool nchw = layout->nchw;
    NN_RETURN_IF_ERROR(ctx.setOutputShape(
        0, fromNhwcShape({t.n * bh * bw, paddedH / bh, paddedW / bw, t.c}, nchw)));
    copyMapped(padded.data(), ctx.outputBytes(0), bytes, axes.flatten(nchw));
    return okStatus();
}

}  // namespace nncosim::golden
