// The NPU's energy model: energy of a job (or of an operation's share of it) from the counters
// both implementations of the NPU have — the performance counters (MACs, DMA bytes, busy
// cycles) and the scratchpad accesses the descriptors imply — and the parameters below, the ONE
// place where energy figures are stated. It feeds `nncosim run`'s energy columns and the
// driver's Capabilities::powerUsage (driver/Calibration.h); docs/npu.md ("Energy model") has the
// table and the reasoning.
//
// Like the cost model (driver/CostModel.h) it lives in the driver, which needs it for its
// capabilities and must link without sim/; the platform and the functional model supply the
// counters it reads.
#pragma once

#include <cstdint>

#include "driver/NpuRegisters.h"

namespace nncosim::driver {

/// Energy per event. The defaults are assumptions for a 45 nm-class implementation of this NPU
/// at 0.9 V (the node of Horowitz, "Computing's energy problem", ISSCC 2014, whose per-operation
/// figures most of them come from), with an LPDDR4-class DRAM; each says where it comes from.
/// Change them here (or pass others): every figure the project reports follows.
struct EnergyParameters {
    /// One int8 multiply-accumulate into an int32 accumulator (one MAC of PERF_MACS): an 8-bit
    /// multiply (0.2 pJ) and a 32-bit add (0.1 pJ) at 45 nm (Horowitz). The operands are 9-bit
    /// after zero-point subtraction; the difference is within the figure's precision.
    double macPicojoules = 0.3;
    /// One binary32 multiply-accumulate of the float array (float CONV and DWCONV): a 32-bit
    /// float multiply (3.7 pJ) and add (0.9 pJ) at 45 nm (Horowitz).
    double floatMacPicojoules = 4.6;
    /// One scratchpad word (DramBusBytes = 16 bytes) read by the compute stage: two 64-bit reads
    /// of an 8 KB SRAM bank at 10 pJ each (Horowitz: 8 KB SRAM, 64-bit access, 10 pJ).
    double scratchpadReadPicojoules = 20.0;
    /// One scratchpad word written (by the load DMA or a CHAIN_OUT drain). rtl/npu_spad.sv
    /// replicates the memory once per read port (DwTapPorts copies, for the depthwise TAPS
    /// mode), so every write updates DwTapPorts copies: DwTapPorts x the read's energy.
    double scratchpadWritePicojoules = 20.0 * npu::kDwTapPorts;
    /// One byte read from DRAM by the NPU (PERF_DMA_RD): 5 pJ/bit, an LPDDR4-class device and
    /// its PHY, the memory the platform's 16 B/cycle (16 GB/s at 1 GHz) stands for (published
    /// LPDDR4 figures are 4-8 pJ/bit; Horowitz's older DDR3 figure, 1.3-2.6 nJ per 64-bit
    /// access, is 20-40 pJ/bit).
    double dramReadPicojoulesPerByte = 40.0;
    /// One byte written to DRAM by the NPU (PERF_DMA_WR): as a read.
    double dramWritePicojoulesPerByte = 40.0;
    /// Clock tree and pipeline registers of a busy NPU, per cycle (PERF_BUSY): about 15,000
    /// flip-flops, most of them in the 16x16 PE grid (activation, weight and partial-sum
    /// registers), at 1-1.5 fJ each per clock edge. Idle cycles are assumed clock-gated.
    double clockPicojoulesPerCycle = 20.0;
    /// Leakage of the busy NPU (idle is assumed power-gated): about 1.4 MB of SRAM (the
    /// scratchpad's DwTapPorts copies of 2 x SpadWords x 16 B, the four accumulator banks, the
    /// weight FIFO) at ~15 uW/KB, a 45 nm low-power process. Charged per busy cycle at the clock
    /// period: 1 mW for 1 ns is 1 pJ.
    double leakageMilliwatts = 22.0;

