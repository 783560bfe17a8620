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
