// Checks shared by the per-operation validators: supported types per feature level, constant
// scalar parameters, required inputs, ranks and dimensions, quantization rules, the padding,
// stride, bias and filter conventions of the conv family, and operand compatibility.
#pragma once

#include <cstdint>
#include <initializer_list>
#include <optional>
#include <utility>
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
/// Input `input` is TENSOR_FLOAT32 or TENSOR_QUANT8_ASYMM (since `since`), TENSOR_FLOAT16 (since
/// V1_2, or `since` when later) or TENSOR_QUANT8_ASYMM_SIGNED (since V1_3); raises the feature
/// level as expectTypeSince does.
Status expectFloatOrQuant8(OperationContext& ctx, uint32_t input, FeatureLevel since);
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
/// Explicit padding: four constant INT32 >= 0 (left, right, top, bottom) from `first`; implicit
/// padding: a constant PaddingCode, SAME (1) or VALID (2), at `first`.
Status expectPadding(const OperationContext& ctx, uint32_t first, bool explicitPadding);
/// Two constant INT32 strides >= 1 (width, height) from `first`.
Status expectStrides(const OperationContext& ctx, uint32_t first);
/// A constant float (FLOAT32 or FLOAT16) input is > 0.
Status expectPositiveFloat(const OperationContext& ctx, uint32_t input, const char* what);
/// A constant INT32 axis lies in [-rank, rank) when the rank of `tensor` is known.
Status expectAxis(const OperationContext& ctx, uint32_t axisInput, uint32_t tensor);
/// Every element of a constant TENSOR_INT32 lies in [-rank, rank) of input `tensor`.
Status expectAxesTensor(const OperationContext& ctx, uint32_t axesInput, uint32_t tensor);

/// Every input not listed in `optional` has a value: only optional inputs may be NO_VALUE.
Status expectRequiredInputs(const OperationContext& ctx, const std::vector<uint32_t>& optional);
/// Input i has a value (is not NO_VALUE); `what` names it in the message.
Status expectPresent(const OperationContext& ctx, uint32_t input, const char* what);

/// Input `input` is a tensor of the given rank when its rank is known.
Status expectTensorRank(const OperationContext& ctx, uint32_t input, uint32_t rank,
                        const char* what);
/// Each listed (input, rank) pair: the input has that rank when it has a value and a known rank.
/// Inputs listed in `optional` whose dimensions are all unknown are skipped as well: models stand
/// in for an absent optional tensor with a placeholder such as [0] and omit it in the request.
Status expectInputRanks(const OperationContext& ctx,
                        std::initializer_list<std::pair<uint32_t, uint32_t>> inputRanks,
                        const std::vector<uint32_t>& optional = {});
/// Input i has at least `minRank` dimensions when its rank is known.
Status expectInputRankAtLeast(const OperationContext& ctx, uint32_t input, uint32_t minRank,
                              const char* what);
/// Input i has `size` elements along `dim` when its rank and that dimension are known.
Status expectInputDim(const OperationContext& ctx, uint32_t input, uint32_t dim, uint32_t size,
                      const char* what);
/// A 1-D TENSOR_INT32 input holds one element per dimension of input 0 (when both are known).
Status expectOnePerDimension(const OperationContext& ctx, uint32_t input, const char* what);

/// Output `output` has the given scale and zero point.
Status expectOutputQuantization(const OperationContext& ctx, uint32_t output, float scale,
                                int32_t zeroPoint);
/// Output `output` has the same scale and zero point as input `input`, whatever their type.
Status expectSameQuantization(const OperationContext& ctx, uint32_t input, uint32_t output);
/// For a TENSOR_QUANT8_ASYMM(_SIGNED) output, its scale and zero point equal those of `input`;
/// other output types pass.
Status expectSameQuant8(const OperationContext& ctx, uint32_t input, uint32_t output);
/// A TENSOR_QUANT16_ASYMM box-coordinate operand uses scale 0.125 and zero point 0 (the fixed
/// quantization of NNAPI's detection operations); other types pass.
Status expectBoxQuantization(const OperationContext& ctx, const Operand& operand, const char* what);

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

/// Known dimensions agree: equal ranks when both are known, equal sizes where both are known.
bool dimensionsCompatible(const std::vector<uint32_t>& a, const std::vector<uint32_t>& b);
/// Two operands could describe the same value: same type, compatible dimensions, same scale,
/// zero point and extra parameters (the rule between IF/WHILE operands and subgraph operands).
bool operandsCompatible(const Operand& a, const Operand& b);

}  // namespace nncosim
