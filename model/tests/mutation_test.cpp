// VTS-equivalent model validation: every mutation of every sampled CTS model must be rejected
// with INVALID_ARGUMENT. By default the first test of each spec file is mutated; with
// NNCOSIM_MUTATION_FULL=1 every test is. VTS leaves out the variants that turn constants into
// inputs (all_tensors_as_inputs) or feed inputs through an ADD (inputs_as_internal), and models
// whose execution must fail; they are valid models too, so they are mutated here as well.
#include <doctest/doctest.h>

#include <cstdlib>
#include <map>
#include <sstream>
#include <string>

#include "model/Builder.h"
#include "model/CtsReader.h"
#include "model/Validation.h"
#include "model/tests/ModelMutations.h"

using namespace nncosim;

namespace {

/// What prepareModel checks before it looks at the model's operations: its arguments, then the
/// model. The first failure wins, as in a driver.
Status validatePrepareArguments(const ModelMutation& mutation) {
    NN_RETURN_IF_ERROR(validateExecutionPreference(mutation.preference));
    NN_RETURN_IF_ERROR(validatePriority(mutation.priority));
    auto level = validateModel(mutation.model);
    return level ? okStatus() : level.status();
}

bool fullRun() {
    const char* value = std::getenv("NNCOSIM_MUTATION_FULL");
    return value != nullptr && std::string(value) == "1";
}

struct FamilyCounts {
    uint64_t tried = 0;
    uint64_t rejected = 0;
};

// Failures past this many per family are counted but not printed.
constexpr uint64_t kPrintedFailuresPerFamily = 20;

/// Runs every family on one valid model, counting per family and failing (with the first few
/// messages) on each mutation that is not rejected with INVALID_ARGUMENT.
void checkAllMutationsRejected(const std::string& where, const Model& model,
                               std::vector<FamilyCounts>& counts) {
    const auto& families = allMutationFamilies();
    for (size_t f = 0; f < families.size(); ++f) {
        FamilyCounts& count = counts[f];
        families[f].generate(model, [&](const ModelMutation& mutation) {
            ++count.tried;
            const Status status = validatePrepareArguments(mutation);
            if (status.code == ErrorStatus::INVALID_ARGUMENT) {
                ++count.rejected;
                return;
            }
            if (count.tried - count.rejected > kPrintedFailuresPerFamily) return;
            FAIL_CHECK(
                where, ": [", std::string(families[f].name), "] ", mutation.description, ": ",
                status.ok() ? std::string("the mutated model was accepted")
                            : "rejected with " + nameOf(status.code) + " (" + status.message + ")");
        });
    }
}

/// The mutations one family makes of `model`.
std::vector<ModelMutation> mutationsOf(const std::string& family, const Model& model) {
    std::vector<ModelMutation> result;
    for (const MutationFamily& f : allMutationFamilies()) {
        if (family == f.name)
            f.generate(model, [&](const ModelMutation& m) { result.push_back(m); });
    }
    return result;
}

/// a (input) + c (constant) -> t (temporary) -> RELU -> out (output), all float [2].
Model addReluModel() {
    ModelBuilder b;
    const uint32_t a = b.addInput(OperandType::TENSOR_FLOAT32, {2});
    const uint32_t c = b.addConstant(OperandType::TENSOR_FLOAT32, {2}, std::vector<float>{1, 2});
    const uint32_t act = b.addInt32(0);
    const uint32_t t = b.addOperand(OperandType::TENSOR_FLOAT32, {2});
    const uint32_t out = b.addOutput(OperandType::TENSOR_FLOAT32, {2});
    b.addOperation(OperationType::ADD, {a, c, act}, {t});
    b.addOperation(OperationType::RELU, {t}, {out});
    return b.build();
}

/// SOFTMAX(input, beta[, axis]) on a [2, 3] float tensor.
Model softmaxModel(bool withAxis) {
    ModelBuilder b;
    const uint32_t in = b.addInput(OperandType::TENSOR_FLOAT32, {2, 3});
    std::vector<uint32_t> inputs = {in, b.addFloat32(1.0f)};
    if (withAxis) inputs.push_back(b.addInt32(-1));
    const uint32_t out = b.addOutput(OperandType::TENSOR_FLOAT32, {2, 3});
    b.addOperation(OperationType::SOFTMAX, inputs, {out});
    return b.build();
}

}  // namespace

// The generators on a model small enough to count every mutation by hand (5 operands: input,
// constant tensor, INT32 scalar, temporary, output; 2 operations).
TEST_CASE("model_mutation_family_counts") {
    const Model model = addReluModel();
    REQUIRE(validateModel(model).ok());
    const std::map<std::string, size_t> expected = {
        {"execution order", 2},              // RELU moved first, ADD moved last
        {"operand type", 5 * 4},             // four invalid values per operand
        {"operand rank", 1},                 // only the INT32 scalar
        {"operand scale", 5},                // one invalid scale per operand
        {"operand zero point", 5},           // {1} for float and INT32 operands
        {"operand lifetime", 5 * 2},         // two writer-flipping lifetimes each
        {"operand input/output", 5},         // every operand has a swapped lifetime
        {"operand add writer", 2},           // one output per operation
        {"operation operand type", 5 * 15},  // every other type for each operand
        {"operation type", 2 * 4},
        {"operation input index", 4},
        {"operation output index", 2},
        {"operation remove write", 1},  // only t is read
        {"remove operand", 4},          // out has no reader
        {"remove operation", 2},
        {"remove operation input", 4},
        {"remove operation output", 2},
        {"add operation input", 2},
        {"add operation output", 2},
        {"execution preference", 2},
        {"priority", 2},
    };
    REQUIRE(expected.size() == allMutationFamilies().size());
    for (const MutationFamily& family : allMutationFamilies()) {
        INFO(family.name);
        const auto mutations = mutationsOf(family.name, model);
        REQUIRE(expected.count(family.name) == 1);
        CHECK(mutations.size() == expected.at(family.name));
        for (const ModelMutation& m : mutations) {
            INFO(m.description);
            CHECK(validatePrepareArguments(m).code == ErrorStatus::INVALID_ARGUMENT);
        }
    }
}

