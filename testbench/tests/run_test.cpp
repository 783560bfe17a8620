// `nncosim run`: the report of a clean run, and the first-divergence search and waves when the
// hardware is made to misbehave on purpose (PlatformConfig::fault, in a process of its own since
// a process configures its platform once).
#include <doctest/doctest.h>

#include <Eigen/Core>

#include <sys/wait.h>

#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "driver/NpuRegisters.h"
#include "golden/Executor.h"
#include "model/ModelJson.h"
#include "testbench/ModelRun.h"
#include "testbench/tests/TestModels.h"

using namespace nncosim;
using namespace nncosim::testing;

namespace {

constexpr auto kQ8 = OperandType::TENSOR_QUANT8_ASYMM;

/// in -> 0 SELECT (CPU) -> 1 CONV_2D 3x3 (NPU) -> 2 MAX_POOL_2D 2x2 (NPU) -> out.
Model selectConvPoolModel() {
    ModelBuilder b;
    const uint32_t in = b.addInput(kQ8, {1, 8, 8, 16}, 1.0f / 16, 128);
    const QuantTensor activated{b.addOperand(kQ8, {1, 8, 8, 16}, 1.0f / 16, 128), 1.0f / 16, 128};
    addCpuOnlySelect(b, in, {1, 8, 8, 16}, activated.operand);
    // A scale at which the sums of 144 products do not saturate (at 255, odd, a stuck bit 0
    // would not show).
    const QuantTensor conv{b.addOperand(kQ8, {1, 8, 8, 16}, 4.0f, 128), 4.0f, 128};
    addConv(b, activated, 16, 16, 3, conv, 21);
    const uint32_t out = b.addOutput(kQ8, {1, 4, 4, 16}, 4.0f, 128);
    std::vector<uint32_t> pool{conv.operand};
    for (int32_t v : {0, 0, 0, 0, 2, 2, 2, 2, 0}) pool.push_back(b.addInt32(v));
    b.addOperation(OperationType::MAX_POOL_2D, pool, {out});
    return b.build();
}

/// MAX_POOL_2D then CONV_2D, both on the NPU: pooling does not requantize, the convolution does.
Model poolConvModel() {
    ModelBuilder b;
    const QuantTensor in{b.addInput(kQ8, {1, 8, 8, 16}, 1.0f / 16, 128), 1.0f / 16, 128};
    const QuantTensor pooled{b.addOperand(kQ8, {1, 4, 4, 16}, 1.0f / 16, 128), 1.0f / 16, 128};
    std::vector<uint32_t> pool{in.operand};
    for (int32_t v : {0, 0, 0, 0, 2, 2, 2, 2, 0}) pool.push_back(b.addInt32(v));
    b.addOperation(OperationType::MAX_POOL_2D, pool, {pooled.operand});
    const QuantTensor out{b.addOutput(kQ8, {1, 4, 4, 16}, 1.0f / 32, 128), 1.0f / 32, 128};
    addConv(b, pooled, 16, 16, 3, out, 22);
    return b.build();
}

/// Three 1x1 convolutions in a row, all on the NPU (one partition).
Model convChainModel() {
    ModelBuilder b;
    QuantTensor x{b.addInput(kQ8, {1, 4, 4, 16}, 1.0f / 128, 128), 1.0f / 128, 128};
    for (uint32_t i = 0; i < 3; ++i) {
        const QuantTensor y{i == 2 ? b.addOutput(kQ8, {1, 4, 4, 16}, 1.0f / 32, 128)
                                   : b.addOperand(kQ8, {1, 4, 4, 16}, 1.0f / 32, 128),
                            1.0f / 32, 128};
        addConv(b, x, 16, 16, 1, y, 100 + i);
        x = y;
    }
    return b.build();
}

/// A fresh temporary directory for one test's files (the test removes it).
std::string runDir() {
    const std::string dir = makeTempDir("nncosim-run-");
    REQUIRE_FALSE(dir.empty());
    return dir;
}

/// The model as a file with random inputs and the golden's outputs, in `dir`.
std::string writeModel(const std::string& dir, const std::string& name, const Model& model) {
    CtsTest test;
    test.name = name;
    test.model = model;
    auto inputs = randomModelInputs(model, 1);
    REQUIRE(inputs.ok());
    test.inputs = *inputs;
    auto outputs = golden::execute(model, test.inputs);
    REQUIRE(outputs.ok());
    test.expectedOutputs = *outputs;
    test.outputIgnored.assign(outputs->size(), false);
    const std::string path = dir + "/" + name + ".json";
    REQUIRE(writeCtsFile(path, test).ok());
    return path;
}

/// Runs `nncosim run` on `model` with `args`, in `dir`; returns its exit status and JSON report.
std::pair<int, nlohmann::json> runCli(const std::string& model, const std::string& dir,
                                      const std::string& args) {
    const std::string json = dir + "/report.json";
    std::filesystem::remove(json);
    const std::string command = "cd " + dir + " && " + nncosimBinary() + " run " + model +
                                " --json " + json + " " + args + " > " + dir + "/run.log 2>&1";
    const int status = std::system(command.c_str());
    std::ifstream in(json);
    REQUIRE_MESSAGE(in.good(), "no report from: ", command);
    return {WEXITSTATUS(status), nlohmann::json::parse(in)};
}

/// The first divergence in the report of a run that failed.
const nlohmann::json& failedRunDivergence(int status, nlohmann::json& report) {
    CHECK(status == 1);
    CHECK(report["verdict"] == "fail");
    REQUIRE(report["first_divergence"].is_object());
    return report["first_divergence"];
}

/// First and last time stamps of an FST dump, in picoseconds (GTKWave's fst2vcd).
std::pair<uint64_t, uint64_t> dumpTimes(const std::string& fst) {
    const std::string command = "fst2vcd -f '" + fst + "' 2>/dev/null";
    FILE* pipe = popen(command.c_str(), "r");
    REQUIRE(pipe != nullptr);
    std::pair<uint64_t, uint64_t> times{0, 0};
    bool first = true;
    char line[4096];
    while (fgets(line, sizeof(line), pipe)) {
        if (line[0] != '#') continue;
        const uint64_t t = std::strtoull(line + 1, nullptr, 10);
        if (first) times.first = t;
        times.second = t;
        first = false;
    }
    pclose(pipe);
    return times;
}

}  // namespace

