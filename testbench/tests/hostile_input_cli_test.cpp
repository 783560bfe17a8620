// The CLI on hostile input: sizes that overflow, tensors larger than the memory limit and a CTS
// file with one broken test end in clear messages and exit statuses, never a crash or an abort,
// and the good tests of a file still run.
#include <doctest/doctest.h>

#include <sys/wait.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "model/ModelJson.h"
#include "testbench/tests/TestModels.h"
#include "testbench/tflite/tflite_schema_generated.h"

using namespace nncosim;
using namespace nncosim::testing;

namespace {

/// A one-operation model file: out = RELU(in) over `shape` (no inputs or outputs in the file).
std::string reluFile(const std::string& dir, OperandType type, const std::vector<uint32_t>& shape) {
    ModelBuilder b;
    const uint32_t in = b.addInput(type, shape, 1.0f, 0);
    const uint32_t out = b.addOutput(type, shape, 1.0f, 0);
    b.addOperation(OperationType::RELU, {in}, {out});
    CtsTest test;
    test.name = "relu";
    test.model = b.build();
    const std::string path = dir + "/relu.json";
    REQUIRE(writeCtsFile(path, test).ok());
    return path;
}

bool contains(const std::string& text, const std::string& part) {
    return text.find(part) != std::string::npos;
}

}  // namespace

TEST_CASE("cli_overflowing_sizes_are_invalid") {
    const std::string dir = makeTempDir("nncosim-hostile-");
    const std::string model =
        reluFile(dir, OperandType::TENSOR_FLOAT32, {65536, 65536, 65536, 65536});
    const CliResult validate = cli(dir, "validate " + model);
    CHECK(validate.status == 1);
    CHECK(contains(validate.output, "more than 2^64 bytes, more than 4 GiB"));
    const CliResult run = cli(dir, "run " + model + " --backend golden --inputs random");
    INFO(run.output);
    CHECK(run.status == 2);
    CHECK(contains(run.output, "invalid model"));
    std::filesystem::remove_all(dir);
}

TEST_CASE("cli_memory_limit_refuses_before_allocating") {
    const std::string dir = makeTempDir("nncosim-hostile-");
    // 3 GiB per tensor: valid NNAPI, but 6 GiB in all.
    const std::string model =
        reluFile(dir, OperandType::TENSOR_QUANT8_ASYMM, {3, 1024, 1024, 1024});
    const CliResult run = cli(dir, "run " + model + " --backend golden --memory-limit 1GiB");
    INFO(run.output);
    CHECK(run.status == 2);
    CHECK(contains(run.output, "operand 0 (TENSOR_QUANT8_ASYMM [3,1024,1024,1024]) needs 3.0 GiB"));
    CHECK(contains(run.output, "over the memory limit of 1.0 GiB"));
    const CliResult cts = cli(dir, "cts " + model + " --memory-limit 1GiB");
    CHECK(cts.status == 1);
    CHECK(contains(cts.output, "over the memory limit"));
    std::filesystem::remove_all(dir);
}

TEST_CASE("cli_broken_test_spoils_only_itself") {
    const std::string dir = makeTempDir("nncosim-hostile-");
    std::ifstream sample(std::string(NNCOSIM_SOURCE_DIR) + "/testbench/samples/add.json");
    std::ostringstream text;
    text << sample.rdbuf();
    nlohmann::json file = nlohmann::json::parse(text.str());
    REQUIRE(file["tests"].size() >= 1);
    nlohmann::json broken = file["tests"][0];
    broken["name"] = "broken";
    broken["model"]["main"]["inputIndexes"][0] = 999;
    const size_t good = file["tests"].size();
    file["tests"].insert(file["tests"].begin(), broken);
    file["tests"].push_back(nullptr);
    const std::string path = dir + "/mixed.json";
    std::ofstream(path) << file.dump();

    const CliResult validate = cli(dir, "validate " + path);
    INFO(validate.output);
    CHECK(validate.status == 1);
    CHECK(contains(validate.output, "INVALID " + path + " broken: input index out of range"));
    CHECK(contains(validate.output,
                   "INVALID " + path + " #" + std::to_string(good + 1) + ": expected an object"));
    CHECK(contains(validate.output, std::to_string(good) + " valid, 2 invalid"));
    CHECK_FALSE(contains(validate.output, "UNREADABLE"));

    const std::string summary = dir + "/summary.json";
    const CliResult cts = cli(dir, "cts " + path + " --summary " + summary);
    INFO(cts.output);
    CHECK(cts.status == 1);
    std::ifstream in(summary);
    const nlohmann::json s = nlohmann::json::parse(in);
    CHECK(s["passed"] == good);
    CHECK(s["failed"] == 2);
    std::filesystem::remove_all(dir);
}

