// What hostile or broken input does to the model layer: sizes that overflow are invalid instead
// of wrapping to "empty", a broken test in a CTS file spoils only itself, and a model larger than
// the memory limit is refused before anything is allocated.
#include <doctest/doctest.h>

#include <string>

#include "model/Builder.h"
#include "model/CtsReader.h"
#include "model/Validation.h"

using namespace nncosim;

namespace {

/// out = op(in) over one shape: TRANSPOSE (with its permutation) or RELU.
Model unaryModel(OperationType type, OperandType elementType, const std::vector<uint32_t>& shape) {
    ModelBuilder b;
    const uint32_t in = b.addInput(elementType, shape);
    std::vector<uint32_t> inputs{in};
    if (type == OperationType::TRANSPOSE)
        inputs.push_back(
            b.addConstant(OperandType::TENSOR_INT32, {4}, std::vector<int32_t>{0, 1, 2, 3}));
    const uint32_t out = b.addOutput(elementType, shape);
    b.addOperation(type, inputs, {out});
    return b.build();
}

/// A CTS file whose tests are `tests` (JSON text of each) around a good ADD test.
std::string ctsFile(const std::vector<std::string>& tests) {
    const std::string good = R"({"name": "good", "model": {"main": {
        "operands": [
          {"type": "TENSOR_FLOAT32", "dimensions": [2], "lifetime": "SUBGRAPH_INPUT", "data": [1, 2]},
          {"type": "TENSOR_FLOAT32", "dimensions": [2], "lifetime": "SUBGRAPH_INPUT", "data": [3, 4]},
          {"type": "INT32", "dimensions": [], "lifetime": "CONSTANT_COPY", "data": [0]},
          {"type": "TENSOR_FLOAT32", "dimensions": [2], "lifetime": "SUBGRAPH_OUTPUT", "data": [4, 6]}],
        "operations": [{"type": "ADD", "inputs": [0, 1, 2], "outputs": [3]}],
        "inputIndexes": [0, 1], "outputIndexes": [3]}}})";
    std::string text = R"({"spec": "test", "tests": [)";
    for (const std::string& t : tests) text += t + ",";
    return text + good + "]}";
}

/// The good test with `from` replaced by `to` (one edit that breaks it).
std::string brokenTest(const std::string& name, const std::string& from, const std::string& to) {
    std::string text = ctsFile({});
    text = text.substr(text.find("{\"name\""));
    text = text.substr(0, text.size() - 2);  // the closing "]}" of the file
    const size_t at = text.find(from);
    REQUIRE(at != std::string::npos);
    text.replace(at, from.size(), to);
    const size_t nameAt = text.find("\"good\"");
    return text.replace(nameAt, 6, "\"" + name + "\"");
}

}  // namespace

TEST_CASE("model_sizes_saturate_instead_of_wrapping") {
    CHECK(elementCount({65536, 65536, 65536, 65536}) == kSizeOverflow);
    CHECK(byteSize(OperandType::TENSOR_FLOAT32, {65536, 65536, 65536, 65536}) == kSizeOverflow);
    CHECK(byteSize(OperandType::TENSOR_FLOAT32, {1u << 31, 4}) == uint64_t{1} << 35);
    CHECK(byteSize(OperandType::TENSOR_QUANT8_ASYMM, {65536, 65536}) == uint64_t{1} << 32);
    CHECK(elementCount({3, 0, 5}) == 0);
    CHECK(knownByteSize(OperandType::TENSOR_INT32, {3, 0, 5}) == 60);
    CHECK(byteSizeText(12) == "12 bytes");
    CHECK(byteSizeText(uint64_t{6} << 30) == "6.0 GiB (6442450944 bytes)");
    CHECK(byteSizeText(kSizeOverflow) == "more than 2^64 bytes");
}