TEST_CASE("run_report_of_a_matching_model") {
    const Model model = selectConvPoolModel();
    auto inputs = randomModelInputs(model, 2);
    REQUIRE(inputs.ok());
    RunOptions options;
    auto report = runModel("select_conv_pool", model, *inputs, options);
    REQUIRE_MESSAGE(report.ok(), report.status().message);
    CHECK(report->passed());
    CHECK_FALSE(report->divergenceSearched);
    REQUIRE(report->outputs.size() == 1);
    const TensorCheck& out = report->outputs[0];
    CHECK(out.compared);
    REQUIRE(out.comparison);
    CHECK(out.comparison->elements == 4 * 4 * 16);
    CHECK(out.comparison->mismatches == 0);
    CHECK(out.device->max > out.device->min);

    const std::string text = formatReport(*report);
    CHECK(text.find("backend auto (2 on the NPU, 1 on the CPU, 2 partitions)") !=
          std::string::npos);
    CHECK(text.find("SELECT") != std::string::npos);
    CHECK(text.find("verdict: PASS") != std::string::npos);
    CHECK(text.find("device time") != std::string::npos);

    const nlohmann::json j = reportJson(*report);
    CHECK(j["verdict"] == "pass");
    REQUIRE(j["operations"].size() == 3);
    CHECK(j["operations"][0]["device"] == "cpu");
    CHECK(j["operations"][1]["device"] == "npu");
    CHECK(j["operations"][1]["npu"]["macs"].get<uint64_t>() >= 8 * 8 * 16 * 16 * 9);
    CHECK(j["operations"][1]["npu"]["utilization"].get<double>() > 0.0);
    // The convolution's cycles: the array's and, on the RTL, the stalls by cause.
    const nlohmann::json& conv = j["operations"][1]["npu"];
    CHECK(conv["array_active_cycles"].get<uint64_t>() >= 8 * 8);
    CHECK(conv["array_active_cycles"].get<uint64_t>() < conv["cycles"].get<uint64_t>());
    REQUIRE(conv.contains("stall_cycles"));
    for (const char* cause : {"input", "weights", "output", "fetch"})
        CHECK(conv["stall_cycles"][cause].get<uint64_t>() < conv["cycles"].get<uint64_t>());
    CHECK(j["operations"][2]["npu"]["macs"] == 0);
    CHECK(j["operations"][2]["npu"]["dma_bytes_written"].get<uint64_t>() >= 4 * 4 * 16);
    CHECK(j["totals"]["npu_cycles"].get<uint64_t>() > 0);
    CHECK(j["totals"]["clock_period_ps"] == 1000);
    CHECK(j["outputs"][0]["verdict"] == "match");
    CHECK(j["first_divergence"].is_null());
}

