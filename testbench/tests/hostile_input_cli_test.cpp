// The CLI on hostile input: sizes that overflow, tensors larger than the memory limit and a CTS
// file with one broken test end in clear messages and exit statuses, never a crash or an abort,
// and the good tests of a file still run.
#include <doctest/doctest.h>

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <thread>

#include "model/ModelJson.h"
#include "testbench/Npy.h"
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
    CHECK(contains(validate.output, "INVALID " + path + " (test " + std::to_string(good + 1) +
                                        "): expected an object"));
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

namespace {

/// An ADD of two float32 tensors of unknown rank (NNAPI allows it; the request gives the shape).
std::string unknownRankAddFile(const std::string& dir) {
    ModelBuilder b;
    const uint32_t x = b.addInput(OperandType::TENSOR_FLOAT32, {});
    const uint32_t y = b.addInput(OperandType::TENSOR_FLOAT32, {});
    const uint32_t z = b.addOutput(OperandType::TENSOR_FLOAT32, {});
    b.addOperation(OperationType::ADD, {x, y, b.addInt32(0)}, {z});
    CtsTest test;
    test.name = "add_any_rank";
    test.model = b.build();
    const std::string path = dir + "/add_any_rank.json";
    REQUIRE(writeCtsFile(path, test).ok());
    return path;
}

std::string floatNpy(const std::string& path, const std::vector<uint64_t>& shape) {
    npy::Array a;
    a.descr = "<f4";
    a.shape = shape;
    uint64_t count = 1;
    for (uint64_t d : shape) count *= d;
    a.data.assign(count * 4, 0);
    REQUIRE(npy::writeFile(path, a).ok());
    return path;
}

std::string sample(const std::string& name) {
    return std::string(NNCOSIM_SOURCE_DIR) + "/testbench/samples/" + name;
}

}  // namespace

TEST_CASE("cli_inputs_above_rank_4_are_refused_cleanly") {
    // Once a SIGSEGV in the driver: ADD of unknown rank run with rank-5 and rank-6 inputs.
    const std::string dir = makeTempDir("nncosim-rank-");
    const std::string model = unknownRankAddFile(dir);
    for (const std::vector<uint64_t>& shape :
         {std::vector<uint64_t>{1, 2, 1, 2, 3}, std::vector<uint64_t>{1, 1, 2, 1, 2, 3}}) {
        const std::string a = floatNpy(dir + "/a.npy", shape);
        const std::string inputs = " --input " + a + " --input " + a;
        for (const std::string backend : {"auto --npu func", "npu --npu func", "auto", "golden"}) {
            CAPTURE(backend);
            const CliResult r = cli(dir, "run " + model + " --backend " + backend + inputs);
            INFO(r.output);
            CHECK(r.status == 2);  // an exit status, never a signal
            // The golden refuses by NNAPI's rule, the driver the request it cannot stream.
            CHECK((contains(r.output, "above NNAPI's limit of 4") ||
                   contains(r.output, "the NPU streams ranks 1 to 4")));
        }
    }
    // Rank 4 runs.
    const std::string four = floatNpy(dir + "/four.npy", {1, 2, 2, 3});
    const CliResult r = cli(
        dir, "run " + model + " --backend auto --npu func --input " + four + " --input " + four);
    INFO(r.output);
    CHECK(r.status == 0);
    std::filesystem::remove_all(dir);
}

