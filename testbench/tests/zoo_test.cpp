// The model zoo: valid NNAPI models with the real layer shapes, deterministic weights, and on
// the golden finite float outputs and quant8 activations that do not saturate.
#include <doctest/doctest.h>

#include <cmath>
#include <cstring>
#include <filesystem>
#include <set>

#include "golden/Executor.h"
#include "model/CtsReader.h"
#include "model/ModelJson.h"
#include "model/Validation.h"
#include "testbench/Zoo.h"
#include "testbench/tests/TestModels.h"

using namespace nncosim;

namespace {

constexpr zoo::Precision kPrecisions[] = {zoo::Precision::kFloat32, zoo::Precision::kQuant8,
                                          zoo::Precision::kQuant8PerChannel};

Model build(const zoo::ZooConfig& config) {
    auto model = zoo::buildZooModel(config);
    INFO(model.status().message);
    REQUIRE(model.ok());
    return std::move(*model);
}

std::set<OperationType> operationTypes(const Model& model) {
    std::set<OperationType> types;
    for (const Operation& op : model.main.operations) types.insert(op.type);
    return types;
}

bool hasOperandType(const Model& model, OperandType type) {
    for (const Operand& o : model.main.operands) {
        if (o.type == type) return true;
    }
    return false;
}

std::vector<float> floats(const TensorData& data) {
    std::vector<float> out(data.bytes.size() / sizeof(float));
    std::memcpy(out.data(), data.bytes.data(), out.size() * sizeof(float));
    return out;
}

/// The classifier's logits (FULLY_CONNECTED output, dequantized) for the given quant8 input
/// bytes: the float variant gets the same reals ((q - 128) / 128), so runs are comparable.
std::vector<float> logits(const Model& model, const std::vector<uint8_t>& quantInput,
                          const std::vector<uint32_t>& dims) {
    const Operand& input = model.main.operands[model.main.inputIndexes[0]];
    TensorData data{dims, {}};
    if (input.type == OperandType::TENSOR_QUANT8_ASYMM) {
        data.bytes = quantInput;
    } else {
        std::vector<float> reals(quantInput.size());
        for (size_t i = 0; i < reals.size(); ++i)
            reals[i] = (static_cast<float>(quantInput[i]) - 128.0f) / 128.0f;
        data.bytes.resize(reals.size() * sizeof(float));
        std::memcpy(data.bytes.data(), reals.data(), data.bytes.size());
    }
    std::vector<float> values;
    golden::ExecuteOptions options;
    options.observer = [&](uint32_t index, const std::vector<TensorData>& outputs) {
        const Operation& op = model.main.operations[index];
        if (op.type != OperationType::FULLY_CONNECTED) return;
        const Operand& out = model.main.operands[op.outputs[0]];
        if (out.type == OperandType::TENSOR_FLOAT32) {
            values = floats(outputs[0]);
        } else {
            for (uint8_t q : outputs[0].bytes)
                values.push_back(static_cast<float>(q - out.zeroPoint) * out.scale);
        }
    };
    auto outputs = golden::execute(model, {data}, options);
    INFO(outputs.status().message);
    REQUIRE(outputs.ok());
    return values;
}

}  // namespace

TEST_CASE("testbench_zoo_models_validate") {
    for (zoo::Network network : zoo::classifierNetworks()) {
        for (zoo::Precision precision : kPrecisions) {
            const zoo::ZooConfig config = testing::smallZooConfig(network, precision);
            INFO(zoo::modelName(config));
            const Model model = build(config);
            auto level = validateModel(model);
            INFO(level.status().message);
            CHECK(level.ok());

            REQUIRE(model.main.inputIndexes.size() == 1);
            REQUIRE(model.main.outputIndexes.size() == 1);
            const Operand& input = model.main.operands[model.main.inputIndexes[0]];
            const Operand& output = model.main.operands[model.main.outputIndexes[0]];
            CHECK(input.dimensions == std::vector<uint32_t>{1, 64, 64, 3});
            CHECK(output.dimensions == std::vector<uint32_t>{1, 16});
            const bool quantized = precision != zoo::Precision::kFloat32;
            CHECK(input.type ==
                  (quantized ? OperandType::TENSOR_QUANT8_ASYMM : OperandType::TENSOR_FLOAT32));
            CHECK(hasOperandType(model, OperandType::TENSOR_QUANT8_SYMM_PER_CHANNEL) ==
                  (precision == zoo::Precision::kQuant8PerChannel));
            // Large weights travel in a shared-memory pool, as the NNAPI runtime sends them.
            CHECK(model.pools.size() == 1);

            const auto types = operationTypes(model);
            for (OperationType t :
                 {OperationType::CONV_2D, OperationType::FULLY_CONNECTED, OperationType::SOFTMAX}) {
                CHECK(types.count(t) == 1);
            }
            if (network == zoo::Network::kMobileNetV1) {
                CHECK(types == std::set<OperationType>{
                                   OperationType::CONV_2D, OperationType::DEPTHWISE_CONV_2D,
                                   OperationType::AVERAGE_POOL_2D, OperationType::RESHAPE,
                                   OperationType::FULLY_CONNECTED, OperationType::SOFTMAX});
            } else if (network == zoo::Network::kMobileNetV2) {
                CHECK(types == std::set<OperationType>{
                                   OperationType::CONV_2D, OperationType::DEPTHWISE_CONV_2D,
                                   OperationType::ADD, OperationType::MEAN,
                                   OperationType::FULLY_CONNECTED, OperationType::SOFTMAX});
            } else {
                CHECK(types == std::set<OperationType>{
                                   OperationType::CONV_2D, OperationType::MAX_POOL_2D,
                                   OperationType::ADD, OperationType::MEAN,
                                   OperationType::FULLY_CONNECTED, OperationType::SOFTMAX});
            }
        }
    }
}