TEST_CASE("run_check_tensor_rules") {
    Operand q8;
    q8.type = kQ8;
    TensorData golden{{2, 3}, {1, 2, 3, 4, 5, 6}};
    TensorData device = golden;
    device.bytes[4] = 6;  // quantized: one step off is a mismatch
    TensorCheck c = checkTensor("output 0", 9, q8, false, device, &golden);
    CHECK_FALSE(c.ok());
    REQUIRE(c.comparison);
    CHECK(c.comparison->mismatches == 1);
    CHECK(c.comparison->firstMismatch == 4);
    CHECK(c.comparison->firstExpected == 5);
    CHECK(c.comparison->firstActual == 6);

    Operand f32;
    f32.type = OperandType::TENSOR_FLOAT32;
    auto floats = [](std::vector<float> v) {
        TensorData t{{static_cast<uint32_t>(v.size())}, std::vector<uint8_t>(v.size() * 4)};
        std::memcpy(t.bytes.data(), v.data(), t.bytes.size());
        return t;
    };
    const TensorData expected = floats({1.0f, 100.0f});
    const TensorData within = floats({1.0f + 3e-6f, std::nextafter(100.0f, 200.0f)});
    c = checkTensor("output 0", 0, f32, false, within, &expected);
    CHECK(c.ok());
    CHECK(c.maxUlpError >= 1);
    const TensorData beyond = floats({1.0f + 3e-5f, 100.0f});
    c = checkTensor("output 0", 0, f32, false, beyond, &expected);
    CHECK_FALSE(c.ok());
    CHECK(c.maxUlpError > 5);
    // A shape mismatch is a mismatch whatever the bytes.
    TensorData reshaped = golden;
    reshaped.dimensions = {3, 2};
    CHECK_FALSE(checkTensor("output 0", 9, q8, false, reshaped, &golden).ok());
}

TEST_CASE("run_datapath_fault_names_the_requantizing_operation") {
    // A requantization output bit stuck: the pooling before the convolution is still right (a
    // DRAM write fault would break it first), the convolution is the first to diverge.
    const std::string dir = runDir();
    const std::string model = writeModel(dir, "pool_conv", poolConvModel());
    auto [status, report] = runCli(model, dir, "--backend npu --fault requant-bit:5=1");
    const auto& d = failedRunDivergence(status, report);
    CHECK(d["operation"] == 1);
    CHECK(d["type"] == "CONV_2D");
    CHECK(d["matched_before"] == 1);
    CHECK(d["inputs"][0]["verdict"] == "match");
    CHECK(d["outputs"][0]["verdict"] == "mismatch");

    // A bit beyond the word is a usage error naming the accepted forms.
    const std::string bad =
        nncosimBinary() + " run " + model + " --fault requant-bit:999 > " + dir + "/bad.log 2>&1";
    CHECK(WEXITSTATUS(std::system(bad.c_str())) != 0);
    std::ifstream log(dir + "/bad.log");
    const std::string text((std::istreambuf_iterator<char>(log)), std::istreambuf_iterator<char>());
    CHECK(text.find("requant-bit:N[=0|1]") != std::string::npos);
    std::filesystem::remove_all(dir);
}

TEST_CASE("run_first_divergence_names_the_faulty_npu_operation") {
    const std::string dir = runDir();
    const std::string model = writeModel(dir, "select_conv_pool", selectConvPoolModel());

    // Clean hardware: the run passes.
    auto [cleanStatus, clean] = runCli(model, dir, "--backend auto");
    CHECK(cleanStatus == 0);
    CHECK(clean["verdict"] == "pass");

    // Bit 0 of every DRAM write stuck at 1: the SELECT on the CPU is not to blame, the first
    // NPU operation is. The waves folder's name is Tcl, braces and a quote (no user path reaches
    // GTKWave's script: no command run, no Tcl error leaving GTKWave waiting).
    const std::string wavesDir = dir + "/tw} [exec touch " + dir + "/INJECTED] {\"q";
    auto [status, report] =
        runCli(model, dir, "--backend auto --fault write-bit:0=1 --waves '" + wavesDir + "'");
    const auto& d = failedRunDivergence(status, report);
    CHECK(d["operation"] == 1);
    CHECK(d["type"] == "CONV_2D");
    CHECK(d["device"] == "npu");
    CHECK(d["matched_before"] == 1);
    REQUIRE(d["inputs"].size() >= 1);
    CHECK(d["inputs"][0]["verdict"] == "match");
    CHECK(d["inputs"][0]["origin"] == "output 0 of operation 0 SELECT");
    REQUIRE(d["outputs"].size() == 1);
    CHECK(d["outputs"][0]["verdict"] == "mismatch");
    CHECK(d["outputs"][0]["mismatches"].get<uint64_t>() > 0);

    // The waves of that operation alone: the dump exists and covers its job from the doorbell.
    const auto& w = report["waves"];
    REQUIRE(w.is_object());
    CHECK(w["error"] == "");
    CHECK(w["reproduces_alone"] == true);
    CHECK(w["window_start"] == 0);
    const std::string fst = w["fst"];
    REQUIRE(std::filesystem::exists(fst));
    CHECK(std::filesystem::file_size(fst) > 0);
    CHECK(std::filesystem::exists(w["gtkw"].get<std::string>()));
    CHECK(std::filesystem::exists(w["model"].get<std::string>()));
    CHECK(fst.rfind(wavesDir, 0) == 0);
    REQUIRE(w["png"].is_string());
    CHECK(std::filesystem::file_size(w["png"].get<std::string>()) > 0);
    CHECK_FALSE(std::filesystem::exists(dir + "/INJECTED"));
    const uint64_t jobCycles = w["job_cycles"], windowCycles = w["window_cycles"];
    CHECK(jobCycles > 0);
    CHECK(windowCycles >= jobCycles);
    const auto [first, last] = dumpTimes(fst);
    const uint64_t periodPs = report["totals"]["clock_period_ps"];
    CHECK(last > first);
    CHECK((last - first) / periodPs + 1 >= jobCycles);
    CHECK((last - first) / periodPs <= windowCycles + 1);
    std::filesystem::remove_all(dir);
}

