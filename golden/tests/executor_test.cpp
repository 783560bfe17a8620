// Tests of the golden executor: small hand-checked models, the framework's contract (shapes,
// errors, IF, observer), and every NNAPI CTS test whose operations the golden implements.
#include <doctest/doctest.h>

#include <cmath>
#include <cstring>
#include <filesystem>
#include <map>
#include <set>
#include <string>

#include "golden/ExecutionContext.h"
#include "golden/Executor.h"
#include "golden/tests/TestTensors.h"
#include "model/Builder.h"
#include "model/CtsReader.h"

namespace nncosim::golden {
namespace {

// out = in (op) constant, for the elementwise operations with an activation input.
Model elementwiseModel(OperationType type, OperandType operandType, std::vector<uint32_t> inDims,
                       std::vector<uint32_t> constDims, const std::vector<float>& constant,
                       std::vector<uint32_t> outDims) {
    ModelBuilder b;
    const uint32_t in = b.addInput(operandType, inDims);
    const uint32_t c = b.addConstant(operandType, constDims, constant);
    const uint32_t act = b.addInt32(0);
    const uint32_t out = b.addOutput(operandType, outDims);
    b.addOperation(type, {in, c, act}, {out});
    return b.build();
}

// Moves a single-graph model into `model` as a referenced subgraph (relocating its constants).
Subgraph adopt(Model& model, Model branch) {
    model.operandValues.resize((model.operandValues.size() + 3) & ~size_t{3});
    const uint32_t base = static_cast<uint32_t>(model.operandValues.size());
    model.operandValues.insert(model.operandValues.end(), branch.operandValues.begin(),
                               branch.operandValues.end());
    for (Operand& operand : branch.main.operands) {
        if (operand.lifetime == OperandLifeTime::CONSTANT_COPY) operand.location.offset += base;
    }
    return std::move(branch.main);
}

TEST_CASE("golden_conv_float_hand_checked") {
    // 2x2 all-ones filter over 1..9 sums each 2x2 window; bias 0.5; VALID padding.
    ModelBuilder b;
    const uint32_t in = b.addInput(OperandType::TENSOR_FLOAT32, {1, 3, 3, 1});
    const uint32_t filter =
        b.addConstant(OperandType::TENSOR_FLOAT32, {1, 2, 2, 1}, std::vector<float>{1, 1, 1, 1});
    const uint32_t bias = b.addConstant(OperandType::TENSOR_FLOAT32, {1}, std::vector<float>{0.5f});
    const uint32_t out = b.addOutput(OperandType::TENSOR_FLOAT32, {1, 2, 2, 1});
    b.addOperation(OperationType::CONV_2D,
                   {in, filter, bias, b.addInt32(2), b.addInt32(1), b.addInt32(1), b.addInt32(0)},
                   {out});
    const Model model = b.build();
    auto result = execute(model, {tensor<float>({1, 3, 3, 1}, {1, 2, 3, 4, 5, 6, 7, 8, 9})});
    REQUIRE_MESSAGE(result.ok(), result.status().message);
    CHECK(result->at(0).dimensions == std::vector<uint32_t>{1, 2, 2, 1});
    CHECK(valuesOf<float>(result->at(0)) == std::vector<float>{12.5f, 16.5f, 24.5f, 28.5f});
}

TEST_CASE("golden_conv_quant8_requantizes") {
    // Input scale 0.5 (zero point 1), filter scale 0.25 (zero point 2), output scale 1 (zero
    // point 3): real values 1..4 times filter 1, 2, 3, 4 sum to 30, plus bias 1 (int32 8 at scale
    // 0.125) gives 31 -> 34 stored.
    ModelBuilder b;
    const uint32_t in = b.addInput(OperandType::TENSOR_QUANT8_ASYMM, {1, 2, 2, 1}, 0.5f, 1);
    const uint32_t filter = b.addConstant(OperandType::TENSOR_QUANT8_ASYMM, {1, 2, 2, 1},
                                          std::vector<uint8_t>{6, 10, 14, 18}, 0.25f, 2);
    const uint32_t bias =
        b.addConstant(OperandType::TENSOR_INT32, {1}, std::vector<int32_t>{8}, 0.125f);
    const uint32_t out = b.addOutput(OperandType::TENSOR_QUANT8_ASYMM, {1, 1, 1, 1}, 1.0f, 3);
    b.addOperation(OperationType::CONV_2D,
                   {in, filter, bias, b.addInt32(2), b.addInt32(1), b.addInt32(1), b.addInt32(0)},
                   {out});
    auto result = execute(b.build(), {tensor<uint8_t>({1, 2, 2, 1}, {3, 5, 7, 9})});
    REQUIRE_MESSAGE(result.ok(), result.status().message);
    CHECK(valuesOf<uint8_t>(result->at(0)) == std::vector<uint8_t>{34});
}

TEST_CASE("golden_conv_nchw_matches_nhwc") {
    // Two input channels, two output channels, SAME padding, stride 2.
    auto build = [](bool nchw) {
        ModelBuilder b;
        const uint32_t in =
            b.addInput(OperandType::TENSOR_FLOAT32, nchw ? std::vector<uint32_t>{1, 2, 3, 3}
                                                         : std::vector<uint32_t>{1, 3, 3, 2});
        std::vector<float> w(2 * 3 * 3 * 2);
        for (size_t i = 0; i < w.size(); ++i) w[i] = static_cast<float>(i % 7) - 3.0f;
        const uint32_t filter = b.addConstant(OperandType::TENSOR_FLOAT32, {2, 3, 3, 2}, w);
        const uint32_t bias =
            b.addConstant(OperandType::TENSOR_FLOAT32, {2}, std::vector<float>{1, -1});
        const uint32_t out = b.addOutput(OperandType::TENSOR_FLOAT32, {0, 0, 0, 0});
        b.addOperation(OperationType::CONV_2D,
                       {in, filter, bias, b.addInt32(1), b.addInt32(2), b.addInt32(2),
                        b.addInt32(0), b.addBool(nchw)},
                       {out});
        return b.build();
    };
    std::vector<float> nhwc(18), nchw(18);
    for (uint32_t h = 0; h < 3; ++h) {
        for (uint32_t w = 0; w < 3; ++w) {
            for (uint32_t c = 0; c < 2; ++c) {
                const float v = static_cast<float>(h * 10 + w) * (c == 0 ? 1.0f : -0.5f);
                nhwc[(h * 3 + w) * 2 + c] = v;
                nchw[(c * 3 + h) * 3 + w] = v;
            }
        }
    }
    auto a = execute(build(false), {tensor<float>({1, 3, 3, 2}, nhwc)});
    auto b = execute(build(true), {tensor<float>({1, 2, 3, 3}, nchw)});
    REQUIRE(a.ok());
    REQUIRE(b.ok());
    CHECK(a->at(0).dimensions == std::vector<uint32_t>{1, 2, 2, 2});
    CHECK(b->at(0).dimensions == std::vector<uint32_t>{1, 2, 2, 2});
    const auto x = valuesOf<float>(a->at(0));
    const auto y = valuesOf<float>(b->at(0));
    for (uint32_t h = 0; h < 2; ++h) {
        for (uint32_t w = 0; w < 2; ++w) {
            for (uint32_t c = 0; c < 2; ++c) {
                CHECK(x[(h * 2 + w) * 2 + c] == y[(c * 2 + h) * 2 + w]);
            }
        }
    }
}

TEST_CASE("golden_add_quant8_broadcast_bit_exact") {
    // Reals 1..4 plus broadcast 1, 2 at scale 0.5: 2, 4, 4, 6 -> 4, 8, 8, 12.
    ModelBuilder b;
    const uint32_t in1 = b.addInput(OperandType::TENSOR_QUANT8_ASYMM, {2, 2}, 0.5f, 0);
    const uint32_t in2 = b.addInput(OperandType::TENSOR_QUANT8_ASYMM, {2}, 0.5f, 0);
    const uint32_t out = b.addOutput(OperandType::TENSOR_QUANT8_ASYMM, {2, 2}, 0.5f, 0);
    b.addOperation(OperationType::ADD, {in1, in2, b.addInt32(0)}, {out});
    auto result =
        execute(b.build(), {tensor<uint8_t>({2, 2}, {2, 4, 6, 8}), tensor<uint8_t>({2}, {2, 4})});
    REQUIRE_MESSAGE(result.ok(), result.status().message);
    CHECK(valuesOf<uint8_t>(result->at(0)) == std::vector<uint8_t>{4, 8, 8, 12});
}

TEST_CASE("golden_unknown_output_shape_is_reported") {
    const Model model = elementwiseModel(OperationType::MUL, OperandType::TENSOR_FLOAT32, {2, 0},
                                         {1, 3}, {1, 2, 3}, {0, 0});
    auto result = execute(model, {tensor<float>({2, 3}, {1, 1, 1, 2, 2, 2})});
    REQUIRE_MESSAGE(result.ok(), result.status().message);
    CHECK(result->at(0).dimensions == std::vector<uint32_t>{2, 3});
    CHECK(valuesOf<float>(result->at(0)) == std::vector<float>{1, 2, 3, 2, 4, 6});
}

TEST_CASE("golden_float16_add") {
    const std::vector<half> one{half(1.5f), half(-2.0f)};
    ModelBuilder b;
    const uint32_t in = b.addInput(OperandType::TENSOR_FLOAT16, {2});
    const uint32_t c = b.addConstant(OperandType::TENSOR_FLOAT16, {2}, one);
    const uint32_t out = b.addOutput(OperandType::TENSOR_FLOAT16, {2});
    b.addOperation(OperationType::ADD, {in, c, b.addInt32(1)}, {out});  // fused RELU
    auto result = execute(b.build(), {tensor<half>({2}, {half(0.25f), half(1.0f)})});
    REQUIRE_MESSAGE(result.ok(), result.status().message);
    const auto v = valuesOf<half>(result->at(0));
    CHECK(static_cast<float>(v[0]) == 1.75f);
    CHECK(static_cast<float>(v[1]) == 0.0f);
}

TEST_CASE("golden_bad_inputs_are_invalid_argument") {
    const Model model =
        elementwiseModel(OperationType::ADD, OperandType::TENSOR_FLOAT32, {0}, {1}, {1}, {0});
    SUBCASE("byte count") {
        auto r = execute(model, {tensor<float>({3}, {1, 2})});
        CHECK(r.status().code == ErrorStatus::INVALID_ARGUMENT);
    }
    SUBCASE("unknown dimension left unknown") {
        auto r = execute(model, {tensor<float>({0}, {})});
        CHECK(r.status().code == ErrorStatus::INVALID_ARGUMENT);
    }
    SUBCASE("required input omitted") {
        auto r = execute(model, {TensorData{}});
        CHECK(r.status().code == ErrorStatus::GENERAL_FAILURE);
        CHECK(r.status().message.find("input 0 is omitted") != std::string::npos);
    }
    SUBCASE("input count") {
        auto r = execute(model, {});
        CHECK(r.status().code == ErrorStatus::INVALID_ARGUMENT);
    }
}

TEST_CASE("golden_output_shape_contradicting_model_fails") {
    // The model declares [3] but broadcasting [2] with [1] gives [2].
    const Model model =
        elementwiseModel(OperationType::ADD, OperandType::TENSOR_FLOAT32, {2}, {1}, {1}, {3});
    auto r = execute(model, {tensor<float>({2}, {1, 2})});
    CHECK(r.status().code == ErrorStatus::GENERAL_FAILURE);
}

TEST_CASE("golden_missing_operation_is_named") {
    ModelBuilder b;
    const uint32_t in = b.addInput(OperandType::TENSOR_FLOAT32, {1});
    const uint32_t out = b.addOutput(OperandType::TENSOR_FLOAT32, {1});
    b.addOperation(OperationType::OEM_OPERATION, {in}, {out});
    auto r = execute(b.build(), {tensor<float>({1}, {1})});
    CHECK(r.status().code == ErrorStatus::GENERAL_FAILURE);
    CHECK(r.status().message.find("no reference implementation of OEM_OPERATION") !=
          std::string::npos);
}

TEST_CASE("golden_if_runs_the_selected_branch") {
    auto branch = [](OperationType type) {
        ModelBuilder b;
        const uint32_t in = b.addInput(OperandType::TENSOR_FLOAT32, {2});
        const uint32_t c = b.addConstant(OperandType::TENSOR_FLOAT32, {1}, std::vector<float>{10});
        const uint32_t out = b.addOutput(OperandType::TENSOR_FLOAT32, {2});
        b.addOperation(type, {in, c, b.addInt32(0)}, {out});
        return b.build();
    };
    ModelBuilder b;
    const uint32_t cond = b.addInput(OperandType::TENSOR_BOOL8, {1});
    const uint32_t in = b.addInput(OperandType::TENSOR_FLOAT32, {2});
    const uint32_t out = b.addOutput(OperandType::TENSOR_FLOAT32, {0});
    Model model = b.build();
    Subgraph thenGraph = adopt(model, branch(OperationType::ADD));
    Subgraph elseGraph = adopt(model, branch(OperationType::SUB));
    ModelBuilder withBranches;
    withBranches.model() = std::move(model);
    const uint32_t thenOperand = withBranches.addSubgraph(std::move(thenGraph));
    const uint32_t elseOperand = withBranches.addSubgraph(std::move(elseGraph));
    withBranches.addOperation(OperationType::IF, {cond, thenOperand, elseOperand, in}, {out});
    model = withBranches.build();

    for (const bool c : {true, false}) {
        auto r = execute(model, {tensor<uint8_t>({1}, {c}), tensor<float>({2}, {1, 2})});
        REQUIRE_MESSAGE(r.ok(), r.status().message);
        CHECK(r->at(0).dimensions == std::vector<uint32_t>{2});
        CHECK(valuesOf<float>(r->at(0)) ==
              (c ? std::vector<float>{11, 12} : std::vector<float>{-9, -8}));
    }
}

TEST_CASE("golden_while_loops_until_the_condition_fails_or_times_out") {
    // i = i0; while (i < limit) i = i + 1. State: i (carried), limit (input only).
    ModelBuilder cond;
    {
        const uint32_t i = cond.addInput(OperandType::TENSOR_INT32, {1});
        const uint32_t limit = cond.addInput(OperandType::TENSOR_INT32, {1});
        const uint32_t less = cond.addOutput(OperandType::TENSOR_BOOL8, {1});
        cond.addOperation(OperationType::LESS, {i, limit}, {less});
    }
    ModelBuilder body;
    {
        const uint32_t i = body.addInput(OperandType::TENSOR_INT32, {1});
        body.addInput(OperandType::TENSOR_INT32, {1});
        const uint32_t one =
            body.addConstant(OperandType::TENSOR_INT32, {1}, std::vector<int32_t>{1});
        const uint32_t next = body.addOutput(OperandType::TENSOR_INT32, {1});
        body.addOperation(OperationType::ADD, {i, one, body.addInt32(0)}, {next});
    }
    ModelBuilder b;
    const uint32_t i0 = b.addInput(OperandType::TENSOR_INT32, {1});
    const uint32_t limit = b.addInput(OperandType::TENSOR_INT32, {1});
    const uint32_t out = b.addOutput(OperandType::TENSOR_INT32, {1});
    Model model = b.build();
    Subgraph condGraph = adopt(model, cond.build());
    Subgraph bodyGraph = adopt(model, body.build());
    ModelBuilder withLoop;
    withLoop.model() = std::move(model);
    const uint32_t condOperand = withLoop.addSubgraph(std::move(condGraph));
    const uint32_t bodyOperand = withLoop.addSubgraph(std::move(bodyGraph));
    withLoop.addOperation(OperationType::WHILE, {condOperand, bodyOperand, i0, limit}, {out});
    model = withLoop.build();

    SUBCASE("counts") {
        auto r = execute(model, {tensor<int32_t>({1}, {2}), tensor<int32_t>({1}, {7})});
        REQUIRE_MESSAGE(r.ok(), r.status().message);
        CHECK(valuesOf<int32_t>(r->at(0)) == std::vector<int32_t>{7});
    }
    SUBCASE("never iterates") {
        auto r = execute(model, {tensor<int32_t>({1}, {9}), tensor<int32_t>({1}, {7})});
        REQUIRE_MESSAGE(r.ok(), r.status().message);
        CHECK(valuesOf<int32_t>(r->at(0)) == std::vector<int32_t>{9});
    }
    SUBCASE("times out") {
        ExecuteOptions options;
        options.loopTimeout = std::chrono::milliseconds(20);
        auto r =
            execute(model, {tensor<int32_t>({1}, {0}), tensor<int32_t>({1}, {INT32_MAX})}, options);
        CHECK(r.status().code == ErrorStatus::MISSED_DEADLINE_TRANSIENT);
    }
}

TEST_CASE("golden_observer_sees_every_operation") {
    ModelBuilder b;
    const uint32_t in = b.addInput(OperandType::TENSOR_FLOAT32, {2});
    const uint32_t c = b.addConstant(OperandType::TENSOR_FLOAT32, {1}, std::vector<float>{3});
    const uint32_t mid = b.addOperand(OperandType::TENSOR_FLOAT32, {2});
    const uint32_t out = b.addOutput(OperandType::TENSOR_FLOAT32, {2});
    b.addOperation(OperationType::ADD, {in, c, b.addInt32(0)}, {mid});
    b.addOperation(OperationType::MUL, {mid, c, b.addInt32(0)}, {out});
    ExecuteOptions options;
    std::map<uint32_t, std::vector<float>> seen;
    options.observer = [&seen](uint32_t index, const std::vector<TensorData>& outputs) {
        seen[index] = valuesOf<float>(outputs.at(0));
    };
    auto r = execute(b.build(), {tensor<float>({2}, {1, 2})}, options);
    REQUIRE(r.ok());
    CHECK(seen[0] == std::vector<float>{4, 5});
    CHECK(seen[1] == std::vector<float>{12, 15});
}

// ---- The CTS: every test whose operations all have a golden implementation. ----

bool allImplemented(const Model& model) {
    auto covered = [](const Subgraph& g) {
        for (const Operation& op : g.operations) {
            if (op.type != OperationType::IF && op.type != OperationType::WHILE &&
                !findOperationExecutor(op.type)) {
                return false;
            }
        }
        return true;
    };
    if (!covered(model.main)) return false;
    for (const Subgraph& g : model.referenced) {
        if (!covered(g)) return false;
    }
    return true;
}

double elementAt(OperandType type, const std::vector<uint8_t>& bytes, size_t i) {
    auto read = [&](auto tag) {
        decltype(tag) v;
        std::memcpy(&v, bytes.data() + i * sizeof(v), sizeof(v));
        return static_cast<double>(v);
    };
    switch (type) {
        case OperandType::TENSOR_FLOAT32:
            return read(float{});
        case OperandType::TENSOR_FLOAT16:
            return static_cast<float>(read(half{}));
        case OperandType::TENSOR_INT32:
            return read(int32_t{});
        case OperandType::TENSOR_QUANT8_ASYMM_SIGNED:
        case OperandType::TENSOR_QUANT8_SYMM:
            return read(int8_t{});
        case OperandType::TENSOR_QUANT16_ASYMM:
            return read(uint16_t{});
        case OperandType::TENSOR_QUANT16_SYMM:
            return read(int16_t{});
        default:  // TENSOR_QUANT8_ASYMM, TENSOR_BOOL8
            return read(uint8_t{});
    }
}

// The accuracy rule of cts/FORMAT.md; returns an empty string when the outputs match.
std::string compare(const CtsTest& test, const std::vector<TensorData>& actual) {
    bool hasFloat16 = false;
    auto scan = [&hasFloat16](const Subgraph& g) {
        for (const Operand& o : g.operands) hasFloat16 |= o.type == OperandType::TENSOR_FLOAT16;
    };
    scan(test.model.main);
    for (const Subgraph& g : test.model.referenced) scan(g);
    for (size_t o = 0; o < actual.size(); ++o) {
        const TensorData& a = actual[o];
        const TensorData& e = test.expectedOutputs[o];
        if (a.dimensions != e.dimensions) {
            return "output " + std::to_string(o) + " shape " + toString(a.dimensions) +
                   ", expected " + toString(e.dimensions);
        }
        if (test.outputIgnored[o]) continue;
        if (a.bytes.size() != e.bytes.size()) return "output " + std::to_string(o) + " size";
        const OperandType type = test.model.main.operands[test.model.main.outputIndexes[o]].type;
        double atol = 1.0, rtol = 0.0;
        if (type == OperandType::TENSOR_FLOAT32 &&
            !(test.model.relaxComputationFloat32toFloat16 || hasFloat16)) {
            atol = 1e-5;
            rtol = 5 * 1.1920928955078125e-7;
        } else if (type == OperandType::TENSOR_FLOAT32 || type == OperandType::TENSOR_FLOAT16) {
            atol = rtol = 5 * 0.0009765625;
        } else if (type == OperandType::TENSOR_BOOL8) {
            atol = 0.0;
        }
        const size_t n = a.bytes.size() / elementSize(type);
        for (size_t i = 0; i < n; ++i) {
            const double x = elementAt(type, a.bytes, i);
            const double y = elementAt(type, e.bytes, i);
            if (std::isnan(x) && std::isnan(y)) continue;
            if (!(std::abs(x - y) <= atol + rtol * std::abs(y))) {
                return "output " + std::to_string(o) + " element " + std::to_string(i) + ": " +
                       std::to_string(x) + ", expected " + std::to_string(y);
            }
        }
    }
    return {};
}

// Runs one test; with `unknownOutputs` the main-graph outputs are declared with unknown
// dimensions (Android's dynamic output shape variant).
std::string runCtsTest(CtsTest test, bool unknownOutputs) {
    if (unknownOutputs) {
        for (uint32_t index : test.model.main.outputIndexes) {
            auto& dims = test.model.main.operands[index].dimensions;
            std::fill(dims.begin(), dims.end(), 0u);
        }
    }
    ExecuteOptions options;
    options.loopTimeout = std::chrono::milliseconds(100);  // keeps the infinite loop test short
    auto result = execute(test.model, test.inputs, options);
    if (test.expectFailure) return result.ok() ? "expected a failure" : "";
    if (!result.ok()) return result.status().message;
    return compare(test, *result);
}

TEST_CASE("golden_cts_implemented_operations") {
    const std::string root = NNCOSIM_CTS_DIR;
    REQUIRE_MESSAGE(std::filesystem::is_directory(root), "CTS vectors not found at " << root);
    auto files = findJsonFiles({root});
    REQUIRE(files.ok());
    size_t ran = 0;
    std::set<std::string> operations;
    for (const std::string& path : *files) {
        auto file = readCtsFile(path);
        REQUIRE_MESSAGE(file.ok(), file.status().message);
        for (const CtsTest& test : file->tests) {
            if (!allImplemented(test.model)) continue;
            ++ran;
            for (const Operation& op : test.model.main.operations) {
                operations.insert(nameOf(op.type));
            }
            for (const bool unknownOutputs : {false, true}) {
                const std::string error = runCtsTest(test, unknownOutputs);
                const std::string label =
                    file->spec + "/" + test.name + (unknownOutputs ? " (unknown outputs)" : "");
                CHECK_MESSAGE(error.empty(), label << ": " << error);
            }
        }
    }
    MESSAGE("ran " << ran << " CTS tests covering " << operations.size() << " operations");
    CHECK(ran > 7000);
    CHECK(operations.count("CONV_2D") == 1);
}

}  // namespace
}  // namespace nncosim::golden