TEST_CASE("testbench_zoo_full_size_layer_shapes") {
    // The published multiply-accumulate counts at 224×224 (MobileNet-v1 569 M, MobileNet-v2
    // 300 M, ResNet-18 1.82 G) pin down every layer's shape.
    struct Expected {
        zoo::Network network;
        uint32_t operations;
        double gmac;
    };
    const Expected expected[] = {{zoo::Network::kMobileNetV1, 31, 0.569},
                                 {zoo::Network::kMobileNetV2, 65, 0.300},
                                 {zoo::Network::kResNet18, 32, 1.82}};
    for (const Expected& e : expected) {
        zoo::ZooConfig config;
        config.network = e.network;
        config.precision = zoo::Precision::kQuant8;
        INFO(zoo::modelName(config));
        const Model model = build(config);
        auto level = validateModel(model);
        INFO(level.status().message);
        CHECK(level.ok());
        CHECK(model.main.operations.size() == e.operations);
        CHECK(static_cast<double>(zoo::countMacs(model)) * 1e-9 ==
              doctest::Approx(e.gmac).epsilon(0.01));
        // Global pooling of a 7×7 map into the 1000-class classifier.
        const Operation& fc = model.main.operations[model.main.operations.size() - 2];
        REQUIRE(fc.type == OperationType::FULLY_CONNECTED);
        CHECK(model.main.operands[fc.inputs[1]].dimensions[0] == 1000);
    }
}

TEST_CASE("testbench_zoo_deterministic_weights") {
    const zoo::ZooConfig config =
        testing::smallZooConfig(zoo::Network::kMobileNetV2, zoo::Precision::kQuant8);
    const Model a = build(config);
    const Model b = build(config);
    REQUIRE(a.pools.size() == 1);
    REQUIRE(b.pools.size() == 1);
    REQUIRE(a.pools[0]->size() == b.pools[0]->size());
    CHECK(a.operandValues == b.operandValues);
    CHECK(std::memcmp(a.pools[0]->data(), b.pools[0]->data(), a.pools[0]->size()) == 0);
    zoo::ZooConfig other = config;
    other.seed = 2;
    const Model c = build(other);
    REQUIRE(c.pools.size() == 1);
    CHECK(std::memcmp(a.pools[0]->data(), c.pools[0]->data(), a.pools[0]->size()) != 0);

    auto inputs1 = zoo::randomInputs(a, 9);
    auto inputs2 = zoo::randomInputs(a, 9);
    REQUIRE(inputs1.ok());
    REQUIRE(inputs2.ok());
    CHECK(inputs1->at(0).bytes == inputs2->at(0).bytes);
}

TEST_CASE("testbench_zoo_rejects_bad_configs") {
    zoo::ZooConfig config;
    config.inputSize = 0;
    CHECK(zoo::buildZooModel(config).status().code == ErrorStatus::INVALID_ARGUMENT);
    config = {};
    config.widthMultiplier = 0.0f;
    CHECK(zoo::buildZooModel(config).status().code == ErrorStatus::INVALID_ARGUMENT);
    config = {};
    config.numClasses = 0;
    CHECK(zoo::buildZooModel(config).status().code == ErrorStatus::INVALID_ARGUMENT);
    CHECK(zoo::networkFromName("resnet18") == zoo::Network::kResNet18);
    CHECK_FALSE(zoo::networkFromName("resnet50").has_value());
}