TEST_CASE("run_first_divergence_inside_one_npu_partition") {
    const std::string dir = runDir();
    const Model chain = convChainModel();
    const std::string model = writeModel(dir, "conv_chain", chain);

    // How many DRAM write beats the first convolution makes, from its counters.
    auto inputs = randomModelInputs(chain, 1);
    REQUIRE(inputs.ok());
    auto clean = runModel("conv_chain", chain, *inputs, {});
    REQUIRE(clean.ok());
    REQUIRE(clean->passed());
    REQUIRE(clean->record.partitions.size() == 1);
    REQUIRE(clean->record.operations[0].counters);
    const uint64_t firstBeats =
        clean->record.operations[0].counters->dmaBytesWritten / npu::kDramBusBytes;
    REQUIRE(firstBeats > 0);

    // Losing a beat of the second convolution's output: the search names operation 1, inside
    // the one NPU partition, with operation 0 matching.
    auto [status, report] =
        runCli(model, dir,
               "--backend npu --fault drop-write-beat:" + std::to_string(firstBeats + 2) +
                   " --waves " + dir + "/waves");
    CHECK(status == 1);
    REQUIRE(report["first_divergence"].is_object());
    CHECK(report["first_divergence"]["operation"] == 1);
    CHECK(report["first_divergence"]["matched_before"] == 1);
    CHECK(report["first_divergence"]["outputs"][0]["mismatches"].get<uint64_t>() > 0);
    CHECK(report["first_divergence"]["outputs"][0]["mismatches"].get<uint64_t>() <=
          npu::kDramBusBytes);

    // Alone, operation 1's job has fewer beats than the fault's index, so it behaves: the waves
    // are its window inside the repeated run, which must start its job at the same cycle.
    const auto& w = report["waves"];
    REQUIRE(w.is_object());
    CHECK(w["error"] == "");
    CHECK(w["reproduces_alone"] == false);
    const uint64_t start = w["window_start"], cycles = w["window_cycles"];
    const uint64_t jobStart = report["partitions"][0]["npu"]["start_cycle"];
    const uint64_t jobCycles = report["partitions"][0]["npu"]["cycles"];
    CHECK(start >= jobStart);
    CHECK(start + cycles <= jobStart + jobCycles + 64);
    CHECK(cycles >= report["operations"][1]["npu"]["cycles"].get<uint64_t>());
    const std::string fst = w["fst"];
    REQUIRE(std::filesystem::exists(fst));
    const auto [first, last] = dumpTimes(fst);
    const uint64_t periodPs = report["totals"]["clock_period_ps"];
    CHECK(first / periodPs + 1 >= start);
    CHECK(first / periodPs <= start + 1);
    CHECK(last / periodPs + 1 >= start + cycles);
    CHECK(last / periodPs <= start + cycles + 1);
    std::filesystem::remove_all(dir);
}

// ---------------------------------------------------------------------------------------------
// Lockstep co-simulation (`run --cosim`) and fast-forward (`run --rtl-from`).

namespace {

/// The co-simulation's divergence in a failed run's report.
const nlohmann::json& cosimDivergence(int status, nlohmann::json& report) {
    CHECK(status == 1);
    REQUIRE(report["cosim"].is_object());
    CHECK(report["cosim"]["diverged"] == true);
    REQUIRE(report["cosim"]["divergence"].is_object());
    return report["cosim"]["divergence"];
}

/// Write beats of the job's descriptors before the diverging one (which the list ends with).
uint64_t beatsBefore(const nlohmann::json& d) {
    uint64_t beats = 0;
    const auto& list = d["job_descriptors"];
    for (size_t i = 0; i + 1 < list.size(); ++i) beats += list[i]["write_beats"].get<uint64_t>();
    return beats;
}

}  // namespace

