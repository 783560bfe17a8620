// ROI_ALIGN and ROI_POOLING: per region of interest, an [outH, outW] grid of bins over one batch
// image, computed in NHWC (NCHW is converted on the way in and out) and vectorized over channels.
//
// Boxes are (x1, y1, x2, y2) in image coordinates; dividing by the stride maps them to the
// feature map. Float16 tensors compute in float32. Quantized boxes are TENSOR_QUANT16_ASYMM with
// scale 0.125. ROI_ALIGN's quantized path follows Android: bilinear weights quantized to
// 1/255, accumulated in int32 and rescaled with one fixed-point multiplier per region.
#include <cmath>

#include "golden/ops/OpUtils.h"
#include "golden/ops/Operations.h"

namespace nncosim::golden {
namespace {

constexpr uint32_t kInput = 0;
constexpr uint32_t kRois = 1;
constexpr uint32_t kBatchSplit = 2;
constexpr uint32_t kOutHeight = 3;
constexpr uint32_t kOutWidth = 4;
constexpr uint32_t kHeightStride = 5;
constexpr uint32_t kWidthStride = 6;
// ROI_ALIGN only.
constexpr uint32_t kHeightSamplingRatio = 7;
constexpr uint32_t kWidthSamplingRatio = 8;
constexpr uint32_t kRoiDim = 4;
constexpr float kQuantRoiScale = 0.125f;

struct RoiParams {
    std::vector<uint32_t> inDims;  // NHWC
    uint32_t numRois = 0;
    uint32_t outH = 0, outW = 0;
    float heightScale = 0.0f, widthScale = 0.0f;  // 1 / stride
    bool nchw = false;
};

// Shape checks shared by both operations (Android's prepare), then the output shape.
Result<RoiParams> prepare(ExecutionContext& ctx, uint32_t layoutInput) {
    RoiParams p;
    p.nchw = ctx.scalar<bool>(layoutInput);
    if (ctx.inputRank(kInput) != 4 || ctx.inputRank(kRois) != 2 ||
        ctx.inputRank(kBatchSplit) != 1) {
        return ctx.fail("input must be 4-D, rois 2-D and batch split 1-D");
    }
    p.inDims = toNhwcShape(ctx.inputShape(kInput), p.nchw);
    p.numRois = ctx.inputDim(kRois, 0);
    if (ctx.inputDim(kRois, 1) != kRoiDim || ctx.inputDim(kBatchSplit, 0) != p.numRois) {
        return ctx.fail("rois must be [numRois, 4] and batch split [numRois]");
    }
    const int32_t outH = ctx.scalar<int32_t>(kOutHeight);
    const int32_t outW = ctx.scalar<int32_t>(kOutWidth);
    const float heightStride = ctx.scalar<float>(kHeightStride);
    const float widthStride = ctx.scalar<float>(kWidthStride);
    if (outH <= 0 || outW <= 0 || !(heightStride > 0.0f) || !(widthStride > 0.0f)) {
        return ctx.fail("output size and strides must be positive");
    }
    if (ctx.inputType(kRois) == OperandType::TENSOR_QUANT16_ASYMM &&
        (ctx.inputScale(kRois) != kQuantRoiScale || ctx.inputZeroPoint(kRois) != 0)) {
        return ctx.fail("quantized rois must have scale 0.125 and zero point 0");
    }
    p.outH = static_cast<uint32_t>(outH);
    p.outW = static_cast<uint32_t>(outW);
    p.heightScale = 1.0f / heightStride;
    p.widthScale = 1.0f / widthStride;
    NN_RETURN_IF_ERROR(
        ctx.setOutputShape(0, fromNhwcShape({p.numRois, p.outH, p.outW, p.inDims[3]}, p.nchw)));
    return p;
}

// Box coordinates as float: float tensors as they are, TENSOR_QUANT16_ASYMM dequantized.
std::vector<float> roisAsFloat(const ExecutionContext& ctx) {
    if (ctx.inputType(kRois) != OperandType::TENSOR_QUANT16_ASYMM) return ctx.inputAsFloat(kRois);
    const size_t n = ctx.inputCount(kRois);
    std::vector<float> out(n);
    Eigen::Map<Eigen::ArrayXf>(out.data(), n) =
        (Eigen::Map<const ArrayX<uint16_t>>(ctx.inputData<uint16_t>(kRois), n).cast<float>() -
         static_cast<float>(ctx.inputZeroPoint(kRois))) *
        ctx.inputScale(kRois);
    return out;
}

// Android's per-region checks: a valid batch index and a non-empty box inside the feature map.
Status checkRoi(const ExecutionContext& ctx, const RoiParams& p, const float* roi, int32_t batch) {
    const float inH = static_cast<float>(p.inDims[1]);
    const float inW = static_cast<float>(p.inDims[2]);
    if (batch < 0 || static_cast<uint32_t>(batch) >= p.inDims[0]) {
        return ctx.fail("batch index ", batch, " out of range");
    }
    const bool valid = roi[0] >= 0 && roi[1] >= 0 && roi[2] >= 0 && roi[3] >= 0 &&
                       roi[0] * p.widthScale <= inW && roi[1] * p.heightScale <= inH &&
                       roi[2] * p.widthScale <= inW && roi[3] * p.heightScale <= inH &&
                       roi[0] <= roi[2] && roi[1] <= roi[3];
    if (!valid) {
        return ctx.fail("malformed roi (", roi[0], ", ", roi[1], ", ", roi[2], ", ", roi[3], ")");
    }
    return okStatus();
}

// One bilinear sample of ROI_ALIGN: the four neighbouring pixels (offsets into one batch image)
// and their weights; samples beyond the last row or column collapse onto it.
struct Sample {
    size_t offsets[4];
    float weights[4];
};

Sample bilinearSample(float x, float y, const std::vector<uint32_t>& dims) {
    const uint32_t inH = dims[1], inW = dims[2], depth = dims[3];
    auto x1 = static_cast<uint32_t>(std::floor(x));
    auto y1 = static_cast<uint32_t>(std::floor(y));
    uint32_t x2 = x1 + 1, y2 = y1 + 1;
    float dx1 = x - static_cast<float>(x1);
    float dy1 = y - static_cast<float>(y1);
    if (x1 >= inW - 1) {
        x1 = x2 = inW - 1;
        dx1 = 0;
    }
    if (y1 >= inH - 1) {
        y1 = y2 = inH - 1;
        dy1 = 0;
    }
    const float dx2 = 1.0f - dx1, dy2 = 1.0f - dy1;
    const size_t row = size_t{inW} * depth;
    return Sample{{y1 * row + x1 * depth, y1 * row + x2 * depth, y2 * row + x1 * depth,
                   y2 * row + x2 * depth},
                  {dx2 * dy2, dx1 * dy2, dx2 * dy1, dx1 * dy1}};
}

// The sampling grid of one region of ROI_ALIGN in feature-map coordinates.
struct AlignGrid {
    float wStart = 0, hStart = 0;  // region origin
    float wStep = 0, hStep = 0;    // bin size
    uint32_t wSamples = 0, hSamples = 0;
    float wBin = 0, hBin = 0;  // distance between samples

