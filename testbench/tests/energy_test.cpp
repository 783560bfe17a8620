// Energy and ExecutionPreference: the energy of a known job is the energy model's formula over
// its counters, the same on the RTL and on the functional model but for the cycles; the host
// runtime places operations by powerUsage for LOW_POWER and by execTime otherwise, as Android's
// runtime does; `nncosim run` reports energy per operation and per run, and takes --preference.
#include <doctest/doctest.h>

#include <sys/wait.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "driver/Compiler.h"
#include "driver/EnergyModel.h"
#include "golden/Executor.h"
#include "model/Validation.h"
#include "testbench/ModelRun.h"
#include "testbench/runtime/HostRuntime.h"
#include "testbench/tests/TestModels.h"

using namespace nncosim;
using namespace nncosim::testing;

namespace {

constexpr auto kQ8 = OperandType::TENSOR_QUANT8_ASYMM;
constexpr auto kS8 = OperandType::TENSOR_QUANT8_ASYMM_SIGNED;

/// One CONV_2D 3x3, 8x8x16 -> 16 channels (uint8): 8 x 8 x 9 x 16 x 16 MACs.
Model convModel() {
    ModelBuilder b;
    const QuantTensor in{b.addInput(kQ8, {1, 8, 8, 16}, 1.0f / 128, 128), 1.0f / 128, 128};
    const QuantTensor out{b.addOutput(kQ8, {1, 8, 8, 16}, 1.0f / 16, 128), 1.0f / 16, 128};
    addConv(b, in, 16, 16, 3, out, 7);
    return b.build();
}

/// in -> 0 CONV_2D 3x3 -> t0 -> 1 SELECT (CPU only) -> out0, and t0 -> 2 ADD -> out1.
Model mixedModel() {
    ModelBuilder b;
    const QuantTensor in{b.addInput(kQ8, {1, 8, 8, 16}, 1.0f / 128, 128), 1.0f / 128, 128};
    const QuantTensor t0{b.addOperand(kQ8, {1, 8, 8, 16}, 1.0f / 16, 128), 1.0f / 16, 128};
    addConv(b, in, 16, 16, 3, t0, 7);
    const uint32_t out0 = b.addOutput(kQ8, {1, 8, 8, 16}, 1.0f / 16, 128);
    addCpuOnlySelect(b, t0.operand, {1, 8, 8, 16}, out0);
    const uint32_t out1 = b.addOutput(kQ8, {1, 8, 8, 16}, 1.0f / 8, 128);
    b.addOperation(OperationType::ADD, {t0.operand, t0.operand, b.addInt32(0)}, {out1});
    return b.build();
}

/// Two independent ADDs: 0 on uint8 tensors, 1 on int8 tensors.
Model twoTypesModel() {
    ModelBuilder b;
    const uint32_t a = b.addInput(kQ8, {1, 4, 4, 16}, 0.5f, 128);
    const uint32_t s = b.addInput(kS8, {1, 4, 4, 16}, 0.5f, 0);
    const uint32_t outA = b.addOutput(kQ8, {1, 4, 4, 16}, 1.0f, 128);
    const uint32_t outS = b.addOutput(kS8, {1, 4, 4, 16}, 1.0f, 0);
    b.addOperation(OperationType::ADD, {a, a, b.addInt32(0)}, {outA});
    b.addOperation(OperationType::ADD, {s, s, b.addInt32(0)}, {outS});
    return b.build();
}

std::shared_ptr<NpuContext> functionalNpu(const driver::DeviceOptions& options = {}) {
    sim::PlatformConfig config;
    config.npu = sim::NpuImplementation::kFunctional;
    auto npu = makeNpuContext(config, options);
    REQUIRE_MESSAGE(npu.ok(), npu.status().message);
    return *npu;
}

/// The model's one NPU job on `npu` (the process's RTL when null), sampled per operation.
NpuJobProfile runJob(const Model& model, std::shared_ptr<NpuContext> npu) {
    RuntimeOptions options;
    options.placement = Placement::kNpu;
    options.profileSampleCycles = 64;
    options.npu = std::move(npu);
    auto runtime = HostRuntime::create(model, options);
    REQUIRE_MESSAGE(runtime.ok(), runtime.status().message);
    auto inputs = randomModelInputs(model, 1);
    REQUIRE(inputs.ok());
    ExecutionRecord record;
    auto outputs = (*runtime)->execute(*inputs, &record);
    REQUIRE_MESSAGE(outputs.ok(), outputs.status().message);
    REQUIRE(record.partitions.size() == 1);
    REQUIRE(record.partitions[0].job);
    return *record.partitions[0].job;
}

/// The energy model's formula, restated: what each counter costs under `p`.
double formula(const NpuCounters& c, uint64_t clockPeriodPs, const driver::EnergyParameters& p) {
    return static_cast<double>(c.macs) * p.macPicojoules +
           static_cast<double>(c.scratchpadReads) * p.scratchpadReadPicojoules +
           static_cast<double>(c.scratchpadWrites) * p.scratchpadWritePicojoules +
           static_cast<double>(c.dmaBytesRead) * p.dramReadPicojoulesPerByte +
           static_cast<double>(c.dmaBytesWritten) * p.dramWritePicojoulesPerByte +
           static_cast<double>(c.cycles) *
               (p.clockPicojoulesPerCycle +
                p.leakageMilliwatts * static_cast<double>(clockPeriodPs) * 1e-3);
}

std::vector<uint32_t> ops(std::initializer_list<uint32_t> list) {
    return list;
}

}  // namespace

