// Per-operation validators, part 1: for each family a few models that must pass (with the
// feature level NNAPI assigns them) and mutations that must fail naming the operation.
#include <doctest/doctest.h>

#include <cstring>

#include "model/Builder.h"
#include "model/OperationValidation.h"
#include "model/Validation.h"

using namespace nncosim;

namespace {

constexpr OperandType kF32 = OperandType::TENSOR_FLOAT32;
constexpr OperandType kF16 = OperandType::TENSOR_FLOAT16;
constexpr OperandType kQ8 = OperandType::TENSOR_QUANT8_ASYMM;
constexpr OperandType kQ8S = OperandType::TENSOR_QUANT8_ASYMM_SIGNED;
constexpr OperandType kI32 = OperandType::TENSOR_INT32;
constexpr OperandType kPerChannel = OperandType::TENSOR_QUANT8_SYMM_PER_CHANNEL;

/// Feature level the last operation's validator derives; the whole model must be valid.
FeatureLevel opLevel(const Model& model) {
    auto result = validateModel(model);
    INFO(result.status().message);
    REQUIRE(result.ok());
    const Operation& op = model.main.operations.back();
    OperationContext ctx(model, model.main, op,
                         static_cast<uint32_t>(model.main.operations.size() - 1));
    OperationValidator validator = findOperationValidator(op.type);
    REQUIRE(static_cast<bool>(validator));
    REQUIRE(validator(ctx).ok());
    return ctx.featureLevel();
}

/// The model is rejected with INVALID_ARGUMENT naming the operation and containing `needle`.
void requireInvalid(const Model& model, const char* needle) {
    auto result = validateModel(model);
    REQUIRE_FALSE(result.ok());
    const std::string& message = result.status().message;
    INFO(message);
    CHECK(result.status().code == ErrorStatus::INVALID_ARGUMENT);
    CHECK(message.find(nameOf(model.main.operations.back().type)) != std::string::npos);
    CHECK(message.find(needle) != std::string::npos);
}

/// Overwrites the value of a CONSTANT_COPY operand.
template <typename T>
void setConstant(Model& model, uint32_t operand, const T& value) {
    const DataLocation& loc = model.main.operands[operand].location;
    REQUIRE(loc.length == sizeof(T));
    std::memcpy(model.operandValues.data() + loc.offset, &value, sizeof(T));
}

uint32_t addFloat16(ModelBuilder& b, uint16_t bits) {
    return b.addConstantBytes(OperandType::FLOAT16, {}, &bits, sizeof(bits));
}

std::vector<uint32_t>& opInputs(Model& m) {
    return m.main.operations.back().inputs;
}

/// out = op(a, b, act) on tensors of `type` and the given shapes.
Model binaryModel(OperationType op, OperandType type, std::vector<uint32_t> a,
                  std::vector<uint32_t> b2, float scale = 0.0f, float outScale = 0.0f) {
    ModelBuilder b;
    uint32_t x = b.addInput(type, a, scale);
    uint32_t y = b.addInput(type, b2, scale);
    uint32_t act = b.addInt32(0);
    uint32_t out = b.addOutput(type, a.size() >= b2.size() ? a : b2, outScale);
    b.addOperation(op, {x, y, act}, {out});
    return b.build();
}

/// out = op(x) on [2, 2] tensors.
Model unaryModel(OperationType op, OperandType in, OperandType out, float inScale = 0.0f,
                 int32_t inZero = 0, float outScale = 0.0f, int32_t outZero = 0) {
    ModelBuilder b;
    uint32_t x = b.addInput(in, {2, 2}, inScale, inZero);
    uint32_t y = b.addOutput(out, {2, 2}, outScale, outZero);
    b.addOperation(op, {x}, {y});
    return b.build();
}

}  // namespace

TEST_CASE("model_validation_ops_arithmetic") {
    CHECK(opLevel(binaryModel(OperationType::ADD, kF32, {2, 3}, {3})) == FeatureLevel::kV1_0);
    CHECK(opLevel(binaryModel(OperationType::SUB, kF32, {2, 3}, {3})) == FeatureLevel::kV1_1);
    CHECK(opLevel(binaryModel(OperationType::ADD, kI32, {2}, {2})) == FeatureLevel::kV1_3);
    CHECK(opLevel(binaryModel(OperationType::SUB, kQ8, {2}, {2}, 0.5f, 0.5f)) ==
          FeatureLevel::kV1_2);
    CHECK(opLevel(binaryModel(OperationType::MUL, kQ8, {2}, {2}, 0.5f, 0.5f)) ==
          FeatureLevel::kV1_0);

    SUBCASE("activation out of range") {
        Model m = binaryModel(OperationType::ADD, kF32, {2}, {2});
        setConstant(m, opInputs(m)[2], int32_t{4});
        requireInvalid(m, "fused activation");
    }
    SUBCASE("int32 needs activation NONE") {
        Model m = binaryModel(OperationType::MUL, kI32, {2}, {2});
        setConstant(m, opInputs(m)[2], int32_t{1});
        requireInvalid(m, "NONE for TENSOR_INT32");
    }
    SUBCASE("second input of another type") {
        Model m = binaryModel(OperationType::ADD, kF32, {2}, {2});
        m.main.operands[opInputs(m)[1]].type = kI32;
        requireInvalid(m, "input 1 has type TENSOR_INT32");
    }
    SUBCASE("wrong input count") {
        Model m = binaryModel(OperationType::ADD, kF32, {2}, {2});
        opInputs(m).pop_back();
        requireInvalid(m, "expected 3 inputs");
    }
    SUBCASE("DIV has no quant8 form") {
        requireInvalid(binaryModel(OperationType::DIV, kQ8, {2}, {2}, 0.5f, 0.5f),
                       "unsupported type TENSOR_QUANT8_ASYMM");
    }
    SUBCASE("MUL quant8 output scale must exceed the input product") {
        requireInvalid(binaryModel(OperationType::MUL, kQ8, {2}, {2}, 0.5f, 0.25f),
                       "greater than the product");
    }
    SUBCASE("shapes that do not broadcast") {
        requireInvalid(binaryModel(OperationType::ADD, kF32, {2, 3}, {4, 3}),
                       "not broadcast-compatible");
    }
    SUBCASE("rank above 4") {
        requireInvalid(binaryModel(OperationType::ADD, kF32, {1, 1, 1, 1, 2}, {2}), "rank 5");
    }
}

