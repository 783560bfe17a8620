#include "driver/EnergyModel.h"

#include <algorithm>

#include "driver/Descriptor.h"

namespace nncosim::driver {
namespace {

uint64_t wordsOf(uint32_t bytes) {
    return (uint64_t{bytes} + npu::kDramBusBytes - 1) / npu::kDramBusBytes;
}

uint64_t rowsOf(const npu::TensorDesc& t) {
    return uint64_t{t.count1} * t.count2 * t.count3;
}

}  // namespace

void Energy::add(const Energy& other) {
    macs += other.macs;
    scratchpad += other.scratchpad;
    dram += other.dram;
    clockAndLeakage += other.clockAndLeakage;
}

Energy estimateEnergy(const EnergyCounters& c, uint64_t clockPeriodPs, const EnergyParameters& p) {
    Energy e;
    // An operation's MACs are sampled from PERF_MACS while its float MACs come from its
    // descriptors: at a sampling boundary the first can fall short of the second.
    const uint64_t floatMacs = std::min(c.floatMacs, c.macs);
    e.macs = static_cast<double>(c.macs - floatMacs) * p.macPicojoules +
             static_cast<double>(floatMacs) * p.floatMacPicojoules;
    e.scratchpad = static_cast<double>(c.scratchpadReads) * p.scratchpadReadPicojoules +
                   static_cast<double>(c.scratchpadWrites) * p.scratchpadWritePicojoules;
    e.dram = static_cast<double>(c.dmaBytesRead) * p.dramReadPicojoulesPerByte +
             static_cast<double>(c.dmaBytesWritten) * p.dramWritePicojoulesPerByte;
    const double leakagePerCycle =
        p.leakageMilliwatts * static_cast<double>(clockPeriodPs) / 1000.0;  // mW x ns = pJ
    e.clockAndLeakage =
        static_cast<double>(c.cycles) * (p.clockPicojoulesPerCycle + leakagePerCycle);
    return e;
}

double averageMilliwatts(const Energy& energy, uint64_t cycles, uint64_t clockPeriodPs) {
    const double picoseconds = static_cast<double>(cycles) * static_cast<double>(clockPeriodPs);
    return picoseconds > 0 ? energy.totalPicojoules() / picoseconds * 1000.0 : 0.0;  // pJ/ps = W
}

ScratchpadAccesses scratchpadAccesses(const npu::Descriptor& d) {
    const auto has = [&](npu::DescFlag f) { return (d.flags & static_cast<uint32_t>(f)) != 0; };
    ScratchpadAccesses s;
    if (d.opcode == npu::Opcode::NOP || static_cast<uint32_t>(d.opcode) >= npu::kOpcodeCount)
        return s;
    const uint64_t aWords = rowsOf(d.a) * wordsOf(d.a.inner);
    if (!npu::op::isWindow(d.opcode)) {
        // ADD, MUL (A and B) and LUT (A): loaded, then read once each.
        const uint64_t words = npu::op::usesB(d.opcode) ? 2 * aWords : aWords;
        s.writes = words;
        s.reads = words;
        return s;
    }
    if (!has(npu::DescFlag::CHAIN_IN)) s.writes = aWords;
    const uint64_t pixels = uint64_t{d.out.count1} * d.out.count2;
    const uint64_t blocks = wordsOf(d.out.inner);
    if (has(npu::DescFlag::CHAIN_OUT)) s.writes += pixels * blocks;
    const uint64_t taps = uint64_t{d.kernelH} * d.kernelW;
    const uint64_t inWords = wordsOf(d.a.inner);
    // A float vector is vw words (and an output block vw words per pixel).
    const uint64_t vw = npu::vectorWords(d), vectorBlocks = (blocks + vw - 1) / vw;
    switch (d.opcode) {
        case npu::Opcode::CONV:
            s.reads = pixels * vectorBlocks * taps * ((inWords + vw - 1) / vw) * vw;
            break;
        case npu::Opcode::DWCONV:
            if (has(npu::DescFlag::TAPS)) {
                const uint64_t strideW = d.strideW == 0 ? 1 : d.strideW;
                const uint64_t steps =
                    uint64_t{d.out.count2} *
                    (d.out.count1 + (d.kernelW == 0 ? 0 : (d.kernelW - 1) / strideW));
                s.reads = vectorBlocks * steps * d.kernelH * strideW * vw;  // vw: a line a port
            } else {
                s.reads = pixels * vectorBlocks * taps * vw;
            }
            break;
        default:  // MAXPOOL, AVGPOOL
            s.reads = pixels * taps * inWords;
            break;
    }
    return s;
}

uint64_t floatMacs(const npu::Descriptor& d) {
    const bool array = d.opcode == npu::Opcode::CONV || d.opcode == npu::Opcode::DWCONV;
    if (!array || d.format == static_cast<uint32_t>(npu::Format::INT8)) return 0;
    const uint64_t size = npu::elementBytes(d);
    const uint64_t taps = uint64_t{d.kernelH} * d.kernelW;
    const uint64_t pixels = uint64_t{d.out.count1} * d.out.count2;
    const uint64_t in = d.opcode == npu::Opcode::CONV ? d.a.inner / size : 1;
    return pixels * taps * in * (d.out.inner / size);
}

double cpuPicojoules(uint64_t macs, uint64_t floatMacs, const EnergyParameters& parameters) {
    return static_cast<double>(macs - floatMacs) * parameters.cpuPicojoulesPerQuant8Mac +
           static_cast<double>(floatMacs) * parameters.cpuPicojoulesPerFloatMac;
}

}  // namespace nncosim::driver
