// Validators of the reductions: MEAN and REDUCE_ALL, REDUCE_ANY, REDUCE_MAX, REDUCE_MIN,
// REDUCE_PROD, REDUCE_SUM.
#include "model/operations/OperationUtils.h"
#include "model/operations/Validators.h"

namespace nncosim {
namespace {

constexpr OperandType kFloat32 = OperandType::TENSOR_FLOAT32;
constexpr OperandType kFloat16 = OperandType::TENSOR_FLOAT16;
constexpr OperandType kQuant8 = OperandType::TENSOR_QUANT8_ASYMM;
constexpr OperandType kQuant8Signed = OperandType::TENSOR_QUANT8_ASYMM_SIGNED;

/// Inputs: a tensor of rank <= 4, a 1-D TENSOR_INT32 of axes in [-rank, rank), and keep_dims
/// (`keepDimsType`). One output of the input's type.
Status validateReduction(OperationContext& ctx, std::initializer_list<TypeSince> allowed,
                         OperandType keepDimsType) {
    NN_RETURN_IF_ERROR(ctx.expectInputCount({3}));
    NN_RETURN_IF_ERROR(ctx.expectOutputCount({1}));
    NN_RETURN_IF_ERROR(expectTypeSince(ctx, 0, allowed));
    const OperandType type = ctx.inputType(0);
    NN_RETURN_IF_ERROR(ctx.expectInputTypes({type, OperandType::TENSOR_INT32, keepDimsType}));
    NN_RETURN_IF_ERROR(ctx.expectOutputTypes({type}));
    NN_RETURN_IF_ERROR(ctx.expectInputRankAtMost(0, 4));
    NN_RETURN_IF_ERROR(expectTensorRank(ctx, 1, 1, "axes"));
    NN_RETURN_IF_ERROR(expectAxesTensor(ctx, 1, 0));
    return expectSameQuant8(ctx, 0, 0);
}

Status validateReduceFloat(OperationContext& ctx) {
    return validateReduction(
        ctx, {{kFloat32, FeatureLevel::kV1_2}, {kFloat16, FeatureLevel::kV1_2}}, OperandType::BOOL);
}

Status validateReduceMinMax(OperationContext& ctx) {
    return validateReduction(ctx,
                             {{kFloat32, FeatureLevel::kV1_2},
                              {kFloat16, FeatureLevel::kV1_2},
                              {kQuant8, FeatureLevel::kV1_2},
                              {kQuant8Signed, FeatureLevel::kV1_3}},
                             OperandType::BOOL);
}

Status validateReduceLogical(OperationContext& ctx) {
    return validateReduction(ctx, {{OperandType::TENSOR_BOOL8, FeatureLevel::kV1_2}},
                             OperandType::BOOL);
}

}  // namespace

Status validateMean(OperationContext& ctx) {
    return validateReduction(ctx,
                             {{kFloat32, FeatureLevel::kV1_1},
                              {kQuant8, FeatureLevel::kV1_1},
                              {kFloat16, FeatureLevel::kV1_2},
                              {kQuant8Signed, FeatureLevel::kV1_3}},
                             OperandType::INT32);
}

Status validateReduceAll(OperationContext& ctx) {
    return validateReduceLogical(ctx);
}
Status validateReduceAny(OperationContext& ctx) {
    return validateReduceLogical(ctx);
}
Status validateReduceMax(OperationContext& ctx) {
    return validateReduceMinMax(ctx);
}
Status validateReduceMin(OperationContext& ctx) {
    return validateReduceMinMax(ctx);
}
Status validateReduceProd(OperationContext& ctx) {
    return validateReduceFloat(ctx);
}
Status validateReduceSum(OperationContext& ctx) {
    return validateReduceFloat(ctx);
}

}  // namespace nncosim
