// Convolutions on a platform whose DRAM is slower than a beat per cycle, so the memory port
// stalls requests (mem_req_ready_i low), in their own process (SystemC elaborates one platform
// per process). The RTL is Verilated with its assertions (NNCOSIM_RTL_ASSERT): a request that
// changes or disappears while the memory stalls it (a_mem_req_held) stops the run. Outputs are
// compared bit for bit with the C++ reference.
#include <doctest/doctest.h>

#include <random>
#include <vector>

#include "sim/tests/NpuTestUtil.h"

namespace nncosim::sim::testing {
namespace {

// A beat every four cycles.
constexpr uint32_t kBytesPerCycle = npu::kDramBusBytes / 4;

driver::HardwareAccess& slowPlatform() {
    static std::shared_ptr<driver::HardwareAccess> hw = [] {
        PlatformConfig config;
        config.dramBytesPerCycle = kBytesPerCycle;
        auto platform = createSystemCPlatform(config);
        REQUIRE(platform.ok());
        return *platform;
    }();
    return *hw;
}

struct ConvRun {
    uint32_t mismatches = 0;
    uint64_t cycles = 0;
    uint64_t dramBytes = 0;  // read and written
};

ConvRun runConv(const ConvCase& c, std::mt19937& rng) {
    driver::HardwareAccess& hw = slowPlatform();
    DeviceArena arena;
    const std::vector<uint8_t> input = randomBytes(rng, size_t{c.h} * c.w * c.inC);
    const std::vector<uint8_t> weights =
        randomBytes(rng, size_t{c.outC} * c.g.kernelH * c.g.kernelW * c.inC);
    std::vector<npu::ChannelQuant> quant(c.outC);
    for (npu::ChannelQuant& q : quant) {
        q.bias = static_cast<int32_t>(rng() % 20001) - 10000;
        q.multiplier = (1 << 30) + static_cast<int32_t>(rng() % (1u << 30));
        q.shift = -9 - static_cast<int32_t>(rng() % 3);
    }

    const uint32_t inAddr = arena.alloc(input.size());
    const size_t outBytes = size_t{c.outH} * c.outW * c.outC;
    const uint32_t outAddr = arena.alloc(outBytes);
    REQUIRE(hw.writeMemory(inAddr, input.data(), input.size()).ok());
    const std::vector<uint8_t> stream = npu::packConvWeights(weights.data(), c.outC, c.g.kernelH,
                                                             c.g.kernelW, c.inC, c.wZero, quant);
    const uint32_t wAddr = arena.alloc(stream.size());
    REQUIRE(hw.writeMemory(wAddr, stream.data(), stream.size()).ok());

    npu::ChainBuilder program;
    const npu::DeviceTensor in{inAddr, 1, c.h, c.w, c.inC, 0, c.inSigned, c.inZero};
    const npu::DeviceTensor out{outAddr, 1, c.outH, c.outW, c.outC, 0, c.outSigned, 0};
    REQUIRE(program.conv(in, out, wAddr, c.wSigned, c.wZero, c.g, c.stage).ok());

    const driver::PerformanceCounters before = hw.performanceCounters();
    const npu::JobResult job = runInArena(hw, program, arena);
    const driver::PerformanceCounters after = hw.performanceCounters();

    std::vector<uint8_t> got(outBytes);
    REQUIRE(hw.readMemory(outAddr, got.data(), got.size()).ok());
    const std::vector<uint8_t> want = referenceConv(c, input, weights, quant, false);
    ConvRun run;
    for (size_t i = 0; i < want.size(); ++i) {
        run.mismatches += got[i] != want[i];
    }
    run.cycles = job.cycles;
    run.dramBytes = (after.dmaBytesRead - before.dmaBytesRead) +
                    (after.dmaBytesWritten - before.dmaBytesWritten);
    return run;
}

ConvCase convCase(uint32_t h, uint32_t w, uint32_t inC, uint32_t outC, uint32_t kernel,
                  uint32_t stride, uint32_t pad) {
    ConvCase c{};
    c.h = h;
    c.w = w;
    c.inC = inC;
    c.outC = outC;
    c.g.kernelH = c.g.kernelW = kernel;
    c.g.strideH = c.g.strideW = stride;
    c.g.dilationH = c.g.dilationW = 1;
    c.g.padTop = c.g.padLeft = pad;
    c.outH = windowOutput(h, kernel, stride, 1, pad, pad);
    c.outW = windowOutput(w, kernel, stride, 1, pad, pad);
    c.inSigned = c.wSigned = c.outSigned = true;
    c.inZero = 3;
    c.wZero = 0;
    c.stage = {-5, -128, 127};
    return c;
}

TEST_CASE("sim_npu_conv_dram_backpressure") {
    std::mt19937 rng(0xbac4);
    // Weight-heavy (few pixels, many channels): the weight stream, loads, stores and the
    // descriptor fetches all wait for the DRAM, which is busy most of the job.
    {
        const ConvCase c = convCase(4, 4, 64, 48, 3, 1, 1);
        const ConvRun r = runConv(c, rng);
        CHECK(r.mismatches == 0);
        CAPTURE(r.cycles);
        CAPTURE(r.dramBytes);
        CHECK(r.cycles * kBytesPerCycle >= r.dramBytes);
        CHECK(r.dramBytes * 5 >= r.cycles * kBytesPerCycle * 4);  // DRAM busy >= 80 %
    }
    // Strided, padded, channel counts that are not multiples of the array size.
    {
        const ConvCase c = convCase(17, 13, 21, 35, 3, 2, 1);
        CHECK(runConv(c, rng).mismatches == 0);
    }
}

}  // namespace
}  // namespace nncosim::sim::testing
