// The hardware-access interface: the only way software (the driver, tests, benchmarks) touches
// the NPU. The driver owns it and compiles against it alone; sim/ implements it (the SystemC
// platform around the RTL, sim/Platform.h), as silicon behind a kernel driver would.
//
// The register map and descriptor layout the driver programs through it are in
// NpuRegisters.h (generated from rtl/data/npu.json); docs/registers.md describes them.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "model/Status.h"

namespace nncosim::driver {

/// The NPU's performance counters (the PERF_* registers), read together.
struct PerformanceCounters {
    uint64_t busyCycles = 0;         ///< cycles with a job running
    uint64_t macs = 0;               ///< multiply-accumulates issued to the array
    uint64_t dmaBytesRead = 0;       ///< DRAM bytes read (whole beats)
    uint64_t dmaBytesWritten = 0;    ///< DRAM bytes written (whole beats)
    uint64_t stallInputCycles = 0;   ///< compute waited for an input tile load
    uint64_t stallWeightCycles = 0;  ///< the array waited for the weight stream
    uint64_t stallOutputCycles = 0;  ///< compute waited for the store path
    uint64_t stallFetchCycles = 0;   ///< busy with no decoded descriptor ready
    uint64_t arrayActiveCycles = 0;  ///< cycles an input vector entered the array
};

/// Register, memory, interrupt and time access to one NPU.
///
/// Calls are serialized by the implementation; they may come from any thread, one at a time
/// or concurrently. Device time only advances inside calls that wait (waitForInterrupt,
/// advance) and by the few cycles a register access takes, so a program that never waits sees
/// a device that never finishes.
class HardwareAccess {
  public:
    virtual ~HardwareAccess() = default;

    /// Reads the 32-bit register at byte offset `offset` (a multiple of 4, below 4096).
    /// Reads of some registers have effects (PERF_*_LO latches the high words).
    virtual uint32_t readRegister(uint32_t offset) = 0;

    /// Writes the 32-bit register at byte offset `offset`. The write reaches the device before
    /// the call returns (writing DOORBELL starts a job).
    virtual void writeRegister(uint32_t offset, uint32_t value) = 0;

    /// Copies `size` bytes into device DRAM at `address`. Fails with INVALID_ARGUMENT, changing
    /// nothing, when [address, address + size) is not inside the DRAM. Takes no device time
    /// (the host writes through its own port, not the NPU's DMA).
    virtual Status writeMemory(uint64_t address, const void* data, size_t size) = 0;

    /// Copies `size` bytes of device DRAM at `address` into `data`; fails as writeMemory does.
    virtual Status readMemory(uint64_t address, void* data, size_t size) = 0;

    /// Bytes of device DRAM; addresses run from 0 to memorySize() - 1.
    virtual uint64_t memorySize() const = 0;

    /// Runs the device until its interrupt line is high or `timeoutCycles` cycles have passed.
    /// Returns true when the interrupt is high (at once if it already was). The interrupt stays
    /// high until software clears IRQ_STATUS.
    virtual bool waitForInterrupt(uint64_t timeoutCycles) = 0;

    /// Whether the interrupt line is high now (no time passes).
    virtual bool interruptPending() = 0;

    /// Runs the device for `cycles` cycles.
    virtual void advance(uint64_t cycles) = 0;

    /// Device clock cycles since the platform was created.
    virtual uint64_t cycleCount() = 0;

    /// Clock period in picoseconds (1000 for 1 GHz): device time = cycles x period.
    virtual uint64_t clockPeriodPs() const = 0;

    /// Reads the PERF_* registers (latched consistently through PERF_*_LO).
    virtual PerformanceCounters performanceCounters() = 0;
};

}  // namespace nncosim::driver
