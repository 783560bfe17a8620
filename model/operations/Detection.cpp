// Validators of the object-detection operations of NNAPI 1.2: ROI_ALIGN, ROI_POOLING,
// AXIS_ALIGNED_BBOX_TRANSFORM, BOX_WITH_NMS_LIMIT, GENERATE_PROPOSALS,
// DETECTION_POSTPROCESSING and HEATMAP_MAX_KEYPOINT. Quantized models carry box coordinates
// as TENSOR_QUANT16_ASYMM with the fixed quantization checked by expectBoxQuantization().
#include <string>

#include "model/operations/OperationUtils.h"
#include "model/operations/Validators.h"

namespace nncosim {
namespace {

constexpr OperandType kInt32 = OperandType::INT32;
constexpr OperandType kBool = OperandType::BOOL;
constexpr OperandType kFloat32 = OperandType::FLOAT32;
constexpr OperandType kTensorInt32 = OperandType::TENSOR_INT32;
constexpr OperandType kQuant16Asymm = OperandType::TENSOR_QUANT16_ASYMM;

/// Float and quant8 data; signed quant8 since NNAPI 1.3.
Status expectDetectionData(OperationContext& ctx, uint32_t input) {
    return expectTypeSince(ctx, input,
                           {{OperandType::TENSOR_FLOAT32, FeatureLevel::kV1_2},
                            {OperandType::TENSOR_FLOAT16, FeatureLevel::kV1_2},
                            {OperandType::TENSOR_QUANT8_ASYMM, FeatureLevel::kV1_2},
                            {OperandType::TENSOR_QUANT8_ASYMM_SIGNED, FeatureLevel::kV1_3}});
}

/// Scalar parameters of float models follow the tensors' precision; quantized models use FLOAT32.
OperandType scalarFor(OperandType dataType) {
    return isQuant8Asymm(dataType) ? kFloat32 : floatScalarFor(dataType);
}

/// Box coordinates: the data type for float models, TENSOR_QUANT16_ASYMM for quantized ones.
OperandType boxesFor(OperandType dataType) {
    return isQuant8Asymm(dataType) ? kQuant16Asymm : dataType;
}

Status expectInputBoxQuantization(const OperationContext& ctx, uint32_t input) {
    const std::string what = "input " + std::to_string(input);
    return expectBoxQuantization(ctx, ctx.input(input), what.c_str());
}

Status expectOutputBoxQuantization(const OperationContext& ctx, uint32_t output) {
    const std::string what = "output " + std::to_string(output);
    return expectBoxQuantization(ctx, ctx.output(output), what.c_str());
}

/// Shared by ROI_ALIGN and ROI_POOLING: feature map, boxes [num_rois, 4], batch indexes,
/// output height and width, height and width ratios.
Status expectRoiCommon(OperationContext& ctx) {
    NN_RETURN_IF_ERROR(expectRequiredInputs(ctx, {}));
    NN_RETURN_IF_ERROR(expectInputRanks(ctx, {{0, 4}, {1, 2}, {2, 1}}));
    NN_RETURN_IF_ERROR(expectInputDim(ctx, 1, 1, 4, "regions of interest"));
    NN_RETURN_IF_ERROR(expectInputBoxQuantization(ctx, 1));
    NN_RETURN_IF_ERROR(expectPositiveInt32(ctx, 3, "output height"));
    NN_RETURN_IF_ERROR(expectPositiveInt32(ctx, 4, "output width"));
    NN_RETURN_IF_ERROR(expectPositiveFloat(ctx, 5, "height ratio"));
    return expectPositiveFloat(ctx, 6, "width ratio");
}

}  // namespace

Status validateRoiAlign(OperationContext& ctx) {
    NN_RETURN_IF_ERROR(ctx.expectInputCount({10}));
    NN_RETURN_IF_ERROR(ctx.expectOutputCount({1}));
    NN_RETURN_IF_ERROR(expectDetectionData(ctx, 0));
    const OperandType t = ctx.inputType(0);
    const OperandType f = scalarFor(t);
    NN_RETURN_IF_ERROR(ctx.expectInputTypes(
        {t, boxesFor(t), kTensorInt32, kInt32, kInt32, f, f, kInt32, kInt32, kBool}));
    NN_RETURN_IF_ERROR(ctx.expectOutputTypes({t}));
    NN_RETURN_IF_ERROR(expectRoiCommon(ctx));
    NN_RETURN_IF_ERROR(expectNonNegativeInt32(ctx, 7, "height sampling ratio"));
    return expectNonNegativeInt32(ctx, 8, "width sampling ratio");
}

Status validateRoiPooling(OperationContext& ctx) {
    NN_RETURN_IF_ERROR(ctx.expectInputCount({8}));
    NN_RETURN_IF_ERROR(ctx.expectOutputCount({1}));
    NN_RETURN_IF_ERROR(expectDetectionData(ctx, 0));
    const OperandType t = ctx.inputType(0);
    const OperandType f = scalarFor(t);
    NN_RETURN_IF_ERROR(
        ctx.expectInputTypes({t, boxesFor(t), kTensorInt32, kInt32, kInt32, f, f, kBool}));
    NN_RETURN_IF_ERROR(ctx.expectOutputTypes({t}));
    NN_RETURN_IF_ERROR(expectRoiCommon(ctx));
    return expectSameQuant8(ctx, 0, 0);
}

Status validateAxisAlignedBboxTransform(OperationContext& ctx) {
    NN_RETURN_IF_ERROR(ctx.expectInputCount({4}));
    NN_RETURN_IF_ERROR(ctx.expectOutputCount({1}));
    NN_RETURN_IF_ERROR(expectTypeSince(ctx, 0,
                                       {{OperandType::TENSOR_FLOAT32, FeatureLevel::kV1_2},
                                        {OperandType::TENSOR_FLOAT16, FeatureLevel::kV1_2},
                                        {kQuant16Asymm, FeatureLevel::kV1_2}}));
    const OperandType boxes = ctx.inputType(0);
    // Quantized boxes come with quant8 deltas; float boxes with deltas of their own type.
    if (boxes == kQuant16Asymm) {
        NN_RETURN_IF_ERROR(
            expectTypeSince(ctx, 1,
                            {{OperandType::TENSOR_QUANT8_ASYMM, FeatureLevel::kV1_2},
                             {OperandType::TENSOR_QUANT8_ASYMM_SIGNED, FeatureLevel::kV1_3}}));
    }
    const OperandType deltas = boxes == kQuant16Asymm ? ctx.inputType(1) : boxes;
    NN_RETURN_IF_ERROR(ctx.expectInputTypes({boxes, deltas, kTensorInt32, boxes}));
    NN_RETURN_IF_ERROR(ctx.expectOutputTypes({boxes}));
    NN_RETURN_IF_ERROR(expectRequiredInputs(ctx, {}));
    NN_RETURN_IF_ERROR(expectInputRanks(ctx, {{0, 2}, {1, 2}, {2, 1}, {3, 2}}));
    NN_RETURN_IF_ERROR(expectInputDim(ctx, 0, 1, 4, "boxes"));
    NN_RETURN_IF_ERROR(expectInputDim(ctx, 3, 1, 2, "image sizes"));
    NN_RETURN_IF_ERROR(expectInputBoxQuantization(ctx, 0));
    NN_RETURN_IF_ERROR(expectInputBoxQuantization(ctx, 3));
    return expectOutputBoxQuantization(ctx, 0);
}

Status validateBoxWithNmsLimit(OperationContext& ctx) {
    NN_RETURN_IF_ERROR(ctx.expectInputCount({9}));
    NN_RETURN_IF_ERROR(ctx.expectOutputCount({4}));
    NN_RETURN_IF_ERROR(expectDetectionData(ctx, 0));
    const OperandType t = ctx.inputType(0);
    const OperandType f = scalarFor(t);
    NN_RETURN_IF_ERROR(
        ctx.expectInputTypes({t, boxesFor(t), kTensorInt32, f, kInt32, kInt32, f, f, f}));
    NN_RETURN_IF_ERROR(ctx.expectOutputTypes({t, boxesFor(t), kTensorInt32, kTensorInt32}));
    NN_RETURN_IF_ERROR(expectRequiredInputs(ctx, {}));
    NN_RETURN_IF_ERROR(expectInputRanks(ctx, {{0, 2}, {1, 2}, {2, 1}}));
    NN_RETURN_IF_ERROR(expectInputBoxQuantization(ctx, 1));
    NN_RETURN_IF_ERROR(
        expectInt32InRange(ctx, 5, 0, 2, "NMS kernel, 0 hard, 1 linear, 2 gaussian"));
    NN_RETURN_IF_ERROR(expectSameQuant8(ctx, 0, 0));
    return expectOutputBoxQuantization(ctx, 1);
}

Status validateGenerateProposals(OperationContext& ctx) {
    NN_RETURN_IF_ERROR(ctx.expectInputCount({11}));
    NN_RETURN_IF_ERROR(ctx.expectOutputCount({3}));
    NN_RETURN_IF_ERROR(expectDetectionData(ctx, 0));
    const OperandType t = ctx.inputType(0);
    const OperandType f = scalarFor(t);
    // Quantized anchors are TENSOR_QUANT16_SYMM; quantized image sizes TENSOR_QUANT16_ASYMM.
    const bool quantized = isQuant8Asymm(t);
    const OperandType anchors = quantized ? OperandType::TENSOR_QUANT16_SYMM : t;
    NN_RETURN_IF_ERROR(
        ctx.expectInputTypes({t, t, anchors, boxesFor(t), f, f, kInt32, kInt32, f, f, kBool}));
    NN_RETURN_IF_ERROR(ctx.expectOutputTypes({t, boxesFor(t), kTensorInt32}));
    NN_RETURN_IF_ERROR(expectRequiredInputs(ctx, {}));
    NN_RETURN_IF_ERROR(expectInputRanks(ctx, {{0, 4}, {1, 4}, {2, 2}, {3, 2}}));
    NN_RETURN_IF_ERROR(expectInputDim(ctx, 2, 1, 4, "anchors"));
    NN_RETURN_IF_ERROR(expectInputDim(ctx, 3, 1, 2, "image sizes"));
    if (quantized && ctx.input(2).scale != 0.125f)
        return ctx.fail(
            "input 2 (anchors) of type TENSOR_QUANT16_SYMM must have scale 0.125, "
            "got ",
            ctx.input(2).scale);
    NN_RETURN_IF_ERROR(expectInputBoxQuantization(ctx, 3));
    NN_RETURN_IF_ERROR(expectPositiveFloat(ctx, 4, "height ratio"));
    NN_RETURN_IF_ERROR(expectPositiveFloat(ctx, 5, "width ratio"));
    NN_RETURN_IF_ERROR(expectSameQuant8(ctx, 0, 0));
    return expectOutputBoxQuantization(ctx, 1);
}

Status validateDetectionPostprocessing(OperationContext& ctx) {
    NN_RETURN_IF_ERROR(ctx.expectInputCount({14}));
    NN_RETURN_IF_ERROR(ctx.expectOutputCount({4}));
    NN_RETURN_IF_ERROR(expectTypeSince(ctx, 0,
                                       {{OperandType::TENSOR_FLOAT32, FeatureLevel::kV1_2},
                                        {OperandType::TENSOR_FLOAT16, FeatureLevel::kV1_2}}));
    const OperandType t = ctx.inputType(0);
    const OperandType f = floatScalarFor(t);
    NN_RETURN_IF_ERROR(
        ctx.expectInputTypes({t, t, t, f, f, f, f, kBool, kInt32, kInt32, kInt32, f, f, kBool}));
    NN_RETURN_IF_ERROR(ctx.expectOutputTypes({t, t, kTensorInt32, kTensorInt32}));
    NN_RETURN_IF_ERROR(expectRequiredInputs(ctx, {}));
    NN_RETURN_IF_ERROR(expectInputRanks(ctx, {{0, 3}, {1, 3}, {2, 2}}));
    NN_RETURN_IF_ERROR(expectInputDim(ctx, 2, 1, 4, "anchors"));
    // The box deltas are divided by these scale factors.
    NN_RETURN_IF_ERROR(expectPositiveFloat(ctx, 3, "y scale"));
    NN_RETURN_IF_ERROR(expectPositiveFloat(ctx, 4, "x scale"));
    NN_RETURN_IF_ERROR(expectPositiveFloat(ctx, 5, "height scale"));
    NN_RETURN_IF_ERROR(expectPositiveFloat(ctx, 6, "width scale"));
    NN_RETURN_IF_ERROR(expectPositiveInt32(ctx, 8, "maximum number of detections"));
    NN_RETURN_IF_ERROR(expectPositiveInt32(ctx, 9, "maximum classes per detection"));
    return expectPositiveInt32(ctx, 10, "maximum detections per class");
}

Status validateHeatmapMaxKeypoint(OperationContext& ctx) {
    NN_RETURN_IF_ERROR(ctx.expectInputCount({3}));
    NN_RETURN_IF_ERROR(ctx.expectOutputCount({2}));
    NN_RETURN_IF_ERROR(expectDetectionData(ctx, 0));
    const OperandType t = ctx.inputType(0);
    NN_RETURN_IF_ERROR(ctx.expectInputTypes({t, boxesFor(t), kBool}));
    NN_RETURN_IF_ERROR(ctx.expectOutputTypes({t, boxesFor(t)}));
    NN_RETURN_IF_ERROR(expectRequiredInputs(ctx, {}));
    NN_RETURN_IF_ERROR(expectInputRanks(ctx, {{0, 4}, {1, 2}}));
    NN_RETURN_IF_ERROR(expectInputDim(ctx, 1, 1, 4, "boxes"));
    // Heatmaps are square, at least 2 x 2: [n, h, w, k] (NHWC) or [n, k, h, w] (NCHW).
    const auto& dims = ctx.input(0).dimensions;
    if (auto nchw = constantBool(ctx, 2); nchw && dims.size() == 4) {
        const uint32_t h = dims[*nchw ? 2 : 1];
        const uint32_t w = dims[*nchw ? 3 : 2];
        if (h != 0 && w != 0 && (h != w || h < 2))
            return ctx.fail("input 0 (heatmaps) must be square and at least 2 x 2, got ", h, " x ",
                            w);
    }
    NN_RETURN_IF_ERROR(expectInputBoxQuantization(ctx, 1));
    return expectOutputBoxQuantization(ctx, 1);
}

}  // namespace nncosim
