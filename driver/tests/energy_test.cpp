// The energy model (driver/EnergyModel.h) and the powerUsage the capabilities derive from the
// calibration run with it (driver/Calibration.h).
#include <cfloat>

#include "driver/Calibration.h"
#include "driver/EnergyModel.h"
#include "driver/tests/TestUtil.h"

using namespace nncosim;
using namespace nncosim::driver;
using namespace nncosim::driver::testing;

namespace {

npu::TensorDesc tensor(uint32_t inner, uint32_t count1, uint32_t count2, uint32_t count3 = 1) {
    npu::TensorDesc t;
    t.inner = inner;
    t.count1 = count1;
    t.count2 = count2;
    t.count3 = count3;
    return t;
}

npu::Descriptor window(npu::Opcode opcode, uint32_t flags, npu::TensorDesc a, npu::TensorDesc out,
                       uint32_t kernel, uint32_t stride = 1) {
    npu::Descriptor d;
    d.opcode = opcode;
    d.flags = flags;
    d.a = a;
    d.out = out;
    d.kernelW = d.kernelH = kernel;
    d.strideW = d.strideH = stride;
    d.dilationW = d.dilationH = 1;
    return d;
}

constexpr uint32_t flag(npu::DescFlag f) {
    return static_cast<uint32_t>(f);
}

}  // namespace

TEST_CASE("driver_energy_formula") {
    // Parameters chosen so that every term is distinguishable.
    EnergyParameters p;
    p.macPicojoules = 1;
    p.scratchpadReadPicojoules = 2;
    p.scratchpadWritePicojoules = 3;
    p.dramReadPicojoulesPerByte = 5;
    p.dramWritePicojoulesPerByte = 7;
    p.clockPicojoulesPerCycle = 11;
    p.leakageMilliwatts = 13;  // at 2 ns per cycle: 26 pJ per cycle
    EnergyCounters c;
    c.cycles = 1000;
    c.macs = 100000;
    c.dmaBytesRead = 4096;
    c.dmaBytesWritten = 1024;
    c.scratchpadReads = 500;
    c.scratchpadWrites = 64;
    const Energy e = estimateEnergy(c, /*clockPeriodPs=*/2000, p);
    CHECK(e.macs == doctest::Approx(100000.0));
    p.floatMacPicojoules = 4;
    c.floatMacs = 40000;  // of the 100,000
    CHECK(estimateEnergy(c, 2000, p).macs == doctest::Approx(60000.0 + 4 * 40000.0));
    // An operation's sampled MACs short of its descriptors' float MACs: all of them float (this
    // wrapped around to 5.5e18 MACs of int8 once).
    c.floatMacs = 100100;
    CHECK(estimateEnergy(c, 2000, p).macs == doctest::Approx(4 * 100000.0));
    c.floatMacs = 0;
    CHECK(e.scratchpad == doctest::Approx(500 * 2 + 64 * 3));
    CHECK(e.dram == doctest::Approx(4096 * 5 + 1024 * 7));
    CHECK(e.clockAndLeakage == doctest::Approx(1000 * (11 + 26)));
    const double total = 100000.0 + 1192 + 27648 + 37000;
    CHECK(e.totalPicojoules() == doctest::Approx(total));
    CHECK(e.microjoules() == doctest::Approx(total * 1e-6));
    // Over 1000 cycles of 2 ns: total pJ / 2 us.
    CHECK(averageMilliwatts(e, 1000, 2000) == doctest::Approx(total / 2e6 * 1e3));
    CHECK(averageMilliwatts(e, 0, 2000) == 0.0);

    // The defaults: a write updates every copy of the replicated scratchpad; at 1 GHz a busy
    // cycle costs the clock's energy plus 1 ns of leakage.
    const EnergyParameters d;
    CHECK(d.scratchpadWritePicojoules == d.scratchpadReadPicojoules * npu::kDwTapPorts);
    EnergyCounters idle;
    idle.cycles = 1000;
    CHECK(estimateEnergy(idle, 1000).totalPicojoules() ==
          doctest::Approx(1000 * (d.clockPicojoulesPerCycle + d.leakageMilliwatts)));
    CHECK(cpuPicojoules(1000, 0) == doctest::Approx(1000 * d.cpuPicojoulesPerQuant8Mac));
    CHECK(cpuPicojoules(1000, 400) ==
          doctest::Approx(600 * d.cpuPicojoulesPerQuant8Mac + 400 * d.cpuPicojoulesPerFloatMac));
}