TEST_CASE("run_cosim_catches_each_fault_at_its_descriptor") {
    const std::string dir = runDir();
    const std::string model = writeModel(dir, "pool_conv", poolConvModel());

    // Clean hardware: every descriptor agrees.
    auto [cleanStatus, clean] = runCli(model, dir, "--backend npu --cosim");
    CHECK(cleanStatus == 0);
    CHECK(clean["cosim"]["diverged"] == false);
    CHECK(clean["cosim"]["descriptors_compared"].get<uint64_t>() >= 2);

    // A requantization bit stuck: the pooling (no requantization) agrees, the convolution's
    // first word differs in that bit.
    {
        auto [status, report] =
            runCli(model, dir, "--backend npu --cosim --fault requant-bit:5=1 --waves " + dir);
        const auto& d = cosimDivergence(status, report);
        CHECK(d["kind"] == "output");
        CHECK(d["operation"] == 1);
        CHECK(d["type"] == "CONV_2D");
        CHECK(d["opcode"] == "CONV");
        CHECK((d["rtl_value"].get<int>() ^ d["model_value"].get<int>()) == 32);
        CHECK(d["first_cycle"].get<uint64_t>() < d["retire_cycle"].get<uint64_t>());
        CHECK(d["wrong_write_cycle"].get<uint64_t>() >= d["first_cycle"].get<uint64_t>());
        CHECK(d["wrong_write_cycle"].get<uint64_t>() <= d["retire_cycle"].get<uint64_t>());
        for (const auto& earlier : d["job_descriptors"])
            if (earlier["index"] != d["descriptor"]) CHECK(earlier["opcode"] != "CONV");
        // The waves of that descriptor's cycles only, with a view and a picture.
        const auto& w = d["waves"];
        CHECK(w["error"] == "");
        const std::string fst = w["fst"];
        REQUIRE(std::filesystem::exists(fst));
        CHECK(std::filesystem::exists(w["gtkw"].get<std::string>()));
        REQUIRE(w["png"].is_string());
        CHECK(std::filesystem::file_size(w["png"].get<std::string>()) > 0);
        const auto [first, last] = dumpTimes(fst);
        const uint64_t periodPs = report["totals"]["clock_period_ps"];
        CHECK(first / periodPs <= d["wrong_write_cycle"].get<uint64_t>());
        CHECK(last / periodPs >= d["retire_cycle"].get<uint64_t>());
        CHECK((last - first) / periodPs <= w["window_cycles"].get<uint64_t>() + 1);
    }

    // A DRAM write bit stuck at 1: the first descriptor that writes anything.
    {
        auto [status, report] = runCli(model, dir, "--backend npu --cosim --fault write-bit:0=1");
        const auto& d = cosimDivergence(status, report);
        CHECK(d["kind"] == "output");
        CHECK((d["rtl_value"].get<int>() ^ d["model_value"].get<int>()) == 1);
        CHECK(beatsBefore(d) == 0);
        CHECK(d["job_descriptors"].back()["write_beats"].get<uint64_t>() > 0);
    }

    // The 20th write beat of the job dropped: the descriptor whose stores hold it.
    {
        auto [status, report] =
            runCli(model, dir, "--backend npu --cosim --fault drop-write-beat:20");
        const auto& d = cosimDivergence(status, report);
        CHECK(d["kind"] == "output");
        const uint64_t before = beatsBefore(d);
        const uint64_t own = d["job_descriptors"].back()["write_beats"];
        CHECK(before <= 20);
        CHECK(20 < before + own);
        CHECK(d["note"].get<std::string>().find("never reached DRAM") != std::string::npos);
    }
    std::filesystem::remove_all(dir);
}

TEST_CASE("run_cosim_agrees_on_a_float_network") {
    // A small float32 MobileNet-v1 (float CONV, DWCONV, AVGPOOL and FULLY_CONNECTED on the NPU):
    // the RTL and the functional model agree descriptor by descriptor; a stuck DRAM write bit
    // is caught at the first descriptor that writes.
    const std::string dir = runDir();
    const std::string model = dir + "/mobilenet_float.json";
    REQUIRE(std::system((nncosimBinary() + " zoo mobilenet_v1 --input-size 32 --width 0.25 " +
                         "--classes 10 -o " + model + " > /dev/null")
                            .c_str()) == 0);
    auto [status, clean] = runCli(model, dir, "--backend auto --cosim");
    CHECK(status == 0);
    CHECK(clean["cosim"]["diverged"] == false);
    CHECK(clean["cosim"]["descriptors_compared"].get<uint64_t>() > 20);
    CHECK(clean["outputs"][0]["verdict"] == "match");
    auto [faultStatus, report] = runCli(model, dir, "--backend auto --cosim --fault write-bit:0=1");
    const auto& d = cosimDivergence(faultStatus, report);
    CHECK(d["kind"] == "output");
    CHECK(beatsBefore(d) == 0);
}

