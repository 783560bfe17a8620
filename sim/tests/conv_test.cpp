// CONV, DWCONV and FULLY_CONNECTED descriptors on the NPU against the C++ reference built on
// model/FixedPoint.h, bit for bit, on random shapes (channel counts that are not multiples of
// the array size, padding, strides, dilation, groups, both 8-bit types).
#include "sim/tests/NpuTestUtil.h"
#include "sim/tests/TestBench.h"

#include <doctest/doctest.h>

#include <algorithm>
#include <array>
#include <cstdlib>
#include <string>

namespace nncosim::sim::testing {
namespace {

using npu::ChannelQuant;
using npu::DeviceTensor;

std::vector<ChannelQuant> randomQuant(std::mt19937& rng, uint32_t channels, uint32_t k,
                                      bool perChannel) {
    // Scales that keep most outputs inside the 8-bit range for accumulators of ~sqrt(k) * 2^14.
    int targetShift = -7;
    for (uint32_t v = k; v > 1; v /= 4) {
        --targetShift;
    }
    std::vector<ChannelQuant> quant(channels);
    for (uint32_t oc = 0; oc < channels; ++oc) {
        if (oc > 0 && !perChannel) {
            quant[oc] = quant[0];
            continue;
        }
        quant[oc].bias = static_cast<int32_t>(rng() % 20001) - 10000;
        quant[oc].multiplier = (1 << 30) + static_cast<int32_t>(rng() % (1u << 30));
        quant[oc].shift = targetShift + static_cast<int32_t>(rng() % 5) - 2;
    }
    return quant;
}

// NNCOSIM_TEST_SEED replaces a random test's fixed seed (to explore more cases by hand).
uint32_t testSeed(uint32_t fixed) {
    const char* seed = std::getenv("NNCOSIM_TEST_SEED");
    return seed ? static_cast<uint32_t>(std::atoi(seed)) : fixed;
}

npu::OutputStage randomStage(std::mt19937& rng, bool isSigned) {
    npu::OutputStage s;
    const int32_t lo = isSigned ? -128 : 0;
    s.zeroPoint = lo + static_cast<int32_t>(rng() % 256);
    s.actMin = lo;
    s.actMax = lo + 255;
    if (rng() % 3 == 0) {  // a fused RELU-like clamp
        s.actMin = std::clamp(s.zeroPoint, lo, lo + 255);
    }
    if (rng() % 5 == 0) {
        s.actMax = std::min(lo + 255, s.actMin + 100);
    }
    return s;
}

struct CaseResult {
    bool ok = false;
    uint32_t mismatches = 0;
    uint64_t cycles = 0;
};

// Runs one (grouped, depthwise or plain) convolution and compares every output byte. `planar`:
// the input lies in DRAM as NCHW planes, which a plain convolution loads with A_PLANAR.
CaseResult runConv(const ConvCase& c, uint32_t groups, bool depthwise, bool perChannel,
                   std::mt19937& rng, bool taps = false, bool planar = false) {
    driver::HardwareAccess& hw = *testBench().npu;
    DeviceArena arena;
    const uint32_t inCg = depthwise ? 1 : c.inC / groups;
    const uint32_t outCg = depthwise ? c.outC : c.outC / groups;
    const std::vector<uint8_t> input = randomBytes(rng, size_t{c.h} * c.w * c.inC);
    const size_t weightCount = depthwise ? size_t{c.g.kernelH} * c.g.kernelW * c.outC
                                         : size_t{c.outC} * c.g.kernelH * c.g.kernelW * inCg;
    const std::vector<uint8_t> weights = randomBytes(rng, weightCount);
    const std::vector<ChannelQuant> quant =
        randomQuant(rng, c.outC, c.g.kernelH * c.g.kernelW * inCg, perChannel);

    const uint32_t inAddr = arena.alloc(input.size() + 1);
    const uint32_t outAddr = arena.alloc(size_t{c.outH} * c.outW * c.outC + 1);
    const uint32_t plane = c.h * c.w;
    std::vector<uint8_t> stored = input;
    if (planar) {
        for (uint32_t p = 0; p < plane; ++p) {
            for (uint32_t ch = 0; ch < c.inC; ++ch) stored[ch * plane + p] = input[p * c.inC + ch];
        }
    }
    REQUIRE(hw.writeMemory(inAddr, stored.data(), stored.size()).ok());
    const std::vector<uint8_t> poison(size_t{c.outH} * c.outW * c.outC, 0xa5);
    REQUIRE(hw.writeMemory(outAddr, poison.data(), poison.size()).ok());

    npu::ChainBuilder program;
    DeviceTensor in{inAddr, 1, c.h, c.w, c.inC, 0, c.inSigned, c.inZero};
    if (planar) {
        REQUIRE((!depthwise && groups == 1));
        in.pixelStride = 1;
        in.planeStride = plane;
    }
    DeviceTensor out{outAddr, 1, c.outH, c.outW, c.outC, 0, c.outSigned, 0};
    if (depthwise) {
        const std::vector<uint8_t> stream = npu::packDepthwiseWeights(
            weights.data(), c.outC, c.g.kernelH, c.g.kernelW, c.wZero, quant, taps);
        const uint32_t wAddr = arena.alloc(stream.size());
        REQUIRE(hw.writeMemory(wAddr, stream.data(), stream.size()).ok());
        REQUIRE(program.depthwise(in, out, wAddr, c.wSigned, c.wZero, c.g, c.stage, taps).ok());
    } else {
        for (uint32_t g = 0; g < groups; ++g) {
            // Group g: its slices of the channels, weights and quantization.
            const std::vector<ChannelQuant> groupQuant(quant.begin() + g * outCg,
                                                       quant.begin() + (g + 1) * outCg);
            const size_t perGroup = size_t{outCg} * c.g.kernelH * c.g.kernelW * inCg;
            const std::vector<uint8_t> stream =
                npu::packConvWeights(weights.data() + g * perGroup, outCg, c.g.kernelH, c.g.kernelW,
                                     inCg, c.wZero, groupQuant);
            const uint32_t wAddr = arena.alloc(stream.size());
            REQUIRE(hw.writeMemory(wAddr, stream.data(), stream.size()).ok());
            DeviceTensor gin = in;
            gin.addr = inAddr + g * inCg;
            gin.c = inCg;
            gin.pixelStride = planar ? 1 : c.inC;
            DeviceTensor gout = out;
            gout.addr = outAddr + g * outCg;
            gout.c = outCg;
            gout.pixelStride = c.outC;
            REQUIRE(program.conv(gin, gout, wAddr, c.wSigned, c.wZero, c.g, c.stage).ok());
        }
    }
    const npu::JobResult job = runInArena(hw, program, arena);

    std::vector<uint8_t> got(poison.size());
    REQUIRE(hw.readMemory(outAddr, got.data(), got.size()).ok());

    // The reference per group on channel slices, assembled into the full output.
    std::vector<uint8_t> want(got.size());
    if (depthwise) {
        want = referenceConv(c, input, weights, quant, true);
    } else {
        for (uint32_t g = 0; g < groups; ++g) {
            ConvCase gc = c;
            gc.inC = inCg;
            gc.outC = outCg;
            std::vector<uint8_t> gin(size_t{c.h} * c.w * inCg);
            for (size_t p = 0; p < size_t{c.h} * c.w; ++p) {
                std::copy_n(&input[p * c.inC + g * inCg], inCg, &gin[p * inCg]);
            }
            const size_t perGroup = size_t{outCg} * c.g.kernelH * c.g.kernelW * inCg;
            const std::vector<uint8_t> gw(weights.begin() + g * perGroup,
                                          weights.begin() + (g + 1) * perGroup);
            const std::vector<ChannelQuant> gq(quant.begin() + g * outCg,
                                               quant.begin() + (g + 1) * outCg);
            const std::vector<uint8_t> gout = referenceConv(gc, gin, gw, gq, false);
            for (size_t p = 0; p < size_t{c.outH} * c.outW; ++p) {
                std::copy_n(&gout[p * outCg], outCg, &want[p * c.outC + g * outCg]);
            }
        }
    }
    CaseResult result;
    result.cycles = job.cycles;
    for (size_t i = 0; i < want.size(); ++i) {
        if (got[i] != want[i]) {
            if (result.mismatches == 0) {
                MESSAGE("first mismatch at byte " << i << " (pixel " << i / c.outC << ", channel "
                                                  << i % c.outC << "): got " << int{got[i]}
                                                  << " want " << int{want[i]});
            }
            ++result.mismatches;
        }
    }
    result.ok = result.mismatches == 0;
    return result;
}

ConvCase randomCase(std::mt19937& rng, uint32_t maxSize, uint32_t maxChannels, uint32_t maxKernel) {
    const auto pick = [&rng](uint32_t lo, uint32_t hi) { return lo + rng() % (hi - lo + 1); };
    ConvCase c{};
    c.g.kernelH = pick(1, maxKernel);
    c.g.kernelW = pick(1, maxKernel);
    c.g.strideH = pick(1, 3);
    c.g.strideW = pick(1, 3);
    c.g.dilationH = rng() % 4 == 0 ? 2 : 1;
    c.g.dilationW = rng() % 4 == 0 ? 2 : 1;
    const uint32_t spanH = (c.g.kernelH - 1) * c.g.dilationH + 1;
    const uint32_t spanW = (c.g.kernelW - 1) * c.g.dilationW + 1;
    c.h = pick(spanH, std::max(spanH, maxSize));
    c.w = pick(spanW, std::max(spanW, maxSize));
    c.g.padTop = pick(0, spanH - 1);
    c.g.padLeft = pick(0, spanW - 1);
    const uint32_t padBottom = pick(0, spanH - 1);
    const uint32_t padRight = pick(0, spanW - 1);
    c.outH = windowOutput(c.h, c.g.kernelH, c.g.strideH, c.g.dilationH, c.g.padTop, padBottom);
    c.outW = windowOutput(c.w, c.g.kernelW, c.g.strideW, c.g.dilationW, c.g.padLeft, padRight);
    c.inC = pick(1, maxChannels);
    c.outC = pick(1, maxChannels);
    c.inSigned = rng() % 2;
    c.wSigned = c.inSigned || rng() % 2;  // per-channel weights are int8 with uint8 inputs too
    c.outSigned = c.inSigned;
    c.inZero = (c.inSigned ? -128 : 0) + static_cast<int32_t>(rng() % 256);
    c.wZero = c.wSigned ? (rng() % 2 ? 0 : static_cast<int32_t>(rng() % 256) - 128)
                        : static_cast<int32_t>(rng() % 256);
    c.stage = randomStage(rng, c.outSigned);
    return c;
}

TEST_CASE("sim_npu_conv_1x1_single_block") {
    std::mt19937 rng(11);
    ConvCase c{};
    c.h = 4;
    c.w = 4;
    c.inC = npu::kArrayRows;
    c.outC = npu::kArrayCols;
    c.outH = 4;
    c.outW = 4;
    c.stage = {0, -128, 127};
    c.inSigned = c.wSigned = c.outSigned = true;
    const CaseResult r = runConv(c, 1, false, true, rng);
    CHECK(r.ok);
}

TEST_CASE("sim_npu_conv_random") {
    std::mt19937 rng(0x5eed2001);
    for (int i = 0; i < 40; ++i) {
        const ConvCase c = randomCase(rng, 14, 40, 4);
        CAPTURE(i);
        CAPTURE(c.h);
        CAPTURE(c.w);
        CAPTURE(c.inC);
        CAPTURE(c.outC);
        CAPTURE(c.g.kernelH);
        CAPTURE(c.g.kernelW);
        CAPTURE(c.g.strideH);
        CAPTURE(c.g.strideW);
        CAPTURE(c.g.dilationH);
        CAPTURE(c.g.dilationW);
        CAPTURE(c.g.padTop);
        CAPTURE(c.g.padLeft);
        const CaseResult r = runConv(c, 1, false, rng() % 2, rng);
        CHECK(r.mismatches == 0);
    }
}

TEST_CASE("sim_npu_conv_packed_taps") {
    // Few input channels: the descriptors pack several taps into a K step (DescFlag::PACK), one
    // read port per tap, padding and dilation per tap; kernels up to 7x7 as a ResNet stem's.
    std::mt19937 rng(0x5eed2003);
    for (int i = 0; i < 30; ++i) {
        ConvCase c = randomCase(rng, 16, 8, 7);
        c.inC = 1 + rng() % (npu::kArrayRows / 2);
        if (c.g.kernelH * c.g.kernelW == 1) {  // one tap packs nothing
            c.g.kernelW = 2;
            c.w = std::max(c.w, 3u);
            c.outW = windowOutput(c.w, 2, c.g.strideW, c.g.dilationW, c.g.padLeft, 0);
        }
        CAPTURE(i);
        CAPTURE(c.h);
        CAPTURE(c.w);
        CAPTURE(c.inC);
        CAPTURE(c.outC);
        CAPTURE(c.g.kernelH);
        CAPTURE(c.g.kernelW);
        CAPTURE(c.g.strideH);
        CAPTURE(c.g.strideW);
        CAPTURE(c.g.dilationH);
        CAPTURE(c.g.dilationW);
        CAPTURE(c.g.padTop);
        CAPTURE(c.g.padLeft);
        REQUIRE(npu::ConvWeightRows(c.inC, c.g.kernelH, c.g.kernelW).packed);
        const CaseResult r = runConv(c, 1, false, rng() % 2, rng);
        CHECK(r.mismatches == 0);
    }
}

// The input-stall cycles that 32 more image rows of 64 3-channel pixels add to a 3x3/2 stem
// (NHWC pixels back to back, or NCHW planes with `planar`). Each job is one tile, so the array
// waits for the whole load.
uint64_t extraImageWait(uint32_t seed, bool planar) {
    std::mt19937 rng(seed);
    driver::HardwareAccess& hw = *testBench().npu;
    uint64_t waited[2] = {};
    const uint32_t heights[2] = {17, 49};
    for (int run = 0; run < 2; ++run) {
        ConvCase c{};
        c.h = heights[run];
        c.w = 64;
        c.inC = 3;
        c.outC = 8;
        c.g.kernelH = c.g.kernelW = 3;
        c.g.strideH = c.g.strideW = 2;
        c.g.padTop = c.g.padLeft = 1;
        c.outH = windowOutput(c.h, 3, 2, 1, 1, 1);
        c.outW = windowOutput(c.w, 3, 2, 1, 1, 1);
        c.stage = randomStage(rng, false);
        hw.writeRegister(npu::reg::kControl, npu::field::kControlPerfClear);
        CHECK(runConv(c, 1, false, false, rng, false, planar).ok);
        waited[run] = hw.performanceCounters().stallInputCycles;
    }
    CAPTURE(waited[0]);
    CAPTURE(waited[1]);
    return waited[1] - waited[0];
}

TEST_CASE("sim_npu_conv_image_loads_a_pixel_a_cycle") {
    // The load reads each beat once and writes a word per pixel, one a cycle, also for the two
    // pixels in 16 that cross into the next beat (npu_dma_load): 32 more image rows of 64 pixels
    // wait 2,048 cycles more, not 2,304.
    CHECK(extraImageWait(0x5eed2005, false) <= 32 * 64 + 16);
}

TEST_CASE("sim_npu_conv_planar_input") {
    // NCHW planes of 1-4 channels (A_PLANAR), with PACK where the kernel allows it, plane
    // strides of any alignment: the same bytes as from an NHWC input, every descriptor planar.
    std::mt19937 rng(testSeed(0x5eed2006));
    for (int i = 0; i < 16; ++i) {
        ConvCase c = randomCase(rng, 20, 4, 5);
        c.inC = 1 + rng() % 4;
        CAPTURE(i);
        CAPTURE(c.h);
        CAPTURE(c.w);
        CAPTURE(c.inC);
        CAPTURE(c.outC);
        CAPTURE(c.g.kernelH);
        CAPTURE(c.g.kernelW);
        CAPTURE(c.g.strideW);
        const CaseResult r = runConv(c, 1, false, rng() % 2, rng, false, true);
        CHECK(r.mismatches == 0);
    }
    npu::ChainBuilder program;
    DeviceTensor in{0x1000, 1, 30, 30, 3, 1, false, 0, 900};
    REQUIRE(program.conv(in, {0x8000, 1, 28, 28, 8}, 0x10000, false, 0, {3, 3}, {}).ok());
    for (const npu::Descriptor& d : program.descriptors()) {
        CHECK(d.aPlanar);
        CHECK(d.a.stride3 == 900);
    }
}

TEST_CASE("sim_npu_conv_planar_image_rate") {
    // The same image in three planes: one in 16 pixels needs a new beat in each plane, and takes
    // them at once, so the load writes a pixel a cycle: 2,048 cycles more again (2,304 when such
    // a pixel takes a step per beat).
    CHECK(extraImageWait(0x5eed2007, true) <= 32 * 64 + 16);
}

TEST_CASE("sim_npu_conv_groups") {
    std::mt19937 rng(0x5eed2002);
    for (int i = 0; i < 12; ++i) {
        ConvCase c = randomCase(rng, 10, 12, 3);
        const uint32_t groups = 2 + rng() % 3;
        c.inC = groups * (1 + rng() % 12);
        c.outC = groups * (1 + rng() % 12);
        CAPTURE(i);
        CAPTURE(groups);
        CAPTURE(c.inC);
        CAPTURE(c.outC);
        CHECK(runConv(c, groups, false, true, rng).ok);
    }
}

TEST_CASE("sim_npu_depthwise_random") {
    // Both mappings: TAPS where the kernel allows it (most cases), diagonal blocks otherwise
    // and in every third eligible case.
    std::mt19937 rng(0x5eed2003);
    int tapsCases = 0;
    for (int i = 0; i < 30; ++i) {
        ConvCase c = randomCase(rng, 14, 48, 5);
        c.outC = c.inC;
        if (i % 2 == 0) {
            c.g.dilationW = 1;  // make TAPS possible more often
            c.g.padLeft = std::min(c.g.padLeft, c.g.kernelW - 1);
            c.outW = windowOutput(c.w, c.g.kernelW, c.g.strideW, 1, c.g.padLeft, 0);
        }
        const bool taps = npu::depthwiseUsesTaps(c.g) && i % 3 != 0;
        tapsCases += taps;
        CAPTURE(taps);
        CAPTURE(i);
        CAPTURE(c.h);
        CAPTURE(c.w);
        CAPTURE(c.inC);
        CAPTURE(c.g.kernelH);
        CAPTURE(c.g.kernelW);
        CAPTURE(c.g.strideH);
        CAPTURE(c.g.strideW);
        CHECK(runConv(c, 1, true, rng() % 2, rng, taps).ok);
    }
    CHECK(tapsCases >= 5);
}

// A residual connection (DescFlag::RESIDUAL) on a convolution of `pixels` x `channels` results
// with zero point `midZero`: the tensor B at `addr`, random scales and clamp, the ADD's
// parameters as the driver computes them.
struct ResidualCase {
    std::vector<uint8_t> b;
    fixedpoint::AddSubParams params;
    npu::ChainBuilder::Residual spec;

