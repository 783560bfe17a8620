// Validators of the 2-D pooling operations: AVERAGE_POOL_2D, MAX_POOL_2D and L2_POOL_2D.
#include "model/operations/OperationUtils.h"
#include "model/operations/Validators.h"
#include "model/operations/Window.h"

namespace nncosim {
namespace {

constexpr OperandType kFloat32 = OperandType::TENSOR_FLOAT32;
constexpr OperandType kFloat16 = OperandType::TENSOR_FLOAT16;
constexpr OperandType kQuant8 = OperandType::TENSOR_QUANT8_ASYMM;
constexpr OperandType kQuant8Signed = OperandType::TENSOR_QUANT8_ASYMM_SIGNED;

/// Inputs: a 4-D tensor, padding (implicit scheme or four explicit values), two strides, filter
/// width and height, a FuseCode, and an optional NCHW flag. One output of the input's type.
Status validatePooling(OperationContext& ctx, std::initializer_list<TypeSince> allowed) {
    NN_RETURN_IF_ERROR(ctx.expectInputCount({7, 8, 10, 11}));
    NN_RETURN_IF_ERROR(ctx.expectOutputCount({1}));
    NN_RETURN_IF_ERROR(expectTypeSince(ctx, 0, allowed));
    const OperandType type = ctx.inputType(0);
    const WindowSignature s =
        windowSignature(ctx.type(), ctx.numInputs(), [&](uint32_t i) { return ctx.inputType(i); });
    std::vector<OperandType> expected = {type};
    expected.insert(expected.end(), s.activation + 1 - s.padding, OperandType::INT32);
    if (s.layout) {
        expected.push_back(OperandType::BOOL);
        ctx.requireFeatureLevel(FeatureLevel::kV1_2);
    }
    NN_RETURN_IF_ERROR(ctx.expectInputTypes(expected));
    NN_RETURN_IF_ERROR(ctx.expectOutputTypes({type}));
    NN_RETURN_IF_ERROR(expectTensorRank(ctx, 0, 4, "input"));

    NN_RETURN_IF_ERROR(expectPadding(ctx, s.padding, s.explicitPadding));
    NN_RETURN_IF_ERROR(expectStrides(ctx, s.strides));
    NN_RETURN_IF_ERROR(expectPositiveInt32(ctx, *s.filterSize, "filter width"));
    NN_RETURN_IF_ERROR(expectPositiveInt32(ctx, *s.filterSize + 1, "filter height"));
    NN_RETURN_IF_ERROR(expectFusedActivation(ctx, s.activation));
    return expectSameQuant8(ctx, 0, 0);
}

}  // namespace

Status validateAveragePool2D(OperationContext& ctx) {
    return validatePooling(ctx, {{kFloat32, FeatureLevel::kV1_0},
                                 {kQuant8, FeatureLevel::kV1_0},
                                 {kFloat16, FeatureLevel::kV1_2},
                                 {kQuant8Signed, FeatureLevel::kV1_3}});
}

Status validateMaxPool2D(OperationContext& ctx) {
    return validatePooling(ctx, {{kFloat32, FeatureLevel::kV1_0},
                                 {kQuant8, FeatureLevel::kV1_0},
                                 {kFloat16, FeatureLevel::kV1_2},
                                 {kQuant8Signed, FeatureLevel::kV1_3}});
}

Status validateL2Pool2D(OperationContext& ctx) {
    return validatePooling(ctx, {{kFloat32, FeatureLevel::kV1_0}, {kFloat16, FeatureLevel::kV1_2}});
}

}  // namespace nncosim
