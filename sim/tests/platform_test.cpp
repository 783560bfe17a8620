// The SystemC platform and the command processor: registers, a chain of NOPs, completion
// record and interrupt.
#include "sim/tests/TestBench.h"

#include <doctest/doctest.h>

#include <array>
#include <vector>

#include "driver/NpuRegisters.h"

namespace nncosim::sim {
namespace {

using namespace npu;

TEST_CASE("sim_platform_registers") {
    driver::HardwareAccess& hw = *testing::testBench().npu;
    CHECK(hw.readRegister(reg::kId) == kNpuId);
    CHECK(hw.readRegister(reg::kVersion) == reset::kVersion);
    CHECK(hw.readRegister(reg::kConfigArray) == reset::kConfigArray);
    CHECK(hw.readRegister(reg::kIrqEnable) == reset::kIrqEnable);
    hw.writeRegister(reg::kQueueBase, 0x1230);
    CHECK(hw.readRegister(reg::kQueueBase) == 0x1230);
    hw.writeRegister(reg::kDmaWindowBase, 0x1237);
    CHECK(hw.readRegister(reg::kDmaWindowBase) == 0x1230);
    CHECK(hw.clockPeriodPs() == 1000);
    const uint64_t before = hw.cycleCount();
    hw.advance(100);
    CHECK(hw.cycleCount() == before + 100);
}

// Every bit of every read-write register holds 0 and 1 on its own (walking ones and zeros);
// the bits a register does not implement read as zero; read-only registers ignore writes.
TEST_CASE("sim_platform_register_bits") {
    driver::HardwareAccess& hw = *testing::testBench().npu;
    struct Rw {
        uint32_t offset, implemented, resetValue;
    };
    const Rw registers[] = {
        {reg::kQueueBase, 0xffffffffu, reset::kQueueBase},
        {reg::kCompletionAddr, 0xffffffffu, reset::kCompletionAddr},
        {reg::kIrqEnable, field::kIrqEnableDone | field::kIrqEnableError, reset::kIrqEnable},
        {reg::kDmaWindowBase, field::kDmaWindowBaseAddr, reset::kDmaWindowBase},
        {reg::kDmaWindowLimit, field::kDmaWindowLimitAddr, reset::kDmaWindowLimit},
        {reg::kWatchdogLimit, 0xffffffffu, reset::kWatchdogLimit}};
    for (const Rw& r : registers) {
        CAPTURE(r.offset);
        for (uint32_t bit = 0; bit < 32; ++bit) {
            const uint32_t one = 1u << bit;
            hw.writeRegister(r.offset, one);
            CHECK(hw.readRegister(r.offset) == (one & r.implemented));
            hw.writeRegister(r.offset, ~one);
            CHECK(hw.readRegister(r.offset) == (~one & r.implemented));
        }
        hw.writeRegister(r.offset, r.resetValue);
        CHECK(hw.readRegister(r.offset) == r.resetValue);
    }
    for (uint32_t offset : {reg::kId, reg::kVersion, reg::kConfigArray, reg::kStatus}) {
        const uint32_t before = hw.readRegister(offset);
        hw.writeRegister(offset, ~before);
        CHECK(hw.readRegister(offset) == before);
    }
}

TEST_CASE("sim_platform_memory") {
    driver::HardwareAccess& hw = *testing::testBench().npu;
    std::vector<uint8_t> data(1000);
    for (size_t i = 0; i < data.size(); ++i) {
        data[i] = static_cast<uint8_t>(i * 7);
    }
    REQUIRE(hw.writeMemory(12345, data.data(), data.size()).ok());
    std::vector<uint8_t> back(data.size());
    REQUIRE(hw.readMemory(12345, back.data(), back.size()).ok());
    CHECK(back == data);
    CHECK_FALSE(hw.writeMemory(hw.memorySize() - 10, data.data(), 11).ok());
    CHECK(hw.writeMemory(hw.memorySize() - 10, data.data(), 10).ok());
}

TEST_CASE("sim_platform_nop_chain") {
    driver::HardwareAccess& hw = *testing::testBench().npu;
    constexpr uint32_t kQueue = 0x10000;
    constexpr uint32_t kRecord = 0x20000;
    std::vector<uint32_t> chain;
    for (int i = 0; i < 5; ++i) {
        Descriptor d;
        d.opcode = Opcode::NOP;
        d.flags = i == 4 ? static_cast<uint32_t>(DescFlag::LAST) : 0;
        const DescriptorWords w = d.encode();
        chain.insert(chain.end(), w.begin(), w.end());
    }
    REQUIRE(hw.writeMemory(kQueue, chain.data(), chain.size() * 4).ok());
    hw.writeRegister(reg::kDmaWindowBase, 0);
    hw.writeRegister(reg::kDmaWindowLimit, 0x100000);
    hw.writeRegister(reg::kQueueBase, kQueue);
    hw.writeRegister(reg::kCompletionAddr, kRecord);
    hw.writeRegister(reg::kDoorbell, 77);
    CHECK((hw.readRegister(reg::kStatus) & field::kStatusBusy) != 0);
    REQUIRE(hw.waitForInterrupt(100000));
    CHECK(hw.readRegister(reg::kIrqStatus) == field::kIrqStatusDone);
    CHECK(hw.readRegister(reg::kDescDone) == 5);
    CHECK(hw.readRegister(reg::kStatus) == 0);
    std::array<uint32_t, kCompletionWords> record{};
    REQUIRE(hw.readMemory(kRecord, record.data(), sizeof(record)).ok());
    CHECK(record[completion::kTagWord] == 77);
    CHECK(record[completion::kStatusWord] == 0);
    CHECK(record[completion::kDescDoneWord] == 5);
    CHECK(record[completion::kCyclesWord] > 100);  // five fetches through a 100-cycle DRAM
    hw.writeRegister(reg::kIrqStatus, field::kIrqStatusDone);
    CHECK_FALSE(hw.interruptPending());
}

}  // namespace
}  // namespace nncosim::sim
