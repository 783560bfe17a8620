// Validators of the operations that fit no family: RANDOM_MULTINOMIAL, DENSIFY (experimental)
// and OEM_OPERATION.
#include <vector>

#include "model/operations/OperationUtils.h"
#include "model/operations/Validators.h"

namespace nncosim {

Status validateRandomMultinomial(OperationContext& ctx) {
    NN_RETURN_IF_ERROR(ctx.expectInputCount({3}));
    NN_RETURN_IF_ERROR(ctx.expectOutputCount({1}));
    NN_RETURN_IF_ERROR(expectTypeSince(ctx, 0,
                                       {{OperandType::TENSOR_FLOAT32, FeatureLevel::kV1_2},
                                        {OperandType::TENSOR_FLOAT16, FeatureLevel::kV1_2}}));
    NN_RETURN_IF_ERROR(
        ctx.expectInputTypes({ctx.inputType(0), OperandType::INT32, OperandType::TENSOR_INT32}));
    NN_RETURN_IF_ERROR(ctx.expectOutputTypes({OperandType::TENSOR_INT32}));
    NN_RETURN_IF_ERROR(expectRequiredInputs(ctx, {}));
    NN_RETURN_IF_ERROR(expectTensorRank(ctx, 0, 2, "logits"));
    NN_RETURN_IF_ERROR(expectTensorRank(ctx, 2, 1, "seeds"));
    return expectInputDim(ctx, 2, 0, 2, "seeds");
}

// Inputs: the non-zero values, the traversal order, the block map, the dimension formats and
// sizes, then an (array segments, array indices) pair per traversed dimension.
Status validateDensify(OperationContext& ctx) {
    constexpr uint32_t kMinInputs = 5;
    constexpr uint32_t kTraversalOrder = 1;
    constexpr uint32_t kBlockMap = 2;
    if (ctx.numInputs() < kMinInputs)
        return ctx.fail("expected at least ", kMinInputs, " inputs, got ", ctx.numInputs());
    // Each dimension adds a pair (segments, indices), even when the order's length is unknown.
    if ((ctx.numInputs() - kMinInputs) % 2 != 0)
        return ctx.fail("expected ", kMinInputs, " inputs plus a pair per dimension, got ",
                        ctx.numInputs());
    NN_RETURN_IF_ERROR(ctx.expectOutputCount({1}));
    constexpr FeatureLevel kExp = FeatureLevel::kExperimental;
    NN_RETURN_IF_ERROR(expectTypeSince(ctx, 0,
                                       {{OperandType::TENSOR_FLOAT16, kExp},
                                        {OperandType::TENSOR_FLOAT32, kExp},
                                        {OperandType::TENSOR_QUANT8_SYMM, kExp},
                                        {OperandType::TENSOR_QUANT8_ASYMM, kExp},
                                        {OperandType::TENSOR_QUANT8_ASYMM_SIGNED, kExp},
                                        {OperandType::TENSOR_BOOL8, kExp},
                                        {OperandType::TENSOR_INT32, kExp},
                                        {OperandType::TENSOR_QUANT16_SYMM, kExp},
                                        {OperandType::TENSOR_QUANT16_ASYMM, kExp}}));
    std::vector<OperandType> inputs(ctx.numInputs(), OperandType::TENSOR_INT32);
    inputs[0] = ctx.inputType(0);
    NN_RETURN_IF_ERROR(ctx.expectInputTypes(inputs));
    NN_RETURN_IF_ERROR(ctx.expectOutputTypes({ctx.inputType(0)}));
    NN_RETURN_IF_ERROR(expectSameQuantization(ctx, 0, 0));
    // The block map and the per-dimension index arrays are optional (dense dimensions).
    std::vector<uint32_t> optional = {kBlockMap};
    for (uint32_t i = kMinInputs; i < ctx.numInputs(); ++i) optional.push_back(i);
    NN_RETURN_IF_ERROR(expectRequiredInputs(ctx, optional));
    for (uint32_t i = 0; i < ctx.numInputs(); ++i)
        NN_RETURN_IF_ERROR(expectInputRanks(ctx, {{i, 1}}));
    const auto& order = ctx.input(kTraversalOrder).dimensions;
    if (order.size() == 1 && order[0] != 0 && ctx.numInputs() != kMinInputs + 2 * order[0])
        return ctx.fail("input 1 (traversal order) has ", order[0],
                        " dimensions, so the operation "
                        "needs ",
                        kMinInputs + 2 * order[0], " inputs, got ", ctx.numInputs());
    return okStatus();
}

// OEM operations have vendor-defined semantics: any operands are acceptable.
Status validateOemOperation(OperationContext&) {
    return okStatus();
}

}  // namespace nncosim
