// A behavioral model of the NPU behind HardwareAccess, for driver tests: registers, DRAM,
// the DMA window, the watchdog, the completion record and the descriptor semantics of
// docs/registers.md (TAPS and CHAIN_OUT/CHAIN_IN included), computed functionally (one job
// completes at the first wait). It lets the driver's contract and compiler be tested where the
// Verilated platform is not linked; the same tests run on the RTL platform through
// sim::createSystemCPlatform.
#pragma once

#include <cstdint>
#include <map>
#include <mutex>
#include <optional>
#include <vector>

#include "driver/HardwareAccess.h"
#include "driver/NpuRegisters.h"

namespace nncosim::driver::testing {

class FakeNpu : public HardwareAccess {
  public:
    explicit FakeNpu(uint64_t dramBytes = 64ull << 20);

    uint32_t readRegister(uint32_t offset) override;
    void writeRegister(uint32_t offset, uint32_t value) override;
    Status writeMemory(uint64_t address, const void* data, size_t size) override;
    Status readMemory(uint64_t address, void* data, size_t size) override;
    uint64_t memorySize() const override { return mDram.size(); }
    bool waitForInterrupt(uint64_t timeoutCycles) override;
    bool interruptPending() override;
    void advance(uint64_t cycles) override;
    uint64_t cycleCount() override;
    uint64_t clockPeriodPs() const override { return 1000; }
    PerformanceCounters performanceCounters() override;

    /// Test hooks: the next job hangs (no descriptor retires) until the watchdog fires.
    void hangNextJob() { mHangNext = true; }
    /// Jobs run so far, and the DMA window of the last one.
    int jobs() const { return mJobs; }
    std::pair<uint32_t, uint32_t> lastWindow() const { return mLastWindow; }
    /// The first byte of input A of each job's first descriptor, in the order jobs ran.
    std::vector<uint8_t> firstInputBytes() const {
        std::lock_guard<std::mutex> lock(mMutex);
        return mFirstInputBytes;
    }
    /// Bytes of DRAM that are not zero (the driver clears what a job used).
    size_t nonZeroBytes() const;

  private:
    struct Fault {
        npu::ErrorCode code;
        uint32_t address;
    };
    void runJob();
    bool execute(const npu::Descriptor& d, Fault* fault);
    bool inWindow(uint64_t address, uint64_t size) const;
    bool load(const npu::TensorDesc& t, std::vector<std::vector<uint8_t>>* rows, Fault* fault);
    bool store(const npu::TensorDesc& t, const std::vector<std::vector<uint8_t>>& rows,
               Fault* fault);

    // The on-chip result of a CHAIN_OUT descriptor, for the CHAIN_IN descriptor after it.
    struct Chain {
        uint32_t inner = 0, count1 = 0, count2 = 0;
        std::vector<std::vector<uint8_t>> rows;
    };

    mutable std::mutex mMutex;
    std::optional<Chain> mChain;
    std::vector<uint8_t> mDram;
    std::map<uint32_t, uint32_t> mRegs;
    uint64_t mCycles = 0;
    uint64_t mBusyCycles = 0;
    uint64_t mMacs = 0;
    bool mJobPending = false;
    bool mHangNext = false;
    bool mHanging = false;
    uint64_t mHangStart = 0;
    int mJobs = 0;
    std::vector<uint8_t> mFirstInputBytes;
    std::pair<uint32_t, uint32_t> mLastWindow{0, 0};
};

}  // namespace nncosim::driver::testing
