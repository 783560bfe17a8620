// Validators of the operations that select or rearrange elements of one tensor: SLICE, SPLIT,
// TILE, TOPK_V2, GATHER, ARGMAX, ARGMIN and REVERSE.
#include <vector>

#include "model/operations/OperationUtils.h"
#include "model/operations/Validators.h"

namespace nncosim {
namespace {

constexpr OperandType kInt32 = OperandType::INT32;
constexpr OperandType kTensorInt32 = OperandType::TENSOR_INT32;

/// The data types of the NNAPI 1.2 tensor-manipulation operations; signed quant8 since 1.3.
Status expectDataType(OperationContext& ctx, uint32_t input) {
    return expectTypeSince(ctx, input,
                           {{OperandType::TENSOR_FLOAT16, FeatureLevel::kV1_2},
                            {OperandType::TENSOR_FLOAT32, FeatureLevel::kV1_2},
                            {OperandType::TENSOR_INT32, FeatureLevel::kV1_2},
                            {OperandType::TENSOR_QUANT8_ASYMM, FeatureLevel::kV1_2},
                            {OperandType::TENSOR_QUANT8_ASYMM_SIGNED, FeatureLevel::kV1_3}});
}

Status validateArgMinMax(OperationContext& ctx) {
    NN_RETURN_IF_ERROR(ctx.expectInputCount({2}));
    NN_RETURN_IF_ERROR(ctx.expectOutputCount({1}));
    NN_RETURN_IF_ERROR(expectDataType(ctx, 0));
    NN_RETURN_IF_ERROR(ctx.expectInputTypes({ctx.inputType(0), kInt32}));
    NN_RETURN_IF_ERROR(ctx.expectOutputTypes({kTensorInt32}));
    NN_RETURN_IF_ERROR(expectRequiredInputs(ctx, {}));
    return expectAxis(ctx, 1, 0);
}

}  // namespace

Status validateSlice(OperationContext& ctx) {
    NN_RETURN_IF_ERROR(ctx.expectInputCount({3}));
    NN_RETURN_IF_ERROR(ctx.expectOutputCount({1}));
    NN_RETURN_IF_ERROR(expectDataType(ctx, 0));
    const OperandType type = ctx.inputType(0);
    NN_RETURN_IF_ERROR(ctx.expectInputTypes({type, kTensorInt32, kTensorInt32}));
    NN_RETURN_IF_ERROR(ctx.expectOutputTypes({type}));
    NN_RETURN_IF_ERROR(expectRequiredInputs(ctx, {}));
    NN_RETURN_IF_ERROR(expectOnePerDimension(ctx, 1, "begin"));
    NN_RETURN_IF_ERROR(expectOnePerDimension(ctx, 2, "size"));
    return expectSameQuant8(ctx, 0, 0);
}

Status validateSplit(OperationContext& ctx) {
    NN_RETURN_IF_ERROR(ctx.expectInputCount({3}));
    if (ctx.numOutputs() < 1) return ctx.fail("expected at least 1 output, got 0");
    NN_RETURN_IF_ERROR(expectDataType(ctx, 0));
    const OperandType type = ctx.inputType(0);
    NN_RETURN_IF_ERROR(ctx.expectInputTypes({type, kInt32, kInt32}));
    NN_RETURN_IF_ERROR(ctx.expectOutputTypes(std::vector<OperandType>(ctx.numOutputs(), type)));
    NN_RETURN_IF_ERROR(expectRequiredInputs(ctx, {}));
    NN_RETURN_IF_ERROR(expectAxis(ctx, 1, 0));
    NN_RETURN_IF_ERROR(expectPositiveInt32(ctx, 2, "number of splits"));
    if (auto splits = constantInt32(ctx, 2)) {
        if (static_cast<uint32_t>(*splits) != ctx.numOutputs())
            return ctx.fail("input 2 (number of splits) is ", *splits, " but the operation has ",
                            ctx.numOutputs(), " outputs");
        auto axis = constantInt32(ctx, 1);
        const auto& dims = ctx.input(0).dimensions;
        if (axis && !dims.empty()) {
            const uint32_t size = dims[*axis < 0 ? *axis + dims.size() : *axis];
            if (size % *splits != 0)
                return ctx.fail("input 2 (number of splits) ", *splits,
                                " does not evenly divide the axis size ", size);
        }
    }
    for (uint32_t j = 0; j < ctx.numOutputs(); ++j) NN_RETURN_IF_ERROR(expectSameQuant8(ctx, 0, j));
    return okStatus();
}

Status validateTile(OperationContext& ctx) {
    NN_RETURN_IF_ERROR(ctx.expectInputCount({2}));
    NN_RETURN_IF_ERROR(ctx.expectOutputCount({1}));
    NN_RETURN_IF_ERROR(expectDataType(ctx, 0));
    const OperandType type = ctx.inputType(0);
    NN_RETURN_IF_ERROR(ctx.expectInputTypes({type, kTensorInt32}));
    NN_RETURN_IF_ERROR(ctx.expectOutputTypes({type}));
    NN_RETURN_IF_ERROR(expectRequiredInputs(ctx, {}));
    NN_RETURN_IF_ERROR(expectOnePerDimension(ctx, 1, "multiples"));
    return expectSameQuant8(ctx, 0, 0);
}

Status validateTopkV2(OperationContext& ctx) {
    NN_RETURN_IF_ERROR(ctx.expectInputCount({2}));
    NN_RETURN_IF_ERROR(ctx.expectOutputCount({2}));
    NN_RETURN_IF_ERROR(expectDataType(ctx, 0));
    const OperandType type = ctx.inputType(0);
    NN_RETURN_IF_ERROR(ctx.expectInputTypes({type, kInt32}));
    NN_RETURN_IF_ERROR(ctx.expectOutputTypes({type, kTensorInt32}));
    NN_RETURN_IF_ERROR(expectRequiredInputs(ctx, {}));
    NN_RETURN_IF_ERROR(expectPositiveInt32(ctx, 1, "k"));
    const auto& dims = ctx.input(0).dimensions;
    auto k = constantInt32(ctx, 1);
    if (k && !dims.empty() && dims.back() != 0 && static_cast<uint32_t>(*k) > dims.back())
        return ctx.fail("input 1 (k) is ", *k, " but the last dimension of input 0 has only ",
                        dims.back(), " elements");
    return expectSameQuant8(ctx, 0, 0);
}

Status validateGather(OperationContext& ctx) {
    NN_RETURN_IF_ERROR(ctx.expectInputCount({3}));
    NN_RETURN_IF_ERROR(ctx.expectOutputCount({1}));
    NN_RETURN_IF_ERROR(expectDataType(ctx, 0));
    const OperandType type = ctx.inputType(0);
    NN_RETURN_IF_ERROR(ctx.expectInputTypes({type, kInt32, kTensorInt32}));
    NN_RETURN_IF_ERROR(ctx.expectOutputTypes({type}));
    NN_RETURN_IF_ERROR(expectRequiredInputs(ctx, {}));
    NN_RETURN_IF_ERROR(expectAxis(ctx, 1, 0));
    return expectSameQuant8(ctx, 0, 0);
}

Status validateArgmax(OperationContext& ctx) {
    return validateArgMinMax(ctx);
}
Status validateArgmin(OperationContext& ctx) {
    return validateArgMinMax(ctx);
}

Status validateReverse(OperationContext& ctx) {
    NN_RETURN_IF_ERROR(ctx.expectInputCount({2}));
    NN_RETURN_IF_ERROR(ctx.expectOutputCount({1}));
    NN_RETURN_IF_ERROR(
        expectTypeSince(ctx, 0,
                        {{OperandType::TENSOR_FLOAT16, FeatureLevel::kAidlV3},
                         {OperandType::TENSOR_FLOAT32, FeatureLevel::kAidlV3},
                         {OperandType::TENSOR_INT32, FeatureLevel::kAidlV3},
                         {OperandType::TENSOR_QUANT8_ASYMM, FeatureLevel::kAidlV3},
                         {OperandType::TENSOR_QUANT8_ASYMM_SIGNED, FeatureLevel::kAidlV3}}));
    const OperandType type = ctx.inputType(0);
    NN_RETURN_IF_ERROR(ctx.expectInputTypes({type, kTensorInt32}));
    NN_RETURN_IF_ERROR(ctx.expectOutputTypes({type}));
    NN_RETURN_IF_ERROR(expectRequiredInputs(ctx, {}));
    NN_RETURN_IF_ERROR(ctx.expectInputRankAtMost(0, 8));
    NN_RETURN_IF_ERROR(expectTensorRank(ctx, 1, 1, "axis"));
    NN_RETURN_IF_ERROR(expectInputDim(ctx, 1, 0, 1, "axis"));
    const auto& in = ctx.input(0).dimensions;
    const auto& out = ctx.output(0).dimensions;
    if (!in.empty() && !out.empty() && in.size() != out.size())
        return ctx.fail("output 0 has rank ", out.size(), ", expected the input's rank ",
                        in.size());
    auto axis = constantInt32Tensor(ctx, 1);
    if (axis && axis->size() == 1 && !in.empty() &&
        ((*axis)[0] < 0 || static_cast<uint32_t>((*axis)[0]) >= in.size()))
        return ctx.fail("input 1 (axis) must be in [0, ", in.size(), "), got ", (*axis)[0]);
    return expectSameQuant8(ctx, 0, 0);
}

}  // namespace nncosim