TEST_CASE("model_validation_ops_unary") {
    CHECK(opLevel(unaryModel(OperationType::EXP, kF32, kF32)) == FeatureLevel::kV1_2);
    CHECK(opLevel(unaryModel(OperationType::ABS, kI32, kI32)) == FeatureLevel::kV1_3);
    CHECK(opLevel(unaryModel(OperationType::FLOOR, kF32, kF32)) == FeatureLevel::kV1_0);
    CHECK(opLevel(unaryModel(OperationType::RSQRT, kQ8, kQ8, 0.5f, 0, 0.25f, 3)) ==
          FeatureLevel::kAidlV3);
    requireInvalid(unaryModel(OperationType::NEG, kF32, kF16), "output 0 has type TENSOR_FLOAT16");
    requireInvalid(unaryModel(OperationType::SQRT, kI32, kI32), "unsupported type TENSOR_INT32");
    SUBCASE("two outputs") {
        ModelBuilder b;
        uint32_t x = b.addInput(kF32, {2});
        uint32_t y = b.addOutput(kF32, {2});
        uint32_t z = b.addOutput(kF32, {2});
        b.addOperation(OperationType::LOG, {x}, {y, z});
        requireInvalid(b.build(), "expected 1 outputs");
    }
}

namespace {

/// AVERAGE/MAX/L2 pool on a [1, 4, 4, 2] tensor, implicit padding (7 inputs) or with the NCHW
/// flag (8 inputs).
Model poolModel(OperationType op, OperandType type, bool layout, float outScale = 0.5f) {
    const bool quant = type == kQ8 || type == kQ8S;
    ModelBuilder b;
    uint32_t x = b.addInput(type, {1, 4, 4, 2}, quant ? 0.5f : 0.0f);
    std::vector<uint32_t> in = {x,
                                b.addInt32(1),
                                b.addInt32(1),
                                b.addInt32(1),
                                b.addInt32(2),
                                b.addInt32(2),
                                b.addInt32(0)};
    if (layout) in.push_back(b.addBool(false));
    uint32_t out = b.addOutput(type, {1, 4, 4, 2}, quant ? outScale : 0.0f);
    b.addOperation(op, in, {out});
    return b.build();
}

}  // namespace

TEST_CASE("model_validation_ops_pooling") {
    CHECK(opLevel(poolModel(OperationType::AVERAGE_POOL_2D, kF32, false)) == FeatureLevel::kV1_0);
    CHECK(opLevel(poolModel(OperationType::MAX_POOL_2D, kQ8, false)) == FeatureLevel::kV1_0);
    CHECK(opLevel(poolModel(OperationType::MAX_POOL_2D, kF32, true)) == FeatureLevel::kV1_2);
    CHECK(opLevel(poolModel(OperationType::L2_POOL_2D, kF32, false)) == FeatureLevel::kV1_0);

    SUBCASE("padding scheme must be SAME or VALID") {
        Model m = poolModel(OperationType::AVERAGE_POOL_2D, kF32, false);
        setConstant(m, opInputs(m)[1], int32_t{0});
        requireInvalid(m, "padding scheme");
    }
    SUBCASE("zero stride") {
        Model m = poolModel(OperationType::MAX_POOL_2D, kF32, false);
        setConstant(m, opInputs(m)[3], int32_t{0});
        requireInvalid(m, "stride height");
    }
    SUBCASE("zero filter") {
        Model m = poolModel(OperationType::MAX_POOL_2D, kF32, false);
        setConstant(m, opInputs(m)[4], int32_t{0});
        requireInvalid(m, "filter width");
    }
    SUBCASE("layout flag of the wrong type") {
        Model m = poolModel(OperationType::AVERAGE_POOL_2D, kF32, true);
        opInputs(m)[7] = opInputs(m)[6];
        requireInvalid(m, "input 7 has type INT32, expected BOOL");
    }
    SUBCASE("nine inputs") {
        Model m = poolModel(OperationType::AVERAGE_POOL_2D, kF32, true);
        opInputs(m).push_back(opInputs(m)[6]);
        requireInvalid(m, "expected 7 or 8 or 10 or 11 inputs");
    }
    SUBCASE("L2 pool has no quant8 form") {
        requireInvalid(poolModel(OperationType::L2_POOL_2D, kQ8, false), "unsupported type");
    }
    SUBCASE("quant8 output keeps the input quantization") {
        requireInvalid(poolModel(OperationType::MAX_POOL_2D, kQ8, false, 0.25f),
                       "must equal input 0's");
    }
    SUBCASE("input of rank 3") {
        Model m = poolModel(OperationType::MAX_POOL_2D, kF32, false);
        m.main.operands[opInputs(m)[0]].dimensions = {4, 4, 2};
        requireInvalid(m, "must have rank 4");
    }
}