TEST_CASE("cli_write_errors_are_errors") {
    // A full disk (/dev/full) behind every output option: exit status 2 naming the file.
    const std::string dir = makeTempDir("nncosim-full-");
    const std::string add = sample("add.json");
    const std::string tflite = std::string(NNCOSIM_MODELS_DIR) + "/hello_world_float.tflite";
    const std::string commands[] = {
        "convert " + tflite + " -o /dev/full",
        "validate " + add + " --summary /dev/full",
        "cts " + add + " --junit /dev/full",
        "cts " + add + " --summary /dev/full",
        "regress " + add + " --backend golden --junit /dev/full",
        "faults " + sample("conv_quant8.json") + " --count 2 --json /dev/full",
        "zoo mobilenet_v1 --input-size 32 --width 0.25 -o /dev/full",
        "run " + add + " --backend golden --json /dev/full",
    };
    for (const std::string& command : commands) {
        CAPTURE(command);
        const CliResult r = cli(dir, command);
        INFO(r.output);
        CHECK(r.status == 2);
        CHECK(contains(r.output, "/dev/full: cannot write file"));
    }
    // A folder that cannot be made: refused before the run.
    std::ofstream(dir + "/file.txt") << "x";
    for (const std::string& option : {std::string("--json"), std::string("--trace")}) {
        const CliResult r = cli(dir, "run " + sample("conv_quant8.json") + " --backend npu " +
                                         option + " " + dir + "/file.txt/sub/out" +
                                         (option == "--trace" ? ".fst --trace-cycles 10" : ""));
        INFO(r.output);
        CHECK(r.status == 2);
        CHECK(contains(r.output, "file.txt/sub/out"));
    }
    std::filesystem::remove_all(dir);
}

TEST_CASE("cli_save_outputs_never_follows_a_planted_symlink") {
    const std::string dir = makeTempDir("nncosim-symlink-");
    std::filesystem::create_directories(dir + "/out");
    std::ofstream(dir + "/victim") << "precious";
    std::filesystem::create_symlink(dir + "/victim", dir + "/out/output_0.npy");
    const CliResult r =
        cli(dir, "run " + sample("add.json") + " --backend golden --save-outputs " + dir + "/out");
    INFO(r.output);
    CHECK(r.status == 0);
    std::ifstream victim(dir + "/victim");
    std::string text((std::istreambuf_iterator<char>(victim)), std::istreambuf_iterator<char>());
    CHECK(text == "precious");
    CHECK(std::filesystem::is_regular_file(
        std::filesystem::symlink_status(dir + "/out/output_0.npy")));
    std::filesystem::remove_all(dir);
}

TEST_CASE("cli_numbers_are_range_checked") {
    const std::string dir = makeTempDir("nncosim-numbers-");
    const std::string conv = sample("conv_quant8.json");
    for (const char* fault : {"requant-bit:4294967301", "drop-write-beat:-1", "write-bit: 3",
                              "write-bit:3=2", "write-bit:+3"}) {
        CAPTURE(fault);
        const CliResult r =
            cli(dir, "run " + conv + " --backend npu --fault '" + std::string(fault) + "'");
        CHECK(r.status == 2);
        CHECK(contains(r.output, "bad --fault"));
    }
    for (const char* option : {"--sample-cycles -3", "--seed -1", "--sample-cycles 010x"}) {
        CAPTURE(option);
        const CliResult r = cli(dir, "run " + conv + " --backend golden " + option);
        CHECK(r.status != 0);
        CHECK(contains(r.output, "is not a whole number"));
    }
    // A trace window of 2^40 cycles ends with the run, not months later.
    const CliResult r =
        cli(dir, "run " + conv + " --backend npu --trace t.fst --trace-cycles 1099511627776");
    INFO(r.output);
    CHECK(r.status == 0);
    CHECK(contains(r.output, "the dump stops at cycle"));
    CHECK(std::filesystem::file_size(dir + "/t.fst") > 0);
    std::filesystem::remove_all(dir);
}