TEST_CASE("model_mutation_remove_operand_renumbers") {
    const auto mutations = mutationsOf("remove operand", addReluModel());
    REQUIRE(mutations.size() == 4);
    // Removing the constant (operand 1) shifts act, t and out down by one.
    const Model& m = mutations[1].model;
    CHECK(mutations[1].description == "operand 1 removed");
    REQUIRE(m.main.operands.size() == 4);
    CHECK(m.main.operations[0].inputs == std::vector<uint32_t>{0, 1});
    CHECK(m.main.operations[0].outputs == std::vector<uint32_t>{2});
    CHECK(m.main.operations[1].inputs == std::vector<uint32_t>{2});
    CHECK(m.main.outputIndexes == std::vector<uint32_t>{3});
}

TEST_CASE("model_mutation_skip_rules") {
    SUBCASE("an optional trailing input is neither removed nor added") {
        const Model withAxis = softmaxModel(true);
        const Model withoutAxis = softmaxModel(false);
        REQUIRE(validateModel(withAxis).ok());
        REQUIRE(validateModel(withoutAxis).ok());
        CHECK(mutationsOf("remove operation input", withAxis).size() == 2);
        CHECK(mutationsOf("remove operation input", withoutAxis).size() == 2);
        CHECK(mutationsOf("add operation input", withAxis).size() == 1);
        CHECK(mutationsOf("add operation input", withoutAxis).empty());
        // The axis operand itself is not removed either.
        CHECK(mutationsOf("remove operand", withAxis).size() == 2);
    }
    SUBCASE("types CAST accepts are not tried on its operands") {
        ModelBuilder b;
        const uint32_t in = b.addInput(OperandType::TENSOR_FLOAT32, {2});
        const uint32_t out = b.addOutput(OperandType::TENSOR_INT32, {2});
        b.addOperation(OperationType::CAST, {in}, {out});
        const Model model = b.build();
        REQUIRE(validateModel(model).ok());
        // 16 types minus the operand's own and the other four CAST types.
        CHECK(mutationsOf("operation operand type", model).size() == 2 * 11);
    }
}

TEST_CASE("model_mutation_vts") {
    const bool full = fullRun();
    auto files = findJsonFiles({NNCOSIM_CTS_DIR});
    REQUIRE_MESSAGE(files.ok(), files.status().message);
    REQUIRE_FALSE(files->empty());

    const auto& families = allMutationFamilies();
    std::vector<FamilyCounts> counts(families.size());
    uint64_t models = 0;
    for (const std::string& path : *files) {
        auto file = readCtsFile(path);
        REQUIRE_MESSAGE(file.ok(), file.status().message);
        for (const CtsTest& test : file->tests) {
            const std::string where = file->spec + " / " + test.name;
            auto original = validateModel(test.model);
            if (!original.ok()) {
                // Its mutations would be rejected for the wrong reason: report and move on.
                FAIL_CHECK(where, ": the unmutated model is rejected: ", original.status().message);
                continue;
            }
            ++models;
            checkAllMutationsRejected(where, test.model, counts);
            if (!full) break;  // a sample: the first (valid) test of each spec
        }
    }

    std::ostringstream summary;
    summary << (full ? "full" : "sample") << " run: " << models << " models from " << files->size()
            << " spec files\n";
    uint64_t tried = 0;
    uint64_t rejected = 0;
    for (size_t f = 0; f < families.size(); ++f) {
        summary << "  " << families[f].name << ": " << counts[f].rejected << " of "
                << counts[f].tried << " rejected\n";
        tried += counts[f].tried;
        rejected += counts[f].rejected;
        CHECK_MESSAGE(counts[f].tried > 0, std::string(families[f].name), " produced no mutation");
    }
    summary << "  total: " << rejected << " of " << tried << " rejected";
    MESSAGE(summary.str());
    CHECK(rejected == tried);
}

// CTS tests whose mutations once slipped through a validator and that the default sample (the
// first test of each spec) does not reach: PACK's packed dimension, DENSIFY's input pairs.
TEST_CASE("model_mutation_cts_regressions") {
    const std::vector<std::pair<std::string, std::string>> kTests = {
        {"AIDL_V2/pack.json", "pack_FLOAT32_binary_axis0"},
        {"experimental/densify_1.json", "densify_1_float16_all_tensors_as_inputs"},
    };
    std::vector<FamilyCounts> counts(allMutationFamilies().size());
    for (const auto& [path, name] : kTests) {
        auto file = readCtsFile(std::string(NNCOSIM_CTS_DIR) + "/" + path);
        REQUIRE_MESSAGE(file.ok(), file.status().message);
        bool found = false;
        for (const CtsTest& test : file->tests) {
            if (test.name != name) continue;
            found = true;
            REQUIRE(validateModel(test.model).ok());
            checkAllMutationsRejected(file->spec + " / " + name, test.model, counts);
        }
        CHECK_MESSAGE(found, path, " has no test ", name);
    }
}
