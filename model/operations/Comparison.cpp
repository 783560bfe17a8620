// Validators of the broadcasting binary operations of NNAPI 1.2 that are not arithmetic with a
// fused activation: the comparisons (EQUAL ... LESS_EQUAL), MAXIMUM, MINIMUM and POW.
#include <optional>

#include "model/operations/OperationUtils.h"
#include "model/operations/Validators.h"

namespace nncosim {
namespace {

constexpr FeatureLevel kV1_2 = FeatureLevel::kV1_2;
constexpr FeatureLevel kV1_3 = FeatureLevel::kV1_3;

/// Two inputs of one type with broadcast-compatible shapes; one output of `outputType`, or of
/// the inputs' type when `outputType` is not given.
Status validateBinary(OperationContext& ctx, std::initializer_list<TypeSince> allowed,
                      std::optional<OperandType> outputType) {
    NN_RETURN_IF_ERROR(ctx.expectInputCount({2}));
    NN_RETURN_IF_ERROR(ctx.expectOutputCount({1}));
    NN_RETURN_IF_ERROR(expectTypeSince(ctx, 0, allowed));
    const OperandType type = ctx.inputType(0);
    NN_RETURN_IF_ERROR(ctx.expectInputTypes({type, type}));
    NN_RETURN_IF_ERROR(ctx.expectOutputTypes({outputType.value_or(type)}));
    NN_RETURN_IF_ERROR(expectRequiredInputs(ctx, {}));
    return expectBroadcastable(ctx, 0, 1);
}

Status validateComparison(OperationContext& ctx) {
    return validateBinary(ctx,
                          {{OperandType::TENSOR_BOOL8, kV1_2},
                           {OperandType::TENSOR_FLOAT16, kV1_2},
                           {OperandType::TENSOR_FLOAT32, kV1_2},
                           {OperandType::TENSOR_INT32, kV1_2},
                           {OperandType::TENSOR_QUANT8_ASYMM, kV1_2},
                           {OperandType::TENSOR_QUANT8_ASYMM_SIGNED, kV1_3}},
                          OperandType::TENSOR_BOOL8);
}

/// MAXIMUM and MINIMUM; the output may be quantized differently from the inputs.
Status validateMinMax(OperationContext& ctx) {
    return validateBinary(ctx,
                          {{OperandType::TENSOR_FLOAT16, kV1_2},
                           {OperandType::TENSOR_FLOAT32, kV1_2},
                           {OperandType::TENSOR_INT32, kV1_2},
                           {OperandType::TENSOR_QUANT8_ASYMM, kV1_2},
                           {OperandType::TENSOR_QUANT8_ASYMM_SIGNED, kV1_3}},
                          std::nullopt);
}

}  // namespace

Status validateEqual(OperationContext& ctx) {
    return validateComparison(ctx);
}
Status validateNotEqual(OperationContext& ctx) {
    return validateComparison(ctx);
}
Status validateGreater(OperationContext& ctx) {
    return validateComparison(ctx);
}
Status validateGreaterEqual(OperationContext& ctx) {
    return validateComparison(ctx);
}
Status validateLess(OperationContext& ctx) {
    return validateComparison(ctx);
}
Status validateLessEqual(OperationContext& ctx) {
    return validateComparison(ctx);
}

Status validateMaximum(OperationContext& ctx) {
    return validateMinMax(ctx);
}
Status validateMinimum(OperationContext& ctx) {
    return validateMinMax(ctx);
}

Status validatePow(OperationContext& ctx) {
    return validateBinary(
        ctx, {{OperandType::TENSOR_FLOAT16, kV1_2}, {OperandType::TENSOR_FLOAT32, kV1_2}},
        std::nullopt);
}

}  // namespace nncosim