TEST_CASE("cli_killed_regress_leaves_no_child") {
    // A regression ended by SIGTERM (as an outer `timeout` or a CI limit does) while its worker
    // waits on a slow screenshot child: the child and what it started end too.
    const std::string dir = makeTempDir("nncosim-kill-");
    std::filesystem::create_directories(dir + "/bin");
    const std::string pids = dir + "/pids";
    {
        std::ofstream fake(dir + "/bin/xvfb-run");
        fake << "#!/bin/sh\n# a screenshot that never ends, with a server behind it\n"
             << "sleep 300 &\necho $! >> '" << pids << "'\necho $$ >> '" << pids << "'\nwait\n";
    }
    std::filesystem::permissions(dir + "/bin/xvfb-run", std::filesystem::perms::owner_all);
    const std::string path = dir + "/bin:" + std::getenv("PATH");
    const pid_t regress = ::fork();
    REQUIRE(regress >= 0);
    if (regress == 0) {
        ::setenv("PATH", path.c_str(), 1);
        const std::string waves = dir + "/waves";
        const std::string binary = nncosimBinary();
        ::freopen((dir + "/regress.log").c_str(), "w", stdout);
        ::dup2(STDOUT_FILENO, STDERR_FILENO);
        ::execl(binary.c_str(), binary.c_str(), "regress", "random:4", "--backend", "npu",
                "--fault", "write-bit:0=1", "--waves", waves.c_str(), "-j", "1", nullptr);
        ::_exit(127);
    }
    std::vector<pid_t> started;
    for (int i = 0; i < 1200 && started.size() < 2; ++i) {
        std::this_thread::sleep_for(std::chrono::milliseconds(100));
        std::ifstream in(pids);
        started.clear();
        for (pid_t p; in >> p;) started.push_back(p);
    }
    REQUIRE_MESSAGE(started.size() == 2, "no screenshot child started (see regress.log)");
    ::kill(regress, SIGTERM);
    int status = 0;
    ::waitpid(regress, &status, 0);
    CHECK(WIFSIGNALED(status));
    for (pid_t p : started) {
        bool gone = false;
        for (int i = 0; i < 300 && !gone; ++i) {
            std::ifstream stat("/proc/" + std::to_string(p) + "/stat");
            std::string text((std::istreambuf_iterator<char>(stat)),
                             std::istreambuf_iterator<char>());
            const size_t close = text.rfind(')');
            gone = text.empty() || (close != std::string::npos && text[close + 2] == 'Z');
            if (!gone) std::this_thread::sleep_for(std::chrono::milliseconds(10));
        }
        CHECK_MESSAGE(gone, "process ", p, " outlived the regression");
        if (!gone) ::kill(p, SIGKILL);
    }
    std::filesystem::remove_all(dir);
}

TEST_CASE("cli_cts_parallel_rtl_keeps_every_result") {
    // With --npu rtl, -j 2 runs two processes (one SystemC simulation each): every test's
    // verdict comes back, the failing one included, in the file's order.
    const std::string dir = makeTempDir("nncosim-cts-parallel-");
    std::ifstream sampleFile(sample("add.json"));
    nlohmann::json file = nlohmann::json::parse(sampleFile);
    nlohmann::json failing = file["tests"][0];
    failing["name"] = "wrong_expectation";
    for (auto& operand : failing["model"]["main"]["operands"]) {
        if (operand["lifetime"] == "SUBGRAPH_OUTPUT") operand["data"][0] = 99.5;
    }
    file["tests"].push_back(failing);
    file["tests"].push_back(file["tests"][0]);
    const size_t total = file["tests"].size();
    std::ofstream(dir + "/mixed.json") << file.dump();
    const CliResult r =
        cli(dir, "cts " + dir + "/mixed.json " + sample("conv_quant8.json") +
                     " --backend npu -j 2 --summary " + dir + "/s.json --junit " + dir + "/j.xml");
    INFO(r.output);
    CHECK(r.status == 1);
    CHECK(contains(r.output, "FAILED " + dir + "/mixed.json wrong_expectation"));
    const nlohmann::json s = readJson(dir + "/s.json");
    CHECK(s["failed"] == 1);
    CHECK(s["total"].get<size_t>() > total);
    CHECK(s["passed"].get<size_t>() == s["total"].get<size_t>() - 1);
    std::filesystem::remove_all(dir);
}
