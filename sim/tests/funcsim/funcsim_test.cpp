// The functional model on its own (this executable links nncosim_funcsim, the driver and the
// golden: no SystemC, no Verilator): its registers, interrupt and error handling, its estimated
// timing, the lockstep stepping interface, and the driver running a model on it. Its results
// are checked against the RTL in sim_funcsim_matches_rtl_random_descriptors.
#include <doctest/doctest.h>

#include <array>
#include <cstring>
#include <limits>
#include <random>
#include <vector>

#include "driver/Callbacks.h"
#include "driver/ChainBuilder.h"
#include "driver/CostModel.h"
#include "driver/IPreparedModel.h"
#include "driver/NpuDevice.h"
#include "golden/Executor.h"
#include "model/Builder.h"
#include "sim/FunctionalDatapath.h"
#include "sim/FunctionalNpu.h"

namespace nncosim::sim {
namespace {

using namespace npu;

constexpr uint32_t kQueue = 0x10000, kRecord = 0x11000, kTable = 0x12000;
constexpr uint32_t kSrc = 0x13000, kDst = 0x14000;

/// A LUT copy (out = 255 - in) of `n` bytes as a ChainBuilder program, the table written.
ChainBuilder invertCopy(FunctionalNpu& npu, uint32_t n, int copies = 1) {
    std::array<uint8_t, 256> table{};
    for (int v = 0; v < 256; ++v) table[v] = static_cast<uint8_t>(255 - v);
    REQUIRE(npu.writeMemory(kTable, table.data(), table.size()).ok());
    std::vector<uint8_t> src(n);
    for (uint32_t i = 0; i < n; ++i) src[i] = static_cast<uint8_t>(i * 7);
    REQUIRE(npu.writeMemory(kSrc, src.data(), n).ok());
    ChainBuilder program;
    for (int c = 0; c < copies; ++c) {
        REQUIRE(program
                    .lookup({kSrc, 1, 1, 1, n},
                            {kDst + static_cast<uint32_t>(c) * 0x100, 1, 1, 1, n}, kTable)
                    .ok());
    }
    return program;
}

}  // namespace

TEST_CASE("funcsim_registers") {
    FunctionalNpu npu;
    CHECK(npu.readRegister(reg::kId) == kNpuId);
    CHECK(npu.readRegister(reg::kVersion) == reset::kVersion);
    CHECK(npu.readRegister(reg::kConfigArray) == reset::kConfigArray);
    CHECK(npu.readRegister(reg::kConfigSpad) == kSpadWords);
    CHECK(npu.readRegister(reg::kConfigAcc) == kAccDepth);
    CHECK(npu.readRegister(reg::kIrqEnable) == reset::kIrqEnable);
    CHECK(npu.readRegister(reg::kWatchdogLimit) == reset::kWatchdogLimit);
    // Window registers keep bits 31:4; read-only registers ignore writes.
    npu.writeRegister(reg::kDmaWindowBase, 0x1234567f);
    CHECK(npu.readRegister(reg::kDmaWindowBase) == 0x12345670);
    npu.writeRegister(reg::kId, 0);
    CHECK(npu.readRegister(reg::kId) == kNpuId);
    CHECK(npu.readRegister(0x3fc) == 0);
    // A register access takes one cycle.
    const uint64_t before = npu.cycleCount();
    npu.readRegister(reg::kStatus);
    CHECK(npu.cycleCount() == before + 1);

    // BAD_QUEUE: misaligned queue, error interrupt at once, doorbells ignored until soft reset.
    npu.writeRegister(reg::kQueueBase, kQueue + 4);
    npu.writeRegister(reg::kCompletionAddr, kRecord);
    npu.writeRegister(reg::kDoorbell, 77);
    CHECK(npu.interruptPending());
    CHECK(npu.readRegister(reg::kErrorCode) == static_cast<uint32_t>(ErrorCode::BAD_QUEUE));
    CHECK(npu.readRegister(reg::kErrorAddr) == kQueue + 4);
    CHECK(npu.readRegister(reg::kStatus) == field::kStatusError);
    CHECK(npu.readRegister(reg::kJobTag) == 77);
    npu.writeRegister(reg::kQueueBase, kQueue);
    npu.writeRegister(reg::kDoorbell, 78);
    CHECK(npu.readRegister(reg::kJobTag) == 77);  // ignored
    // IRQ_STATUS is write-one-to-clear; IRQ_ENABLE masks the line.
    npu.writeRegister(reg::kIrqEnable, 0);
    CHECK_FALSE(npu.interruptPending());
    npu.writeRegister(reg::kIrqEnable, field::kIrqEnableDone | field::kIrqEnableError);
    CHECK(npu.interruptPending());
    npu.writeRegister(reg::kControl, field::kControlSoftReset);
    CHECK(npu.readRegister(reg::kStatus) == 0);
    CHECK(npu.readRegister(reg::kErrorCode) == 0);
    CHECK(npu.readRegister(reg::kIrqStatus) == 0);
    CHECK(npu.jobCount() == 1);
}

TEST_CASE("funcsim_job_timing_and_counters") {
    FunctionalNpu npu;
    const uint32_t n = 100;
    const ChainBuilder program = invertCopy(npu, n, 3);
    uint64_t estimate = driver::kJobOverheadCycles;
    for (const Descriptor& d : program.descriptors())
        estimate += driver::estimateDescriptorCycles(d);
    auto job = runJob(npu, program, {kQueue, kRecord, 0, 0x100000}, 5, 1'000'000);
    REQUIRE(job.ok());
    CHECK(job->interrupted);
    CHECK(job->errorCode == 0);
    CHECK(job->descDone == 3);
    // The job takes the cost model's estimate, reported as its cycles.
    uint32_t record[kCompletionWords];
    REQUIRE(npu.readMemory(kRecord, record, sizeof(record)).ok());
    CHECK(record[completion::kTagWord] == 5);
    CHECK(record[completion::kDescDoneWord] == 3);
    CHECK(record[completion::kCyclesWord] == estimate);
    CHECK(job->cycles >= estimate);
    std::vector<uint8_t> out(n);
    REQUIRE(npu.readMemory(kDst + 0x200, out.data(), n).ok());
    for (uint32_t i = 0; i < n; ++i) CHECK(out[i] == static_cast<uint8_t>(255 - i * 7));
    // Counters: three fetches, loads of the row's beats and the tables' beats; stores of the
    // row's beats and the record's.
    const uint32_t rowBeats = (n + kDramBusBytes - 1) / kDramBusBytes;
    const auto c = npu.performanceCounters();
    CHECK(c.dmaBytesRead ==
          3 * (kDescriptorWords * 4 + (rowBeats + 256 / kDramBusBytes) * kDramBusBytes));
    const uint32_t recordBeats = (kCompletionWords * 4 + kDramBusBytes - 1) / kDramBusBytes;
    CHECK(c.dmaBytesWritten == (3 * rowBeats + recordBeats) * kDramBusBytes);
    CHECK(c.macs == 0);
    CHECK(c.busyCycles == estimate);
    // PERF_*_LO latches the high word.
    CHECK(npu.readRegister(reg::kPerfDmaRdLo) == c.dmaBytesRead);
    CHECK(npu.readRegister(reg::kPerfDmaRdHi) == 0);

    // While the job runs, DESC_DONE and BUSY follow the estimates; a short wait times out.
    npu.writeRegister(reg::kDoorbell, 6);
    CHECK(npu.readRegister(reg::kStatus) == field::kStatusBusy);
    CHECK(npu.readRegister(reg::kDescDone) == 0);
    const uint64_t start = npu.cycleCount();
    CHECK_FALSE(npu.waitForInterrupt(10));
    CHECK(npu.cycleCount() == start + 10);
    CHECK(npu.waitForInterrupt(1'000'000));
    CHECK(npu.readRegister(reg::kDescDone) == 3);
}

TEST_CASE("funcsim_executes_descriptors_as_time_passes") {
    FunctionalNpu npu;
    const uint32_t n = 100;
    const ChainBuilder program = invertCopy(npu, n, 3);
    const uint64_t first =
        driver::kJobOverheadCycles / 2 + driver::estimateDescriptorCycles(program.descriptors()[0]);
    // Waiting until just after the first descriptor retires executes it and nothing later.
    auto job = runJob(npu, program, {kQueue, kRecord, 0, 0x100000}, 1, first + 1);
    REQUIRE(job.ok());
    CHECK_FALSE(job->interrupted);
    CHECK(job->descDone == 1);
    std::vector<uint8_t> out(n);
    REQUIRE(npu.readMemory(kDst, out.data(), n).ok());
    CHECK(out[1] == static_cast<uint8_t>(255 - 7));
    REQUIRE(npu.readMemory(kDst + 0x200, out.data(), n).ok());
    CHECK(out[1] == 0);
    // A soft reset now (a missed deadline) leaves the rest of the job undone.
    npu.writeRegister(reg::kControl, field::kControlSoftReset);
    CHECK_FALSE(npu.waitForInterrupt(1'000'000));
    REQUIRE(npu.readMemory(kDst + 0x200, out.data(), n).ok());
    CHECK(out[1] == 0);

    // A descriptor estimated at WATCHDOG_LIMIT cycles or more ends the job with WATCHDOG, as
    // the RTL would, without executing.
    npu.writeRegister(reg::kWatchdogLimit, 40);
    job = runJob(npu, program, {kQueue, kRecord, 0, 0x100000}, 2, 1'000'000);
    npu.writeRegister(reg::kWatchdogLimit, reset::kWatchdogLimit);
    REQUIRE(job.ok());
    CHECK(job->errorCode == static_cast<uint32_t>(ErrorCode::WATCHDOG));
    CHECK(job->errorDesc == 0);
    CHECK(job->descDone == 0);
    CHECK(job->cycles < 40 + driver::kJobOverheadCycles + 10);
    REQUIRE(npu.readMemory(kDst, out.data(), n).ok());
    CHECK(out[1] == static_cast<uint8_t>(255 - 7));  // from the first job only
    npu.writeRegister(reg::kControl, field::kControlSoftReset);
}

TEST_CASE("funcsim_float_elementwise") {
    FunctionalNpu npu;
    constexpr float kInf = std::numeric_limits<float>::infinity();
    constexpr float kMax = std::numeric_limits<float>::max();
    constexpr float kTiny = std::numeric_limits<float>::denorm_min();
    const float nan = std::numeric_limits<float>::quiet_NaN();
    const std::vector<float> a = {1.5f, -2.0f, 3e38f, -0.0f, kInf, kInf, kTiny, 3.0f};
    const std::vector<float> b = {2.25f, 0.5f, 3e38f, -0.0f, -kInf, 1.0f, kTiny, nan};
    REQUIRE(npu.writeMemory(kSrc, a.data(), 32).ok());
    REQUIRE(npu.writeMemory(kSrc + 0x100, b.data(), 32).ok());
    const std::array<uint32_t, 4> shape{1, 1, 2, 4};  // two rows of four
    const StridedTensor in0{kSrc, ChainBuilder::denseStrides(shape)};
    const StridedTensor in1{kSrc + 0x100, ChainBuilder::denseStrides(shape)};
    const auto run = [&](Opcode opcode, bool negateB, float lo, float hi) {
        Descriptor d;
        d.opcode = opcode;
        d.format = static_cast<uint32_t>(Format::FP32);
        d.negateB = negateB;
        std::memcpy(&d.fpMin, &lo, 4);
        std::memcpy(&d.fpMax, &hi, 4);
        ChainBuilder program;
        REQUIRE(program.stream(d, in0, in1, {kDst, ChainBuilder::denseStrides(shape)}, shape).ok());
        auto job = runJob(npu, program, {kQueue, kRecord, 0, 0x100000}, 1, 1'000'000);
        REQUIRE(job.ok());
        REQUIRE(job->errorCode == 0);
        std::vector<uint32_t> out(8);
        REQUIRE(npu.readMemory(kDst, out.data(), 32).ok());
        return out;
    };
    const auto bits = [](float f) {
        uint32_t u;
        std::memcpy(&u, &f, 4);
        return u;
    };
    // ADD, no activation: overflow and infinities end at the largest float; one NaN, canonical.
    auto out = run(Opcode::ADD, false, -kMax, kMax);
    CHECK(out == std::vector<uint32_t>{bits(3.75f), bits(-1.5f), bits(kMax), bits(-0.0f),
                                       datapath::kFp32QNaN, bits(kMax), bits(2 * kTiny),
                                       datapath::kFp32QNaN});
    // SUB (B negated).
    out = run(Opcode::ADD, true, -kMax, kMax);
    CHECK(out == std::vector<uint32_t>{bits(-0.75f), bits(-2.5f), bits(0.0f), bits(0.0f),
                                       bits(kMax), bits(kMax), bits(0.0f), datapath::kFp32QNaN});
    // MUL with RELU6.
    out = run(Opcode::MUL, false, 0.0f, 6.0f);
    CHECK(out == std::vector<uint32_t>{bits(3.375f), bits(0.0f), bits(6.0f), bits(0.0f), bits(0.0f),
                                       bits(6.0f), bits(0.0f), datapath::kFp32QNaN});

    // FP16: widened, added in binary32, rounded to nearest even on store (ties to even).
    const std::vector<uint16_t> h0 = {0x3c00, 0x3c00, 0x7bff, 0x0001};  // 1, 1, 65504, 2^-24
    const std::vector<uint16_t> h1 = {0x1000, 0x1600, 0x7bff, 0x0001};  // 2^-11, 3 * 2^-11
    REQUIRE(npu.writeMemory(kSrc, h0.data(), 8).ok());
    REQUIRE(npu.writeMemory(kSrc + 0x100, h1.data(), 8).ok());
    Descriptor d;
    d.opcode = Opcode::ADD;
    d.format = static_cast<uint32_t>(Format::FP16);
    const float lo = -kMax, hi = kMax;
    std::memcpy(&d.fpMin, &lo, 4);
    std::memcpy(&d.fpMax, &hi, 4);
    const std::array<uint32_t, 4> four{1, 1, 1, 4};
    ChainBuilder program;
    REQUIRE(program
                .stream(d, {kSrc, ChainBuilder::denseStrides(four)},
                        StridedTensor{kSrc + 0x100, ChainBuilder::denseStrides(four)},
                        {kDst, ChainBuilder::denseStrides(four)}, four)
                .ok());
    auto job = runJob(npu, program, {kQueue, kRecord, 0, 0x100000}, 2, 1'000'000);
    REQUIRE(job.ok());
    std::vector<uint16_t> half(4);
    REQUIRE(npu.readMemory(kDst, half.data(), 8).ok());
    CHECK(half == std::vector<uint16_t>{0x3c00, 0x3c02, 0x7c00, 0x0002});

    // A float format on a part element is BAD_FIELD.
    d.a.inner = d.b.inner = d.out.inner = 3;
    d.a.count1 = d.b.count1 = d.out.count1 = d.a.count2 = d.b.count2 = d.out.count2 = 1;
    d.a.count3 = d.b.count3 = d.out.count3 = 1;
    d.a.addr = kSrc, d.b.addr = kSrc + 0x100, d.out.addr = kDst;
    ChainBuilder bad;
    bad.append(d);
    job = runJob(npu, bad, {kQueue, kRecord, 0, 0x100000}, 3, 1'000'000);
    REQUIRE(job.ok());
    CHECK(job->errorCode == static_cast<uint32_t>(ErrorCode::BAD_FIELD));
    npu.writeRegister(reg::kControl, field::kControlSoftReset);
}

TEST_CASE("funcsim_float_pooling") {
    FunctionalNpu npu;
    // One binary32 channel, 2 x 2 pixels: 1, 2 / 4, -8 (a DeviceTensor's c counts bytes).
    const std::vector<float> in = {1.0f, 2.0f, 4.0f, -8.0f};
    REQUIRE(npu.writeMemory(kSrc, in.data(), 16).ok());
    const auto pool = [&](bool average, const ConvGeometry& g, uint32_t outSide, float lo,
                          float hi) {
        OutputStage stage;
        stage.format = static_cast<uint32_t>(Format::FP32);
        std::memcpy(&stage.fpMin, &lo, 4);
        std::memcpy(&stage.fpMax, &hi, 4);
        ChainBuilder program;
        REQUIRE(program
                    .pool(average ? npu::Pooling::AVERAGE : npu::Pooling::MAX, {kSrc, 1, 2, 2, 4},
                          {kDst, 1, outSide, outSide, 4}, g, stage)
                    .ok());
        auto job = runJob(npu, program, {kQueue, kRecord, 0, 0x100000}, 1, 1'000'000);
        REQUIRE(job.ok());
        REQUIRE(job->errorCode == 0);
        std::vector<float> out(outSide * outSide);
        REQUIRE(npu.readMemory(kDst, out.data(), out.size() * 4).ok());
        return out;
    };
    const float kMax = std::numeric_limits<float>::max();
    const ConvGeometry whole{2, 2, 1, 1, 1, 1, 0, 0};
    CHECK(pool(true, whole, 1, -kMax, kMax) == std::vector<float>{-0.25f});
    CHECK(pool(false, whole, 1, -kMax, kMax) == std::vector<float>{4.0f});
    CHECK(pool(true, whole, 1, 0.0f, 6.0f) == std::vector<float>{0.0f});  // RELU6
    // 3 x 3 windows with one pixel of padding: every output averages the four valid pixels
    // only; a 2 x 2 window at stride 1 averages 2 or 1 of them at the edges.
    CHECK(pool(true, {3, 3, 1, 1, 1, 1, 1, 1}, 2, -kMax, kMax) == std::vector<float>(4, -0.25f));
    CHECK(pool(true, {2, 2, 1, 1, 1, 1, 1, 1}, 2, -kMax, kMax) ==
          std::vector<float>{1.0f, 1.5f, 2.5f, -0.25f});
}

TEST_CASE("funcsim_faults") {
    FunctionalNpu npu;
    ChainBuilder program = invertCopy(npu, 64, 2);
    // The second descriptor stores outside the window: the first retires, ERROR_ADDR is the
    // faulting beat.
    ChainBuilder bad;
    bad.append(program.descriptors()[0]);
    Descriptor d = program.descriptors()[1];
    d.out.addr = 0x200008;
    bad.append(d);
    auto job = runJob(npu, bad, {kQueue, kRecord, 0, 0x100000}, 1, 1'000'000);
    REQUIRE(job.ok());
    CHECK(job->irqStatus == field::kIrqStatusError);
    CHECK(job->errorCode == static_cast<uint32_t>(ErrorCode::DMA_WINDOW));
    CHECK(job->errorDesc == 1);
    CHECK(job->errorAddr == 0x200008 / kDramBusBytes * kDramBusBytes);
    uint32_t record[kCompletionWords];
    REQUIRE(npu.readMemory(kRecord, record, sizeof(record)).ok());
    CHECK(record[completion::kStatusWord] == static_cast<uint32_t>(ErrorCode::DMA_WINDOW));
    npu.writeRegister(reg::kControl, field::kControlSoftReset);

    // A bad field in the second descriptor stops the job before the first computes (the RTL
    // validates one descriptor ahead).
    d = program.descriptors()[1];
    d.kernelW = 0;
    d.opcode = Opcode::CONV;
    ChainBuilder badField;
    badField.append(program.descriptors()[0]);
    badField.append(d);
    job = runJob(npu, badField, {kQueue, kRecord, 0, 0x100000}, 2, 1'000'000);
    REQUIRE(job.ok());
    CHECK(job->errorCode == static_cast<uint32_t>(ErrorCode::BAD_FIELD));
    CHECK(job->errorDesc == 1);
    CHECK(job->errorAddr == kQueue + kDescriptorWords * 4);
    CHECK(job->descDone == 0);
    npu.writeRegister(reg::kControl, field::kControlSoftReset);

    // An injected hang ends with WATCHDOG after WATCHDOG_LIMIT cycles.
    npu.writeRegister(reg::kWatchdogLimit, 5000);
    npu.hangNextJob();
    job = runJob(npu, program, {kQueue, kRecord, 0, 0x100000}, 3, 1'000'000);
    REQUIRE(job.ok());
    CHECK(job->errorCode == static_cast<uint32_t>(ErrorCode::WATCHDOG));
    CHECK(job->cycles >= 5000);
    CHECK(job->cycles < 6000);
}

TEST_CASE("funcsim_stepping") {
    FunctionalNpu npu;
    const ChainBuilder program = invertCopy(npu, 40, 3);
    npu.setStepping(true);
    npu.setRecordWrites(true);
    std::vector<uint32_t> observed;
    npu.setDescriptorObserver(
        [&observed](const DescriptorTrace& t, const uint8_t*) { observed.push_back(t.index); });
    // runJob would wait for the interrupt: write the chain and ring by hand.
    std::vector<uint32_t> words;
    for (size_t i = 0; i < program.descriptors().size(); ++i) {
        Descriptor d = program.descriptors()[i];
        if (i + 1 == program.descriptors().size()) d.flags |= static_cast<uint32_t>(DescFlag::LAST);
        const auto w = d.encode();
        words.insert(words.end(), w.begin(), w.end());
    }
    REQUIRE(npu.writeMemory(kQueue, words.data(), words.size() * 4).ok());
    npu.writeRegister(reg::kDmaWindowBase, 0);
    npu.writeRegister(reg::kDmaWindowLimit, 0x100000);
    npu.writeRegister(reg::kQueueBase, kQueue);
    npu.writeRegister(reg::kCompletionAddr, kRecord);
    npu.writeRegister(reg::kDoorbell, 9);
    CHECK(npu.jobRunning());
    CHECK(npu.readRegister(reg::kDescDone) == 0);
    auto first = npu.step();
    REQUIRE(first.has_value());
    CHECK(first->index == 0);
    CHECK(first->error == ErrorCode::NONE);
    REQUIRE(first->writes.size() == 1);
    CHECK(first->writes[0].addr == kDst);
    CHECK(first->writes[0].size == 40);
    CHECK(npu.readRegister(reg::kDescDone) == 1);
    CHECK(npu.nextDescriptor() == 1);
    CHECK_FALSE(npu.interruptPending());
    npu.finishJob();
    CHECK_FALSE(npu.jobRunning());
    CHECK(npu.interruptPending());
    CHECK(npu.readRegister(reg::kDescDone) == 3);
    CHECK(observed == std::vector<uint32_t>{0, 1, 2});
    // abandonJob forgets a job without an interrupt.
    npu.writeRegister(reg::kIrqStatus, field::kIrqStatusDone);
    npu.writeRegister(reg::kDoorbell, 10);
    REQUIRE(npu.step().has_value());
    npu.abandonJob();
    CHECK_FALSE(npu.jobRunning());
    CHECK_FALSE(npu.interruptPending());
    CHECK(npu.readRegister(reg::kStatus) == 0);
}

TEST_CASE("funcsim_driver_runs_a_model_without_systemc") {
    // A 3x3 uint8 convolution with RELU, prepared and executed through the driver.
    ModelBuilder b;
    const uint32_t in = b.addInput(OperandType::TENSOR_QUANT8_ASYMM, {1, 9, 7, 20}, 0.5f, 10);
    std::vector<uint8_t> weights(24 * 3 * 3 * 20);
    for (size_t i = 0; i < weights.size(); ++i)
        weights[i] = static_cast<uint8_t>((i * 37 + 11) % 256);
    const uint32_t filter =
        b.addConstant(OperandType::TENSOR_QUANT8_ASYMM, {24, 3, 3, 20}, weights, 0.25f, 5);
    std::vector<int32_t> biasValues(24);
    for (int i = 0; i < 24; ++i) biasValues[i] = (i * 917) % 2000 - 1000;
    const uint32_t bias = b.addConstant(OperandType::TENSOR_INT32, {24}, biasValues, 0.125f, 0);
    std::vector<uint32_t> inputs{in, filter, bias};
    for (int32_t v : {1, 1, 1, 1, 1, 1}) inputs.push_back(b.addInt32(v));
    inputs.push_back(b.addInt32(1));
    const uint32_t out = b.addOutput(OperandType::TENSOR_QUANT8_ASYMM, {1, 9, 7, 24}, 8.0f, 3);
    b.addOperation(OperationType::CONV_2D, inputs, {out});
    const Model model = b.build();

    auto npu = std::make_shared<FunctionalNpu>();
    auto device = driver::makeNpuDevice(npu);
    REQUIRE(device.ok());
    auto prepared = driver::prepareModelBlocking(**device, model);
    REQUIRE_MESSAGE(prepared.ok(), prepared.status().message);
    TensorData input{{1, 9, 7, 20}, std::vector<uint8_t>(9 * 7 * 20)};
    for (size_t i = 0; i < input.bytes.size(); ++i)
        input.bytes[i] = static_cast<uint8_t>(i * 29 + 3);
    auto pool = Memory::create(input.bytes.size() + 9 * 7 * 24);
    REQUIRE(pool.ok());
    std::memcpy((*pool)->data(), input.bytes.data(), input.bytes.size());
    Request request;
    request.pools.push_back(*pool);
    Request::Argument a;
    a.location.poolIndex = 0;
    a.location.length = static_cast<uint32_t>(input.bytes.size());
    request.inputs.push_back(a);
    a.location.offset = a.location.length;
    a.location.length = 9 * 7 * 24;
    request.outputs.push_back(a);
    auto result = (*prepared)->execute(request, MeasureTiming::YES, {}, {});
    REQUIRE_MESSAGE(result.ok(), result.status.message);
    auto golden = golden::execute(model, {input});
    REQUIRE(golden.ok());
    const uint8_t* device_out = (*pool)->data() + input.bytes.size();
    CHECK(std::vector<uint8_t>(device_out, device_out + 9 * 7 * 24) == (*golden)[0].bytes);
    CHECK(npu.get()->performanceCounters().macs == uint64_t{9} * 7 * 24 * 3 * 3 * 20);
}

}  // namespace nncosim::sim

