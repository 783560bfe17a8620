// Validators of the boolean operations: LOGICAL_AND, LOGICAL_OR, LOGICAL_NOT and SELECT.
#include "model/operations/OperationUtils.h"
#include "model/operations/Validators.h"

namespace nncosim {
namespace {

constexpr OperandType kBool8 = OperandType::TENSOR_BOOL8;

Status validateLogicalBinary(OperationContext& ctx) {
    NN_RETURN_IF_ERROR(ctx.expectInputCount({2}));
    NN_RETURN_IF_ERROR(ctx.expectOutputCount({1}));
    NN_RETURN_IF_ERROR(ctx.expectInputTypes({kBool8, kBool8}));
    NN_RETURN_IF_ERROR(ctx.expectOutputTypes({kBool8}));
    NN_RETURN_IF_ERROR(expectRequiredInputs(ctx, {}));
    ctx.requireFeatureLevel(FeatureLevel::kV1_2);
    return expectBroadcastable(ctx, 0, 1);
}

}  // namespace

Status validateLogicalAnd(OperationContext& ctx) {
    return validateLogicalBinary(ctx);
}
Status validateLogicalOr(OperationContext& ctx) {
    return validateLogicalBinary(ctx);
}

Status validateLogicalNot(OperationContext& ctx) {
    NN_RETURN_IF_ERROR(ctx.expectInputCount({1}));
    NN_RETURN_IF_ERROR(ctx.expectOutputCount({1}));
    NN_RETURN_IF_ERROR(ctx.expectInputTypes({kBool8}));
    NN_RETURN_IF_ERROR(ctx.expectOutputTypes({kBool8}));
    NN_RETURN_IF_ERROR(expectRequiredInputs(ctx, {}));
    ctx.requireFeatureLevel(FeatureLevel::kV1_2);
    return okStatus();
}

Status validateSelect(OperationContext& ctx) {
    NN_RETURN_IF_ERROR(ctx.expectInputCount({3}));
    NN_RETURN_IF_ERROR(ctx.expectOutputCount({1}));
    NN_RETURN_IF_ERROR(
        expectTypeSince(ctx, 1,
                        {{OperandType::TENSOR_FLOAT16, FeatureLevel::kV1_2},
                         {OperandType::TENSOR_FLOAT32, FeatureLevel::kV1_2},
                         {OperandType::TENSOR_INT32, FeatureLevel::kV1_2},
                         {OperandType::TENSOR_QUANT8_ASYMM, FeatureLevel::kV1_2},
                         {OperandType::TENSOR_QUANT8_ASYMM_SIGNED, FeatureLevel::kV1_3}}));
    const OperandType type = ctx.inputType(1);
    NN_RETURN_IF_ERROR(ctx.expectInputTypes({kBool8, type, type}));
    NN_RETURN_IF_ERROR(ctx.expectOutputTypes({type}));
    NN_RETURN_IF_ERROR(expectRequiredInputs(ctx, {}));
    // The mask and both value tensors have one shape (no broadcasting).
    for (uint32_t i : {1u, 2u}) {
        if (!dimensionsCompatible(ctx.input(0).dimensions, ctx.input(i).dimensions))
            return ctx.fail("input ", i, " shape ", toString(ctx.input(i).dimensions),
                            " differs from the mask's ", toString(ctx.input(0).dimensions));
    }
    return okStatus();
}

}  // namespace nncosim