TEST_CASE("energy_of_a_known_job_equals_the_formula") {
    const Model model = convModel();
    REQUIRE(validateModel(model).ok());
    // The scratchpad accesses the compiled descriptors imply.
    auto program = driver::compileModel(model, {});
    REQUIRE(program.ok());
    driver::ScratchpadAccesses expected;
    for (const npu::Descriptor& d : program->descriptors) {
        const driver::ScratchpadAccesses s = driver::scratchpadAccesses(d);
        expected.reads += s.reads;
        expected.writes += s.writes;
    }
    // One word per vector: 64 pixels x output blocks x 9 taps x input words (16 channels: one
    // word and one block at 16x16); the input region loaded at least once.
    const uint64_t words = (16 + npu::kDramBusBytes - 1) / npu::kDramBusBytes;
    CHECK(expected.reads == 64 * words * 9 * words);
    CHECK(expected.writes >= 64 * words);

    auto rtlNpu = openNpu();
    REQUIRE(rtlNpu.ok());
    const uint64_t period = (*rtlNpu)->hardware->clockPeriodPs();
    const NpuJobProfile rtl = runJob(model, nullptr);
    const NpuCounters& c = rtl.total;
    CHECK(c.macs == 8 * 8 * 9 * 16 * 16);  // PERF_MACS, padding taps included
    CHECK(c.scratchpadReads == expected.reads);
    CHECK(c.scratchpadWrites == expected.writes);
    CHECK(c.dmaBytesRead >= 8 * 8 * 16 + 16 * 9 * 16);  // input and weights at least
    CHECK(c.dmaBytesWritten >= 8 * 8 * 16);             // the output at least
    const driver::EnergyParameters p;
    const driver::Energy energy = c.energy(period);
    CHECK(energy.totalPicojoules() == doctest::Approx(formula(c, period, p)));
    CHECK(energy.macs == doctest::Approx(147456 * p.macPicojoules));
    CHECK(energy.totalPicojoules() > energy.macs);
    // The one operation's share is the whole job.
    REQUIRE(rtl.byTag.size() == 1);
    CHECK(rtl.byTag.at(0).energy(period).totalPicojoules() ==
          doctest::Approx(energy.totalPicojoules()));

    // The functional model counts the same MACs, DMA bytes and scratchpad accesses: the energy
    // differs only by the static part of the cycles it estimates.
    const NpuJobProfile func = runJob(model, functionalNpu());
    const NpuCounters& f = func.total;
    CHECK(f.macs == c.macs);
    CHECK(f.dmaBytesRead == c.dmaBytesRead);
    CHECK(f.dmaBytesWritten == c.dmaBytesWritten);
    CHECK(f.scratchpadReads == c.scratchpadReads);
    CHECK(f.scratchpadWrites == c.scratchpadWrites);
    const driver::Energy fe = f.energy(period);
    CHECK(fe.macs == energy.macs);
    CHECK(fe.scratchpad == energy.scratchpad);
    CHECK(fe.dram == energy.dram);
    const double perCycle = p.clockPicojoulesPerCycle + p.leakageMilliwatts * period * 1e-3;
    CHECK(fe.totalPicojoules() - energy.totalPicojoules() ==
          doctest::Approx((static_cast<double>(f.cycles) - static_cast<double>(c.cycles)) *
                          perCycle));
}