    AlignGrid(float x1, float y1, float x2, float y2, const RoiParams& p, int32_t hRatio,
              int32_t wRatio)
        : wStart(x1), hStart(y1) {
        wStep = std::max(x2 - x1, 1.0f) / static_cast<float>(p.outW);
        hStep = std::max(y2 - y1, 1.0f) / static_cast<float>(p.outH);
        // A ratio of 0 means adaptive: ceil(bin size) samples.
        wSamples = wRatio > 0 ? wRatio : static_cast<uint32_t>(std::ceil(wStep));
        hSamples = hRatio > 0 ? hRatio : static_cast<uint32_t>(std::ceil(hStep));
        wBin = wStep / static_cast<float>(wSamples);
        hBin = hStep / static_cast<float>(hSamples);
    }
    // Calls f(sample) for each sampling point of bin (i, j).
    template <typename F>
    void forEachSample(uint32_t i, uint32_t j, const std::vector<uint32_t>& dims, F f) const {
        const float binW = wStep * static_cast<float>(j) + wStart;
        const float binH = hStep * static_cast<float>(i) + hStart;
        for (uint32_t yi = 0; yi < hSamples; ++yi) {
            for (uint32_t xi = 0; xi < wSamples; ++xi) {
                const float y = binH + hBin / 2 + hBin * static_cast<float>(yi);
                const float x = binW + wBin / 2 + wBin * static_cast<float>(xi);
                f(bilinearSample(x, y, dims));
            }
        }
    }
};

Status roiAlignFloat(ExecutionContext& ctx, const RoiParams& p, int32_t hRatio, int32_t wRatio) {
    const FloatInput input(ctx, kInput);
    const NhwcInput<float> in(input.data(), ctx.inputShape(kInput), p.nchw);
    FloatOutput output(ctx, 0);
    NhwcOutput<float> out(output.data(), {p.numRois, p.outH, p.outW, p.inDims[3]}, p.nchw);
    const std::vector<float> rois = roisAsFloat(ctx);
    const int32_t* batches = ctx.inputData<int32_t>(kBatchSplit);
    const uint32_t depth = p.inDims[3];
    const size_t imageSize = size_t{p.inDims[1]} * p.inDims[2] * depth;
    float* outPtr = out.data();
    for (uint32_t r = 0; r < p.numRois; ++r) {
        const float* roi = rois.data() + r * kRoiDim;
        NN_RETURN_IF_ERROR(checkRoi(ctx, p, roi, batches[r]));
        const AlignGrid grid(roi[0] * p.widthScale, roi[1] * p.heightScale, roi[2] * p.widthScale,
                             roi[3] * p.heightScale, p, hRatio, wRatio);
        const float count = static_cast<float>(grid.wSamples * grid.hSamples);
        const float* image = in.data() + batches[r] * imageSize;
        for (uint32_t i = 0; i < p.outH; ++i) {
            for (uint32_t j = 0; j < p.outW; ++j, outPtr += depth) {
                Eigen::Map<ArrayX<float>> acc(outPtr, depth);
                acc.setZero();
                grid.forEachSample(i, j, p.inDims, [&](const Sample& s) {
                    const auto px = [&](int c) {
                        return Eigen::Map<const ArrayX<float>>(image + s.offsets[c], depth);
                    };
                    acc += s.weights[0] * px(0) + s.weights[1] * px(1) + s.weights[2] * px(2) +
                           s.weights[3] * px(3);
                });
                acc /= count;
            }
        }
    }
    out.commit();
    output.commit();
    return okStatus();
}

template <typename T>
Status roiAlignQuant(ExecutionContext& ctx, const RoiParams& p, int32_t hRatio, int32_t wRatio) {
    constexpr float kWeightScale = 1.0f / 255.0f;
    const NhwcInput<T> in(ctx.inputData<T>(kInput), ctx.inputShape(kInput), p.nchw);
    NhwcOutput<T> out(ctx.outputData<T>(0), {p.numRois, p.outH, p.outW, p.inDims[3]}, p.nchw);
    const uint16_t* rois = ctx.inputData<uint16_t>(kRois);
    const int32_t* batches = ctx.inputData<int32_t>(kBatchSplit);
    const int32_t inZeroPoint = ctx.inputZeroPoint(kInput);
    const int32_t outZeroPoint = ctx.outputZeroPoint(0);
    const uint32_t depth = p.inDims[3];
    const size_t imageSize = size_t{p.inDims[1]} * p.inDims[2] * depth;
    const float inH = static_cast<float>(p.inDims[1]);
    const float inW = static_cast<float>(p.inDims[2]);
    T* outPtr = out.data();
    ArrayX<int32_t> acc(depth);
    for (uint32_t r = 0; r < p.numRois; ++r) {
        const uint16_t* roi = rois + r * kRoiDim;
        const float x1 = static_cast<float>(roi[0]) * p.widthScale * kQuantRoiScale;
        const float y1 = static_cast<float>(roi[1]) * p.heightScale * kQuantRoiScale;
        const float x2 = static_cast<float>(roi[2]) * p.widthScale * kQuantRoiScale;
        const float y2 = static_cast<float>(roi[3]) * p.heightScale * kQuantRoiScale;
        const int32_t batch = batches[r];
        if (batch < 0 || static_cast<uint32_t>(batch) >= p.inDims[0]) {
            return ctx.fail("batch index ", batch, " out of range");
        }
        if (!(x1 <= inW && y1 <= inH && x2 <= inW && y2 <= inH && x1 <= x2 && y1 <= y2)) {
            return ctx.fail("malformed roi (", x1, ", ", y1, ", ", x2, ", ", y2, ")");
        }
        const AlignGrid grid(x1, y1, x2, y2, p, hRatio, wRatio);
        const int32_t count = static_cast<int32_t>(grid.wSamples * grid.hSamples);
        // Android rounds the multiplier to float before quantizing it.
        const float realMultiplier =
            ctx.inputScale(kInput) * kWeightScale / ctx.outputScale(0) / count;
        const auto multiplier = fixedpoint::quantizeMultiplierSmallerThanOneExp(realMultiplier);
        if (!multiplier) return ctx.fail("output multiplier ", realMultiplier, " not below 1");
        const T* image = in.data() + batch * imageSize;
        for (uint32_t i = 0; i < p.outH; ++i) {
            for (uint32_t j = 0; j < p.outW; ++j, outPtr += depth) {
                acc.setZero();
                grid.forEachSample(i, j, p.inDims, [&](const Sample& s) {
                    for (int c = 0; c < 4; ++c) {
                        const auto w =
                            static_cast<int32_t>(std::round(s.weights[c] / kWeightScale));
                        acc += w * centered(image + s.offsets[c], depth, inZeroPoint);
                    }
                });
                for (uint32_t k = 0; k < depth; ++k) {
                    const int32_t v = fixedpoint::multiplyByQuantizedMultiplier(
                                          acc[k], multiplier->multiplier, multiplier->shift) +
                                      outZeroPoint;
                    outPtr[k] = static_cast<T>(std::clamp<int32_t>(v, std::numeric_limits<T>::min(),
                                                                   std::numeric_limits<T>::max()));
                }
            }
        }
    }
    out.commit();
    return okStatus();
}

template <typename T>
void maxOverWindow(const T* image, const std::vector<uint32_t>& dims, uint32_t h0, uint32_t h1,
                   uint32_t w0, uint32_t w1, T empty, T* out) {
    const uint32_t depth = dims[3];
    Eigen::Map<ArrayX<T>> result(out, depth);
    if (h0 >= h1 || w0 >= w1) {
        result.setConstant(empty);
        return;
    }
    result = Eigen::Map<const ArrayX<T>>(image + (size_t{h0} * dims[2] + w0) * depth, depth);
    for (uint32_t h = h0; h < h1; ++h) {
        for (uint32_t w = w0; w < w1; ++w) {
            result = result.max(
                Eigen::Map<const ArrayX<T>>(image + (size_t{h} * dims[2] + w) * depth, depth));
        }
    }
}

// ROI_POOLING over NHWC data of element T (float for float tensors). An empty bin yields
// `empty` (the input zero point), as Android's kernel does.
template <typename T>
Status roiPooling(const ExecutionContext& ctx, const RoiParams& p, const T* in, T empty, T* out) {
    const std::vector<float> rois = roisAsFloat(ctx);
    const int32_t* batches = ctx.inputData<int32_t>(kBatchSplit);
    const uint32_t depth = p.inDims[3];
    const uint32_t inH = p.inDims[1], inW = p.inDims[2];
    const size_t imageSize = size_t{inH} * inW * depth;
    for (uint32_t r = 0; r < p.numRois; ++r) {
        const float* roi = rois.data() + r * kRoiDim;
        NN_RETURN_IF_ERROR(checkRoi(ctx, p, roi, batches[r]));
        const auto x1 = static_cast<int32_t>(std::round(roi[0] * p.widthScale));
        const auto y1 = static_cast<int32_t>(std::round(roi[1] * p.heightScale));
        const auto x2 = static_cast<int32_t>(std::round(roi[2] * p.widthScale));
        const auto y2 = static_cast<int32_t>(std::round(roi[3] * p.heightScale));
        // Regions narrower than one pixel count as one pixel.
        const float wStep = static_cast<float>(std::max(x2 - x1 + 1, 1)) / p.outW;
        const float hStep = static_cast<float>(std::max(y2 - y1 + 1, 1)) / p.outH;
        const T* image = in + batches[r] * imageSize;
        for (uint32_t i = 0; i < p.outH; ++i) {
            // Bins are [floor(start), ceil(end)) clipped to the image.
            const auto h0 = std::min(static_cast<uint32_t>(std::floor(hStep * i + y1)), inH);
            const auto h1 = std::min(static_cast<uint32_t>(std::ceil(hStep * (i + 1) + y1)), inH);
            for (uint32_t j = 0; j < p.outW; ++j, out += depth) {
                const auto w0 = std::min(static_cast<uint32_t>(std::floor(wStep * j + x1)), inW);
                const auto w1 =
                    std::min(static_cast<uint32_t>(std::ceil(wStep * (j + 1) + x1)), inW);
                maxOverWindow(image, p.inDims, h0, h1, w0, w1, empty, out);
            }
        }
    }
    return okStatus();
}

template <typename T>
Status roiPoolingQuant(ExecutionContext& ctx, const RoiParams& p) {
    const NhwcInput<T> in(ctx.inputData<T>(kInput), ctx.inputShape(kInput), p.nchw);
    NhwcOutput<T> out(ctx.outputData<T>(0), {p.numRois, p.outH, p.outW, p.inDims[3]}, p.nchw);
    NN_RETURN_IF_ERROR(
        roiPooling(ctx, p, in.data(), static_cast<T>(ctx.inputZeroPoint(kInput)), out.data()));
    out.commit();
    return okStatus();
}

}  // namespace

Status executeRoiAlign(ExecutionContext& ctx) {
    auto params = prepare(ctx, 9);
    if (!params) return params.status();
    const RoiParams& p = *params;
    if (p.inDims[0] == 0 || p.inDims[1] == 0 || p.inDims[2] == 0 || p.inDims[3] == 0) {
        return ctx.fail("every input dimension must be positive");
    }
    const int32_t hRatio = ctx.scalar<int32_t>(kHeightSamplingRatio);
    const int32_t wRatio = ctx.scalar<int32_t>(kWidthSamplingRatio);
    if (hRatio < 0 || wRatio < 0) return ctx.fail("sampling ratios must not be negative");
    if (p.numRois == 0) return okStatus();  // zero-sized: nothing to compute
    switch (ctx.inputType(kInput)) {
        case OperandType::TENSOR_FLOAT32:
        case OperandType::TENSOR_FLOAT16:
            return roiAlignFloat(ctx, p, hRatio, wRatio);
        case OperandType::TENSOR_QUANT8_ASYMM:
            return roiAlignQuant<uint8_t>(ctx, p, hRatio, wRatio);
        case OperandType::TENSOR_QUANT8_ASYMM_SIGNED:
            return roiAlignQuant<int8_t>(ctx, p, hRatio, wRatio);
        default:
            return ctx.fail("unsupported input type ", nameOf(ctx.inputType(kInput)));
    }
}

Status executeRoiPooling(ExecutionContext& ctx) {
    auto params = prepare(ctx, 7);
    if (!params) return params.status();
    const RoiParams& p = *params;
    // Android's ROI_POOLING does not accept zero-sized inputs.
    NN_RETURN_IF_ERROR(requireNoZeroSizedInput(ctx));
    switch (ctx.inputType(kInput)) {
        case OperandType::TENSOR_FLOAT32:
        case OperandType::TENSOR_FLOAT16:
            return runFloatNhwc(
                ctx, kInput, {p.numRois, p.outH, p.outW, p.inDims[3]}, p.nchw,
                [&](const float* in, float* out) { return roiPooling(ctx, p, in, 0.0f, out); });
        case OperandType::TENSOR_QUANT8_ASYMM:
            return roiPoolingQuant<uint8_t>(ctx, p);
        case OperandType::TENSOR_QUANT8_ASYMM_SIGNED:
            return roiPoolingQuant<int8_t>(ctx, p);
        default:
            return ctx.fail("unsupported input type ", nameOf(ctx.inputType(kInput)));
    }
}

}  // namespace nncosim::golden
