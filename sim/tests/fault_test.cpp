// Faults are reported, never hung: invalid descriptors, DMA outside the job's window and the
// watchdog each stop the job with an error code, the faulting descriptor and an interrupt; the
// device then works again after a soft reset, with nothing of the aborted job left inside it.
#include "driver/Runtime.h"
#include "sim/tests/NpuTestUtil.h"
#include "sim/tests/TestBench.h"

#include <doctest/doctest.h>

#include <array>
#include <vector>

namespace nncosim::sim::testing {
namespace {

using namespace npu;

constexpr uint64_t kTimeout = 2'000'000;

// A LUT copy of 100 bytes; returns whether the device produced it (it works).
bool deviceWorks(driver::HardwareAccess& hw) {
    DeviceArena arena(0x400000);
    std::array<uint8_t, 256> table{};
    for (int v = 0; v < 256; ++v) {
        table[v] = static_cast<uint8_t>(255 - v);
    }
    std::mt19937 rng(7);
    const std::vector<uint8_t> src = randomBytes(rng, 100);
    const uint32_t tableAddr = arena.alloc(256);
    const uint32_t srcAddr = arena.alloc(100);
    const uint32_t dstAddr = arena.alloc(100);
    if (!hw.writeMemory(tableAddr, table.data(), 256).ok() ||
        !hw.writeMemory(srcAddr, src.data(), src.size()).ok()) {
        return false;
    }
    ChainBuilder program;
    if (!program.lookup({srcAddr, 1, 1, 1, 100}, {dstAddr, 1, 1, 1, 100}, tableAddr).ok()) {
        return false;
    }
    const uint32_t queue = arena.alloc(128);
    const uint32_t record = arena.alloc(16);
    auto job = runJob(hw, program, {queue, record, 0x400000, arena.used() + 16}, 9, kTimeout);
    if (!job.ok() || !job->interrupted || job->errorCode != 0 ||
        job->irqStatus != field::kIrqStatusDone) {
        return false;
    }
    std::vector<uint8_t> got(100);
    if (!hw.readMemory(dstAddr, got.data(), got.size()).ok()) {
        return false;
    }
    for (size_t i = 0; i < got.size(); ++i) {
        if (got[i] != 255 - src[i]) {
            return false;
        }
    }
    return true;
}

// The driver's soft reset (driver::Runtime::softReset): wait while RESETTING, clear the
// interrupts.
void driverSoftReset(driver::HardwareAccess& hw) {
    hw.writeRegister(reg::kControl, field::kControlSoftReset);
    for (int i = 0; i < 1000 && (hw.readRegister(reg::kStatus) & field::kStatusResetting); ++i) {
        hw.advance(64);
    }
    CHECK((hw.readRegister(reg::kStatus) & field::kStatusResetting) == 0);
    hw.writeRegister(reg::kIrqStatus, 0xffffffff);
}

// Checks the error state a fault leaves, then that the device is usable after a soft reset.
void checkFaultAndRecover(driver::HardwareAccess& hw, const Result<JobResult>& job, ErrorCode code,
                          uint32_t desc, uint32_t recordAddr) {
    REQUIRE(job.ok());
    CHECK(job->interrupted);
    CHECK(job->irqStatus == field::kIrqStatusError);
    CHECK(job->errorCode == static_cast<uint32_t>(code));
    CHECK(job->errorDesc == desc);
    CHECK((hw.readRegister(reg::kStatus) & field::kStatusError) != 0);
    std::array<uint32_t, kCompletionWords> record{};
    REQUIRE(hw.readMemory(recordAddr, record.data(), sizeof(record)).ok());
    CHECK(record[completion::kStatusWord] == static_cast<uint32_t>(code));

    // Halted: a doorbell is ignored until the soft reset.
    hw.writeRegister(reg::kDoorbell, 5);
    hw.advance(1000);
    CHECK_FALSE(hw.interruptPending());
    CHECK(hw.readRegister(reg::kErrorCode) == static_cast<uint32_t>(code));

    softReset(hw);
    CHECK(hw.readRegister(reg::kStatus) == 0);
    CHECK(hw.readRegister(reg::kErrorCode) == 0);
    CHECK(hw.readRegister(reg::kIrqStatus) == 0);
    CHECK(deviceWorks(hw));
}

Descriptor nop() {
    Descriptor d;
    d.opcode = Opcode::NOP;
    return d;
}

TEST_CASE("sim_fault_bad_opcode") {
    driver::HardwareAccess& hw = *testBench().npu;
    ChainBuilder program;
    program.append(nop());
    Descriptor bad;
    bad.opcode = static_cast<Opcode>(99);
    program.append(bad);
    program.append(nop());
    auto job = runJob(hw, program, {0x10000, 0x11000, 0, 0x20000}, 1, kTimeout);
    checkFaultAndRecover(hw, job, ErrorCode::BAD_OPCODE, 1, 0x11000);
    CHECK(hw.readRegister(reg::kErrorAddr) == 0);  // cleared by the reset
}

TEST_CASE("sim_fault_after_a_long_chain") {
    // 4,096 NOPs, then a bad opcode, in the 16 MiB to 32 MiB of DRAM: the descriptor counters
    // carry into bit 12 and the error names descriptor 4,096 (each NOP costs a fetch, about 110
    // cycles: the command processor fetches one descriptor at a time).
    driver::HardwareAccess& hw = *testBench().npu;
    constexpr uint32_t kNops = 4096, kWindow = 0x1000000, kRecord = 0x1fff000;
    ChainBuilder program;
    for (uint32_t i = 0; i < kNops; ++i) program.append(nop());
    Descriptor bad;
    bad.opcode = static_cast<Opcode>(200);
    program.append(bad);
    auto job = runJob(hw, program, {kWindow, kRecord, kWindow, 2 * kWindow}, 0x89abcdef,
                      kNops * 256 + kTimeout);
    checkFaultAndRecover(hw, job, ErrorCode::BAD_OPCODE, kNops, kRecord);
}

TEST_CASE("sim_fault_bad_field") {
    driver::HardwareAccess& hw = *testBench().npu;
    ChainBuilder program;
    REQUIRE(program
                .conv({0x30000, 1, 4, 4, 8}, {0x31000, 1, 4, 4, 8}, 0x32000, true, 0,
                      ConvGeometry{}, OutputStage{})
                .ok());
    const Descriptor conv = program.descriptors()[0];
    const uint32_t wide = static_cast<uint32_t>(DescFlag::WIDE);
    // Rows of A: one buffer's worth (a tile of 8 channels is a word a pixel), then both.
    const auto rows = [&](Descriptor d, uint32_t words) {
        d.a.count2 = words / d.a.count1;
        return d;
    };
    Descriptor zeroKernel = conv;
    zeroKernel.kernelW = 0;
    Descriptor wideDepthwise = conv;
    wideDepthwise.opcode = Opcode::DWCONV;
    wideDepthwise.flags |= wide;
    Descriptor wideResidual = conv;
    wideResidual.flags |= wide | static_cast<uint32_t>(DescFlag::RESIDUAL);
    wideResidual.b = wideResidual.out;
    Descriptor overOneBuffer = rows(conv, kSpadWords + 4);
    Descriptor overBothBuffers = rows(conv, 2 * kSpadWords + 4);
    overBothBuffers.flags |= wide;
    // A_PLANAR: a 4x4 tile of 4 planes (4 bytes a pixel) is valid; 5 planes, a float32 pixel
    // of 6 bytes, an odd plane stride of binary16, an ADD are not.
    Descriptor planar = conv;
    planar.aPlanar = true;
    planar.a.inner = 4;
    planar.a.stride1 = 1;
    planar.a.stride2 = 4;
    planar.a.stride3 = 16;
    Descriptor fivePlanes = planar;
    fivePlanes.a.inner = 5;
    Descriptor partFloat = planar;
    partFloat.format = static_cast<uint32_t>(npu::Format::FP32);
    partFloat.a.inner = 6;
    Descriptor oddHalf = planar;
    oddHalf.format = static_cast<uint32_t>(npu::Format::FP16);
    oddHalf.a.stride1 = 2;
    oddHalf.a.stride2 = 8;
    oddHalf.a.stride3 = 33;
    Descriptor planarAdd = planar;
    planarAdd.opcode = Opcode::ADD;
    planarAdd.b = planarAdd.a;
    planarAdd.out = planarAdd.a;
    const std::vector<std::pair<const char*, Descriptor>> cases = {
        {"a zero-wide kernel", zeroKernel},
        {"WIDE on a DWCONV", wideDepthwise},
        {"WIDE with RESIDUAL", wideResidual},
        {"a tile over one buffer without WIDE", overOneBuffer},
        {"a WIDE tile over both buffers", overBothBuffers},
        {"A_PLANAR with five planes", fivePlanes},
        {"A_PLANAR with a part of a binary32 element", partFloat},
        {"A_PLANAR with an odd binary16 plane stride", oddHalf},
        {"A_PLANAR on an ADD", planarAdd},
    };
    for (const auto& [what, d] : cases) {
        CAPTURE(what);
        ChainBuilder bad;
        bad.append(nop());
        bad.append(nop());
        bad.append(d);
        auto job = runJob(hw, bad, {0x10000, 0x11000, 0, 0x40000}, 1, kTimeout);
        checkFaultAndRecover(hw, job, ErrorCode::BAD_FIELD, 2, 0x11000);
    }
}

TEST_CASE("sim_fault_bad_chain") {
    // Valid pair: a 2x2 depthwise tile kept on chip and the 1x1 convolution reading it.
    ChainBuilder pair;
    const DeviceTensor in{0x30000, 1, 4, 4, 8}, mid{0, 1, 4, 4, 8}, out{0x31000, 1, 4, 4, 8};
    // (4x4 output from a 4x4 input with one row and column of padding before.)
    ConvLayer dw{0x32000, true, 0, ConvGeometry{2, 2, 1, 1, 1, 1, 1, 1}, OutputStage{}};
    ConvLayer pw{0x33000, true, 0, ConvGeometry{}, OutputStage{}};
    REQUIRE(pair.depthwisePointwise(in, dw, mid, pw, out).ok());
    REQUIRE(pair.descriptors().size() == 2);
    const Descriptor producer = pair.descriptors()[0], consumer = pair.descriptors()[1];
    const uint32_t chainIn = static_cast<uint32_t>(DescFlag::CHAIN_IN);
    const uint32_t chainOut = static_cast<uint32_t>(DescFlag::CHAIN_OUT);

    struct BadChain {
        const char* what;
        std::vector<Descriptor> chain;
        uint32_t faulting;
    };
    Descriptor noReader = consumer;
    noReader.flags &= ~chainIn;
    Descriptor wideKernel = consumer;
    wideKernel.kernelW = 3;
    Descriptor otherShape = consumer;
    otherShape.a.count1 = 3;
    otherShape.out.count1 = 3;
    Descriptor chainedTwice = consumer;
    chainedTwice.flags |= chainOut;
    Descriptor poolProducer = producer;
    poolProducer.opcode = Opcode::MAXPOOL;
    poolProducer.flags = chainOut;
    // Float chaining: a DWCONV of whole channel blocks into a CONV of its format only. `bytes`
    // of A (and of a DWCONV's OUT), in `format`.
    const auto resized = [](Descriptor d, uint32_t bytes, Format format) {
        d.format = static_cast<uint32_t>(format);
        d.a.inner = bytes;
        if (d.opcode == Opcode::DWCONV) d.out.inner = bytes;
        return d;
    };
    const Descriptor floatProducer = resized(producer, 64, Format::FP32);
    const Descriptor floatConsumer = resized(consumer, 64, Format::FP32);
    Descriptor floatConvProducer = floatConsumer;
    floatConvProducer.flags = chainOut;
    const std::vector<BadChain> cases = {
        {"CHAIN_IN without a producer", {nop(), consumer}, 1},
        {"CHAIN_OUT followed by a plain descriptor", {producer, noReader}, 1},
        {"CHAIN_OUT followed by a NOP", {producer, nop(), consumer}, 1},
        {"CHAIN_IN with a 3-wide kernel", {producer, wideKernel}, 1},
        {"CHAIN_IN of another shape", {producer, otherShape}, 1},
        {"CHAIN_IN and CHAIN_OUT together", {producer, chainedTwice, consumer}, 1},
        {"CHAIN_OUT on pooling", {poolProducer, consumer}, 0},
        {"CHAIN_OUT on the last descriptor", {nop(), producer}, 1},
        {"a float producer, an 8-bit consumer",
         {floatProducer, resized(consumer, 64, Format::INT8)},
         1},
        {"an 8-bit producer, a float consumer",
         {resized(producer, 64, Format::INT8), floatConsumer},
         1},
        {"float CHAIN_OUT of a part channel block",  // half a block of binary32
         {resized(producer, 2 * kArrayCols, Format::FP32),
          resized(consumer, 2 * kArrayCols, Format::FP32)},
         0},
        {"float CHAIN_OUT on a CONV", {floatConvProducer, floatConsumer}, 0},
    };
    driver::HardwareAccess& hw = *testBench().npu;
    for (const BadChain& c : cases) {
        CAPTURE(c.what);
        ChainBuilder bad;
        for (const Descriptor& d : c.chain) {
            bad.append(d);
        }
        auto job = runJob(hw, bad, {0x10000, 0x11000, 0, 0x40000}, 1, kTimeout);
        checkFaultAndRecover(hw, job, ErrorCode::BAD_FIELD, c.faulting, 0x11000);
    }
}

TEST_CASE("sim_fault_dma_window") {
    driver::HardwareAccess& hw = *testBench().npu;
    SUBCASE("load outside the window") {
        ChainBuilder program;
        program.append(nop());
        REQUIRE(program.lookup({0x90000, 1, 1, 4, 40}, {0x21000, 1, 1, 4, 40}, 0x22000).ok());
        auto job = runJob(hw, program, {0x10000, 0x11000, 0x10000, 0x80000}, 1, kTimeout);
        REQUIRE(job.ok());
        CHECK(job->errorAddr >= 0x80000);
        checkFaultAndRecover(hw, job, ErrorCode::DMA_WINDOW, 1, 0x11000);
    }
    SUBCASE("store outside the window leaves memory untouched") {
        std::vector<uint8_t> guard(256, 0x3c);
        REQUIRE(hw.writeMemory(0x80000, guard.data(), guard.size()).ok());
        std::array<uint8_t, 256> table{};
        REQUIRE(hw.writeMemory(0x22000, table.data(), table.size()).ok());
        ChainBuilder program;
        REQUIRE(program.lookup({0x21000, 1, 1, 1, 64}, {0x80010, 1, 1, 1, 64}, 0x22000).ok());
        auto job = runJob(hw, program, {0x10000, 0x11000, 0x10000, 0x80000}, 1, kTimeout);
        REQUIRE(job.ok());
        CHECK(job->errorAddr == 0x80010);
        std::vector<uint8_t> after(guard.size());
        REQUIRE(hw.readMemory(0x80000, after.data(), after.size()).ok());
        CHECK(after == guard);
        checkFaultAndRecover(hw, job, ErrorCode::DMA_WINDOW, 0, 0x11000);
    }
    SUBCASE("prefetched weight stream outside the window names its own descriptor") {
        // The LUT's table streams while the convolution before it still computes (the weight
        // stream is prefetched); the fault belongs to the LUT, not to the running descriptor.
        DeviceArena arena(0x10000);
        const uint32_t in = arena.alloc(32 * 32 * 32);
        const uint32_t out = arena.alloc(32 * 32 * 32);
        const uint32_t weights = arena.alloc(convWeightStreamBytes(32, 3, 3, 32));
        const uint32_t limit = arena.used() + 0x1000;
        ChainBuilder program;
        ConvGeometry g;
        g.kernelH = g.kernelW = 3;
        g.padTop = g.padLeft = 1;
        REQUIRE(
            program
                .conv({in, 1, 32, 32, 32}, {out, 1, 32, 32, 32}, weights, true, 0, g, OutputStage{})
                .ok());
        const uint32_t convs = static_cast<uint32_t>(program.descriptors().size());
        REQUIRE(program.lookup({in, 1, 1, 1, 64}, {out, 1, 1, 1, 64}, limit + 0x100).ok());
        const uint32_t queue = arena.alloc(program.descriptors().size() * 128);
        const uint32_t record = arena.alloc(16);
        REQUIRE(arena.used() <= limit);
        auto job = runJob(hw, program, {queue, record, 0x10000, limit}, 1, kTimeout);
        REQUIRE(job.ok());
        CHECK(job->errorAddr == limit + 0x100);
        checkFaultAndRecover(hw, job, ErrorCode::DMA_WINDOW, convs, record);
    }
    SUBCASE("descriptor chain outside the window") {
        ChainBuilder program;
        program.append(nop());
        auto job = runJob(hw, program, {0x10000, 0x21000, 0x20000, 0x30000}, 1, kTimeout);
        REQUIRE(job.ok());
        CHECK(job->errorAddr == 0x10000);
        checkFaultAndRecover(hw, job, ErrorCode::DMA_WINDOW, 0, 0x21000);
    }
}

TEST_CASE("sim_fault_watchdog") {
    driver::HardwareAccess& hw = *testBench().npu;
    // A real convolution that needs far more than 300 cycles without retiring.
    DeviceArena arena;
    const uint32_t in = arena.alloc(32 * 32 * 32);
    const uint32_t out = arena.alloc(32 * 32 * 32);
    const uint32_t weights = arena.alloc(convWeightStreamBytes(32, 3, 3, 32));
    ChainBuilder program;
    ConvGeometry g;
    g.kernelH = g.kernelW = 3;
    g.padTop = g.padLeft = 1;
    REQUIRE(
        program.conv({in, 1, 32, 32, 32}, {out, 1, 32, 32, 32}, weights, true, 0, g, OutputStage{})
            .ok());
    const uint32_t queue = arena.alloc(program.descriptors().size() * 128);
    const uint32_t record = arena.alloc(16);
    hw.writeRegister(reg::kWatchdogLimit, 300);
    auto job = runJob(hw, program, {queue, record, 0, arena.used() + 16}, 1, kTimeout);
    hw.writeRegister(reg::kWatchdogLimit, reset::kWatchdogLimit);
    REQUIRE(job.ok());
    CHECK(job->cycles < 2000);  // stopped by the watchdog, not by the test's timeout
    checkFaultAndRecover(hw, job, ErrorCode::WATCHDOG, 0, record);
}

TEST_CASE("sim_fault_bad_queue") {
    driver::HardwareAccess& hw = *testBench().npu;
    hw.writeRegister(reg::kQueueBase, 0x10004);
    hw.writeRegister(reg::kDoorbell, 3);
    REQUIRE(hw.waitForInterrupt(1000));
    CHECK(hw.readRegister(reg::kErrorCode) == static_cast<uint32_t>(ErrorCode::BAD_QUEUE));
    CHECK(hw.readRegister(reg::kIrqStatus) == field::kIrqStatusError);
    softReset(hw);
    CHECK(deviceWorks(hw));
}

// A 3x3 convolution, 8x8x32 -> 8x8x32 (int8, per-channel), staged at `arena`: two output-channel
// blocks whose results stream through the requantizer to the store, 2,048 output bytes.
struct ConvJob {
    ConvCase c{};
    std::vector<uint8_t> input, weights;
    std::vector<ChannelQuant> quant;
    uint32_t outAddr = 0;
    ChainBuilder program;
};

ConvJob stageConv(driver::HardwareAccess& hw, DeviceArena& arena, std::mt19937& rng) {
    ConvJob j;
    ConvCase& c = j.c;
    c.h = c.w = c.outH = c.outW = 8;
    c.inC = c.outC = 32;
    c.g.kernelH = c.g.kernelW = 3;
    c.g.padTop = c.g.padLeft = 1;
    c.inSigned = c.wSigned = c.outSigned = true;
    c.inZero = 3;
    c.stage = {-5, -128, 127};
    j.input = randomBytes(rng, size_t{c.h} * c.w * c.inC);
    j.weights = randomBytes(rng, size_t{c.outC} * 9 * c.inC);
    j.quant.resize(c.outC);
    for (ChannelQuant& q : j.quant) {
        q.bias = static_cast<int32_t>(rng() % 20001) - 10000;
        q.multiplier = (1 << 30) + static_cast<int32_t>(rng() % (1u << 30));
        q.shift = -10 + static_cast<int32_t>(rng() % 3);
    }
    const std::vector<uint8_t> stream =
        packConvWeights(j.weights.data(), c.outC, 3, 3, c.inC, c.wZero, j.quant);
    const uint32_t inAddr = arena.alloc(j.input.size());
    const uint32_t wAddr = arena.alloc(stream.size());
    REQUIRE(hw.writeMemory(inAddr, j.input.data(), j.input.size()).ok());
    REQUIRE(hw.writeMemory(wAddr, stream.data(), stream.size()).ok());
    j.outAddr = arena.alloc(size_t{c.outH} * c.outW * c.outC);
    REQUIRE(j.program
                .conv({inAddr, 1, c.h, c.w, c.inC, 0, true, c.inZero},
                      {j.outAddr, 1, c.outH, c.outW, c.outC, 0, true, 0}, wAddr, true, c.wZero, c.g,
                      c.stage)
                .ok());
    return j;
}

// Output bytes of `j` that differ from the reference.
size_t convMismatches(driver::HardwareAccess& hw, const ConvJob& j) {
    const std::vector<uint8_t> want = referenceConv(j.c, j.input, j.weights, j.quant, false);
    std::vector<uint8_t> got(want.size());
    REQUIRE(hw.readMemory(j.outAddr, got.data(), got.size()).ok());
    size_t wrong = 0;
    for (size_t i = 0; i < want.size(); ++i) {
        if (got[i] != want[i] && wrong++ == 0) {
            MESSAGE("first wrong byte " << i << ": got " << int{got[i]} << " want "
                                        << int{want[i]});
        }
    }
    return wrong;
}

// Result words in flight when a job stops (requantized words of a CONV or an ADD, a pooled word)
// must not survive the soft reset: the next convolution is exact. Each job's store crosses the
// end of the DMA window halfway through its output, so the store stalls on the faulting beat
// with the pipeline behind it full; or the soft reset comes in the middle of a job's stores
// (the driver's deadline path), without a fault.
TEST_CASE("sim_fault_flush_clears_results_in_flight") {
    driver::HardwareAccess& hw = *testBench().npu;
    std::mt19937 rng(0xf1a5);
    // The queue and the record first: the window ends inside the output, the arena's last tensor.
    constexpr uint32_t kArenaBase = 0x200000;
    constexpr size_t kMaxDescriptors = 32;
    DeviceArena arena(kArenaBase);
    const uint32_t queue = arena.alloc(kMaxDescriptors * kDescriptorWords * 4);
    const uint32_t record = arena.alloc(kCompletionWords * 4);
    ChainBuilder first;
    uint32_t outAddr = 0;
    constexpr size_t outBytes = 2048;
    bool resetMidJob = false;

    SUBCASE("CONV store outside the window") {
        ConvJob j = stageConv(hw, arena, rng);
        first = j.program;
        outAddr = j.outAddr;
    }
    SUBCASE("ADD store outside the window") {
        const std::vector<uint8_t> a = randomBytes(rng, outBytes), b = randomBytes(rng, outBytes);
        const uint32_t aAddr = arena.alloc(outBytes), bAddr = arena.alloc(outBytes);
        REQUIRE(hw.writeMemory(aAddr, a.data(), a.size()).ok());
        REQUIRE(hw.writeMemory(bAddr, b.data(), b.size()).ok());
        outAddr = arena.alloc(outBytes);
        ChainBuilder::ElementwiseParams p;
        p.aMultiplier = p.bMultiplier = 1 << 30;
        p.aShift = p.bShift = 0;
        p.outMultiplier = 1 << 30;
        p.outShift = -19;
        p.stage = {0, -128, 127};
        REQUIRE(first
                    .elementwise(false, {aAddr, 1, 8, 8, 32, 0, true, 0},
                                 {bAddr, 1, 8, 8, 32, 0, true, 0},
                                 {outAddr, 1, 8, 8, 32, 0, true, 0}, p)
                    .ok());
    }
    SUBCASE("AVGPOOL store outside the window") {
        const std::vector<uint8_t> in = randomBytes(rng, 16 * 16 * 32);
        const uint32_t inAddr = arena.alloc(in.size());
        REQUIRE(hw.writeMemory(inAddr, in.data(), in.size()).ok());
        outAddr = arena.alloc(outBytes);
        ConvGeometry g;
        g.kernelH = g.kernelW = g.strideH = g.strideW = 2;
        REQUIRE(first
                    .pool(npu::Pooling::AVERAGE, {inAddr, 1, 16, 16, 32, 0, true, 0},
                          {outAddr, 1, 8, 8, 32, 0, true, 0}, g, {0, -128, 127})
                    .ok());
    }
    SUBCASE("soft reset while a CONV stores") {
        ConvJob j = stageConv(hw, arena, rng);
        first = j.program;
        outAddr = j.outAddr;
        resetMidJob = true;
    }
    REQUIRE(!first.empty());
    REQUIRE(first.descriptors().size() <= kMaxDescriptors);
    REQUIRE(outAddr + outBytes == arena.used());

    if (!resetMidJob) {
        // The window ends halfway through the output.
        const uint32_t limit = outAddr + static_cast<uint32_t>(outBytes / 2);
        auto job = runJob(hw, first, {queue, record, kArenaBase, limit}, 21, kTimeout);
        REQUIRE(job.ok());
        REQUIRE(job->interrupted);
        CHECK(job->errorCode == static_cast<uint32_t>(ErrorCode::DMA_WINDOW));
        CHECK(job->errorAddr >= limit);
        CHECK(job->errorAddr < outAddr + outBytes);
    } else {
        // The chain runs in the full window; the soft reset comes once 3/16 of the output is
        // written: inside the first output-channel block's stores (the first half of the output
        // at 16x16, the first quarter at 8x8), not between two blocks.
        std::vector<uint32_t> words;
        for (size_t i = 0; i < first.descriptors().size(); ++i) {
            Descriptor d = first.descriptors()[i];
            if (i + 1 == first.descriptors().size()) {
                d.flags |= static_cast<uint32_t>(DescFlag::LAST);
            }
            const DescriptorWords w = d.encode();
            words.insert(words.end(), w.begin(), w.end());
        }
        REQUIRE(hw.writeMemory(queue, words.data(), words.size() * 4).ok());
        const uint32_t written0 = hw.readRegister(reg::kPerfDmaWrLo);
        driver::startJob(hw, {queue, record, kArenaBase, arena.used()}, 22);
        uint32_t written = 0;
        const size_t resetAt = 3 * outBytes / 16;
        for (int i = 0; i < 100'000 && written < resetAt; ++i) {
            hw.advance(4);
            written = hw.readRegister(reg::kPerfDmaWrLo) - written0;
        }
        CHECK(written >= resetAt);
        CHECK(written < outBytes / 4);
        CHECK((hw.readRegister(reg::kStatus) & field::kStatusBusy) != 0);
    }
    driverSoftReset(hw);
    CHECK(hw.readRegister(reg::kStatus) == 0);

    // The next convolution, on other data, must be exact.
    DeviceArena next(0x400000);
    ConvJob j = stageConv(hw, next, rng);
    const JobResult done = runInArena(hw, j.program, next, 23, kTimeout);
    CHECK(done.descDone == j.program.descriptors().size());
    CHECK(convMismatches(hw, j) == 0);
}

}  // namespace
}  // namespace nncosim::sim::testing