    /// The host CPU reference behind powerUsage (NNAPI's figures are relative to the CPU): the
    /// energy of one int8 multiply-accumulate of a quantized model on a big mobile core
    /// (Cortex-A76 class) running int8 dot-product kernels, core, caches and DRAM traffic
    /// included: about 20 GMAC/s sustained on MobileNet-class layers at about 1.2 W, 60 pJ/MAC.
    /// (The golden on this host is a reference for results, not for energy.)
    double cpuPicojoulesPerQuant8Mac = 60.0;
    /// The same for one float32 multiply-accumulate of a float model: fp32 NEON kernels reach
    /// about half the int8 dot-product rate at the same power, 120 pJ/MAC.
    double cpuPicojoulesPerFloatMac = 120.0;
};

/// What the energy model reads: a job's (or an operation's share of a job's) counters.
struct EnergyCounters {
    uint64_t cycles = 0;            ///< busy cycles (doorbell to interrupt)
    uint64_t macs = 0;              ///< PERF_MACS
    uint64_t floatMacs = 0;         ///< the binary32 ones among them (floatMacs of the descriptors)
    uint64_t dmaBytesRead = 0;      ///< PERF_DMA_RD
    uint64_t dmaBytesWritten = 0;   ///< PERF_DMA_WR
    uint64_t scratchpadReads = 0;   ///< words (scratchpadAccesses of the descriptors)
    uint64_t scratchpadWrites = 0;  ///< words
};

/// Energy by where it goes, in picojoules.
struct Energy {
    double macs = 0.0;
    double scratchpad = 0.0;
    double dram = 0.0;
    double clockAndLeakage = 0.0;  ///< the static part: busy cycles, hence estimated cycles on
                                   ///< the functional model

    double totalPicojoules() const { return macs + scratchpad + dram + clockAndLeakage; }
    double microjoules() const { return totalPicojoules() * 1e-6; }
    void add(const Energy& other);
};

/// The energy of `counters` at a clock period of `clockPeriodPs`:
///   (macs - floatMacs) x macPicojoules + floatMacs x floatMacPicojoules (floatMacs at most
///   macs)
///   + scratchpadReads x scratchpadReadPicojoules + scratchpadWrites x scratchpadWritePicojoules
///   + dmaBytesRead x dramReadPicojoulesPerByte + dmaBytesWritten x dramWritePicojoulesPerByte
///   + cycles x (clockPicojoulesPerCycle + leakageMilliwatts x clockPeriodPs / 1000).
Energy estimateEnergy(const EnergyCounters& counters, uint64_t clockPeriodPs,
                      const EnergyParameters& parameters = {});

/// Average power in milliwatts of `energy` spent over `cycles` cycles of `clockPeriodPs`; 0 when
/// no time passed.
double averageMilliwatts(const Energy& energy, uint64_t cycles, uint64_t clockPeriodPs);

/// Scratchpad word accesses of one descriptor. The RTL has no counter for them; they follow
/// from the descriptor's geometry, which the RTL and the functional model execute alike:
/// - writes: the load of A (and B for ADD and MUL), rows x ceil(INNER / 16) words, unless
///   CHAIN_IN; a CHAIN_OUT result, output pixels x ceil(OUT.INNER / 16) words;
/// - reads: one word per vector the feeder issues, vectorWords for a float one (CONV: output
///   pixels x channel blocks x taps x input vectors; DWCONV: output pixels x channel blocks x
///   taps; TAPS: one step per
///   output pixel and (KERNEL_W - 1) / STRIDE_W more per row, each reading KERNEL_H x STRIDE_W
///   words; pooling: output pixels x taps x input words); ADD and MUL read A and B, LUT A.
/// Reads of the read port the RTL leaves enabled while nothing is issued are not counted (an
/// implementation would gate them).
struct ScratchpadAccesses {
    uint64_t reads = 0;
    uint64_t writes = 0;
};
ScratchpadAccesses scratchpadAccesses(const npu::Descriptor& descriptor);

/// Binary32 MACs of one descriptor (a float CONV or DWCONV), as PERF_MACS counts them: per
/// output pixel and tap, valid input channels x output channels (CONV) or channels (DWCONV).
uint64_t floatMacs(const npu::Descriptor& descriptor);

/// The CPU reference: the energy in picojoules of `macs` MACs on the host CPU, `floatMacs` of
/// them float32 (the rest int8).
double cpuPicojoules(uint64_t macs, uint64_t floatMacs, const EnergyParameters& parameters = {});

}  // namespace nncosim::driver