TEST_CASE("host_runtime_choose_npu_by_preference") {
    // Constructed figures: the NPU is fast but power-hungry on uint8, slow but frugal on int8,
    // and exactly as good as the CPU on execTime for float32 (a tie goes to the CPU).
    Capabilities caps;
    for (int t = 0; t <= static_cast<int>(OperandType::TENSOR_QUANT8_ASYMM_SIGNED); ++t)
        caps.operandPerformance.push_back({static_cast<OperandType>(t), PerformanceInfo{}});
    auto set = [&](OperandType type, PerformanceInfo info) {
        for (auto& entry : caps.operandPerformance)
            if (entry.type == type) entry.info = info;
    };
    set(kQ8, {0.5f, 2.0f});
    set(kS8, {2.0f, 0.5f});
    const Model model = twoTypesModel();
    REQUIRE(validateModel(model).ok());
    const std::vector<bool> supported{true, true};
    CHECK(operationPerformance(model, 0, caps, ExecutionPreference::LOW_POWER) == 2.0f);
    CHECK(operationPerformance(model, 1, caps, ExecutionPreference::SUSTAINED_SPEED) == 2.0f);
    CHECK(chooseNpu(model, supported, caps, ExecutionPreference::LOW_POWER) ==
          std::vector<bool>{false, true});
    CHECK(chooseNpu(model, supported, caps, ExecutionPreference::FAST_SINGLE_ANSWER) ==
          std::vector<bool>{true, false});
    CHECK(chooseNpu(model, supported, caps, ExecutionPreference::SUSTAINED_SPEED) ==
          std::vector<bool>{true, false});
    // Unsupported stays on the CPU whatever the figures; a tie goes to the CPU.
    CHECK(chooseNpu(model, {false, true}, caps, ExecutionPreference::FAST_SINGLE_ANSWER) ==
          std::vector<bool>{false, false});
    set(kQ8, {1.0f, 1.0f});
    CHECK(chooseNpu(model, supported, caps, ExecutionPreference::FAST_SINGLE_ANSWER) ==
          std::vector<bool>{false, false});
    CHECK(nameOf(*preferenceFromName("low-power")) == std::string("LOW_POWER"));
    CHECK_FALSE(preferenceFromName("LOW_POWER"));
}

TEST_CASE("host_runtime_preference_agrees_on_the_calibrated_figures") {
    // The driver's own figures: execTime and powerUsage both below the CPU's for the quantized
    // types, so every preference places the operations alike.
    const Model model = mixedModel();
    auto npu = functionalNpu();
    const Capabilities& caps = npu->device->getCapabilities();
    for (uint32_t i : {0u, 2u}) {
        CHECK(operationPerformance(model, i, caps, ExecutionPreference::LOW_POWER) < 1.0f);
        CHECK(operationPerformance(model, i, caps, ExecutionPreference::FAST_SINGLE_ANSWER) < 1.0f);
    }
    for (ExecutionPreference preference :
         {ExecutionPreference::LOW_POWER, ExecutionPreference::FAST_SINGLE_ANSWER,
          ExecutionPreference::SUSTAINED_SPEED}) {
        CAPTURE(nameOf(preference));
        RuntimeOptions options;
        options.npu = npu;
        options.preference = preference;
        auto runtime = HostRuntime::create(model, options);
        REQUIRE_MESSAGE(runtime.ok(), runtime.status().message);
        const auto& partitions = (*runtime)->partitions();
        REQUIRE(partitions.size() == 2);
        CHECK(partitions[0].npu);
        CHECK(partitions[0].operations == ops({0, 2}));
        CHECK_FALSE(partitions[1].npu);
        CHECK(partitions[1].operations == ops({1}));
    }
}

TEST_CASE("host_runtime_preference_low_power_and_fast_differ") {
    // An NPU whose DRAM costs 100x the default: its calibration run then needs more energy than
    // the CPU reference (powerUsage above 1) while its speed is unchanged (execTime below 1).
    driver::DeviceOptions hungry;
    hungry.energy.dramReadPicojoulesPerByte *= 100;
    hungry.energy.dramWritePicojoulesPerByte *= 100;
    auto npu = functionalNpu(hungry);
    const Model model = mixedModel();
    const Capabilities& caps = npu->device->getCapabilities();
    REQUIRE(operationPerformance(model, 0, caps, ExecutionPreference::LOW_POWER) > 1.0f);
    REQUIRE(operationPerformance(model, 0, caps, ExecutionPreference::FAST_SINGLE_ANSWER) < 1.0f);
    auto inputs = randomModelInputs(model, 2);
    REQUIRE(inputs.ok());
    auto reference = golden::execute(model, *inputs);
    REQUIRE(reference.ok());

    RuntimeOptions options;
    options.npu = npu;
    options.preference = ExecutionPreference::FAST_SINGLE_ANSWER;
    auto fast = HostRuntime::create(model, options);
    REQUIRE(fast.ok());
    REQUIRE((*fast)->partitions().size() == 2);
    CHECK((*fast)->partitions()[0].npu);
    CHECK((*fast)->partitions()[0].operations == ops({0, 2}));

    options.preference = ExecutionPreference::LOW_POWER;
    auto low = HostRuntime::create(model, options);
    REQUIRE(low.ok());
    REQUIRE((*low)->partitions().size() == 1);  // everything on the CPU
    CHECK_FALSE((*low)->partitions()[0].npu);
    CHECK((*low)->cpuReasons()[0].find("LOW_POWER: the NPU's powerUsage") != std::string::npos);
    CHECK((*low)->cpuReasons()[1].find("SELECT") != std::string::npos);

    // Both run and give the golden's results.
    for (auto* runtime : {&*fast, &*low}) {
        ExecutionRecord record;
        auto outputs = (*runtime)->execute(*inputs, &record);
        REQUIRE_MESSAGE(outputs.ok(), outputs.status().message);
        for (size_t i = 0; i < outputs->size(); ++i)
            CHECK((*outputs)[i].bytes == (*reference)[i].bytes);
    }

    // Placement::kNpu compiles for the NPU alone: the figures do not matter there.
    options.placement = Placement::kNpu;
    const Model conv = convModel();
    auto only = HostRuntime::create(conv, options);
    REQUIRE(only.ok());
    CHECK((*only)->partitions()[0].npu);
}