namespace {

/// CONV_2D on [1, 3, 3, 2] with a [2, 2, 2, 2] filter: implicit padding (7 inputs), optionally
/// explicit padding (10 inputs) and dilation (13 inputs with the NCHW flag).
struct ConvModel {
    Model model;
    uint32_t filter = 0;
    uint32_t bias = 0;
};

ConvModel convModel(OperandType type, bool explicitPadding, bool dilation,
                    bool perChannel = false) {
    const bool quant = type == kQ8 || type == kQ8S;
    const float inScale = quant ? 0.5f : 0.0f;
    ModelBuilder b;
    ConvModel c;
    uint32_t x = b.addInput(type, {1, 3, 3, 2}, inScale);
    if (perChannel) {
        c.filter = b.addConstant<int8_t>(kPerChannel, {2, 2, 2, 2}, std::vector<int8_t>(16, 1));
        b.setPerChannelQuant(c.filter, {0.5f, 0.25f}, 0);
    } else if (quant) {
        c.filter = b.addConstant<uint8_t>(type, {2, 2, 2, 2}, std::vector<uint8_t>(16, 1), 0.5f);
    } else {
        c.filter = b.addConstant<float>(type, {2, 2, 2, 2}, std::vector<float>(16, 1.0f));
    }
    if (quant) {
        c.bias = b.addConstant<int32_t>(kI32, {2}, {0, 0}, perChannel ? 0.0f : 0.25f);
    } else {
        c.bias = b.addConstant<float>(type, {2}, {0.0f, 0.0f});
    }
    std::vector<uint32_t> in = {x, c.filter, c.bias};
    if (explicitPadding) {
        for (int i = 0; i < 4; ++i) in.push_back(b.addInt32(0));
    } else {
        in.push_back(b.addInt32(2));
    }
    in.push_back(b.addInt32(1));
    in.push_back(b.addInt32(1));
    in.push_back(b.addInt32(0));
    if (dilation) {
        in.push_back(b.addBool(false));
        in.push_back(b.addInt32(1));
        in.push_back(b.addInt32(1));
    }
    uint32_t out = b.addOutput(type, {1, 2, 2, 2}, quant ? 1.0f : 0.0f);
    b.addOperation(OperationType::CONV_2D, in, {out});
    c.model = b.build();
    return c;
}

/// DEPTHWISE_CONV_2D on [1, 3, 3, 2], multiplier 1, implicit padding (8 inputs).
Model depthwiseModel(bool perChannel, uint32_t channelDim = 3) {
    ModelBuilder b;
    const OperandType type = perChannel ? kQ8 : kF32;
    uint32_t x = b.addInput(type, {1, 3, 3, 2}, perChannel ? 0.5f : 0.0f);
    uint32_t filter;
    uint32_t bias;
    if (perChannel) {
        filter = b.addConstant<int8_t>(kPerChannel, {1, 2, 2, 2}, std::vector<int8_t>(8, 1));
        b.setPerChannelQuant(filter, {0.5f, 0.25f}, channelDim);
        bias = b.addConstant<int32_t>(kI32, {2}, {0, 0});
    } else {
        filter = b.addConstant<float>(type, {1, 2, 2, 2}, std::vector<float>(8, 1.0f));
        bias = b.addConstant<float>(type, {2}, {0.0f, 0.0f});
    }
    std::vector<uint32_t> in = {
        x, filter, bias, b.addInt32(2), b.addInt32(1), b.addInt32(1), b.addInt32(1), b.addInt32(0)};
    uint32_t out = b.addOutput(type, {1, 2, 2, 2}, perChannel ? 1.0f : 0.0f);
    b.addOperation(OperationType::DEPTHWISE_CONV_2D, in, {out});
    return b.build();
}

/// GROUPED_CONV_2D on [1, 3, 3, 4] in 2 groups, implicit padding (9 inputs).
Model groupedConvModel(int32_t groups) {
    ModelBuilder b;
    uint32_t x = b.addInput(kF32, {1, 3, 3, 4});
    uint32_t filter = b.addConstant<float>(kF32, {2, 2, 2, 2}, std::vector<float>(16, 1.0f));
    uint32_t bias = b.addConstant<float>(kF32, {2}, {0.0f, 0.0f});
    std::vector<uint32_t> in = {x,
                                filter,
                                bias,
                                b.addInt32(2),
                                b.addInt32(1),
                                b.addInt32(1),
                                b.addInt32(groups),
                                b.addInt32(0),
                                b.addBool(false)};
    uint32_t out = b.addOutput(kF32, {1, 2, 2, 2});
    b.addOperation(OperationType::GROUPED_CONV_2D, in, {out});
    return b.build();
}

/// TRANSPOSE_CONV_2D with an output-shape tensor (9 inputs).
Model transposeConvModel() {
    ModelBuilder b;
    uint32_t x = b.addInput(kF32, {1, 2, 2, 1});
    uint32_t filter = b.addConstant<float>(kF32, {1, 3, 3, 1}, std::vector<float>(9, 1.0f));
    uint32_t bias = b.addConstant<float>(kF32, {1}, {0.0f});
    uint32_t shape = b.addConstant<int32_t>(kI32, {4}, {1, 4, 4, 1});
    std::vector<uint32_t> in = {x,
                                filter,
                                bias,
                                shape,
                                b.addInt32(2),
                                b.addInt32(2),
                                b.addInt32(2),
                                b.addInt32(0),
                                b.addBool(false)};
    uint32_t out = b.addOutput(kF32, {1, 4, 4, 1});
    b.addOperation(OperationType::TRANSPOSE_CONV_2D, in, {out});
    return b.build();
}

/// FULLY_CONNECTED: [2, 3] x [4, 3]^T + [4].
Model fullyConnectedModel(OperandType type, float outScale = 1.0f) {
    const bool quant = type == kQ8 || type == kQ8S;
    ModelBuilder b;
    uint32_t x = b.addInput(type, {2, 3}, quant ? 0.5f : 0.0f);
    uint32_t w = quant ? b.addConstant<uint8_t>(type, {4, 3}, std::vector<uint8_t>(12, 1), 0.5f)
                       : b.addConstant<float>(type, {4, 3}, std::vector<float>(12, 1.0f));
    uint32_t bias = quant ? b.addConstant<int32_t>(kI32, {4}, {0, 0, 0, 0}, 0.25f)
                          : b.addConstant<float>(type, {4}, {0.0f, 0.0f, 0.0f, 0.0f});
    uint32_t out = b.addOutput(type, {2, 4}, quant ? outScale : 0.0f);
    b.addOperation(OperationType::FULLY_CONNECTED, {x, w, bias, b.addInt32(0)}, {out});
    return b.build();
}

}  // namespace

