// The functional model of the NPU: the driver's hardware-access interface implemented at
// descriptor level, in plain C++ (no SystemC, no Verilated RTL), in library nncosim_funcsim.
//
// It has the RTL's programming model: the registers of driver/NpuRegisters.h with their access
// rules (read-only, write-one-to-clear, masked window registers, PERF_*_LO latching the high
// words), the doorbell, the descriptor chain fetched from DRAM, the RTL's descriptor validation
// (BAD_OPCODE, BAD_FIELD with the same rules as rtl/npu_cmd.sv, CHAIN_OUT/CHAIN_IN pairing), the
// DMA window checked on every 16-byte beat (DMA_WINDOW with the faulting beat's address and
// descriptor), BAD_QUEUE, the completion record, the interrupt, soft reset and the counters it
// can know exactly: MACs, DMA bytes read and written (whole beats, descriptor fetches and the
// record included) and array-active cycles. Results are bit-exact with the RTL for every
// descriptor: its arithmetic is the RTL's (sim/FunctionalDatapath.h), including 9-bit operand
// wrap, int32 accumulator wrap, 6-bit shifts, the pooling divider and full (not only diagonal)
// depthwise weight blocks.
//
// Time: the model has no cycles of its own. Each descriptor takes the driver's cost-model
// estimate (driver/CostModel.h) and a job kJobOverheadCycles more, so DESC_DONE, the counters,
// BUSY and the interrupt advance through a job as device time passes in waitForInterrupt() and
// advance(), like the RTL's; cycle figures of this model are estimates, never measurements.
// Stall counters stay zero. A descriptor executes when device time reaches its start, so a long
// job costs wall time as its device time passes, and a deadline or soft reset stops it between
// descriptors; software sees results after the interrupt, as on the RTL.
//
// Differences from the RTL, by design: descriptors execute one after another (the RTL overlaps
// a descriptor's loads with the previous one's compute, so a chain that reads what an earlier
// descriptor writes without FENCE races on the RTL and not here); after a fault, what the
// aborted job wrote to DRAM and its DESC_DONE may differ (the RTL stops mid-descriptor; the
// model writes nothing of the faulting descriptor and validates one descriptor ahead, as the
// RTL's fetch does); the watchdog fires on an injected hang (hangNextJob) and on a descriptor
// whose estimated cycles reach WATCHDOG_LIMIT (which then never executes), not on the RTL's
// actual count.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <vector>

#include "driver/HardwareAccess.h"
#include "driver/NpuRegisters.h"
#include "sim/Platform.h"

namespace nncosim::sim {

struct FunctionalNpuConfig {
    uint64_t dramBytes = 256ull << 20;  ///< device DRAM size (the SystemC platform's default)
    uint64_t clockPeriodPs = 1000;      ///< 1 GHz
};

/// One DRAM row a descriptor wrote (a store row of its output tensor).
struct WrittenRow {
    uint32_t addr = 0;
    uint32_t size = 0;
    /// Window operations: the output pixel (oy * OUT.COUNT1 + ox) of the tile; element-wise
    /// and LUT: the row of OUT's 4-D walk (dimension 1 fastest).
    uint32_t row = 0;
    /// Window operations: the first output channel of the row (block x ArrayCols); else 0.
    uint32_t channel = 0;
};

/// What one descriptor did on the model.
struct DescriptorTrace {
    uint32_t index = 0;    ///< position in the chain
    uint32_t address = 0;  ///< DRAM address of the descriptor
    npu::Descriptor descriptor;
    /// NONE: it retired. Otherwise the job stopped while it ran: on its own loads, stream or
    /// stores, or on the fetch or validation of the descriptor after it (the RTL fetches one
    /// ahead); errorDesc names the descriptor, errorAddr the beat or descriptor address as
    /// ERROR_DESC and ERROR_ADDR do.
    npu::ErrorCode error = npu::ErrorCode::NONE;
    uint32_t errorDesc = 0;
    uint32_t errorAddr = 0;
    uint64_t estimatedCycles = 0;  ///< the cost model's cycles for it
    uint64_t macs = 0;
    uint64_t dmaBytesRead = 0;     ///< its fetch, loads and weight or table stream
    uint64_t dmaBytesWritten = 0;  ///< its stores
    uint64_t arrayActiveCycles = 0;
    /// The rows it stored, in store order (empty for CHAIN_OUT, NOP and faults). Filled only
    /// while recording (setRecordWrites).
    std::vector<WrittenRow> writes;
};

/// A job as the model ran it.
struct FunctionalJob {
    uint32_t tag = 0;
    uint32_t queueBase = 0, completionAddr = 0, windowBase = 0, windowLimit = 0;
    uint64_t doorbellCycle = 0;
    uint64_t endCycle = 0;  ///< estimated: doorbell + the descriptors' estimates + overhead
    npu::ErrorCode error = npu::ErrorCode::NONE;
    uint32_t errorDesc = 0, errorAddr = 0;
    uint32_t retired = 0;  ///< descriptors retired
    bool ended = false;
};

class FunctionalNpu : public driver::HardwareAccess {
  public:
    explicit FunctionalNpu(const FunctionalNpuConfig& config = {});
    ~FunctionalNpu() override;

