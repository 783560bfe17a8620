// The model JSON writer: what it writes, readCtsFile reads back identically.
#include <doctest/doctest.h>

#include <Eigen/Core>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <limits>
#include <random>

#include "model/Builder.h"
#include "model/CtsReader.h"
#include "model/ModelJson.h"
#include "model/Validation.h"

using namespace nncosim;

namespace {

template <typename T>
std::vector<uint8_t> bytesOf(const std::vector<T>& values) {
    std::vector<uint8_t> out(values.size() * sizeof(T));
    std::memcpy(out.data(), values.data(), out.size());
    return out;
}

bool sameBits(float a, float b) {
    return std::memcmp(&a, &b, sizeof(float)) == 0;
}

void checkSameSubgraph(const Model& ma, const Subgraph& a, const Model& mb, const Subgraph& b) {
    REQUIRE(a.operands.size() == b.operands.size());
    for (size_t i = 0; i < a.operands.size(); ++i) {
        INFO("operand " << i);
        const Operand& x = a.operands[i];
        const Operand& y = b.operands[i];
        CHECK(x.type == y.type);
        CHECK(x.dimensions == y.dimensions);
        CHECK(sameBits(x.scale, y.scale));
        CHECK(x.zeroPoint == y.zeroPoint);
        CHECK(x.lifetime == y.lifetime);
        REQUIRE(x.extraParams.index() == y.extraParams.index());
        if (const auto* px = std::get_if<SymmPerChannelQuantParams>(&x.extraParams)) {
            const auto& py = std::get<SymmPerChannelQuantParams>(y.extraParams);
            CHECK(px->scales == py.scales);
            CHECK(px->channelDim == py.channelDim);
        }
        if (x.lifetime == OperandLifeTime::CONSTANT_COPY ||
            x.lifetime == OperandLifeTime::CONSTANT_REFERENCE) {
            REQUIRE(x.location.length == y.location.length);
            const uint8_t* dx = constantData(ma, x);
            const uint8_t* dy = constantData(mb, y);
            REQUIRE(dx != nullptr);
            REQUIRE(dy != nullptr);
            CHECK(std::memcmp(dx, dy, x.location.length) == 0);
        }
        if (x.lifetime == OperandLifeTime::SUBGRAPH) CHECK(x.location.offset == y.location.offset);
    }
    REQUIRE(a.operations.size() == b.operations.size());
    for (size_t i = 0; i < a.operations.size(); ++i) {
        CHECK(a.operations[i].type == b.operations[i].type);
        CHECK(a.operations[i].inputs == b.operations[i].inputs);
        CHECK(a.operations[i].outputs == b.operations[i].outputs);
    }
    CHECK(a.inputIndexes == b.inputIndexes);
    CHECK(a.outputIndexes == b.outputIndexes);
}

void checkSameData(const std::vector<TensorData>& a, const std::vector<TensorData>& b) {
    REQUIRE(a.size() == b.size());
    for (size_t i = 0; i < a.size(); ++i) {
        INFO("tensor " << i);
        CHECK(a[i].dimensions == b[i].dimensions);
        CHECK(a[i].bytes == b[i].bytes);
    }
}

void checkSameTest(const CtsTest& a, const CtsTest& b) {
    CHECK(a.name == b.name);
    checkSameSubgraph(a.model, a.model.main, b.model, b.model.main);
    REQUIRE(a.model.referenced.size() == b.model.referenced.size());
    for (size_t i = 0; i < a.model.referenced.size(); ++i) {
        INFO("referenced " << i);
        checkSameSubgraph(a.model, a.model.referenced[i], b.model, b.model.referenced[i]);
    }
    CHECK(a.model.relaxComputationFloat32toFloat16 == b.model.relaxComputationFloat32toFloat16);
    checkSameData(a.inputs, b.inputs);
    checkSameData(a.expectedOutputs, b.expectedOutputs);
    CHECK(a.outputIgnored == b.outputIgnored);
    CHECK(a.expectFailure == b.expectFailure);
    CHECK(sameBits(a.multinomialTolerance, b.multinomialTolerance));
    CHECK(a.minSupportedVersion == b.minSupportedVersion);
}

/// Writes, reads back, compares, and checks that writing again gives the same text.
CtsTest roundTrip(const CtsTest& test) {
    auto text = toCtsJson(test, "round_trip");
    INFO(text.status().message);
    REQUIRE(text.ok());
    auto file = parseCtsJson(*text, "round_trip.json");
    INFO(file.status().message);
    REQUIRE(file.ok());
    CHECK(file->spec == "round_trip");
    REQUIRE(file->tests.size() == 1);
    checkSameTest(test, file->tests[0]);
    auto again = toCtsJson(file->tests[0], "round_trip");
    REQUIRE(again.ok());
    CHECK(*again == *text);
    return std::move(file->tests[0]);
}

/// Appends bytes to the model's operandValues and returns their location.
DataLocation appendValue(Model& model, const std::vector<uint8_t>& bytes) {
    model.operandValues.resize((model.operandValues.size() + 3) & ~size_t{3});
    DataLocation loc;
    loc.offset = static_cast<uint32_t>(model.operandValues.size());
    loc.length = static_cast<uint32_t>(bytes.size());
    model.operandValues.insert(model.operandValues.end(), bytes.begin(), bytes.end());
    return loc;
}

void requireValid(const Model& model) {
    auto level = validateModel(model);
    INFO(level.status().message);
    REQUIRE(level.ok());
}

/// A float32 CONV_2D whose filter is a CONSTANT_REFERENCE and whose bias holds the floats that
/// are hard to write: non-finite values, -0, denormals, extremes, and 0x15ae43fd, the one
/// positive float whose shortest digits read through a double land on its neighbour.
CtsTest floatConvTest() {
    ModelBuilder b;
    const uint32_t input = b.addInput(OperandType::TENSOR_FLOAT32, {1, 3, 3, 2});
    std::vector<float> filter(8 * 2 * 2 * 2);
    for (size_t i = 0; i < filter.size(); ++i) filter[i] = 0.1f * static_cast<float>(i) - 1.3f;
    const uint32_t weights = b.addReferenceBytes(OperandType::TENSOR_FLOAT32, {8, 2, 2, 2},
                                                 filter.data(), filter.size() * sizeof(float));
    float hard;
    const uint32_t hardBits = 0x15ae43fd;
    std::memcpy(&hard, &hardBits, sizeof(hard));
    const std::vector<float> bias = {std::numeric_limits<float>::quiet_NaN(),
                                     std::numeric_limits<float>::infinity(),
                                     -std::numeric_limits<float>::infinity(),
                                     -0.0f,
                                     std::numeric_limits<float>::denorm_min(),
                                     std::numeric_limits<float>::max(),
                                     hard,
                                     1.0f / 3.0f};
    const uint32_t biasOperand = b.addConstant(OperandType::TENSOR_FLOAT32, {8}, bias);
    const uint32_t pad = b.addInt32(0), stride = b.addInt32(1), act = b.addInt32(3);
    const uint32_t output = b.addOutput(OperandType::TENSOR_FLOAT32, {1, 2, 2, 8});
    b.addOperation(OperationType::CONV_2D,
                   {input, weights, biasOperand, pad, pad, pad, pad, stride, stride, act},
                   {output});
    b.setRelaxed(true);
    CtsTest test;
    test.name = "float_conv";
    test.model = b.build();
    std::vector<float> in(18);
    for (size_t i = 0; i < in.size(); ++i) in[i] = std::ldexp(static_cast<float>(i) + 0.5f, -3);
    test.inputs = {{{1, 3, 3, 2}, bytesOf(in)}};
    std::vector<float> out(32, 6.0f);
    out[3] = -0.0f;
    test.expectedOutputs = {{{1, 2, 2, 8}, bytesOf(out)}};
    test.outputIgnored = {false};
    test.minSupportedVersion = FeatureLevel::kV1_2;
    return test;
}

/// A quant8 CONV_2D with per-channel TENSOR_QUANT8_SYMM_PER_CHANNEL weights.
CtsTest perChannelConvTest() {
    ModelBuilder b;
    const uint32_t input = b.addInput(OperandType::TENSOR_QUANT8_ASYMM, {1, 2, 2, 3}, 0.5f, 128);
    const std::vector<int8_t> filter = {-128, 127, 0, 1, -1, 5, 7, -9, 100, -100, 3, 2};
    const uint32_t weights =
        b.addConstant(OperandType::TENSOR_QUANT8_SYMM_PER_CHANNEL, {4, 1, 1, 3}, filter);
    b.setPerChannelQuant(weights, {0.5f, 0.25f, 0.125f, 1e-3f}, 0);
    const uint32_t bias = b.addConstant(OperandType::TENSOR_INT32, {4},
                                        std::vector<int32_t>{-7, 0, 1 << 20, -(1 << 30)});
    const uint32_t pad = b.addInt32(0), stride = b.addInt32(1), act = b.addInt32(0);
    const uint32_t layout = b.addBool(false);
    const uint32_t output = b.addOutput(OperandType::TENSOR_QUANT8_ASYMM, {1, 2, 2, 4}, 1.0f, 3);
    b.addOperation(OperationType::CONV_2D,
                   {input, weights, bias, pad, pad, pad, pad, stride, stride, act, layout},
                   {output});
    CtsTest test;
    test.name = "per_channel_conv";
    test.model = b.build();
    test.inputs = {{{1, 2, 2, 3}, {0, 1, 2, 127, 128, 129, 200, 250, 255, 3, 4, 5}}};
    std::vector<uint8_t> out(16);
    for (size_t i = 0; i < out.size(); ++i) out[i] = static_cast<uint8_t>(i * 17);
    test.expectedOutputs = {{{1, 2, 2, 4}, out}};
    test.outputIgnored = {true};
    test.minSupportedVersion = FeatureLevel::kV1_2;
    return test;
}

/// TENSOR_FLOAT16 ADD with a constant operand holding special half values.
CtsTest float16Test() {
    ModelBuilder b;
    const uint32_t a = b.addInput(OperandType::TENSOR_FLOAT16, {2, 3});
    const std::vector<Eigen::half> constant = {Eigen::half(0.1f),
                                               Eigen::half(-65504.0f),
                                               Eigen::half(std::numeric_limits<float>::infinity()),
                                               Eigen::half(std::numeric_limits<float>::quiet_NaN()),
                                               Eigen::half(-0.0f),
                                               Eigen::half(5.96e-8f)};
    const uint32_t c = b.addConstant(OperandType::TENSOR_FLOAT16, {2, 3}, constant);
    const uint32_t act = b.addInt32(0);
    const uint32_t out = b.addOutput(OperandType::TENSOR_FLOAT16, {2, 3});
    b.addOperation(OperationType::ADD, {a, c, act}, {out});
    CtsTest test;
    test.name = "float16_add";
    test.model = b.build();
    const std::vector<Eigen::half> in = {Eigen::half(1.0f),   Eigen::half(2.5f),
                                         Eigen::half(-3.0f),  Eigen::half(1e-3f),
                                         Eigen::half(0.333f), Eigen::half(7.0f)};
    test.inputs = {{{2, 3}, bytesOf(in)}};
    test.expectedOutputs = {{{2, 3}, bytesOf(in)}};
    test.outputIgnored = {false};
    test.minSupportedVersion = FeatureLevel::kV1_2;
    return test;
}

/// IF choosing between two referenced subgraphs that add a constant: one constant in
/// operandValues, the other in a second shared-memory pool (written as one pool).
CtsTest subgraphTest() {
    auto branch = [](OperandLifeTime constantLifetime, DataLocation constantLocation) {
        Subgraph g;
        g.operands.push_back(
            {OperandType::TENSOR_FLOAT32, {2}, 0.0f, 0, OperandLifeTime::SUBGRAPH_INPUT, {}, {}});
        g.operands.push_back(
            {OperandType::TENSOR_FLOAT32, {2}, 0.0f, 0, constantLifetime, constantLocation, {}});
        g.operands.push_back(
            {OperandType::INT32, {}, 0.0f, 0, OperandLifeTime::CONSTANT_COPY, {}, {}});
        g.operands.push_back(
            {OperandType::TENSOR_FLOAT32, {2}, 0.0f, 0, OperandLifeTime::SUBGRAPH_OUTPUT, {}, {}});
        g.operations.push_back({OperationType::ADD, {0, 1, 2}, {3}});
        g.inputIndexes = {0};
        g.outputIndexes = {3};
        return g;
    };
    ModelBuilder b;
    const uint32_t cond = b.addInput(OperandType::TENSOR_BOOL8, {1});
    const uint32_t x = b.addInput(OperandType::TENSOR_FLOAT32, {2});
    // Placeholders for the branches; their constants are placed once the model exists.
    const uint32_t thenOperand = b.addSubgraph({});
    const uint32_t elseOperand = b.addSubgraph({});
    const std::vector<float> mainConstant = {0.25f, -0.5f};
    const uint32_t onPool =
        b.addReferenceBytes(OperandType::TENSOR_FLOAT32, {2}, mainConstant.data(), 8);
    const uint32_t act = b.addInt32(0);
    const uint32_t sum = b.addOperand(OperandType::TENSOR_FLOAT32, {2});
    b.addOperation(OperationType::ADD, {x, onPool, act}, {sum});
    const uint32_t y = b.addOutput(OperandType::TENSOR_FLOAT32, {2});
    b.addOperation(OperationType::IF, {cond, thenOperand, elseOperand, sum}, {y});
    Model model = b.build();

    const DataLocation thenConstant = appendValue(model, bytesOf(std::vector<float>{1.0f, 2.0f}));
    const DataLocation noActivation = appendValue(model, bytesOf(std::vector<int32_t>{0}));
    auto pool = Memory::create(16, "second-pool");
    REQUIRE(pool.ok());
    const std::vector<float> elseValues = {0.0f, 0.0f, -1.0f, -2.0f};
    std::memcpy(pool.value()->data(), elseValues.data(), 16);
    model.pools.push_back(pool.value());
    DataLocation elseConstant;
    elseConstant.poolIndex = static_cast<uint32_t>(model.pools.size() - 1);
    elseConstant.offset = 8;
    elseConstant.length = 8;
    model.referenced[0] = branch(OperandLifeTime::CONSTANT_COPY, thenConstant);
    model.referenced[1] = branch(OperandLifeTime::CONSTANT_REFERENCE, elseConstant);
    for (Subgraph& g : model.referenced) g.operands[2].location = noActivation;

    CtsTest test;
    test.name = "if_two_pools";
    test.model = std::move(model);
    test.inputs = {{{1}, {1}}, {{2}, bytesOf(std::vector<float>{3.0f, 4.0f})}};
    test.expectedOutputs = {{{2}, bytesOf(std::vector<float>{4.25f, 5.5f})}};
    test.outputIgnored = {false};
    test.minSupportedVersion = FeatureLevel::kV1_3;
    return test;
}

}  // namespace

