// ADD, MUL, LUT and pooling descriptors, and the DMA's strided copies, against references built
// on model/FixedPoint.h.
#include "sim/tests/NpuTestUtil.h"
#include "sim/tests/TestBench.h"

#include <doctest/doctest.h>

#include <algorithm>
#include <array>
#include <cstdlib>

namespace nncosim::sim::testing {
namespace {

using npu::DeviceTensor;

struct Shape {
    uint32_t n, h, w, c;
    size_t count() const { return size_t{n} * h * w * c; }
};

// Element (n, y, x, ch) of a dense tensor of shape s, broadcasting dimensions of size 1.
size_t broadcastIndex(const Shape& s, uint32_t n, uint32_t y, uint32_t x, uint32_t ch) {
    return ((size_t{s.n == 1 ? 0 : n} * s.h + (s.h == 1 ? 0 : y)) * s.w + (s.w == 1 ? 0 : x)) *
               s.c +
           ch;
}

Shape randomShape(std::mt19937& rng) {
    const auto pick = [&rng](uint32_t hi) { return 1 + static_cast<uint32_t>(rng() % hi); };
    return {pick(2), pick(6), pick(9), pick(40)};
}

TEST_CASE("sim_npu_add_mul_random") {
    driver::HardwareAccess& hw = *testBench().npu;
    for (int i = 0; i < 30; ++i) {
        std::mt19937 rng(0x5eed3001 + i);  // cases are independent
        if (const char* only = std::getenv("NNCOSIM_TEST_CASE"); only && std::atoi(only) != i) {
            continue;
        }
        const bool mul = i % 2;
        const Shape out = randomShape(rng);
        Shape sa = out, sb = out;
        if (rng() % 3 == 0) {  // broadcast one operand over some dimensions
            Shape& s = rng() % 2 ? sa : sb;
            s.n = rng() % 2 ? 1 : s.n;
            s.h = rng() % 2 ? 1 : s.h;
            s.w = rng() % 2 ? 1 : s.w;
        }
        const bool isSigned = rng() % 2;
        const int32_t lo = isSigned ? -128 : 0;
        const fixedpoint::QuantInfo qa{0.01f + (rng() % 100) * 0.002f,
                                       lo + static_cast<int32_t>(rng() % 256)};
        const fixedpoint::QuantInfo qb{0.01f + (rng() % 100) * 0.002f,
                                       lo + static_cast<int32_t>(rng() % 256)};
        const fixedpoint::QuantInfo qo{
            mul ? 0.5f + (rng() % 100) * 0.01f : 0.02f + (rng() % 100) * 0.003f,
            lo + static_cast<int32_t>(rng() % 256)};
        const FusedActivation activation = static_cast<FusedActivation>(rng() % 4);
        const auto range =
            fixedpoint::calculateActivationRange(activation, qo.scale, qo.zeroPoint, lo, lo + 255);
        REQUIRE(range.has_value());

        npu::ChainBuilder::ElementwiseParams params;
        fixedpoint::AddSubParams add{};
        fixedpoint::MulParams mulParams{};
        if (mul) {
            const auto p = fixedpoint::computeMulParams(qa, qb, qo, *range);
            REQUIRE(p.has_value());
            mulParams = *p;
            params = elementwiseParams(*p);
        } else {
            const bool subtract = rng() % 4 == 0;
            const auto p = fixedpoint::computeAddSubParams(qa, qb, qo, *range, subtract);
            REQUIRE(p.has_value());
            add = *p;
            params = elementwiseParams(*p);
        }

        DeviceArena arena;
        const std::vector<uint8_t> a = randomBytes(rng, sa.count());
        const std::vector<uint8_t> b = randomBytes(rng, sb.count());
        const uint32_t aAddr = arena.alloc(a.size() + 16) + rng() % 16;
        const uint32_t bAddr = arena.alloc(b.size() + 16) + rng() % 16;
        const uint32_t oAddr = arena.alloc(out.count() + 16) + rng() % 16;
        REQUIRE(hw.writeMemory(aAddr, a.data(), a.size()).ok());
        REQUIRE(hw.writeMemory(bAddr, b.data(), b.size()).ok());
        const std::vector<uint8_t> poison(out.count() + 2, 0x5a);
        REQUIRE(hw.writeMemory(oAddr - 1, poison.data(), poison.size()).ok());

        npu::ChainBuilder program;
        REQUIRE(program
                    .elementwise(mul, {aAddr, sa.n, sa.h, sa.w, sa.c, 0, isSigned, qa.zeroPoint},
                                 {bAddr, sb.n, sb.h, sb.w, sb.c, 0, isSigned, qb.zeroPoint},
                                 {oAddr, out.n, out.h, out.w, out.c, 0, isSigned, qo.zeroPoint},
                                 params)
                    .ok());
        CAPTURE(i);
        runInArena(hw, program, arena, 2, 10'000'000);

        std::vector<uint8_t> got(out.count() + 2);
        REQUIRE(hw.readMemory(oAddr - 1, got.data(), got.size()).ok());
        CHECK(got.front() == 0x5a);  // nothing written around the output
        CHECK(got.back() == 0x5a);
        uint32_t mismatches = 0;
        for (uint32_t n = 0; n < out.n; ++n) {
            for (uint32_t y = 0; y < out.h; ++y) {
                for (uint32_t x = 0; x < out.w; ++x) {
                    for (uint32_t ch = 0; ch < out.c; ++ch) {
                        const int32_t va = valueOf(a[broadcastIndex(sa, n, y, x, ch)], isSigned);
                        const int32_t vb = valueOf(b[broadcastIndex(sb, n, y, x, ch)], isSigned);
                        const int32_t want = mul ? fixedpoint::mulElement(va, vb, mulParams)
                                                 : fixedpoint::addSubElement(va, vb, add);
                        const size_t index = ((size_t{n} * out.h + y) * out.w + x) * out.c + ch;
                        if (got[1 + index] != static_cast<uint8_t>(want) && mismatches++ < 6) {
                            MESSAGE("first mismatch at " << n << "," << y << "," << x << "," << ch
                                                         << ": got " << int{got[1 + index]}
                                                         << " want " << want << " (a " << va
                                                         << ", b " << vb << ")");
                        }
                    }
                }
            }
        }
        CAPTURE(mul);
        CAPTURE(out.count());
        CAPTURE(sa.n * 1000000 + sa.h * 10000 + sa.w * 100 + sa.c);
        CAPTURE(sb.n * 1000000 + sb.h * 10000 + sb.w * 100 + sb.c);
        CAPTURE(out.n * 1000000 + out.h * 10000 + out.w * 100 + out.c);
        CHECK(mismatches == 0);
    }
}

TEST_CASE("sim_npu_lut_and_strided_copy") {
    // A table lookup through the load and store DMAs: with the identity table it is a strided
    // 3-D copy (any alignment, any row length), with a random table a lookup.
    std::mt19937 rng(0x5eed3002);
    driver::HardwareAccess& hw = *testBench().npu;
    for (int i = 0; i < 30; ++i) {
        const bool identity = i % 2 == 0;
        const uint32_t c = 1 + rng() % 70;
        const uint32_t w = 1 + rng() % 12;
        const uint32_t h = 1 + rng() % 5;
        // Source and destination pixels sit inside larger tensors (strided access).
        const uint32_t srcPixel = c + rng() % 20;
        const uint32_t dstPixel = c + rng() % 20;
        const uint32_t srcRow = w * srcPixel + rng() % 40;
        const uint32_t dstRow = w * dstPixel + rng() % 40;
        DeviceArena arena;
        std::array<uint8_t, 256> table{};
        for (int v = 0; v < 256; ++v) {
            table[v] = identity ? static_cast<uint8_t>(v) : static_cast<uint8_t>(rng());
        }
        const uint32_t tableAddr = arena.alloc(256);
        REQUIRE(hw.writeMemory(tableAddr, table.data(), 256).ok());
        const std::vector<uint8_t> src = randomBytes(rng, size_t{srcRow} * h);
        const uint32_t srcAddr = arena.alloc(src.size() + 16) + rng() % 16;
        const uint32_t dstAddr = arena.alloc(size_t{dstRow} * h + 16) + rng() % 16;
        REQUIRE(hw.writeMemory(srcAddr, src.data(), src.size()).ok());
        const std::vector<uint8_t> before = randomBytes(rng, size_t{dstRow} * h);
        REQUIRE(hw.writeMemory(dstAddr, before.data(), before.size()).ok());

        npu::ChainBuilder program;
        DeviceTensor in{srcAddr, 1, h, w, c, srcPixel, false, 0};
        in.pixelStride = srcPixel;
        DeviceTensor out{dstAddr, 1, h, w, c, dstPixel, false, 0};
        // Row strides beyond w * pixel: describe each image row as its own batch entry.
        in.n = h;
        in.h = 1;
        out.n = h;
        out.h = 1;
        // imageBytes() of a one-row image is its row stride.
        in.w = w;
        out.w = w;
        npu::ChainBuilder rows;
        for (uint32_t y = 0; y < h; ++y) {
            DeviceTensor ri = in, ro = out;
            ri.n = ro.n = 1;
            ri.addr = srcAddr + y * srcRow;
            ro.addr = dstAddr + y * dstRow;
            REQUIRE(rows.lookup(ri, ro, tableAddr).ok());
        }
        runInArena(hw, rows, arena, 3, 1'000'000);

        std::vector<uint8_t> got(before.size());
        REQUIRE(hw.readMemory(dstAddr, got.data(), got.size()).ok());
        std::vector<uint8_t> want = before;
        for (uint32_t y = 0; y < h; ++y) {
            for (uint32_t x = 0; x < w; ++x) {
                for (uint32_t ch = 0; ch < c; ++ch) {
                    want[y * dstRow + x * dstPixel + ch] =
                        table[src[y * srcRow + x * srcPixel + ch]];
                }
            }
        }
        CAPTURE(i);
        CAPTURE(c);
        CAPTURE(w);
        CAPTURE(h);
        CHECK(got == want);
    }
}

TEST_CASE("sim_npu_store_combines_rows_that_share_a_beat") {
    // A copy (the LUT with the identity table) of 20 rows of 12 bytes, read 16 bytes apart (so
    // the descriptor keeps its rows), into rows `gap` bytes apart: back to back (gap 0), a row's
    // last beat and the next row's first are one write beat (240 bytes: 15 beats, not 30);
    // 4 bytes apart, no two rows share a beat and each row writes its own. Either way the gaps
    // keep their bytes.
    driver::HardwareAccess& hw = *testBench().npu;
    constexpr uint32_t kRows = 20, kRow = 12, kSrcRow = 16;
    for (const uint32_t gap : {0u, 4u}) {
        CAPTURE(gap);
        std::mt19937 rng(0x5eed3004 + gap);
        DeviceArena arena;
        std::array<uint8_t, 256> table{};
        for (int v = 0; v < 256; ++v) table[v] = static_cast<uint8_t>(v);
        const uint32_t tableAddr = arena.alloc(256);
        REQUIRE(hw.writeMemory(tableAddr, table.data(), 256).ok());
        const std::vector<uint8_t> src = randomBytes(rng, kRows * kSrcRow);
        const uint32_t srcAddr = arena.alloc(src.size());
        REQUIRE(hw.writeMemory(srcAddr, src.data(), src.size()).ok());
        const uint32_t stride = kRow + gap;
        const std::vector<uint8_t> before = randomBytes(rng, kRows * stride);
        const uint32_t dstAddr = arena.alloc(before.size());
        REQUIRE(hw.writeMemory(dstAddr, before.data(), before.size()).ok());

        npu::ChainBuilder program;
        DeviceTensor in{srcAddr, 1, 1, kRows, kRow, kSrcRow, false, 0};
        DeviceTensor out{dstAddr, 1, 1, kRows, kRow, stride, false, 0};
        REQUIRE(program.lookup(in, out, tableAddr).ok());
        REQUIRE(program.descriptors().size() == 1);
        REQUIRE(program.descriptors()[0].out.inner == kRow);
        hw.writeRegister(npu::reg::kControl, npu::field::kControlPerfClear);
        runInArena(hw, program, arena);

        std::vector<uint8_t> got(before.size()), want = before;
        REQUIRE(hw.readMemory(dstAddr, got.data(), got.size()).ok());
        uint64_t apart = 0;  // the beats of the rows written one by one
        for (uint32_t r = 0; r < kRows; ++r) {
            std::copy_n(src.begin() + r * kSrcRow, kRow, want.begin() + r * stride);
            const uint32_t at = dstAddr + r * stride;
            apart += (at + kRow - 1) / 16 - at / 16 + 1;
        }
        CHECK(got == want);
        const uint64_t shared = (dstAddr % 16 + kRows * kRow + 15) / 16;
        if (gap == 0) CHECK(shared < apart);
        // Plus the completion record's beat.
        CHECK(hw.performanceCounters().dmaBytesWritten == ((gap == 0 ? shared : apart) + 1) * 16);
    }
}

TEST_CASE("sim_npu_pool_random") {
    std::mt19937 rng(0x5eed3003);
    driver::HardwareAccess& hw = *testBench().npu;
    for (int i = 0; i < 30; ++i) {
        const auto kind = static_cast<npu::Pooling>(i % 3);
        ConvCase c{};
        c.g.kernelH = 1 + rng() % 4;
        c.g.kernelW = 1 + rng() % 4;
        c.g.strideH = 1 + rng() % 3;
        c.g.strideW = 1 + rng() % 3;
        c.h = c.g.kernelH + rng() % 12;
        c.w = c.g.kernelW + rng() % 12;
        c.g.padTop = rng() % c.g.kernelH;
        c.g.padLeft = rng() % c.g.kernelW;
        c.outH = windowOutput(c.h, c.g.kernelH, c.g.strideH, 1, c.g.padTop, rng() % c.g.kernelH);
        c.outW = windowOutput(c.w, c.g.kernelW, c.g.strideW, 1, c.g.padLeft, rng() % c.g.kernelW);
        c.inC = c.outC = 1 + rng() % 40;
        c.inSigned = c.outSigned = rng() % 2;
        const int32_t lo = c.inSigned ? -128 : 0;
        c.stage.actMin = lo + (rng() % 3 == 0 ? static_cast<int32_t>(rng() % 100) : 0);
        c.stage.actMax = lo + 255 - (rng() % 3 == 0 ? static_cast<int32_t>(rng() % 100) : 0);

        DeviceArena arena;
        const std::vector<uint8_t> input = randomBytes(rng, size_t{c.h} * c.w * c.inC);
        const uint32_t inAddr = arena.alloc(input.size());
        const uint32_t outAddr = arena.alloc(size_t{c.outH} * c.outW * c.outC);
        REQUIRE(hw.writeMemory(inAddr, input.data(), input.size()).ok());
        npu::ChainBuilder program;
        REQUIRE(program
                    .pool(kind, {inAddr, 1, c.h, c.w, c.inC, 0, c.inSigned, 0},
                          {outAddr, 1, c.outH, c.outW, c.outC, 0, c.outSigned, 0}, c.g, c.stage)
                    .ok());
        CAPTURE(i);
        CAPTURE(static_cast<int>(kind));
        runInArena(hw, program, arena, 4, 10'000'000);
        std::vector<uint8_t> got(size_t{c.outH} * c.outW * c.outC);
        REQUIRE(hw.readMemory(outAddr, got.data(), got.size()).ok());
        CHECK(got == referencePool(c, input, kind));
    }
}

}  // namespace
}  // namespace nncosim::sim::testing
