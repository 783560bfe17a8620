// Tests of the recurrent and lookup operations (golden/ops/Lstm.cpp, Rnn.cpp, QuantizedLstm.cpp,
// Lookup.cpp) on small hand-checked models; the CTS sweep in executor_test.cpp covers the rest.
#include <doctest/doctest.h>

#include <cmath>
#include <cstring>
#include <map>
#include <string>

#include "golden/Executor.h"
#include "golden/ops/FarmHash.h"
#include "golden/tests/TestTensors.h"
#include "model/Builder.h"

namespace nncosim::golden {
namespace {

float sigmoid(float x) {
    return 1.0f / (1.0f + std::exp(-x));
}

TEST_CASE("golden_farmhash_fingerprint64_reference_values") {
    // Fingerprint64 of bytes (7 i + 3) mod 256 from an independent (Rust) FarmHash port; the
    // lengths reach every branch. That port is wrong for multiples of 64 above 64, which the
    // second table (BigQuery's FARM_FINGERPRINT of "a" repeated) covers instead.
    const std::map<size_t, uint64_t> expected = {
        {0, 0x9ae16a3b2f90404fULL},   {1, 0xbec09cc447469d8bULL},   {3, 0x40b4412e33eefd64ULL},
        {4, 0xf3c7ee05197a7b92ULL},   {7, 0x4fef0b39c12aa9a4ULL},   {8, 0x0c97ecbc1e9d2626ULL},
        {15, 0x2ca35f0a039b4f1bULL},  {16, 0x7eda0ed8c837a168ULL},  {17, 0xc9518fe63ebf6127ULL},
        {31, 0xbd5ca6ee28fc43cbULL},  {32, 0xa53f806f23a314e8ULL},  {33, 0xc24f9d7ce864f0e9ULL},
        {63, 0x9643c13fc68d469cULL},  {64, 0x0566266cb579eca2ULL},  {65, 0x77e0867714e6b0e4ULL},
        {100, 0x9e17c36fe4a61b08ULL}, {129, 0x98206b8579bca083ULL}, {200, 0x6d7105b27cbe2fd7ULL}};
    for (const auto& [length, fingerprint] : expected) {
        std::vector<uint8_t> bytes(length);
        for (size_t i = 0; i < length; ++i) bytes[i] = static_cast<uint8_t>(i * 7 + 3);
        CAPTURE(length);
        CHECK(farmhash::fingerprint64(bytes.data(), bytes.size()) == fingerprint);
    }
    const std::map<size_t, int64_t> repeatedA = {{126, 6261940804893177895LL},
                                                 {127, 7531535164187061522LL},
                                                 {128, -4747627967806356490LL},
                                                 {129, -266561011801984384LL},
                                                 {130, 7135893960687184995LL}};
    for (const auto& [length, fingerprint] : repeatedA) {
        const std::string text(length, 'a');
        CAPTURE(length);
        CHECK(static_cast<int64_t>(farmhash::fingerprint64(text.data(), text.size())) ==
              fingerprint);
    }
}

// One-unit LSTM weights, distinct per gate so that a swapped gate shows: input-to-gate, recurrent,
// bias, in the order input, forget, cell, output.
constexpr float kW[4] = {0.5f, -0.25f, 1.0f, 0.75f};
constexpr float kR[4] = {0.1f, 0.2f, -0.3f, 0.4f};
constexpr float kBias[4] = {0.05f, 1.0f, -0.1f, 0.2f};

// LSTM with inputs (input, output state, cell state), tanh activation and a cell clip of 0.75.
Model oneUnitLstm() {
    const OperandType f32 = OperandType::TENSOR_FLOAT32;
    ModelBuilder b;
    std::vector<uint32_t> ins = {b.addInput(f32, {1, 1})};
    for (float v : kW) ins.push_back(b.addConstant(f32, {1, 1}, std::vector<float>{v}));
    for (float v : kR) ins.push_back(b.addConstant(f32, {1, 1}, std::vector<float>{v}));
    for (int i = 0; i < 3; ++i) ins.push_back(b.addNoValue(f32));  // peephole
    for (float v : kBias) ins.push_back(b.addConstant(f32, {1}, std::vector<float>{v}));
    ins.push_back(b.addNoValue(f32));        // projection weights
    ins.push_back(b.addNoValue(f32));        // projection bias
    ins.push_back(b.addInput(f32, {1, 1}));  // output state in
    ins.push_back(b.addInput(f32, {1, 1}));  // cell state in
    ins.push_back(b.addInt32(4));            // tanh
    ins.push_back(b.addFloat32(0.75f));      // cell clip
    ins.push_back(b.addFloat32(0.0f));       // no projection clip
    std::vector<uint32_t> outs = {b.addOutput(f32, {1, 4}), b.addOutput(f32, {1, 1}),
                                  b.addOutput(f32, {1, 1}), b.addOutput(f32, {1, 1})};
    b.addOperation(OperationType::LSTM, ins, outs);
    return b.build();
}

TEST_CASE("golden_lstm_one_unit_step_hand_checked") {
    const Model model = oneUnitLstm();
    const float x = 0.8f, h = -0.5f, c = 0.6f;
    auto result = execute(model, {tensor<float>({1, 1}, {x}), tensor<float>({1, 1}, {h}),
                                  tensor<float>({1, 1}, {c})});
    REQUIRE_MESSAGE(result.ok(), result.status().message);
    const float i = sigmoid(kW[0] * x + kR[0] * h + kBias[0]);
    const float f = sigmoid(kW[1] * x + kR[1] * h + kBias[1]);
    const float g = std::tanh(kW[2] * x + kR[2] * h + kBias[2]);
    const float o = sigmoid(kW[3] * x + kR[3] * h + kBias[3]);
    REQUIRE(f * c + i * g > 0.75f);  // so that the clip shows
    const float cell = 0.75f;
    const float out = o * std::tanh(cell);
    CHECK(valuesOf<float>(result->at(2))[0] == doctest::Approx(cell).epsilon(1e-6));
    CHECK(valuesOf<float>(result->at(1))[0] == doctest::Approx(out).epsilon(1e-6));
    CHECK(valuesOf<float>(result->at(3))[0] == doctest::Approx(out).epsilon(1e-6));
    // The scratch buffer holds the gates as Android leaves them: i, tanh(cell), f, output.
    const auto scratch = valuesOf<float>(result->at(0));
    CHECK(scratch[0] == doctest::Approx(i).epsilon(1e-6));
    CHECK(scratch[1] == doctest::Approx(std::tanh(cell)).epsilon(1e-6));
    CHECK(scratch[2] == doctest::Approx(f).epsilon(1e-6));
    CHECK(scratch[3] == doctest::Approx(out).epsilon(1e-6));
}

TEST_CASE("golden_lstm_required_state_omitted_fails") {
    auto result = execute(oneUnitLstm(), {tensor<float>({1, 1}, {0.8f}),
                                          tensor<float>({1, 1}, {0.0f}), TensorData{}});
    CHECK(result.status().code == ErrorStatus::GENERAL_FAILURE);
}

// SVDF with one filter of memory 3: the new feature enters the newest slot, the output weighs the
// memory by the time weights, and the memory then shifts by one step.
TEST_CASE("golden_svdf_memory_shifts") {
    const OperandType f32 = OperandType::TENSOR_FLOAT32;
    ModelBuilder b;
    const uint32_t input = b.addInput(f32, {1, 1});
    const uint32_t features = b.addConstant(f32, {1, 1}, std::vector<float>{2.0f});
    const uint32_t time = b.addConstant(f32, {1, 3}, std::vector<float>{1.0f, 10.0f, 100.0f});
    const uint32_t bias = b.addConstant(f32, {1}, std::vector<float>{0.5f});
    const uint32_t state = b.addInput(f32, {1, 3});
    const uint32_t stateOut = b.addOutput(f32, {1, 3});
    const uint32_t output = b.addOutput(f32, {1, 1});
    b.addOperation(OperationType::SVDF,
                   {input, features, time, bias, state, b.addInt32(1), b.addInt32(0)},
                   {stateOut, output});
    auto result =
        execute(b.build(), {tensor<float>({1, 1}, {5.0f}), tensor<float>({1, 3}, {1, 2, 3})});
    REQUIRE_MESSAGE(result.ok(), result.status().message);
    // Memory [1, 2, 10]: 1 * 1 + 10 * 2 + 100 * 10 + 0.5; then [2, 10, 0].
    CHECK(valuesOf<float>(result->at(1)) == std::vector<float>{1021.5f});
    CHECK(valuesOf<float>(result->at(0)) == std::vector<float>{2.0f, 10.0f, 0.0f});
}

// Merged bidirectional RNN outputs put the backward units after the forward ones; the backward
// direction runs from the last step, so its output there has seen only the last input.
TEST_CASE("golden_bidirectional_rnn_merged_outputs") {
    const OperandType f32 = OperandType::TENSOR_FLOAT32;
    ModelBuilder b;
    const uint32_t input = b.addInput(f32, {2, 1, 1});  // time-major: 2 steps, 1 batch
    const auto one = [&](float v, std::vector<uint32_t> dims) {
        return b.addConstant(f32, std::move(dims), std::vector<float>{v});
    };
    std::vector<uint32_t> ins = {input,
                                 one(1.0f, {1, 1}),
                                 one(0.5f, {1, 1}),
                                 one(0.0f, {1}),
                                 b.addInput(f32, {1, 1}),
                                 one(2.0f, {1, 1}),
                                 one(0.25f, {1, 1}),
                                 one(1.0f, {1}),
                                 b.addInput(f32, {1, 1}),
                                 b.addNoValue(f32),
                                 b.addNoValue(f32),
                                 b.addNoValue(f32),
                                 b.addInt32(0),
                                 b.addBool(true),
                                 b.addBool(true)};
    const uint32_t out = b.addOutput(f32, {2, 1, 2});
    b.addOperation(OperationType::BIDIRECTIONAL_SEQUENCE_RNN, ins, {out});
    auto result =
        execute(b.build(), {tensor<float>({2, 1, 1}, {3.0f, 4.0f}), tensor<float>({1, 1}, {0.0f}),
                            tensor<float>({1, 1}, {0.0f})});
    REQUIRE_MESSAGE(result.ok(), result.status().message);
    // Forward: h0 = 3, h1 = 4 + 0.5 * 3. Backward: h1 = 2 * 4 + 1, h0 = 2 * 3 + 0.25 * 9 + 1.
    CHECK(valuesOf<float>(result->at(0)) == std::vector<float>{3.0f, 9.25f, 5.5f, 9.0f});
}

TEST_CASE("golden_lookups_miss_and_out_of_range") {
    const OperandType i32 = OperandType::TENSOR_INT32;
    const OperandType f32 = OperandType::TENSOR_FLOAT32;
    SUBCASE("hashtable miss gives a zero row") {
        ModelBuilder b;
        const uint32_t lookups = b.addInput(i32, {3});
        const uint32_t keys = b.addConstant(i32, {2}, std::vector<int32_t>{-4, 7});
        const uint32_t values = b.addConstant(f32, {2, 2}, std::vector<float>{1, 2, 3, 4});
        const uint32_t out = b.addOutput(f32, {3, 2});
        const uint32_t hits = b.addOutput(OperandType::TENSOR_QUANT8_ASYMM, {3}, 1.0f, 0);
        b.addOperation(OperationType::HASHTABLE_LOOKUP, {lookups, keys, values}, {out, hits});
        auto result = execute(b.build(), {tensor<int32_t>({3}, {7, 5, -4})});
        REQUIRE_MESSAGE(result.ok(), result.status().message);
        CHECK(valuesOf<float>(result->at(0)) == std::vector<float>{3, 4, 0, 0, 1, 2});
        CHECK(valuesOf<uint8_t>(result->at(1)) == std::vector<uint8_t>{1, 0, 1});
    }
    SUBCASE("embedding lookup out of range fails") {
        ModelBuilder b;
        const uint32_t lookups = b.addInput(i32, {1});
        const uint32_t values = b.addConstant(f32, {2, 1}, std::vector<float>{1, 2});
        const uint32_t out = b.addOutput(f32, {1, 1});
        b.addOperation(OperationType::EMBEDDING_LOOKUP, {lookups, values}, {out});
        auto result = execute(b.build(), {tensor<int32_t>({1}, {2})});
        CHECK(result.status().code == ErrorStatus::GENERAL_FAILURE);
    }
}

TEST_CASE("golden_random_multinomial_follows_softmax") {
    ModelBuilder b;
    const uint32_t logits = b.addInput(OperandType::TENSOR_FLOAT32, {1, 3});
    const uint32_t seeds =
        b.addConstant(OperandType::TENSOR_INT32, {2}, std::vector<int32_t>{37, 42});
    const uint32_t out = b.addOutput(OperandType::TENSOR_INT32, {1, 20000});
    b.addOperation(OperationType::RANDOM_MULTINOMIAL, {logits, b.addInt32(20000), seeds}, {out});
    const Model model = b.build();
    const std::vector<float> x = {std::log(1.0f), std::log(3.0f), -INFINITY};
    auto first = execute(model, {tensor<float>({1, 3}, x)});
    REQUIRE_MESSAGE(first.ok(), first.status().message);
    auto second = execute(model, {tensor<float>({1, 3}, x)});
    REQUIRE(second.ok());
    CHECK(first->at(0).bytes == second->at(0).bytes);  // the seeds fix the samples
    std::vector<int> counts(3);
    for (int32_t c : valuesOf<int32_t>(first->at(0))) counts.at(c)++;
    CHECK(counts[2] == 0);  // probability zero
    CHECK(counts[1] / 20000.0 == doctest::Approx(0.75).epsilon(0.03));
}

}  // namespace
}  // namespace nncosim::golden
