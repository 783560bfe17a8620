// Validators of the padding operations: PAD, PAD_V2 and MIRROR_PAD.
#include "model/operations/OperationUtils.h"
#include "model/operations/Validators.h"

namespace nncosim {
namespace {

constexpr OperandType kFloat32 = OperandType::TENSOR_FLOAT32;
constexpr OperandType kFloat16 = OperandType::TENSOR_FLOAT16;
constexpr OperandType kQuant8 = OperandType::TENSOR_QUANT8_ASYMM;
constexpr OperandType kQuant8Signed = OperandType::TENSOR_QUANT8_ASYMM_SIGNED;
constexpr OperandType kTensorInt32 = OperandType::TENSOR_INT32;

/// Input 1 is the [rank(input0), 2] TENSOR_INT32 of non-negative paddings.
Status expectPaddings(const OperationContext& ctx) {
    NN_RETURN_IF_ERROR(expectTensorRank(ctx, 1, 2, "paddings"));
    const auto& dims = ctx.input(1).dimensions;
    auto rank = ctx.inputRank(0);
    if (dims.size() == 2) {
        if (dims[1] != 0 && dims[1] != 2)
            return ctx.fail("input 1 (paddings) must have shape [rank, 2], got ", toString(dims));
        if (rank && dims[0] != 0 && dims[0] != *rank)
            return ctx.fail("input 1 (paddings) must have ", *rank, " rows, one per dimension of ",
                            "input 0, got ", dims[0]);
    }
    if (auto paddings = constantInt32Tensor(ctx, 1)) {
        for (int32_t p : *paddings) {
            if (p < 0) return ctx.fail("input 1 (paddings) values must be >= 0, got ", p);
        }
    }
    return okStatus();
}

/// The rank limit, paddings, output type and quantization common to PAD and PAD_V2.
Status validatePadCommon(OperationContext& ctx, OperandType type) {
    NN_RETURN_IF_ERROR(ctx.expectOutputTypes({type}));
    NN_RETURN_IF_ERROR(ctx.expectInputRankAtMost(0, 4));
    NN_RETURN_IF_ERROR(expectPaddings(ctx));
    return expectSameQuant8(ctx, 0, 0);
}

}  // namespace

Status validatePad(OperationContext& ctx) {
    NN_RETURN_IF_ERROR(ctx.expectInputCount({2}));
    NN_RETURN_IF_ERROR(ctx.expectOutputCount({1}));
    NN_RETURN_IF_ERROR(expectFloatOrQuant8(ctx, 0, FeatureLevel::kV1_1));
    const OperandType type = ctx.inputType(0);
    // Padding quant8 with its logical zero (a non-zero zero point) is defined since NNAPI 1.2.
    if (type == kQuant8 && ctx.input(0).zeroPoint != 0)
        ctx.requireFeatureLevel(FeatureLevel::kV1_2);
    NN_RETURN_IF_ERROR(ctx.expectInputTypes({type, kTensorInt32}));
    return validatePadCommon(ctx, type);
}

Status validatePadV2(OperationContext& ctx) {
    NN_RETURN_IF_ERROR(ctx.expectInputCount({3}));
    NN_RETURN_IF_ERROR(ctx.expectOutputCount({1}));
    NN_RETURN_IF_ERROR(expectFloatOrQuant8(ctx, 0, FeatureLevel::kV1_2));
    const OperandType type = ctx.inputType(0);
    // The pad value is a quantized INT32 for quant8 tensors, a float of the tensor's width else.
    const OperandType valueType = isQuant8Asymm(type) ? OperandType::INT32 : floatScalarFor(type);
    NN_RETURN_IF_ERROR(ctx.expectInputTypes({type, kTensorInt32, valueType}));
    return validatePadCommon(ctx, type);
}

Status validateMirrorPad(OperationContext& ctx) {
    NN_RETURN_IF_ERROR(ctx.expectInputCount({3}));
    NN_RETURN_IF_ERROR(ctx.expectOutputCount({1}));
    NN_RETURN_IF_ERROR(expectTypeSince(ctx, 0,
                                       {{kFloat32, FeatureLevel::kAidlV3},
                                        {kFloat16, FeatureLevel::kAidlV3},
                                        {kQuant8, FeatureLevel::kAidlV3},
                                        {kQuant8Signed, FeatureLevel::kAidlV3},
                                        {kTensorInt32, FeatureLevel::kAidlV3}}));
    const OperandType type = ctx.inputType(0);
    NN_RETURN_IF_ERROR(ctx.expectInputTypes({type, kTensorInt32, OperandType::INT32}));
    NN_RETURN_IF_ERROR(ctx.expectOutputTypes({type}));
    NN_RETURN_IF_ERROR(expectPaddings(ctx));
    NN_RETURN_IF_ERROR(expectInt32InRange(ctx, 2, 0, 1, "mode, 0 = REFLECT or 1 = SYMMETRIC"));
    NN_RETURN_IF_ERROR(expectSameQuant8(ctx, 0, 0));
    auto rank = ctx.inputRank(0);
    const auto& out = ctx.output(0).dimensions;
    if (rank && !out.empty() && out.size() != *rank)
        return ctx.fail("output 0 has rank ", out.size(), ", input 0 has rank ", *rank);
    return okStatus();
}

}  // namespace nncosim
