// Validators of the data-movement operations: CONCATENATION, RESHAPE, SQUEEZE, STRIDED_SLICE,
// TRANSPOSE, DEPTH_TO_SPACE, SPACE_TO_DEPTH, SPACE_TO_BATCH_ND, BATCH_TO_SPACE_ND and
// CHANNEL_SHUFFLE. Quantized outputs of all but CONCATENATION keep the input's quantization.
#include <algorithm>

#include "model/operations/OperationUtils.h"
#include "model/operations/Validators.h"

namespace nncosim {
namespace {

constexpr OperandType kFloat32 = OperandType::TENSOR_FLOAT32;
constexpr OperandType kFloat16 = OperandType::TENSOR_FLOAT16;
constexpr OperandType kQuant8 = OperandType::TENSOR_QUANT8_ASYMM;
constexpr OperandType kQuant8Signed = OperandType::TENSOR_QUANT8_ASYMM_SIGNED;
constexpr OperandType kTensorInt32 = OperandType::TENSOR_INT32;

/// The rank of input 0 when known, as a signed bound.
std::optional<int32_t> signedRank(const OperationContext& ctx) {
    auto rank = ctx.inputRank(0);
    if (!rank) return std::nullopt;
    return static_cast<int32_t>(*rank);
}

/// Every element of a constant TENSOR_INT32 input is at least `min`.
Status expectElementsAtLeast(const OperationContext& ctx, uint32_t input, int32_t min,
                             const char* what) {
    auto values = constantInt32Tensor(ctx, input);
    if (!values) return okStatus();
    for (int32_t v : *values) {
        if (v < min)
            return ctx.fail("input ", input, " (", what, ") values must be >= ", min, ", got ", v);
    }
    return okStatus();
}

/// The input types `expected` plus, when the operation has one more input, the BOOL NCHW flag
/// (optional since NNAPI 1.2), checked in order.
Status expectInputTypesAndLayout(OperationContext& ctx, std::vector<OperandType> expected) {
    if (ctx.numInputs() > expected.size()) {
        expected.push_back(OperandType::BOOL);
        ctx.requireFeatureLevel(FeatureLevel::kV1_2);
    }
    return ctx.expectInputTypes(expected);
}

/// DEPTH_TO_SPACE and SPACE_TO_DEPTH: a 4-D tensor, block size, optional NCHW flag.
Status validateDepthSpace(OperationContext& ctx, bool toSpace) {
    NN_RETURN_IF_ERROR(ctx.expectInputCount({2, 3}));
    NN_RETURN_IF_ERROR(ctx.expectOutputCount({1}));
    NN_RETURN_IF_ERROR(expectFloatOrQuant8(ctx, 0, FeatureLevel::kV1_0));
    const OperandType type = ctx.inputType(0);
    NN_RETURN_IF_ERROR(expectInputTypesAndLayout(ctx, {type, OperandType::INT32}));
    NN_RETURN_IF_ERROR(ctx.expectOutputTypes({type}));
    NN_RETURN_IF_ERROR(expectTensorRank(ctx, 0, 4, "input"));
    NN_RETURN_IF_ERROR(expectPositiveInt32(ctx, 1, "block size"));
    NN_RETURN_IF_ERROR(expectSameQuant8(ctx, 0, 0));

    // The block must tile the known dimensions it splits.
    auto block = constantInt32(ctx, 1);
    const std::optional<bool> nchw = ctx.numInputs() == 3 ? constantBool(ctx, 2) : false;
    const auto& dims = ctx.input(0).dimensions;
    if (!block || *block < 1 || dims.size() != 4 || !nchw) return okStatus();
    const uint32_t b = static_cast<uint32_t>(*block);
    const uint32_t height = dims[*nchw ? 2 : 1];
    const uint32_t width = dims[*nchw ? 3 : 2];
    const uint32_t depth = dims[*nchw ? 1 : 3];
    if (toSpace && depth != 0 && depth % (b * b) != 0)
        return ctx.fail("input depth ", depth, " is not divisible by block size squared ", b * b);
    if (!toSpace && ((height != 0 && height % b != 0) || (width != 0 && width % b != 0)))
        return ctx.fail("input height ", height, " and width ", width,
                        " must be divisible by block size ", b);
    return okStatus();
}

/// SPACE_TO_BATCH_ND (block shape and paddings) and BATCH_TO_SPACE_ND (block shape): a 4-D
/// tensor, the 1-D block shape, the [4, 2] paddings when `toBatch`, optional NCHW flag.
Status validateBatchSpace(OperationContext& ctx, bool toBatch) {
    NN_RETURN_IF_ERROR(toBatch ? ctx.expectInputCount({3, 4}) : ctx.expectInputCount({2, 3}));
    NN_RETURN_IF_ERROR(ctx.expectOutputCount({1}));
    NN_RETURN_IF_ERROR(expectFloatOrQuant8(ctx, 0, FeatureLevel::kV1_1));
    const OperandType type = ctx.inputType(0);
    // Quant8 with a non-zero zero point pads with logical zero only since NNAPI 1.2.
    if (toBatch && type == kQuant8 && ctx.input(0).zeroPoint != 0)
        ctx.requireFeatureLevel(FeatureLevel::kV1_2);
    std::vector<OperandType> expected = {type, kTensorInt32};
    if (toBatch) expected.push_back(kTensorInt32);
    NN_RETURN_IF_ERROR(expectInputTypesAndLayout(ctx, expected));
    NN_RETURN_IF_ERROR(ctx.expectOutputTypes({type}));
    NN_RETURN_IF_ERROR(expectTensorRank(ctx, 0, 4, "input"));
    NN_RETURN_IF_ERROR(expectTensorRank(ctx, 1, 1, "block shape"));
    if (toBatch) NN_RETURN_IF_ERROR(expectTensorRank(ctx, 2, 2, "paddings"));
    NN_RETURN_IF_ERROR(expectElementsAtLeast(ctx, 1, 1, "block shape"));
    if (toBatch) NN_RETURN_IF_ERROR(expectElementsAtLeast(ctx, 2, 0, "paddings"));
    return expectSameQuant8(ctx, 0, 0);
}

}  // namespace

Status validateConcatenation(OperationContext& ctx) {
    if (ctx.numInputs() < 2) return ctx.fail("expected at least 2 inputs, got ", ctx.numInputs());
    NN_RETURN_IF_ERROR(ctx.expectOutputCount({1}));
    NN_RETURN_IF_ERROR(expectFloatOrQuant8(ctx, 0, FeatureLevel::kV1_0));
    const OperandType type = ctx.inputType(0);
    const uint32_t axisInput = ctx.numInputs() - 1;
    std::vector<OperandType> expected(axisInput, type);
    expected.push_back(OperandType::INT32);
    NN_RETURN_IF_ERROR(ctx.expectInputTypes(expected));
    NN_RETURN_IF_ERROR(ctx.expectOutputTypes({type}));
    // Quant8 inputs quantized unlike the output arrived in NNAPI 1.2.
    if (type == kQuant8) {
        for (uint32_t i = 0; i < axisInput; ++i) {
            if (ctx.input(i).scale != ctx.output(0).scale ||
                ctx.input(i).zeroPoint != ctx.output(0).zeroPoint)
                ctx.requireFeatureLevel(FeatureLevel::kV1_2);
        }
    }
    // The rank limit of 4 is left to execution: CTS's concat_invalid_rank is a valid model.
    auto rank = ctx.inputRank(0);
    if (!rank) return okStatus();
    auto axis = constantInt32(ctx, axisInput);
    if (axis && (*axis < 0 || static_cast<uint32_t>(*axis) >= *rank))
        return ctx.fail("input ", axisInput, " (axis) must be in [0, ", *rank, "), got ", *axis);
    const auto& first = ctx.input(0).dimensions;
    for (uint32_t i = 1; i < axisInput; ++i) {
        const auto& dims = ctx.input(i).dimensions;
        if (dims.empty()) continue;
        if (dims.size() != first.size())
            return ctx.fail("input ", i, " has rank ", dims.size(), ", input 0 has rank ",
                            first.size());
        for (uint32_t d = 0; d < dims.size(); ++d) {
            if (axis && d == static_cast<uint32_t>(*axis)) continue;
            if (dims[d] != 0 && first[d] != 0 && dims[d] != first[d])
                return ctx.fail("input ", i, " ", toString(dims), " differs from input 0 ",
                                toString(first), " outside the concatenation axis");
        }
    }
    return okStatus();
}

Status validateReshape(OperationContext& ctx) {
    NN_RETURN_IF_ERROR(ctx.expectInputCount({2}));
    NN_RETURN_IF_ERROR(ctx.expectOutputCount({1}));
    NN_RETURN_IF_ERROR(expectTypeSince(ctx, 0,
                                       {{kFloat32, FeatureLevel::kV1_0},
                                        {kQuant8, FeatureLevel::kV1_0},
                                        {kFloat16, FeatureLevel::kV1_2},
                                        {kQuant8Signed, FeatureLevel::kV1_3},
                                        {kTensorInt32, FeatureLevel::kAidlV2}}));
    const OperandType type = ctx.inputType(0);
    NN_RETURN_IF_ERROR(ctx.expectInputTypes({type, kTensorInt32}));
    NN_RETURN_IF_ERROR(ctx.expectOutputTypes({type}));
    NN_RETURN_IF_ERROR(ctx.expectInputRankAtMost(0, 4));
    NN_RETURN_IF_ERROR(expectTensorRank(ctx, 1, 1, "shape"));
    NN_RETURN_IF_ERROR(expectSameQuant8(ctx, 0, 0));
    if (auto shape = constantInt32Tensor(ctx, 1)) {
        if (std::count(shape->begin(), shape->end(), -1) > 1)
            return ctx.fail("input 1 (shape) may hold at most one -1");
        NN_RETURN_IF_ERROR(expectElementsAtLeast(ctx, 1, -1, "shape"));
    }
    return okStatus();
}

Status validateSqueeze(OperationContext& ctx) {
    NN_RETURN_IF_ERROR(ctx.expectInputCount({2}));
    NN_RETURN_IF_ERROR(ctx.expectOutputCount({1}));
    NN_RETURN_IF_ERROR(expectFloatOrQuant8(ctx, 0, FeatureLevel::kV1_1));
    const OperandType type = ctx.inputType(0);
    NN_RETURN_IF_ERROR(ctx.expectInputTypes({type, kTensorInt32}));
    NN_RETURN_IF_ERROR(ctx.expectOutputTypes({type}));
    NN_RETURN_IF_ERROR(ctx.expectInputRankAtMost(0, 4));
    NN_RETURN_IF_ERROR(expectSameQuant8(ctx, 0, 0));
    if (ctx.isOmitted(1)) return okStatus();
    NN_RETURN_IF_ERROR(expectTensorRank(ctx, 1, 1, "axes"));
    return expectAxesTensor(ctx, 1, 0);
}

Status validateStridedSlice(OperationContext& ctx) {
    NN_RETURN_IF_ERROR(ctx.expectInputCount({7}));
    NN_RETURN_IF_ERROR(ctx.expectOutputCount({1}));
    NN_RETURN_IF_ERROR(expectFloatOrQuant8(ctx, 0, FeatureLevel::kV1_1));
    const OperandType type = ctx.inputType(0);
    NN_RETURN_IF_ERROR(
        ctx.expectInputTypes({type, kTensorInt32, kTensorInt32, kTensorInt32, OperandType::INT32,
                              OperandType::INT32, OperandType::INT32}));
    NN_RETURN_IF_ERROR(ctx.expectOutputTypes({type}));
    NN_RETURN_IF_ERROR(ctx.expectInputRankAtMost(0, 4));
    NN_RETURN_IF_ERROR(expectSameQuant8(ctx, 0, 0));
    NN_RETURN_IF_ERROR(expectOnePerDimension(ctx, 1, "begin"));
    NN_RETURN_IF_ERROR(expectOnePerDimension(ctx, 2, "end"));
    NN_RETURN_IF_ERROR(expectOnePerDimension(ctx, 3, "strides"));
    if (auto strides = constantInt32Tensor(ctx, 3)) {
        if (std::find(strides->begin(), strides->end(), 0) != strides->end())
            return ctx.fail("input 3 (strides) values must be non-zero");
    }
    return okStatus();
}

Status validateTranspose(OperationContext& ctx) {
    NN_RETURN_IF_ERROR(ctx.expectInputCount({2}));
    NN_RETURN_IF_ERROR(ctx.expectOutputCount({1}));
    NN_RETURN_IF_ERROR(expectFloatOrQuant8(ctx, 0, FeatureLevel::kV1_1));
    const OperandType type = ctx.inputType(0);
    NN_RETURN_IF_ERROR(ctx.expectInputTypes({type, kTensorInt32}));
    NN_RETURN_IF_ERROR(ctx.expectOutputTypes({type}));
    NN_RETURN_IF_ERROR(ctx.expectInputRankAtMost(0, 4));
    NN_RETURN_IF_ERROR(expectSameQuant8(ctx, 0, 0));
    if (ctx.isOmitted(1)) return okStatus();
    NN_RETURN_IF_ERROR(expectOnePerDimension(ctx, 1, "perm"));
    auto perm = constantInt32Tensor(ctx, 1);
    auto rank = signedRank(ctx);
    if (!perm || !rank || perm->size() != static_cast<size_t>(*rank)) return okStatus();
    std::vector<bool> seen(*rank, false);
    for (int32_t p : *perm) {
        if (p < 0 || p >= *rank || seen[p])
            return ctx.fail("input 1 (perm) must be a permutation of [0, ", *rank, ")");
        seen[p] = true;
    }
    return okStatus();
}

Status validateDepthToSpace(OperationContext& ctx) {
    return validateDepthSpace(ctx, true);
}
Status validateSpaceToDepth(OperationContext& ctx) {
    return validateDepthSpace(ctx, false);
}

Status validateSpaceToBatchNd(OperationContext& ctx) {
    return validateBatchSpace(ctx, true);
}
Status validateBatchToSpaceNd(OperationContext& ctx) {
    return validateBatchSpace(ctx, false);
}

Status validateChannelShuffle(OperationContext& ctx) {
    NN_RETURN_IF_ERROR(ctx.expectInputCount({3}));
    NN_RETURN_IF_ERROR(ctx.expectOutputCount({1}));
    NN_RETURN_IF_ERROR(expectFloatOrQuant8(ctx, 0, FeatureLevel::kV1_2));
    const OperandType type = ctx.inputType(0);
    NN_RETURN_IF_ERROR(ctx.expectInputTypes({type, OperandType::INT32, OperandType::INT32}));
    NN_RETURN_IF_ERROR(ctx.expectOutputTypes({type}));
    NN_RETURN_IF_ERROR(ctx.expectInputRankAtMost(0, 4));
    NN_RETURN_IF_ERROR(expectPositiveInt32(ctx, 1, "number of groups"));
    NN_RETURN_IF_ERROR(expectAxis(ctx, 2, 0));
    NN_RETURN_IF_ERROR(expectSameQuant8(ctx, 0, 0));
    auto groups = constantInt32(ctx, 1);
    auto axis = constantInt32(ctx, 2);
    auto rank = signedRank(ctx);
    if (!groups || !axis || !rank || *groups < 1) return okStatus();
    const uint32_t channels = ctx.input(0).dimensions[*axis < 0 ? *axis + *rank : *axis];
    if (channels != 0 && channels % static_cast<uint32_t>(*groups) != 0)
        return ctx.fail("dimension ", *axis, " of input 0 (", channels,
                        ") is not divisible by the number of groups ", *groups);
    return okStatus();
}

}  // namespace nncosim