TEST_CASE("driver_energy_scratchpad_accesses_from_descriptors") {
    const uint32_t v = npu::kDramBusBytes;
    // CONV 3x3 over a 10x6 region of 20 channels (2 words per pixel at 16x16) into 8x4 pixels
    // of 40 channels (3 blocks): the region loaded once, one word per vector.
    const uint32_t w20 = (20 + v - 1) / v, b40 = (40 + v - 1) / v;
    ScratchpadAccesses s =
        scratchpadAccesses(window(npu::Opcode::CONV, 0, tensor(20, 10, 6), tensor(40, 8, 4), 3));
    CHECK(s.writes == 10 * 6 * w20);
    CHECK(s.reads == 8 * 4 * b40 * 9 * w20);

    // A CHAIN_IN consumer loads nothing; a CHAIN_OUT producer writes its result.
    s = scratchpadAccesses(window(npu::Opcode::CONV, flag(npu::DescFlag::CHAIN_IN),
                                  tensor(20, 8, 4), tensor(40, 8, 4), 1));
    CHECK(s.writes == 0);
    CHECK(s.reads == 8 * 4 * b40 * w20);
    const uint32_t w32 = (32 + v - 1) / v;
    s = scratchpadAccesses(window(npu::Opcode::DWCONV,
                                  flag(npu::DescFlag::CHAIN_OUT) | flag(npu::DescFlag::TAPS),
                                  tensor(32, 10, 10), tensor(32, 8, 8), 3));
    CHECK(s.writes == 10 * 10 * w32 + 8 * 8 * w32);
    // TAPS: per row of 8 pixels 8 + (3 - 1) / 1 steps, each reading 3 kernel rows x 1 phase.
    CHECK(s.reads == w32 * 8 * (8 + 2) * 3);
    // Stride 2: (3 - 1) / 2 = 1 extra step per row, 3 rows x 2 phases per step.
    s = scratchpadAccesses(window(npu::Opcode::DWCONV, flag(npu::DescFlag::TAPS), tensor(32, 9, 9),
                                  tensor(32, 4, 4), 3, 2));
    CHECK(s.reads == w32 * 4 * (4 + 1) * 3 * 2);
    // Diagonal blocks: one word per tap and block.
    s = scratchpadAccesses(window(npu::Opcode::DWCONV, 0, tensor(32, 10, 10), tensor(32, 8, 8), 3));
    CHECK(s.reads == 8 * 8 * w32 * 9);
    // Pooling: every tap of every input word.
    s = scratchpadAccesses(
        window(npu::Opcode::MAXPOOL, 0, tensor(16, 4, 4), tensor(16, 2, 2), 2, 2));
    CHECK(s.writes == 16);
    CHECK(s.reads == 2 * 2 * 4);

    // Float CONV: a vector is 16 elements, 4 words of binary32; 20 channels are 2 vectors of
    // 5 words per pixel, 40 output channels 3 blocks. PERF_MACS counts every channel pair.
    npu::Descriptor fconv =
        window(npu::Opcode::CONV, 0, tensor(4 * 20, 10, 6), tensor(4 * 40, 8, 4), 3);
    fconv.format = static_cast<uint32_t>(npu::Format::FP32);
    s = scratchpadAccesses(fconv);
    CHECK(s.writes == 10 * 6 * 5);
    CHECK(s.reads == 8 * 4 * 3 * 9 * 2 * 4);
    CHECK(floatMacs(fconv) == uint64_t{8} * 4 * 9 * 20 * 40);
    // Float DWCONV (binary16: 2 words a vector), diagonal blocks.
    npu::Descriptor fdw =
        window(npu::Opcode::DWCONV, 0, tensor(2 * 32, 10, 10), tensor(2 * 32, 8, 8), 3);
    fdw.format = static_cast<uint32_t>(npu::Format::FP16);
    CHECK(scratchpadAccesses(fdw).reads == 8 * 8 * 2 * 9 * 2);
    CHECK(floatMacs(fdw) == uint64_t{8} * 8 * 9 * 32);
    CHECK(floatMacs(window(npu::Opcode::CONV, 0, tensor(20, 10, 6), tensor(40, 8, 4), 3)) == 0);

    // Element-wise: A (and B for ADD, MUL) loaded and read once.
    npu::Descriptor add;
    add.opcode = npu::Opcode::ADD;
    add.a = add.b = add.out = tensor(16, 3, 2, 2);
    s = scratchpadAccesses(add);
    CHECK(s.writes == 2 * 12);
    CHECK(s.reads == 2 * 12);
    add.opcode = npu::Opcode::LUT;
    s = scratchpadAccesses(add);
    CHECK(s.writes == 12);
    CHECK(s.reads == 12);
    add.opcode = npu::Opcode::NOP;
    s = scratchpadAccesses(add);
    CHECK(s.writes == 0);
    CHECK(s.reads == 0);
}

