// Validators of the table lookups and hashing of NNAPI 1.0: EMBEDDING_LOOKUP, HASHTABLE_LOOKUP
// and LSH_PROJECTION.
#include "model/operations/OperationUtils.h"
#include "model/operations/Validators.h"

namespace nncosim {
namespace {

constexpr OperandType kTensorInt32 = OperandType::TENSOR_INT32;

/// LSHProjectionType values: SPARSE_DEPRECATED, DENSE, and SPARSE (NNAPI 1.2).
constexpr int32_t kLshSparseDeprecated = 1;
constexpr int32_t kLshSparse = 3;

}  // namespace

Status validateEmbeddingLookup(OperationContext& ctx) {
    NN_RETURN_IF_ERROR(ctx.expectInputCount({2}));
    NN_RETURN_IF_ERROR(ctx.expectOutputCount({1}));
    NN_RETURN_IF_ERROR(
        expectTypeSince(ctx, 1,
                        {{OperandType::TENSOR_FLOAT32, FeatureLevel::kV1_0},
                         {OperandType::TENSOR_INT32, FeatureLevel::kV1_2},
                         {OperandType::TENSOR_QUANT8_ASYMM, FeatureLevel::kV1_2},
                         {OperandType::TENSOR_FLOAT16, FeatureLevel::kV1_3},
                         {OperandType::TENSOR_QUANT8_ASYMM_SIGNED, FeatureLevel::kV1_3}}));
    const OperandType type = ctx.inputType(1);
    NN_RETURN_IF_ERROR(ctx.expectInputTypes({kTensorInt32, type}));
    NN_RETURN_IF_ERROR(ctx.expectOutputTypes({type}));
    NN_RETURN_IF_ERROR(expectRequiredInputs(ctx, {}));
    NN_RETURN_IF_ERROR(expectTensorRank(ctx, 0, 1, "lookups"));
    NN_RETURN_IF_ERROR(expectInputRankAtLeast(ctx, 1, 2, "values"));
    return expectSameQuant8(ctx, 1, 0);
}

Status validateHashtableLookup(OperationContext& ctx) {
    NN_RETURN_IF_ERROR(ctx.expectInputCount({3}));
    NN_RETURN_IF_ERROR(ctx.expectOutputCount({2}));
    NN_RETURN_IF_ERROR(expectTypeSince(ctx, 2,
                                       {{OperandType::TENSOR_FLOAT32, FeatureLevel::kV1_0},
                                        {OperandType::TENSOR_INT32, FeatureLevel::kV1_0},
                                        {OperandType::TENSOR_QUANT8_ASYMM, FeatureLevel::kV1_0}}));
    const OperandType type = ctx.inputType(2);
    NN_RETURN_IF_ERROR(ctx.expectInputTypes({kTensorInt32, kTensorInt32, type}));
    NN_RETURN_IF_ERROR(ctx.expectOutputTypes({type, OperandType::TENSOR_QUANT8_ASYMM}));
    NN_RETURN_IF_ERROR(expectRequiredInputs(ctx, {}));
    NN_RETURN_IF_ERROR(expectTensorRank(ctx, 0, 1, "lookups"));
    NN_RETURN_IF_ERROR(expectTensorRank(ctx, 1, 1, "keys"));
    NN_RETURN_IF_ERROR(expectInputRankAtLeast(ctx, 2, 2, "values"));
    const auto& keys = ctx.input(1).dimensions;
    if (!keys.empty()) NN_RETURN_IF_ERROR(expectInputDim(ctx, 2, 0, keys[0], "values"));
    NN_RETURN_IF_ERROR(expectSameQuant8(ctx, 2, 0));
    // The hits are booleans stored as quant8 with the identity quantization.
    return expectOutputQuantization(ctx, 1, 1.0f, 0);
}

Status validateLshProjection(OperationContext& ctx) {
    NN_RETURN_IF_ERROR(ctx.expectInputCount({4}));
    NN_RETURN_IF_ERROR(ctx.expectOutputCount({1}));
    NN_RETURN_IF_ERROR(expectTypeSince(ctx, 0,
                                       {{OperandType::TENSOR_FLOAT32, FeatureLevel::kV1_0},
                                        {OperandType::TENSOR_FLOAT16, FeatureLevel::kV1_2}}));
    NN_RETURN_IF_ERROR(expectTypeSince(ctx, 1,
                                       {{OperandType::TENSOR_FLOAT32, FeatureLevel::kV1_0},
                                        {OperandType::TENSOR_INT32, FeatureLevel::kV1_0},
                                        {OperandType::TENSOR_QUANT8_ASYMM, FeatureLevel::kV1_0},
                                        {OperandType::TENSOR_FLOAT16, FeatureLevel::kV1_2}}));
    const OperandType hashType = ctx.inputType(0);
    NN_RETURN_IF_ERROR(
        ctx.expectInputTypes({hashType, ctx.inputType(1), hashType, OperandType::INT32}));
    NN_RETURN_IF_ERROR(ctx.expectOutputTypes({kTensorInt32}));
    // The weight is optional: without it every input element weighs 1.0.
    NN_RETURN_IF_ERROR(expectRequiredInputs(ctx, {2}));
    NN_RETURN_IF_ERROR(expectTensorRank(ctx, 0, 2, "hash functions"));
    NN_RETURN_IF_ERROR(expectInputRankAtLeast(ctx, 1, 1, "input"));
    const auto& hash = ctx.input(0).dimensions;
    if (hash.size() == 2 && hash[1] > 32)
        return ctx.fail("input 0 (hash functions) gives ", hash[1],
                        " bits per hash function, at most 32 allowed");
    if (!ctx.isOmitted(2)) {
        NN_RETURN_IF_ERROR(expectTensorRank(ctx, 2, 1, "weight"));
        const auto& in = ctx.input(1).dimensions;
        if (!in.empty() && in[0] != 0)
            NN_RETURN_IF_ERROR(expectInputDim(ctx, 2, 0, in[0], "weight"));
    }
    NN_RETURN_IF_ERROR(
        expectInt32InRange(ctx, 3, kLshSparseDeprecated, kLshSparse, "projection type"));
    if (constantInt32(ctx, 3) == kLshSparse) ctx.requireFeatureLevel(FeatureLevel::kV1_2);
    return okStatus();
}

}  // namespace nncosim
