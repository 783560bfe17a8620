// Validators of the weighted operations: CONV_2D, DEPTHWISE_CONV_2D, GROUPED_CONV_2D,
// TRANSPOSE_CONV_2D, FULLY_CONNECTED and BATCH_MATMUL.
#include "model/operations/OperationUtils.h"
#include "model/operations/Validators.h"
#include "model/operations/Window.h"

namespace nncosim {
namespace {

constexpr OperandType kFloat32 = OperandType::TENSOR_FLOAT32;
constexpr OperandType kFloat16 = OperandType::TENSOR_FLOAT16;
constexpr OperandType kQuant8Signed = OperandType::TENSOR_QUANT8_ASYMM_SIGNED;
constexpr OperandType kPerChannel = OperandType::TENSOR_QUANT8_SYMM_PER_CHANNEL;
constexpr OperandType kInt32 = OperandType::INT32;

/// Input, filter and bias (inputs 0..2) and output 0 of a conv-family op. Returns the types of
/// the three tensor inputs, to which the caller appends the scalar parameters.
Result<std::vector<OperandType>> validateConvTensors(OperationContext& ctx, FeatureLevel since,
                                                     uint32_t channelDim) {
    NN_RETURN_IF_ERROR(ctx.expectOutputCount({1}));
    NN_RETURN_IF_ERROR(expectFloatOrQuant8(ctx, 0, since));
    const OperandType type = ctx.inputType(0);
    OperandType filterType = type;
    OperandType biasType = type;
    if (isQuant8Asymm(type)) {
        biasType = OperandType::TENSOR_INT32;
        if (ctx.inputType(1) == kPerChannel) {
            filterType = kPerChannel;
            ctx.requireFeatureLevel(FeatureLevel::kV1_2);
            NN_RETURN_IF_ERROR(expectPerChannelFilter(ctx, 1, channelDim));
        } else if (ctx.inputType(1) != type) {
            return ctx.fail("input 1 (filter) has type ", nameOf(ctx.inputType(1)), ", expected ",
                            nameOf(type), " or ", nameOf(kPerChannel));
        }
    }
    NN_RETURN_IF_ERROR(ctx.expectInputType(1, filterType));
    NN_RETURN_IF_ERROR(ctx.expectInputType(2, biasType));
    NN_RETURN_IF_ERROR(expectOutputType(ctx, 0, type));
    NN_RETURN_IF_ERROR(expectConvBias(ctx, 0, 1, 2));
    return std::vector<OperandType>{type, filterType, biasType};
}

/// FULLY_CONNECTED's input and BATCH_MATMUL's operands have rank 2 to 4 when known.
Status expectRank2To4(const OperationContext& ctx, uint32_t input) {
    auto rank = ctx.inputRank(input);
    if (rank && (*rank < 2 || *rank > 4))
        return ctx.fail("input ", input, " must have rank 2 to 4, got ", *rank);
    return okStatus();
}

/// The scalar inputs of CONV_2D, DEPTHWISE_CONV_2D and GROUPED_CONV_2D where their signature
/// (model/operations/Window.h) places them: INT32 padding, strides, extra parameter and FuseCode,
/// then the optional BOOL layout and INT32 dilation factors.
Status validateWindowParams(OperationContext& ctx, std::vector<OperandType> expected) {
    const WindowSignature s =
        windowSignature(ctx.type(), ctx.numInputs(), [&](uint32_t i) { return ctx.inputType(i); });
    expected.insert(expected.end(), s.activation + 1 - s.padding, kInt32);
    if (s.layout) expected.push_back(OperandType::BOOL);
    if (s.dilation) expected.insert(expected.end(), 2, kInt32);
    NN_RETURN_IF_ERROR(ctx.expectInputTypes(expected));
    if (ctx.type() != OperationType::GROUPED_CONV_2D && (s.layout || s.dilation))
        ctx.requireFeatureLevel(FeatureLevel::kV1_2);

    NN_RETURN_IF_ERROR(expectPadding(ctx, s.padding, s.explicitPadding));
    NN_RETURN_IF_ERROR(expectStrides(ctx, s.strides));
    if (s.extra) {
        const bool depthwise = ctx.type() == OperationType::DEPTHWISE_CONV_2D;
        NN_RETURN_IF_ERROR(expectPositiveInt32(
            ctx, *s.extra, depthwise ? "depth multiplier" : "number of groups"));
    }
    NN_RETURN_IF_ERROR(expectFusedActivation(ctx, s.activation));
    if (s.dilation) {
        NN_RETURN_IF_ERROR(expectPositiveInt32(ctx, *s.dilation, "dilation width factor"));
        NN_RETURN_IF_ERROR(expectPositiveInt32(ctx, *s.dilation + 1, "dilation height factor"));
    }
    requireLevelForOutputScale(ctx, 0, 1);
    return okStatus();
}

}  // namespace

Status validateConv2D(OperationContext& ctx) {
    // Input and filter ranks are not checked here: a rank other than 4 fails at execution
    // (the CTS model conv2d_v1_3_invalid_rank is valid and expects exactly that).
    NN_RETURN_IF_ERROR(ctx.expectInputCount({7, 8, 10, 11, 13}));
    auto tensors = validateConvTensors(ctx, FeatureLevel::kV1_0, 0);
    if (!tensors) return tensors.status();
    return validateWindowParams(ctx, *tensors);
}

Status validateDepthwiseConv2D(OperationContext& ctx) {
    NN_RETURN_IF_ERROR(ctx.expectInputCount({8, 9, 11, 12, 14}));
    auto tensors = validateConvTensors(ctx, FeatureLevel::kV1_0, 3);
    if (!tensors) return tensors.status();
    return validateWindowParams(ctx, *tensors);
}

Status validateGroupedConv2D(OperationContext& ctx) {
    NN_RETURN_IF_ERROR(ctx.expectInputCount({9, 12}));
    auto tensors = validateConvTensors(ctx, FeatureLevel::kV1_2, 0);
    if (!tensors) return tensors.status();
    NN_RETURN_IF_ERROR(validateWindowParams(ctx, *tensors));

    // Channel counts must split evenly into the groups (when the shapes are known).
    const WindowSignature s = windowSignature(OperationType::GROUPED_CONV_2D, ctx.numInputs(),
                                              [&](uint32_t i) { return ctx.inputType(i); });
    auto numGroups = constantInt32(ctx, *s.extra);
    const auto& filter = ctx.input(1).dimensions;
    if (numGroups && *numGroups > 0 && filter.size() == 4) {
        const uint32_t g = static_cast<uint32_t>(*numGroups);
        if (filter[0] != 0 && filter[0] % g != 0)
            return ctx.fail("filter depth_out ", filter[0], " is not divisible by ", g, " groups");
        auto nchw = constantBool(ctx, *s.layout);
        const auto& input = ctx.input(0).dimensions;
        if (nchw && input.size() == 4 && filter[3] != 0) {
            const uint32_t channels = input[*nchw ? 1 : 3];
            if (channels != 0 && channels != g * filter[3])
                return ctx.fail("input depth ", channels, " must equal ", g,
                                " groups * filter depth ", filter[3]);
        }
    }
    return okStatus();
}

Status validateTransposeConv2D(OperationContext& ctx) {
    NN_RETURN_IF_ERROR(ctx.expectInputCount({9, 11}));
    auto tensors = validateConvTensors(ctx, FeatureLevel::kV1_2, 0);
    if (!tensors) return tensors.status();
    std::vector<OperandType> expected = *tensors;
    const bool explicitPadding = ctx.numInputs() == 11;
    if (explicitPadding) {
        expected.insert(expected.end(), 7, kInt32);
    } else {
        expected.push_back(OperandType::TENSOR_INT32);
        expected.insert(expected.end(), 4, kInt32);
    }
    expected.push_back(OperandType::BOOL);
    NN_RETURN_IF_ERROR(ctx.expectInputTypes(expected));
    // Implicit padding: the output shape tensor, then the padding scheme.
    if (!explicitPadding) NN_RETURN_IF_ERROR(expectTensorRank(ctx, 3, 1, "output shape"));
    NN_RETURN_IF_ERROR(expectPadding(ctx, explicitPadding ? 3 : 4, explicitPadding));
    const uint32_t strides = explicitPadding ? 7 : 5;
    NN_RETURN_IF_ERROR(expectStrides(ctx, strides));
    return expectFusedActivation(ctx, strides + 2);
}

Status validateFullyConnected(OperationContext& ctx) {
    NN_RETURN_IF_ERROR(ctx.expectInputCount({4}));
    NN_RETURN_IF_ERROR(ctx.expectOutputCount({1}));
    NN_RETURN_IF_ERROR(expectFloatOrQuant8(ctx, 0, FeatureLevel::kV1_0));
    const OperandType type = ctx.inputType(0);
    const OperandType biasType = isQuant8Asymm(type) ? OperandType::TENSOR_INT32 : type;
    NN_RETURN_IF_ERROR(ctx.expectInputTypes({type, type, biasType, kInt32}));
    NN_RETURN_IF_ERROR(ctx.expectOutputTypes({type}));
    NN_RETURN_IF_ERROR(expectFusedActivation(ctx, 3));
    NN_RETURN_IF_ERROR(expectConvBias(ctx, 0, 1, 2));
    requireLevelForOutputScale(ctx, 0, 1);

    NN_RETURN_IF_ERROR(expectRank2To4(ctx, 0));
    NN_RETURN_IF_ERROR(expectTensorRank(ctx, 1, 2, "weights"));
    const auto& weights = ctx.input(1).dimensions;
    const auto& bias = ctx.input(2).dimensions;
    if (weights.size() == 2 && bias.size() == 1 && weights[0] != 0 && bias[0] != 0 &&
        weights[0] != bias[0])
        return ctx.fail("bias length ", bias[0], " must equal num_units ", weights[0]);
    const uint64_t inputElements = elementCount(ctx.input(0).dimensions);
    if (weights.size() == 2 && weights[1] != 0 && inputElements != 0 &&
        inputElements % weights[1] != 0)
        return ctx.fail("input 0 has ", inputElements, " elements, not a multiple of input_size ",
                        weights[1]);
    return okStatus();
}

Status validateBatchMatmul(OperationContext& ctx) {
    NN_RETURN_IF_ERROR(ctx.expectInputCount({4}));
    NN_RETURN_IF_ERROR(ctx.expectOutputCount({1}));
    NN_RETURN_IF_ERROR(expectTypeSince(ctx, 0,
                                       {{kFloat32, FeatureLevel::kAidlV2},
                                        {kFloat16, FeatureLevel::kAidlV2},
                                        {kQuant8Signed, FeatureLevel::kAidlV2},
                                        {OperandType::TENSOR_INT32, FeatureLevel::kAidlV2}}));
    const OperandType type = ctx.inputType(0);
    NN_RETURN_IF_ERROR(ctx.expectInputTypes({type, type, OperandType::BOOL, OperandType::BOOL}));
    NN_RETURN_IF_ERROR(ctx.expectOutputTypes({type}));

    const auto lhsRank = ctx.inputRank(0);
    const auto rhsRank = ctx.inputRank(1);
    NN_RETURN_IF_ERROR(expectRank2To4(ctx, 0));
    NN_RETURN_IF_ERROR(expectRank2To4(ctx, 1));
    if (!lhsRank || !rhsRank) return okStatus();
    if (*lhsRank != *rhsRank)
        return ctx.fail("inputs 0 and 1 must have the same rank, got ", *lhsRank, " and ",
                        *rhsRank);
    // The contracted dimensions must agree: columns of op(lhs) with rows of op(rhs).
    auto adjLhs = constantBool(ctx, 2);
    auto adjRhs = constantBool(ctx, 3);
    if (!adjLhs || !adjRhs) return okStatus();
    const auto& lhs = ctx.input(0).dimensions;
    const auto& rhs = ctx.input(1).dimensions;
    const uint32_t n = *lhsRank;
    const uint32_t lhsInner = *adjLhs ? lhs[n - 2] : lhs[n - 1];
    const uint32_t rhsInner = *adjRhs ? rhs[n - 1] : rhs[n - 2];
    if (lhsInner != 0 && rhsInner != 0 && lhsInner != rhsInner)
        return ctx.fail("inputs 0 ", toString(lhs), " and 1 ", toString(rhs),
                        " cannot be multiplied with the given adjoint flags");
    return okStatus();
}

}  // namespace nncosim