/// A float32 1x1 convolution [1,8,8,512] -> [1,8,8,256]: half the map fills a scratchpad buffer
/// and every tile streams the 512 kB of weights.
Model wideFloatConvModel() {
    constexpr auto kF32 = OperandType::TENSOR_FLOAT32;
    ModelBuilder b;
    const uint32_t in = b.addInput(kF32, {1, 8, 8, 512});
    std::vector<float> weights(256 * 512), bias(256);
    for (size_t i = 0; i < weights.size(); ++i)
        weights[i] = static_cast<float>(static_cast<int>(i * 7919 % 2001) - 1000) / 16000.0f;
    for (size_t i = 0; i < bias.size(); ++i) bias[i] = static_cast<float>(i % 13) / 8.0f - 0.75f;
    const uint32_t filter = b.addConstant(kF32, {256, 1, 1, 512}, weights);
    const uint32_t biasOp = b.addConstant(kF32, {256}, bias);
    const uint32_t out = b.addOutput(kF32, {1, 8, 8, 256});
    b.addOperation(OperationType::CONV_2D,
                   {in, filter, biasOp, b.addInt32(1), b.addInt32(1), b.addInt32(1), b.addInt32(0)},
                   {out});
    return b.build();
}

/// The program `nncosim compile MODEL --dump` prints.
std::string compiledProgram(const std::string& dir, const std::string& model) {
    const std::string dump = dir + "/program.txt";
    REQUIRE(std::system((nncosimBinary() + " compile " + model + " --dump > " + dump).c_str()) ==
            0);
    std::ifstream in(dump);
    return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

/// The RTL and the functional model agree in lockstep on `model` and its outputs are the
/// golden's within the tolerance.
void checkCosimMatches(const std::string& dir, const std::string& model) {
    auto [status, report] = runCli(model, dir, "--backend npu --cosim");
    CHECK(status == 0);
    CHECK(report["cosim"]["diverged"] == false);
    CHECK(report["outputs"][0]["verdict"] == "match");
}

/// A float32 or float16 constant of `values`.
uint32_t floatConstant(ModelBuilder& b, OperandType type, std::vector<uint32_t> dims,
                       const std::vector<float>& values) {
    if (type == OperandType::TENSOR_FLOAT32) return b.addConstant(type, dims, values);
    std::vector<Eigen::half> halves(values.begin(), values.end());
    return b.addConstant(type, dims, halves);
}

/// Compiles `model` (float32 or float16, `half`): at least two `opcode` descriptors, every one
/// with `flag` in that format; then checkCosimMatches.
void checkFloatMapping(const std::string& dir, const std::string& model, bool half,
                       const std::string& opcode, const std::string& flag) {
    const std::string program = compiledProgram(dir, model);
    const std::string mapped = " " + flag + " " + (half ? "fp16" : "fp32");
    std::istringstream lines(program);
    size_t total = 0, withFlag = 0;
    for (std::string line; std::getline(lines, line);) {
        if (line.find("] " + opcode + " ") == std::string::npos) continue;
        ++total;
        withFlag += line.find(mapped) != std::string::npos;
    }
    CHECK(total >= 2);
    CHECK(withFlag == total);
    checkCosimMatches(dir, model);
}

TEST_CASE("run_cosim_agrees_on_wide_float_tiles") {
    // The compiler takes WIDE tiles (both scratchpad buffers, the whole map in one tile, the
    // weights streamed once): the RTL and the functional model agree descriptor by descriptor,
    // and the result is the golden's within the float tolerance.
    const std::string dir = runDir();
    const std::string model = writeModel(dir, "wide_float_conv", wideFloatConvModel());
    const std::string program = compiledProgram(dir, model);
    // The map in as few tiles as both buffers hold (one at 16x16).
    const uint32_t mapWords = 8 * 8 * 512 * 4 / npu::kDramBusBytes;
    const uint32_t tiles = (mapWords + 2 * npu::kSpadWords - 1) / (2 * npu::kSpadWords);
    CHECK(program.find("CONV_2D): " + std::to_string(tiles) + " descriptor(s)") !=
          std::string::npos);
    CHECK(program.find(" WIDE fp32") != std::string::npos);
    checkCosimMatches(dir, model);
}

/// Two float depthwise layers in TAPS mode: a 3x3 stride-1 one, RELU6, whose float32 filter is a
/// model input (scattered into the stream's tap rows at run time; float16 filters computed at
/// run time are not claimed), then a 3x5 stride-2 one; 24 channels, so the second channel block
/// is part padding.
Model floatTapsDepthwiseModel(OperandType type) {
    ModelBuilder b;
    const uint32_t in = b.addInput(type, {1, 11, 13, 24});
    std::vector<float> weights1(3 * 3 * 24), bias1(24), weights2(3 * 5 * 24), bias2(24);
    for (size_t i = 0; i < weights1.size(); ++i)
        weights1[i] = static_cast<float>(static_cast<int>(i * 104729 % 301) - 150) / 100.0f;
    for (size_t i = 0; i < bias1.size(); ++i) bias1[i] = static_cast<float>(i % 7) / 4.0f - 0.5f;
    for (size_t i = 0; i < weights2.size(); ++i)
        weights2[i] = static_cast<float>(static_cast<int>(i * 7919 % 201) - 100) / 80.0f;
    for (size_t i = 0; i < bias2.size(); ++i) bias2[i] = static_cast<float>(i % 5) / 8.0f;
    const auto constant = [&](std::vector<uint32_t> dims, const std::vector<float>& values) {
        return floatConstant(b, type, std::move(dims), values);
    };
    const uint32_t filter1 = type == OperandType::TENSOR_FLOAT32
                                 ? b.addInput(type, {1, 3, 3, 24})
                                 : constant({1, 3, 3, 24}, weights1);
    const uint32_t mid = b.addOperand(type, {1, 11, 13, 24});
    b.addOperation(OperationType::DEPTHWISE_CONV_2D,
                   {in, filter1, constant({24}, bias1), b.addInt32(1), b.addInt32(1), b.addInt32(1),
                    b.addInt32(1), b.addInt32(3)},
                   {mid});
    const uint32_t out = b.addOutput(type, {1, 6, 7, 24});
    b.addOperation(OperationType::DEPTHWISE_CONV_2D,
                   {mid, constant({1, 3, 5, 24}, weights2), constant({24}, bias2), b.addInt32(1),
                    b.addInt32(2), b.addInt32(2), b.addInt32(1), b.addInt32(0)},
                   {out});
    return b.build();
}

TEST_CASE("run_cosim_agrees_on_float_taps_depthwise") {
    // Both layers compile to TAPS descriptors; the RTL and the functional model agree in
    // lockstep, and the outputs are the golden's within the tolerance (float16: the relaxed one).
    const std::string dir = runDir();
    for (OperandType type : {OperandType::TENSOR_FLOAT32, OperandType::TENSOR_FLOAT16}) {
        const bool half = type == OperandType::TENSOR_FLOAT16;
        CAPTURE(half);
        const std::string model =
            writeModel(dir, half ? "taps_fp16" : "taps_fp32", floatTapsDepthwiseModel(type));
        // Every DWCONV descriptor in TAPS mode (none on diagonal blocks).
        checkFloatMapping(dir, model, half, "DWCONV", "TAPS");
    }
}

/// Two float convolutions of few input channels, whose taps pack into K steps (PACK): an image's
/// 3x3 stride-2 stem, 3 -> 4 channels with padding, RELU; then a 2x2 one, 4 -> 8 channels (a
/// binary32 pixel fills its word), whose float32 filter is a model input (scattered into the
/// packed rows at run time; float16 filters computed at run time are not claimed).
Model floatPackedConvModel(OperandType type) {
    ModelBuilder b;
    const bool half = type == OperandType::TENSOR_FLOAT16;
    const auto constant = [&](std::vector<uint32_t> dims, const std::vector<float>& values) {
        return floatConstant(b, type, std::move(dims), values);
    };
    const auto values = [](size_t n, uint32_t prime, float scale) {
        std::vector<float> v(n);
        for (size_t i = 0; i < n; ++i)
            v[i] = static_cast<float>(static_cast<int>(i * prime % 201) - 100) * scale;
        return v;
    };
    const uint32_t in = b.addInput(type, {1, 13, 15, 3});
    const uint32_t mid = b.addOperand(type, {1, 7, 8, 4});
    b.addOperation(OperationType::CONV_2D,
                   {in, constant({4, 3, 3, 3}, values(4 * 27, 7919, 0.01f)),
                    constant({4}, values(4, 31, 0.02f)), b.addInt32(1), b.addInt32(1),
                    b.addInt32(1), b.addInt32(1), b.addInt32(2), b.addInt32(2), b.addInt32(1)},
                   {mid});
    const uint32_t filter = half ? constant({8, 2, 2, 4}, values(8 * 16, 104729, 0.02f))
                                 : b.addInput(type, {8, 2, 2, 4});
    const uint32_t out = b.addOutput(type, {1, 6, 7, 8});
    b.addOperation(OperationType::CONV_2D,
                   {mid, filter, constant({8}, values(8, 13, 0.05f)), b.addInt32(0), b.addInt32(0),
                    b.addInt32(0), b.addInt32(0), b.addInt32(1), b.addInt32(1), b.addInt32(0)},
                   {out});
    return b.build();
}

TEST_CASE("run_cosim_agrees_on_float_packed_taps") {
    // Both convolutions compile to PACK descriptors; the RTL and the functional model agree in
    // lockstep, and the outputs are the golden's within the tolerance (float16: the relaxed one).
    const std::string dir = runDir();
    for (OperandType type : {OperandType::TENSOR_FLOAT32, OperandType::TENSOR_FLOAT16}) {
        const bool half = type == OperandType::TENSOR_FLOAT16;
        CAPTURE(half);
        const std::string model =
            writeModel(dir, half ? "pack_fp16" : "pack_fp32", floatPackedConvModel(type));
        checkFloatMapping(dir, model, half, "CONV", "PACK");
    }
}

TEST_CASE("run_rtl_from_and_its_errors") {
    const std::string dir = runDir();
    const std::string model = writeModel(dir, "select_conv_pool", selectConvPoolModel());

    // The convolution on the model, the pooling after it on the RTL (one NPU partition split),
    // compared in lockstep from there: the golden's outputs.
    auto [status, report] = runCli(model, dir, "--backend auto --rtl-from MAX_POOL_2D --cosim");
    CHECK(status == 0);
    CHECK(report["verdict"] == "pass");
    CHECK(report["cosim"]["rtl_from"] == 2);
    CHECK(report["cosim"]["split_jobs"] == 1);
    CHECK(report["cosim"]["split_at_descriptor"].get<uint32_t>() > 0);
    CHECK(report["cosim"]["diverged"] == false);

    // Bad operations are usage errors naming what the model has.
    const auto usage = [&](const std::string& args, const std::string& expected) {
        const std::string log = dir + "/usage.log";
        const std::string command =
            nncosimBinary() + " run " + model + " " + args + " > " + log + " 2>&1";
        CHECK(WEXITSTATUS(std::system(command.c_str())) == 2);
        std::ifstream in(log);
        const std::string text((std::istreambuf_iterator<char>(in)),
                               std::istreambuf_iterator<char>());
        CHECK_MESSAGE(text.find(expected) != std::string::npos, text);
    };
    usage("--rtl-from 7", "the model has operations 0 to 2");
    usage("--rtl-from LSTM", "the model has no LSTM operation (it has SELECT, CONV_2D");
    usage("--rtl-from CONV_2D:1", "the model has 1 CONV_2D operation");
    usage("--rtl-from SELECT", "runs on the CPU");
    usage("--rtl-from CONV_2D:x", "expected an operation index, TYPE or TYPE:N");
    usage("--cosim --npu func", "--cosim runs the RTL beside the functional model");
    usage("--cosim --backend golden", "--cosim needs the NPU");
    std::filesystem::remove_all(dir);
}

TEST_CASE("run_on_a_wider_dram") {
    // The sample ADD on a platform of 32 B/cycle (two memory lanes), with `run` and `cts`: the
    // same result, the bandwidth in the report and in its DRAM figures; bandwidths the port
    // cannot have and the functional model are refused, naming why.
    const std::string dir = makeTempDir("nncosim-dram-");
    REQUIRE_FALSE(dir.empty());
    const std::string sample = std::string(NNCOSIM_SOURCE_DIR) + "/testbench/samples/add.json";
    CliResult r =
        cli(dir, "run " + sample + " --backend npu --dram-bytes-per-cycle 32 --json r.json");
    CHECK_MESSAGE(r.status == 0, r.output);
    CHECK(r.output.find("32 B/cycle of DRAM") != std::string::npos);
    const nlohmann::json report = readJson(dir + "/r.json");
    CHECK(report["verdict"] == "pass");
    CHECK(report["totals"]["dram_bytes_per_cycle"] == 32);
    const nlohmann::json& job = report["partitions"][0]["npu"];
    const double bytes =
        job["dma_bytes_read"].get<double>() + job["dma_bytes_written"].get<double>();
    CHECK(job["dram_utilization"].get<double>() ==
          doctest::Approx(bytes / (32.0 * job["cycles"].get<double>())));

    r = cli(dir, "run " + sample + " --dram-bytes-per-cycle 24");
    CHECK(r.status == 2);
    CHECK(r.output.find("DRAM bandwidth 24 B/cycle: above a beat (16 B) it must be a whole "
                        "number of beats, at most 4") != std::string::npos);
    // The CTS runner takes the same option; both refuse it on the functional model.
    r = cli(dir, "cts " + sample + " --backend npu --dram-bytes-per-cycle 32");
    CHECK_MESSAGE(r.status == 0, r.output);
    CHECK(r.output.find("2 tests, 2 passed, 0 failed") != std::string::npos);
    for (const char* command : {"run ", "cts --backend npu "}) {
        r = cli(dir, command + sample + " --npu func --dram-bytes-per-cycle 32");
        CHECK(r.status == 2);
        CHECK(r.output.find("--dram-bytes-per-cycle sets the RTL platform's DRAM: it needs "
                            "--npu rtl") != std::string::npos);
    }
    std::filesystem::remove_all(dir);
}
