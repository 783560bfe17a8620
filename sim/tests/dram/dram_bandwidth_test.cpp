// Convolutions and a streaming copy on a platform whose DRAM bandwidth is not the default beat
// per cycle, in their own process (SystemC elaborates one platform per process); the file is
// built once per bandwidth (NNCOSIM_DRAM_BYTES_PER_CYCLE):
// - below a beat per cycle (4 B/cycle), the memory port stalls requests (mem_req_ready_i low);
// - several beats per cycle (32, 64 B/cycle), the port issues beats of different clients on
//   parallel lanes and read responses return per client.
// The RTL is Verilated with its assertions (NNCOSIM_RTL_ASSERT): a request that changes or
// disappears while the memory stalls it (a_mem_req_held) stops the run. Outputs are compared bit
// for bit with the C++ reference.
#include <doctest/doctest.h>

#include <algorithm>
#include <array>
#include <random>
#include <vector>

#include "sim/tests/NpuTestUtil.h"

namespace nncosim::sim::testing {
namespace {

constexpr uint32_t kBytesPerCycle = NNCOSIM_DRAM_BYTES_PER_CYCLE;
// Test names end in the bandwidth: "..._32" at 32 B/cycle.
#define NNCOSIM_STRING(x) #x
#define NNCOSIM_BANDWIDTH_NAME(name, bandwidth) name "_" NNCOSIM_STRING(bandwidth)
#define DRAM_TEST(name) TEST_CASE(NNCOSIM_BANDWIDTH_NAME(name, NNCOSIM_DRAM_BYTES_PER_CYCLE))
constexpr bool kStalls = kBytesPerCycle < npu::kDramBusBytes;

driver::HardwareAccess& platform() {
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
    driver::HardwareAccess& hw = platform();
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

DRAM_TEST("sim_npu_conv_dram_bandwidth") {
    std::mt19937 rng(0xbac4);
    // Weight-heavy (few pixels, many channels): the weight stream, loads, stores and the
    // descriptor fetches all compete for the DRAM.
    {
        const ConvCase c = convCase(4, 4, 64, 48, 3, 1, 1);
        const ConvRun r = runConv(c, rng);
        CHECK(r.mismatches == 0);
        CAPTURE(r.cycles);
        CAPTURE(r.dramBytes);
        CHECK(r.cycles * kBytesPerCycle >= r.dramBytes);
        if (kStalls) CHECK(r.dramBytes * 5 >= r.cycles * kBytesPerCycle * 4);  // busy >= 80 %
    }
    // Strided, padded, channel counts that are not multiples of the array size.
    {
        const ConvCase c = convCase(17, 13, 21, 35, 3, 2, 1);
        CHECK(runConv(c, rng).mismatches == 0);
    }
}

// A copy of `rows` rows of `row` bytes from `src` to `dst`: the LUT with the identity table,
// which it writes into `arena`.
npu::ChainBuilder copyProgram(driver::HardwareAccess& hw, DeviceArena& arena, uint32_t src,
                              uint32_t dst, uint32_t rows, uint32_t row) {
    std::array<uint8_t, 256> table{};
    for (int v = 0; v < 256; ++v) table[v] = static_cast<uint8_t>(v);
    const uint32_t tableAddr = arena.alloc(table.size());
    REQUIRE(hw.writeMemory(tableAddr, table.data(), table.size()).ok());
    npu::ChainBuilder program;
    REQUIRE(program
                .lookup({src, 1, 1, rows, row, 0, false, 0}, {dst, 1, 1, rows, row, 0, false, 0},
                        tableAddr)
                .ok());
    return program;
}

DRAM_TEST("sim_npu_copy_dram_bandwidth") {
    // A 64 KiB copy (the LUT with the identity table): the load and the store each stream a beat
    // a cycle, so with two lanes or more they overlap and the DRAM moves more than a beat a
    // cycle.
    driver::HardwareAccess& hw = platform();
    constexpr uint32_t kRows = 512, kRow = 128;
    std::mt19937 rng(0xc0b1);
    DeviceArena arena;
    const std::vector<uint8_t> src = randomBytes(rng, kRows * kRow);
    const uint32_t srcAddr = arena.alloc(src.size());
    const uint32_t dstAddr = arena.alloc(src.size());
    REQUIRE(hw.writeMemory(srcAddr, src.data(), src.size()).ok());
    const npu::ChainBuilder program = copyProgram(hw, arena, srcAddr, dstAddr, kRows, kRow);
    const driver::PerformanceCounters before = hw.performanceCounters();
    const npu::JobResult job = runInArena(hw, program, arena);
    const driver::PerformanceCounters after = hw.performanceCounters();
    std::vector<uint8_t> got(src.size());
    REQUIRE(hw.readMemory(dstAddr, got.data(), got.size()).ok());
    CHECK(got == src);

    const uint64_t bytes = (after.dmaBytesRead - before.dmaBytesRead) +
                           (after.dmaBytesWritten - before.dmaBytesWritten);
    CAPTURE(job.cycles);
    CAPTURE(bytes);
    CHECK(bytes >= 2 * src.size());
    CHECK(job.cycles * kBytesPerCycle >= bytes);
    if (kBytesPerCycle >= 2 * npu::kDramBusBytes) {
        // Load and store overlap on two lanes: over a beat a cycle across the job, which one
        // lane cannot do (about 1.25 beats: the copy's first load and last store run alone).
        CHECK(bytes > uint64_t{npu::kDramBusBytes} * job.cycles);
    }
}

DRAM_TEST("sim_npu_store_fault_dram_bandwidth") {
    // A copy whose output runs past the DMA window while the load streams beside the store (on
    // another lane from 32 B/cycle): the job stops with DMA_WINDOW at the first beat outside,
    // every beat before it written, none from it on; after a soft reset the copy runs whole.
    driver::HardwareAccess& hw = platform();
    constexpr uint32_t kRows = 256, kRow = 128, kInside = 96 * kRow;
    std::mt19937 rng(0xfa17);
    DeviceArena arena;
    const std::vector<uint8_t> src = randomBytes(rng, kRows * kRow);
    const uint32_t srcAddr = arena.alloc(src.size());
    REQUIRE(hw.writeMemory(srcAddr, src.data(), src.size()).ok());
    const uint32_t dstAddr = arena.alloc(src.size());
    const std::vector<uint8_t> before = randomBytes(rng, src.size());
    REQUIRE(hw.writeMemory(dstAddr, before.data(), before.size()).ok());
    // The table, the queue and the completion record below the copy's output, the window ending
    // inside it.
    DeviceArena low(0x10000);
    const npu::ChainBuilder program = copyProgram(hw, low, srcAddr, dstAddr, kRows, kRow);
    const uint32_t queue = low.alloc(program.descriptors().size() * npu::kDescriptorWords * 4);
    const uint32_t record = low.alloc(npu::kCompletionWords * 4);
    const uint32_t limit = dstAddr + kInside;
    auto job = npu::runJob(hw, program, {queue, record, 0, limit}, 1, 50'000'000);
    REQUIRE(job.ok());
    CHECK(job->interrupted);
    CHECK(job->errorCode == static_cast<uint32_t>(npu::ErrorCode::DMA_WINDOW));
    CHECK(job->errorAddr == limit);
    std::vector<uint8_t> got(src.size());
    REQUIRE(hw.readMemory(dstAddr, got.data(), got.size()).ok());
    CHECK(std::equal(got.begin(), got.begin() + kInside, src.begin()));
    CHECK(std::equal(got.begin() + kInside, got.end(), before.begin() + kInside));

    softReset(hw);
    CHECK(hw.readRegister(npu::reg::kStatus) == 0);
    hw.writeRegister(npu::reg::kIrqStatus, 0xffffffff);
    runInArena(hw, program, arena);
    REQUIRE(hw.readMemory(dstAddr, got.data(), got.size()).ok());
    CHECK(got == src);
}

}  // namespace
}  // namespace nncosim::sim::testing
