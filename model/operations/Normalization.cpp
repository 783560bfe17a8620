// Validators of the normalizations: L2_NORMALIZATION, LOCAL_RESPONSE_NORMALIZATION and
// INSTANCE_NORMALIZATION.
#include "model/operations/OperationUtils.h"
#include "model/operations/Validators.h"

namespace nncosim {
namespace {

constexpr OperandType kFloat32 = OperandType::TENSOR_FLOAT32;
constexpr OperandType kFloat16 = OperandType::TENSOR_FLOAT16;
constexpr OperandType kQuant8 = OperandType::TENSOR_QUANT8_ASYMM;
constexpr OperandType kQuant8Signed = OperandType::TENSOR_QUANT8_ASYMM_SIGNED;

/// L2 and LRN normalize along the last axis of a 4-D tensor in NNAPI 1.0; an explicit axis
/// input or another rank (including an unknown one) needs NNAPI 1.2.
void requireLevelForAxis(OperationContext& ctx, uint32_t numInputsWithAxis) {
    const auto rank = ctx.inputRank(0);
    if (ctx.numInputs() == numInputsWithAxis || !rank || *rank != 4)
        ctx.requireFeatureLevel(FeatureLevel::kV1_2);
}

}  // namespace

Status validateL2Normalization(OperationContext& ctx) {
    NN_RETURN_IF_ERROR(ctx.expectInputCount({1, 2}));
    NN_RETURN_IF_ERROR(ctx.expectOutputCount({1}));
    NN_RETURN_IF_ERROR(expectTypeSince(ctx, 0,
                                       {{kFloat32, FeatureLevel::kV1_0},
                                        {kFloat16, FeatureLevel::kV1_2},
                                        {kQuant8, FeatureLevel::kV1_2},
                                        {kQuant8Signed, FeatureLevel::kV1_3}}));
    const OperandType type = ctx.inputType(0);
    std::vector<OperandType> expected = {type};
    if (ctx.numInputs() == 2) expected.push_back(OperandType::INT32);
    requireLevelForAxis(ctx, 2);
    NN_RETURN_IF_ERROR(ctx.expectInputTypes(expected));
    NN_RETURN_IF_ERROR(ctx.expectOutputTypes({type}));
    NN_RETURN_IF_ERROR(ctx.expectInputRankAtMost(0, 4));
    if (ctx.numInputs() == 2) NN_RETURN_IF_ERROR(expectAxis(ctx, 1, 0));
    if (type == kQuant8) return expectOutputQuantization(ctx, 0, 1.0f / 128, 128);
    if (type == kQuant8Signed) return expectOutputQuantization(ctx, 0, 1.0f / 128, 0);
    return okStatus();
}

Status validateLocalResponseNormalization(OperationContext& ctx) {
    NN_RETURN_IF_ERROR(ctx.expectInputCount({5, 6}));
    NN_RETURN_IF_ERROR(ctx.expectOutputCount({1}));
    NN_RETURN_IF_ERROR(expectTypeSince(
        ctx, 0, {{kFloat32, FeatureLevel::kV1_0}, {kFloat16, FeatureLevel::kV1_2}}));
    const OperandType type = ctx.inputType(0);
    const OperandType scalar = floatScalarFor(type);
    std::vector<OperandType> expected = {type, OperandType::INT32, scalar, scalar, scalar};
    if (ctx.numInputs() == 6) expected.push_back(OperandType::INT32);
    requireLevelForAxis(ctx, 6);
    NN_RETURN_IF_ERROR(ctx.expectInputTypes(expected));
    NN_RETURN_IF_ERROR(ctx.expectOutputTypes({type}));
    NN_RETURN_IF_ERROR(ctx.expectInputRankAtMost(0, 4));
    if (auto bias = constantFloat(ctx, 2); bias && *bias == 0.0f)
        return ctx.fail("input 2 (bias) must not be zero");
    if (ctx.numInputs() == 6) NN_RETURN_IF_ERROR(expectAxis(ctx, 5, 0));
    return okStatus();
}

Status validateInstanceNormalization(OperationContext& ctx) {
    NN_RETURN_IF_ERROR(ctx.expectInputCount({5}));
    NN_RETURN_IF_ERROR(ctx.expectOutputCount({1}));
    NN_RETURN_IF_ERROR(expectTypeSince(
        ctx, 0, {{kFloat32, FeatureLevel::kV1_2}, {kFloat16, FeatureLevel::kV1_2}}));
    const OperandType type = ctx.inputType(0);
    const OperandType scalar = floatScalarFor(type);
    NN_RETURN_IF_ERROR(ctx.expectInputTypes({type, scalar, scalar, scalar, OperandType::BOOL}));
    NN_RETURN_IF_ERROR(ctx.expectOutputTypes({type}));
    return expectTensorRank(ctx, 0, 4, "input");
}

}  // namespace nncosim
