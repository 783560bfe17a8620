// The hardware-access interface: the only way software (the driver, tests, benchmarks) touches
// the NPU. It has no SystemC in it, so a driver compiles against it alone; the SystemC platform
// (createSystemCPlatform) is one implementation, silicon behind a kernel driver would be another.
//
// The register map and descriptor layout the driver programs through it are in
// sim/NpuRegisters.h (generated from rtl/data/npu.json); docs/registers.md describes them.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "model/Status.h"

namespace nncosim::sim {

/// The NPU's performance counters (the PERF_* registers), read together.
struct PerformanceCounters {
    uint64_t busyCycles = 0;        ///< cycles with a job running
    uint64_t macs = 0;              ///< multiply-accumulates issued to the array
    uint64_t dmaBytesRead = 0;      ///< DRAM bytes read (whole beats)
    uint64_t dmaBytesWritten = 0;   ///< DRAM bytes written (whole beats)
    uint64_t stallInputCycles = 0;  ///< compute waited for an input tile load
    uint64_t stallWeightCycles = 0; ///< the array waited for the weight stream
    uint64_t stallOutputCycles = 0; ///< compute waited for the store path
    uint64_t stallFetchCycles = 0;  ///< busy with no decoded descriptor ready
    uint64_t arrayActiveCycles = 0; ///< cycles an input vector entered the array
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

/// Waveform dumping of the platform. Dumps cost simulation speed only while enabled; with
/// `enabled` false nothing is traced.
struct TraceOptions {
    bool enabled = false;
    enum class Format { kFst, kVcd } format = Format::kFst;
    /// Dump file; its .gtkw save file (signals grouped by unit) is written beside it.
    std::string path = "waves/npu.fst";
    /// Hierarchy scopes to trace, e.g. {"npu_top.u_cmd", "npu_top.u_dma"}; empty traces every
    /// traceable scope (the PE array is never traced: it is excluded when Verilated).
    std::vector<std::string> scopes;
    /// Scope depth below each chosen scope (0 = all levels).
    int depth = 0;
    /// Cycle window [startCycle, stopCycle) of the dump; stopCycle 0 means no end.
    uint64_t startCycle = 0;
    uint64_t stopCycle = 0;
    /// Start on an event instead of at startCycle: "doorbell", "irq" or "error" (the dump then
    /// runs for stopCycle - startCycle cycles from the event when stopCycle is set).
    std::string startEvent;
};

/// A deliberate hardware misbehavior, at the NPU's memory write port or inside its datapath, for
/// proving that co-verification catches and localizes hardware bugs. Off by default. The
/// completion record is never corrupted, so a faulty job still completes and its results can be
/// compared.
struct FaultOptions {
    enum class Kind {
        kNone,
        /// Bit `bit` of every DRAM write beat's data (byte lane bit / 8) stuck at `value`.
        kStuckWriteBit,
        /// The `beat`-th DRAM write beat (from 0) of every job never reaches the DRAM (its
        /// timing is unchanged).
        kDropWriteBeat,
        /// Bit `bit` of every word the requantization unit produces (lane bit / 8) stuck at
        /// `value`, through the RTL's fault-injection port: operations that requantize (CONV,
        /// DWCONV, fully connected, ADD, MUL) go wrong, pooling and lookups do not.
        kStuckRequantBit,
    };
    Kind kind = Kind::kNone;
    uint32_t bit = 0;   ///< kStuckWriteBit, kStuckRequantBit: 0 .. 8 x DramBusBytes - 1
    bool value = true;  ///< kStuckWriteBit, kStuckRequantBit: the level the bit is stuck at
    uint64_t beat = 0;  ///< kDropWriteBeat
};

/// Configuration of the SystemC platform.
struct PlatformConfig {
    uint64_t clockPeriodPs = 1000;        ///< 1 GHz
    uint64_t dramBytes = 256ull << 20;    ///< device DRAM size
    uint32_t dramLatencyCycles = 100;     ///< request to first data
    uint32_t dramBytesPerCycle = 16;      ///< sustained bandwidth (reads and writes share it)
    TraceOptions trace;
    FaultOptions fault;
};

/// Creates the SystemC platform: the Verilated NPU, a TLM-2.0 DRAM model, the register bus,
/// the interrupt and the clock. SystemC elaborates once per process, so the first call builds
/// the platform and later calls return the same one when `config` matches (trace and fault
/// options apply only on the first call); a different configuration fails with GENERAL_FAILURE.
/// The device is reset (hardware reset, registers at their reset values) before being returned.
Result<std::shared_ptr<HardwareAccess>> createSystemCPlatform(const PlatformConfig& config = {});

}  // namespace nncosim::sim