TEST_CASE("model_validation_ops_convolution") {
    CHECK(opLevel(convModel(kF32, false, false).model) == FeatureLevel::kV1_0);
    CHECK(opLevel(convModel(kQ8, true, false).model) == FeatureLevel::kV1_0);
    CHECK(opLevel(convModel(kF32, true, true).model) == FeatureLevel::kV1_2);
    CHECK(opLevel(convModel(kQ8, false, false, true).model) == FeatureLevel::kV1_2);
    CHECK(opLevel(convModel(kQ8S, false, false).model) == FeatureLevel::kV1_3);

    SUBCASE("negative explicit padding") {
        ConvModel c = convModel(kF32, true, false);
        setConstant(c.model, opInputs(c.model)[5], int32_t{-1});
        requireInvalid(c.model, "padding top");
    }
    SUBCASE("zero dilation") {
        ConvModel c = convModel(kF32, true, true);
        setConstant(c.model, opInputs(c.model)[12], int32_t{0});
        requireInvalid(c.model, "dilation height factor");
    }
    SUBCASE("only one dilation factor") {
        ConvModel c = convModel(kF32, true, true);
        opInputs(c.model).pop_back();
        requireInvalid(c.model, "expected 7 or 8 or 10 or 11 or 13 inputs");
    }
    SUBCASE("float bias of another type") {
        ConvModel c = convModel(kF32, false, false);
        c.model.main.operands[c.bias].type = kI32;
        requireInvalid(c.model, "input 2 has type TENSOR_INT32, expected TENSOR_FLOAT32");
    }
    SUBCASE("quant8 bias scale must be input scale * filter scale") {
        ConvModel c = convModel(kQ8, false, false);
        c.model.main.operands[c.bias].scale = 0.5f;
        requireInvalid(c.model, "(bias) scale");
    }
    SUBCASE("per-channel filter along the wrong dimension") {
        ConvModel c = convModel(kQ8, false, false, true);
        std::get<SymmPerChannelQuantParams>(c.model.main.operands[c.filter].extraParams)
            .channelDim = 3;
        requireInvalid(c.model, "must be quantized along dimension 0");
    }
    SUBCASE("per-channel filter under a float input") {
        ConvModel c = convModel(kQ8, false, false, true);
        ConvModel f = convModel(kF32, false, false);
        opInputs(f.model)[1] = static_cast<uint32_t>(f.model.main.operands.size());
        f.model.main.operands.push_back(c.model.main.operands[c.filter]);
        f.model.main.operands.back().lifetime = OperandLifeTime::SUBGRAPH_INPUT;
        f.model.main.operands.back().location = {};
        f.model.main.inputIndexes.push_back(opInputs(f.model)[1]);
        requireInvalid(f.model, "input 1 has type TENSOR_QUANT8_SYMM_PER_CHANNEL");
    }
    SUBCASE("quant8 output scale at the product needs NNAPI 1.2") {
        ConvModel c = convModel(kQ8, false, false);
        c.model.main.operands[c.model.main.outputIndexes[0]].scale = 0.25f;
        CHECK(opLevel(c.model) == FeatureLevel::kV1_2);
    }

    CHECK(opLevel(depthwiseModel(false)) == FeatureLevel::kV1_0);
    CHECK(opLevel(depthwiseModel(true)) == FeatureLevel::kV1_2);
    SUBCASE("depthwise per-channel filter must use dimension 3") {
        requireInvalid(depthwiseModel(true, 1), "must be quantized along dimension 3");
    }
    SUBCASE("depthwise multiplier of zero") {
        Model m = depthwiseModel(false);
        setConstant(m, opInputs(m)[6], int32_t{0});
        requireInvalid(m, "depth multiplier");
    }

    CHECK(opLevel(groupedConvModel(2)) == FeatureLevel::kV1_2);
    SUBCASE("groups that do not split the channels") {
        requireInvalid(groupedConvModel(3), "not divisible by 3 groups");
    }
    SUBCASE("grouped conv without its layout flag") {
        Model m = groupedConvModel(2);
        opInputs(m).pop_back();
        requireInvalid(m, "expected 9 or 12 inputs");
    }

    CHECK(opLevel(transposeConvModel()) == FeatureLevel::kV1_2);
    SUBCASE("transpose conv output shape of the wrong type") {
        Model m = transposeConvModel();
        m.main.operands[opInputs(m)[3]].type = kF32;
        requireInvalid(m, "input 3 has type TENSOR_FLOAT32, expected TENSOR_INT32");
    }

    CHECK(opLevel(fullyConnectedModel(kF32)) == FeatureLevel::kV1_0);
    CHECK(opLevel(fullyConnectedModel(kQ8, 0.1f)) == FeatureLevel::kV1_2);
    SUBCASE("fully connected bias length differs from num_units") {
        Model m = fullyConnectedModel(kF32);
        m.main.operands[opInputs(m)[2]].dimensions = {3};
        m.main.operands[opInputs(m)[2]].location.length = 12;
        requireInvalid(m, "bias length 3 must equal num_units 4");
    }
    SUBCASE("fully connected activation out of range") {
        Model m = fullyConnectedModel(kF32);
        setConstant(m, opInputs(m)[3], int32_t{-1});
        requireInvalid(m, "fused activation");
    }
}