TEST_CASE("model_json_round_trip_float_reference_pool") {
    CtsTest test = floatConvTest();
    requireValid(test.model);
    roundTrip(test);
}

TEST_CASE("model_json_round_trip_per_channel") {
    CtsTest test = perChannelConvTest();
    requireValid(test.model);
    CtsTest back = roundTrip(test);
    requireValid(back.model);
}

TEST_CASE("model_json_round_trip_float16") {
    CtsTest test = float16Test();
    requireValid(test.model);
    roundTrip(test);
}

TEST_CASE("model_json_round_trip_subgraphs_and_pools") {
    CtsTest test = subgraphTest();
    requireValid(test.model);
    CtsTest back = roundTrip(test);
    // The two pools of the original become the reader's single reference pool.
    CHECK(test.model.pools.size() == 2);
    CHECK(back.model.pools.size() == 1);
    requireValid(back.model);
}

TEST_CASE("model_json_round_trip_random_float_bits") {
    // Every finite float class: random bit patterns, NaNs made canonical (the format has one NaN).
    std::mt19937 rng(1234);
    std::vector<float> values(20000);
    for (float& v : values) {
        const uint32_t bits = rng();
        std::memcpy(&v, &bits, sizeof(v));
        if (std::isnan(v)) v = std::numeric_limits<float>::quiet_NaN();
    }
    ModelBuilder b;
    const uint32_t in = b.addInput(OperandType::TENSOR_FLOAT32, {20000});
    const uint32_t c = b.addConstant(OperandType::TENSOR_FLOAT32, {20000}, values);
    const uint32_t act = b.addInt32(0);
    const uint32_t out = b.addOutput(OperandType::TENSOR_FLOAT32, {20000});
    b.addOperation(OperationType::ADD, {in, c, act}, {out});
    CtsTest test;
    test.name = "random_bits";
    test.model = b.build();
    test.inputs = {{{20000}, bytesOf(values)}};
    test.expectedOutputs = {{{20000}, bytesOf(values)}};
    test.outputIgnored = {false};
    roundTrip(test);
}