    // driver::HardwareAccess. A register access takes one cycle, as on the platform.
    uint32_t readRegister(uint32_t offset) override;
    void writeRegister(uint32_t offset, uint32_t value) override;
    Status writeMemory(uint64_t address, const void* data, size_t size) override;
    Status readMemory(uint64_t address, void* data, size_t size) override;
    uint64_t memorySize() const override { return mDramBytes; }
    bool waitForInterrupt(uint64_t timeoutCycles) override;
    bool interruptPending() override;
    void advance(uint64_t cycles) override;
    uint64_t cycleCount() override;
    uint64_t clockPeriodPs() const override { return mClockPeriodPs; }
    driver::PerformanceCounters performanceCounters() override;

    /// Jobs started by a doorbell (BAD_QUEUE ones included) since the model was created.
    uint64_t jobCount() const;
    /// The last job started, if any.
    std::optional<FunctionalJob> lastJob() const;

    /// Called after each descriptor executes (retired or faulted), with the model's DRAM, from
    /// inside the model's calls: it must not call the model.
    using DescriptorObserver = std::function<void(const DescriptorTrace&, const uint8_t* dram)>;
    void setDescriptorObserver(DescriptorObserver observer);
    /// Fill DescriptorTrace::writes (costs memory on large tiles; off by default).
    void setRecordWrites(bool on);

    /// Fault injection for tests of the driver's recovery: the next job retires no descriptor
    /// and stops with WATCHDOG once WATCHDOG_LIMIT cycles (0: 2^32) have passed; each wait
    /// while it hangs also takes 3 ms of wall time, as simulating those cycles would.
    void hangNextJob();

    /// Injects `fault` (every FaultOptions kind exists here) in every job from the next doorbell
    /// on; kNone removes it.
    void setFault(const FaultOptions& fault);

    // Lockstep control (sim/Cosim.h). With stepping on, a doorbell starts a job but executes
    // nothing: step() executes descriptors one at a time and finishJob() ends the job. The
    // registers then change only through these calls, not with time.

    void setStepping(bool on);
    /// Whether a job started and has not ended.
    bool jobRunning() const;
    /// Stepping: executes the next descriptor of the running job and returns what it did;
    /// nullopt when no job runs. The job ends (record, registers, interrupt) after its LAST
    /// descriptor or a fault.
    std::optional<DescriptorTrace> step();
    /// Stepping: executes what is left of the running job and ends it now.
    void finishJob();
    /// Stepping: forgets the running job as if it had never started (no record, no interrupt;
    /// what its executed descriptors wrote stays in DRAM). For handing a job over to the RTL.
    void abandonJob();
    /// Index of the next descriptor step() executes (the count executed so far).
    uint32_t nextDescriptor() const;

    /// The model's DRAM, for comparisons made while no other call runs.
    const uint8_t* dram() const { return mDram.get(); }

  private:
    struct Job;
    struct Event;

    uint32_t readRegisterLocked(uint32_t offset);
    void doorbell(uint32_t tag);
    void softReset();
    void syncTo(uint64_t cycle);
    void applyEndOfJob();
    DescriptorTrace stepLocked();
    void runJobToEnd();
    uint64_t watchdogCycles() const;  // WATCHDOG_LIMIT, 0 meaning 2^32
    bool irqLine() const;

    const uint64_t mDramBytes;
    const uint64_t mClockPeriodPs;
    std::unique_ptr<uint8_t, void (*)(void*)> mDram;

    mutable std::mutex mMutex;
    uint64_t mCycle = 0;

    // Registers.
    uint32_t mQueueBase = 0, mCompletionAddr = 0, mWindowBase = 0, mWindowLimit = 0;
    uint32_t mWatchdogLimit = npu::reset::kWatchdogLimit;
    uint32_t mIrqStatus = 0, mIrqEnable = npu::reset::kIrqEnable;
    uint32_t mJobTag = 0, mDescDone = 0;
    uint32_t mErrorCode = 0, mErrorDesc = 0, mErrorAddr = 0;
    bool mBusy = false, mHalted = false;

    // Performance counters (PERF_* order) and the latched high words.
    static constexpr int kCounters = 9;
    uint64_t mPerf[kCounters] = {};
    uint32_t mPerfHigh[kCounters] = {};
    uint64_t mBusySince = 0;

    std::unique_ptr<Job> mJob;
    std::vector<Event> mEvents;  // of the running job, in cycle order
    size_t mNextEvent = 0;
    uint64_t mJobCount = 0;
    std::optional<FunctionalJob> mLastJob;

    bool mStepping = false;
    bool mRecordWrites = false;
    bool mHangNext = false;
    FaultOptions mFault;
    DescriptorObserver mObserver;
};

}  // namespace nncosim::sim