TEST_CASE("model_validation_ops_batch_matmul") {
    auto model = [](std::vector<uint32_t> lhs, std::vector<uint32_t> rhs, bool adjRhs) {
        ModelBuilder b;
        uint32_t x = b.addInput(kF32, lhs);
        uint32_t y = b.addInput(kF32, rhs);
        uint32_t out = b.addOutput(kF32, {2, 2});
        b.addOperation(OperationType::BATCH_MATMUL, {x, y, b.addBool(false), b.addBool(adjRhs)},
                       {out});
        return b.build();
    };
    CHECK(opLevel(model({2, 3}, {3, 2}, false)) == FeatureLevel::kAidlV2);
    CHECK(opLevel(model({2, 3}, {2, 3}, true)) == FeatureLevel::kAidlV2);
    requireInvalid(model({2, 3}, {2, 3}, false), "cannot be multiplied");
    requireInvalid(model({2, 3}, {1, 3, 2}, false), "same rank");
}

namespace {

/// out = op(x, ...) on a [2, 4] tensor, with the given extra inputs already added by `extra`.
template <typename Extra>
Model activationModel(OperationType op, OperandType type, float inScale, float outScale,
                      int32_t outZero, Extra extra, std::vector<uint32_t> dims = {2, 4}) {
    ModelBuilder b;
    std::vector<uint32_t> in = {b.addInput(type, dims, inScale)};
    extra(b, in);
    uint32_t out = b.addOutput(type, dims, outScale, outZero);
    b.addOperation(op, in, {out});
    return b.build();
}

void noExtra(ModelBuilder&, std::vector<uint32_t>&) {}

}  // namespace

TEST_CASE("model_validation_ops_activation") {
    const float q256 = 1.0f / 256;
    CHECK(opLevel(activationModel(OperationType::LOGISTIC, kQ8, 0.5f, q256, 0, noExtra)) ==
          FeatureLevel::kV1_0);
    CHECK(opLevel(activationModel(OperationType::LOGISTIC, kQ8S, 0.5f, q256, -128, noExtra)) ==
          FeatureLevel::kV1_3);
    CHECK(opLevel(activationModel(OperationType::TANH, kQ8, 0.5f, 1.0f / 128, 128, noExtra)) ==
          FeatureLevel::kV1_2);
    CHECK(opLevel(activationModel(OperationType::RELU6, kF16, 0, 0, 0, noExtra)) ==
          FeatureLevel::kV1_2);
    CHECK(opLevel(activationModel(OperationType::HARD_SWISH, kF32, 0, 0, 0, noExtra)) ==
          FeatureLevel::kV1_3);
    requireInvalid(activationModel(OperationType::LOGISTIC, kQ8, 0.5f, q256, 128, noExtra),
                   "must have scale 0.00390625 and zero point 0");
    requireInvalid(activationModel(OperationType::TANH, kQ8S, 0.5f, 1.0f / 128, 5, noExtra),
                   "zero point 0");
    requireInvalid(activationModel(OperationType::RELU, kQ8, 0.5f, 0.25f, 0, noExtra),
                   "must equal input 0's");
    requireInvalid(activationModel(OperationType::RELU1, kI32, 0, 0, 0, noExtra),
                   "unsupported type TENSOR_INT32");
    requireInvalid(activationModel(OperationType::RELU, kF32, 0, 0, 0, noExtra, {1, 1, 1, 1, 8}),
                   "rank 5");

    auto beta = [](float value) {
        return [value](ModelBuilder& b, std::vector<uint32_t>& in) {
            in.push_back(b.addFloat32(value));
        };
    };
    auto betaAxis = [](float value, int32_t axis) {
        return [value, axis](ModelBuilder& b, std::vector<uint32_t>& in) {
            in.push_back(b.addFloat32(value));
            in.push_back(b.addInt32(axis));
        };
    };
    CHECK(opLevel(activationModel(OperationType::SOFTMAX, kQ8, 0.5f, q256, 0, beta(1.0f))) ==
          FeatureLevel::kV1_0);
    CHECK(opLevel(activationModel(OperationType::SOFTMAX, kF32, 0, 0, 0, beta(1.0f), {2, 2, 2})) ==
          FeatureLevel::kV1_2);
    CHECK(opLevel(activationModel(OperationType::SOFTMAX, kF32, 0, 0, 0, betaAxis(1.0f, -1))) ==
          FeatureLevel::kV1_2);
    requireInvalid(activationModel(OperationType::SOFTMAX, kF32, 0, 0, 0, beta(0.0f)),
                   "(beta) must be > 0");
    requireInvalid(activationModel(OperationType::SOFTMAX, kF32, 0, 0, 0, betaAxis(1.0f, 2)),
                   "(axis) must be in [-2, 2)");
    requireInvalid(activationModel(OperationType::SOFTMAX, kQ8, 0.5f, 0.5f, 0, beta(1.0f)),
                   "must have scale");
    requireInvalid(activationModel(OperationType::SOFTMAX, kF16, 0, 0, 0, beta(1.0f)),
                   "input 1 has type FLOAT32, expected FLOAT16");
    CHECK(opLevel(activationModel(OperationType::LOG_SOFTMAX, kF32, 0, 0, 0, betaAxis(1.0f, 1))) ==
          FeatureLevel::kV1_2);
    requireInvalid(activationModel(OperationType::LOG_SOFTMAX, kF32, 0, 0, 0, beta(1.0f)),
                   "expected 3 inputs");

    auto half = [](uint16_t bits) {
        return [bits](ModelBuilder& b, std::vector<uint32_t>& in) {
            in.push_back(addFloat16(b, bits));
        };
    };
    CHECK(opLevel(activationModel(OperationType::ELU, kF16, 0, 0, 0, half(0x3c00))) ==
          FeatureLevel::kV1_3);
    requireInvalid(activationModel(OperationType::ELU, kF32, 0, 0, 0, half(0x3c00)),
                   "expected FLOAT32");
    requireInvalid(activationModel(OperationType::SOFTMAX, kF16, 0, 0, 0, half(0x8000)),
                   "(beta) must be > 0");

    auto alpha = [](std::vector<uint32_t> dims) {
        return [dims](ModelBuilder& b, std::vector<uint32_t>& in) {
            in.push_back(b.addInput(kF32, dims));
        };
    };
    CHECK(opLevel(activationModel(OperationType::PRELU, kF32, 0, 0, 0, alpha({4}))) ==
          FeatureLevel::kV1_2);
    requireInvalid(activationModel(OperationType::PRELU, kF32, 0, 0, 0, alpha({3})),
                   "not broadcast-compatible");
}

