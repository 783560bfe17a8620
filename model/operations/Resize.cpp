// Validators of the image resizes: RESIZE_BILINEAR and RESIZE_NEAREST_NEIGHBOR.
#include "model/operations/OperationUtils.h"
#include "model/operations/Validators.h"

namespace nncosim {
namespace {

constexpr OperandType kFloat32 = OperandType::TENSOR_FLOAT32;
constexpr OperandType kFloat16 = OperandType::TENSOR_FLOAT16;
constexpr OperandType kQuant8 = OperandType::TENSOR_QUANT8_ASYMM;
constexpr OperandType kQuant8Signed = OperandType::TENSOR_QUANT8_ASYMM_SIGNED;

/// Inputs: a 4-D tensor; output width and height (INT32) or scales (a float of the tensor's
/// width, FLOAT32 for quant8); then optional NCHW, align_corners and half_pixel_centers flags.
Status validateResize(OperationContext& ctx, FeatureLevel opLevel) {
    NN_RETURN_IF_ERROR(ctx.expectOutputCount({1}));
    ctx.requireFeatureLevel(opLevel);
    NN_RETURN_IF_ERROR(expectTypeSince(ctx, 0,
                                       {{kFloat32, FeatureLevel::kV1_0},
                                        {kFloat16, FeatureLevel::kV1_2},
                                        {kQuant8, FeatureLevel::kV1_2},
                                        {kQuant8Signed, FeatureLevel::kV1_3}}));
    const OperandType type = ctx.inputType(0);
    const OperandType sizeType = ctx.inputType(1);
    const bool byScale = sizeType != OperandType::INT32;
    if (byScale) {
        ctx.requireFeatureLevel(FeatureLevel::kV1_2);
        if (sizeType != floatScalarFor(type))
            return ctx.fail("input 1 has type ", nameOf(sizeType), ", expected ",
                            nameOf(OperandType::INT32), " or ", nameOf(floatScalarFor(type)));
    }
    std::vector<OperandType> expected = {type, sizeType, sizeType};
    expected.insert(expected.end(), ctx.numInputs() - 3, OperandType::BOOL);
    if (ctx.numInputs() >= 4) ctx.requireFeatureLevel(FeatureLevel::kV1_2);
    if (ctx.numInputs() >= 5) ctx.requireFeatureLevel(FeatureLevel::kV1_3);
    NN_RETURN_IF_ERROR(ctx.expectInputTypes(expected));
    NN_RETURN_IF_ERROR(ctx.expectOutputTypes({type}));
    NN_RETURN_IF_ERROR(expectTensorRank(ctx, 0, 4, "input"));
    if (byScale) {
        NN_RETURN_IF_ERROR(expectPositiveFloat(ctx, 1, "width scale"));
        NN_RETURN_IF_ERROR(expectPositiveFloat(ctx, 2, "height scale"));
    } else {
        NN_RETURN_IF_ERROR(expectPositiveInt32(ctx, 1, "output width"));
        NN_RETURN_IF_ERROR(expectPositiveInt32(ctx, 2, "output height"));
    }
    if (ctx.numInputs() == 6 && constantBool(ctx, 4).value_or(false) &&
        constantBool(ctx, 5).value_or(false))
        return ctx.fail(
            "align_corners (input 4) and half_pixel_centers (input 5) cannot both be "
            "true");
    return expectSameQuant8(ctx, 0, 0);
}

}  // namespace

Status validateResizeBilinear(OperationContext& ctx) {
    NN_RETURN_IF_ERROR(ctx.expectInputCount({3, 4, 5, 6}));
    return validateResize(ctx, FeatureLevel::kV1_0);
}

Status validateResizeNearestNeighbor(OperationContext& ctx) {
    NN_RETURN_IF_ERROR(ctx.expectInputCount({4, 5, 6}));
    return validateResize(ctx, FeatureLevel::kV1_2);
}

}  // namespace nncosim
