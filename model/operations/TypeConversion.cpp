// Validators of the type conversions: CAST, QUANTIZE and DEQUANTIZE.
#include "model/operations/OperationUtils.h"
#include "model/operations/Validators.h"

namespace nncosim {
namespace {

constexpr OperandType kFloat32 = OperandType::TENSOR_FLOAT32;
constexpr OperandType kFloat16 = OperandType::TENSOR_FLOAT16;
constexpr OperandType kQuant8 = OperandType::TENSOR_QUANT8_ASYMM;
constexpr OperandType kQuant8Signed = OperandType::TENSOR_QUANT8_ASYMM_SIGNED;

bool isCastConvertible(OperandType t) {
    return t == kFloat16 || t == kFloat32 || t == OperandType::TENSOR_INT32 || t == kQuant8;
}

/// Types CAST copies to the same type only (NNAPI 1.3).
bool isCastIdentityOnly(OperandType t) {
    return t == OperandType::TENSOR_BOOL8 || t == OperandType::TENSOR_QUANT16_ASYMM ||
           t == OperandType::TENSOR_QUANT16_SYMM || t == kQuant8Signed ||
           t == OperandType::TENSOR_QUANT8_SYMM;
}

}  // namespace

Status validateCast(OperationContext& ctx) {
    NN_RETURN_IF_ERROR(ctx.expectInputCount({1}));
    NN_RETURN_IF_ERROR(ctx.expectOutputCount({1}));
    const OperandType in = ctx.inputType(0);
    const OperandType out = ctx.outputType(0);
    // Shapes are not compared here: a mismatch fails at execution (CTS cast_mismatching_shapes).
    if (isCastConvertible(in)) {
        if (!isCastConvertible(out))
            return ctx.fail("cannot cast ", nameOf(in), " to ", nameOf(out));
        ctx.requireFeatureLevel(FeatureLevel::kV1_2);
        return okStatus();
    }
    if (isCastIdentityOnly(in)) {
        if (out != in)
            return ctx.fail(nameOf(in), " can only be cast to itself, output is ", nameOf(out));
        ctx.requireFeatureLevel(FeatureLevel::kV1_3);
        return okStatus();
    }
    return ctx.fail("input 0 has unsupported type ", nameOf(in));
}

Status validateQuantize(OperationContext& ctx) {
    NN_RETURN_IF_ERROR(ctx.expectInputCount({1}));
    NN_RETURN_IF_ERROR(ctx.expectOutputCount({1}));
    NN_RETURN_IF_ERROR(expectTypeSince(
        ctx, 0, {{kFloat32, FeatureLevel::kV1_2}, {kFloat16, FeatureLevel::kV1_2}}));
    const OperandType out = ctx.outputType(0);
    if (out == kQuant8) {
        ctx.requireFeatureLevel(FeatureLevel::kV1_2);
    } else if (out == kQuant8Signed) {
        ctx.requireFeatureLevel(FeatureLevel::kV1_3);
    } else {
        return ctx.fail("output 0 has type ", nameOf(out), ", expected ", nameOf(kQuant8), " or ",
                        nameOf(kQuant8Signed));
    }
    return okStatus();
}

Status validateDequantize(OperationContext& ctx) {
    NN_RETURN_IF_ERROR(ctx.expectInputCount({1}));
    NN_RETURN_IF_ERROR(ctx.expectOutputCount({1}));
    NN_RETURN_IF_ERROR(
        expectTypeSince(ctx, 0,
                        {{kQuant8, FeatureLevel::kV1_0},
                         {OperandType::TENSOR_QUANT8_SYMM, FeatureLevel::kV1_2},
                         {OperandType::TENSOR_QUANT8_SYMM_PER_CHANNEL, FeatureLevel::kV1_2},
                         {kQuant8Signed, FeatureLevel::kV1_3}}));
    const OperandType out = ctx.outputType(0);
    if (out == kFloat16) {
        ctx.requireFeatureLevel(FeatureLevel::kV1_2);
    } else if (out != kFloat32) {
        return ctx.fail("output 0 has type ", nameOf(out), ", expected ", nameOf(kFloat32), " or ",
                        nameOf(kFloat16));
    }
    return ctx.expectInputRankAtMost(0, 4);
}

}  // namespace nncosim
