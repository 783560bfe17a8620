// Focused tests of the element-wise, comparison, quantization and normalization operations: the
// places where Android's arithmetic has a particular rounding, clamping or layout rule.
#include <doctest/doctest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <vector>

#include "golden/ExecutionContext.h"
#include "golden/Executor.h"
#include "golden/tests/TestTensors.h"
#include "model/Builder.h"

namespace nncosim::golden {
namespace {

struct QuantOperand {
    OperandType type;
    float scale = 0.0f;
    int32_t zeroPoint = 0;
};

// out = op(in) for a single-input operation with extra scalar inputs appended by `extra`.
template <typename In, typename Out, typename Extra>
std::vector<Out> runUnary(OperationType type, QuantOperand in, QuantOperand out,
                          std::vector<uint32_t> dims, const std::vector<In>& values, Extra extra) {
    ModelBuilder b;
    std::vector<uint32_t> inputs = {b.addInput(in.type, dims, in.scale, in.zeroPoint)};
    extra(b, inputs);
    const uint32_t output = b.addOutput(out.type, dims, out.scale, out.zeroPoint);
    b.addOperation(type, inputs, {output});
    const Model model = b.build();
    auto result = execute(model, {tensor<In>(dims, values)});
    REQUIRE_MESSAGE(result.ok(), result.status().message);
    return valuesOf<Out>(result->at(0));
}

template <typename In, typename Out>
std::vector<Out> runUnary(OperationType type, QuantOperand in, QuantOperand out,
                          std::vector<uint32_t> dims, const std::vector<In>& values) {
    return runUnary<In, Out>(type, in, out, std::move(dims), values,
                             [](ModelBuilder&, std::vector<uint32_t>&) {});
}

// out = op(a, b) with the given operand descriptions and shapes.
template <typename In, typename Out>
std::vector<Out> runBinary(OperationType type, QuantOperand a, std::vector<uint32_t> aDims,
                           const std::vector<In>& aValues, QuantOperand b,
                           std::vector<uint32_t> bDims, const std::vector<In>& bValues,
                           QuantOperand out, std::vector<uint32_t> outDims) {
    ModelBuilder builder;
    const uint32_t x = builder.addInput(a.type, aDims, a.scale, a.zeroPoint);
    const uint32_t y = builder.addInput(b.type, bDims, b.scale, b.zeroPoint);
    const uint32_t output = builder.addOutput(out.type, outDims, out.scale, out.zeroPoint);
    builder.addOperation(type, {x, y}, {output});
    const Model model = builder.build();
    auto result = execute(model, {tensor<In>(aDims, aValues), tensor<In>(bDims, bValues)});
    REQUIRE_MESSAGE(result.ok(), result.status().message);
    CHECK(result->at(0).dimensions == outDims);
    return valuesOf<Out>(result->at(0));
}

constexpr OperandType kFloat = OperandType::TENSOR_FLOAT32;
constexpr OperandType kInt32 = OperandType::TENSOR_INT32;
constexpr OperandType kUint8 = OperandType::TENSOR_QUANT8_ASYMM;
constexpr OperandType kInt8 = OperandType::TENSOR_QUANT8_ASYMM_SIGNED;
constexpr OperandType kBool = OperandType::TENSOR_BOOL8;

TEST_CASE("golden_elementwise_int32_abs_neg_wrap") {
    constexpr int32_t kMin = std::numeric_limits<int32_t>::min();
    const std::vector<int32_t> in = {kMin, -7, 0, 7};
    CHECK(runUnary<int32_t, int32_t>(OperationType::ABS, {kInt32}, {kInt32}, {4}, in) ==
          std::vector<int32_t>{kMin, 7, 0, 7});
    CHECK(runUnary<int32_t, int32_t>(OperationType::NEG, {kInt32}, {kInt32}, {4}, in) ==
          std::vector<int32_t>{kMin, 7, 0, -7});
}

TEST_CASE("golden_elementwise_cast_clamps_then_truncates") {
    const std::vector<float> in = {-3.7f, 0.9f, 7.9f, 254.99f, 300.0f, -0.5f};
    // Towards uint8: clamp to [0, 255] first, then truncate; quantization parameters ignored.
    CHECK(runUnary<float, uint8_t>(OperationType::CAST, {kFloat}, {kUint8, 0.5f, 10}, {6}, in) ==
          std::vector<uint8_t>{0, 0, 7, 254, 255, 0});
    // Towards int32: truncation towards zero.
    CHECK(runUnary<float, int32_t>(OperationType::CAST, {kFloat}, {kInt32}, {6}, in) ==
          std::vector<int32_t>{-3, 0, 7, 254, 300, 0});
    // From uint8: the stored value, not the real one.
    CHECK(runUnary<uint8_t, float>(OperationType::CAST, {kUint8, 0.5f, 10}, {kFloat}, {2},
                                   std::vector<uint8_t>{0, 200}) == std::vector<float>{0, 200});
}

TEST_CASE("golden_elementwise_quantize_rounds_half_away_from_zero") {
    const std::vector<float> in = {-2.5f, -1.5f, -0.5f, 0.5f, 1.5f, 2.5f, 1000.0f, -1000.0f};
    CHECK(runUnary<float, int8_t>(OperationType::QUANTIZE, {kFloat}, {kInt8, 1.0f, 0}, {8}, in) ==
          std::vector<int8_t>{-3, -2, -1, 1, 2, 3, 127, -128});
    CHECK(runUnary<float, uint8_t>(OperationType::QUANTIZE, {kFloat}, {kUint8, 0.5f, 100}, {8},
                                   in) == std::vector<uint8_t>{95, 97, 99, 101, 103, 105, 255, 0});
}

TEST_CASE("golden_elementwise_dequantize_per_channel") {
    ModelBuilder b;
    const uint32_t in = b.addInput(OperandType::TENSOR_QUANT8_SYMM_PER_CHANNEL, {2, 3});
    b.setPerChannelQuant(in, {0.5f, 2.0f, 0.25f}, 1);
    const uint32_t out = b.addOutput(kFloat, {2, 3});
    b.addOperation(OperationType::DEQUANTIZE, {in}, {out});
    const Model model = b.build();
    auto result = execute(model, {tensor<int8_t>({2, 3}, {2, -3, 8, -128, 1, 127})});
    REQUIRE_MESSAGE(result.ok(), result.status().message);
    CHECK(valuesOf<float>(result->at(0)) ==
          std::vector<float>{1.0f, -6.0f, 2.0f, -64.0f, 2.0f, 31.75f});
}

TEST_CASE("golden_elementwise_quantized_comparison_uses_real_values") {
    // 10 * 1.0 and 20 * 0.5 are equal as reals although the stored values differ; broadcasting
    // a [2, 1] against a [3].
    const auto eq =
        runBinary<uint8_t, uint8_t>(OperationType::EQUAL, {kUint8, 1.0f, 0}, {2, 1}, {10, 11},
                                    {kUint8, 0.5f, 0}, {3}, {20, 22, 24}, {kBool}, {2, 3});
    CHECK(eq == std::vector<uint8_t>{1, 0, 0, 0, 1, 0});
    const auto less =
        runBinary<int8_t, uint8_t>(OperationType::LESS, {kInt8, 0.25f, -4}, {3}, {-4, 0, 4},
                                   {kInt8, 1.0f, 1}, {1}, {2}, {kBool}, {3});
    CHECK(less == std::vector<uint8_t>{1, 0, 0});  // 0, 1, 2 against 1
}

TEST_CASE("golden_elementwise_maximum_requantizes_before_picking") {
    // Input b (scale 2) is requantized to the output scale 1 with clamping before the pick:
    // 200 * 2 = 400 saturates to 255.
    const auto max =
        runBinary<uint8_t, uint8_t>(OperationType::MAXIMUM, {kUint8, 1.0f, 0}, {3}, {10, 100, 250},
                                    {kUint8, 2.0f, 0}, {3}, {3, 40, 200}, {kUint8, 1.0f, 0}, {3});
    CHECK(max == std::vector<uint8_t>{10, 100, 255});
    // Ties round away from zero after the double division: 5 * 0.5 / 1 = 2.5 -> 3.
    const auto min =
        runBinary<uint8_t, uint8_t>(OperationType::MINIMUM, {kUint8, 0.5f, 0}, {1}, {5},
                                    {kUint8, 1.0f, 0}, {2}, {100, 1}, {kUint8, 1.0f, 0}, {2});
    CHECK(min == std::vector<uint8_t>{3, 1});
}

TEST_CASE("golden_elementwise_prelu_quant_broadcasts_alpha") {
    // Input scale 0.5 (zero point 128), alpha per channel with scale 0.25 (zero point 0), output
    // scale 0.5 (zero point 128): positive inputs pass, negative ones are multiplied by alpha.
    const auto out = runBinary<uint8_t, uint8_t>(OperationType::PRELU, {kUint8, 0.5f, 128}, {2, 2},
                                                 {138, 118, 119, 128}, {kUint8, 0.25f, 0}, {2},
                                                 {2, 4}, {kUint8, 0.5f, 128}, {2, 2});
    // Reals: 5 -> 5; -5 * 1.0 = -5; -4.5 * 0.5 = -2.25, i.e. -4.5 steps, rounded away from zero.
    CHECK(out == std::vector<uint8_t>{138, 118, 123, 128});
}

TEST_CASE("golden_elementwise_l2_normalization_quant_axes") {
    // A zero vector normalizes to zero (the inverse square root treats 0 as 1).
    const auto zero =
        runUnary<uint8_t, uint8_t>(OperationType::L2_NORMALIZATION, {kUint8, 0.1f, 50},
                                   {kUint8, 1.0f / 128, 128}, {1, 3}, {50, 50, 50});
    CHECK(zero == std::vector<uint8_t>{128, 128, 128});
    // (3, 4) / 5 = (0.6, 0.8) in steps of 1/128: 76.8 -> 77, 102.4 -> 102, along the last axis
    // and along axis 0 (Android's two int8 kernels round differently but agree here).
    const std::vector<int8_t> in = {3, 4};
    const auto last = runUnary<int8_t, int8_t>(OperationType::L2_NORMALIZATION, {kInt8, 1.0f, 0},
                                               {kInt8, 1.0f / 128, 0}, {1, 2}, in);
    CHECK(last == std::vector<int8_t>{77, 102});
    const auto first = runUnary<int8_t, int8_t>(
        OperationType::L2_NORMALIZATION, {kInt8, 1.0f, 0}, {kInt8, 1.0f / 128, 0}, {2, 1}, in,
        [](ModelBuilder& b, std::vector<uint32_t>& inputs) { inputs.push_back(b.addInt32(0)); });
    CHECK(first == std::vector<int8_t>{77, 102});
}

TEST_CASE("golden_elementwise_instance_norm_layouts_agree") {
    // 1 batch, 2x2 spatial, 2 channels: channel 0 = {1, 2, 3, 4}, channel 1 = {10, 10, 10, 10}.
    auto run = [](bool nchw, const std::vector<float>& values) {
        return runUnary<float, float>(OperationType::INSTANCE_NORMALIZATION, {kFloat}, {kFloat},
                                      {1, 2, 2, 2}, values,
                                      [nchw](ModelBuilder& b, std::vector<uint32_t>& inputs) {
                                          inputs.push_back(b.addFloat32(2.0f));  // gamma
                                          inputs.push_back(b.addFloat32(1.0f));  // beta
                                          inputs.push_back(b.addFloat32(0.0f));  // epsilon
                                          inputs.push_back(b.addBool(nchw));
                                      });
    };
    const auto nhwc = run(false, {1, 10, 2, 10, 3, 10, 4, 10});
    const auto nchw = run(true, {1, 2, 3, 4, 10, 10, 10, 10});
    // Channel 0: mean 2.5, sigma sqrt(1.25); channel 1 has no variance: 0 / 0 is NaN.
    const float s = std::sqrt(1.25f);
    const std::vector<float> channel0 = {-1.5f * 2 / s + 1, -0.5f * 2 / s + 1, 0.5f * 2 / s + 1,
                                         1.5f * 2 / s + 1};
    for (size_t k = 0; k < 4; ++k) {
        CHECK(nhwc[2 * k] == doctest::Approx(channel0[k]));
        CHECK(nchw[k] == doctest::Approx(channel0[k]));
        CHECK(std::isnan(nhwc[2 * k + 1]));
        CHECK(std::isnan(nchw[4 + k]));
    }
}

TEST_CASE("golden_elementwise_zero_sized_inputs") {
    // Zero-sized tensors only arise inside a graph, so the operations are called directly.
    // Android lets QUANTIZE (and DEQUANTIZE, HARD_SWISH) pass them through; the others fail.
    auto run = [](OperationType type, OperandType outType) {
        ModelBuilder b;
        const uint32_t in = b.addInput(kFloat, {0, 2});
        const uint32_t out = b.addOutput(outType, {0, 2}, outType == kUint8 ? 0.5f : 0.0f);
        b.addOperation(type, {in}, {out});
        const Model model = b.build();
        std::vector<OperandValue> values(2);
        values[0].dimensions = {0, 2};
        values[0].present = true;
        uint64_t memoryLeft = kDefaultMemoryLimitBytes;
        ExecutionContext ctx(model, model.main, model.main.operations[0], 0, values, memoryLeft);
        const Status status = findOperationExecutor(type)(ctx);
        return std::make_pair(status, values[1].dimensions);
    };
    const auto [quantized, quantizedDims] = run(OperationType::QUANTIZE, kUint8);
    CHECK_MESSAGE(quantized.ok(), quantized.message);
    CHECK(quantizedDims == std::vector<uint32_t>{0, 2});
    CHECK_FALSE(run(OperationType::EXP, kFloat).first.ok());
    CHECK_FALSE(run(OperationType::CAST, kUint8).first.ok());
}

TEST_CASE("golden_elementwise_hard_swish_and_rsqrt_quant") {
    // RSQRT of 4 and 0.25 (input scale 0.25): 0.5 and 2 at output scale 0.125; 0 gives +inf,
    // which saturates.
    CHECK(runUnary<uint8_t, uint8_t>(OperationType::RSQRT, {kUint8, 0.25f, 0}, {kUint8, 0.125f, 0},
                                     {3}, {16, 1, 0}) == std::vector<uint8_t>{4, 16, 255});
    // HARD_SWISH of -4, -1.5, 0, 1.5, 4 (scale 0.5, zero point 128) at output scale 0.25.
    const auto hs =
        runUnary<uint8_t, uint8_t>(OperationType::HARD_SWISH, {kUint8, 0.5f, 128},
                                   {kUint8, 0.25f, 128}, {5}, {120, 125, 128, 131, 136});
    // Reals: 0, -0.375, 0, 1.125, 4 -> steps 0, -1.5, 0, 4.5, 16 (within one step).
    const std::vector<int> expected = {128, 126, 128, 132, 144};
    for (size_t k = 0; k < expected.size(); ++k) CHECK(std::abs(hs[k] - expected[k]) <= 1);
}

}  // namespace
}  // namespace nncosim::golden
