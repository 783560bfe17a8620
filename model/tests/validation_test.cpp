// General NNAPI validation rules (operands, lifetimes, order, requests) on small built models.
#include <doctest/doctest.h>

#include "model/Builder.h"
#include "model/Validation.h"

using namespace nncosim;

namespace {

/// out = ADD(a, b, NONE) on [2] float tensors.
Model addModel() {
    ModelBuilder b;
    uint32_t a = b.addInput(OperandType::TENSOR_FLOAT32, {2});
    uint32_t c = b.addInput(OperandType::TENSOR_FLOAT32, {2});
    uint32_t act = b.addInt32(0);
    uint32_t out = b.addOutput(OperandType::TENSOR_FLOAT32, {2});
    b.addOperation(OperationType::ADD, {a, c, act}, {out});
    return b.build();
}

void requireInvalid(const Model& model, const char* needle) {
    auto result = validateModel(model);
    REQUIRE_FALSE(result.ok());
    CHECK(result.status().code == ErrorStatus::INVALID_ARGUMENT);
    INFO(result.status().message);
    CHECK(result.status().message.find(needle) != std::string::npos);
}

}  // namespace

TEST_CASE("model_validation_accepts_simple_model") {
    auto result = validateModel(addModel());
    INFO(result.status().message);
    REQUIRE(result.ok());
    CHECK(*result == FeatureLevel::kV1_0);
}

TEST_CASE("model_validation_operand_rules") {
    SUBCASE("invalid type") {
        Model m = addModel();
        m.main.operands[0].type = static_cast<OperandType>(99);
        requireInvalid(m, "invalid operand type");
    }
    SUBCASE("scalar with dimensions") {
        Model m = addModel();
        m.main.operands[2].dimensions = {1};
        requireInvalid(m, "scalar");
    }
    SUBCASE("float with scale") {
        Model m = addModel();
        m.main.operands[0].scale = 1.0f;
        requireInvalid(m, "scale 0");
    }
    SUBCASE("quant8 zero point") {
        Model m = addModel();
        m.main.operands[0].type = OperandType::TENSOR_QUANT8_ASYMM;
        m.main.operands[0].scale = 0.5f;
        m.main.operands[0].zeroPoint = 256;
        requireInvalid(m, "zero point 256");
    }
    SUBCASE("constant length") {
        Model m = addModel();
        m.main.operands[2].location.length = 2;
        requireInvalid(m, "needs 4 bytes");
    }
    SUBCASE("constant out of bounds") {
        Model m = addModel();
        m.main.operands[2].location.offset = 1000;
        requireInvalid(m, "outside operandValues");
    }
    SUBCASE("per-channel scale count") {
        ModelBuilder b;
        std::vector<int8_t> w(2 * 3, 1);
        uint32_t k = b.addConstant(OperandType::TENSOR_QUANT8_SYMM_PER_CHANNEL, {2, 3}, w);
        b.setPerChannelQuant(k, {0.5f}, 0);
        uint32_t out = b.addOutput(OperandType::TENSOR_FLOAT32, {2, 3});
        b.addOperation(OperationType::DEQUANTIZE, {k}, {out});
        Model m = b.build();
        requireInvalid(m, "scales count");
    }
}

TEST_CASE("model_validation_graph_rules") {
    SUBCASE("read before written") {
        ModelBuilder b;
        uint32_t a = b.addInput(OperandType::TENSOR_FLOAT32, {2});
        uint32_t t = b.addOperand(OperandType::TENSOR_FLOAT32, {2});
        uint32_t act = b.addInt32(0);
        uint32_t out = b.addOutput(OperandType::TENSOR_FLOAT32, {2});
        b.addOperation(OperationType::ADD, {a, t, act}, {out});
        b.addOperation(OperationType::ADD, {a, a, act}, {t});
        requireInvalid(b.build(), "read before it is written");
    }
    SUBCASE("written twice") {
        Model m = addModel();
        m.main.operations.push_back(m.main.operations[0]);
        requireInvalid(m, "already been written");
    }
    SUBCASE("output never written") {
        Model m = addModel();
        m.main.operands.push_back(
            {OperandType::TENSOR_FLOAT32, {2}, 0, 0, OperandLifeTime::SUBGRAPH_OUTPUT, {}, {}});
        m.main.outputIndexes.push_back(4);
        requireInvalid(m, "never written");
    }
    SUBCASE("input not listed") {
        Model m = addModel();
        m.main.inputIndexes.pop_back();
        requireInvalid(m, "not in the subgraph's input list");
    }
    SUBCASE("operation operand index out of range") {
        Model m = addModel();
        m.main.operations[0].inputs[0] = 42;
        requireInvalid(m, "refers to operand 42");
    }
    SUBCASE("invalid operation type") {
        Model m = addModel();
        m.main.operations[0].type = static_cast<OperationType>(500);
        requireInvalid(m, "invalid type 500");
    }
    SUBCASE("circular subgraph reference") {
        Model m = addModel();
        Subgraph loop = m.main;
        loop.operands.push_back(
            {OperandType::SUBGRAPH, {}, 0, 0, OperandLifeTime::SUBGRAPH, {}, {}});
        m.referenced.push_back(loop);  // refers to itself through location.offset 0
        requireInvalid(m, "circular");
    }
}