TEST_CASE("model_validation_ops_reshaping") {
    auto concat = [](int32_t axis, std::vector<uint32_t> second, float outScale = 0.5f) {
        ModelBuilder b;
        uint32_t x = b.addInput(kQ8, {2, 3}, 0.5f);
        uint32_t y = b.addInput(kQ8, second, 0.5f);
        uint32_t out = b.addOutput(kQ8, {2, 6}, outScale);
        b.addOperation(OperationType::CONCATENATION, {x, y, b.addInt32(axis)}, {out});
        return b.build();
    };
    CHECK(opLevel(concat(1, {2, 3})) == FeatureLevel::kV1_0);
    CHECK(opLevel(concat(1, {2, 3}, 1.0f)) == FeatureLevel::kV1_2);
    requireInvalid(concat(2, {2, 3}), "(axis) must be in [0, 2)");
    requireInvalid(concat(1, {3, 3}), "outside the concatenation axis");
    SUBCASE("concatenation without its axis") {
        Model m = concat(1, {2, 3});
        opInputs(m).pop_back();
        requireInvalid(m, "input 1 has type TENSOR_QUANT8_ASYMM, expected INT32");
    }

    auto withShapeTensor = [](OperationType op, std::vector<int32_t> values,
                              OperandType type = kF32, float outScale = 0.0f) {
        ModelBuilder b;
        const float scale = type == kQ8 ? 0.5f : 0.0f;
        uint32_t x = b.addInput(type, {2, 3}, scale);
        uint32_t v = b.addConstant<int32_t>(kI32, {static_cast<uint32_t>(values.size())}, values);
        uint32_t out = b.addOutput(type, {3, 2}, outScale);
        b.addOperation(op, {x, v}, {out});
        return b.build();
    };
    CHECK(opLevel(withShapeTensor(OperationType::RESHAPE, {3, -1})) == FeatureLevel::kV1_0);
    requireInvalid(withShapeTensor(OperationType::RESHAPE, {-1, -1}), "at most one -1");
    requireInvalid(withShapeTensor(OperationType::RESHAPE, {3, 2}, kQ8, 0.25f),
                   "must equal input 0's");
    CHECK(opLevel(withShapeTensor(OperationType::TRANSPOSE, {1, 0})) == FeatureLevel::kV1_1);
    requireInvalid(withShapeTensor(OperationType::TRANSPOSE, {1, 1}), "permutation");
    requireInvalid(withShapeTensor(OperationType::TRANSPOSE, {0, 1, 2}), "one per dimension");
    CHECK(opLevel(withShapeTensor(OperationType::SQUEEZE, {0})) == FeatureLevel::kV1_1);
    requireInvalid(withShapeTensor(OperationType::SQUEEZE, {2}), "(axes) must hold values in");

    auto stridedSlice = [](std::vector<int32_t> strides) {
        ModelBuilder b;
        uint32_t x = b.addInput(kF32, {2, 3});
        uint32_t begin = b.addConstant<int32_t>(kI32, {2}, {0, 0});
        uint32_t end = b.addConstant<int32_t>(kI32, {2}, {2, 3});
        uint32_t s = b.addConstant<int32_t>(kI32, {2}, strides);
        uint32_t out = b.addOutput(kF32, {2, 3});
        b.addOperation(OperationType::STRIDED_SLICE,
                       {x, begin, end, s, b.addInt32(0), b.addInt32(0), b.addInt32(0)}, {out});
        return b.build();
    };
    CHECK(opLevel(stridedSlice({1, 1})) == FeatureLevel::kV1_1);
    requireInvalid(stridedSlice({1, 0}), "non-zero");

    auto depthSpace = [](OperationType op, int32_t block, std::vector<uint32_t> dims) {
        ModelBuilder b;
        uint32_t x = b.addInput(kF32, dims);
        uint32_t out = b.addOutput(kF32, {0, 0, 0, 0});
        b.addOperation(op, {x, b.addInt32(block)}, {out});
        return b.build();
    };
    CHECK(opLevel(depthSpace(OperationType::SPACE_TO_DEPTH, 2, {1, 4, 4, 1})) ==
          FeatureLevel::kV1_0);
    requireInvalid(depthSpace(OperationType::SPACE_TO_DEPTH, 0, {1, 4, 4, 1}), "block size");
    requireInvalid(depthSpace(OperationType::SPACE_TO_DEPTH, 3, {1, 4, 4, 1}), "divisible");
    requireInvalid(depthSpace(OperationType::DEPTH_TO_SPACE, 2, {1, 2, 2, 2}), "divisible");

    auto spaceToBatch = [](std::vector<int32_t> paddings, int32_t zeroPoint) {
        ModelBuilder b;
        uint32_t x = b.addInput(kQ8, {1, 4, 4, 1}, 0.5f, zeroPoint);
        uint32_t block = b.addConstant<int32_t>(kI32, {2}, {2, 2});
        uint32_t pad = b.addConstant<int32_t>(kI32, {2, 2}, paddings);
        uint32_t out = b.addOutput(kQ8, {4, 2, 2, 1}, 0.5f, zeroPoint);
        b.addOperation(OperationType::SPACE_TO_BATCH_ND, {x, block, pad}, {out});
        return b.build();
    };
    CHECK(opLevel(spaceToBatch({0, 0, 0, 0}, 0)) == FeatureLevel::kV1_1);
    CHECK(opLevel(spaceToBatch({0, 0, 0, 0}, 3)) == FeatureLevel::kV1_2);
    requireInvalid(spaceToBatch({0, -1, 0, 0}, 0), "(paddings) values must be >= 0");

    auto shuffle = [](int32_t groups, int32_t axis) {
        ModelBuilder b;
        uint32_t x = b.addInput(kF32, {2, 6});
        uint32_t out = b.addOutput(kF32, {2, 6});
        b.addOperation(OperationType::CHANNEL_SHUFFLE, {x, b.addInt32(groups), b.addInt32(axis)},
                       {out});
        return b.build();
    };
    CHECK(opLevel(shuffle(3, -1)) == FeatureLevel::kV1_2);
    requireInvalid(shuffle(4, 1), "not divisible by the number of groups 4");
    requireInvalid(shuffle(0, 1), "number of groups");
    requireInvalid(shuffle(2, 2), "(axis) must be in");
}