    /// The ADD of the convolution's results `conv` (its words) and B, as the golden adds.
    std::vector<uint8_t> added(const std::vector<uint8_t>& conv, bool isSigned) const {
        std::vector<uint8_t> out(conv.size());
        const auto value = [isSigned](uint8_t v) {
            return isSigned ? int32_t{static_cast<int8_t>(v)} : int32_t{v};
        };
        for (size_t i = 0; i < conv.size(); ++i)
            out[i] = static_cast<uint8_t>(
                fixedpoint::addSubElement(value(conv[i]), value(b[i]), params));
        return out;
    }
};

ResidualCase randomResidual(std::mt19937& rng, uint32_t h, uint32_t w, uint32_t channels,
                            bool isSigned, int32_t midZero, uint32_t addr) {
    const int32_t lo = isSigned ? -128 : 0;
    const auto scale = [&rng] { return 0.01f + static_cast<float>(rng() % 1000) / 2000.0f; };
    ResidualCase r;
    r.b = randomBytes(rng, size_t{h} * w * channels);
    const int32_t bZero = lo + static_cast<int32_t>(rng() % 256);
    const npu::OutputStage out = randomStage(rng, isSigned);
    auto params =
        fixedpoint::computeAddSubParams({scale(), midZero}, {scale(), bZero},
                                        {scale(), out.zeroPoint}, {out.actMin, out.actMax}, false);
    REQUIRE(params);
    r.params = *params;
    r.spec.tensor = DeviceTensor{addr, 1, h, w, channels, 0, isSigned, bZero};
    r.spec.midZeroPoint = midZero;
    r.spec.params = {fixedpoint::AddSubParams::kLeftShift,
                     params->input1.multiplier,
                     params->input1.shift,
                     params->input2.multiplier,
                     params->input2.shift,
                     params->output.multiplier,
                     params->output.shift,
                     {params->outputOffset, params->range.min, params->range.max}};
    return r;
}

TEST_CASE("sim_npu_conv_residual") {
    // A convolution whose drain adds a residual tensor as ADD does (RESIDUAL): B loaded after
    // the input region; kernels, strides, padding, both types, several tiles.
    // The first case's tiles load one word per pixel and drain four blocks: the next tile but
    // one loads into the buffer whose B the last blocks still read, unless the load waits.
    std::mt19937 rng(testSeed(0x5eed2009));
    for (int i = 0; i < 16; ++i) {
        ConvCase c = randomCase(rng, i < 2 ? 48 : 14, 40, 3);
        if (i == 0) {
            c.g = npu::ConvGeometry{};
            c.h = c.w = c.outH = c.outW = 40;
            c.inC = npu::kArrayRows;
            c.outC = 4 * npu::kArrayCols;
        }
        c.inC = std::max(c.inC, npu::kArrayRows / 2 + 1);  // no PACK
        c.outSigned = c.inSigned;
        c.stage = randomStage(rng, c.outSigned);
        c.stage.actMin = c.outSigned ? -128 : 0;  // the ADD takes the result unclamped
        c.stage.actMax = c.stage.actMin + 255;
        CAPTURE(i);
        CAPTURE(c.h);
        CAPTURE(c.w);
        CAPTURE(c.inC);
        CAPTURE(c.outC);
        CAPTURE(c.g.kernelH);
        CAPTURE(c.g.strideH);
        driver::HardwareAccess& hw = *testBench().npu;
        DeviceArena arena;
        const std::vector<uint8_t> input = randomBytes(rng, size_t{c.h} * c.w * c.inC);
        const std::vector<uint8_t> weights =
            randomBytes(rng, size_t{c.outC} * c.g.kernelH * c.g.kernelW * c.inC);
        const std::vector<ChannelQuant> quant =
            randomQuant(rng, c.outC, c.g.kernelH * c.g.kernelW * c.inC, rng() % 2);
        const size_t outBytes = size_t{c.outH} * c.outW * c.outC;
        const uint32_t inAddr = arena.alloc(input.size()), outAddr = arena.alloc(outBytes);
        const ResidualCase res = randomResidual(rng, c.outH, c.outW, c.outC, c.outSigned,
                                                c.stage.zeroPoint, arena.alloc(outBytes));
        const std::vector<uint8_t> stream = npu::packConvWeights(
            weights.data(), c.outC, c.g.kernelH, c.g.kernelW, c.inC, c.wZero, quant);
        const uint32_t wAddr = arena.alloc(stream.size());
        REQUIRE(hw.writeMemory(inAddr, input.data(), input.size()).ok());
        REQUIRE(hw.writeMemory(res.spec.tensor.addr, res.b.data(), res.b.size()).ok());
        REQUIRE(hw.writeMemory(wAddr, stream.data(), stream.size()).ok());
        npu::ChainBuilder program;
        REQUIRE(program
                    .conv({inAddr, 1, c.h, c.w, c.inC, 0, c.inSigned, c.inZero},
                          {outAddr, 1, c.outH, c.outW, c.outC, 0, c.outSigned, 0}, wAddr, c.wSigned,
                          c.wZero, c.g, c.stage, 0, res.spec)
                    .ok());
        CHECK((program.descriptors().front().flags &
               static_cast<uint32_t>(npu::DescFlag::RESIDUAL)) != 0);
        runInArena(hw, program, arena);
        std::vector<uint8_t> got(outBytes);
        REQUIRE(hw.readMemory(outAddr, got.data(), got.size()).ok());
        CHECK(got == res.added(referenceConv(c, input, weights, quant, false), c.outSigned));
    }
}

// A depthwise layer fused with the 1x1 convolution after it (CHAIN_OUT / CHAIN_IN), and with
// `expandFrom` > 0 with a 1x1 expansion from that many channels before it too, and with
// `residual` a residual tensor added in the 1x1 convolution's drain: the output must equal the
// references applied one after the other, and the intermediate tensors must never reach DRAM.
// Unfused (the intermediates through DRAM) runs the same layers as descriptor sequences of their
// own, for comparison.
void runDepthwisePointwise(const ConvCase& dwCase, uint32_t outC, std::mt19937& rng,
                           bool fused = true, uint32_t expandFrom = 0, bool residual = false) {
    CAPTURE(fused);
    CAPTURE(expandFrom);
    CAPTURE(residual);
    driver::HardwareAccess& hw = *testBench().npu;
    DeviceArena arena;
    const uint32_t c = dwCase.inC;
    // The expansion: from expandFrom channels to the depthwise layer's input.
    ConvCase eCase{};
    eCase.h = eCase.outH = dwCase.h;
    eCase.w = eCase.outW = dwCase.w;
    eCase.inC = std::max(expandFrom, 1u);
    eCase.outC = c;
    eCase.inSigned = eCase.wSigned = eCase.outSigned = dwCase.inSigned;
    eCase.inZero = (eCase.inSigned ? -128 : 0) + static_cast<int32_t>(rng() % 256);
    eCase.wZero = eCase.wSigned ? 0 : static_cast<int32_t>(rng() % 256);
    eCase.stage = randomStage(rng, eCase.outSigned);
    ConvCase dwIn = dwCase;  // the depthwise input's zero point is the expansion's output's
    if (expandFrom > 0) dwIn.inZero = eCase.stage.zeroPoint;
    const std::vector<uint8_t> eInput = randomBytes(rng, size_t{dwCase.h} * dwCase.w * eCase.inC);
    const std::vector<uint8_t> eWeights = randomBytes(rng, size_t{c} * eCase.inC);
    const std::vector<ChannelQuant> eQuant = randomQuant(rng, c, eCase.inC, rng() % 2);
    const std::vector<uint8_t> input = expandFrom > 0
                                           ? referenceConv(eCase, eInput, eWeights, eQuant, false)
                                           : randomBytes(rng, size_t{dwCase.h} * dwCase.w * c);
    const std::vector<uint8_t> dwWeights =
        randomBytes(rng, size_t{dwCase.g.kernelH} * dwCase.g.kernelW * c);
    const std::vector<ChannelQuant> dwQuant =
        randomQuant(rng, c, dwCase.g.kernelH * dwCase.g.kernelW, rng() % 2);
    ConvCase pwCase{};
    pwCase.h = pwCase.outH = dwCase.outH;
    pwCase.w = pwCase.outW = dwCase.outW;
    pwCase.inC = c;
    pwCase.outC = outC;
    pwCase.inSigned = pwCase.wSigned = pwCase.outSigned = dwCase.outSigned;
    pwCase.inZero = dwCase.stage.zeroPoint;
    pwCase.wZero = pwCase.wSigned ? 0 : static_cast<int32_t>(rng() % 256);
    pwCase.stage = randomStage(rng, pwCase.outSigned);
    if (residual) {  // the ADD takes the result unclamped
        pwCase.stage.actMin = pwCase.outSigned ? -128 : 0;
        pwCase.stage.actMax = pwCase.stage.actMin + 255;
    }
    const std::vector<uint8_t> pwWeights = randomBytes(rng, size_t{outC} * c);
    const std::vector<ChannelQuant> pwQuant = randomQuant(rng, outC, c, rng() % 2);

    const size_t outBytes = size_t{dwCase.outH} * dwCase.outW * outC;
    const size_t midBytes = size_t{dwCase.outH} * dwCase.outW * c;
    // The fused intermediates have no address (0); a guard pattern there must stay untouched.
    const std::vector<uint8_t> guard = randomBytes(rng, std::max(midBytes, input.size()));
    REQUIRE(hw.writeMemory(0, guard.data(), guard.size()).ok());
    const uint32_t midAddr = fused ? 0 : arena.alloc(midBytes);
    const uint32_t inAddr = fused && expandFrom > 0 ? 0 : arena.alloc(input.size());
    const uint32_t eInAddr = arena.alloc(eInput.size());
    const std::vector<uint8_t> eStream =
        npu::packConvWeights(eWeights.data(), c, 1, 1, eCase.inC, eCase.wZero, eQuant);
    const uint32_t eAddr = arena.alloc(eStream.size());
    REQUIRE(hw.writeMemory(eInAddr, eInput.data(), eInput.size()).ok());
    REQUIRE(hw.writeMemory(eAddr, eStream.data(), eStream.size()).ok());
    const uint32_t outAddr = arena.alloc(outBytes);
    const bool taps = npu::depthwiseUsesTaps(dwCase.g);
    CAPTURE(taps);
    const std::vector<uint8_t> dwStream = npu::packDepthwiseWeights(
        dwWeights.data(), c, dwCase.g.kernelH, dwCase.g.kernelW, dwCase.wZero, dwQuant, taps);
    const std::vector<uint8_t> pwStream =
        npu::packConvWeights(pwWeights.data(), outC, 1, 1, c, pwCase.wZero, pwQuant);
    const uint32_t dwAddr = arena.alloc(dwStream.size());
    const uint32_t pwAddr = arena.alloc(pwStream.size());
    if (expandFrom == 0) REQUIRE(hw.writeMemory(inAddr, input.data(), input.size()).ok());
    std::optional<ResidualCase> res;
    std::optional<npu::ChainBuilder::Residual> added;
    if (residual) {
        res = randomResidual(rng, dwCase.outH, dwCase.outW, outC, pwCase.outSigned,
                             pwCase.stage.zeroPoint, arena.alloc(outBytes));
        REQUIRE(hw.writeMemory(res->spec.tensor.addr, res->b.data(), res->b.size()).ok());
        added = res->spec;
    }
    REQUIRE(hw.writeMemory(dwAddr, dwStream.data(), dwStream.size()).ok());
    REQUIRE(hw.writeMemory(pwAddr, pwStream.data(), pwStream.size()).ok());
    const std::vector<uint8_t> poison(outBytes, 0xa5);
    REQUIRE(hw.writeMemory(outAddr, poison.data(), poison.size()).ok());

    npu::ChainBuilder program;
    const DeviceTensor in{inAddr, 1, dwCase.h, dwCase.w, c, 0, dwIn.inSigned, dwIn.inZero};
    const DeviceTensor eIn{eInAddr,   1, dwCase.h,       dwCase.w,
                           eCase.inC, 0, eCase.inSigned, eCase.inZero};
    const npu::ConvLayer expansion{eAddr, eCase.wSigned, eCase.wZero, npu::ConvGeometry{},
                                   eCase.stage};
    const DeviceTensor mid{midAddr, 1, dwCase.outH,      dwCase.outW,
                           c,       0, dwCase.outSigned, dwCase.stage.zeroPoint};
    const DeviceTensor out{outAddr, 1, dwCase.outH, dwCase.outW, outC, 0, pwCase.outSigned, 0};
    const npu::ConvLayer dw{dwAddr, dwCase.wSigned, dwCase.wZero, dwCase.g, dwCase.stage};
    const npu::ConvLayer pw{pwAddr, pwCase.wSigned, pwCase.wZero, npu::ConvGeometry{},
                            pwCase.stage};
    if (fused) {
        std::optional<npu::Expansion> before;
        if (expandFrom > 0) before = npu::Expansion{eIn, expansion};
        REQUIRE(program.depthwisePointwise(in, dw, mid, pw, out, before, added).ok());
    } else {
        if (expandFrom > 0) {
            REQUIRE(program
                        .conv(eIn, in, expansion.weights, expansion.weightsSigned,
                              expansion.weightZeroPoint, expansion.geometry, expansion.stage)
                        .ok());
            program.fence();
        }
        REQUIRE(program
                    .depthwise(in, mid, dw.weights, dw.weightsSigned, dw.weightZeroPoint,
                               dw.geometry, dw.stage, taps)
                    .ok());
        program.fence();
        REQUIRE(program
                    .conv(mid, out, pw.weights, pw.weightsSigned, pw.weightZeroPoint, pw.geometry,
                          pw.stage, 0, added)
                    .ok());
    }
    runInArena(hw, program, arena);

    std::vector<uint8_t> got(outBytes);
    REQUIRE(hw.readMemory(outAddr, got.data(), got.size()).ok());
    const std::vector<uint8_t> intermediate = referenceConv(dwIn, input, dwWeights, dwQuant, true);
    std::vector<uint8_t> want = referenceConv(pwCase, intermediate, pwWeights, pwQuant, false);
    if (res) want = res->added(want, pwCase.outSigned);
    size_t mismatches = 0;
    for (size_t i = 0; i < want.size(); ++i) {
        if (got[i] != want[i] && mismatches++ == 0) {
            MESSAGE("first mismatch at byte " << i << ": got " << int{got[i]} << " want "
                                              << int{want[i]});
        }
    }
    CHECK(mismatches == 0);
    if (fused) {
        std::vector<uint8_t> low(guard.size());
        REQUIRE(hw.readMemory(0, low.data(), low.size()).ok());
        CHECK(low == guard);
    }
}

TEST_CASE("sim_npu_depthwise_pointwise_chain") {
    std::mt19937 rng(testSeed(0x5eed2006));
    for (int i = 0; i < 16; ++i) {
        // Mostly TAPS (dilation 1); every fourth case dilated, so diagonal blocks.
        ConvCase c = randomCase(rng, 14, 48, 3);
        c.g.dilationW = i % 4 == 3 ? 2 : 1;
        c.w = std::max(c.w, (c.g.kernelW - 1) * c.g.dilationW + 1);
        c.g.padLeft = std::min(c.g.padLeft, c.g.kernelW - 1);
        c.outW = windowOutput(c.w, c.g.kernelW, c.g.strideW, c.g.dilationW, c.g.padLeft, 0);
        c.outC = c.inC;
        const uint32_t outC = 1 + rng() % 40;
        CAPTURE(i);
        CAPTURE(c.h);
        CAPTURE(c.w);
        CAPTURE(c.inC);
        CAPTURE(outC);
        CAPTURE(c.g.kernelH);
        CAPTURE(c.g.kernelW);
        CAPTURE(c.g.strideH);
        CAPTURE(c.g.strideW);
        const auto seed = rng();
        std::mt19937 a(seed), b(seed);
        runDepthwisePointwise(c, outC, a, false);
        runDepthwisePointwise(c, outC, b, true);
    }
}

TEST_CASE("sim_npu_expansion_depthwise_pointwise_chain") {
    // An inverted residual block: a 1x1 expansion, the depthwise layer (TAPS) and a 1x1
    // projection, fused into one chain per tile (the expansion recomputed over the rows the
    // tiles' regions share) against the layers run apart; both strides, several tiles.
    std::mt19937 rng(testSeed(0x5eed2008));
    for (int i = 0; i < 10; ++i) {
        ConvCase c = randomCase(rng, i < 2 ? 40 : 14, 48, 3);
        c.g.dilationH = c.g.dilationW = 1;
        c.g.strideH = c.g.strideW = 1 + i % 2;
        c.g.padTop = std::min(c.g.padTop, c.g.kernelH - 1);
        c.g.padLeft = std::min(c.g.padLeft, c.g.kernelW - 1);
        c.outH = windowOutput(c.h, c.g.kernelH, c.g.strideH, 1, c.g.padTop, 0);
        c.outW = windowOutput(c.w, c.g.kernelW, c.g.strideW, 1, c.g.padLeft, 0);
        c.outC = c.inC;
        const uint32_t expandFrom = 1 + rng() % c.inC, outC = 1 + rng() % 40;
        CAPTURE(i);
        CAPTURE(c.h);
        CAPTURE(c.w);
        CAPTURE(c.inC);
        CAPTURE(outC);
        CAPTURE(c.g.kernelH);
        CAPTURE(c.g.kernelW);
        CAPTURE(c.g.strideH);
        const auto seed = rng();
        std::mt19937 a(seed), b(seed);
        runDepthwisePointwise(c, outC, a, false, expandFrom);
        runDepthwisePointwise(c, outC, b, true, expandFrom);
    }
}

TEST_CASE("sim_npu_inverted_residual_chain") {
    // MobileNet-v2's block whole: expansion, depthwise and projection fused per tile, the block's
    // input added in the projection's drain (B loaded beside the chained words), stride 1.
    std::mt19937 rng(testSeed(0x5eed200a));
    for (int i = 0; i < 6; ++i) {
        ConvCase c = randomCase(rng, i < 2 ? 36 : 12, 48, 3);
        c.g = npu::ConvGeometry{3, 3, 1, 1, 1, 1, 1, 1};
        c.outH = c.h;
        c.outW = c.w;
        c.outC = c.inC;
        const uint32_t expandFrom = 1 + rng() % c.inC, outC = 1 + rng() % 40;
        CAPTURE(i);
        CAPTURE(c.h);
        CAPTURE(c.w);
        CAPTURE(c.inC);
        CAPTURE(outC);
        const auto seed = rng();
        std::mt19937 a(seed), b(seed), d(seed);
        runDepthwisePointwise(c, outC, a, false, expandFrom, true);
        runDepthwisePointwise(c, outC, b, true, expandFrom, true);
        runDepthwisePointwise(c, outC, d, true, 0, true);
    }
}

TEST_CASE("sim_npu_depthwise_pointwise_chain_tiled") {
    // Many tiles, each pair overlapping on the array; 40 channels leave the last word partial.
    std::mt19937 rng(0x5eed2007);
    ConvCase c{};
    c.h = 50;
    c.w = 47;
    c.inC = c.outC = 40;
    c.g = npu::ConvGeometry{3, 3, 1, 1, 1, 1, 1, 1};  // TAPS on 16 rows, diagonal on 8
    c.outH = c.h;
    c.outW = c.w;
    c.inSigned = c.wSigned = c.outSigned = true;
    c.inZero = -3;
    c.wZero = 0;
    c.stage = randomStage(rng, true);
    runDepthwisePointwise(c, 72, rng);
}

TEST_CASE("sim_program_fusion_pays") {
    // Fusion pays for TAPS depthwise layers where its time model (array steps against DRAM
    // words) says the fused tiles beat the two layers apart. (2x2 kernels: TAPS on 8x8 arrays
    // too.)
    const npu::ConvGeometry dw2x2{2, 2, 1, 1, 1, 1, 0, 0};
    const npu::ConvGeometry dilated{2, 2, 1, 1, 1, 2, 0, 0};
    const npu::ConvGeometry dw2x2s2{2, 2, 2, 2, 1, 1, 0, 0};
    constexpr auto kInt8 = static_cast<uint32_t>(npu::Format::INT8);
    CHECK(npu::depthwisePointwisePays({0, 1, 112, 112, 32}, dw2x2, {0, 1, 111, 111, 32},
                                      {0, 1, 111, 111, 64}, kInt8));
    CHECK_FALSE(npu::depthwisePointwisePays({0, 1, 112, 112, 32}, dilated, {0, 1, 111, 110, 32},
                                            {0, 1, 111, 110, 64}, kInt8));
    // 256 words per pixel: a buffer holds the 2x8 input pixels of four output pixels, so a 7x7
    // output takes 14 tiles.
    const uint32_t wide = npu::kSpadWords / 16 * npu::kDramBusBytes;
    const DeviceTensor in{0, 1, 14, 14, wide}, mid{0, 1, 7, 7, wide}, out{0, 1, 7, 7, 16};
    CHECK_FALSE(npu::depthwisePointwisePays(in, dw2x2s2, mid, out, kInt8));
    // Binary32 layers are bound by DRAM: 32 -> 64 channels at 112x112 pay (the pointwise weights
    // are 8 kB a tile, the intermediate 1.6 MB each way); 256 -> 256 at 28x28 does not (256 kB
    // of pointwise weights for each tile of a few dozen pixels).
    constexpr auto kFp32 = static_cast<uint32_t>(npu::Format::FP32);
    CHECK(npu::depthwisePointwisePays({0, 1, 112, 112, 128}, dw2x2, {0, 1, 111, 111, 128},
                                      {0, 1, 111, 111, 256}, kFp32));
    CHECK_FALSE(npu::depthwisePointwisePays({0, 1, 28, 28, 1024}, dw2x2, {0, 1, 27, 27, 1024},
                                            {0, 1, 27, 27, 1024}, kFp32));
    npu::ChainBuilder program;
    REQUIRE(program.depthwisePointwise(in, {0, true, 0, dw2x2s2, {}}, mid, {}, out).ok());
    CHECK(program.descriptors().size() == 2 * 14);
    // MobileNet-v2's stride-1 inverted residual blocks, as they measured on the RTL fused and
    // apart (docs/npu.md): the 28x28 ones run faster fused, the 56x56 and 14x14 ones slower, and
    // so does an expansion that does not widen.
    if (npu::kArrayRows == 16) {
        const npu::ConvGeometry dw3x3{3, 3, 1, 1, 1, 1, 1, 1};
        const auto fuses = [&](uint32_t side, uint32_t in, uint32_t mid, uint32_t out) {
            const DeviceTensor map{0, 1, side, side, mid};
            return npu::expansionPays({0, 1, side, side, in}, map, dw3x3, map,
                                      {0, 1, side, side, out});
        };
        // A map of one tile fuses (3x3x20 -> 24: 499 cycles against 605 apart on the RTL);
        // MobileNet-v2's stride-2 block at 14x14 -> 7x7 does not: its three fused tiles each
        // stream the 92 kB of projection weights, 31,886 cycles against 30,105 apart.
        const DeviceTensor tiny{0, 1, 3, 3, 20};
        CHECK(npu::depthwisePointwisePays(tiny, dw3x3, tiny, {0, 1, 3, 3, 24}, kInt8));
        const npu::ConvGeometry dw3x3s2{3, 3, 2, 2, 1, 1, 0, 0};
        CHECK_FALSE(npu::depthwisePointwisePays({0, 1, 14, 14, 576}, dw3x3s2, {0, 1, 7, 7, 576},
                                                {0, 1, 7, 7, 160}, kInt8));
        CHECK(fuses(28, 32, 192, 32));
        CHECK_FALSE(fuses(56, 24, 144, 24));
        CHECK_FALSE(fuses(14, 64, 384, 64));
        CHECK_FALSE(fuses(14, 96, 576, 96));
        CHECK_FALSE(fuses(28, 96, 96, 24));
    }
}

TEST_CASE("sim_npu_back_to_back_descriptors") {
    // Independent layers in one chain without fences, so each descriptor starts while the last
    // vectors of the one before are still in the feeder and the array: convolutions, depthwise
    // in both mappings and two TAPS kernel shapes, max and average pooling, each with its own
    // types and zero points.
    enum Kind { kConv, kDepthwise, kTaps, kMaxPool, kAvgPool };
    struct Layer {
        Kind kind;
        ConvCase c;
        std::vector<uint8_t> input, weights;
        std::vector<ChannelQuant> quant;
        uint32_t outAddr = 0;
        npu::Pooling pooling() const {
            return kind == kAvgPool ? npu::Pooling::AVERAGE : npu::Pooling::MAX;
        }
    };
    std::mt19937 rng(testSeed(0x5eed2008));
    driver::HardwareAccess& hw = *testBench().npu;
    DeviceArena arena;
    npu::ChainBuilder program;
    std::vector<Layer> layers;
    for (int i = 0; i < 24; ++i) {
        Layer l;
        l.kind = static_cast<Kind>(rng() % 5);
        l.c = randomCase(rng, 9, 36, 3);
        if (l.kind != kConv) {
            l.c.outC = l.c.inC;
            l.c.outSigned = l.c.inSigned;
        }
        if (l.kind == kTaps || l.kind >= kMaxPool) {
            l.c.g.dilationW = l.c.g.dilationH = 1;
            l.c.g.padLeft = std::min(l.c.g.padLeft, l.c.g.kernelW - 1);
            l.c.g.padTop = std::min(l.c.g.padTop, l.c.g.kernelH - 1);
            l.c.outW = windowOutput(l.c.w, l.c.g.kernelW, l.c.g.strideW, 1, l.c.g.padLeft, 0);
            l.c.outH = windowOutput(l.c.h, l.c.g.kernelH, l.c.g.strideH, 1, l.c.g.padTop, 0);
        }
        if (l.kind == kTaps && !npu::depthwiseUsesTaps(l.c.g)) {
            l.kind = kDepthwise;  // a kernel with more taps than array rows
        }
        if (l.kind >= kMaxPool) {
            l.c.stage.zeroPoint = 0;  // pooling keeps the input's quantization
        }
        const bool depthwise = l.kind == kDepthwise || l.kind == kTaps;
        l.input = randomBytes(rng, size_t{l.c.h} * l.c.w * l.c.inC);
        l.weights = randomBytes(
            rng, depthwise ? size_t{l.c.g.kernelH} * l.c.g.kernelW * l.c.outC
                           : size_t{l.c.outC} * l.c.g.kernelH * l.c.g.kernelW * l.c.inC);
        l.quant = randomQuant(rng, l.c.outC,
                              l.c.g.kernelH * l.c.g.kernelW * (depthwise ? 1 : l.c.inC), true);
        const uint32_t inAddr = arena.alloc(l.input.size());
        REQUIRE(hw.writeMemory(inAddr, l.input.data(), l.input.size()).ok());
        l.outAddr = arena.alloc(size_t{l.c.outH} * l.c.outW * l.c.outC);
        const DeviceTensor in{inAddr, 1, l.c.h, l.c.w, l.c.inC, 0, l.c.inSigned, l.c.inZero};
        const DeviceTensor out{l.outAddr, 1, l.c.outH, l.c.outW, l.c.outC, 0, l.c.outSigned, 0};
        std::vector<uint8_t> stream;
        if (depthwise) {
            stream = npu::packDepthwiseWeights(l.weights.data(), l.c.outC, l.c.g.kernelH,
                                               l.c.g.kernelW, l.c.wZero, l.quant, l.kind == kTaps);
        } else if (l.kind == kConv) {
            stream = npu::packConvWeights(l.weights.data(), l.c.outC, l.c.g.kernelH, l.c.g.kernelW,
                                          l.c.inC, l.c.wZero, l.quant);
        }
        const uint32_t wAddr = arena.alloc(stream.size());
        REQUIRE(hw.writeMemory(wAddr, stream.data(), stream.size()).ok());
        Status added = okStatus();
        if (l.kind == kConv) {
            added = program.conv(in, out, wAddr, l.c.wSigned, l.c.wZero, l.c.g, l.c.stage, i);
        } else if (depthwise) {
            added = program.depthwise(in, out, wAddr, l.c.wSigned, l.c.wZero, l.c.g, l.c.stage,
                                      l.kind == kTaps, i);
        } else {
            added = program.pool(l.pooling(), in, out, l.c.g, l.c.stage, i);
        }
        REQUIRE(added.ok());
        layers.push_back(std::move(l));
    }
    runInArena(hw, program, arena);
    for (size_t i = 0; i < layers.size(); ++i) {
        const Layer& l = layers[i];
        CAPTURE(i);
        CAPTURE(static_cast<int>(l.kind));
        std::vector<uint8_t> got(size_t{l.c.outH} * l.c.outW * l.c.outC);
        REQUIRE(hw.readMemory(l.outAddr, got.data(), got.size()).ok());
        const std::vector<uint8_t> want =
            l.kind >= kMaxPool ? referencePool(l.c, l.input, l.pooling())
                               : referenceConv(l.c, l.input, l.weights, l.quant, l.kind != kConv);
        CHECK(got == want);
    }
}

TEST_CASE("sim_npu_fence_waits_only_for_its_producers") {
    // Three steps: P writes X, Q copies T to Y, R copies X's last row to Z (identity table).
    // placeFences lets R wait for P alone (FENCE_SKIP: Q's descriptors). With P a convolution,
    // whose drain outlasts Q, R must still see P's last row (poison there before); with P a short
    // copy and Q a long one, R runs beside Q instead of after it.
    driver::HardwareAccess& hw = *testBench().npu;
    std::mt19937 rng(testSeed(0x5eedfe9c));
    std::array<uint8_t, 256> identity{};
    for (int v = 0; v < 256; ++v) identity[v] = static_cast<uint8_t>(v);
    const auto run = [&](bool convP, uint32_t qPixels, bool fenceAll) {
        DeviceArena arena;
        const uint32_t table = arena.alloc(256);
        REQUIRE(hw.writeMemory(table, identity.data(), 256).ok());
        ConvCase c{};  // P: a 1x1 convolution, 16 -> 64 channels over 16x16 pixels, or a copy
        c.h = c.w = c.outH = c.outW = 16;
        c.inC = 16;
        c.outC = convP ? 64 : 16;
        c.inZero = 3;
        c.wZero = 5;
        c.stage = randomStage(rng, false);
        const std::vector<uint8_t> input = randomBytes(rng, size_t{c.h} * c.w * c.inC);
        const std::vector<uint8_t> weights = randomBytes(rng, size_t{c.outC} * c.inC);
        const std::vector<ChannelQuant> quant = randomQuant(rng, c.outC, c.inC, true);
        const std::vector<uint8_t> stream =
            npu::packConvWeights(weights.data(), c.outC, 1, 1, c.inC, c.wZero, quant);
        const size_t xBytes = size_t{c.outH} * c.outW * c.outC;
        const uint32_t inAddr = arena.alloc(input.size()), wAddr = arena.alloc(stream.size());
        const uint32_t rowBytes = c.outW * c.outC;
        const uint32_t xAddr = arena.alloc(xBytes), zAddr = arena.alloc(rowBytes);
        const std::vector<uint8_t> t = randomBytes(rng, size_t{qPixels} * 16);
        const uint32_t tAddr = arena.alloc(t.size()), yAddr = arena.alloc(t.size());
        REQUIRE(hw.writeMemory(inAddr, input.data(), input.size()).ok());
        REQUIRE(hw.writeMemory(wAddr, stream.data(), stream.size()).ok());
        REQUIRE(hw.writeMemory(tAddr, t.data(), t.size()).ok());
        const std::vector<uint8_t> poison(xBytes, 0xa5);
        REQUIRE(hw.writeMemory(xAddr, poison.data(), poison.size()).ok());

        const DeviceTensor in{inAddr, 1, c.h, c.w, c.inC, 0, false, c.inZero};
        const DeviceTensor x{xAddr, 1, c.outH, c.outW, c.outC, 0, false, 0};
        // R copies X's last row, which P's drain writes last.
        const DeviceTensor lastRow{
            static_cast<uint32_t>(xAddr + xBytes - rowBytes), 1, 1, c.outW, c.outC, 0, false, 0};
        const DeviceTensor z{zAddr, 1, 1, c.outW, c.outC, 0, false, 0};
        npu::ChainBuilder built;
        if (convP) {
            REQUIRE(built.conv(in, x, wAddr, false, c.wZero, c.g, c.stage).ok());
        } else {
            REQUIRE(built.lookup(in, x, table).ok());
        }
        const size_t pEnd = built.descriptors().size();
        REQUIRE(built
                    .lookup({tAddr, 1, 1, qPixels, 16, 0, false, 0},
                            {yAddr, 1, 1, qPixels, 16, 0, false, 0}, table)
                    .ok());
        const size_t qEnd = built.descriptors().size();
        REQUIRE(built.lookup(lastRow, z, table).ok());
        std::vector<npu::Descriptor> chain = built.descriptors();
        npu::placeFences(chain);
        npu::ChainBuilder program;
        for (size_t i = 0; i < chain.size(); ++i) {
            CAPTURE(i);
            const bool fenced = chain[i].flags & static_cast<uint32_t>(npu::DescFlag::FENCE);
            CHECK(fenced == (i >= qEnd));                       // only R reads what another wrote
            if (fenced) CHECK(chain[i].fenceSkip == i - pEnd);  // after P, beside Q
            if (fenced && fenceAll) chain[i].fenceSkip = 0;
            program.append(chain[i]);
        }
        const uint64_t cycles = runInArena(hw, program, arena).cycles;

        std::vector<uint8_t> got(rowBytes), y(t.size());
        REQUIRE(hw.readMemory(zAddr, got.data(), got.size()).ok());
        REQUIRE(hw.readMemory(yAddr, y.data(), y.size()).ok());
        const std::vector<uint8_t> want =
            convP ? referenceConv(c, input, weights, quant, false) : input;
        CHECK(got == std::vector<uint8_t>(want.end() - rowBytes, want.end()));
        CHECK(y == t);
        return cycles;
    };
    run(true, 1, false);
    const uint64_t beside = run(false, 4096, false), after = run(false, 4096, true);
    CHECK(beside < after);
    MESSAGE("R beside Q: " << beside << " cycles, after Q: " << after);
}

TEST_CASE("sim_npu_conv_tiled") {
    // More output pixels than an accumulator bank and input rows split across tiles.
    std::mt19937 rng(0x5eed2004);
    ConvCase c{};
    c.h = 45;
    c.w = 37;
    c.inC = 24;
    c.outC = 20;
    c.g.kernelH = 3;
    c.g.kernelW = 3;
    c.g.padTop = 1;
    c.g.padLeft = 1;
    c.outH = windowOutput(c.h, 3, 1, 1, 1, 1);
    c.outW = windowOutput(c.w, 3, 1, 1, 1, 1);
    c.inSigned = c.wSigned = c.outSigned = false;
    c.inZero = 128;
    c.wZero = 120;
    c.stage = randomStage(rng, false);
    CHECK(runConv(c, 1, false, false, rng).ok);
}

TEST_CASE("sim_npu_fully_connected") {
    std::mt19937 rng(0x5eed2005);
    for (int i = 0; i < 8; ++i) {
        // A 1 x 1 convolution over batch rows, which is what Program::fullyConnected emits.
        ConvCase c{};
        c.h = 1;
        c.w = 1 + rng() % 6;
        c.inC = 1 + rng() % 300;
        c.outC = 1 + rng() % 70;
        c.outH = 1;
        c.outW = c.w;
        c.inSigned = rng() % 2;
        c.wSigned = c.inSigned;
        c.outSigned = c.inSigned;
        c.inZero = (c.inSigned ? -128 : 0) + static_cast<int32_t>(rng() % 256);
        c.wZero = c.inSigned ? 0 : static_cast<int32_t>(rng() % 256);
        c.stage = randomStage(rng, c.outSigned);
        CAPTURE(i);
        CAPTURE(c.w);
        CAPTURE(c.inC);
        CAPTURE(c.outC);
        CHECK(runConv(c, 1, false, false, rng).ok);
    }
}

TEST_CASE("sim_npu_conv_one_pixel_many_blocks") {
    // One output pixel and three output-channel blocks: the drains overlap the feeding of the
    // next blocks and weight loads wait for the array, the tightest schedule there is.
    std::mt19937 rng(5);
    ConvCase c{};
    c.h = 4;
    c.w = 3;
    c.inC = 13;
    c.outC = 40;
    c.g.kernelH = 2;
    c.g.strideH = 2;
    c.g.strideW = 3;
    c.g.dilationH = 2;
    c.outH = windowOutput(c.h, 2, 2, 2, 0, 0);
    c.outW = windowOutput(c.w, 1, 3, 1, 0, 0);
    c.stage = {3, -128, 127};
    c.inSigned = c.wSigned = c.outSigned = true;
    CHECK(runConv(c, 1, false, true, rng).ok);
}

}  // namespace
}  // namespace nncosim::sim::testing