TEST_CASE("model_validation_rejects_operands_past_4_gib") {
    // 2^64 elements: the count wraps to 0 without checked arithmetic.
    for (OperationType type : {OperationType::TRANSPOSE, OperationType::RELU}) {
        auto level = validateModel(
            unaryModel(type, OperandType::TENSOR_FLOAT32, {65536, 65536, 65536, 65536}));
        REQUIRE_FALSE(level.ok());
        CHECK(level.status().code == ErrorStatus::INVALID_ARGUMENT);
        CHECK(level.status().message.find("more than 2^64 bytes, more than 4 GiB") !=
              std::string::npos);
    }
    // Exactly 2^32 bytes: one more than a 32-bit length holds.
    auto exact = validateModel(
        unaryModel(OperationType::RELU, OperandType::TENSOR_QUANT8_ASYMM, {65536, 65536}));
    REQUIRE_FALSE(exact.ok());
    CHECK(exact.status().message.find("4.0 GiB (4294967296 bytes), more than 4 GiB") !=
          std::string::npos);
    // Unknown dimensions count as 1: the known ones alone already overflow.
    auto partly = validateModel(
        unaryModel(OperationType::RELU, OperandType::TENSOR_QUANT8_ASYMM, {0, 65536, 65536}));
    CHECK_FALSE(partly.ok());
    // Just below the limit is valid (and refused later by the memory limit, not here).
    CHECK(
        validateModel(unaryModel(OperationType::RELU, OperandType::TENSOR_FLOAT32, {16383, 65536}))
            .ok());
}

TEST_CASE("model_memory_limit_refuses_before_allocating") {
    const Model model =
        unaryModel(OperationType::RELU, OperandType::TENSOR_FLOAT32, {1024, 1024, 512});
    CHECK(checkMemoryLimit(model, uint64_t{4} << 30).ok());  // 2 × 2 GiB
    const Status st = checkMemoryLimit(model, uint64_t{3} << 30);
    REQUIRE_FALSE(st.ok());
    CHECK(st.code == ErrorStatus::RESOURCE_EXHAUSTED_PERSISTENT);
    INFO(st.message);
    CHECK(st.message.find("operand 0 (TENSOR_FLOAT32 [1024,1024,512]) needs 2.0 GiB") !=
          std::string::npos);
    CHECK(st.message.find("4.0 GiB (4294967296 bytes) in all, over the memory limit of 3.0 GiB") !=
          std::string::npos);
}

TEST_CASE("cts_reader_isolates_a_broken_test") {
    struct Case {
        const char* what;
        std::string test;
        const char* reason;
    };
    const Case cases[] = {
        {"input index out of range",
         brokenTest("index", "\"inputIndexes\": [0, 1]", "\"inputIndexes\": [0, 9]"),
         "input index out of range"},
        {"unknown operation", brokenTest("op", "\"type\": \"ADD\"", "\"type\": \"NOT_AN_OP\""),
         "unknown operation type \"NOT_AN_OP\""},
        {"missing model", R"({"name": "nomodel"})", "missing field \"model\""},
        {"wrong-typed dimensions",
         brokenTest("dims", "\"dimensions\": [2]", "\"dimensions\": \"two\""),
         "field \"dimensions\": expected a list"},
        {"dimension past 32 bits",
         brokenTest("huge", "\"dimensions\": [2]", "\"dimensions\": [4294967296]"),
         "field \"dimensions\": value 4294967296 out of range"},
        {"nan in integer data", brokenTest("nan", "\"data\": [0]", "\"data\": [\"nan\"]"),
         "expected an integer, got \"nan\""},
        {"null test", "null", "expected an object, got null"},
    };
    for (const Case& c : cases) {
        CAPTURE(c.what);
        auto file = parseCtsJson(ctsFile({c.test}), "broken.json");
        REQUIRE_MESSAGE(file.ok(), file.status().message);
        REQUIRE(file->tests.size() == 2);
        INFO(file->tests[0].readError);
        CHECK(file->tests[0].readError.find(c.reason) != std::string::npos);
        // The good test after it is read and valid.
        CHECK(file->tests[1].name == "good");
        CHECK(file->tests[1].readError.empty());
        CHECK(validateModel(file->tests[1].model).ok());
    }
    // A test without a readable name is named by its position.
    auto unnamed = parseCtsJson(ctsFile({"null"}), "broken.json");
    REQUIRE(unnamed.ok());
    CHECK(unnamed->tests[0].name == "(test 0)");

    // Unreadable only when the bytes are not JSON or there is no list of tests.
    CHECK_FALSE(parseCtsJson("{\"tests\": [", "x.json").ok());
    auto noTests = parseCtsJson("{\"spec\": \"x\"}", "x.json");
    REQUIRE_FALSE(noTests.ok());
    CHECK(noTests.status().message.find("missing field \"tests\"") != std::string::npos);
}