TEST_CASE("model_validation_extensions") {
    Model m = addModel();
    m.extensionNameToPrefix = {{"Com.Bad", 1}};
    requireInvalid(m, "invalid extension name");
    m.extensionNameToPrefix = {{"com.nncosim.npu", 1}, {"com.other.x", 1}};
    requireInvalid(m, "duplicate prefix");
    // The type's sign bit must be 0: prefix 0x8001 would make negative operation types.
    m.extensionNameToPrefix = {{"com.other.x", 0x8001}};
    requireInvalid(m, "above 32767");
    m.extensionNameToPrefix = {};
    m.main.operands[0].type = static_cast<OperandType>(makeExtensionType(7, 1));
    requireInvalid(m, "prefix 7");
}

TEST_CASE("model_validation_constant_reference_padding") {
    ModelBuilder b;
    const uint32_t a = b.addInput(OperandType::TENSOR_FLOAT32, {2});
    const std::vector<float> values{1.0f, 2.0f};
    const uint32_t c = b.addReferenceBytes(OperandType::TENSOR_FLOAT32, {2}, values.data(), 8);
    const uint32_t act = b.addInt32(0);
    const uint32_t out = b.addOutput(OperandType::TENSOR_FLOAT32, {2});
    b.addOperation(OperationType::ADD, {a, c, act}, {out});
    Model m = b.build();
    const uint64_t pool = m.pools.at(m.main.operands[c].location.poolIndex)->size();
    DataLocation& loc = m.main.operands[c].location;
    // Padding to the end of the pool is fine; past it, or on another lifetime, is not.
    loc.padding = static_cast<uint32_t>(pool - loc.offset - loc.length);
    CHECK(validateModel(m).ok());
    loc.padding += 1;
    requireInvalid(m, "padding outside pool");
    loc.padding = 0;
    m.main.operands[act].location.padding = 4;
    requireInvalid(m, "padding must be 0 for CONSTANT_COPY");
}

TEST_CASE("request_validation_rules") {
    Model m = addModel();
    auto pool = Memory::create(64);
    REQUIRE(pool.ok());
    auto arg = [](uint32_t offset) {
        Request::Argument a;
        a.location.offset = offset;
        a.location.length = 8;
        return a;
    };
    Request r;
    r.pools = {pool.value()};
    r.inputs = {arg(0), arg(8)};
    r.outputs = {arg(16)};
    CHECK(validateRequest(r, m).ok());

    SUBCASE("argument count") {
        r.inputs.pop_back();
        CHECK(validateRequest(r, m).code == ErrorStatus::INVALID_ARGUMENT);
    }
    SUBCASE("pool index") {
        r.inputs[0].location.poolIndex = 3;
        CHECK(validateRequest(r, m).message.find("pool index 3") != std::string::npos);
    }
    SUBCASE("out of bounds") {
        r.outputs[0].location.offset = 60;
        CHECK(validateRequest(r, m).message.find("outside pool") != std::string::npos);
    }
    SUBCASE("wrong length") {
        r.inputs[1].location.length = 4;
        CHECK(validateRequest(r, m).message.find("needs 8 bytes") != std::string::npos);
    }
    SUBCASE("output lengths") {
        // Shorter than its shape: valid, the execution reports OUTPUT_INSUFFICIENT_SIZE.
        r.outputs[0].location.length = 7;
        r.outputs[0].location.padding = 1;
        CHECK(validateRequest(r, m).ok());
        r.outputs[0].location.length = 9;
        r.outputs[0].location.padding = 0;
        CHECK(validateRequest(r, m).message.find("needs 8 bytes") != std::string::npos);
        r.outputs[0].location.length = 8;
        r.inputs[0].location.length = 9;
        CHECK(validateRequest(r, m).message.find("needs 8 bytes") != std::string::npos);
    }
    SUBCASE("incompatible dimensions") {
        r.inputs[0].dimensions = {3};
        CHECK(validateRequest(r, m).message.find("dimension 0") != std::string::npos);
    }
    SUBCASE("null pointer") {
        r.inputs[0].lifetime = Request::Argument::LifeTime::POINTER;
        r.inputs[0].location.offset = 0;
        CHECK(validateRequest(r, m).message.find("null pointer") != std::string::npos);
    }
    SUBCASE("buffer token 0") {
        r.pools.push_back(MemoryDomainToken{0});
        CHECK(validateRequest(r, m).message.find("token 0") != std::string::npos);
    }
}

