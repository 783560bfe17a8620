// TFLite importer: .tflite files are built here with the generated flatbuffers object API,
// imported, checked against the NNAPI validation rules and, for tiny models, executed on the
// golden reference against hand-computed results.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <limits>
#include <map>
#include <numeric>
#include <optional>

#include "golden/Executor.h"
#include "golden/tests/TestTensors.h"
#include "model/Validation.h"
#include "testbench/ModelFiles.h"
#include "testbench/tflite/TfliteImporter.h"
#include "testbench/tflite/tflite_schema_generated.h"

namespace nncosim {
namespace {

namespace tfl = nncosim::tflite;
using golden::valuesOf;
using tfl::BuiltinOperator;
using tfl::TensorType;

struct Quant {
    std::vector<float> scales;
    std::vector<int64_t> zeroPoints;
    int32_t dimension = 0;
};

template <typename T>
std::vector<uint8_t> bytesOf(const std::vector<T>& values) {
    std::vector<uint8_t> bytes(values.size() * sizeof(T));
    std::memcpy(bytes.data(), values.data(), bytes.size());
    return bytes;
}

template <typename T>
tfl::BuiltinOptionsUnion optionsOf(T table) {
    tfl::BuiltinOptionsUnion u;
    u.Set(std::move(table));
    return u;
}

/// Writes a .tflite model: tensors, operators and subgraph 0's inputs and outputs.
class TfliteWriter {
  public:
    TfliteWriter() {
        mModel.version = 3;
        mModel.buffers.push_back(std::make_unique<tfl::BufferT>());  // the empty sentinel
        mModel.subgraphs.push_back(std::make_unique<tfl::SubGraphT>());
    }

    int32_t tensor(TensorType type, std::vector<int32_t> shape, std::optional<Quant> quant = {},
                   std::vector<uint8_t> data = {}) {
        auto t = std::make_unique<tfl::TensorT>();
        t->type = type;
        t->shape = std::move(shape);
        t->name = "t" + std::to_string(graph().tensors.size());
        if (quant) {
            t->quantization = std::make_unique<tfl::QuantizationParametersT>();
            t->quantization->scale = quant->scales;
            t->quantization->zero_point = quant->zeroPoints;
            t->quantization->quantized_dimension = quant->dimension;
        }
        if (!data.empty()) {
            auto buffer = std::make_unique<tfl::BufferT>();
            buffer->data = std::move(data);
            t->buffer = static_cast<uint32_t>(mModel.buffers.size());
            mModel.buffers.push_back(std::move(buffer));
        }
        graph().tensors.push_back(std::move(t));
        return static_cast<int32_t>(graph().tensors.size() - 1);
    }
    template <typename T>
    int32_t constant(TensorType type, std::vector<int32_t> shape, const std::vector<T>& values,
                     std::optional<Quant> quant = {}) {
        return tensor(type, std::move(shape), std::move(quant), bytesOf(values));
    }
    int32_t input(TensorType type, std::vector<int32_t> shape, std::optional<Quant> quant = {}) {
        const int32_t t = tensor(type, std::move(shape), std::move(quant));
        graph().inputs.push_back(t);
        return t;
    }
    int32_t output(TensorType type, std::vector<int32_t> shape, std::optional<Quant> quant = {}) {
        const int32_t t = tensor(type, std::move(shape), std::move(quant));
        graph().outputs.push_back(t);
        return t;
    }
    void op(BuiltinOperator code, std::vector<int32_t> inputs, std::vector<int32_t> outputs,
            tfl::BuiltinOptionsUnion options = {}, const std::string& customCode = "") {
        auto o = std::make_unique<tfl::OperatorT>();
        o->opcode_index = opcode(code, customCode);
        o->inputs = std::move(inputs);
        o->outputs = std::move(outputs);
        o->builtin_options = std::move(options);
        graph().operators.push_back(std::move(o));
    }
    tfl::ModelT& model() { return mModel; }
    tfl::SubGraphT& graph() { return *mModel.subgraphs[0]; }

    std::vector<uint8_t> finish() {
        flatbuffers::FlatBufferBuilder fbb;
        tfl::FinishModelBuffer(fbb, tfl::Model::Pack(fbb, &mModel));
        return {fbb.GetBufferPointer(), fbb.GetBufferPointer() + fbb.GetSize()};
    }

  private:
    uint32_t opcode(BuiltinOperator code, const std::string& customCode) {
        const auto key = std::make_pair(code, customCode);
        auto it = mOpcodes.find(key);
        if (it != mOpcodes.end()) return it->second;
        auto c = std::make_unique<tfl::OperatorCodeT>();
        c->builtin_code = code;
        c->deprecated_builtin_code = static_cast<int8_t>(std::min(static_cast<int32_t>(code), 127));
        c->custom_code = customCode;
        mModel.operator_codes.push_back(std::move(c));
        return mOpcodes[key] = static_cast<uint32_t>(mModel.operator_codes.size() - 1);
    }