TEST_CASE("model_json_model_without_values") {
    // A model alone: inputs and outputs are written without data and read back as omitted.
    CtsTest test = perChannelConvTest();
    test.inputs.clear();
    test.expectedOutputs.clear();
    test.outputIgnored.clear();
    auto text = toCtsJson(test);
    REQUIRE(text.ok());
    auto file = parseCtsJson(*text, "model.json");
    REQUIRE(file.ok());
    CHECK(file->spec == "per_channel_conv");
    const CtsTest& back = file->tests.at(0);
    checkSameSubgraph(test.model, test.model.main, back.model, back.model.main);
    REQUIRE(back.inputs.size() == 1);
    CHECK(back.inputs[0].bytes.empty());
    REQUIRE(back.expectedOutputs.size() == 1);
    CHECK(back.expectedOutputs[0].bytes.empty());
}

TEST_CASE("model_json_write_file") {
    const auto path = std::filesystem::temp_directory_path() / "nncosim_model_json_test.json";
    CtsTest test = subgraphTest();
    Status status = writeCtsFile(path.string(), test);
    INFO(status.message);
    REQUIRE(status.ok());
    auto file = readCtsFile(path.string());
    std::filesystem::remove(path);
    INFO(file.status().message);
    REQUIRE(file.ok());
    CHECK(file->spec == "nncosim_model_json_test");
    CHECK(file->version == "V1_3");
    REQUIRE(file->tests.size() == 1);
    checkSameTest(test, file->tests[0]);
    CHECK(!writeCtsFile("/nonexistent-dir/x.json", test).ok());
}

