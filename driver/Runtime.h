// The runtime: runs compiled programs on the NPU through sim/'s hardware-access interface —
// stages a job's arena in device DRAM, confines the job's DMA to it, rings the doorbell, waits
// for the interrupt, reads the outputs back and clears the memory; soft-resets on a fault.
#pragma once

#include <memory>
#include <vector>

#include "driver/HardwareAccess.h"
#include "driver/Program.h"
#include "model/Model.h"

namespace nncosim::driver {

/// Where a job lives in device DRAM.
struct JobLayout {
    uint32_t queueAddr = 0;       ///< descriptors (16-byte aligned)
    uint32_t completionAddr = 0;  ///< completion record (16-byte aligned)
    uint32_t windowBase = 0;      ///< DMA window of the job
    uint32_t windowLimit = 0;
};

/// The one way a job starts: programs the DMA window, queue and completion registers and rings
/// the doorbell with `tag` (the chain must be in device memory already). Returns the cycle
/// count at the doorbell.
uint64_t startJob(HardwareAccess& hw, const JobLayout& layout, uint32_t tag);

/// The end of a job as the device reports it in its registers.
struct JobEnd {
    uint32_t irqStatus = 0;
    uint32_t errorCode = 0;  ///< npu::ErrorCode
    uint32_t errorDesc = 0;
    uint32_t errorAddr = 0;
    uint32_t descDone = 0;
};
JobEnd readJobEnd(HardwareAccess& hw);

struct JobOutcome {
    Status status;
    std::vector<TensorData> outputs;  ///< one per program output, on success
    uint64_t cycles = 0;              ///< device cycles from doorbell to interrupt
    /// Host wall time spent letting the device run those cycles (waiting for its interrupt):
    /// what a simulated device costs the host, which is not the driver's own time.
    Duration hostTimeOnDevice{0};
};

/// Not thread-safe: the device queue calls it from its worker thread only.
class Runtime {
  public:
    explicit Runtime(std::shared_ptr<HardwareAccess> hardware);

    /// Checks the device identity and geometry against the header the driver was built with
    /// and resets it. Must succeed before run().
    Status initialize();

    /// Runs `program` on `inputs` (one per program input, bytes of the program's shape). Fails
    /// with GENERAL_FAILURE on a device error (the device is soft-reset and stays usable) and
    /// with MISSED_DEADLINE_TRANSIENT when `deadline` passes first (the job is aborted).
    JobOutcome run(const Program& program, const std::vector<TensorData>& inputs,
                   const OptionalTimePoint& deadline);

    /// The most bytes one job's arena may take on this device.
    uint64_t arenaCapacity() const;

    /// Nanoseconds of `cycles` device cycles.
    Duration deviceTime(uint64_t cycles) const;

    /// Device DRAM address where every job's arena starts; below it nothing is ever mapped for
    /// a job, so a stray zero address faults.
    static constexpr uint64_t kArenaBase = 0x10000;

  private:
    Status softReset();
    Status clearArena(uint32_t size);

    std::shared_ptr<HardwareAccess> mHardware;
    uint32_t mJobTag = 0;
};

}  // namespace nncosim::driver
