// `--npu func`: the same driver, compiler and runtime on the functional model instead of the RTL,
// through the CLI: CTS samples and a zoo network give the golden's results, the report says its
// cycles are estimates, and options that need the RTL are refused with a clear error.
#include <doctest/doctest.h>

#include <sys/wait.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>

#include "golden/Executor.h"
#include "model/ModelJson.h"
#include "testbench/Zoo.h"
#include "testbench/tests/TestModels.h"

using namespace nncosim;
using namespace nncosim::testing;

namespace {

/// Runs the CLI with `args` in `dir`; its exit status and what it printed.
}  // namespace

TEST_CASE("npu_func_runs_cts_samples_and_a_zoo_network") {
    const std::string dir = makeTempDir("nncosim-func-");
    REQUIRE_FALSE(dir.empty());
    const std::string samples = std::string(NNCOSIM_SOURCE_DIR) + "/testbench/samples";

    // CTS samples: every test judged by the CTS rule, the NPU's share through the model.
    CliResult cts = cli(
        dir, "cts " + samples + " --backend auto --npu func -j 2 --summary " + dir + "/cts.json");
    CHECK_MESSAGE(cts.status == 0, cts.output);
    const nlohmann::json summary = readJson(dir + "/cts.json");
    CHECK(summary["npu"] == "func");
    CHECK(summary["failed"] == 0);
    CHECK(summary["passed"].get<int>() > 0);

    // One sample alone on the NPU: identical to the golden, cycles marked as estimates.
    CliResult run =
        cli(dir, "run " + samples + "/conv_quant8.json --backend npu --npu func --json " + dir +
                     "/conv.json");
    CHECK_MESSAGE(run.status == 0, run.output);
    nlohmann::json report = readJson(dir + "/conv.json");
    CHECK(report["verdict"] == "pass");
    CHECK(report["npu"] == "func");
    CHECK(report["totals"]["cycles_estimated"] == true);
    CHECK(report["totals"]["npu_cycles"].get<uint64_t>() > 0);
    CHECK(run.output.find("estimated") != std::string::npos);

    // A small MobileNet-v1 (quant8, per-channel weights), partitioned by the host runtime.
    zoo::ZooConfig config;
    config.network = zoo::Network::kMobileNetV1;
    config.precision = zoo::Precision::kQuant8PerChannel;
    config.inputSize = 64;
    config.widthMultiplier = 0.25f;
    config.numClasses = 10;
    auto model = zoo::buildZooModel(config);
    REQUIRE(model.ok());
    CtsTest test;
    test.name = zoo::modelName(config);
    test.model = *model;
    auto inputs = zoo::randomInputs(*model, 3);
    REQUIRE(inputs.ok());
    test.inputs = *inputs;
    auto outputs = golden::execute(*model, test.inputs);
    REQUIRE(outputs.ok());
    test.expectedOutputs = *outputs;
    test.outputIgnored.assign(outputs->size(), false);
    const std::string zooPath = dir + "/mobilenet.json";
    REQUIRE(writeCtsFile(zooPath, test).ok());
    run = cli(dir, "run " + zooPath + " --backend auto --npu func --json " + dir + "/zoo.json");
    CHECK_MESSAGE(run.status == 0, run.output);
    report = readJson(dir + "/zoo.json");
    CHECK(report["verdict"] == "pass");
    size_t onNpu = 0;
    for (const auto& op : report["operations"]) onNpu += op["device"] == "npu";
    CHECK(onNpu + 1 >= report["operations"].size());  // all but the SOFTMAX
    std::filesystem::remove_all(dir);
}

TEST_CASE("npu_func_refuses_what_needs_the_rtl") {
    const std::string dir = makeTempDir("nncosim-func-");
    REQUIRE_FALSE(dir.empty());
    const std::string sample = std::string(NNCOSIM_SOURCE_DIR) + "/testbench/samples/add.json";
    CliResult r = cli(dir, "run " + sample + " --npu func --fault write-bit:3");
    CHECK(r.status == 2);
    CHECK(r.output.find("--fault needs the RTL (--npu rtl)") != std::string::npos);
    r = cli(dir, "run " + sample + " --npu func --trace x.fst --trace-cycles 10");
    CHECK(r.status == 2);
    CHECK(r.output.find("--trace needs the RTL") != std::string::npos);
    r = cli(dir, "run " + sample + " --npu verilog");
    CHECK(r.status != 0);
    CHECK(r.output.find("--npu") != std::string::npos);
    std::filesystem::remove_all(dir);
}