TEST_CASE("driver_power_usage_from_calibration") {
    // The record is a MobileNet-v1 224 run: ~569 M MACs over a few million cycles.
    const CalibrationRun& run = kQuant8Calibration;
    CHECK(run.npu.macs > 560'000'000);
    CHECK(run.npu.macs < 580'000'000);
    CHECK(run.npu.cycles > 1'000'000);
    CHECK(run.npu.dmaBytesRead > 0);
    CHECK(run.npu.dmaBytesWritten > 0);
    CHECK(run.npu.scratchpadReads > 0);
    CHECK(run.npu.scratchpadWrites > 0);
    CHECK(run.cpuSeconds > 0);

    // powerUsage is the energy model over the record against the CPU reference: finite, below
    // the CPU's 1.0 for every type the NPU executes; float types from the float32 record.
    const EnergyParameters defaults;
    const double expected =
        estimateEnergy(run.npu, run.clockPeriodPs).totalPicojoules() /
        (static_cast<double>(run.npu.macs) * defaults.cpuPicojoulesPerQuant8Mac);
    auto t = makeTestDevice();
    const Capabilities& caps = t.device->getCapabilities();
    int npuTypes = 0;
    for (const auto& entry : caps.operandPerformance) {
        CAPTURE(nameOf(entry.type));
        const OperandType type = entry.type;
        if (type == OperandType::TENSOR_QUANT8_ASYMM ||
            type == OperandType::TENSOR_QUANT8_ASYMM_SIGNED ||
            type == OperandType::TENSOR_QUANT8_SYMM_PER_CHANNEL ||
            type == OperandType::TENSOR_INT32 || type == OperandType::INT32 ||
            type == OperandType::BOOL) {
            ++npuTypes;
            CHECK(entry.info.powerUsage > 0.0f);
            CHECK(entry.info.powerUsage < 1.0f);
            CHECK(entry.info.powerUsage == doctest::Approx(expected));
            CHECK(entry.info.execTime ==
                  doctest::Approx(static_cast<double>(run.npu.cycles) * run.clockPeriodPs * 1e-12 /
                                  run.cpuSeconds));
        }
        if (type == OperandType::TENSOR_FLOAT32 || type == OperandType::TENSOR_FLOAT16 ||
            type == OperandType::FLOAT32) {
            const CalibrationRun& f =
                type == OperandType::TENSOR_FLOAT16 ? kRelaxedCalibration : kFloat32Calibration;
            CHECK(entry.info.powerUsage ==
                  doctest::Approx(
                      estimateEnergy(f.npu, f.clockPeriodPs).totalPicojoules() /
                      (static_cast<double>(f.npu.floatMacs) * defaults.cpuPicojoulesPerFloatMac)));
            CHECK(entry.info.execTime < 1.0f);
        }
    }
    CHECK(npuTypes == 6);
    CHECK(caps.whilePerformance.powerUsage == FLT_MAX);

    // The figures follow the device's energy parameters, not a constant: DRAM ten times as
    // costly raises powerUsage and leaves execTime alone.
    DeviceOptions costly;
    costly.energy.dramReadPicojoulesPerByte *= 10;
    costly.energy.dramWritePicojoulesPerByte *= 10;
    auto c = makeTestDevice(costly);
    const PerformanceInfo base = performanceFromCalibration(run);
    const PerformanceInfo more = performanceFromCalibration(run, costly.energy);
    CHECK(more.powerUsage > base.powerUsage);
    CHECK(more.execTime == base.execTime);
    for (const auto& entry : c.device->getCapabilities().operandPerformance) {
        if (entry.type == OperandType::TENSOR_QUANT8_ASYMM)
            CHECK(entry.info.powerUsage == doctest::Approx(more.powerUsage));
    }

    // A run without MACs or cycles gives no information.
    const PerformanceInfo none = performanceFromCalibration(CalibrationRun{});
    CHECK(none.powerUsage == FLT_MAX);
    CHECK(none.execTime == FLT_MAX);
}

TEST_CASE("driver_calibration_record_is_current") {
    // The record behind the capabilities must have been measured with this driver's compiler
    // and NPU geometry; after a change of either, rerun nncosim_calibrate (the message says how).
    for (const CalibrationRun* run :
         {&kQuant8Calibration, &kFloat32Calibration, &kRelaxedCalibration}) {
        const Status st = checkCalibration(*run);
        CHECK_MESSAGE(st.ok(), st.message);
    }
}

TEST_CASE("driver_calibration_stale_record_is_detected") {
    CalibrationRun newerCompiler = kQuant8Calibration;
    newerCompiler.target.compilerVersion += 1;
    CalibrationRun otherGeometry = kQuant8Calibration;
    otherGeometry.target.spadWords *= 2;
    for (const CalibrationRun& stale : {newerCompiler, otherGeometry}) {
        const Status st = checkCalibration(stale);
        CHECK(st.code == ErrorStatus::GENERAL_FAILURE);
        CHECK(st.message.find(compilerTargetText(stale.target)) != std::string::npos);
        CHECK(st.message.find(compilerTargetText(kCompilerTarget)) != std::string::npos);
        CHECK(st.message.find("nncosim_calibrate") != std::string::npos);
        // A device given the stale record reports no information rather than its figures.
        DeviceOptions options;
        options.calibration = options.floatCalibration = options.relaxedCalibration = stale;
        auto t = makeTestDevice(options);
        for (const auto& entry : t.device->getCapabilities().operandPerformance) {
            CAPTURE(nameOf(entry.type));
            CHECK(entry.info.execTime == FLT_MAX);
            CHECK(entry.info.powerUsage == FLT_MAX);
        }
    }
    // The current record gives figures.
    auto current = makeTestDevice();
    for (const auto& entry : current.device->getCapabilities().operandPerformance) {
        if (entry.type == OperandType::TENSOR_QUANT8_ASYMM ||
            entry.type == OperandType::TENSOR_FLOAT32)
            CHECK(entry.info.execTime < 1.0f);
    }
}