TEST_CASE("model_validation_ops_padding") {
    auto pad = [](OperationType op, OperandType type, std::vector<uint32_t> padShape,
                  std::vector<int32_t> paddings, int32_t zeroPoint = 0) {
        ModelBuilder b;
        const float scale = type == kQ8 ? 0.5f : 0.0f;
        uint32_t x = b.addInput(type, {2, 3}, scale, zeroPoint);
        std::vector<uint32_t> in = {x, b.addConstant<int32_t>(kI32, padShape, paddings)};
        if (op == OperationType::PAD_V2) in.push_back(b.addFloat32(0.0f));
        if (op == OperationType::MIRROR_PAD) in.push_back(b.addInt32(1));
        uint32_t out = b.addOutput(type, {4, 5}, scale, zeroPoint);
        b.addOperation(op, in, {out});
        return b.build();
    };
    CHECK(opLevel(pad(OperationType::PAD, kF32, {2, 2}, {1, 1, 1, 1})) == FeatureLevel::kV1_1);
    CHECK(opLevel(pad(OperationType::PAD, kQ8, {2, 2}, {1, 1, 1, 1}, 5)) == FeatureLevel::kV1_2);
    CHECK(opLevel(pad(OperationType::PAD_V2, kF32, {2, 2}, {1, 1, 1, 1})) == FeatureLevel::kV1_2);
    CHECK(opLevel(pad(OperationType::MIRROR_PAD, kF32, {2, 2}, {1, 1, 1, 1})) ==
          FeatureLevel::kAidlV3);
    requireInvalid(pad(OperationType::PAD, kF32, {2, 2}, {1, -1, 1, 1}), "must be >= 0");
    requireInvalid(pad(OperationType::PAD, kF32, {3, 2}, {1, 1, 1, 1, 0, 0}), "2 rows");
    requireInvalid(pad(OperationType::PAD_V2, kQ8, {2, 2}, {1, 1, 1, 1}),
                   "input 2 has type FLOAT32, expected INT32");
    SUBCASE("mirror pad mode") {
        Model m = pad(OperationType::MIRROR_PAD, kF32, {2, 2}, {1, 1, 1, 1});
        setConstant(m, opInputs(m)[2], int32_t{2});
        requireInvalid(m, "REFLECT");
    }
}

TEST_CASE("model_validation_ops_type_conversion") {
    CHECK(opLevel(unaryModel(OperationType::CAST, kF32, kI32)) == FeatureLevel::kV1_2);
    CHECK(opLevel(unaryModel(OperationType::CAST, kQ8S, kQ8S, 0.5f, 0, 0.5f, 0)) ==
          FeatureLevel::kV1_3);
    requireInvalid(unaryModel(OperationType::CAST, kQ8S, kQ8, 0.5f, 0, 0.5f, 0),
                   "can only be cast to itself");
    requireInvalid(unaryModel(OperationType::CAST, kF32, OperandType::TENSOR_BOOL8), "cannot cast");
    CHECK(opLevel(unaryModel(OperationType::QUANTIZE, kF32, kQ8S, 0, 0, 0.5f, 0)) ==
          FeatureLevel::kV1_3);
    requireInvalid(unaryModel(OperationType::QUANTIZE, kF32, kF32), "output 0 has type");
    requireInvalid(unaryModel(OperationType::QUANTIZE, kQ8, kQ8, 0.5f, 0, 0.5f, 0),
                   "unsupported type");
    CHECK(opLevel(unaryModel(OperationType::DEQUANTIZE, kQ8, kF32, 0.5f)) == FeatureLevel::kV1_0);
    CHECK(opLevel(unaryModel(OperationType::DEQUANTIZE, kQ8, kF16, 0.5f)) == FeatureLevel::kV1_2);
    requireInvalid(unaryModel(OperationType::DEQUANTIZE, kF32, kF32), "unsupported type");
    requireInvalid(unaryModel(OperationType::DEQUANTIZE, kQ8, kI32, 0.5f), "output 0 has type");
}