TEST_CASE("model_validation_enums_and_times") {
    CHECK(validateExecutionPreference(static_cast<ExecutionPreference>(3)).code ==
          ErrorStatus::INVALID_ARGUMENT);
    CHECK(validatePriority(static_cast<Priority>(-1)).code == ErrorStatus::INVALID_ARGUMENT);
    CHECK(validatePriority(Priority::HIGH).ok());
    CHECK(validateDuration(Duration(-1)).code == ErrorStatus::INVALID_ARGUMENT);
    CHECK(validateLoopTimeout(std::chrono::seconds(16)).code == ErrorStatus::INVALID_ARGUMENT);
    CHECK(validateLoopTimeout(std::chrono::seconds(15)).ok());
    CHECK(validateBufferRole({0, 0, 0.0f}).code == ErrorStatus::INVALID_ARGUMENT);
    CHECK(validateBufferRole({0, 0, 1.0f}).ok());
}

TEST_CASE("model_validation_strict_declared_shapes") {
    // A 3x3 VALID convolution of [1,5,5,1] computes [1,3,3,2]; the model declares [1,4,4,2].
    ModelBuilder b;
    const uint32_t in = b.addInput(OperandType::TENSOR_FLOAT32, {1, 5, 5, 1});
    const uint32_t filter =
        b.addConstant(OperandType::TENSOR_FLOAT32, {2, 3, 3, 1}, std::vector<float>(18, 0.5f));
    const uint32_t bias =
        b.addConstant(OperandType::TENSOR_FLOAT32, {2}, std::vector<float>{0.0f, 1.0f});
    std::vector<uint32_t> inputs{in, filter, bias, b.addInt32(2)};  // VALID
    for (int32_t v : {1, 1, 0}) inputs.push_back(b.addInt32(v));
    const uint32_t conv = b.addOperand(OperandType::TENSOR_FLOAT32, {1, 4, 4, 2});
    b.addOperation(OperationType::CONV_2D, inputs, {conv});
    const uint32_t out = b.addOutput(OperandType::TENSOR_FLOAT32, {1, 4, 4, 2});
    b.addOperation(OperationType::RELU, {conv}, {out});
    Model m = b.build();
    REQUIRE(validateModel(m).ok());  // NNAPI lets it fail at execution
    Status st = validateDeclaredShapes(m);
    CHECK(st.code == ErrorStatus::INVALID_ARGUMENT);
    CHECK(st.message.find("operation 0 (CONV_2D): output 0 (operand " + std::to_string(conv) +
                          ") has the computed shape [1,3,3,2] but the model declares "
                          "[1,4,4,2]") != std::string::npos);
    // Declared unknown (0) dimensions agree with anything; the computed shape flows on.
    m.main.operands[conv].dimensions = {1, 0, 0, 2};
    m.main.operands[out].dimensions = {1, 3, 3, 2};
    CHECK(validateDeclaredShapes(m).ok());
    m.main.operands[out].dimensions = {1, 3, 4, 2};
    CHECK(validateDeclaredShapes(m).message.find("operation 1 (RELU)") != std::string::npos);
}
