// Validators of the recurrent layers: LSTM (single step, unidirectional and bidirectional
// sequences, and the two quantized variants), RNN (single step and sequences) and SVDF.
#include <algorithm>
#include <cmath>
#include <optional>
#include <vector>

#include "model/operations/OperationUtils.h"
#include "model/operations/Validators.h"

namespace nncosim {
namespace {

constexpr OperandType kInt32 = OperandType::INT32;
constexpr OperandType kBool = OperandType::BOOL;
constexpr OperandType kQuant8 = OperandType::TENSOR_QUANT8_ASYMM;
constexpr OperandType kQuant8Signed = OperandType::TENSOR_QUANT8_ASYMM_SIGNED;
constexpr OperandType kQuant8Symm = OperandType::TENSOR_QUANT8_SYMM;
constexpr OperandType kQuant16Symm = OperandType::TENSOR_QUANT16_SYMM;
constexpr OperandType kTensorInt32 = OperandType::TENSOR_INT32;

/// The float recurrent layers take TENSOR_FLOAT32, or TENSOR_FLOAT16 since NNAPI 1.2.
Status expectFloatData(OperationContext& ctx, FeatureLevel float32Since) {
    return expectTypeSince(ctx, 0,
                           {{OperandType::TENSOR_FLOAT32, float32Since},
                            {OperandType::TENSOR_FLOAT16, FeatureLevel::kV1_2}});
}

bool present(const OperationContext& ctx, uint32_t input) {
    return !ctx.isOmitted(input);
}

/// Inputs of one LSTM cell, as offsets from `base`: the input-gate tensors (1, 5, 12) are left
/// out together for CIFG; the peephole weights (9, 10, 11) and projection (16, 17) are optional;
/// the layer-normalization weights (`layerNorm` .. `layerNorm` + 3) follow their own rule.
struct LstmCell {
    uint32_t base;
    std::optional<uint32_t> layerNorm;
};

Status expectLstmCell(const OperationContext& ctx, const LstmCell& cell) {
    const uint32_t b = cell.base;
    const bool cifg = !present(ctx, b + 1);
    for (uint32_t i : {b + 5, b + 12}) {
        if (present(ctx, i) == cifg)
            return ctx.fail("inputs ", b + 1, ", ", b + 5, " and ", b + 12,
                            " (input-gate weights and bias) must all have values or all be "
                            "omitted (CIFG)");
    }
    const bool peephole = present(ctx, b + 10);
    if (present(ctx, b + 11) != peephole)
        return ctx.fail("inputs ", b + 10, " and ", b + 11,
                        " (cell-to-forget and cell-to-output weights) must both have values or "
                        "both be omitted");
    if (present(ctx, b + 9) != (peephole && !cifg))
        return ctx.fail("input ", b + 9,
                        " (cell-to-input weights) must have a value exactly when "
                        "peephole weights are used without CIFG");
    if (present(ctx, b + 17) && !present(ctx, b + 16))
        return ctx.fail("input ", b + 17, " (projection bias) needs projection weights (input ",
                        b + 16, ")");
    if (cell.layerNorm) {
        const uint32_t ln = *cell.layerNorm;
        const bool layerNorm = present(ctx, ln + 1);
        for (uint32_t i : {ln + 2, ln + 3}) {
            if (present(ctx, i) != layerNorm)
                return ctx.fail("inputs ", ln + 1, " to ", ln + 3,
                                " (layer normalization weights) must all have values or all be "
                                "omitted");
        }
        if (present(ctx, ln) != (layerNorm && !cifg))
            return ctx.fail("input ", ln,
                            " (input layer normalization weights) must have a value "
                            "exactly when layer normalization is used without CIFG");
    }
    return okStatus();
}

/// The tensors an LSTM cell needs whatever its options (offsets from `base`).
std::vector<uint32_t> lstmOptionalInputs(uint32_t base) {
    return {base + 1, base + 5, base + 9, base + 10, base + 11, base + 12, base + 16, base + 17};
}

/// The activation of the float LSTMs: 0 none, 1 relu, 3 relu6, 4 tanh, 6 sigmoid.
Status expectLstmActivation(const OperationContext& ctx, uint32_t input) {
    auto v = constantInt32(ctx, input);
    if (v && *v != 0 && *v != 1 && *v != 3 && *v != 4 && *v != 6)
        return ctx.fail("input ", input, " (activation) must be 0, 1, 3, 4 or 6, got ", *v);
    return okStatus();
}

/// Clipping thresholds are >= 0 (0 disables clipping).
Status expectClip(const OperationContext& ctx, uint32_t input, const char* what) {
    auto v = constantFloat(ctx, input);
    if (v && !(*v >= 0.0f))
        return ctx.fail("input ", input, " (", what, ") must be >= 0, got ", *v);
    return okStatus();
}

/// Input `input` has the given scale and zero point.
Status expectInputQuantization(const OperationContext& ctx, uint32_t input, float scale,
                               int32_t zeroPoint, const char* what) {
    const Operand& op = ctx.input(input);
    if (op.scale != scale || op.zeroPoint != zeroPoint)
        return ctx.fail("input ", input, " (", what, ") must have scale ", scale,
                        " and zero point ", zeroPoint, ", got scale ", op.scale, " and zero point ",
                        op.zeroPoint);
    return okStatus();
}

/// Sequence layers keep their state outputs optional; the NNAPI 1.3 forms add them.
void requireLevelForStateOutputs(OperationContext& ctx, bool withState) {
    ctx.requireFeatureLevel(withState ? FeatureLevel::kV1_3 : FeatureLevel::kV1_2);
}

}  // namespace

Status validateLstm(OperationContext& ctx) {
    NN_RETURN_IF_ERROR(ctx.expectInputCount({23, 27}));
    NN_RETURN_IF_ERROR(ctx.expectOutputCount({4}));
    NN_RETURN_IF_ERROR(expectFloatData(ctx, FeatureLevel::kV1_0));
    const OperandType t = ctx.inputType(0);
    std::vector<OperandType> inputs(20, t);
    inputs.insert(inputs.end(), {kInt32, floatScalarFor(t), floatScalarFor(t)});
    const bool layerNorm = ctx.numInputs() == 27;
    if (layerNorm) {
        inputs.insert(inputs.end(), 4, t);
        ctx.requireFeatureLevel(FeatureLevel::kV1_2);
    }
    NN_RETURN_IF_ERROR(ctx.expectInputTypes(inputs));
    NN_RETURN_IF_ERROR(ctx.expectOutputTypes({t, t, t, t}));
    std::vector<uint32_t> optional = lstmOptionalInputs(0);
    if (layerNorm) optional.insert(optional.end(), {23, 24, 25, 26});
    NN_RETURN_IF_ERROR(expectRequiredInputs(ctx, optional));
    NN_RETURN_IF_ERROR(
        expectLstmCell(ctx, {0, layerNorm ? std::optional<uint32_t>(23) : std::nullopt}));
    NN_RETURN_IF_ERROR(expectInputRanks(
        ctx,
        {{0, 2},  {1, 2},  {2, 2},  {3, 2},  {4, 2},  {5, 2},  {6, 2},  {7, 2},  {8, 2},  {9, 1},
         {10, 1}, {11, 1}, {12, 1}, {13, 1}, {14, 1}, {15, 1}, {16, 2}, {17, 1}, {18, 2}, {19, 2}},
        optional));
    if (layerNorm) {
        NN_RETURN_IF_ERROR(expectInputRanks(ctx, {{23, 1}, {24, 1}, {25, 1}, {26, 1}}, optional));
    }
    NN_RETURN_IF_ERROR(expectLstmActivation(ctx, 20));
    NN_RETURN_IF_ERROR(expectClip(ctx, 21, "cell clip"));
    return expectClip(ctx, 22, "projection clip");
}

Status validateUnidirectionalSequenceLstm(OperationContext& ctx) {
    NN_RETURN_IF_ERROR(ctx.expectInputCount({28}));
    NN_RETURN_IF_ERROR(ctx.expectOutputCount({1, 3}));
    NN_RETURN_IF_ERROR(expectFloatData(ctx, FeatureLevel::kV1_2));
    const OperandType t = ctx.inputType(0);
    std::vector<OperandType> inputs(20, t);
    inputs.insert(inputs.end(), {kInt32, floatScalarFor(t), floatScalarFor(t), kBool});
    inputs.insert(inputs.end(), 4, t);
    NN_RETURN_IF_ERROR(ctx.expectInputTypes(inputs));
    NN_RETURN_IF_ERROR(ctx.expectOutputTypes(std::vector<OperandType>(ctx.numOutputs(), t)));
    std::vector<uint32_t> optional = lstmOptionalInputs(0);
    optional.insert(optional.end(), {24, 25, 26, 27});
    NN_RETURN_IF_ERROR(expectRequiredInputs(ctx, optional));
    NN_RETURN_IF_ERROR(expectLstmCell(ctx, {0, 24}));
    NN_RETURN_IF_ERROR(expectInputRanks(
        ctx, {{0, 3},  {1, 2},  {2, 2},  {3, 2},  {4, 2},  {5, 2},  {6, 2},  {7, 2},
              {8, 2},  {9, 1},  {10, 1}, {11, 1}, {12, 1}, {13, 1}, {14, 1}, {15, 1},
              {16, 2}, {17, 1}, {18, 2}, {19, 2}, {24, 1}, {25, 1}, {26, 1}, {27, 1}},
        optional));
    NN_RETURN_IF_ERROR(expectLstmActivation(ctx, 20));
    NN_RETURN_IF_ERROR(expectClip(ctx, 21, "cell clip"));
    NN_RETURN_IF_ERROR(expectClip(ctx, 22, "projection clip"));
    requireLevelForStateOutputs(ctx, ctx.numOutputs() == 3);
    return okStatus();
}

Status validateBidirectionalSequenceLstm(OperationContext& ctx) {
    NN_RETURN_IF_ERROR(ctx.expectInputCount({61}));
    NN_RETURN_IF_ERROR(ctx.expectOutputCount({1, 2, 5, 6}));
    NN_RETURN_IF_ERROR(expectFloatData(ctx, FeatureLevel::kV1_2));
    const OperandType t = ctx.inputType(0);
    std::vector<OperandType> inputs(48, t);
    inputs.insert(inputs.end(), {kInt32, floatScalarFor(t), floatScalarFor(t), kBool, kBool});
    inputs.insert(inputs.end(), 8, t);
    NN_RETURN_IF_ERROR(ctx.expectInputTypes(inputs));
    NN_RETURN_IF_ERROR(ctx.expectOutputTypes(std::vector<OperandType>(ctx.numOutputs(), t)));
    // Forward cell at 1..17, backward cell at 18..34, aux input 39 with its weights 40..47,
    // layer normalization weights 53..56 (forward) and 57..60 (backward).
    std::vector<uint32_t> optional = lstmOptionalInputs(0);
    for (uint32_t i : lstmOptionalInputs(17)) optional.push_back(i);
    for (uint32_t i = 39; i <= 47; ++i) optional.push_back(i);
    for (uint32_t i = 53; i <= 60; ++i) optional.push_back(i);
    NN_RETURN_IF_ERROR(expectRequiredInputs(ctx, optional));
    NN_RETURN_IF_ERROR(expectLstmCell(ctx, {0, 53}));
    NN_RETURN_IF_ERROR(expectLstmCell(ctx, {17, 57}));
    const bool auxWeights = present(ctx, 41);
    for (uint32_t i = 40; i <= 47; ++i) {
        if (present(ctx, i) != auxWeights)
            return ctx.fail(
                "inputs 40 to 47 (auxiliary weights) must all have values or all be "
                "omitted");
    }
    if (auxWeights && !present(ctx, 39))
        return ctx.fail("inputs 40 to 47 (auxiliary weights) need the auxiliary input (input 39)");
    NN_RETURN_IF_ERROR(
        expectInputRanks(ctx, {{0, 3}, {35, 2}, {36, 2}, {37, 2}, {38, 2}, {39, 3}}, optional));
    for (uint32_t b : {0u, 17u}) {
        for (uint32_t i = 1; i <= 17; ++i) {
            const uint32_t rank = i <= 8 || i == 16 ? 2 : 1;  // weight matrices; vectors
            NN_RETURN_IF_ERROR(expectInputRanks(ctx, {{b + i, rank}}, optional));
        }
    }
    for (uint32_t i = 40; i <= 47; ++i)
        NN_RETURN_IF_ERROR(expectInputRanks(ctx, {{i, 2}}, optional));
    for (uint32_t i = 53; i <= 60; ++i)
        NN_RETURN_IF_ERROR(expectInputRanks(ctx, {{i, 1}}, optional));
    NN_RETURN_IF_ERROR(expectLstmActivation(ctx, 48));
    NN_RETURN_IF_ERROR(expectClip(ctx, 49, "cell clip"));
    NN_RETURN_IF_ERROR(expectClip(ctx, 50, "projection clip"));
    // Merged outputs leave out the backward output: 1 or 5 outputs, otherwise 2 or 6.
    if (auto merge = constantBool(ctx, 51)) {
        const uint32_t n = ctx.numOutputs();
        if (*merge != (n == 1 || n == 5))
            return ctx.fail("input 51 (merge outputs) is ", *merge ? "true" : "false",
                            ", which needs ", *merge ? "1 or 5" : "2 or 6", " outputs, got ", n);
    }
    requireLevelForStateOutputs(ctx, ctx.numOutputs() >= 5);
    return okStatus();
}

Status validateQuantizedLstm(OperationContext& ctx) {
    NN_RETURN_IF_ERROR(ctx.expectInputCount({32}));
    NN_RETURN_IF_ERROR(ctx.expectOutputCount({3}));
    std::vector<OperandType> inputs = {kQuant8Signed};
    inputs.insert(inputs.end(), 8, kQuant8Symm);   // input-to-* and recurrent-to-* weights
    inputs.insert(inputs.end(), 3, kQuant16Symm);  // cell-to-* (peephole) weights
    inputs.insert(inputs.end(), 4, kTensorInt32);  // gate biases
    inputs.insert(inputs.end(), {kQuant8Symm, kTensorInt32, kQuant8Signed, kQuant16Symm});
    inputs.insert(inputs.end(), 4, kQuant16Symm);                 // layer normalization weights
    inputs.insert(inputs.end(), 6, OperandType::FLOAT32);         // clips, intermediate scales
    inputs.insert(inputs.end(), {kInt32, OperandType::FLOAT32});  // hidden state quantization
    NN_RETURN_IF_ERROR(ctx.expectInputTypes(inputs));
    NN_RETURN_IF_ERROR(ctx.expectOutputTypes({kQuant8Signed, kQuant16Symm, kQuant8Signed}));
    std::vector<uint32_t> optional = lstmOptionalInputs(0);
    optional.insert(optional.end(), {20, 21, 22, 23});
    NN_RETURN_IF_ERROR(expectRequiredInputs(ctx, optional));
    NN_RETURN_IF_ERROR(expectLstmCell(ctx, {0, 20}));
    NN_RETURN_IF_ERROR(expectInputRanks(
        ctx, {{0, 2},  {1, 2},  {2, 2},  {3, 2},  {4, 2},  {5, 2},  {6, 2},  {7, 2},
              {8, 2},  {9, 1},  {10, 1}, {11, 1}, {12, 1}, {13, 1}, {14, 1}, {15, 1},
              {16, 2}, {17, 1}, {18, 2}, {19, 2}, {20, 1}, {21, 1}, {22, 1}, {23, 1}},
        optional));
    NN_RETURN_IF_ERROR(expectClip(ctx, 24, "cell clip"));
    NN_RETURN_IF_ERROR(expectClip(ctx, 25, "projection clip"));
    ctx.requireFeatureLevel(FeatureLevel::kV1_3);
    return okStatus();
}

Status validateQuantized16BitLstm(OperationContext& ctx) {
    NN_RETURN_IF_ERROR(ctx.expectInputCount({15}));
    NN_RETURN_IF_ERROR(ctx.expectOutputCount({2}));
    std::vector<OperandType> inputs(9, kQuant8);
    inputs.insert(inputs.end(), 4, kTensorInt32);
    inputs.insert(inputs.end(), {kQuant16Symm, kQuant8});
    NN_RETURN_IF_ERROR(ctx.expectInputTypes(inputs));
    NN_RETURN_IF_ERROR(ctx.expectOutputTypes({kQuant16Symm, kQuant8}));
    NN_RETURN_IF_ERROR(expectRequiredInputs(ctx, {}));
    NN_RETURN_IF_ERROR(expectInputRanks(ctx, {{0, 2},
                                              {1, 2},
                                              {2, 2},
                                              {3, 2},
                                              {4, 2},
                                              {5, 2},
                                              {6, 2},
                                              {7, 2},
                                              {8, 2},
                                              {9, 1},
                                              {10, 1},
                                              {11, 1},
                                              {12, 1},
                                              {13, 2},
                                              {14, 2}}));
    // Fixed quantization: activations in [-1, 127/128], the cell state in [-16, 16).
    constexpr float kActivationScale = 1.0f / 128.0f;
    constexpr int32_t kActivationZeroPoint = 128;
    constexpr float kCellStateScale = 16.0f / 32768.0f;
    NN_RETURN_IF_ERROR(
        expectInputQuantization(ctx, 0, kActivationScale, kActivationZeroPoint, "input"));
    NN_RETURN_IF_ERROR(expectInputQuantization(ctx, 13, kCellStateScale, 0, "previous cell state"));
    NN_RETURN_IF_ERROR(expectInputQuantization(ctx, 14, kActivationScale, kActivationZeroPoint,
                                               "previous output"));
    const Operand& weights = ctx.input(1);
    for (uint32_t i = 2; i <= 8; ++i) {
        NN_RETURN_IF_ERROR(
            expectInputQuantization(ctx, i, weights.scale, weights.zeroPoint, "weights"));
    }
    // Biases: zero point 0, scale input_scale * weights_scale (with the reference's tolerance).
    const float biasScale = kActivationScale * weights.scale;
    for (uint32_t i = 9; i <= 12; ++i) {
        const Operand& bias = ctx.input(i);
        if (bias.zeroPoint != 0 ||
            std::abs(bias.scale - biasScale) > 1e-6f * std::min(bias.scale, biasScale))
            return ctx.fail("input ", i, " (bias) must have scale ", biasScale,
                            " (input scale * weights scale) and zero point 0, got scale ",
                            bias.scale, " and zero point ", bias.zeroPoint);
    }
    NN_RETURN_IF_ERROR(expectOutputQuantization(ctx, 0, kCellStateScale, 0));
    NN_RETURN_IF_ERROR(expectOutputQuantization(ctx, 1, kActivationScale, kActivationZeroPoint));
    ctx.requireFeatureLevel(FeatureLevel::kV1_2);
    return okStatus();
}

Status validateRnn(OperationContext& ctx) {
    NN_RETURN_IF_ERROR(ctx.expectInputCount({6}));
    NN_RETURN_IF_ERROR(ctx.expectOutputCount({2}));
    NN_RETURN_IF_ERROR(expectFloatData(ctx, FeatureLevel::kV1_0));
    const OperandType t = ctx.inputType(0);
    NN_RETURN_IF_ERROR(ctx.expectInputTypes({t, t, t, t, t, kInt32}));
    NN_RETURN_IF_ERROR(ctx.expectOutputTypes({t, t}));
    NN_RETURN_IF_ERROR(expectRequiredInputs(ctx, {}));
    NN_RETURN_IF_ERROR(expectInputRanks(ctx, {{0, 2}, {1, 2}, {2, 2}, {3, 1}, {4, 2}}));
    return expectFusedActivation(ctx, 5);
}

Status validateSvdf(OperationContext& ctx) {
    NN_RETURN_IF_ERROR(ctx.expectInputCount({7}));
    NN_RETURN_IF_ERROR(ctx.expectOutputCount({2}));
    NN_RETURN_IF_ERROR(expectFloatData(ctx, FeatureLevel::kV1_0));
    const OperandType t = ctx.inputType(0);
    NN_RETURN_IF_ERROR(ctx.expectInputTypes({t, t, t, t, t, kInt32, kInt32}));
    NN_RETURN_IF_ERROR(ctx.expectOutputTypes({t, t}));
    NN_RETURN_IF_ERROR(expectRequiredInputs(ctx, {3}));  // the bias is optional
    NN_RETURN_IF_ERROR(expectInputRanks(ctx, {{0, 2}, {1, 2}, {2, 2}, {3, 1}, {4, 2}}, {3}));
    NN_RETURN_IF_ERROR(expectPositiveInt32(ctx, 5, "rank"));
    const auto& features = ctx.input(1).dimensions;
    auto rank = constantInt32(ctx, 5);
    if (rank && *rank > 0 && !features.empty() && features[0] % *rank != 0)
        return ctx.fail("input 5 (rank) ", *rank, " must divide the number of filters ",
                        features[0], " (dimension 0 of input 1)");
    return expectFusedActivation(ctx, 6);
}

Status validateUnidirectionalSequenceRnn(OperationContext& ctx) {
    NN_RETURN_IF_ERROR(ctx.expectInputCount({7}));
    NN_RETURN_IF_ERROR(ctx.expectOutputCount({1, 2}));
    NN_RETURN_IF_ERROR(expectFloatData(ctx, FeatureLevel::kV1_2));
    const OperandType t = ctx.inputType(0);
    NN_RETURN_IF_ERROR(ctx.expectInputTypes({t, t, t, t, t, kInt32, kInt32}));
    NN_RETURN_IF_ERROR(ctx.expectOutputTypes(std::vector<OperandType>(ctx.numOutputs(), t)));
    NN_RETURN_IF_ERROR(expectRequiredInputs(ctx, {}));
    NN_RETURN_IF_ERROR(expectInputRanks(ctx, {{0, 3}, {1, 2}, {2, 2}, {3, 1}, {4, 2}}));
    NN_RETURN_IF_ERROR(expectFusedActivation(ctx, 5));
    NN_RETURN_IF_ERROR(expectInt32InRange(ctx, 6, 0, 1, "time major"));
    requireLevelForStateOutputs(ctx, ctx.numOutputs() == 2);
    return okStatus();
}

Status validateBidirectionalSequenceRnn(OperationContext& ctx) {
    NN_RETURN_IF_ERROR(ctx.expectInputCount({15}));
    NN_RETURN_IF_ERROR(ctx.expectOutputCount({1, 2, 3, 4}));
    NN_RETURN_IF_ERROR(expectFloatData(ctx, FeatureLevel::kV1_2));
    const OperandType t = ctx.inputType(0);
    std::vector<OperandType> inputs(12, t);
    inputs.insert(inputs.end(), {kInt32, kBool, kBool});
    NN_RETURN_IF_ERROR(ctx.expectInputTypes(inputs));
    NN_RETURN_IF_ERROR(ctx.expectOutputTypes(std::vector<OperandType>(ctx.numOutputs(), t)));
    // The auxiliary input (9) and its forward/backward weights (10, 11) are optional.
    NN_RETURN_IF_ERROR(expectRequiredInputs(ctx, {9, 10, 11}));
    if (present(ctx, 10) != present(ctx, 11))
        return ctx.fail(
            "inputs 10 and 11 (auxiliary weights) must both have values or both be "
            "omitted");
    if (present(ctx, 10) && !present(ctx, 9))
        return ctx.fail("inputs 10 and 11 (auxiliary weights) need the auxiliary input (input 9)");
    NN_RETURN_IF_ERROR(expectInputRanks(ctx,
                                        {{0, 3},
                                         {1, 2},
                                         {2, 2},
                                         {3, 1},
                                         {4, 2},
                                         {5, 2},
                                         {6, 2},
                                         {7, 1},
                                         {8, 2},
                                         {9, 3},
                                         {10, 2},
                                         {11, 2}},
                                        {9, 10, 11}));
    NN_RETURN_IF_ERROR(expectFusedActivation(ctx, 12));
    // Merged outputs leave out the backward output: 1 or 3 outputs, otherwise 2 or 4.
    const uint32_t n = ctx.numOutputs();
    if (auto merge = constantBool(ctx, 14); merge && *merge != (n == 1 || n == 3))
        return ctx.fail("input 14 (merge outputs) is ", *merge ? "true" : "false", ", which needs ",
                        *merge ? "1 or 3" : "2 or 4", " outputs, got ", n);
    requireLevelForStateOutputs(ctx, n >= 3);
    // An auxiliary input without auxiliary weights (parallel linking) is an NNAPI 1.3 mode.
    if (present(ctx, 9) && !present(ctx, 10)) ctx.requireFeatureLevel(FeatureLevel::kV1_3);
    return okStatus();
}

}  // namespace nncosim
