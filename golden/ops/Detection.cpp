// Object-detection operations: AXIS_ALIGNED_BBOX_TRANSFORM, BOX_WITH_NMS_LIMIT, GENERATE_PROPOSALS,
// DETECTION_POSTPROCESSING and HEATMAP_MAX_KEYPOINT.
//
// As in Android's CPU reference, every type computes in float32: float16 tensors are widened and
// quantized tensors dequantized ((q - zeroPoint) * scale), and results are rounded back with
// round(x / scale + zeroPoint) clamped to the output type. Boxes of quantized models are
// TENSOR_QUANT16_ASYMM with scale 0.125 (anchors of GENERATE_PROPOSALS TENSOR_QUANT16_SYMM).
//
// Non-maximum suppression reproduces Android's in-place algorithm exactly, since the order of
// its results is observable: the best remaining candidate is swapped to the front, suppressed
// candidates are swapped to the back. Sorts are stable (equal scores keep their order), which
// is what Android's sort does on the short lists its tests use.
#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>

#include "golden/ops/OpUtils.h"
#include "golden/ops/Operations.h"

namespace nncosim::golden {
namespace {

constexpr uint32_t kRoiDim = 4;
constexpr float kQuantBoxScale = 0.125f;

bool isQuant8(OperandType type) {
    return type == OperandType::TENSOR_QUANT8_ASYMM ||
           type == OperandType::TENSOR_QUANT8_ASYMM_SIGNED;
}

// Input i as float32 values: float tensors widened, quantized tensors dequantized.
template <typename T>
std::vector<float> dequantize(const ExecutionContext& ctx, uint32_t i) {
    const size_t n = ctx.inputCount(i);
    std::vector<float> out(n);
    Eigen::Map<Eigen::ArrayXf>(out.data(), n) =
        (Eigen::Map<const ArrayX<T>>(ctx.inputData<T>(i), n).template cast<float>() -
         static_cast<float>(ctx.inputZeroPoint(i))) *
        ctx.inputScale(i);
    return out;
}

Result<std::vector<float>> inputAsFloat(const ExecutionContext& ctx, uint32_t i) {
    switch (ctx.inputType(i)) {
        case OperandType::TENSOR_FLOAT32:
        case OperandType::TENSOR_FLOAT16:
            return ctx.inputAsFloat(i);
        case OperandType::TENSOR_QUANT8_ASYMM:
            return dequantize<uint8_t>(ctx, i);
        case OperandType::TENSOR_QUANT8_ASYMM_SIGNED:
            return dequantize<int8_t>(ctx, i);
        case OperandType::TENSOR_QUANT16_ASYMM:
            return dequantize<uint16_t>(ctx, i);
        case OperandType::TENSOR_QUANT16_SYMM:
            return dequantize<int16_t>(ctx, i);
        default:
            return ctx.fail("unsupported type ", nameOf(ctx.inputType(i)), " of input ", i);
    }
}

// round(value / scale + zeroPoint) clamped to T; NaN (undefined in Android) becomes 0.
template <typename T>
T quantize(float value, float scale, int32_t zeroPoint) {
    const float q = std::round(value / scale + static_cast<float>(zeroPoint));
    if (std::isnan(q)) return 0;
    return static_cast<T>(
        std::clamp<float>(q, std::numeric_limits<T>::min(), std::numeric_limits<T>::max()));
}

template <typename T>
void quantizeAll(const float* values, size_t n, float scale, int32_t zeroPoint, T* out) {
    for (size_t k = 0; k < n; ++k) out[k] = quantize<T>(values[k], scale, zeroPoint);
}

// Writes output j (its shape already set) from float32 values in its own type.
Status outputFromFloat(ExecutionContext& ctx, uint32_t j, const float* values) {
    const size_t n = ctx.outputCount(j);
    const float scale = ctx.outputScale(j);
    const int32_t zeroPoint = ctx.outputZeroPoint(j);
    switch (ctx.outputType(j)) {
        case OperandType::TENSOR_FLOAT32:
        case OperandType::TENSOR_FLOAT16:
            ctx.setOutputFromFloat(j, values);
            return okStatus();
        case OperandType::TENSOR_QUANT8_ASYMM:
            quantizeAll(values, n, scale, zeroPoint, ctx.outputData<uint8_t>(j));
            return okStatus();
        case OperandType::TENSOR_QUANT8_ASYMM_SIGNED:
            quantizeAll(values, n, scale, zeroPoint, ctx.outputData<int8_t>(j));
            return okStatus();
        case OperandType::TENSOR_QUANT16_ASYMM:
            quantizeAll(values, n, scale, zeroPoint, ctx.outputData<uint16_t>(j));
            return okStatus();
        default:
            return ctx.fail("unsupported type ", nameOf(ctx.outputType(j)), " of output ", j);
    }
}

// Android rejects zero-sized inputs for operations not declared to accept them.
Status checkNoZeroSizedInput(const ExecutionContext& ctx) {
    for (uint32_t i = 0; i < ctx.numInputs(); ++i) {
        if (ctx.isOmitted(i)) continue;
        for (uint32_t d : ctx.inputShape(i)) {
            if (d == 0) return ctx.fail("input ", i, " is zero-sized");
        }
    }
    return okStatus();
}

bool isQuantBox(const ExecutionContext& ctx, uint32_t i) {
    return ctx.inputScale(i) == kQuantBoxScale && ctx.inputZeroPoint(i) == 0;
}

// ---------------------------------------------------------------------------------------------
// Box arithmetic.
// ---------------------------------------------------------------------------------------------

// Intersection over union of two (x1, y1, x2, y2) boxes.
float intersectionOverUnion(const float* a, const float* b) {
    const float areaA = (a[2] - a[0]) * (a[3] - a[1]);
    const float areaB = (b[2] - b[0]) * (b[3] - b[1]);
    const float w = std::max(std::min(a[2], b[2]) - std::max(a[0], b[0]), 0.0f);
    const float h = std::max(std::min(a[3], b[3]) - std::max(a[1], b[1]), 0.0f);
    const float intersection = w * h;
    return intersection / (areaA + areaB - intersection);
}

// Moves box (x1, y1, x2, y2) by deltas (dx, dy, dw, dh) relative to its size, in centre form,
// and clips it to the image [0, width] x [0, height].
void transformBox(const float* box, const float* delta, float imageHeight, float imageWidth,
                  float* out) {
    const float w = box[2] - box[0];
    const float h = box[3] - box[1];
    const float x = (box[0] + box[2]) / 2;
    const float y = (box[1] + box[3]) / 2;
    const float newW = std::exp(delta[2]) * w;
    const float newH = std::exp(delta[3]) * h;
    const float newX = x + delta[0] * w;
    const float newY = y + delta[1] * h;
    const auto clip = [](float v, float hi) { return std::min(std::max(v, 0.0f), hi); };
    out[0] = clip(newX - newW / 2, imageWidth);
    out[1] = clip(newY - newH / 2, imageHeight);
    out[2] = clip(newX + newW / 2, imageWidth);
    out[3] = clip(newY + newH / 2, imageHeight);
}

// Non-maximum suppression in place over candidate indices select[0, length): repeatedly swaps
// the best remaining candidate (the first of equal scores) to the front and calls
// suppress(candidate, iou) for each other remaining one; candidates it suppresses are swapped
// to the back. Stops after maxDetections (all when negative). Returns the number kept, which
// occupy select[0, kept) in the order they were chosen.
template <typename RoiOf, typename Suppress>
size_t nmsSingleClass(const float* scores, uint32_t* select, size_t length, int32_t maxDetections,
                      RoiOf roiOf, Suppress suppress) {
    const size_t limit = maxDetections < 0 ? length : static_cast<size_t>(maxDetections);
    size_t start = 0, end = length;
    for (; start < end && start < limit; ++start) {
        uint32_t* best =
            std::max_element(select + start, select + end,
                             [scores](uint32_t a, uint32_t b) { return scores[a] < scores[b]; });
        std::swap(*best, select[start]);
        const float* kept = roiOf(select[start]);
        for (size_t i = start + 1; i < end;) {
            if (suppress(select[i], intersectionOverUnion(roiOf(select[i]), kept))) {
                std::swap(select[i], select[--end]);
            } else {
                ++i;
            }
        }
    }
    return start;
}

// Suppression per class over scores [numRois, numClasses] (class 0, the background, skipped):
// candidates score above scoreThreshold, at most maxPerClass kept per class, then the best
// maxDetections overall (negative limits mean no limit), ordered by descending score.
template <typename RoiOf, typename Suppress>
std::vector<uint32_t> nmsMultiClass(const float* scores, uint32_t numClasses, uint32_t numRois,
                                    float scoreThreshold, int32_t maxDetections,
                                    int32_t maxPerClass, RoiOf roiOf, Suppress suppress) {
    std::vector<uint32_t> select;
    for (uint32_t c = 1; c < numClasses; ++c) {
        const size_t base = select.size();
        for (uint32_t r = 0; r < numRois; ++r) {
            const uint32_t index = r * numClasses + c;
            if (scores[index] > scoreThreshold) select.push_back(index);
        }
        const size_t kept = nmsSingleClass(scores, select.data() + base, select.size() - base,
                                           maxPerClass, roiOf, suppress);
        select.resize(base + kept);
    }
    std::stable_sort(select.begin(), select.end(),
                     [scores](uint32_t a, uint32_t b) { return scores[a] > scores[b]; });
    if (maxDetections >= 0 && select.size() > static_cast<size_t>(maxDetections)) {
        select.resize(maxDetections);
    }
    return select;
}

// ---------------------------------------------------------------------------------------------
// AXIS_ALIGNED_BBOX_TRANSFORM
// ---------------------------------------------------------------------------------------------

Status bboxTransform(ExecutionContext& ctx) {
    constexpr uint32_t kRois = 0, kDeltas = 1, kBatches = 2, kImageInfo = 3;
    if (ctx.inputRank(kRois) != 2 || ctx.inputRank(kDeltas) != 2 || ctx.inputRank(kBatches) != 1 ||
        ctx.inputRank(kImageInfo) != 2) {
        return ctx.fail("rois, deltas and image info must be 2-D, batches 1-D");
    }
    const uint32_t numRois = ctx.inputDim(kRois, 0);
    const uint32_t numClasses = ctx.inputDim(kDeltas, 1) / kRoiDim;
    const uint32_t numBatches = ctx.inputDim(kImageInfo, 0);
    if (numClasses == 0 || numBatches == 0 || ctx.inputDim(kRois, 1) != kRoiDim ||
        ctx.inputDim(kDeltas, 0) != numRois || ctx.inputDim(kDeltas, 1) != numClasses * kRoiDim ||
        ctx.inputDim(kBatches, 0) != numRois || ctx.inputDim(kImageInfo, 1) != 2) {
        return ctx.fail("inconsistent shapes");
    }
    if (ctx.inputType(kRois) == OperandType::TENSOR_QUANT16_ASYMM &&
        !(isQuantBox(ctx, kRois) && isQuantBox(ctx, kImageInfo))) {
        return ctx.fail("quantized boxes and image info must have scale 0.125, zero point 0");
    }
    NN_RETURN_IF_ERROR(ctx.setOutputShape(0, {numRois, numClasses * kRoiDim}));
    if (numRois == 0) return okStatus();

    auto rois = inputAsFloat(ctx, kRois);
    if (!rois) return rois.status();
    auto deltas = inputAsFloat(ctx, kDeltas);
    if (!deltas) return deltas.status();
    auto imageInfo = inputAsFloat(ctx, kImageInfo);
    if (!imageInfo) return imageInfo.status();
    const int32_t* batches = ctx.inputData<int32_t>(kBatches);
    std::vector<float> out(ctx.outputCount(0));
    for (uint32_t r = 0; r < numRois; ++r) {
        const float* roi = rois->data() + r * kRoiDim;
        if (batches[r] < 0 || static_cast<uint32_t>(batches[r]) >= numBatches) {
            return ctx.fail("batch index ", batches[r], " out of range");
        }
        if (!(roi[0] <= roi[2] && roi[1] <= roi[3])) return ctx.fail("malformed roi ", r);
        const float* image = imageInfo->data() + batches[r] * 2;
        for (uint32_t c = 0; c < numClasses; ++c) {
            const size_t offset = (size_t{r} * numClasses + c) * kRoiDim;
            transformBox(roi, deltas->data() + offset, image[0], image[1], out.data() + offset);
        }
    }
    return outputFromFloat(ctx, 0, out.data());
}

// ---------------------------------------------------------------------------------------------
// BOX_WITH_NMS_LIMIT
// ---------------------------------------------------------------------------------------------

// Android's soft-NMS kernels: the factor a candidate's score is multiplied by given its IoU with
// a kept box. Hard (0) zeroes overlapping scores, linear (1) scales them by 1 - IoU, gaussian (2)
// by exp(-IoU^2 / sigma).
float nmsKernel(int32_t kernel, float iou, float iouThreshold, float sigma) {
    switch (kernel) {
        case 0:
            return iou < iouThreshold ? 1.0f : 0.0f;
        case 1:
            return iou < iouThreshold ? 1.0f : 1.0f - iou;
        default:
            return std::exp(-1.0f * iou * iou / sigma);
    }
}

Status boxWithNmsLimit(ExecutionContext& ctx) {
    constexpr uint32_t kScores = 0, kRois = 1, kBatches = 2;
    if (ctx.inputRank(kScores) != 2 || ctx.inputRank(kRois) != 2 || ctx.inputRank(kBatches) != 1) {
        return ctx.fail("scores and rois must be 2-D, batches 1-D");
    }
    const uint32_t numRois = ctx.inputDim(kScores, 0);
    const uint32_t numClasses = ctx.inputDim(kScores, 1);
    if (ctx.inputDim(kRois, 0) != numRois || ctx.inputDim(kRois, 1) != numClasses * kRoiDim ||
        ctx.inputDim(kBatches, 0) != numRois || numClasses <= 1) {
        return ctx.fail("inconsistent shapes");
    }
    if (isQuant8(ctx.inputType(kScores)) && !isQuantBox(ctx, kRois)) {
        return ctx.fail("quantized boxes must have scale 0.125 and zero point 0");
    }
    const float scoreThreshold = ctx.scalar<float>(3);
    const int32_t maxDetections = ctx.scalar<int32_t>(4);
    const int32_t kernel = ctx.scalar<int32_t>(5);
    const float iouThreshold = ctx.scalar<float>(6);
    const float sigma = ctx.scalar<float>(7);
    const float nmsScoreThreshold = ctx.scalar<float>(8);
    if (kernel < 0 || kernel > 2) return ctx.fail("unsupported NMS kernel ", kernel);

    auto scoresOr = inputAsFloat(ctx, kScores);
    if (!scoresOr) return scoresOr.status();
    auto roisOr = inputAsFloat(ctx, kRois);
    if (!roisOr) return roisOr.status();
    std::vector<float>& scores = *scoresOr;  // soft NMS lowers scores in place
    const std::vector<float>& rois = *roisOr;
    const int32_t* batches = ctx.inputData<int32_t>(kBatches);

    // Boxes of one batch are consecutive; each run of equal batch indices is one group.
    std::vector<uint32_t> groupSizes;
    for (uint32_t r = 0; r < numRois; ++r) {
        if (r == 0 || batches[r] != batches[r - 1]) {
            groupSizes.push_back(1);
        } else {
            ++groupSizes.back();
        }
    }
    struct Kept {
        uint32_t firstRoi;  // of its group
        uint32_t index;     // roi * numClasses + class within the group
    };
    std::vector<Kept> kept;
    uint32_t first = 0;
    for (uint32_t size : groupSizes) {
        float* groupScores = scores.data() + size_t{first} * numClasses;
        const float* groupRois = rois.data() + size_t{first} * numClasses * kRoiDim;
        // Android's malformed-box check reads the group's first `size` boxes with a stride of
        // one box rather than one row; kept as is to fail exactly when it does.
        for (uint32_t k = 0; k < size; ++k) {
            const float* roi = groupRois + k * kRoiDim;
            if (!(roi[0] <= roi[2] && roi[1] <= roi[3])) return ctx.fail("malformed roi");
        }
        const auto roiOf = [groupRois](uint32_t index) { return groupRois + index * kRoiDim; };
        const auto suppress = [&](uint32_t candidate, float iou) {
            groupScores[candidate] *= nmsKernel(kernel, iou, iouThreshold, sigma);
            return groupScores[candidate] < nmsScoreThreshold;
        };
        std::vector<uint32_t> select = nmsMultiClass(groupScores, numClasses, size, scoreThreshold,
                                                     maxDetections, maxDetections, roiOf, suppress);
        // Results of a group are ordered by class, then by descending score.
        std::stable_sort(select.begin(), select.end(), [&](uint32_t a, uint32_t b) {
            const uint32_t classA = a % numClasses, classB = b % numClasses;
            return classA == classB ? groupScores[a] > groupScores[b] : classA < classB;
        });
        for (uint32_t index : select) kept.push_back({first, index});
        first += size;
    }

    const auto numOut = static_cast<uint32_t>(kept.size());
    NN_RETURN_IF_ERROR(ctx.setOutputShape(0, {numOut}));
    NN_RETURN_IF_ERROR(ctx.setOutputShape(1, {numOut, kRoiDim}));
    NN_RETURN_IF_ERROR(ctx.setOutputShape(2, {numOut}));
    NN_RETURN_IF_ERROR(ctx.setOutputShape(3, {numOut}));
    if (numOut == 0) return okStatus();

    std::vector<float> outScores(numOut);
    const size_t roiBytes = kRoiDim * elementSize(ctx.inputType(kRois));
    int32_t* outClasses = ctx.outputData<int32_t>(2);
    int32_t* outBatches = ctx.outputData<int32_t>(3);
    for (uint32_t k = 0; k < numOut; ++k) {
        const size_t flat = size_t{kept[k].firstRoi} * numClasses + kept[k].index;
        outScores[k] = scores[flat];
        // Boxes are copied in their own type, never requantized.
        std::memcpy(ctx.outputBytes(1) + k * roiBytes, ctx.inputBytes(kRois) + flat * roiBytes,
                    roiBytes);
        outClasses[k] = static_cast<int32_t>(kept[k].index % numClasses);
        outBatches[k] = batches[kept[k].firstRoi];
    }
    return outputFromFloat(ctx, 0, outScores.data());
}

// ---------------------------------------------------------------------------------------------
// GENERATE_PROPOSALS
// ---------------------------------------------------------------------------------------------

Status generateProposals(ExecutionContext& ctx) {
    constexpr uint32_t kScores = 0, kDeltas = 1, kAnchors = 2, kImageInfo = 3;
    NN_RETURN_IF_ERROR(checkNoZeroSizedInput(ctx));
    const bool nchw = ctx.scalar<bool>(10);
    if (ctx.inputRank(kScores) != 4 || ctx.inputRank(kDeltas) != 4 ||
        ctx.inputRank(kAnchors) != 2 || ctx.inputRank(kImageInfo) != 2) {
        return ctx.fail("scores and deltas must be 4-D, anchors and image info 2-D");
    }
    const std::vector<uint32_t> scoreDims = toNhwcShape(ctx.inputShape(kScores), nchw);
    const std::vector<uint32_t> deltaDims = toNhwcShape(ctx.inputShape(kDeltas), nchw);
    const uint32_t numBatches = scoreDims[0], height = scoreDims[1], width = scoreDims[2];
    const uint32_t numAnchors = scoreDims[3];
    if (deltaDims != std::vector<uint32_t>{numBatches, height, width, numAnchors * kRoiDim} ||
        ctx.inputDim(kImageInfo, 0) != numBatches || ctx.inputDim(kImageInfo, 1) != 2 ||
        ctx.inputDim(kAnchors, 0) != numAnchors || ctx.inputDim(kAnchors, 1) != kRoiDim) {
        return ctx.fail("inconsistent shapes");
    }
    if (ctx.inputType(kScores) == OperandType::TENSOR_QUANT8_ASYMM &&
        (ctx.inputScale(kAnchors) != kQuantBoxScale || !isQuantBox(ctx, kImageInfo))) {
        return ctx.fail("quantized anchors and image info must have scale 0.125");
    }
    const float heightStride = ctx.scalar<float>(4);
    const float widthStride = ctx.scalar<float>(5);
    const int32_t preNmsTopN = ctx.scalar<int32_t>(6);
    const int32_t postNmsTopN = ctx.scalar<int32_t>(7);
    const float iouThreshold = ctx.scalar<float>(8);
    const float minSize = ctx.scalar<float>(9);

    auto scoresRaw = inputAsFloat(ctx, kScores);
    if (!scoresRaw) return scoresRaw.status();
    auto deltasRaw = inputAsFloat(ctx, kDeltas);
    if (!deltasRaw) return deltasRaw.status();
    auto anchors = inputAsFloat(ctx, kAnchors);
    if (!anchors) return anchors.status();
    auto imageInfo = inputAsFloat(ctx, kImageInfo);
    if (!imageInfo) return imageInfo.status();
    const NhwcInput<float> scores(scoresRaw->data(), ctx.inputShape(kScores), nchw);
    const NhwcInput<float> deltas(deltasRaw->data(), ctx.inputShape(kDeltas), nchw);

    // Anchors shifted to every feature-map position, [height, width, numAnchors, 4].
    const uint32_t perBatch = height * width * numAnchors;
    std::vector<float> shifted(size_t{perBatch} * kRoiDim);
    for (uint32_t h = 0; h < height; ++h) {
        const float hShift = static_cast<float>(h) * heightStride;
        for (uint32_t w = 0; w < width; ++w) {
            const float wShift = static_cast<float>(w) * widthStride;
            for (uint32_t a = 0; a < numAnchors; ++a) {
                const float* anchor = anchors->data() + a * kRoiDim;
                float* box = shifted.data() + ((size_t{h} * width + w) * numAnchors + a) * kRoiDim;
                box[0] = anchor[0] + wShift;
                box[1] = anchor[1] + hShift;
                box[2] = anchor[2] + wShift;
                box[3] = anchor[3] + hShift;
            }
        }
    }

    std::vector<float> outScores, outRois;
    std::vector<int32_t> outBatches;
    std::vector<float> boxes(shifted.size());
    for (uint32_t b = 0; b < numBatches; ++b) {
        const float* batchScores = scores.data() + size_t{b} * perBatch;
        const float* batchDeltas = deltas.data() + size_t{b} * perBatch * kRoiDim;
        const float imageH = (*imageInfo)[b * 2], imageW = (*imageInfo)[b * 2 + 1];
        for (uint32_t k = 0; k < perBatch; ++k) {
            const float* anchor = shifted.data() + k * kRoiDim;
            if (!(anchor[0] <= anchor[2] && anchor[1] <= anchor[3])) {
                return ctx.fail("malformed anchor");
            }
            transformBox(anchor, batchDeltas + k * kRoiDim, imageH, imageW,
                         boxes.data() + k * kRoiDim);
        }
        std::vector<uint32_t> select(perBatch);
        std::iota(select.begin(), select.end(), 0);
        if (preNmsTopN > 0 && static_cast<size_t>(preNmsTopN) < select.size()) {
            std::stable_sort(select.begin(), select.end(), [batchScores](uint32_t a, uint32_t c) {
                return batchScores[a] > batchScores[c];
            });
            select.resize(preNmsTopN);
        }
        // Drop boxes not larger than minSize or centred outside the image.
        select.erase(std::remove_if(select.begin(), select.end(),
                                    [&](uint32_t k) {
                                        const float* box = boxes.data() + k * kRoiDim;
                                        const float w = box[2] - box[0];
                                        const float h = box[3] - box[1];
                                        return !(w > minSize && h > minSize &&
                                                 box[0] + w / 2.0f < imageW &&
                                                 box[1] + h / 2.0f < imageH);
                                    }),
                     select.end());
        const size_t kept = nmsSingleClass(
            batchScores, select.data(), select.size(), postNmsTopN,
            [&boxes](uint32_t k) { return boxes.data() + k * kRoiDim; },
            [iouThreshold](uint32_t, float iou) { return iou >= iouThreshold; });
        for (size_t s = 0; s < kept; ++s) {
            const uint32_t k = select[s];
            outRois.insert(outRois.end(), boxes.begin() + k * kRoiDim,
                           boxes.begin() + (k + 1) * kRoiDim);
            outScores.push_back(batchScores[k]);
            outBatches.push_back(static_cast<int32_t>(b));
        }
    }

    const auto numOut = static_cast<uint32_t>(outScores.size());
    NN_RETURN_IF_ERROR(ctx.setOutputShape(0, {numOut}));
    NN_RETURN_IF_ERROR(ctx.setOutputShape(1, {numOut, kRoiDim}));
    NN_RETURN_IF_ERROR(ctx.setOutputShape(2, {numOut}));
    if (numOut == 0) return okStatus();
    NN_RETURN_IF_ERROR(outputFromFloat(ctx, 0, outScores.data()));
    NN_RETURN_IF_ERROR(outputFromFloat(ctx, 1, outRois.data()));
    std::copy(outBatches.begin(), outBatches.end(), ctx.outputData<int32_t>(2));
    return okStatus();
}

// ---------------------------------------------------------------------------------------------
// DETECTION_POSTPROCESSING
// ---------------------------------------------------------------------------------------------

struct PostprocessParams {
    float scaleY, scaleX, scaleH, scaleW;
    bool regularNms;
    int32_t maxDetections, maxClassesPerDetection, maxDetectionsPerClass;
    float scoreThreshold, iouThreshold;
    bool backgroundInLabel;
};

Status detectionPostprocessing(ExecutionContext& ctx) {
    constexpr uint32_t kScores = 0, kDeltas = 1, kAnchors = 2;
    NN_RETURN_IF_ERROR(checkNoZeroSizedInput(ctx));
    if (ctx.inputType(kScores) != OperandType::TENSOR_FLOAT32 &&
        ctx.inputType(kScores) != OperandType::TENSOR_FLOAT16) {
        return ctx.fail("unsupported type ", nameOf(ctx.inputType(kScores)));
    }
    if (ctx.inputRank(kScores) != 3 || ctx.inputRank(kDeltas) != 3 ||
        ctx.inputRank(kAnchors) != 2) {
        return ctx.fail("scores and deltas must be 3-D, anchors 2-D");
    }
    const PostprocessParams p{
        ctx.scalar<float>(3),   ctx.scalar<float>(4),    ctx.scalar<float>(5),
        ctx.scalar<float>(6),   ctx.scalar<bool>(7),     ctx.scalar<int32_t>(8),
        ctx.scalar<int32_t>(9), ctx.scalar<int32_t>(10), ctx.scalar<float>(11),
        ctx.scalar<float>(12),  ctx.scalar<bool>(13)};
    const uint32_t numBatches = ctx.inputDim(kScores, 0);
    const uint32_t numAnchors = ctx.inputDim(kScores, 1);
    const uint32_t numClasses = ctx.inputDim(kScores, 2);
    const uint32_t boxLength = ctx.inputDim(kDeltas, 2);
    if (ctx.inputDim(kDeltas, 0) != numBatches || ctx.inputDim(kDeltas, 1) != numAnchors ||
        ctx.inputDim(kAnchors, 0) != numAnchors || ctx.inputDim(kAnchors, 1) != kRoiDim ||
        numClasses <= 1 || boxLength < kRoiDim) {
        return ctx.fail("inconsistent shapes");
    }
    if (!(p.scaleY > 0 && p.scaleX > 0 && p.scaleH > 0 && p.scaleW > 0 && p.scoreThreshold >= 0 &&
          p.iouThreshold >= 0)) {
        return ctx.fail("scales must be positive, thresholds not negative");
    }
    if (p.maxDetections <= 0 || (p.regularNms && p.maxDetectionsPerClass <= 0) ||
        (!p.regularNms && p.maxClassesPerDetection <= 0)) {
        return ctx.fail("detection limits must be positive");
    }
    const uint32_t numOut =
        p.maxDetections * (p.regularNms ? 1 : static_cast<uint32_t>(p.maxClassesPerDetection));
    NN_RETURN_IF_ERROR(ctx.setOutputShape(0, {numBatches, numOut}));
    NN_RETURN_IF_ERROR(ctx.setOutputShape(1, {numBatches, numOut, kRoiDim}));
    NN_RETURN_IF_ERROR(ctx.setOutputShape(2, {numBatches, numOut}));
    NN_RETURN_IF_ERROR(ctx.setOutputShape(3, {numBatches}));

    const std::vector<float> allScores = ctx.inputAsFloat(kScores);
    const std::vector<float> allDeltas = ctx.inputAsFloat(kDeltas);
    const std::vector<float> anchors = ctx.inputAsFloat(kAnchors);
    std::vector<float> outScores(ctx.outputCount(0), 0.0f);
    std::vector<float> outRois(ctx.outputCount(1), 0.0f);
    int32_t* outClasses = ctx.outputData<int32_t>(2);
    int32_t* outCounts = ctx.outputData<int32_t>(3);
    const int32_t labelOffset = p.backgroundInLabel ? 0 : 1;
    std::vector<float> boxes(size_t{numAnchors} * kRoiDim);
    for (uint32_t b = 0; b < numBatches; ++b) {
        const float* scores = allScores.data() + size_t{b} * numAnchors * numClasses;
        const float* deltas = allDeltas.data() + size_t{b} * numAnchors * boxLength;
        // Decode: anchors are (yCentre, xCentre, h, w); boxes come out as (y1, x1, y2, x2).
        for (uint32_t a = 0; a < numAnchors; ++a) {
            const float* anchor = anchors.data() + a * kRoiDim;
            const float* delta = deltas + a * boxLength;
            const float yCentre = anchor[0] + anchor[2] * delta[0] / p.scaleY;
            const float xCentre = anchor[1] + anchor[3] * delta[1] / p.scaleX;
            const float halfH = anchor[2] * std::exp(delta[2] / p.scaleH) * 0.5f;
            const float halfW = anchor[3] * std::exp(delta[3] / p.scaleW) * 0.5f;
            float* box = boxes.data() + a * kRoiDim;
            box[0] = yCentre - halfH;
            box[1] = xCentre - halfW;
            box[2] = yCentre + halfH;
            box[3] = xCentre + halfW;
        }
        float* scoreOut = outScores.data() + size_t{b} * numOut;
        float* roiOut = outRois.data() + size_t{b} * numOut * kRoiDim;
        int32_t* classOut = outClasses + size_t{b} * numOut;
        const auto hard = [&p](uint32_t, float iou) { return iou >= p.iouThreshold; };
        if (p.regularNms) {
            const std::vector<uint32_t> select = nmsMultiClass(
                scores, numClasses, numAnchors, p.scoreThreshold, p.maxDetections,
                p.maxDetectionsPerClass,
                [&](uint32_t index) { return boxes.data() + (index / numClasses) * kRoiDim; },
                hard);
            for (size_t i = 0; i < select.size(); ++i) {
                scoreOut[i] = scores[select[i]];
                std::copy_n(boxes.data() + (select[i] / numClasses) * kRoiDim, kRoiDim,
                            roiOut + i * kRoiDim);
                classOut[i] = static_cast<int32_t>(select[i] % numClasses) - labelOffset;
            }
            outCounts[b] = static_cast<int32_t>(select.size());
        } else {
            // Fast NMS: one candidate per anchor scored by its best class, then its top classes.
            const uint32_t classesPerBox =
                std::min<uint32_t>(numClasses - 1, p.maxClassesPerDetection);
            std::vector<float> maxScores(numAnchors);
            std::vector<uint32_t> select;
            for (uint32_t a = 0; a < numAnchors; ++a) {
                maxScores[a] =
                    *std::max_element(scores + a * numClasses + 1, scores + (a + 1) * numClasses);
                if (maxScores[a] > p.scoreThreshold) select.push_back(a);
            }
            const size_t kept = nmsSingleClass(
                maxScores.data(), select.data(), select.size(), p.maxDetections,
                [&boxes](uint32_t a) { return boxes.data() + a * kRoiDim; }, hard);
            std::vector<uint32_t> classes(numClasses - 1);
            size_t o = 0;
            for (size_t s = 0; s < kept; ++s) {
                const float* score = scores + select[s] * numClasses;
                std::iota(classes.begin(), classes.end(), 1);
                std::stable_sort(classes.begin(), classes.end(),
                                 [score](uint32_t x, uint32_t y) { return score[x] > score[y]; });
                for (uint32_t c = 0; c < classesPerBox; ++c, ++o) {
                    scoreOut[o] = score[classes[c]];
                    std::copy_n(boxes.data() + select[s] * kRoiDim, kRoiDim, roiOut + o * kRoiDim);
                    classOut[o] = static_cast<int32_t>(classes[c]) - labelOffset;
                }
            }
            outCounts[b] = static_cast<int32_t>(kept * classesPerBox);
        }
    }
    ctx.setOutputFromFloat(0, outScores.data());
    ctx.setOutputFromFloat(1, outRois.data());
    return okStatus();
}

// ---------------------------------------------------------------------------------------------
// HEATMAP_MAX_KEYPOINT
// ---------------------------------------------------------------------------------------------

// Refines the position of a heatmap maximum with a second-order Taylor expansion over its 3x3
// neighbourhood (grid[1][1] is the maximum): delta solves A * delta = b for the Hessian A and
// the negative gradient b, clipped to 1.5 pixels; score is the expansion's value there. Leaves
// both untouched when A is (nearly) singular.
void refineKeypoint(const float grid[3][3], float atol, float rtol, float delta[2], float* score) {
    const float b0 = -(grid[1][2] - grid[1][0]) / 2.0f;
    const float b1 = -(grid[2][1] - grid[0][1]) / 2.0f;
    const float a00 = grid[1][0] - 2.0f * grid[1][1] + grid[1][2];
    const float a01 = (grid[2][2] - grid[2][0] - grid[0][2] + grid[0][0]) / 4.0f;
    const float a10 = a01;
    const float a11 = grid[0][1] - 2.0f * grid[1][1] + grid[2][1];
    const float cross1 = a00 * a11, cross2 = a01 * a10;
    const float det = cross1 - cross2;
    if (std::abs(det) < atol + rtol * cross1) return;
    delta[0] = (a11 * b0 - a01 * b1) / det;
    delta[1] = (a00 * b1 - a10 * b0) / det;
    if (std::abs(delta[0]) > 1.5f || std::abs(delta[1]) > 1.5f) {
        const float scale = 1.5f / std::max(std::abs(delta[0]), std::abs(delta[1]));
        delta[0] *= scale;
        delta[1] *= scale;
    }
    *score = grid[1][1] - b0 * delta[0] - b1 * delta[1] +
             ((a00 * delta[0] + a01 * delta[1]) * delta[0] +
              (a10 * delta[0] + a11 * delta[1]) * delta[1]) /
                 2.0f;
}

Status heatmapMaxKeypoint(ExecutionContext& ctx) {
    constexpr uint32_t kHeatmap = 0, kBoxes = 1;
    NN_RETURN_IF_ERROR(checkNoZeroSizedInput(ctx));
    const bool nchw = ctx.scalar<bool>(2);
    if (ctx.inputRank(kHeatmap) != 4 || ctx.inputRank(kBoxes) != 2) {
        return ctx.fail("heatmap must be 4-D and boxes 2-D");
    }
    const std::vector<uint32_t> dims = toNhwcShape(ctx.inputShape(kHeatmap), nchw);
    const uint32_t numBoxes = dims[0], size = dims[2], numKeypoints = dims[3];
    if (dims[1] != size || size < 2 || ctx.inputDim(kBoxes, 0) != numBoxes ||
        ctx.inputDim(kBoxes, 1) != kRoiDim) {
        return ctx.fail("heatmaps must be square (at least 2x2), boxes [numBoxes, 4]");
    }
    if (isQuant8(ctx.inputType(kHeatmap)) && !isQuantBox(ctx, kBoxes)) {
        return ctx.fail("quantized boxes must have scale 0.125 and zero point 0");
    }
    NN_RETURN_IF_ERROR(ctx.setOutputShape(0, {numBoxes, numKeypoints}));
    NN_RETURN_IF_ERROR(ctx.setOutputShape(1, {numBoxes, numKeypoints, 2}));

    auto heatmapRaw = inputAsFloat(ctx, kHeatmap);
    if (!heatmapRaw) return heatmapRaw.status();
    auto boxesOr = inputAsFloat(ctx, kBoxes);
    if (!boxesOr) return boxesOr.status();
    const NhwcInput<float> heatmap(heatmapRaw->data(), ctx.inputShape(kHeatmap), nchw);
    // Android's singularity tolerance is looser for float16.
    const float tolerance = ctx.inputType(kHeatmap) == OperandType::TENSOR_FLOAT16 ? 1e-3f : 1e-5f;
    std::vector<float> outScores(ctx.outputCount(0));
    std::vector<float> outKeypoints(ctx.outputCount(1));
    const size_t plane = size_t{size} * size;
    for (uint32_t n = 0; n < numBoxes; ++n) {
        const float* box = boxesOr->data() + n * kRoiDim;
        if (!(box[0] <= box[2] && box[1] <= box[3])) return ctx.fail("malformed box ", n);
        // [size * size, numKeypoints]: one column per keypoint.
        const Eigen::Map<const RowMajorMatrix<float>> maps(
            heatmap.data() + n * plane * numKeypoints, plane, numKeypoints);
        for (uint32_t k = 0; k < numKeypoints; ++k) {
            Eigen::Index best = 0;
            const float maxScore = maps.col(k).maxCoeff(&best);
            const auto bestW = static_cast<int32_t>(best % size);
            const auto bestH = static_cast<int32_t>(best / size);
            // Neighbours beyond the border are mirrored into the map.
            const auto mirror = [size](int32_t v) {
                return v < 0 ? 1 : (v >= static_cast<int32_t>(size) ? size - 2 : v);
            };
            float grid[3][3];
            for (int32_t dh = -1; dh <= 1; ++dh) {
                for (int32_t dw = -1; dw <= 1; ++dw) {
                    grid[dh + 1][dw + 1] = maps(mirror(bestH + dh) * size + mirror(bestW + dw), k);
                }
            }
            float delta[2] = {0.0f, 0.0f};
            float score = maxScore;
            refineKeypoint(grid, tolerance, tolerance, delta, &score);
            const float relW = (static_cast<float>(bestW) + delta[0] + 0.5f) / size;
            const float relH = (static_cast<float>(bestH) + delta[1] + 0.5f) / size;
            const size_t o = size_t{n} * numKeypoints + k;
            outScores[o] = score;
            outKeypoints[o * 2] = relW * (box[2] - box[0]) + box[0];
            outKeypoints[o * 2 + 1] = relH * (box[3] - box[1]) + box[1];
        }
    }
    NN_RETURN_IF_ERROR(outputFromFloat(ctx, 0, outScores.data()));
    return outputFromFloat(ctx, 1, outKeypoints.data());
}

}  // namespace

Status executeAxisAlignedBboxTransform(ExecutionContext& ctx) {
    return bboxTransform(ctx);
}

Status executeBoxWithNmsLimit(ExecutionContext& ctx) {
    return boxWithNmsLimit(ctx);
}

Status executeGenerateProposals(ExecutionContext& ctx) {
    return generateProposals(ctx);
}

Status executeDetectionPostprocessing(ExecutionContext& ctx) {
    return detectionPostprocessing(ctx);
}

Status executeHeatmapMaxKeypoint(ExecutionContext& ctx) {
    return heatmapMaxKeypoint(ctx);
}

}  // namespace nncosim::golden