TEST_CASE("run_reports_energy_and_preference") {
    const std::string dir = makeTempDir("nncosim-energy-");
    REQUIRE_FALSE(dir.empty());
    const std::string sample =
        std::string(NNCOSIM_SOURCE_DIR) + "/testbench/samples/conv_quant8.json";
    const std::string log = dir + "/run.log";
    const std::string command = nncosimBinary() + " run " + sample +
                                " --npu func --preference low-power --json " + dir +
                                "/run.json > " + log + " 2>&1";
    const int status = WEXITSTATUS(std::system(command.c_str()));
    std::ifstream text(log);
    const std::string output((std::istreambuf_iterator<char>(text)),
                             std::istreambuf_iterator<char>());
    REQUIRE_MESSAGE(status == 0, output);
    CHECK(output.find("est. uJ") != std::string::npos);
    CHECK(output.find("NPU energy (estimated cycles): ") != std::string::npos);
    CHECK(output.find("preference: LOW_POWER") != std::string::npos);
    std::ifstream in(dir + "/run.json");
    const nlohmann::json j = nlohmann::json::parse(in);
    CHECK(j["preference"] == "LOW_POWER");
    const nlohmann::json& totals = j["totals"];
    const double total = totals["energy_uj"].get<double>();
    CHECK(total > 0.0);
    double parts = 0.0;
    for (const auto& [name, value] : totals["energy_breakdown_uj"].items())
        parts += value.get<double>();
    CHECK(parts == doctest::Approx(total));
    // Average power: the energy over the device time.
    CHECK(totals["average_mw"].get<double>() ==
          doctest::Approx(total * 1e-6 / (totals["device_time_ns"].get<double>() * 1e-9) * 1e3));
    // Per operation: the NPU operations' energies add up to the run's.
    double operations = 0.0;
    for (const auto& op : j["operations"])
        if (op.contains("npu")) operations += op["npu"]["energy_uj"].get<double>();
    CHECK(operations == doctest::Approx(total));
    std::filesystem::remove_all(dir);
}

TEST_CASE("cts_reports_preference") {
    // `cts --preference` reaches every preparation as `run --preference` does (the partitioner's
    // use of it: host_runtime_preference_*); it is reported, and refused where nothing uses it.
    const std::string dir = makeTempDir("nncosim-cts-preference-");
    REQUIRE_FALSE(dir.empty());
    const std::string samples = std::string(NNCOSIM_SOURCE_DIR) + "/testbench/samples/";
    const std::string files = samples + "conv_quant8.json " + samples + "avg_pool_quant8_1.json";
    for (const char* backend : {"auto", "npu"}) {
        CAPTURE(backend);
        const CliResult r =
            cli(dir, std::string("cts --backend ") + backend +
                         " --npu func --preference low-power --summary s.json " + files);
        REQUIRE_MESSAGE(r.status == 0, r.output);
        CHECK(r.output.find("--preference low-power): ") != std::string::npos);
        const nlohmann::json summary = readJson(dir + "/s.json");
        CHECK(summary["preference"] == "low-power");
        CHECK(summary["passed"].get<int>() > 0);
        CHECK(summary["failed"] == 0);
    }
    const CliResult golden = cli(dir, "cts --backend golden --preference low-power " + files);
    CHECK(golden.status == 2);
    CHECK(golden.output.find("--preference applies to --backend npu and auto") !=
          std::string::npos);
    CHECK(cli(dir, "cts --backend auto --preference fastest " + files).status != 0);
    std::filesystem::remove_all(dir);
}
