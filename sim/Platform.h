// The NPU as software sees it: the platform's configuration (implementation, clock, DRAM,
// waveforms, injected faults) and the factories that return it behind the driver's
// hardware-access interface: the SystemC platform around the Verilated RTL, or the
// descriptor-level functional model (sim/FunctionalNpu.h). No SystemC in this header: users of
// the platform compile without it.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "driver/HardwareAccess.h"
#include "model/Status.h"

namespace nncosim::sim {

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

/// A deliberate hardware misbehavior, at the NPU's memory ports, in its command processor or
/// inside its datapath, for proving that co-verification catches and localizes hardware bugs (and
/// for fault campaigns, testbench/Faults.h). Off by default. The completion record is never
/// corrupted, so a faulty job that raises no error still completes and its results can be
/// compared. Which kinds each implementation has: faultKindExists().
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
        /// Bit `bit` % 32 of accumulator lane `bit` / 32 (an output channel of the array's
        /// block) stuck at `value` when the accumulators drain into the requantizer.
        kStuckAccumulatorBit,
        /// Bit `bit` % 8 of the weight register of the array's processing element `bit` / 8
        /// (row pe / ArrayCols, column pe % ArrayCols) stuck at `value`: every weight that PE
        /// holds (CONV and DWCONV).
        kStuckArrayWeightBit,
        /// Address bit `bit` (4..31: a beat's address) of every data DMA beat (loads, weight and
        /// table streams, stores; not descriptor fetches or the record) stuck at `value`.
        kStuckDmaAddressBit,
        /// Bit `bit` of descriptor `beat` of every job flipped as it is fetched.
        kDescriptorBitFlip,
        /// Every job stalls (no descriptor retires) until the watchdog ends it.
        kStall,
    };
    Kind kind = Kind::kNone;
    uint32_t bit = 0;   ///< which bit, as each kind says
    bool value = true;  ///< the stuck kinds: the level the bit is stuck at
    uint64_t beat = 0;  ///< kDropWriteBeat: the write beat; kDescriptorBitFlip: the descriptor
};

/// What implements the NPU behind the hardware-access interface.
enum class NpuImplementation {
    kRtl,         ///< the Verilated RTL in the SystemC platform (cycle-accurate)
    kFunctional,  ///< the functional model: the same results, cycles estimated by the cost model
};

/// "rtl" or "func" (the CLI's --npu spelling).
const char* nameOf(NpuImplementation npu);
/// The implementation named `name` ("rtl", "func"), or nullopt.
std::optional<NpuImplementation> npuImplementationFromName(std::string_view name);

/// The RTL and the functional model together (sim/Cosim.h): jobs in lockstep, compared after
/// every retired descriptor, and jobs started on the model and finished on the RTL.
struct CosimOptions {
    bool enabled = false;   ///< createPlatform returns a sim::CosimPlatform (npu must be kRtl)
    bool lockstep = false;  ///< compare every descriptor the RTL retires with the model's
};

/// Configuration of the platform.
struct PlatformConfig {
    NpuImplementation npu = NpuImplementation::kRtl;
    CosimOptions cosim;
    uint64_t clockPeriodPs = 1000;      ///< 1 GHz
    uint64_t dramBytes = 256ull << 20;  ///< device DRAM size
    uint32_t dramLatencyCycles = 100;   ///< request to first data
    /// Sustained bandwidth, reads and writes sharing it: below a beat (16 B) the memory port
    /// stalls between beats; 16 x n (n = 1 to npu::kMemLanes) gives the port n lanes
    /// (docs/npu.md, Memory lanes); other values fail with INVALID_ARGUMENT.
    uint32_t dramBytesPerCycle = 16;
    TraceOptions trace;
    FaultOptions fault;
};

/// Creates the SystemC platform: the Verilated NPU, a TLM-2.0 DRAM model, the register bus,
/// the interrupt and the clock. SystemC elaborates once per process, so the first call builds
/// the platform and later calls return the same one when `config` matches (trace and fault
/// options apply only on the first call); a different configuration fails with GENERAL_FAILURE.
/// The device is reset (hardware reset, registers at their reset values) before being returned.
Result<std::shared_ptr<driver::HardwareAccess>> createSystemCPlatform(
    const PlatformConfig& config = {});

/// The one factory choosing the implementation: `config.npu` kRtl returns the SystemC platform
/// (createSystemCPlatform, with its once-per-process rules), or with `config.cosim.enabled` a
/// sim::CosimPlatform around it and a functional model (one per process as well); kFunctional a
/// new functional model with the configuration's clock period and DRAM size. The functional
/// model has no waveforms and co-simulation needs the RTL: asking kFunctional for either fails
/// with INVALID_ARGUMENT, as does a fault kind the implementation does not have.
Result<std::shared_ptr<driver::HardwareAccess>> createPlatform(const PlatformConfig& config = {});

/// Whether `npu` can inject fault `kind`: the functional model has every kind; the RTL has the
/// write-port kinds and the requantization port (kStuckWriteBit, kDropWriteBeat,
/// kStuckRequantBit).
bool faultKindExists(NpuImplementation npu, FaultOptions::Kind kind);

/// Replaces the fault `platform` (one createPlatform returned, not a co-simulation) injects from
/// its next job on; kNone removes it. Fails with INVALID_ARGUMENT for a kind the platform's
/// implementation does not have, or a platform createPlatform did not make.
Status setFault(driver::HardwareAccess& platform, const FaultOptions& fault);

}  // namespace nncosim::sim
