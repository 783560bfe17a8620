// Table lookups and hashing: EMBEDDING_LOOKUP, HASHTABLE_LOOKUP, LSH_PROJECTION, and the sampling
// operation RANDOM_MULTINOMIAL.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <random>

#include "golden/ops/FarmHash.h"
#include "golden/ops/OpUtils.h"
#include "golden/ops/Operations.h"

namespace nncosim::golden {
namespace {

/// Shape of a lookup result: `count` rows of the table's rows.
std::vector<uint32_t> lookupShape(uint32_t count, const std::vector<uint32_t>& table) {
    std::vector<uint32_t> dims = table;
    dims[0] = count;
    return dims;
}

size_t rowBytes(const ExecutionContext& ctx, uint32_t table) {
    return ctx.inputDim(table, 0) == 0
               ? 0
               : byteSize(ctx.inputType(table), ctx.inputShape(table)) / ctx.inputDim(table, 0);
}

// LSH_PROJECTION types.
constexpr int32_t kLshSparseDeprecated = 1;
constexpr int32_t kLshDense = 2;
constexpr int32_t kLshSparse = 3;

/// Sign of sum_i weight_i * fingerprint(seed bytes ++ input row i), as 1 or 0. The seed is hashed
/// as a float32 whatever the type of the hash tensor.
int lshSignBit(const uint8_t* input, uint32_t rows, size_t rowSize, const float* weights,
               float seed) {
    std::vector<uint8_t> key(sizeof(seed) + rowSize);
    std::memcpy(key.data(), &seed, sizeof(seed));
    double score = 0.0;
    for (uint32_t i = 0; i < rows; ++i) {
        std::memcpy(key.data() + sizeof(seed), input + i * rowSize, rowSize);
        const auto fingerprint =
            static_cast<int64_t>(farmhash::fingerprint64(key.data(), key.size()));
        const double value = static_cast<double>(fingerprint);
        score += weights ? static_cast<double>(weights[i]) * value : value;
    }
    return score > 0 ? 1 : 0;
}

}  // namespace

Status executeEmbeddingLookup(ExecutionContext& ctx) {
    constexpr uint32_t kLookups = 0, kValues = 1;
    if (ctx.inputRank(kLookups) != 1 || ctx.inputRank(kValues) < 2) {
        return ctx.fail("lookups must be 1-D and values at least 2-D");
    }
    const uint32_t count = ctx.inputDim(kLookups, 0);
    const uint32_t rows = ctx.inputDim(kValues, 0);
    NN_RETURN_IF_ERROR(ctx.setOutputShape(0, lookupShape(count, ctx.inputShape(kValues))));
    const size_t bytes = rowBytes(ctx, kValues);
    const int32_t* lookups = ctx.inputData<int32_t>(kLookups);
    for (uint32_t i = 0; i < count; ++i) {
        if (lookups[i] < 0 || static_cast<uint32_t>(lookups[i]) >= rows) {
            return ctx.fail("lookup ", i, " is ", lookups[i], ", outside [0, ", rows, ")");
        }
        std::memcpy(ctx.outputBytes(0) + i * bytes, ctx.inputBytes(kValues) + lookups[i] * bytes,
                    bytes);
    }
    return okStatus();
}

Status executeHashtableLookup(ExecutionContext& ctx) {
    constexpr uint32_t kLookups = 0, kKeys = 1, kValues = 2;
    if (ctx.inputRank(kLookups) != 1 || ctx.inputRank(kKeys) != 1 || ctx.inputRank(kValues) < 1) {
        return ctx.fail("lookups and keys must be 1-D");
    }
    const uint32_t count = ctx.inputDim(kLookups, 0);
    const uint32_t rows = ctx.inputDim(kValues, 0);
    if (ctx.inputDim(kKeys, 0) != rows) {
        return ctx.fail(ctx.inputDim(kKeys, 0), " keys for ", rows, " value rows");
    }
    NN_RETURN_IF_ERROR(ctx.setOutputShape(0, lookupShape(count, ctx.inputShape(kValues))));
    NN_RETURN_IF_ERROR(ctx.setOutputShape(1, {count}));
    const size_t bytes = rowBytes(ctx, kValues);
    const int32_t* keys = ctx.inputData<int32_t>(kKeys);
    const int32_t* lookups = ctx.inputData<int32_t>(kLookups);
    uint8_t* hits = ctx.outputData<uint8_t>(1);
    // Keys are sorted ascending; a miss leaves a zero row and a zero hit.
    for (uint32_t i = 0; i < count; ++i) {
        const int32_t* found = std::lower_bound(keys, keys + rows, lookups[i]);
        hits[i] = found != keys + rows && *found == lookups[i];
        if (hits[i]) {
            std::memcpy(ctx.outputBytes(0) + i * bytes,
                        ctx.inputBytes(kValues) + (found - keys) * bytes, bytes);
        }
    }
    return okStatus();
}

Status executeLshProjection(ExecutionContext& ctx) {
    constexpr uint32_t kHash = 0, kInput = 1, kWeight = 2, kType = 3;
    if (ctx.isOmitted(kType)) return ctx.fail("the projection type is required");
    if (ctx.inputRank(kHash) != 2 || ctx.inputRank(kInput) < 1) {
        return ctx.fail("the hash must be 2-D and the input at least 1-D");
    }
    const uint32_t numHash = ctx.inputDim(kHash, 0);
    const uint32_t numBits = ctx.inputDim(kHash, 1);
    const uint32_t rows = ctx.inputDim(kInput, 0);
    if (numBits > 32) return ctx.fail("at most 32 bits per hash, got ", numBits);
    const int32_t type = ctx.scalar<int32_t>(kType);
    const bool hasWeight = !ctx.isOmitted(kWeight);
    if (type == kLshDense) {
        if (!hasWeight || ctx.inputShape(kWeight) != std::vector<uint32_t>{rows}) {
            return ctx.fail("DENSE needs one weight per input row");
        }
        NN_RETURN_IF_ERROR(ctx.setOutputShape(0, {numHash * numBits}));
    } else if (type == kLshSparse || type == kLshSparseDeprecated) {
        if (hasWeight) return ctx.fail("SPARSE takes no weight");
        NN_RETURN_IF_ERROR(ctx.setOutputShape(0, {numHash}));
    } else {
        return ctx.fail("unknown projection type ", type);
    }

    const FloatInput seeds(ctx, kHash);
    std::vector<float> weights;
    if (hasWeight) weights = ctx.inputAsFloat(kWeight);
    const size_t inputRowBytes = rows == 0 ? 0 : rowBytes(ctx, kInput);
    int32_t* out = ctx.outputData<int32_t>(0);
    for (uint32_t i = 0; i < numHash; ++i) {
        int32_t signature = 0;
        for (uint32_t j = 0; j < numBits; ++j) {
            const int bit =
                lshSignBit(ctx.inputBytes(kInput), rows, inputRowBytes,
                           hasWeight ? weights.data() : nullptr, seeds.data()[i * numBits + j]);
            if (type == kLshDense) {
                *out++ = bit;
            } else {
                signature = static_cast<int32_t>((static_cast<uint32_t>(signature) << 1) | bit);
            }
        }
        if (type == kLshSparse) signature += static_cast<int32_t>(i * (uint64_t{1} << numBits));
        if (type != kLshDense) *out++ = signature;
    }
    return okStatus();
}

Status executeRandomMultinomial(ExecutionContext& ctx) {
    constexpr uint32_t kLogits = 0, kSamples = 1, kSeeds = 2;
    if (ctx.inputRank(kLogits) != 2 || ctx.inputCount(kSeeds) < 2) {
        return ctx.fail("logits must be 2-D and two seeds are needed");
    }
    const int32_t samples = ctx.scalar<int32_t>(kSamples);
    if (samples < 0) return ctx.fail("negative sample count ", samples);
    const uint32_t batches = ctx.inputDim(kLogits, 0);
    const uint32_t classes = ctx.inputDim(kLogits, 1);
    NN_RETURN_IF_ERROR(ctx.setOutputShape(0, {batches, static_cast<uint32_t>(samples)}));

    const int32_t* seeds = ctx.inputData<int32_t>(kSeeds);
    std::seed_seq seedSequence{seeds[0], seeds[1]};
    std::mt19937_64 generator(seedSequence);
    std::uniform_real_distribution<double> uniform(0.0, 1.0);
    const FloatInput logits(ctx, kLogits);
    int32_t* out = ctx.outputData<int32_t>(0);
    std::vector<double> cdf(classes);
    for (uint32_t b = 0; b < batches; ++b) {
        // Unnormalized softmax over the finite logits, as a running sum.
        const float* row = logits.data() + size_t{b} * classes;
        float max = std::numeric_limits<float>::lowest();
        for (uint32_t c = 0; c < classes; ++c) {
            if (std::isfinite(row[c])) max = std::max(max, row[c]);
        }
        double total = 0.0;
        for (uint32_t c = 0; c < classes; ++c) {
            if (std::isfinite(row[c])) total += std::exp(static_cast<double>(row[c]) - max);
            cdf[c] = total;
        }
        for (int32_t s = 0; s < samples; ++s) {
            const double target = uniform(generator) * total;
            *out++ = static_cast<int32_t>(std::upper_bound(cdf.begin(), cdf.end(), target) -
                                          cdf.begin());
        }
    }
    return okStatus();
}

}  // namespace nncosim::golden
