// Per-job and per-operation figures of the NPU, measured from outside the driver: a
// HardwareAccess that forwards everything to the platform and watches the jobs the driver
// launches (doorbell to interrupt), reading the performance counters around each and, when
// asked, sampling DESC_DONE during the job to attribute the counters to the operations whose
// descriptors (TAG = operation index) are in flight.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <vector>

#include "driver/EnergyModel.h"
#include "driver/HardwareAccess.h"

namespace nncosim {

/// What the NPU did during a job or an operation's share of it.
struct NpuCounters {
    uint64_t cycles = 0;  ///< device cycles
    uint64_t macs = 0;    ///< multiply-accumulates issued to the array
    uint64_t dmaBytesRead = 0;
    uint64_t dmaBytesWritten = 0;
    uint64_t arrayActiveCycles = 0;  ///< cycles an input vector entered the array
    /// Where the other cycles went (the PERF_STALL_* counters; a cycle may count in several).
    uint64_t stallInputCycles = 0;   ///< compute waited for an input tile load
    uint64_t stallWeightCycles = 0;  ///< the array waited for the weight stream
    uint64_t stallOutputCycles = 0;  ///< compute waited for the store path
    uint64_t stallFetchCycles = 0;   ///< busy with no decoded descriptor ready
    /// Scratchpad word accesses, from the descriptors (driver::scratchpadAccesses; the NPU has
    /// no counter for them): exact per descriptor, so an operation's share holds its own
    /// descriptors' (a fused pair's on the operation it counts as).
    uint64_t scratchpadReads = 0;
    uint64_t scratchpadWrites = 0;
    /// The binary32 MACs among `macs` (driver::floatMacs of the descriptors), summed the same way.
    uint64_t floatMacs = 0;

    void add(const NpuCounters& other);
    /// MACs over what the array could issue in `cycles` (rows x columns per cycle); 0 when no
    /// cycles.
    double utilization() const;
    /// DMA bytes over what a DRAM of `bytesPerCycle` (shared by reads and writes) could move in
    /// `cycles`: near 1, the operation is at its DRAM bound and more array utilization would
    /// need more memory bandwidth. 0 when no cycles.
    double dramUtilization(uint32_t bytesPerCycle) const;
    /// What the energy model reads.
    driver::EnergyCounters energyCounters() const;
    /// The energy model over these counters (driver::estimateEnergy, default parameters).
    driver::Energy energy(uint64_t clockPeriodPs) const;
};

/// One job, doorbell to interrupt; or the sum of several (an execution with IF or WHILE runs a
/// job per stretch), whose per-tag shares are then dropped: their tags index different programs.
struct NpuJobProfile {
    uint64_t startCycle = 0;  ///< device cycle of the (first) doorbell
    NpuCounters total;        ///< total.cycles: doorbell to interrupt, summed over the jobs
    uint32_t jobs = 1;
    bool completed = false;  ///< false: a job was aborted (reset before its interrupt)
    /// Shares of `total` per descriptor TAG (the operation index in the job's model): the
    /// counters accrued while the oldest unretired descriptor had that tag, measured at the
    /// sampling granularity. Empty when sampling was off. A descriptor with CHAIN_OUT overlaps
    /// the CHAIN_IN descriptor after it on the array, so the pair counts as the latter's tag.
    std::map<uint32_t, NpuCounters> byTag;
    // Performance counters are sampled; scratchpad accesses are summed over the descriptors
    // retired (total) and over each tag's descriptors (byTag), whether sampling was on or not.
    /// Fused operations (CHAIN_OUT descriptors tagged `first` chained into ones tagged
    /// `second`): their shares are in byTag[second]. Filled when sampling was on.
    std::map<uint32_t, uint32_t> fusedInto;
};

/// Not for concurrent executions: the profile of "the last job" is only meaningful when one
/// execution at a time runs on the device.
class NpuProfiler : public driver::HardwareAccess {
  public:
    explicit NpuProfiler(std::shared_ptr<driver::HardwareAccess> inner);

    /// Sample DESC_DONE every `cycles` device cycles during jobs (0: no per-operation shares).
    /// Sampling reads registers while the job runs, which costs host time but no device
    /// cycles: the job's cycle count is unchanged.
    void setSampleCycles(uint64_t cycles);

    /// The jobs that ended since the previous call, if any.
    std::optional<NpuJobProfile> takeJobs();

    /// The platform underneath.
    driver::HardwareAccess& inner() { return *mInner; }

    uint32_t readRegister(uint32_t offset) override;
    void writeRegister(uint32_t offset, uint32_t value) override;
    Status writeMemory(uint64_t address, const void* data, size_t size) override;
    Status readMemory(uint64_t address, void* data, size_t size) override;
    uint64_t memorySize() const override;
    bool waitForInterrupt(uint64_t timeoutCycles) override;
    bool interruptPending() override;
    void advance(uint64_t cycles) override;
    uint64_t cycleCount() override;
    uint64_t clockPeriodPs() const override;
    driver::PerformanceCounters performanceCounters() override;

  private:
    enum class JobState { kIdle, kRunning, kEnded };

    void startJob();
    void sample();
    void attribute(const driver::PerformanceCounters& now, uint64_t cycle);
    void finishJob(bool completed);

    const std::shared_ptr<driver::HardwareAccess> mInner;
    std::mutex mMutex;
    uint64_t mSampleCycles = 0;
    uint32_t mQueueBase = 0;
    std::optional<driver::PerformanceCounters> mIdleCounters;  // read since the last job
    JobState mState = JobState::kIdle;
    NpuJobProfile mJob;
    std::vector<uint32_t> mTags;  // TAG of each descriptor of the running job (when sampling)
    // Per descriptor of the running job: the tag it counts as, and what its geometry implies.
    struct DescriptorCounts {
        uint32_t tag = 0;
        driver::ScratchpadAccesses accesses;
        uint64_t floatMacs = 0;
    };
    std::vector<DescriptorCounts> mScratchpad;
    uint32_t mCurrentTag = 0;
    driver::PerformanceCounters mStartCounters;
    driver::PerformanceCounters mLastCounters;
    uint64_t mLastCycle = 0;
    uint64_t mEndCycle = 0;
    std::optional<NpuJobProfile> mFinished;
};

}  // namespace nncosim
