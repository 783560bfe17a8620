// Checks shared by the per-operation validators: supported types per feature level, constant
// scalar parameters, quantization rules and the bias/filter conventions of the conv family.
#pragma once

#include <cstdint>
#include <initializer_list>
#include <optional>
#include <vector>

#include "model/OperationValidation.h"

namespace nncosim {

/// A tensor type an operation accepts and the feature level that introduced it for that op.
struct TypeSince {
    OperandType type;
    FeatureLevel level;
};

/// TENSOR_QUANT8_ASYMM or TENSOR_QUANT8_ASYMM_SIGNED.
bool isQuant8Asymm(OperandType type);
/// FLOAT16 for TENSOR_FLOAT16, FLOAT32 otherwise: the type of float parameters of an op.
OperandType floatScalarFor(OperandType tensorType);

/// Input `input` has one of `allowed` types; raises the feature level to the one listed for it.
Status expectTypeSince(OperationContext& ctx, uint32_t input,
                       std::initializer_list<TypeSince> allowed);
/// Output `output` has exactly `type`.
Status expectOutputType(const OperationContext& ctx, uint32_t output, OperandType type);

/// Value of a constant INT32 / BOOL / float scalar input; nullopt when it is not constant.
std::optional<int32_t> constantInt32(const OperationContext& ctx, uint32_t input);
std::optional<bool> constantBool(const OperationContext& ctx, uint32_t input);
/// FLOAT32, or FLOAT16 widened to float.
std::optional<float> constantFloat(const OperationContext& ctx, uint32_t input);
/// Elements of a constant TENSOR_INT32 input; nullopt when it is not constant.
std::optional<std::vector<int32_t>> constantInt32Tensor(const OperationContext& ctx,
                                                        uint32_t input);

/// A constant INT32 input lies in [min, max]; `what` names it in the message.
Status expectInt32InRange(const OperationContext& ctx, uint32_t input, int32_t min, int32_t max,
                          const char* what);
/// A constant INT32 input is >= 1 (strides, block sizes, group counts...).
Status expectPositiveInt32(const OperationContext& ctx, uint32_t input, const char* what);
/// A constant INT32 input is >= 0 (explicit paddings...).
Status expectNonNegativeInt32(const OperationContext& ctx, uint32_t input, const char* what);
/// A constant FuseCode: NONE, RELU, RELU1 or RELU6.
Status expectFusedActivation(const OperationContext& ctx, uint32_t input);
/// A constant PaddingCode: SAME (1) or VALID (2).
Status expectPaddingScheme(const OperationContext& ctx, uint32_t input);
/// A constant float (FLOAT32 or FLOAT16) input is > 0.
Status expectPositiveFloat(const OperationContext& ctx, uint32_t input, const char* what);
/// A constant INT32 axis lies in [-rank, rank) when the rank of `tensor` is known.
Status expectAxis(const OperationContext& ctx, uint32_t axisInput, uint32_t tensor);
/// Every element of a constant TENSOR_INT32 lies in [-rank, rank) of input `tensor`.
Status expectAxesTensor(const OperationContext& ctx, uint32_t axesInput, uint32_t tensor);
/// Input `input` is a tensor of the given rank when its rank is known.
Status expectTensorRank(const OperationContext& ctx, uint32_t input, uint32_t rank,
                        const char* what);

/// Output `output` has the given scale and zero point.
Status expectOutputQuantization(const OperationContext& ctx, uint32_t output, float scale,
                                int32_t zeroPoint);
/// For quant8 input 0, output 0 carries the same scale and zero point.
Status expectSameQuant8AsInput(const OperationContext& ctx);

/// Two inputs have broadcast-compatible known dimensions (equal, or one of them 1).
Status expectBroadcastable(const OperationContext& ctx, uint32_t a, uint32_t b);

/// The filter of a quantized conv-family op is per-channel quantized along `channelDim`, with
/// one scale per channel when that dimension is known.
Status expectPerChannelFilter(const OperationContext& ctx, uint32_t filter, uint32_t channelDim);
/// The bias of a conv-family op (and FULLY_CONNECTED) has rank 1 when known and, for quant8
/// inputs with a per-tensor filter, scale input_scale * filter_scale. Its type is the caller's.
Status expectConvBias(const OperationContext& ctx, uint32_t input, uint32_t filter, uint32_t bias);
/// Before V1_2, quant8 conv-style outputs had to satisfy output_scale > input_scale * filter_scale.
void requireLevelForOutputScale(OperationContext& ctx, uint32_t input, uint32_t filter);

}  // namespace nncosim