TEST_CASE("model_json_rejects_what_the_format_cannot_hold") {
    auto requireRejected = [](const CtsTest& test, const char* needle) {
        auto text = toCtsJson(test);
        REQUIRE_FALSE(text.ok());
        CHECK(text.status().code == ErrorStatus::INVALID_ARGUMENT);
        INFO(text.status().message);
        CHECK(text.status().message.find(needle) != std::string::npos);
    };
    SUBCASE("input shape other than the operand's") {
        CtsTest test = floatConvTest();
        test.inputs[0].dimensions = {1, 9, 2};
        requireRejected(test, "input dimensions");
    }
    SUBCASE("input bytes not matching the shape") {
        CtsTest test = floatConvTest();
        test.inputs[0].bytes.pop_back();
        requireRejected(test, "bytes for dimensions");
    }
    SUBCASE("output shape contradicting a known dimension") {
        CtsTest test = floatConvTest();
        test.expectedOutputs[0].dimensions = {1, 4, 1, 8};
        requireRejected(test, "output dimensions");
    }
    SUBCASE("wrong number of inputs") {
        CtsTest test = floatConvTest();
        test.inputs.push_back(test.inputs[0]);
        requireRejected(test, "2 inputs for 1 model inputs");
    }
    SUBCASE("constant outside its pool") {
        CtsTest test = floatConvTest();
        test.model.main.operands[1].location.offset = 1u << 20;
        requireRejected(test, "operand 1: constant outside its memory");
    }
    SUBCASE("pointer lifetime") {
        CtsTest test = floatConvTest();
        test.model.main.operands[2].lifetime = OperandLifeTime::POINTER;
        requireRejected(test, "POINTER");
    }
    SUBCASE("extension operand type") {
        CtsTest test = floatConvTest();
        test.model.main.operands[0].type = static_cast<OperandType>(makeExtensionType(1, 0));
        requireRejected(test, "extension");
    }
}