TEST_CASE("testbench_zoo_runs_on_golden") {
    for (zoo::Network network : zoo::classifierNetworks()) {
        for (zoo::Precision precision : kPrecisions) {
            const zoo::ZooConfig config = testing::smallZooConfig(network, precision);
            INFO(zoo::modelName(config));
            const Model model = build(config);
            auto inputs = zoo::randomInputs(model, 3);
            REQUIRE(inputs.ok());

            // Every quant8 activation: at most 1% of values pinned at a range end that is not
            // an activation bound (0 after RELU/RELU6 with zero point 0 is a real zero, 255 is
            // RELU6's 6 when the scale is 6/255).
            golden::ExecuteOptions options;
            size_t checkedActivations = 0;
            options.observer = [&](uint32_t index, const std::vector<TensorData>& outputs) {
                const Operand& out = model.main.operands[model.main.operations[index].outputs[0]];
                if (out.type != OperandType::TENSOR_QUANT8_ASYMM ||
                    model.main.operations[index].type == OperationType::SOFTMAX) {
                    return;
                }
                ++checkedActivations;
                size_t low = 0, high = 0;
                for (uint8_t q : outputs[0].bytes) {
                    low += q == 0;
                    high += q == 255;
                }
                const double n = static_cast<double>(outputs[0].bytes.size());
                INFO("operation " << index << " " << nameOf(model.main.operations[index].type));
                if (out.zeroPoint != 0) CHECK(low / n <= 0.01);
                if (std::abs(out.scale * 255.0f - 6.0f) > 1e-4f) CHECK(high / n <= 0.01);
                // Not collapsed to one value either.
                CHECK(std::set<uint8_t>(outputs[0].bytes.begin(), outputs[0].bytes.end()).size() >
                      1);
            };
            auto outputs = golden::execute(model, *inputs, options);
            INFO(outputs.status().message);
            REQUIRE(outputs.ok());
            REQUIRE(outputs->size() == 1);
            const TensorData& out = outputs->at(0);
            CHECK(out.dimensions == std::vector<uint32_t>{1, 16});
            if (precision == zoo::Precision::kFloat32) {
                const auto p = floats(out);
                REQUIRE(p.size() == 16);
                double sum = 0.0;
                for (float v : p) {
                    CHECK(std::isfinite(v));
                    sum += v;
                }
                CHECK(sum == doctest::Approx(1.0).epsilon(1e-4));
            } else {
                CHECK(checkedActivations > 10);
                REQUIRE(out.bytes.size() == 16);
                double sum = 0.0;
                for (uint8_t q : out.bytes) sum += q / 256.0;
                CHECK(sum == doctest::Approx(1.0).epsilon(0.05));
                CHECK(std::set<uint8_t>(out.bytes.begin(), out.bytes.end()).size() > 2);
            }
        }
    }
}

TEST_CASE("testbench_zoo_quant8_tracks_float") {
    // The quant8 variants quantize the same real network: on the same input their logits stay
    // close to the float ones (measured: at most 0.27 apart, 0.09 on average, for logits
    // spread with a standard deviation of about 1.2). A saturating or mis-scaled layer moves
    // them by whole units.
    for (zoo::Network network : zoo::classifierNetworks()) {
        const Model floatModel = build(testing::smallZooConfig(network, zoo::Precision::kFloat32));
        auto inputs =
            zoo::randomInputs(build(testing::smallZooConfig(network, zoo::Precision::kQuant8)), 11);
        REQUIRE(inputs.ok());
        const std::vector<float> reference =
            logits(floatModel, inputs->at(0).bytes, inputs->at(0).dimensions);
        REQUIRE(reference.size() == 16);
        for (zoo::Precision precision :
             {zoo::Precision::kQuant8, zoo::Precision::kQuant8PerChannel}) {
            const zoo::ZooConfig config = testing::smallZooConfig(network, precision);
            INFO(zoo::modelName(config));
            const std::vector<float> q =
                logits(build(config), inputs->at(0).bytes, inputs->at(0).dimensions);
            REQUIRE(q.size() == reference.size());
            double sum = 0.0;
            for (size_t i = 0; i < q.size(); ++i) {
                CHECK(std::abs(q[i] - reference[i]) <= 0.5f);
                sum += std::abs(q[i] - reference[i]);
            }
            CHECK(sum / q.size() <= 0.15);
        }
    }
}

TEST_CASE("testbench_zoo_json_round_trip_runs") {
    // What `nncosim zoo` writes: the model, its inputs and the golden's outputs; reading the
    // file back and running it gives the same outputs.
    const zoo::ZooConfig config =
        testing::smallZooConfig(zoo::Network::kResNet18, zoo::Precision::kQuant8PerChannel);
    CtsTest test;
    test.name = zoo::modelName(config);
    test.model = build(config);
    auto inputs = zoo::randomInputs(test.model, 4);
    REQUIRE(inputs.ok());
    test.inputs = *inputs;
    auto outputs = golden::execute(test.model, test.inputs);
    REQUIRE(outputs.ok());
    test.expectedOutputs = *outputs;
    test.outputIgnored = {false};
    const auto path = std::filesystem::temp_directory_path() / "nncosim_zoo_test.json";
    Status status = writeCtsFile(path.string(), test);
    INFO(status.message);
    REQUIRE(status.ok());
    auto file = readCtsFile(path.string());
    std::filesystem::remove(path);
    INFO(file.status().message);
    REQUIRE(file.ok());
    REQUIRE(file->tests.size() == 1);
    const CtsTest& back = file->tests[0];
    CHECK(validateModel(back.model).ok());
    auto again = golden::execute(back.model, back.inputs);
    REQUIRE(again.ok());
    CHECK(again->at(0).bytes == back.expectedOutputs.at(0).bytes);
    CHECK(back.expectedOutputs.at(0).bytes == test.expectedOutputs[0].bytes);
}
