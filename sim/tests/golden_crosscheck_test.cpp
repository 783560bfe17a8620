// The NPU against golden's operations themselves: NNAPI models (CONV_2D, DEPTHWISE_CONV_2D,
// FULLY_CONNECTED, AVERAGE_POOL_2D, MAX_POOL_2D, ADD, MUL) run through golden::execute, and the
// same operations run on the NPU with parameters derived from the operand scales the way a
// driver derives them (model/FixedPoint.h's helpers); outputs must be identical.
#include "sim/tests/NpuTestUtil.h"
#include "sim/tests/TestBench.h"

#include <doctest/doctest.h>

#include "golden/Executor.h"
#include "model/Builder.h"

namespace nncosim::sim::testing {
namespace {

using npu::DeviceTensor;

struct QuantTensor {
    std::vector<uint32_t> dims;
    float scale;
    int32_t zeroPoint;
    std::vector<uint8_t> bytes;
};

OperandType typeOf(bool isSigned) {
    return isSigned ? OperandType::TENSOR_QUANT8_ASYMM_SIGNED : OperandType::TENSOR_QUANT8_ASYMM;
}

std::vector<uint8_t> runGolden(Model model, const std::vector<TensorData>& inputs) {
    auto outputs = golden::execute(model, inputs);
    REQUIRE_MESSAGE(outputs.ok(), outputs.status().message);
    return outputs->at(0).bytes;
}

// Runs `program` and returns `bytes` bytes at `out`.
std::vector<uint8_t> runNpu(const npu::ChainBuilder& program, DeviceArena& arena, uint32_t out,
                            size_t bytes) {
    driver::HardwareAccess& hw = *testBench().npu;
    runInArena(hw, program, arena);
    std::vector<uint8_t> got(bytes);
    REQUIRE(hw.readMemory(out, got.data(), got.size()).ok());
    return got;
}

uint32_t put(DeviceArena& arena, const std::vector<uint8_t>& bytes) {
    const uint32_t addr = arena.alloc(bytes.size() + 1);
    REQUIRE(testBench().npu->writeMemory(addr, bytes.data(), bytes.size()).ok());
    return addr;
}

// CONV_2D / DEPTHWISE_CONV_2D with explicit padding, per-channel int8 or per-tensor uint8
// filters, any activation.
void convCase(std::mt19937& rng, bool depthwise, bool perChannel) {
    const auto pick = [&rng](uint32_t lo, uint32_t hi) {
        return lo + static_cast<uint32_t>(rng() % (hi - lo + 1));
    };
    const bool isSigned = perChannel ? rng() % 2 : false;
    const uint32_t h = pick(3, 12), w = pick(3, 12), inC = pick(1, 36);
    const uint32_t outC = depthwise ? inC : pick(1, 36);
    const uint32_t kh = pick(1, 3), kw = pick(1, 3), sh = pick(1, 2), sw = pick(1, 2);
    const uint32_t dh = rng() % 3 == 0 ? 2 : 1, dw = rng() % 3 == 0 ? 2 : 1;
    const uint32_t padT = pick(0, kh - 1), padL = pick(0, kw - 1);
    const uint32_t padB = pick(0, kh - 1), padR = pick(0, kw - 1);
    const uint32_t oh = windowOutput(h, kh, sh, dh, padT, padB);
    const uint32_t ow = windowOutput(w, kw, sw, dw, padL, padR);
    const int32_t lo = isSigned ? -128 : 0;
    const float inScale = 0.02f + (rng() % 50) * 0.002f;
    const int32_t inZero = lo + static_cast<int32_t>(rng() % 256);
    const float outScale = 0.05f + (rng() % 50) * 0.01f;
    const int32_t outZero = lo + static_cast<int32_t>(rng() % 256);
    const auto activation = static_cast<int32_t>(rng() % 4);

    const std::vector<uint8_t> input = randomBytes(rng, size_t{h} * w * inC);
    const size_t filterCount = depthwise ? size_t{kh} * kw * outC : size_t{outC} * kh * kw * inC;
    const std::vector<uint8_t> filter = randomBytes(rng, filterCount);
    std::vector<float> filterScales(outC);
    for (float& s : filterScales) {
        s = 0.002f + (rng() % 100) * 0.0002f;
    }
    const float filterScale = filterScales[0];
    const int32_t filterZero = perChannel ? 0 : static_cast<int32_t>(rng() % 256);
    std::vector<int32_t> bias(outC);
    for (int32_t& b : bias) {
        b = static_cast<int32_t>(rng() % 4001) - 2000;
    }

    ModelBuilder b;
    const uint32_t in = b.addInput(typeOf(isSigned), {1, h, w, inC}, inScale, inZero);
    const std::vector<uint32_t> filterDims = depthwise ? std::vector<uint32_t>{1, kh, kw, outC}
                                                       : std::vector<uint32_t>{outC, kh, kw, inC};
    uint32_t filt = 0;
    uint32_t biasOp = 0;
    if (perChannel) {
        filt = b.addConstant(OperandType::TENSOR_QUANT8_SYMM_PER_CHANNEL, filterDims, filter);
        b.setPerChannelQuant(filt, filterScales, depthwise ? 3 : 0);
        biasOp = b.addConstant(OperandType::TENSOR_INT32, {outC}, bias);
    } else {
        filt = b.addConstant(OperandType::TENSOR_QUANT8_ASYMM, filterDims, filter, filterScale,
                             filterZero);
        biasOp = b.addConstant(OperandType::TENSOR_INT32, {outC}, bias, inScale * filterScale);
    }
    std::vector<uint32_t> args = {in,
                                  filt,
                                  biasOp,
                                  b.addInt32(padL),
                                  b.addInt32(padR),
                                  b.addInt32(padT),
                                  b.addInt32(padB),
                                  b.addInt32(sw),
                                  b.addInt32(sh)};
    if (depthwise) {
        args.push_back(b.addInt32(1));
    }
    args.push_back(b.addInt32(activation));
    args.push_back(b.addBool(false));
    args.push_back(b.addInt32(dw));
    args.push_back(b.addInt32(dh));
    const uint32_t out = b.addOutput(typeOf(isSigned), {1, oh, ow, outC}, outScale, outZero);
    b.addOperation(depthwise ? OperationType::DEPTHWISE_CONV_2D : OperationType::CONV_2D, args,
                   {out});
    const std::vector<uint8_t> want = runGolden(b.build(), {{{1, h, w, inC}, input}});

    // The driver's side: multipliers and the clamp from the scales, as golden derives them.
    std::vector<npu::ChannelQuant> quant(outC);
    for (uint32_t c = 0; c < outC; ++c) {
        const float fs = perChannel ? filterScales[c] : filterScale;
        const auto real =
            fixedpoint::getQuantizedConvolutionMultiplier(inScale, fs, inScale * fs, outScale);
        REQUIRE(real.has_value());
        const auto m = fixedpoint::quantizeMultiplier(*real);
        REQUIRE(m.has_value());
        quant[c] = {bias[c], m->multiplier, m->shift};
    }
    const auto range = fixedpoint::calculateActivationRange(
        static_cast<FusedActivation>(activation), outScale, outZero, lo, lo + 255);
    REQUIRE(range.has_value());

    DeviceArena arena;
    const uint32_t inAddr = put(arena, input);
    const uint32_t outAddr = arena.alloc(want.size() + 1);
    const npu::ConvGeometry g{kh, kw, sh, sw, dh, dw, padT, padL};
    const npu::OutputStage stage{outZero, range->min, range->max};
    const DeviceTensor din{inAddr, 1, h, w, inC, 0, isSigned, inZero};
    const DeviceTensor dout{outAddr, 1, oh, ow, outC, 0, isSigned, outZero};
    npu::ChainBuilder program;
    if (depthwise) {
        const uint32_t wAddr =
            put(arena, npu::packDepthwiseWeights(filter.data(), outC, kh, kw, filterZero, quant,
                                                 npu::depthwiseUsesTaps(g)));
        REQUIRE(program
                    .depthwise(din, dout, wAddr, perChannel, filterZero, g, stage,
                               npu::depthwiseUsesTaps(g))
                    .ok());
    } else {
        const uint32_t wAddr =
            put(arena, npu::packConvWeights(filter.data(), outC, kh, kw, inC, filterZero, quant));
        REQUIRE(program.conv(din, dout, wAddr, perChannel, filterZero, g, stage).ok());
    }
    CHECK(runNpu(program, arena, outAddr, want.size()) == want);
}

TEST_CASE("sim_golden_conv2d") {
    std::mt19937 rng(0x5eed5001);
    for (int i = 0; i < 12; ++i) {
        CAPTURE(i);
        convCase(rng, false, i % 2 == 0);
    }
}

TEST_CASE("sim_golden_depthwise_conv2d") {
    std::mt19937 rng(0x5eed5002);
    for (int i = 0; i < 12; ++i) {
        CAPTURE(i);
        convCase(rng, true, i % 2 == 0);
    }
}

TEST_CASE("sim_golden_fully_connected") {
    std::mt19937 rng(0x5eed5003);
    for (int i = 0; i < 6; ++i) {
        CAPTURE(i);
        const bool isSigned = i % 2;
        const int32_t lo = isSigned ? -128 : 0;
        const uint32_t batch = 1 + rng() % 4, inSize = 1 + rng() % 200, units = 1 + rng() % 50;
        const float inScale = 0.05f, wScale = 0.01f + (rng() % 10) * 0.001f, outScale = 0.5f;
        const int32_t inZero = lo + static_cast<int32_t>(rng() % 256);
        const int32_t wZero = isSigned ? 0 : static_cast<int32_t>(rng() % 256);
        const int32_t outZero = lo + static_cast<int32_t>(rng() % 256);
        const std::vector<uint8_t> input = randomBytes(rng, size_t{batch} * inSize);
        const std::vector<uint8_t> weights = randomBytes(rng, size_t{units} * inSize);
        std::vector<int32_t> bias(units);
        for (int32_t& v : bias) {
            v = static_cast<int32_t>(rng() % 2001) - 1000;
        }
        ModelBuilder b;
        const uint32_t in = b.addInput(typeOf(isSigned), {batch, inSize}, inScale, inZero);
        const uint32_t wOp =
            b.addConstant(typeOf(isSigned), {units, inSize}, weights, wScale, wZero);
        const uint32_t bOp =
            b.addConstant(OperandType::TENSOR_INT32, {units}, bias, inScale * wScale);
        const uint32_t out = b.addOutput(typeOf(isSigned), {batch, units}, outScale, outZero);
        b.addOperation(OperationType::FULLY_CONNECTED, {in, wOp, bOp, b.addInt32(1)}, {out});
        const std::vector<uint8_t> want = runGolden(b.build(), {{{batch, inSize}, input}});

        const auto real = fixedpoint::getQuantizedConvolutionMultiplier(inScale, wScale,
                                                                        inScale * wScale, outScale);
        REQUIRE(real.has_value());
        const auto m = fixedpoint::quantizeMultiplier(*real);
        REQUIRE(m.has_value());
        std::vector<npu::ChannelQuant> quant(units);
        for (uint32_t u = 0; u < units; ++u) {
            quant[u] = {bias[u], m->multiplier, m->shift};
        }
        const auto range = fixedpoint::calculateActivationRange(FusedActivation::RELU, outScale,
                                                                outZero, lo, lo + 255);
        DeviceArena arena;
        const uint32_t inAddr = put(arena, input);
        const uint32_t outAddr = arena.alloc(want.size() + 1);
        const uint32_t wAddr =
            put(arena, npu::packConvWeights(weights.data(), units, 1, 1, inSize, wZero, quant));
        npu::ChainBuilder program;
        REQUIRE(program
                    .fullyConnected({inAddr, batch, 1, 1, inSize, 0, isSigned, inZero},
                                    {outAddr, batch, 1, 1, units, 0, isSigned, outZero}, wAddr,
                                    isSigned, wZero, {outZero, range->min, range->max})
                    .ok());
        CHECK(runNpu(program, arena, outAddr, want.size()) == want);
    }
}

TEST_CASE("sim_golden_pool2d") {
    std::mt19937 rng(0x5eed5004);
    for (int i = 0; i < 12; ++i) {
        CAPTURE(i);
        const bool average = i % 2;
        const bool isSigned = (i / 2) % 2;
        const int32_t lo = isSigned ? -128 : 0;
        const uint32_t kh = 1 + rng() % 3, kw = 1 + rng() % 3, sh = 1 + rng() % 2,
                       sw = 1 + rng() % 2;
        const uint32_t h = kh + rng() % 9, w = kw + rng() % 9, c = 1 + rng() % 40;
        const uint32_t padT = rng() % kh, padL = rng() % kw, padB = rng() % kh, padR = rng() % kw;
        const uint32_t oh = windowOutput(h, kh, sh, 1, padT, padB);
        const uint32_t ow = windowOutput(w, kw, sw, 1, padL, padR);
        const float scale = 0.1f;
        const int32_t zero = lo + static_cast<int32_t>(rng() % 256);
        const auto activation = static_cast<int32_t>(rng() % 4);
        const std::vector<uint8_t> input = randomBytes(rng, size_t{h} * w * c);
        ModelBuilder b;
        const uint32_t in = b.addInput(typeOf(isSigned), {1, h, w, c}, scale, zero);
        const uint32_t out = b.addOutput(typeOf(isSigned), {1, oh, ow, c}, scale, zero);
        b.addOperation(average ? OperationType::AVERAGE_POOL_2D : OperationType::MAX_POOL_2D,
                       {in, b.addInt32(padL), b.addInt32(padR), b.addInt32(padT), b.addInt32(padB),
                        b.addInt32(sw), b.addInt32(sh), b.addInt32(kw), b.addInt32(kh),
                        b.addInt32(activation)},
                       {out});
        const std::vector<uint8_t> want = runGolden(b.build(), {{{1, h, w, c}, input}});
        const auto range = fixedpoint::calculateActivationRange(
            static_cast<FusedActivation>(activation), scale, zero, lo, lo + 255);
        DeviceArena arena;
        const uint32_t inAddr = put(arena, input);
        const uint32_t outAddr = arena.alloc(want.size() + 1);
        const npu::ConvGeometry g{kh, kw, sh, sw, 1, 1, padT, padL};
        npu::ChainBuilder program;
        REQUIRE(program
                    .pool(average ? npu::Pooling::AVERAGE : npu::Pooling::MAX,
                          {inAddr, 1, h, w, c, 0, isSigned, zero},
                          {outAddr, 1, oh, ow, c, 0, isSigned, zero}, g,
                          {0, range->min, range->max})
                    .ok());
        CHECK(runNpu(program, arena, outAddr, want.size()) == want);
    }
}

TEST_CASE("sim_golden_add_mul") {
    std::mt19937 rng(0x5eed5005);
    for (int i = 0; i < 12; ++i) {
        CAPTURE(i);
        const bool mul = i % 2;
        const bool isSigned = (i / 2) % 2;
        const int32_t lo = isSigned ? -128 : 0;
        const uint32_t h = 1 + rng() % 5, w = 1 + rng() % 7, c = 1 + rng() % 40;
        const bool broadcast = rng() % 2;
        const fixedpoint::QuantInfo qa{0.02f + (rng() % 50) * 0.002f,
                                       lo + static_cast<int32_t>(rng() % 256)};
        const fixedpoint::QuantInfo qb{0.02f + (rng() % 50) * 0.002f,
                                       lo + static_cast<int32_t>(rng() % 256)};
        const fixedpoint::QuantInfo qo{mul ? 0.2f : 0.05f, lo + static_cast<int32_t>(rng() % 256)};
        const auto activation = static_cast<int32_t>(rng() % 4);
        const std::vector<uint32_t> aDims = {1, h, w, c};
        const std::vector<uint32_t> bDims = broadcast ? std::vector<uint32_t>{1, 1, 1, c} : aDims;
        const std::vector<uint8_t> a = randomBytes(rng, size_t{h} * w * c);
        const std::vector<uint8_t> bv = randomBytes(rng, broadcast ? c : size_t{h} * w * c);
        ModelBuilder b;
        const uint32_t in1 = b.addInput(typeOf(isSigned), aDims, qa.scale, qa.zeroPoint);
        const uint32_t in2 = b.addInput(typeOf(isSigned), bDims, qb.scale, qb.zeroPoint);
        const uint32_t out = b.addOutput(typeOf(isSigned), aDims, qo.scale, qo.zeroPoint);
        b.addOperation(mul ? OperationType::MUL : OperationType::ADD,
                       {in1, in2, b.addInt32(activation)}, {out});
        const std::vector<uint8_t> want = runGolden(b.build(), {{aDims, a}, {bDims, bv}});

        const auto range = fixedpoint::calculateActivationRange(
            static_cast<FusedActivation>(activation), qo.scale, qo.zeroPoint, lo, lo + 255);
        npu::ChainBuilder::ElementwiseParams params;
        if (mul) {
            const auto p = fixedpoint::computeMulParams(qa, qb, qo, *range);
            REQUIRE(p.has_value());
            params = elementwiseParams(*p);
        } else {
            const auto p = fixedpoint::computeAddSubParams(qa, qb, qo, *range, false);
            REQUIRE(p.has_value());
            params = elementwiseParams(*p);
        }
        DeviceArena arena;
        const uint32_t aAddr = put(arena, a);
        const uint32_t bAddr = put(arena, bv);
        const uint32_t outAddr = arena.alloc(want.size() + 1);
        npu::ChainBuilder program;
        REQUIRE(program
                    .elementwise(mul, {aAddr, 1, h, w, c, 0, isSigned, qa.zeroPoint},
                                 {bAddr, 1, broadcast ? 1 : h, broadcast ? 1 : w, c, 0, isSigned,
                                  qb.zeroPoint},
                                 {outAddr, 1, h, w, c, 0, isSigned, qo.zeroPoint}, params)
                    .ok());
        CHECK(runNpu(program, arena, outAddr, want.size()) == want);
    }
}

}  // namespace
}  // namespace nncosim::sim::testing
