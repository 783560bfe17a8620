// Validators of the element-wise arithmetic operations: the broadcasting binary ops (ADD, SUB,
// MUL, DIV) and the unary math ops (ABS, EXP, FLOOR, LOG, NEG, RSQRT, SIN, SQRT).
#include "model/operations/OperationUtils.h"
#include "model/operations/Validators.h"

namespace nncosim {
namespace {

constexpr OperandType kFloat32 = OperandType::TENSOR_FLOAT32;
constexpr OperandType kFloat16 = OperandType::TENSOR_FLOAT16;
constexpr OperandType kQuant8 = OperandType::TENSOR_QUANT8_ASYMM;
constexpr OperandType kQuant8Signed = OperandType::TENSOR_QUANT8_ASYMM_SIGNED;
constexpr OperandType kTensorInt32 = OperandType::TENSOR_INT32;

/// Inputs: two tensors of one type with broadcast-compatible shapes, a FuseCode. One output.
Status validateBroadcast(OperationContext& ctx, std::initializer_list<TypeSince> allowed) {
    NN_RETURN_IF_ERROR(ctx.expectInputCount({3}));
    NN_RETURN_IF_ERROR(ctx.expectOutputCount({1}));
    NN_RETURN_IF_ERROR(expectTypeSince(ctx, 0, allowed));
    const OperandType type = ctx.inputType(0);
    NN_RETURN_IF_ERROR(ctx.expectInputTypes({type, type, OperandType::INT32}));
    NN_RETURN_IF_ERROR(ctx.expectOutputTypes({type}));
    NN_RETURN_IF_ERROR(ctx.expectInputRankAtMost(0, 4));
    NN_RETURN_IF_ERROR(ctx.expectInputRankAtMost(1, 4));
    NN_RETURN_IF_ERROR(expectBroadcastable(ctx, 0, 1));
    if (type == kTensorInt32) {
        return expectInt32InRange(ctx, 2, 0, 0, "fused activation code, NONE for TENSOR_INT32");
    }
    return expectFusedActivation(ctx, 2);
}

/// One tensor in, one tensor of the same type out.
Status validateUnary(OperationContext& ctx, std::initializer_list<TypeSince> allowed) {
    NN_RETURN_IF_ERROR(ctx.expectInputCount({1}));
    NN_RETURN_IF_ERROR(ctx.expectOutputCount({1}));
    NN_RETURN_IF_ERROR(expectTypeSince(ctx, 0, allowed));
    return ctx.expectOutputTypes({ctx.inputType(0)});
}

/// The float-only unary math ops of NNAPI 1.2.
Status validateFloatUnary(OperationContext& ctx) {
    return validateUnary(ctx, {{kFloat32, FeatureLevel::kV1_2}, {kFloat16, FeatureLevel::kV1_2}});
}

}  // namespace

Status validateAdd(OperationContext& ctx) {
    return validateBroadcast(ctx, {{kFloat32, FeatureLevel::kV1_0},
                                   {kQuant8, FeatureLevel::kV1_0},
                                   {kFloat16, FeatureLevel::kV1_2},
                                   {kQuant8Signed, FeatureLevel::kV1_3},
                                   {kTensorInt32, FeatureLevel::kV1_3}});
}

Status validateMul(OperationContext& ctx) {
    NN_RETURN_IF_ERROR(validateBroadcast(ctx, {{kFloat32, FeatureLevel::kV1_0},
                                               {kQuant8, FeatureLevel::kV1_0},
                                               {kFloat16, FeatureLevel::kV1_2},
                                               {kQuant8Signed, FeatureLevel::kV1_3},
                                               {kTensorInt32, FeatureLevel::kV1_3}}));
    if (isQuant8Asymm(ctx.inputType(0))) {
        // The quantized kernel needs a rescale factor below 1.
        const float product = ctx.input(0).scale * ctx.input(1).scale;
        if (!(ctx.output(0).scale > product))
            return ctx.fail("output 0 scale ", ctx.output(0).scale,
                            " must be greater than the product of the input scales ", product);
    }
    return okStatus();
}

Status validateSub(OperationContext& ctx) {
    return validateBroadcast(ctx, {{kFloat32, FeatureLevel::kV1_1},
                                   {kFloat16, FeatureLevel::kV1_2},
                                   {kQuant8, FeatureLevel::kV1_2},
                                   {kQuant8Signed, FeatureLevel::kV1_3},
                                   {kTensorInt32, FeatureLevel::kV1_3}});
}

Status validateDiv(OperationContext& ctx) {
    return validateBroadcast(ctx, {{kFloat32, FeatureLevel::kV1_1},
                                   {kFloat16, FeatureLevel::kV1_2},
                                   {kTensorInt32, FeatureLevel::kV1_3}});
}

Status validateAbs(OperationContext& ctx) {
    return validateUnary(ctx, {{kFloat32, FeatureLevel::kV1_2},
                               {kFloat16, FeatureLevel::kV1_2},
                               {kTensorInt32, FeatureLevel::kV1_3}});
}

Status validateExp(OperationContext& ctx) {
    return validateFloatUnary(ctx);
}
Status validateLog(OperationContext& ctx) {
    return validateFloatUnary(ctx);
}
Status validateSin(OperationContext& ctx) {
    return validateFloatUnary(ctx);
}
Status validateSqrt(OperationContext& ctx) {
    return validateFloatUnary(ctx);
}

Status validateNeg(OperationContext& ctx) {
    return validateUnary(ctx, {{kFloat32, FeatureLevel::kV1_2},
                               {kFloat16, FeatureLevel::kV1_2},
                               {kTensorInt32, FeatureLevel::kV1_2}});
}

Status validateRsqrt(OperationContext& ctx) {
    return validateUnary(ctx, {{kFloat32, FeatureLevel::kV1_2},
                               {kFloat16, FeatureLevel::kV1_2},
                               {kQuant8, FeatureLevel::kAidlV3},
                               {kQuant8Signed, FeatureLevel::kAidlV3}});
}

Status validateFloor(OperationContext& ctx) {
    NN_RETURN_IF_ERROR(
        validateUnary(ctx, {{kFloat32, FeatureLevel::kV1_0}, {kFloat16, FeatureLevel::kV1_2}}));
    return ctx.expectInputRankAtMost(0, 4);
}

}  // namespace nncosim