TEST_CASE("model_validation_ops_normalization") {
    auto l2 = [](OperandType type, float outScale, int32_t outZero, bool axis) {
        ModelBuilder b;
        std::vector<uint32_t> in = {b.addInput(type, {1, 2, 2, 4}, type == kF32 ? 0.0f : 0.5f)};
        if (axis) in.push_back(b.addInt32(-1));
        uint32_t out = b.addOutput(type, {1, 2, 2, 4}, outScale, outZero);
        b.addOperation(OperationType::L2_NORMALIZATION, in, {out});
        return b.build();
    };
    CHECK(opLevel(l2(kF32, 0, 0, false)) == FeatureLevel::kV1_0);
    CHECK(opLevel(l2(kF32, 0, 0, true)) == FeatureLevel::kV1_2);
    CHECK(opLevel(l2(kQ8, 1.0f / 128, 128, false)) == FeatureLevel::kV1_2);
    requireInvalid(l2(kQ8, 1.0f / 128, 0, false), "zero point 128");

    auto lrn = [](OperandType type, float bias) {
        ModelBuilder b;
        uint32_t x = b.addInput(type, {1, 2, 2, 4});
        uint32_t out = b.addOutput(type, {1, 2, 2, 4});
        b.addOperation(
            OperationType::LOCAL_RESPONSE_NORMALIZATION,
            {x, b.addInt32(1), b.addFloat32(bias), b.addFloat32(1.0f), b.addFloat32(0.5f)}, {out});
        return b.build();
    };
    CHECK(opLevel(lrn(kF32, 1.0f)) == FeatureLevel::kV1_0);
    requireInvalid(lrn(kF32, 0.0f), "(bias) must not be zero");
    requireInvalid(lrn(kF16, 1.0f), "input 2 has type FLOAT32, expected FLOAT16");

    auto instanceNorm = [](std::vector<uint32_t> dims) {
        ModelBuilder b;
        uint32_t x = b.addInput(kF32, dims);
        uint32_t out = b.addOutput(kF32, dims);
        b.addOperation(
            OperationType::INSTANCE_NORMALIZATION,
            {x, b.addFloat32(1.0f), b.addFloat32(0.0f), b.addFloat32(1e-4f), b.addBool(false)},
            {out});
        return b.build();
    };
    CHECK(opLevel(instanceNorm({1, 2, 2, 4})) == FeatureLevel::kV1_2);
    requireInvalid(instanceNorm({2, 2, 4}), "must have rank 4");
}

TEST_CASE("model_validation_ops_reduction") {
    auto reduce = [](OperationType op, OperandType type, std::vector<int32_t> axes,
                     OperandType keepDims = OperandType::BOOL) {
        ModelBuilder b;
        const float scale = type == kQ8 ? 0.5f : 0.0f;
        uint32_t x = b.addInput(type, {2, 3}, scale);
        uint32_t a = b.addConstant<int32_t>(kI32, {static_cast<uint32_t>(axes.size())}, axes);
        uint32_t keep = keepDims == OperandType::BOOL ? b.addBool(false) : b.addInt32(0);
        uint32_t out = b.addOutput(type, {2}, scale);
        b.addOperation(op, {x, a, keep}, {out});
        return b.build();
    };
    CHECK(opLevel(reduce(OperationType::MEAN, kF32, {1}, OperandType::INT32)) ==
          FeatureLevel::kV1_1);
    CHECK(opLevel(reduce(OperationType::REDUCE_MAX, kQ8, {-1})) == FeatureLevel::kV1_2);
    CHECK(opLevel(reduce(OperationType::REDUCE_ALL, OperandType::TENSOR_BOOL8, {1})) ==
          FeatureLevel::kV1_2);
    requireInvalid(reduce(OperationType::MEAN, kF32, {2}, OperandType::INT32),
                   "(axes) must hold values in [-2, 2)");
    requireInvalid(reduce(OperationType::REDUCE_SUM, kQ8, {1}), "unsupported type");
    requireInvalid(reduce(OperationType::REDUCE_MIN, kF32, {1}, OperandType::INT32),
                   "input 2 has type INT32, expected BOOL");
    requireInvalid(reduce(OperationType::MEAN, kF32, {1}), "input 2 has type BOOL, expected INT32");
}

TEST_CASE("model_validation_ops_resize") {
    auto resize = [](OperationType op, bool byScale, size_t flags, bool align = false,
                     bool halfPixel = false, int32_t width = 4) {
        ModelBuilder b;
        std::vector<uint32_t> in = {b.addInput(kF32, {1, 2, 2, 1})};
        if (byScale) {
            in.push_back(b.addFloat32(2.0f));
            in.push_back(b.addFloat32(2.0f));
        } else {
            in.push_back(b.addInt32(width));
            in.push_back(b.addInt32(4));
        }
        const bool values[] = {false, align, halfPixel};
        for (size_t i = 0; i < flags; ++i) in.push_back(b.addBool(values[i]));
        uint32_t out = b.addOutput(kF32, {1, 4, 4, 1});
        b.addOperation(op, in, {out});
        return b.build();
    };
    CHECK(opLevel(resize(OperationType::RESIZE_BILINEAR, false, 0)) == FeatureLevel::kV1_0);
    CHECK(opLevel(resize(OperationType::RESIZE_BILINEAR, true, 0)) == FeatureLevel::kV1_2);
    CHECK(opLevel(resize(OperationType::RESIZE_NEAREST_NEIGHBOR, false, 1)) == FeatureLevel::kV1_2);
    CHECK(opLevel(resize(OperationType::RESIZE_NEAREST_NEIGHBOR, false, 3, true)) ==
          FeatureLevel::kV1_3);
    requireInvalid(resize(OperationType::RESIZE_BILINEAR, false, 3, true, true), "cannot both be");
    requireInvalid(resize(OperationType::RESIZE_BILINEAR, false, 0, false, false, 0),
                   "(output width) must be >= 1");
    requireInvalid(resize(OperationType::RESIZE_NEAREST_NEIGHBOR, false, 0),
                   "expected 4 or 5 or 6 inputs");
    SUBCASE("width and height of different types") {
        Model m = resize(OperationType::RESIZE_BILINEAR, true, 0);
        Model ints = resize(OperationType::RESIZE_BILINEAR, false, 0);
        opInputs(m)[2] = static_cast<uint32_t>(m.main.operands.size());
        Operand height = ints.main.operands[opInputs(ints)[2]];
        height.location.offset = static_cast<uint32_t>(m.operandValues.size());
        m.operandValues.resize(m.operandValues.size() + 4);
        m.main.operands.push_back(height);
        setConstant(m, opInputs(m)[2], int32_t{4});
        requireInvalid(m, "input 2 has type INT32, expected FLOAT32");
    }
}