TEST_CASE("model_json_round_trip_unknown_output_shape") {
    // Outputs of unknown dimensions keep their values; readers report the operand's shape.
    CtsTest test = float16Test();
    test.model.main.operands[test.model.main.outputIndexes[0]].dimensions = {0, 3};
    auto text = toCtsJson(test);
    INFO(text.status().message);
    REQUIRE(text.ok());
    auto file = parseCtsJson(*text, "unknown.json");
    REQUIRE(file.ok());
    const TensorData& out = file->tests.at(0).expectedOutputs.at(0);
    CHECK(out.dimensions == std::vector<uint32_t>{0, 3});
    CHECK(out.bytes == test.expectedOutputs[0].bytes);
}

TEST_CASE("model_json_round_trip_cts_files") {
    // Shipped tests covering IF/WHILE with CONSTANT_REFERENCE pools, per-channel weights,
    // float16 with NaN, booleans, ignored outputs, and the bundled samples.
    std::vector<std::string> paths;
    for (const char* name :
         {"V1_3/if_constant.json", "V1_3/while_fib.json", "V1_2/conv2d_per_channel.json",
          "V1_2/add_v1_2.json", "V1_2/equal.json", "V1_0/lstm.json"}) {
        paths.push_back(std::string(NNCOSIM_CTS_DIR) + "/" + name);
    }
    auto samples = findJsonFiles({std::string(NNCOSIM_SOURCE_DIR) + "/testbench/samples"});
    REQUIRE(samples.ok());
    paths.insert(paths.end(), samples->begin(), samples->end());
    size_t tests = 0;
    for (const auto& path : paths) {
        auto file = readCtsFile(path);
        INFO(file.status().message);
        REQUIRE(file.ok());
        for (const CtsTest& test : file->tests) {
            INFO(path << " " << test.name);
            roundTrip(test);
            ++tests;
        }
    }
    CHECK(tests > 100);
}
