// Validators of the activation functions: LOGISTIC, TANH, RELU, RELU1, RELU6, ELU, HARD_SWISH,
// PRELU, SOFTMAX and LOG_SOFTMAX.
#include "model/operations/OperationUtils.h"
#include "model/operations/Validators.h"

namespace nncosim {
namespace {

constexpr OperandType kFloat32 = OperandType::TENSOR_FLOAT32;
constexpr OperandType kFloat16 = OperandType::TENSOR_FLOAT16;
constexpr OperandType kQuant8 = OperandType::TENSOR_QUANT8_ASYMM;
constexpr OperandType kQuant8Signed = OperandType::TENSOR_QUANT8_ASYMM_SIGNED;

/// One tensor in (rank <= 4), one tensor of the same type out.
Status validateActivation(OperationContext& ctx, FeatureLevel quant8Level) {
    NN_RETURN_IF_ERROR(ctx.expectInputCount({1}));
    NN_RETURN_IF_ERROR(ctx.expectOutputCount({1}));
    NN_RETURN_IF_ERROR(expectTypeSince(ctx, 0,
                                       {{kFloat32, FeatureLevel::kV1_0},
                                        {kQuant8, quant8Level},
                                        {kFloat16, FeatureLevel::kV1_2},
                                        {kQuant8Signed, FeatureLevel::kV1_3}}));
    NN_RETURN_IF_ERROR(ctx.expectOutputTypes({ctx.inputType(0)}));
    return ctx.expectInputRankAtMost(0, 4);
}

/// The fixed output quantization of LOGISTIC, TANH and SOFTMAX: unsigned and signed zero points.
Status expectFixedOutputQuantization(const OperationContext& ctx, float scale, int32_t zeroPoint,
                                     int32_t signedZeroPoint) {
    if (ctx.outputType(0) == kQuant8) return expectOutputQuantization(ctx, 0, scale, zeroPoint);
    if (ctx.outputType(0) == kQuant8Signed)
        return expectOutputQuantization(ctx, 0, scale, signedZeroPoint);
    return okStatus();
}

/// RELU, RELU1, RELU6: quantized outputs keep the input's quantization.
Status validateClamp(OperationContext& ctx) {
    NN_RETURN_IF_ERROR(validateActivation(ctx, FeatureLevel::kV1_0));
    return expectSameQuant8(ctx, 0, 0);
}

}  // namespace

Status validateRelu(OperationContext& ctx) {
    return validateClamp(ctx);
}
Status validateRelu1(OperationContext& ctx) {
    return validateClamp(ctx);
}
Status validateRelu6(OperationContext& ctx) {
    return validateClamp(ctx);
}

Status validateLogistic(OperationContext& ctx) {
    NN_RETURN_IF_ERROR(validateActivation(ctx, FeatureLevel::kV1_0));
    return expectFixedOutputQuantization(ctx, 1.0f / 256, 0, -128);
}

Status validateTanh(OperationContext& ctx) {
    NN_RETURN_IF_ERROR(validateActivation(ctx, FeatureLevel::kV1_2));
    return expectFixedOutputQuantization(ctx, 1.0f / 128, 128, 0);
}

Status validateHardSwish(OperationContext& ctx) {
    NN_RETURN_IF_ERROR(ctx.expectInputCount({1}));
    NN_RETURN_IF_ERROR(ctx.expectOutputCount({1}));
    NN_RETURN_IF_ERROR(expectTypeSince(ctx, 0,
                                       {{kFloat32, FeatureLevel::kV1_3},
                                        {kFloat16, FeatureLevel::kV1_3},
                                        {kQuant8, FeatureLevel::kV1_3},
                                        {kQuant8Signed, FeatureLevel::kV1_3}}));
    return ctx.expectOutputTypes({ctx.inputType(0)});
}

Status validateElu(OperationContext& ctx) {
    NN_RETURN_IF_ERROR(ctx.expectInputCount({2}));
    NN_RETURN_IF_ERROR(ctx.expectOutputCount({1}));
    NN_RETURN_IF_ERROR(expectTypeSince(
        ctx, 0, {{kFloat32, FeatureLevel::kV1_3}, {kFloat16, FeatureLevel::kV1_3}}));
    const OperandType type = ctx.inputType(0);
    NN_RETURN_IF_ERROR(ctx.expectInputTypes({type, floatScalarFor(type)}));
    return ctx.expectOutputTypes({type});
}

Status validatePrelu(OperationContext& ctx) {
    NN_RETURN_IF_ERROR(ctx.expectInputCount({2}));
    NN_RETURN_IF_ERROR(ctx.expectOutputCount({1}));
    NN_RETURN_IF_ERROR(expectTypeSince(ctx, 0,
                                       {{kFloat32, FeatureLevel::kV1_2},
                                        {kFloat16, FeatureLevel::kV1_2},
                                        {kQuant8, FeatureLevel::kV1_2},
                                        {kQuant8Signed, FeatureLevel::kV1_3}}));
    const OperandType type = ctx.inputType(0);
    NN_RETURN_IF_ERROR(ctx.expectInputTypes({type, type}));
    NN_RETURN_IF_ERROR(ctx.expectOutputTypes({type}));
    return expectBroadcastable(ctx, 0, 1);
}

Status validateSoftmax(OperationContext& ctx) {
    NN_RETURN_IF_ERROR(ctx.expectInputCount({2, 3}));
    NN_RETURN_IF_ERROR(ctx.expectOutputCount({1}));
    NN_RETURN_IF_ERROR(expectFloatOrQuant8(ctx, 0, FeatureLevel::kV1_0));
    const OperandType type = ctx.inputType(0);
    std::vector<OperandType> expected = {type, floatScalarFor(type)};
    const auto rank = ctx.inputRank(0);
    if (ctx.numInputs() == 3) {
        expected.push_back(OperandType::INT32);
        ctx.requireFeatureLevel(FeatureLevel::kV1_2);
    } else if (rank && *rank != 2 && *rank != 4) {
        ctx.requireFeatureLevel(FeatureLevel::kV1_2);
    }
    NN_RETURN_IF_ERROR(ctx.expectInputTypes(expected));
    NN_RETURN_IF_ERROR(ctx.expectOutputTypes({type}));
    NN_RETURN_IF_ERROR(ctx.expectInputRankAtMost(0, 4));
    NN_RETURN_IF_ERROR(expectPositiveFloat(ctx, 1, "beta"));
    if (ctx.numInputs() == 3) NN_RETURN_IF_ERROR(expectAxis(ctx, 2, 0));
    return expectFixedOutputQuantization(ctx, 1.0f / 256, 0, -128);
}

Status validateLogSoftmax(OperationContext& ctx) {
    NN_RETURN_IF_ERROR(ctx.expectInputCount({3}));
    NN_RETURN_IF_ERROR(ctx.expectOutputCount({1}));
    NN_RETURN_IF_ERROR(expectTypeSince(
        ctx, 0, {{kFloat32, FeatureLevel::kV1_2}, {kFloat16, FeatureLevel::kV1_2}}));
    const OperandType type = ctx.inputType(0);
    NN_RETURN_IF_ERROR(ctx.expectInputTypes({type, floatScalarFor(type), OperandType::INT32}));
    NN_RETURN_IF_ERROR(ctx.expectOutputTypes({type}));
    NN_RETURN_IF_ERROR(expectPositiveFloat(ctx, 1, "beta"));
    return expectAxis(ctx, 2, 0);
}

}  // namespace nncosim