    tfl::ModelT mModel;
    std::map<std::pair<BuiltinOperator, std::string>, uint32_t> mOpcodes;
};

TfliteImport importOk(const std::vector<uint8_t>& bytes) {
    auto imported = importTflite(bytes.data(), bytes.size(), "test.tflite");
    REQUIRE_MESSAGE(imported.ok(), imported.status().message);
    auto level = validateModel(imported->model);
    REQUIRE_MESSAGE(level.ok(), level.status().message);
    return std::move(*imported);
}

std::string importError(const std::vector<uint8_t>& bytes) {
    auto imported = importTflite(bytes.data(), bytes.size(), "test.tflite");
    REQUIRE_FALSE(imported.ok());
    CHECK(imported.status().code == ErrorStatus::INVALID_ARGUMENT);
    return imported.status().message;
}

std::vector<OperationType> operationTypes(const Model& model) {
    std::vector<OperationType> types;
    for (const auto& op : model.main.operations) types.push_back(op.type);
    return types;
}

const Operand& operandAt(const Model& model, uint32_t operation, uint32_t input) {
    return model.main.operands[model.main.operations.at(operation).inputs.at(input)];
}

template <typename T>
T scalarAt(const Model& model, uint32_t operation, uint32_t input) {
    const Operand& o = operandAt(model, operation, input);
    T value{};
    std::memcpy(&value, constantData(model, o), sizeof(T));
    return value;
}

// A quant8 classifier: CONV_2D(+RELU6) -> MAX_POOL_2D -> FULLY_CONNECTED -> SOFTMAX.
std::vector<uint8_t> quant8Classifier() {
    TfliteWriter w;
    const int32_t x = w.input(TensorType::UINT8, {1, 4, 4, 1}, Quant{{0.5f}, {0}});
    std::vector<uint8_t> convWeights(2 * 3 * 3);
    std::iota(convWeights.begin(), convWeights.end(), 120);
    const int32_t cw =
        w.constant(TensorType::UINT8, {2, 3, 3, 1}, convWeights, Quant{{0.25f}, {128}});
    const int32_t cb =
        w.constant(TensorType::INT32, {2}, std::vector<int32_t>{8, -8}, Quant{{0.125f}, {0}});
    const int32_t conv = w.tensor(TensorType::UINT8, {1, 4, 4, 2}, Quant{{6.0f / 255}, {0}});
    tfl::Conv2DOptionsT convOptions;
    convOptions.padding = tfl::Padding::SAME;
    convOptions.stride_w = convOptions.stride_h = 1;
    convOptions.fused_activation_function = tfl::ActivationFunctionType::RELU6;
    w.op(BuiltinOperator::CONV_2D, {x, cw, cb}, {conv}, optionsOf(convOptions));

    const int32_t pool = w.tensor(TensorType::UINT8, {1, 2, 2, 2}, Quant{{6.0f / 255}, {0}});
    tfl::Pool2DOptionsT poolOptions;
    poolOptions.padding = tfl::Padding::VALID;
    poolOptions.stride_w = poolOptions.stride_h = 2;
    poolOptions.filter_width = poolOptions.filter_height = 2;
    w.op(BuiltinOperator::MAX_POOL_2D, {conv}, {pool}, optionsOf(poolOptions));

    // FULLY_CONNECTED flattens its [1, 2, 2, 2] input to [1, 8] itself (TFLite and NNAPI alike).
    std::vector<uint8_t> fcWeights(20 * 8);  // 160 bytes: a CONSTANT_REFERENCE
    for (size_t i = 0; i < fcWeights.size(); ++i) fcWeights[i] = static_cast<uint8_t>(i * 37 % 256);
    const int32_t fw = w.constant(TensorType::UINT8, {20, 8}, fcWeights, Quant{{0.1f}, {120}});
    const int32_t fb = w.constant(TensorType::INT32, {20}, std::vector<int32_t>(20, 3),
                                  Quant{{6.0f / 255 * 0.1f}, {0}});
    const int32_t logits = w.tensor(TensorType::UINT8, {1, 20}, Quant{{0.2f}, {100}});
    w.op(BuiltinOperator::FULLY_CONNECTED, {pool, fw, fb}, {logits},
         optionsOf(tfl::FullyConnectedOptionsT{}));

    const int32_t probs = w.output(TensorType::UINT8, {1, 20}, Quant{{1.0f / 256}, {0}});
    tfl::SoftmaxOptionsT softmax;
    softmax.beta = 1.0f;
    w.op(BuiltinOperator::SOFTMAX, {logits}, {probs}, optionsOf(softmax));
    return w.finish();
}

TEST_CASE("tflite_import_quant8_network") {
    const TfliteImport imported = importOk(quant8Classifier());
    const Model& model = imported.model;
    CHECK(operationTypes(model) ==
          std::vector<OperationType>{OperationType::CONV_2D, OperationType::MAX_POOL_2D,
                                     OperationType::FULLY_CONNECTED, OperationType::SOFTMAX});
    REQUIRE(model.main.inputIndexes.size() == 1);
    REQUIRE(model.main.outputIndexes.size() == 1);
    CHECK(imported.inputNames == std::vector<std::string>{"t0"});
    const Operand& input = model.main.operands[model.main.inputIndexes[0]];
    CHECK(input.type == OperandType::TENSOR_QUANT8_ASYMM);
    CHECK(input.dimensions == std::vector<uint32_t>{1, 4, 4, 1});
    const Operand& output = model.main.operands[model.main.outputIndexes[0]];
    CHECK(output.scale == doctest::Approx(1.0 / 256));

    // CONV_2D: implicit SAME padding (1), strides 1, fused RELU6 (3); small weights copied.
    const auto& conv = model.main.operations[0];
    REQUIRE(conv.inputs.size() == 7);
    CHECK(operandAt(model, 0, 1).lifetime == OperandLifeTime::CONSTANT_COPY);
    CHECK(operandAt(model, 0, 1).zeroPoint == 128);
    CHECK(operandAt(model, 0, 2).type == OperandType::TENSOR_INT32);
    CHECK(scalarAt<int32_t>(model, 0, 3) == 1);
    CHECK(scalarAt<int32_t>(model, 0, 4) == 1);
    CHECK(scalarAt<int32_t>(model, 0, 6) == 3);
    // MAX_POOL_2D: VALID (2), strides 2, filter 2x2.
    CHECK(scalarAt<int32_t>(model, 1, 1) == 2);
    CHECK(scalarAt<int32_t>(model, 1, 4) == 2);
    // FULLY_CONNECTED: 160-byte weights referenced from the pool, 80-byte bias copied.
    CHECK(operandAt(model, 2, 1).lifetime == OperandLifeTime::CONSTANT_REFERENCE);
    CHECK(operandAt(model, 2, 2).lifetime == OperandLifeTime::CONSTANT_COPY);
    CHECK(model.pools.size() == 1);
    CHECK(scalarAt<float>(model, 3, 1) == 1.0f);

    // The golden runs it: 20 probabilities summing to about 1 (256 in units of 1/256).
    std::vector<uint8_t> pixels(16);
    std::iota(pixels.begin(), pixels.end(), 0);
    auto outputs = golden::execute(model, {golden::tensor({1, 4, 4, 1}, pixels)});
    REQUIRE_MESSAGE(outputs.ok(), outputs.status().message);
    REQUIRE(outputs->size() == 1);
    CHECK((*outputs)[0].dimensions == std::vector<uint32_t>{1, 20});
    const auto probs = valuesOf<uint8_t>((*outputs)[0]);
    const int sum = std::accumulate(probs.begin(), probs.end(), 0);
    CHECK(sum >= 236);
    CHECK(sum <= 276);
}

TEST_CASE("tflite_import_float_network") {
    // DEPTHWISE_CONV_2D (depth_multiplier left 0, as newer converters do) -> ADD(+RELU)
    // -> AVERAGE_POOL_2D -> SQUEEZE -> SOFTMAX.
    TfliteWriter w;
    const int32_t x = w.input(TensorType::FLOAT32, {1, 5, 5, 2});
    std::vector<float> dwWeights(3 * 3 * 4);
    for (size_t i = 0; i < dwWeights.size(); ++i) dwWeights[i] = 0.05f * static_cast<float>(i % 7);
    const int32_t dw = w.constant(TensorType::FLOAT32, {1, 3, 3, 4}, dwWeights);
    const int32_t db =
        w.constant(TensorType::FLOAT32, {4}, std::vector<float>{0.1f, 0.2f, 0.3f, 0.4f});
    const int32_t conv = w.tensor(TensorType::FLOAT32, {1, 3, 3, 4});
    tfl::DepthwiseConv2DOptionsT dwOptions;
    dwOptions.padding = tfl::Padding::VALID;
    dwOptions.stride_w = dwOptions.stride_h = 1;
    w.op(BuiltinOperator::DEPTHWISE_CONV_2D, {x, dw, db}, {conv}, optionsOf(dwOptions));

    const int32_t offset = w.constant(TensorType::FLOAT32, {4}, std::vector<float>{-1, 0, 1, 2});
    const int32_t sum = w.tensor(TensorType::FLOAT32, {1, 3, 3, 4});
    tfl::AddOptionsT addOptions;
    addOptions.fused_activation_function = tfl::ActivationFunctionType::RELU;
    w.op(BuiltinOperator::ADD, {conv, offset}, {sum}, optionsOf(addOptions));

    const int32_t pooled = w.tensor(TensorType::FLOAT32, {1, 1, 1, 4});
    tfl::Pool2DOptionsT poolOptions;
    poolOptions.padding = tfl::Padding::VALID;
    poolOptions.stride_w = poolOptions.stride_h = 1;
    poolOptions.filter_width = poolOptions.filter_height = 3;
    w.op(BuiltinOperator::AVERAGE_POOL_2D, {sum}, {pooled}, optionsOf(poolOptions));

    const int32_t squeezed = w.tensor(TensorType::FLOAT32, {1, 4});
    tfl::SqueezeOptionsT squeeze;
    squeeze.squeeze_dims = {1, 2};
    w.op(BuiltinOperator::SQUEEZE, {pooled}, {squeezed}, optionsOf(squeeze));
    const int32_t probs = w.output(TensorType::FLOAT32, {1, 4});
    tfl::SoftmaxOptionsT softmax;
    softmax.beta = 1.0f;
    w.op(BuiltinOperator::SOFTMAX, {squeezed}, {probs}, optionsOf(softmax));

    const TfliteImport imported = importOk(w.finish());
    const Model& model = imported.model;
    CHECK(operationTypes(model) ==
          std::vector<OperationType>{OperationType::DEPTHWISE_CONV_2D, OperationType::ADD,
                                     OperationType::AVERAGE_POOL_2D, OperationType::SQUEEZE,
                                     OperationType::SOFTMAX});
    CHECK(scalarAt<int32_t>(model, 0, 6) == 2);  // depth multiplier from the shapes
    CHECK(scalarAt<int32_t>(model, 1, 2) == 1);  // fused RELU

    std::vector<float> pixels(50);
    for (size_t i = 0; i < pixels.size(); ++i) pixels[i] = 0.1f * static_cast<float>(i % 11);
    auto outputs = golden::execute(model, {golden::tensor({1, 5, 5, 2}, pixels)});
    REQUIRE_MESSAGE(outputs.ok(), outputs.status().message);
    const auto p = valuesOf<float>((*outputs)[0]);
    REQUIRE(p.size() == 4);
    CHECK(std::accumulate(p.begin(), p.end(), 0.0f) == doctest::Approx(1.0f));
    CHECK(p[3] > p[0]);  // the largest offset wins
}

TEST_CASE("tflite_import_tiny_conv_matches_hand_computation") {
    SUBCASE("float: y = relu(2x + 1)") {
        TfliteWriter w;
        const int32_t x = w.input(TensorType::FLOAT32, {1, 2, 2, 1});
        const int32_t k = w.constant(TensorType::FLOAT32, {1, 1, 1, 1}, std::vector<float>{2.0f});
        const int32_t b = w.constant(TensorType::FLOAT32, {1}, std::vector<float>{1.0f});
        const int32_t y = w.output(TensorType::FLOAT32, {1, 2, 2, 1});
        tfl::Conv2DOptionsT o;
        o.padding = tfl::Padding::VALID;
        o.stride_w = o.stride_h = 1;
        o.fused_activation_function = tfl::ActivationFunctionType::RELU;
        w.op(BuiltinOperator::CONV_2D, {x, k, b}, {y}, optionsOf(o));
        const Model model = importOk(w.finish()).model;
        auto out = golden::execute(model, {golden::tensor<float>({1, 2, 2, 1}, {-1, 0, 1, 2})});
        REQUIRE_MESSAGE(out.ok(), out.status().message);
        CHECK(valuesOf<float>((*out)[0]) == std::vector<float>{0, 1, 3, 5});
    }
    SUBCASE("uint8: real = 0.5 q, weight 2.0, bias 1.0, so q_out = 2 q + 2") {
        TfliteWriter w;
        const int32_t x = w.input(TensorType::UINT8, {1, 2, 2, 1}, Quant{{0.5f}, {0}});
        const int32_t k = w.constant(TensorType::UINT8, {1, 1, 1, 1}, std::vector<uint8_t>{4},
                                     Quant{{0.5f}, {0}});
        const int32_t b =
            w.constant(TensorType::INT32, {1}, std::vector<int32_t>{4}, Quant{{0.25f}, {0}});
        const int32_t y = w.output(TensorType::UINT8, {1, 2, 2, 1}, Quant{{0.5f}, {0}});
        tfl::Conv2DOptionsT o;
        o.padding = tfl::Padding::SAME;
        o.stride_w = o.stride_h = 1;
        w.op(BuiltinOperator::CONV_2D, {x, k, b}, {y}, optionsOf(o));
        const Model model = importOk(w.finish()).model;
        auto out = golden::execute(model, {golden::tensor<uint8_t>({1, 2, 2, 1}, {0, 1, 2, 3})});
        REQUIRE_MESSAGE(out.ok(), out.status().message);
        CHECK(valuesOf<uint8_t>((*out)[0]) == std::vector<uint8_t>{2, 4, 6, 8});
    }
    SUBCASE("int8 per-channel: x = 2.0, weights 1.0 and 2.0, output scale 0.5 zero point -10") {
        TfliteWriter w;
        const int32_t x = w.input(TensorType::INT8, {1, 1, 1, 1}, Quant{{0.5f}, {0}});
        const int32_t k = w.constant(TensorType::INT8, {2, 1, 1, 1}, std::vector<int8_t>{2, 8},
                                     Quant{{0.5f, 0.25f}, {0, 0}, 0});
        const int32_t b = w.constant(TensorType::INT32, {2}, std::vector<int32_t>{0, 0},
                                     Quant{{0.25f, 0.125f}, {0, 0}, 0});
        const int32_t y = w.output(TensorType::INT8, {1, 1, 1, 2}, Quant{{0.5f}, {-10}});
        tfl::Conv2DOptionsT o;
        o.padding = tfl::Padding::VALID;
        o.stride_w = o.stride_h = 1;
        w.op(BuiltinOperator::CONV_2D, {x, k, b}, {y}, optionsOf(o));
        const Model model = importOk(w.finish()).model;
        auto out = golden::execute(model, {golden::tensor<int8_t>({1, 1, 1, 1}, {4})});
        REQUIRE_MESSAGE(out.ok(), out.status().message);
        CHECK(valuesOf<int8_t>((*out)[0]) == std::vector<int8_t>{-6, -2});
    }
}

TEST_CASE("tflite_import_per_channel_weights") {
    TfliteWriter w;
    const int32_t x = w.input(TensorType::INT8, {1, 3, 3, 2}, Quant{{0.1f}, {-3}});
    const int32_t k =
        w.constant(TensorType::INT8, {3, 1, 1, 2}, std::vector<int8_t>{1, 2, 3, 4, 5, 6},
                   Quant{{0.5f, 0.25f, 0.125f}, {0, 0, 0}, 0});
    const int32_t b = w.constant(TensorType::INT32, {3}, std::vector<int32_t>{1, 2, 3},
                                 Quant{{0.05f, 0.025f, 0.0125f}, {0, 0, 0}, 0});
    const int32_t c = w.tensor(TensorType::INT8, {1, 3, 3, 3}, Quant{{0.2f}, {0}});
    tfl::Conv2DOptionsT conv;
    conv.stride_w = conv.stride_h = 1;
    w.op(BuiltinOperator::CONV_2D, {x, k, b}, {c}, optionsOf(conv));
    // Depthwise filters [1, H, W, C] are quantized along dimension 3.
    const int32_t dk = w.constant(TensorType::INT8, {1, 2, 2, 3}, std::vector<int8_t>(12, 7),
                                  Quant{{0.5f, 0.4f, 0.3f}, {0, 0, 0}, 3});
    const int32_t db = w.constant(TensorType::INT32, {3}, std::vector<int32_t>{0, 0, 0},
                                  Quant{{0.1f, 0.08f, 0.06f}, {0, 0, 0}, 0});
    const int32_t y = w.output(TensorType::INT8, {1, 2, 2, 3}, Quant{{0.3f}, {5}});
    tfl::DepthwiseConv2DOptionsT dw;
    dw.padding = tfl::Padding::VALID;
    dw.stride_w = dw.stride_h = 1;
    dw.depth_multiplier = 1;
    w.op(BuiltinOperator::DEPTHWISE_CONV_2D, {c, dk, db}, {y}, optionsOf(dw));

    const Model model = importOk(w.finish()).model;
    const Operand& filter = operandAt(model, 0, 1);
    CHECK(filter.type == OperandType::TENSOR_QUANT8_SYMM_PER_CHANNEL);
    const auto* params = std::get_if<SymmPerChannelQuantParams>(&filter.extraParams);
    REQUIRE(params);
    CHECK(params->channelDim == 0);
    CHECK(params->scales == std::vector<float>{0.5f, 0.25f, 0.125f});
    CHECK(operandAt(model, 0, 2).scale == 0.0f);  // per-channel bias: NNAPI derives the scale
    CHECK(operandAt(model, 0, 0).type == OperandType::TENSOR_QUANT8_ASYMM_SIGNED);
    CHECK(operandAt(model, 0, 0).zeroPoint == -3);
    const auto* dwParams =
        std::get_if<SymmPerChannelQuantParams>(&operandAt(model, 1, 1).extraParams);
    REQUIRE(dwParams);
    CHECK(dwParams->channelDim == 3);

    auto out =
        golden::execute(model, {golden::tensor<int8_t>({1, 3, 3, 2}, std::vector<int8_t>(18, 10))});
    REQUIRE_MESSAGE(out.ok(), out.status().message);
    CHECK((*out)[0].dimensions == std::vector<uint32_t>{1, 2, 2, 3});
}

/// One-operator models: import, validate and check the NNAPI operations they became.
void checkSingleOp(TfliteWriter& w, const std::vector<OperationType>& expected) {
    const Model model = importOk(w.finish()).model;
    CHECK(operationTypes(model) == expected);
}

TEST_CASE("tflite_import_operator_mappings") {
    using Op = OperationType;
    const Quant q8{{0.1f}, {128}};
    const Quant s8{{0.1f}, {-5}};

    SUBCASE("PAD and PADV2 with a quantized pad value") {
        TfliteWriter w;
        const int32_t x = w.input(TensorType::UINT8, {1, 2, 2, 1}, q8);
        const int32_t p =
            w.constant(TensorType::INT32, {4, 2}, std::vector<int32_t>{0, 0, 1, 1, 1, 1, 0, 0});
        const int32_t v = w.constant(TensorType::UINT8, {}, std::vector<uint8_t>{128}, q8);
        const int32_t a = w.tensor(TensorType::UINT8, {1, 4, 4, 1}, q8);
        w.op(BuiltinOperator::PAD, {x, p}, {a});
        const int32_t y = w.output(TensorType::UINT8, {1, 6, 6, 1}, q8);
        w.op(BuiltinOperator::PADV2, {a, p, v}, {y});
        const Model model = importOk(w.finish()).model;
        CHECK(operationTypes(model) == std::vector<Op>{Op::PAD, Op::PAD_V2});
        CHECK(operandAt(model, 1, 2).type == OperandType::INT32);
        CHECK(scalarAt<int32_t>(model, 1, 2) == 128);
    }
    SUBCASE("MEAN, SUM and REDUCE_MAX") {
        TfliteWriter w;
        const int32_t x = w.input(TensorType::FLOAT32, {1, 3, 3, 2});
        const int32_t axes = w.constant(TensorType::INT32, {2}, std::vector<int32_t>{1, 2});
        const int32_t m = w.tensor(TensorType::FLOAT32, {1, 1, 1, 2});
        tfl::ReducerOptionsT keep;
        keep.keep_dims = true;
        w.op(BuiltinOperator::MEAN, {x, axes}, {m}, optionsOf(keep));
        const int32_t axis = w.constant(TensorType::INT64, {}, std::vector<int64_t>{3});
        const int32_t s = w.tensor(TensorType::FLOAT32, {1, 1, 1});
        w.op(BuiltinOperator::SUM, {m, axis}, {s}, optionsOf(tfl::ReducerOptionsT{}));
        const int32_t last = w.constant(TensorType::INT32, {1}, std::vector<int32_t>{2});
        const int32_t y = w.output(TensorType::FLOAT32, {1, 1});
        w.op(BuiltinOperator::REDUCE_MAX, {s, last}, {y});
        // The int64 axis became an int32 constant [1].
        const Model model = importOk(w.finish()).model;
        CHECK(operationTypes(model) == std::vector<Op>{Op::MEAN, Op::REDUCE_SUM, Op::REDUCE_MAX});
        CHECK(operandAt(model, 1, 1).type == OperandType::TENSOR_INT32);
        CHECK(operandAt(model, 1, 2).type == OperandType::BOOL);
    }
    SUBCASE("RESIZE_BILINEAR and RESIZE_NEAREST_NEIGHBOR") {
        TfliteWriter w;
        const int32_t x = w.input(TensorType::FLOAT32, {1, 2, 2, 1});
        const int32_t size = w.constant(TensorType::INT32, {2}, std::vector<int32_t>{4, 6});
        const int32_t a = w.tensor(TensorType::FLOAT32, {1, 4, 6, 1});
        w.op(BuiltinOperator::RESIZE_BILINEAR, {x, size}, {a});
        const int32_t size2 = w.constant(TensorType::INT32, {2}, std::vector<int32_t>{8, 12});
        const int32_t y = w.output(TensorType::FLOAT32, {1, 8, 12, 1});
        tfl::ResizeNearestNeighborOptionsT nn;
        nn.half_pixel_centers = true;
        w.op(BuiltinOperator::RESIZE_NEAREST_NEIGHBOR, {a, size2}, {y}, optionsOf(nn));
        const Model model = importOk(w.finish()).model;
        CHECK(operationTypes(model) ==
              std::vector<Op>{Op::RESIZE_BILINEAR, Op::RESIZE_NEAREST_NEIGHBOR});
        CHECK(model.main.operations[0].inputs.size() == 3);
        CHECK(scalarAt<int32_t>(model, 0, 1) == 6);  // width first
        CHECK(scalarAt<int32_t>(model, 0, 2) == 4);
        CHECK(model.main.operations[1].inputs.size() == 6);
    }
    SUBCASE("RESHAPE from a shape tensor, from options and from the output shape") {
        TfliteWriter w;
        const int32_t x = w.input(TensorType::UINT8, {1, 2, 2, 2}, q8);
        const int32_t shape = w.constant(TensorType::INT32, {2}, std::vector<int32_t>{1, -1});
        const int32_t a = w.tensor(TensorType::UINT8, {1, 8}, q8);
        w.op(BuiltinOperator::RESHAPE, {x, shape}, {a});
        tfl::ReshapeOptionsT options;
        options.new_shape = {2, 4};
        const int32_t b = w.tensor(TensorType::UINT8, {2, 4}, q8);
        w.op(BuiltinOperator::RESHAPE, {a}, {b}, optionsOf(options));
        const int32_t y = w.output(TensorType::UINT8, {8}, q8);
        w.op(BuiltinOperator::RESHAPE, {b}, {y});
        const Model model = importOk(w.finish()).model;
        CHECK(operationTypes(model) == std::vector<Op>{Op::RESHAPE, Op::RESHAPE, Op::RESHAPE});
        CHECK(operandAt(model, 1, 1).dimensions == std::vector<uint32_t>{2});
        CHECK(operandAt(model, 2, 1).dimensions == std::vector<uint32_t>{1});
    }
    SUBCASE("TRANSPOSE with an int64 permutation, SQUEEZE, STRIDED_SLICE") {
        TfliteWriter w;
        const int32_t x = w.input(TensorType::FLOAT32, {1, 2, 3, 1});
        const int32_t perm = w.constant(TensorType::INT64, {4}, std::vector<int64_t>{0, 2, 1, 3});
        const int32_t t = w.tensor(TensorType::FLOAT32, {1, 3, 2, 1});
        w.op(BuiltinOperator::TRANSPOSE, {x, perm}, {t});
        const int32_t s = w.tensor(TensorType::FLOAT32, {3, 2});
        w.op(BuiltinOperator::SQUEEZE, {t}, {s});
        const int32_t begin = w.constant(TensorType::INT32, {2}, std::vector<int32_t>{1, 0});
        const int32_t end = w.constant(TensorType::INT32, {2}, std::vector<int32_t>{3, 2});
        const int32_t strides = w.constant(TensorType::INT32, {2}, std::vector<int32_t>{1, 1});
        const int32_t y = w.output(TensorType::FLOAT32, {2, 2});
        w.op(BuiltinOperator::STRIDED_SLICE, {s, begin, end, strides}, {y},
             optionsOf(tfl::StridedSliceOptionsT{}));
        const Model model = importOk(w.finish()).model;
        CHECK(operationTypes(model) ==
              std::vector<Op>{Op::TRANSPOSE, Op::SQUEEZE, Op::STRIDED_SLICE});
        CHECK(operandAt(model, 0, 1).type == OperandType::TENSOR_INT32);
        CHECK(operandAt(model, 1, 1).lifetime == OperandLifeTime::NO_VALUE);
    }
    SUBCASE("CONCATENATION, GATHER, ARG_MAX") {
        TfliteWriter w;
        const int32_t a = w.input(TensorType::FLOAT32, {2, 3});
        const int32_t b = w.input(TensorType::FLOAT32, {2, 2});
        const int32_t c = w.tensor(TensorType::FLOAT32, {2, 5});
        tfl::ConcatenationOptionsT concat;
        concat.axis = -1;
        w.op(BuiltinOperator::CONCATENATION, {a, b}, {c}, optionsOf(concat));
        const int32_t idx = w.input(TensorType::INT32, {3});
        const int32_t g = w.tensor(TensorType::FLOAT32, {2, 3});
        tfl::GatherOptionsT gather;
        gather.axis = 1;
        w.op(BuiltinOperator::GATHER, {c, idx}, {g}, optionsOf(gather));
        const int32_t axis = w.constant(TensorType::INT32, {1}, std::vector<int32_t>{1});
        const int32_t y = w.output(TensorType::INT32, {2});
        w.op(BuiltinOperator::ARG_MAX, {g, axis}, {y});
        const Model model = importOk(w.finish()).model;
        CHECK(operationTypes(model) == std::vector<Op>{Op::CONCATENATION, Op::GATHER, Op::ARGMAX});
        CHECK(scalarAt<int32_t>(model, 0, 2) == 1);  // axis -1 of rank 2
        CHECK(model.main.operations[1].inputs[2] == model.main.inputIndexes[2]);
    }
    SUBCASE("SPACE_TO_DEPTH, DEPTH_TO_SPACE, HARD_SWISH, MAXIMUM with a scalar") {
        TfliteWriter w;
        const int32_t x = w.input(TensorType::INT8, {1, 4, 4, 1}, s8);
        const int32_t d = w.tensor(TensorType::INT8, {1, 2, 2, 4}, s8);
        tfl::SpaceToDepthOptionsT s2d;
        s2d.block_size = 2;
        w.op(BuiltinOperator::SPACE_TO_DEPTH, {x}, {d}, optionsOf(s2d));
        const int32_t h = w.tensor(TensorType::INT8, {1, 2, 2, 4}, s8);
        w.op(BuiltinOperator::HARD_SWISH, {d}, {h});
        const int32_t zero = w.constant(TensorType::INT8, {}, std::vector<int8_t>{-5}, s8);
        const int32_t m = w.tensor(TensorType::INT8, {1, 2, 2, 4}, s8);
        w.op(BuiltinOperator::MAXIMUM, {h, zero}, {m});
        const int32_t y = w.output(TensorType::INT8, {1, 4, 4, 1}, s8);
        tfl::DepthToSpaceOptionsT d2s;
        d2s.block_size = 2;
        w.op(BuiltinOperator::DEPTH_TO_SPACE, {m}, {y}, optionsOf(d2s));
        const Model model = importOk(w.finish()).model;
        CHECK(operationTypes(model) ==
              std::vector<Op>{Op::SPACE_TO_DEPTH, Op::HARD_SWISH, Op::MAXIMUM, Op::DEPTH_TO_SPACE});
        CHECK(operandAt(model, 2, 1).dimensions == std::vector<uint32_t>{1});
    }
    SUBCASE("LEAKY_RELU becomes PRELU (float and int8)") {
        TfliteWriter w;
        tfl::LeakyReluOptionsT leaky;
        leaky.alpha = 0.2f;
        const int32_t x = w.input(TensorType::FLOAT32, {1, 4});
        const int32_t y = w.output(TensorType::FLOAT32, {1, 4});
        w.op(BuiltinOperator::LEAKY_RELU, {x}, {y}, optionsOf(leaky));
        const int32_t qx = w.input(TensorType::INT8, {1, 4}, s8);
        const int32_t qy = w.output(TensorType::INT8, {1, 4}, s8);
        w.op(BuiltinOperator::LEAKY_RELU, {qx}, {qy}, optionsOf(leaky));
        const Model model = importOk(w.finish()).model;
        CHECK(operationTypes(model) == std::vector<Op>{Op::PRELU, Op::PRELU});
        CHECK(scalarAt<float>(model, 0, 1) == 0.2f);
        CHECK(operandAt(model, 1, 1).type == OperandType::TENSOR_QUANT8_ASYMM_SIGNED);
        CHECK(operandAt(model, 1, 1).scale == 0.2f);
        auto out = golden::execute(model, {golden::tensor<float>({1, 4}, {-1, 0, 1, 2}),
                                           golden::tensor<int8_t>({1, 4}, {-15, -5, 5, 15})});
        REQUIRE_MESSAGE(out.ok(), out.status().message);
        CHECK(valuesOf<float>((*out)[0]) == std::vector<float>{-0.2f, 0.0f, 1.0f, 2.0f});
        // int8: real -1.0 -> -0.2 (q -7), 0 -> 0 (q -5), 1.0 -> 1.0 (q 5), 2.0 (q 15).
        CHECK(valuesOf<int8_t>((*out)[1]) == std::vector<int8_t>{-7, -5, 5, 15});
    }
    SUBCASE("TRANSPOSE_CONV: int8 filter forced per-channel, omitted bias becomes zeros") {
        TfliteWriter w;
        const int32_t shape = w.constant(TensorType::INT32, {4}, std::vector<int32_t>{1, 4, 4, 2});
        const int32_t k = w.constant(TensorType::INT8, {2, 3, 3, 1}, std::vector<int8_t>(18, 3),
                                     Quant{{0.05f}, {0}, 0});
        const int32_t x = w.input(TensorType::INT8, {1, 2, 2, 1}, s8);
        const int32_t y = w.output(TensorType::INT8, {1, 4, 4, 2}, Quant{{0.2f}, {1}});
        tfl::TransposeConvOptionsT o;
        o.padding = tfl::Padding::SAME;
        o.stride_w = o.stride_h = 2;
        w.op(BuiltinOperator::TRANSPOSE_CONV, {shape, k, x, -1}, {y}, optionsOf(o));
        const Model model = importOk(w.finish()).model;
        CHECK(operationTypes(model) == std::vector<Op>{Op::TRANSPOSE_CONV_2D});
        const Operand& filter = operandAt(model, 0, 1);
        CHECK(filter.type == OperandType::TENSOR_QUANT8_SYMM_PER_CHANNEL);
        CHECK(std::get<SymmPerChannelQuantParams>(filter.extraParams).scales ==
              std::vector<float>{0.05f, 0.05f});
        CHECK(operandAt(model, 0, 2).type == OperandType::TENSOR_INT32);
        CHECK(operandAt(model, 0, 2).dimensions == std::vector<uint32_t>{2});
        CHECK(model.main.operations[0].inputs.size() == 9);
    }
    SUBCASE("QUANTIZE from float and as requantization; DEQUANTIZE") {
        TfliteWriter w;
        const int32_t x = w.input(TensorType::FLOAT32, {1, 4});
        const int32_t a = w.tensor(TensorType::UINT8, {1, 4}, q8);
        w.op(BuiltinOperator::QUANTIZE, {x}, {a});
        const int32_t b = w.tensor(TensorType::INT8, {1, 4}, s8);
        w.op(BuiltinOperator::QUANTIZE, {a}, {b});
        const int32_t y = w.output(TensorType::FLOAT32, {1, 4});
        w.op(BuiltinOperator::DEQUANTIZE, {b}, {y});
        checkSingleOp(w, {Op::QUANTIZE, Op::DEQUANTIZE, Op::QUANTIZE, Op::DEQUANTIZE});
    }
    SUBCASE("float16 weights behind DEQUANTIZE are folded into a float32 constant") {
        TfliteWriter w;
        const int32_t x = w.input(TensorType::FLOAT32, {1, 2});
        // 1.0 and -2.5 as IEEE half floats.
        const int32_t half =
            w.constant(TensorType::FLOAT16, {2}, std::vector<uint16_t>{0x3C00, 0xC100});
        const int32_t full = w.tensor(TensorType::FLOAT32, {2});
        w.op(BuiltinOperator::DEQUANTIZE, {half}, {full});
        const int32_t y = w.output(TensorType::FLOAT32, {1, 2});
        w.op(BuiltinOperator::ADD, {x, full}, {y});
        const Model model = importOk(w.finish()).model;
        CHECK(operationTypes(model) == std::vector<Op>{Op::ADD});
        const Operand& weights = operandAt(model, 0, 1);
        CHECK(weights.type == OperandType::TENSOR_FLOAT32);
        std::vector<float> values(2);
        std::memcpy(values.data(), constantData(model, weights), 8);
        CHECK(values == std::vector<float>{1.0f, -2.5f});
    }
    SUBCASE("float16 activations") {
        TfliteWriter w;
        const int32_t x = w.input(TensorType::FLOAT16, {1, 3});
        const int32_t s = w.tensor(TensorType::FLOAT16, {1, 3});
        tfl::SoftmaxOptionsT softmax;
        softmax.beta = 1.0f;
        w.op(BuiltinOperator::SOFTMAX, {x}, {s}, optionsOf(softmax));
        const int32_t y = w.output(TensorType::FLOAT32, {1, 3});
        w.op(BuiltinOperator::DEQUANTIZE, {s}, {y});
        const Model model = importOk(w.finish()).model;
        CHECK(operationTypes(model) == std::vector<Op>{Op::SOFTMAX, Op::CAST});
        CHECK(operandAt(model, 0, 1).type == OperandType::FLOAT16);
    }
    SUBCASE("FULLY_CONNECTED: keep_num_dims adds a RESHAPE, an omitted bias becomes zeros") {
        TfliteWriter w;
        const int32_t x = w.input(TensorType::FLOAT32, {2, 3, 4});
        const int32_t k = w.constant(TensorType::FLOAT32, {5, 4}, std::vector<float>(20, 0.5f));
        const int32_t y = w.output(TensorType::FLOAT32, {2, 3, 5});
        tfl::FullyConnectedOptionsT fc;
        fc.keep_num_dims = true;
        w.op(BuiltinOperator::FULLY_CONNECTED, {x, k, -1}, {y}, optionsOf(fc));
        const Model model = importOk(w.finish()).model;
        CHECK(operationTypes(model) == std::vector<Op>{Op::FULLY_CONNECTED, Op::RESHAPE});
        CHECK(model.main.operands[model.main.operations[0].outputs[0]].dimensions ==
              std::vector<uint32_t>{6, 5});
        const Operand& shape = operandAt(model, 1, 1);
        std::vector<int32_t> dims(3);
        std::memcpy(dims.data(), constantData(model, shape), sizeof(int32_t) * 3);
        CHECK(dims == std::vector<int32_t>{2, 3, 5});
        CHECK(operandAt(model, 0, 2).lifetime == OperandLifeTime::CONSTANT_COPY);
    }
    SUBCASE("hybrid CONV_2D: float input, int8 weights are dequantized first") {
        TfliteWriter w;
        const int32_t x = w.input(TensorType::FLOAT32, {1, 2, 2, 1});
        const int32_t k =
            w.constant(TensorType::INT8, {1, 1, 1, 1}, std::vector<int8_t>{4}, Quant{{0.5f}, {0}});
        const int32_t b = w.constant(TensorType::FLOAT32, {1}, std::vector<float>{0.0f});
        const int32_t y = w.output(TensorType::FLOAT32, {1, 2, 2, 1});
        tfl::Conv2DOptionsT o;
        o.stride_w = o.stride_h = 1;
        w.op(BuiltinOperator::CONV_2D, {x, k, b}, {y}, optionsOf(o));
        const Model model = importOk(w.finish()).model;
        CHECK(operationTypes(model) == std::vector<Op>{Op::DEQUANTIZE, Op::CONV_2D});
        auto out = golden::execute(model, {golden::tensor<float>({1, 2, 2, 1}, {1, 2, 3, 4})});
        REQUIRE_MESSAGE(out.ok(), out.status().message);
        CHECK(valuesOf<float>((*out)[0]) == std::vector<float>{2, 4, 6, 8});
    }
    SUBCASE("pools, activations and arithmetic") {
        TfliteWriter w;
        const int32_t x = w.input(TensorType::FLOAT32, {1, 4, 4, 1});
        tfl::Pool2DOptionsT pool;
        pool.padding = tfl::Padding::VALID;
        pool.stride_w = pool.stride_h = 2;
        pool.filter_width = pool.filter_height = 2;
        const int32_t l2 = w.tensor(TensorType::FLOAT32, {1, 2, 2, 1});
        w.op(BuiltinOperator::L2_POOL_2D, {x}, {l2}, optionsOf(pool));
        std::vector<int32_t> chain{l2};
        for (auto code :
             {BuiltinOperator::RELU, BuiltinOperator::RELU_N1_TO_1, BuiltinOperator::RELU6,
              BuiltinOperator::LOGISTIC, BuiltinOperator::TANH}) {
            chain.push_back(w.tensor(TensorType::FLOAT32, {1, 2, 2, 1}));
            w.op(code, {chain[chain.size() - 2]}, {chain.back()});
        }
        const int32_t two = w.constant(TensorType::FLOAT32, {}, std::vector<float>{2.0f});
        for (auto code : {BuiltinOperator::SUB, BuiltinOperator::MUL, BuiltinOperator::DIV,
                          BuiltinOperator::MINIMUM}) {
            chain.push_back(w.tensor(TensorType::FLOAT32, {1, 2, 2, 1}));
            w.op(code, {chain[chain.size() - 2], two}, {chain.back()});
        }
        w.graph().outputs.push_back(chain.back());
        checkSingleOp(w, {Op::L2_POOL_2D, Op::RELU, Op::RELU1, Op::RELU6, Op::LOGISTIC, Op::TANH,
                          Op::SUB, Op::MUL, Op::DIV, Op::MINIMUM});
    }
}

/// Imports, validates and runs a model on the golden reference.
std::vector<TensorData> runOnGolden(TfliteWriter& w, const std::vector<TensorData>& inputs) {
    const Model model = importOk(w.finish()).model;
    auto outputs = golden::execute(model, inputs);
    REQUIRE_MESSAGE(outputs.ok(), outputs.status().message);
    return *outputs;
}

// Argument orders and conventions that differ between TFLite and NNAPI, checked by running the
// imported models on the golden reference against TFLite's semantics worked out by hand.
TEST_CASE("tflite_import_semantics_on_golden") {
    const std::vector<float> matrix{0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11};  // [3, 4]
    SUBCASE("GATHER: TFLite (params, indices) + axis option") {
        TfliteWriter w;
        const int32_t params = w.input(TensorType::FLOAT32, {3, 4});
        const int32_t indices = w.constant(TensorType::INT32, {2}, std::vector<int32_t>{3, 0});
        const int32_t y = w.output(TensorType::FLOAT32, {3, 2});
        tfl::GatherOptionsT o;
        o.axis = 1;
        w.op(BuiltinOperator::GATHER, {params, indices}, {y}, optionsOf(o));
        const auto out = runOnGolden(w, {golden::tensor({3, 4}, matrix)});
        CHECK(valuesOf<float>(out[0]) == std::vector<float>{3, 0, 7, 4, 11, 8});
    }
    SUBCASE("ARG_MAX with an int64 axis tensor") {
        TfliteWriter w;
        const int32_t x = w.input(TensorType::FLOAT32, {3, 4});
        const int32_t axis = w.constant(TensorType::INT64, {1}, std::vector<int64_t>{0});
        const int32_t y = w.output(TensorType::INT32, {4});
        w.op(BuiltinOperator::ARG_MAX, {x, axis}, {y});
        const auto out = runOnGolden(w, {golden::tensor({3, 4}, matrix)});
        CHECK(valuesOf<int32_t>(out[0]) == std::vector<int32_t>{2, 2, 2, 2});
    }
    SUBCASE("STRIDED_SLICE with end_mask and shrink_axis_mask") {
        TfliteWriter w;
        const int32_t x = w.input(TensorType::FLOAT32, {3, 4});
        const int32_t begin = w.constant(TensorType::INT32, {2}, std::vector<int32_t>{1, 0});
        const int32_t end = w.constant(TensorType::INT32, {2}, std::vector<int32_t>{0, 4});
        const int32_t strides = w.constant(TensorType::INT32, {2}, std::vector<int32_t>{1, 2});
        const int32_t a = w.output(TensorType::FLOAT32, {2, 2});
        tfl::StridedSliceOptionsT masked;
        masked.end_mask = 1;  // dimension 0 runs to its end
        w.op(BuiltinOperator::STRIDED_SLICE, {x, begin, end, strides}, {a}, optionsOf(masked));
        const int32_t end2 = w.constant(TensorType::INT32, {2}, std::vector<int32_t>{2, 4});
        const int32_t ones = w.constant(TensorType::INT32, {2}, std::vector<int32_t>{1, 1});
        const int32_t b = w.output(TensorType::FLOAT32, {4});
        tfl::StridedSliceOptionsT shrink;
        shrink.shrink_axis_mask = 1;
        w.op(BuiltinOperator::STRIDED_SLICE, {x, begin, end2, ones}, {b}, optionsOf(shrink));
        const auto out = runOnGolden(w, {golden::tensor({3, 4}, matrix)});
        CHECK(valuesOf<float>(out[0]) == std::vector<float>{4, 6, 8, 10});
        CHECK(out[1].dimensions == std::vector<uint32_t>{4});
        CHECK(valuesOf<float>(out[1]) == std::vector<float>{4, 5, 6, 7});
    }
    SUBCASE("SPLIT: TFLite (axis, input), TRANSPOSE") {
        TfliteWriter w;
        const int32_t axis = w.constant(TensorType::INT32, {}, std::vector<int32_t>{1});
        const int32_t x = w.input(TensorType::FLOAT32, {3, 4});
        const int32_t left = w.output(TensorType::FLOAT32, {3, 2});
        const int32_t right = w.tensor(TensorType::FLOAT32, {3, 2});
        tfl::SplitOptionsT split;
        split.num_splits = 2;
        w.op(BuiltinOperator::SPLIT, {axis, x}, {left, right}, optionsOf(split));
        const int32_t perm = w.constant(TensorType::INT32, {2}, std::vector<int32_t>{1, 0});
        const int32_t t = w.output(TensorType::FLOAT32, {2, 3});
        w.op(BuiltinOperator::TRANSPOSE, {right, perm}, {t});
        const auto out = runOnGolden(w, {golden::tensor({3, 4}, matrix)});
        CHECK(valuesOf<float>(out[0]) == std::vector<float>{0, 1, 4, 5, 8, 9});
        CHECK(valuesOf<float>(out[1]) == std::vector<float>{2, 6, 10, 3, 7, 11});
    }
    SUBCASE("SPACE_TO_DEPTH then DEPTH_TO_SPACE") {
        TfliteWriter w;
        const int32_t x = w.input(TensorType::FLOAT32, {1, 2, 2, 1});
        const int32_t d = w.output(TensorType::FLOAT32, {1, 1, 1, 4});
        tfl::SpaceToDepthOptionsT s2d;
        s2d.block_size = 2;
        w.op(BuiltinOperator::SPACE_TO_DEPTH, {x}, {d}, optionsOf(s2d));
        const int32_t y = w.output(TensorType::FLOAT32, {1, 2, 2, 1});
        tfl::DepthToSpaceOptionsT d2s;
        d2s.block_size = 2;
        w.op(BuiltinOperator::DEPTH_TO_SPACE, {d}, {y}, optionsOf(d2s));
        const auto out = runOnGolden(w, {golden::tensor<float>({1, 2, 2, 1}, {1, 2, 3, 4})});
        CHECK(out[0].dimensions == std::vector<uint32_t>{1, 1, 1, 4});
        CHECK(valuesOf<float>(out[1]) == std::vector<float>{1, 2, 3, 4});
    }
    SUBCASE("TRANSPOSE_CONV: TFLite (output shape, filter, input), stride 2") {
        TfliteWriter w;
        const int32_t shape = w.constant(TensorType::INT32, {4}, std::vector<int32_t>{1, 2, 2, 1});
        const int32_t k =
            w.constant(TensorType::FLOAT32, {1, 2, 2, 1}, std::vector<float>{1, 2, 3, 4});
        const int32_t x = w.input(TensorType::FLOAT32, {1, 1, 1, 1});
        const int32_t y = w.output(TensorType::FLOAT32, {1, 2, 2, 1});
        tfl::TransposeConvOptionsT o;
        o.padding = tfl::Padding::VALID;
        o.stride_w = o.stride_h = 2;
        w.op(BuiltinOperator::TRANSPOSE_CONV, {shape, k, x}, {y}, optionsOf(o));
        const auto out = runOnGolden(w, {golden::tensor<float>({1, 1, 1, 1}, {2})});
        CHECK(valuesOf<float>(out[0]) == std::vector<float>{2, 4, 6, 8});
    }
    SUBCASE("hybrid FULLY_CONNECTED with legacy uint8 weights holding int8 values") {
        TfliteWriter w;
        const int32_t x = w.input(TensorType::FLOAT32, {1, 2});
        // 0xFE is -2 as int8: weights -2 * 0.5 = -1.0 and 4 * 0.5 = 2.0.
        const int32_t k = w.constant(TensorType::UINT8, {1, 2}, std::vector<uint8_t>{0xFE, 4},
                                     Quant{{0.5f}, {128}});
        const int32_t y = w.output(TensorType::FLOAT32, {1, 1});
        w.op(BuiltinOperator::FULLY_CONNECTED, {x, k}, {y});
        const Model model = importOk(w.finish()).model;
        CHECK(operationTypes(model) == std::vector<OperationType>{OperationType::DEQUANTIZE,
                                                                  OperationType::FULLY_CONNECTED});
        CHECK(operandAt(model, 0, 0).type == OperandType::TENSOR_QUANT8_SYMM);
        auto out = golden::execute(model, {golden::tensor<float>({1, 2}, {3, 1})});
        REQUIRE_MESSAGE(out.ok(), out.status().message);
        CHECK(valuesOf<float>((*out)[0]) == std::vector<float>{-1});
    }
}

// SVDF and UNIDIRECTIONAL_SEQUENCE_LSTM keep their state in TFLite variable tensors; one run
// from TFLite's reset (zero) state, against TFLite's equations worked out by hand.
TEST_CASE("tflite_import_recurrent_on_golden") {
    auto variable = [](TfliteWriter& w, TensorType type, std::vector<int32_t> shape,
                       std::optional<Quant> quant = {}) {
        const int32_t t = w.tensor(type, std::move(shape), std::move(quant));
        w.graph().tensors[t]->is_variable = true;
        return t;
    };
    SUBCASE("SVDF (float): features, time weights, bias, RELU; state out unused") {
        TfliteWriter w;
        const int32_t x = w.input(TensorType::FLOAT32, {1, 2});
        const int32_t features =
            w.constant(TensorType::FLOAT32, {2, 2}, std::vector<float>{1, 2, 3, -4});
        const int32_t time =
            w.constant(TensorType::FLOAT32, {2, 3}, std::vector<float>{0.5f, 0.5f, 2, 1, 1, 3});
        const int32_t bias = w.constant(TensorType::FLOAT32, {2}, std::vector<float>{0.5f, 0.5f});
        const int32_t state = variable(w, TensorType::FLOAT32, {1, 6});
        const int32_t y = w.output(TensorType::FLOAT32, {1, 2});
        tfl::SVDFOptionsT o;
        o.rank = 1;
        o.fused_activation_function = tfl::ActivationFunctionType::RELU;
        w.op(BuiltinOperator::SVDF, {x, features, time, bias, state}, {y}, optionsOf(o));
        const TfliteImport imported = importOk(w.finish());
        const Model& model = imported.model;
        CHECK(operationTypes(model) == std::vector<OperationType>{OperationType::SVDF});
        // The state is a zero constant, NNAPI's state output a temporary nothing reads.
        const Operand& stateIn = operandAt(model, 0, 4);
        CHECK(stateIn.lifetime != OperandLifeTime::SUBGRAPH_INPUT);
        const float* zeros = reinterpret_cast<const float*>(constantData(model, stateIn));
        REQUIRE(zeros != nullptr);
        CHECK(std::all_of(zeros, zeros + 6, [](float v) { return v == 0.0f; }));
        CHECK(model.main.operands[model.main.operations[0].outputs[0]].lifetime ==
              OperandLifeTime::TEMPORARY_VARIABLE);
        CHECK(scalarAt<int32_t>(model, 0, 5) == 1);  // rank
        CHECK(scalarAt<int32_t>(model, 0, 6) == 1);  // RELU
        REQUIRE(imported.notes.size() == 1);
        CHECK(imported.notes[0].find("1 variable (state) tensor(s)") != std::string::npos);
        // Features [1*1 + 2*1, 3*1 - 4*1] = [3, -1] enter the newest memory slot; times the
        // newest time weights [2, 3] plus bias: [6.5, -2.5], RELU: [6.5, 0].
        auto out = golden::execute(model, {golden::tensor<float>({1, 2}, {1, 1})});
        REQUIRE_MESSAGE(out.ok(), out.status().message);
        CHECK(valuesOf<float>((*out)[0]) == std::vector<float>{6.5f, 0.0f});
    }
    SUBCASE("UNIDIRECTIONAL_SEQUENCE_LSTM (float): gate order, two time steps") {
        // One unit, one input feature, batch-major [1, 2, 1]; distinct weight per gate so a
        // permuted argument order shows.
        const float wi = 0.5f, wf = -0.3f, wc = 0.8f, wo = 0.2f;
        const float ri = 0.1f, rf = 0.4f, rc = -0.6f, ro = 0.7f;
        const float bi = 0.0f, bf = 1.0f, bc = 0.1f, bo = -0.2f;
        TfliteWriter w;
        const int32_t x = w.input(TensorType::FLOAT32, {1, 2, 1});
        auto c = [&](float v, std::vector<int32_t> shape) {
            return w.constant(TensorType::FLOAT32, std::move(shape), std::vector<float>{v});
        };
        std::vector<int32_t> ins{x,
                                 c(wi, {1, 1}),
                                 c(wf, {1, 1}),
                                 c(wc, {1, 1}),
                                 c(wo, {1, 1}),
                                 c(ri, {1, 1}),
                                 c(rf, {1, 1}),
                                 c(rc, {1, 1}),
                                 c(ro, {1, 1}),
                                 -1,
                                 -1,
                                 -1,
                                 c(bi, {1}),
                                 c(bf, {1}),
                                 c(bc, {1}),
                                 c(bo, {1}),
                                 -1,
                                 -1};
        ins.push_back(variable(w, TensorType::FLOAT32, {1, 1}));  // output state
        ins.push_back(variable(w, TensorType::FLOAT32, {1, 1}));  // cell state
        for (int k = 0; k < 4; ++k) ins.push_back(-1);            // no layer normalization
        const int32_t y = w.output(TensorType::FLOAT32, {1, 2, 1});
        tfl::UnidirectionalSequenceLSTMOptionsT o;
        o.fused_activation_function = tfl::ActivationFunctionType::TANH;
        o.cell_clip = 10.0f;
        w.op(BuiltinOperator::UNIDIRECTIONAL_SEQUENCE_LSTM, ins, {y}, optionsOf(o));
        const Model model = importOk(w.finish()).model;
        REQUIRE(model.main.operations.size() == 1);
        CHECK(model.main.operations[0].inputs.size() == 28);
        CHECK(scalarAt<int32_t>(model, 0, 20) == 4);  // tanh
        CHECK(scalarAt<float>(model, 0, 21) == 10.0f);
        CHECK(operandAt(model, 0, 24).lifetime == OperandLifeTime::NO_VALUE);

        auto sigmoid = [](double v) { return 1.0 / (1.0 + std::exp(-v)); };
        double h = 0.0, cell = 0.0;
        std::vector<float> expected;
        for (double in : {1.0, -0.5}) {
            const double i = sigmoid(wi * in + ri * h + bi);
            const double f = sigmoid(wf * in + rf * h + bf);
            const double g = std::tanh(wc * in + rc * h + bc);
            const double og = sigmoid(wo * in + ro * h + bo);
            cell = f * cell + i * g;
            h = og * std::tanh(cell);
            expected.push_back(static_cast<float>(h));
        }
        auto out = golden::execute(model, {golden::tensor<float>({1, 2, 1}, {1.0f, -0.5f})});
        REQUIRE_MESSAGE(out.ok(), out.status().message);
        const auto got = valuesOf<float>((*out)[0]);
        REQUIRE(got.size() == 2);
        for (size_t t = 0; t < 2; ++t) CHECK(got[t] == doctest::Approx(expected[t]).epsilon(1e-5));
    }
    SUBCASE("their integer forms fail naming the operator and why") {
        TfliteWriter w;
        const int32_t x = w.input(TensorType::INT8, {1, 2}, Quant{{0.5f}, {0}});
        const int32_t features = w.constant(TensorType::INT8, {2, 2},
                                            std::vector<int8_t>{1, 2, 3, 4}, Quant{{0.1f}, {0}});
        const int32_t time =
            w.constant(TensorType::INT16, {2, 3}, std::vector<int16_t>(6, 1), Quant{{0.1f}, {0}});
        const int32_t bias =
            w.constant(TensorType::INT32, {2}, std::vector<int32_t>{0, 0}, Quant{{0.05f}, {0}});
        const int32_t state = variable(w, TensorType::INT16, {1, 6}, Quant{{0.01f}, {0}});
        const int32_t y = w.output(TensorType::INT8, {1, 2}, Quant{{0.5f}, {0}});
        tfl::SVDFOptionsT o;
        o.rank = 1;
        w.op(BuiltinOperator::SVDF, {x, features, time, bias, state}, {y}, optionsOf(o));
        const std::string message = importError(w.finish());
        CHECK(message.find("operator 0 (SVDF): the integer (INT8) form has no NNAPI equivalent: "
                           "NNAPI's SVDF takes only float32 or float16 tensors (here input INT8, "
                           "weights INT8, state INT16)") != std::string::npos);

        TfliteWriter l;
        const int32_t lx = l.input(TensorType::FLOAT32, {1, 1, 1});
        std::vector<int32_t> ins{lx};
        for (int k = 1; k < 9; ++k)
            ins.push_back(
                l.constant(TensorType::INT8, {1, 1}, std::vector<int8_t>{1}, Quant{{0.1f}, {0}}));
        for (int k = 9; k < 18; ++k) ins.push_back(-1);
        ins.push_back(variable(l, TensorType::FLOAT32, {1, 1}));
        ins.push_back(variable(l, TensorType::FLOAT32, {1, 1}));
        const int32_t ly = l.output(TensorType::FLOAT32, {1, 1, 1});
        l.op(BuiltinOperator::UNIDIRECTIONAL_SEQUENCE_LSTM, ins, {ly},
             optionsOf(tfl::UnidirectionalSequenceLSTMOptionsT{}));
        CHECK(importError(l.finish())
                  .find("operator 0 (UNIDIRECTIONAL_SEQUENCE_LSTM): the hybrid form (float "
                        "input, quantized weights) has no NNAPI equivalent") != std::string::npos);
    }
}

TEST_CASE("tflite_import_errors") {
    SUBCASE("truncated file") {
        const auto bytes = quant8Classifier();
        const std::vector<uint8_t> half(bytes.begin(), bytes.begin() + bytes.size() / 2);
        CHECK(importError(half).find("corrupt or truncated") != std::string::npos);
        CHECK(importError({0x1C, 0, 0}).find("truncated") != std::string::npos);
    }
    SUBCASE("not a flatbuffer") {
        const std::string text = "{\"this\": \"is JSON, not a TensorFlow Lite model\"}";
        const std::string message = importError(std::vector<uint8_t>(text.begin(), text.end()));
        CHECK(message.find("test.tflite: not a TensorFlow Lite flatbuffer") == 0);
    }
    SUBCASE("unsupported operator names its index and name") {
        TfliteWriter w;
        const int32_t x = w.input(TensorType::FLOAT32, {4});
        const int32_t a = w.tensor(TensorType::FLOAT32, {4});
        w.op(BuiltinOperator::RELU, {x}, {a});
        const int32_t y = w.output(TensorType::FLOAT32, {4});
        w.op(BuiltinOperator::SQUARED_DIFFERENCE, {a, x}, {y});
        const std::string message = importError(w.finish());
        CHECK(message.find("operator 1 (SQUARED_DIFFERENCE)") != std::string::npos);
        CHECK(message.find("no NNAPI mapping") != std::string::npos);
    }
    SUBCASE("custom operator") {
        TfliteWriter w;
        const int32_t x = w.input(TensorType::FLOAT32, {4});
        const int32_t y = w.output(TensorType::FLOAT32, {4});
        w.op(BuiltinOperator::CUSTOM, {x}, {y}, {}, "MyVendorOp");
        CHECK(importError(w.finish()).find("operator 0 (CUSTOM 'MyVendorOp')") !=
              std::string::npos);
    }
    SUBCASE("bad tensor index") {
        TfliteWriter w;
        const int32_t x = w.input(TensorType::FLOAT32, {4});
        const int32_t y = w.output(TensorType::FLOAT32, {4});
        w.op(BuiltinOperator::ADD, {x, 42}, {y});
        const std::string message = importError(w.finish());
        CHECK(message.find("operator 0 (ADD)") != std::string::npos);
        CHECK(message.find("tensor 42") != std::string::npos);
        TfliteWriter v;
        v.input(TensorType::FLOAT32, {4});
        v.graph().outputs.push_back(7);
        CHECK(importError(v.finish()).find("subgraph output refers to tensor 7") !=
              std::string::npos);
    }
    SUBCASE("fused activation NNAPI lacks") {
        TfliteWriter w;
        const int32_t x = w.input(TensorType::FLOAT32, {4});
        const int32_t y = w.output(TensorType::FLOAT32, {4});
        tfl::AddOptionsT add;
        add.fused_activation_function = tfl::ActivationFunctionType::TANH;
        w.op(BuiltinOperator::ADD, {x, x}, {y}, optionsOf(add));
        CHECK(importError(w.finish()).find("fused activation TANH") != std::string::npos);
    }
    SUBCASE("tensor type NNAPI cannot represent") {
        TfliteWriter w;
        const int32_t x = w.input(TensorType::INT64, {4});
        const int32_t y = w.output(TensorType::INT64, {4});
        w.op(BuiltinOperator::ABS, {x}, {y});
        CHECK(importError(w.finish()).find("type INT64") != std::string::npos);
    }
    SUBCASE("constant data of the wrong size, bad opcode index, wrong schema version") {
        TfliteWriter w;
        const int32_t x = w.input(TensorType::FLOAT32, {4});
        const int32_t c = w.constant(TensorType::FLOAT32, {4}, std::vector<float>{1, 2, 3});
        const int32_t y = w.output(TensorType::FLOAT32, {4});
        w.op(BuiltinOperator::ADD, {x, c}, {y});
        CHECK(importError(w.finish()).find("has 12 bytes of data, expected 16") !=
              std::string::npos);
        w.graph().operators[0]->opcode_index = 9;
        CHECK(importError(w.finish()).find("opcode index 9 is out of range") != std::string::npos);
        w.model().version = 2;
        CHECK(importError(w.finish()).find("schema version 2") != std::string::npos);
    }
}

TEST_CASE("tflite_import_refuses_what_it_cannot_take_literally") {
    // Each of these once imported as something else: a zero point truncated to 32 bits, a
    // model with nothing to compare, an unknown padding, a negative size, header bytes as weights.
    SUBCASE("zero point outside 32 bits") {
        for (int64_t zeroPoint : {int64_t{1} << 40, std::numeric_limits<int64_t>::min()}) {
            TfliteWriter w;
            const int32_t x = w.input(TensorType::UINT8, {4}, Quant{{0.5f}, {zeroPoint}});
            const int32_t y = w.output(TensorType::UINT8, {4}, Quant{{0.5f}, {0}});
            w.op(BuiltinOperator::RELU, {x}, {y});
            const std::string message = importError(w.finish());
            CHECK(message.find("tensor 0 't0' has zero point " + std::to_string(zeroPoint)) !=
                  std::string::npos);
        }
    }
    SUBCASE("no outputs") {
        TfliteWriter w;
        const int32_t x = w.input(TensorType::FLOAT32, {4});
        const int32_t y = w.tensor(TensorType::FLOAT32, {4});
        w.op(BuiltinOperator::RELU, {x}, {y});
        CHECK(importError(w.finish()).find("subgraph 0 has no outputs") != std::string::npos);
    }
    SUBCASE("padding neither SAME nor VALID") {
        TfliteWriter w;
        const int32_t x = w.input(TensorType::FLOAT32, {1, 4, 4, 1});
        const int32_t y = w.output(TensorType::FLOAT32, {1, 2, 2, 1});
        tfl::Pool2DOptionsT pool;
        pool.padding = static_cast<tfl::Padding>(7);
        pool.stride_w = pool.stride_h = pool.filter_width = pool.filter_height = 2;
        w.op(BuiltinOperator::MAX_POOL_2D, {x}, {y}, optionsOf(pool));
        const std::string message = importError(w.finish());
        CHECK(message.find("operator 0 (MAX_POOL_2D)") != std::string::npos);
        CHECK(message.find("padding 7 is neither SAME nor VALID") != std::string::npos);
    }
    SUBCASE("negative dimension") {
        TfliteWriter w;
        const int32_t x = w.input(TensorType::FLOAT32, {4});
        const int32_t y = w.output(TensorType::FLOAT32, {-7});
        w.op(BuiltinOperator::RELU, {x}, {y});
        CHECK(importError(w.finish()).find("tensor 1 't1' has dimension -7") != std::string::npos);
    }
    SUBCASE("buffer offset into the flatbuffer") {
        TfliteWriter w;
        const int32_t x = w.input(TensorType::FLOAT32, {4});
        const int32_t c = w.constant(TensorType::FLOAT32, {4}, std::vector<float>{1, 2, 3, 4});
        const int32_t y = w.output(TensorType::FLOAT32, {4});
        w.op(BuiltinOperator::ADD, {x, c}, {y});
        auto& buffer = *w.model().buffers.back();
        buffer.data.clear();
        buffer.offset = 8;
        buffer.size = 16;
        const std::string message = importError(w.finish());
        CHECK(message.find("tensor 1 't1': buffer 1 at offset 8 points into the model's own "
                           "flatbuffer") != std::string::npos);
    }
}

TEST_CASE("tflite_model_files") {
    namespace fs = std::filesystem;
    const fs::path dir = fs::temp_directory_path() / "nncosim_tflite_test";
    fs::remove_all(dir);
    fs::create_directories(dir / "sub");
    const auto bytes = quant8Classifier();
    {
        std::ofstream out(dir / "sub" / "classifier.tflite", std::ios::binary);
        out.write(reinterpret_cast<const char*>(bytes.data()),
                  static_cast<std::streamsize>(bytes.size()));
    }
    std::ofstream(dir / "notes.txt") << "not a model";
    fs::copy_file(fs::path(NNCOSIM_SOURCE_DIR) / "testbench/samples/add.json", dir / "add.json");

    auto files = findModelFiles({dir.string()});
    REQUIRE(files.ok());
    CHECK(*files == std::vector<std::string>{(dir / "add.json").string(),
                                             (dir / "sub" / "classifier.tflite").string()});

    auto tflite = loadModelFile((dir / "sub" / "classifier.tflite").string());
    REQUIRE_MESSAGE(tflite.ok(), tflite.status().message);
    CHECK(tflite->spec == "tflite");
    REQUIRE(tflite->tests.size() == 1);
    CHECK(tflite->tests[0].name == "classifier");
    CHECK(tflite->tests[0].inputs.empty());
    CHECK(tflite->tests[0].expectedOutputs.empty());
    CHECK(validateModel(tflite->tests[0].model).ok());

    auto json = loadModelFile((dir / "add.json").string());
    REQUIRE_MESSAGE(json.ok(), json.status().message);
    CHECK_FALSE(json->tests.empty());

    auto other = loadModelFile((dir / "notes.txt").string());
    REQUIRE_FALSE(other.ok());
    CHECK(other.status().message.find("unknown model file type '.txt'") != std::string::npos);
    fs::remove_all(dir);
}

TEST_CASE("tflite_import_reports_other_subgraphs") {
    TfliteWriter w;
    const int32_t x = w.input(TensorType::FLOAT32, {4});
    const int32_t y = w.output(TensorType::FLOAT32, {4});
    w.op(BuiltinOperator::RELU, {x}, {y});
    w.model().subgraphs.push_back(std::make_unique<tfl::SubGraphT>());
    const TfliteImport imported = importOk(w.finish());
    REQUIRE(imported.notes.size() == 1);
    CHECK(imported.notes[0].find("1 subgraph(s) besides subgraph 0") != std::string::npos);
}

}  // namespace
}  // namespace nncosim