namespace {

/// `nncosim ARGS` in `dir` under an address-space limit (ulimit -v) of `mebibytes`, as a machine
/// whose memory runs out would leave it: allocation fails instead of the OOM killer striking.
CliResult cliUnderAddressLimit(const std::string& dir, unsigned mebibytes,
                               const std::string& args) {
    return cli(dir, args, "ulimit -v " + std::to_string(mebibytes * 1024) + " && ");
}

/// A CTS file whose one test tiles a 1-byte input 2^30 times (a 1 GiB intermediate tensor, under
/// the default memory limit) and takes the maximum: output = input.
std::string tileFile(const std::string& dir) {
    ModelBuilder b;
    const uint32_t in = b.addInput(OperandType::TENSOR_QUANT8_ASYMM, {1}, 1.0f, 0);
    const uint32_t multiples =
        b.addConstant(OperandType::TENSOR_INT32, {1}, std::vector<int32_t>{1 << 30});
    const uint32_t tiled = b.addOperand(OperandType::TENSOR_QUANT8_ASYMM, {1u << 30}, 1.0f, 0);
    b.addOperation(OperationType::TILE, {in, multiples}, {tiled});
    const uint32_t axes = b.addConstant(OperandType::TENSOR_INT32, {1}, std::vector<int32_t>{0});
    const uint32_t out = b.addOutput(OperandType::TENSOR_QUANT8_ASYMM, {1}, 1.0f, 0);
    b.addOperation(OperationType::REDUCE_MAX, {tiled, axes, b.addBool(true)}, {out});
    CtsTest test;
    test.name = "tile";
    test.model = b.build();
    test.inputs = {{{1}, {7}}};
    test.expectedOutputs = {{{1}, {7}}};
    test.outputIgnored = {false};
    const std::string path = dir + "/tile.json";
    REQUIRE(writeCtsFile(path, test).ok());
    return path;
}

/// hello_world_float.tflite with a batch of 2^24: two 1 GiB intermediate tensors.
std::string largeBatchTflite(const std::string& dir) {
    std::ifstream in(std::string(NNCOSIM_MODELS_DIR) + "/hello_world_float.tflite",
                     std::ios::binary);
    const std::vector<char> bytes{std::istreambuf_iterator<char>(in),
                                  std::istreambuf_iterator<char>()};
    REQUIRE_FALSE(bytes.empty());
    std::unique_ptr<tflite::ModelT> model(tflite::GetModel(bytes.data())->UnPack());
    for (auto& tensor : model->subgraphs.at(0)->tensors) {
        const bool constant = !model->buffers.at(tensor->buffer)->data.empty();
        if (!constant && tensor->shape.size() == 2 && tensor->shape[0] == 1)
            tensor->shape[0] = 1 << 24;
    }
    flatbuffers::FlatBufferBuilder fbb;
    tflite::FinishModelBuffer(fbb, tflite::Model::Pack(fbb, model.get()));
    const std::string path = dir + "/large_batch.tflite";
    std::ofstream(path, std::ios::binary)
        .write(reinterpret_cast<const char*>(fbb.GetBufferPointer()), fbb.GetSize());
    return path;
}

}  // namespace

TEST_CASE("cli_out_of_memory_is_a_clean_error") {
    // Inputs under the memory limit whose tensors still exceed what the process may map: every
    // command ends with a message naming the problem and an exit status, never killed by a
    // signal (SIGABRT from an uncaught bad_alloc, SIGKILL from the OOM killer).
    const std::string dir = makeTempDir("nncosim-oom-");
    const std::string tile = tileFile(dir);
    const std::string tflite = largeBatchTflite(dir);
    const unsigned limit = 768;  // MiB of address space
    struct Case {
        std::string args;
        int status;
    };
    const Case cases[] = {
        {"run " + tile + " --backend golden", 2},
        {"run " + tile + " --backend auto --npu func", 2},
        {"run " + tflite + " --backend golden --inputs random", 2},
        {"cts -j1 " + tile, 1},
        {"cts -j1 --backend auto --npu func " + tile, 1},
    };
    for (const Case& c : cases) {
        CAPTURE(c.args);
        const CliResult r = cliUnderAddressLimit(dir, limit, c.args);
        INFO(r.output);
        CHECK(r.status == c.status);
        CHECK(contains(r.output, "out of memory"));
    }
    std::filesystem::remove_all(dir);
}