namespace nncosim::sim {

TEST_CASE("funcsim_kernels_agree") {
    // The AVX2 kernels (when the CPU has them) and the portable ones, on random operands over
    // the fields' whole ranges.
    std::mt19937 rng(11);
    constexpr size_t kRows = 37, kK = 46, kCols = npu::kArrayCols;
    std::vector<int16_t> a(kRows * kK), w(kK * kCols), packed(kK * kCols);
    for (auto& v : a) v = static_cast<int16_t>(static_cast<int>(rng() % 512) - 256);
    for (auto& v : w) v = static_cast<int16_t>(static_cast<int>(rng() % 512) - 256);
    datapath::packPairs(w.data(), kK, packed.data());
    datapath::LaneQuant q;
    for (size_t l = 0; l < 64; ++l) {
        q.bias[l] = static_cast<uint32_t>(rng());
        q.multiplier[l] = l % 7 == 0 ? INT32_MIN : static_cast<int32_t>(rng());
        const datapath::SplitShift shift = datapath::splitShift(static_cast<uint32_t>(rng() % 64));
        q.left[l] = shift.left;
        q.right[l] = shift.right;
    }
    std::vector<int32_t> fast(kRows * kCols), portable(kRows * kCols);
    std::vector<uint8_t> fastOut(kRows * 20), portableOut(kRows * 20);
    for (int round = 0; round < 2; ++round) {
        auto& acc = round == 0 ? fast : portable;
        auto& out = round == 0 ? fastOut : portableOut;
        datapath::setPortableKernels(round == 1);
        datapath::gemm(a.data(), kRows, kK, kK, packed.data(), acc.data());
        acc[5] = INT32_MIN;  // any bias: extremes through the shifts and the saturation
        datapath::requantizeRows(acc.data(), kRows, kCols, q, -17, -200, 180, out.data(), 20);
    }
    datapath::setPortableKernels(false);
    CHECK(fast == portable);
    CHECK(fastOut == portableOut);
    // The portable GEMM against a plain triple loop.
    for (size_t r = 0; r < kRows; ++r) {
        for (size_t c = 0; c < kCols; ++c) {
            uint32_t sum = 0;
            for (size_t k = 0; k < kK; ++k)
                sum += static_cast<uint32_t>(a[r * kK + k] * w[k * kCols + c]);
            if (r * kCols + c != 5) CHECK(static_cast<int32_t>(sum) == portable[r * kCols + c]);
        }
    }
    const std::string kernels = datapath::usingAvx2() ? "AVX2 kernels used" : "no AVX2 kernels";
    MESSAGE(kernels);
}

}  // namespace nncosim::sim
