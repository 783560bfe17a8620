// Faults are reported, never hung: invalid descriptors, DMA outside the job's window and the
// watchdog each stop the job with an error code, the faulting descriptor and an interrupt; the
// device then works again after a soft reset.
#include "sim/tests/NpuTestUtil.h"
#include "sim/tests/TestBench.h"

#include <doctest/doctest.h>

#include <array>
#include <vector>

namespace nncosim::sim::testing {
namespace {

using namespace npu;

constexpr uint64_t kTimeout = 2'000'000;

// A LUT copy of 100 bytes; returns whether the device produced it (it works).
bool deviceWorks(driver::HardwareAccess& hw) {
    DeviceArena arena(0x400000);
    std::array<uint8_t, 256> table{};
    for (int v = 0; v < 256; ++v) {
        table[v] = static_cast<uint8_t>(255 - v);
    }
    std::mt19937 rng(7);
    const std::vector<uint8_t> src = randomBytes(rng, 100);
    const uint32_t tableAddr = arena.alloc(256);
    const uint32_t srcAddr = arena.alloc(100);
    const uint32_t dstAddr = arena.alloc(100);
    if (!hw.writeMemory(tableAddr, table.data(), 256).ok() ||
        !hw.writeMemory(srcAddr, src.data(), src.size()).ok()) {
        return false;
    }
    ChainBuilder program;
    if (!program.lookup({srcAddr, 1, 1, 1, 100}, {dstAddr, 1, 1, 1, 100}, tableAddr).ok()) {
        return false;
    }
    const uint32_t queue = arena.alloc(128);
    const uint32_t record = arena.alloc(16);
    auto job = runJob(hw, program, {queue, record, 0x400000, arena.used() + 16}, 9, kTimeout);
    if (!job.ok() || !job->interrupted || job->errorCode != 0 ||
        job->irqStatus != field::kIrqStatusDone) {
        return false;
    }
    std::vector<uint8_t> got(100);
    if (!hw.readMemory(dstAddr, got.data(), got.size()).ok()) {
        return false;
    }
    for (size_t i = 0; i < got.size(); ++i) {
        if (got[i] != 255 - src[i]) {
            return false;
        }
    }
    return true;
}

void softReset(driver::HardwareAccess& hw) {
    hw.writeRegister(reg::kControl, field::kControlSoftReset);
    for (int i = 0; i < 1000 && hw.readRegister(reg::kStatus) != 0; ++i) {
        hw.advance(10);
    }
}

// Checks the error state a fault leaves, then that the device is usable after a soft reset.
void checkFaultAndRecover(driver::HardwareAccess& hw, const Result<JobResult>& job, ErrorCode code,
                          uint32_t desc, uint32_t recordAddr) {
    REQUIRE(job.ok());
    CHECK(job->interrupted);
    CHECK(job->irqStatus == field::kIrqStatusError);
    CHECK(job->errorCode == static_cast<uint32_t>(code));
    CHECK(job->errorDesc == desc);
    CHECK((hw.readRegister(reg::kStatus) & field::kStatusError) != 0);
    std::array<uint32_t, kCompletionWords> record{};
    REQUIRE(hw.readMemory(recordAddr, record.data(), sizeof(record)).ok());
    CHECK(record[completion::kStatusWord] == static_cast<uint32_t>(code));

    // Halted: a doorbell is ignored until the soft reset.
    hw.writeRegister(reg::kDoorbell, 5);
    hw.advance(1000);
    CHECK_FALSE(hw.interruptPending());
    CHECK(hw.readRegister(reg::kErrorCode) == static_cast<uint32_t>(code));

    softReset(hw);
    CHECK(hw.readRegister(reg::kStatus) == 0);
    CHECK(hw.readRegister(reg::kErrorCode) == 0);
    CHECK(hw.readRegister(reg::kIrqStatus) == 0);
    CHECK(deviceWorks(hw));
}

Descriptor nop() {
    Descriptor d;
    d.opcode = Opcode::NOP;
    return d;
}

TEST_CASE("sim_fault_bad_opcode") {
    driver::HardwareAccess& hw = *testBench().npu;
    ChainBuilder program;
    program.append(nop());
    Descriptor bad;
    bad.opcode = static_cast<Opcode>(99);
    program.append(bad);
    program.append(nop());
    auto job = runJob(hw, program, {0x10000, 0x11000, 0, 0x20000}, 1, kTimeout);
    checkFaultAndRecover(hw, job, ErrorCode::BAD_OPCODE, 1, 0x11000);
    CHECK(hw.readRegister(reg::kErrorAddr) == 0);  // cleared by the reset
}

TEST_CASE("sim_fault_bad_field") {
    driver::HardwareAccess& hw = *testBench().npu;
    // A convolution whose kernel is zero wide.
    ChainBuilder program;
    REQUIRE(program
                .conv({0x30000, 1, 4, 4, 8}, {0x31000, 1, 4, 4, 8}, 0x32000, true, 0,
                      ConvGeometry{}, OutputStage{})
                .ok());
    Descriptor d = program.descriptors()[0];
    d.kernelW = 0;
    ChainBuilder bad;
    bad.append(nop());
    bad.append(nop());
    bad.append(d);
    auto job = runJob(hw, bad, {0x10000, 0x11000, 0, 0x40000}, 1, kTimeout);
    checkFaultAndRecover(hw, job, ErrorCode::BAD_FIELD, 2, 0x11000);
}

TEST_CASE("sim_fault_bad_chain") {
    // Valid pair: a 2x2 depthwise tile kept on chip and the 1x1 convolution reading it.
    ChainBuilder pair;
    const DeviceTensor in{0x30000, 1, 4, 4, 8}, mid{0, 1, 4, 4, 8}, out{0x31000, 1, 4, 4, 8};
    // (4x4 output from a 4x4 input with one row and column of padding before.)
    ConvLayer dw{0x32000, true, 0, ConvGeometry{2, 2, 1, 1, 1, 1, 1, 1}, OutputStage{}};
    ConvLayer pw{0x33000, true, 0, ConvGeometry{}, OutputStage{}};
    REQUIRE(pair.depthwisePointwise(in, dw, mid, pw, out).ok());
    REQUIRE(pair.descriptors().size() == 2);
    const Descriptor producer = pair.descriptors()[0], consumer = pair.descriptors()[1];
    const uint32_t chainIn = static_cast<uint32_t>(DescFlag::CHAIN_IN);
    const uint32_t chainOut = static_cast<uint32_t>(DescFlag::CHAIN_OUT);

    struct BadChain {
        const char* what;
        std::vector<Descriptor> chain;
        uint32_t faulting;
    };
    Descriptor noReader = consumer;
    noReader.flags &= ~chainIn;
    Descriptor wideKernel = consumer;
    wideKernel.kernelW = 3;
    Descriptor otherShape = consumer;
    otherShape.a.count1 = 3;
    otherShape.out.count1 = 3;
    Descriptor chainedTwice = consumer;
    chainedTwice.flags |= chainOut;
    Descriptor poolProducer = producer;
    poolProducer.opcode = Opcode::MAXPOOL;
    poolProducer.flags = chainOut;
    const std::vector<BadChain> cases = {
        {"CHAIN_IN without a producer", {nop(), consumer}, 1},
        {"CHAIN_OUT followed by a plain descriptor", {producer, noReader}, 1},
        {"CHAIN_OUT followed by a NOP", {producer, nop(), consumer}, 1},
        {"CHAIN_IN with a 3-wide kernel", {producer, wideKernel}, 1},
        {"CHAIN_IN of another shape", {producer, otherShape}, 1},
        {"CHAIN_IN and CHAIN_OUT together", {producer, chainedTwice, consumer}, 1},
        {"CHAIN_OUT on pooling", {poolProducer, consumer}, 0},
        {"CHAIN_OUT on the last descriptor", {nop(), producer}, 1},
    };
    driver::HardwareAccess& hw = *testBench().npu;
    for (const BadChain& c : cases) {
        CAPTURE(c.what);
        ChainBuilder bad;
        for (const Descriptor& d : c.chain) {
            bad.append(d);
        }
        auto job = runJob(hw, bad, {0x10000, 0x11000, 0, 0x40000}, 1, kTimeout);
        checkFaultAndRecover(hw, job, ErrorCode::BAD_FIELD, c.faulting, 0x11000);
    }
}

TEST_CASE("sim_fault_dma_window") {
    driver::HardwareAccess& hw = *testBench().npu;
    SUBCASE("load outside the window") {
        ChainBuilder program;
        program.append(nop());
        REQUIRE(program.lookup({0x90000, 1, 1, 4, 40}, {0x21000, 1, 1, 4, 40}, 0x22000).ok());
        auto job = runJob(hw, program, {0x10000, 0x11000, 0x10000, 0x80000}, 1, kTimeout);
        REQUIRE(job.ok());
        CHECK(job->errorAddr >= 0x80000);
        checkFaultAndRecover(hw, job, ErrorCode::DMA_WINDOW, 1, 0x11000);
    }
    SUBCASE("store outside the window leaves memory untouched") {
        std::vector<uint8_t> guard(256, 0x3c);
        REQUIRE(hw.writeMemory(0x80000, guard.data(), guard.size()).ok());
        std::array<uint8_t, 256> table{};
        REQUIRE(hw.writeMemory(0x22000, table.data(), table.size()).ok());
        ChainBuilder program;
        REQUIRE(program.lookup({0x21000, 1, 1, 1, 64}, {0x80010, 1, 1, 1, 64}, 0x22000).ok());
        auto job = runJob(hw, program, {0x10000, 0x11000, 0x10000, 0x80000}, 1, kTimeout);
        REQUIRE(job.ok());
        CHECK(job->errorAddr == 0x80010);
        std::vector<uint8_t> after(guard.size());
        REQUIRE(hw.readMemory(0x80000, after.data(), after.size()).ok());
        CHECK(after == guard);
        checkFaultAndRecover(hw, job, ErrorCode::DMA_WINDOW, 0, 0x11000);
    }
    SUBCASE("descriptor chain outside the window") {
        ChainBuilder program;
        program.append(nop());
        auto job = runJob(hw, program, {0x10000, 0x21000, 0x20000, 0x30000}, 1, kTimeout);
        REQUIRE(job.ok());
        CHECK(job->errorAddr == 0x10000);
        checkFaultAndRecover(hw, job, ErrorCode::DMA_WINDOW, 0, 0x21000);
    }
}

TEST_CASE("sim_fault_watchdog") {
    driver::HardwareAccess& hw = *testBench().npu;
    // A real convolution that needs far more than 300 cycles without retiring.
    DeviceArena arena;
    const uint32_t in = arena.alloc(32 * 32 * 32);
    const uint32_t out = arena.alloc(32 * 32 * 32);
    const uint32_t weights = arena.alloc(convWeightStreamBytes(32, 3, 3, 32));
    ChainBuilder program;
    ConvGeometry g;
    g.kernelH = g.kernelW = 3;
    g.padTop = g.padLeft = 1;
    REQUIRE(
        program.conv({in, 1, 32, 32, 32}, {out, 1, 32, 32, 32}, weights, true, 0, g, OutputStage{})
            .ok());
    const uint32_t queue = arena.alloc(program.descriptors().size() * 128);
    const uint32_t record = arena.alloc(16);
    hw.writeRegister(reg::kWatchdogLimit, 300);
    auto job = runJob(hw, program, {queue, record, 0, arena.used() + 16}, 1, kTimeout);
    hw.writeRegister(reg::kWatchdogLimit, reset::kWatchdogLimit);
    REQUIRE(job.ok());
    CHECK(job->cycles < 2000);  // stopped by the watchdog, not by the test's timeout
    checkFaultAndRecover(hw, job, ErrorCode::WATCHDOG, 0, record);
}

TEST_CASE("sim_fault_bad_queue") {
    driver::HardwareAccess& hw = *testBench().npu;
    hw.writeRegister(reg::kQueueBase, 0x10004);
    hw.writeRegister(reg::kDoorbell, 3);
    REQUIRE(hw.waitForInterrupt(1000));
    CHECK(hw.readRegister(reg::kErrorCode) == static_cast<uint32_t>(ErrorCode::BAD_QUEUE));
    CHECK(hw.readRegister(reg::kIrqStatus) == field::kIrqStatusError);
    softReset(hw);
    CHECK(deviceWorks(hw));
}

}  // namespace
}  // namespace nncosim::sim::testing
