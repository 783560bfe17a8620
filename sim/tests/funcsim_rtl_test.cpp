// The functional model (sim/FunctionalNpu.h) against the RTL, descriptor for descriptor: random
// chains of every opcode and flag (CONV, DWCONV with and without TAPS and with non-diagonal
// blocks, CHAIN_OUT/CHAIN_IN pairs, pooling, CONV and DWCONV, ADD, MUL (quantized, FP32, FP16),
// LUT, NOP, FENCE, WIDE; now and then a chain of every opcode after every opcode), with operands,
// zero points, clamps, multipliers and shifts drawn over the whole range of their fields (9-bit
// operand wrap, 6-bit shifts, saturating requantization; float: random bit patterns, and for
// CONV and DWCONV mostly moderate values with a few specials, so that sums round), strided and
// misaligned tensors, run on both from the same DRAM image. Every byte of the job's memory, the
// completion record, the error registers and the counters the model knows (MACs, DMA bytes,
// array-active cycles) must be identical; chains with a bad field, a bad opcode or a DMA access
// outside the window must stop with the same error code, descriptor and address.
#include <doctest/doctest.h>

#include <algorithm>
#include <cstring>
#include <map>
#include <random>
#include <sstream>
#include <vector>

#include "driver/ChainBuilder.h"
#include "sim/FunctionalNpu.h"
#include "sim/tests/TestBench.h"

namespace nncosim::sim::testing {
namespace {

using namespace npu;

constexpr uint32_t kBase = 0x200000;        // the job's window starts here, or at
constexpr uint32_t kHighBase = 0x0ff00000;  // the last MiB of the 256 MiB DRAM (high address bits)
constexpr uint32_t kInputBytes = 0x20000;   // random tensors the descriptors read
// Weight streams and tables: room for the largest stream the generator draws (a binary32 CONV
// of 70 channels each way and 15 taps, 385 kB); a stream past it would run into the outputs,
// which the RTL stores while it still streams the weights and the model reads them first.
constexpr uint32_t kWeightBytes = 0x80000;
constexpr uint32_t kOutputBytes = 0x40000;  // each descriptor's output region
constexpr uint32_t kArenaBytes = kInputBytes + kWeightBytes + kOutputBytes + 0x10000;
constexpr uint32_t kVec = kDramBusBytes;

class ChainGenerator {
  public:
    ChainGenerator(uint32_t seed, uint32_t base) : mRng(seed), mBase(base) {}

    int range(int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(mRng); }
    bool chance(int percent) { return range(0, 99) < percent; }

    std::vector<Descriptor> chain() {
        mWeights = mBase + kInputBytes;
        mOutputs = mBase + kInputBytes + kWeightBytes;
        std::vector<Descriptor> out;
        const int count = range(1, 6);
        while (static_cast<int>(out.size()) < count) {
            if (chance(12)) {
                auto pair = chainPair();
                out.insert(out.end(), pair.begin(), pair.end());
                continue;
            }
            out.push_back(single());
        }
        for (Descriptor& d : out) {
            if (chance(20)) d.flags |= static_cast<uint32_t>(DescFlag::FENCE);
            d.tag = static_cast<uint32_t>(mRng());
        }
        return out;
    }

    /// Twelve comparisons: each COMPARE in each of FP32, FP16 and INT32 (the draw of single()
    /// reaches the binary16 ones rarely), B often A itself.
    std::vector<Descriptor> compareChain() {
        mWeights = mBase + kInputBytes;
        mOutputs = mBase + kInputBytes + kWeightBytes;
        const Format formats[] = {Format::FP32, Format::FP16, Format::INT32};
        std::vector<Descriptor> out;
        for (uint32_t k = 0; k < 12; ++k) {
            Descriptor d;
            d.opcode = Opcode::ADD;
            d.format = static_cast<uint32_t>(formats[k % 3]);
            d.compare = range(1, 6);
            const uint32_t inner = range(1, 40) * elementBytes(d), c1 = range(1, 4),
                           c2 = range(1, 3);
            d.a = inputTensor(inner, c1, c2, 1);
            d.b = chance(30) ? d.a : inputTensor(inner, c1, c2, 1);
            d.out = outputTensor(inner, c1, c2, 1);
            d.tag = static_cast<uint32_t>(mRng());
            out.push_back(d);
        }
        return out;
    }

    /// Every opcode after every opcode, NOP included, in one chain: a de Bruijn sequence over
    /// the opcodes (each ordered pair once as neighbours), each descriptor a small random one of
    /// its opcode.
    std::vector<Descriptor> everyOpcodePair() {
        mWeights = mBase + kInputBytes;
        mOutputs = mBase + kInputBytes + kWeightBytes;
        // The Lyndon words of length 1 and 2 in order (a, then a b for every b > a), closed by
        // the first symbol: 8 + 56 + 1 descriptors.
        std::vector<uint32_t> opcodes;
        for (uint32_t a = 0; a < kOpcodeCount; ++a) {
            opcodes.push_back(a);
            for (uint32_t b = a + 1; b < kOpcodeCount; ++b) opcodes.insert(opcodes.end(), {a, b});
        }
        opcodes.push_back(0);
        std::vector<Descriptor> out;
        for (uint32_t opcode : opcodes) {
            for (;;) {  // outputs of at most 2 KiB keep 65 of them inside the output region
                const uint32_t outputs = mOutputs;
                Descriptor d = single();
                if (static_cast<uint32_t>(d.opcode) == opcode && mOutputs - outputs <= 2048) {
                    d.tag = static_cast<uint32_t>(mRng());
                    out.push_back(d);
                    break;
                }
                mOutputs = outputs;
            }
        }
        return out;
    }

    /// Makes the chain fail: a bad field, a bad opcode or a DMA outside the window.
    std::string breakChain(std::vector<Descriptor>& chain) {
        Descriptor& d = chain[range(0, static_cast<int>(chain.size()) - 1)];
        switch (range(0, 4)) {
            case 0:
                d.opcode = static_cast<Opcode>(range(kOpcodeCount, 255));
                return "bad opcode";
            case 1:
                if (chance(30)) {
                    // A float format on a part element, or on what has no float form.
                    // (CONV and DWCONV have one without chaining.)
                    const uint32_t noFloat = static_cast<uint32_t>(DescFlag::CHAIN_OUT) |
                                             static_cast<uint32_t>(DescFlag::CHAIN_IN);
                    const bool array = d.opcode == Opcode::CONV || d.opcode == Opcode::DWCONV;
                    if (d.opcode == Opcode::FUNC && chance(50)) {
                        d.format = 0;  // FUNC needs a float format
                        return "integer FUNC";
                    }
                    if (d.opcode == Opcode::NORM && !d.normL2 && chance(50)) {
                        d.a.inner = d.out.inner = range(512, 600);
                        return "softmax row over 511";
                    }
                    const bool floatable =
                        d.opcode == Opcode::ADD || d.opcode == Opcode::MUL ||
                        d.opcode == Opcode::FUNC || d.opcode == Opcode::MAXPOOL ||
                        d.opcode == Opcode::AVGPOOL || (array && !(d.flags & noFloat));
                    if (floatable && d.a.inner > 1 && chance(40)) {
                        if (d.format == 0) d.format = static_cast<uint32_t>(Format::FP32);
                        d.a.inner -= d.a.inner % elementBytes(d) == 1 ? 2 : 1;
                        if (d.opcode != Opcode::CONV) d.b.inner = d.out.inner = d.a.inner;
                        return "float format on a part element";
                    }
                    if (chance(30)) {
                        // COMPARE 7, or a comparison of another opcode or of INT8.
                        d.compare = chance(30) ? 7 : range(1, 6);
                        if (d.opcode == Opcode::ADD && d.compare != 7) d.format = 0;
                        return "bad comparison";
                    }
                    if (d.opcode == Opcode::MUL && chance(50)) {
                        d.divide = true;
                        d.format = static_cast<uint32_t>(Format::INT32);
                        return "integer divide";
                    }
                    if (d.opcode == Opcode::ADD || d.opcode == Opcode::MUL) {
                        d.format = static_cast<uint32_t>(Format::INT32);
                        d.a.inner = d.b.inner = d.out.inner = 4 * d.a.inner + 1;
                        return "int32 on a part element";
                    }
                    // INT32 is for ADD and MUL only; nothing else here has a float form.
                    d.format = floatable ? static_cast<uint32_t>(Format::INT32)
                                         : static_cast<uint32_t>(range(1, 3));
                    return "bad format";
                }
                if (chance(30)) {
                    // PACK, RESIDUAL, WIDE and A_PLANAR where they do not apply.
                    const bool conv = d.opcode == Opcode::CONV;
                    switch (range(0, 4)) {
                        case 0:
                            d.flags |= static_cast<uint32_t>(DescFlag::PACK);
                            if (conv) d.a.inner = (kArrayRows / 2 + 1) * elementBytes(d);
                            return "PACK where it does not apply";
                        case 1:
                            d.flags |= static_cast<uint32_t>(DescFlag::RESIDUAL);
                            if (conv && !(d.flags & static_cast<uint32_t>(DescFlag::CHAIN_OUT)))
                                d.b = d.out, d.b.count2 = d.out.count2 + 1;
                            return "RESIDUAL where it does not apply";
                        case 2:
                            d.flags |= static_cast<uint32_t>(DescFlag::WIDE);
                            if (conv) d.flags |= static_cast<uint32_t>(DescFlag::CHAIN_OUT);
                            return "WIDE where it does not apply";
                        case 3:
                            d.aPlanar = true;
                            d.a.inner = 5 * elementBytes(d);
                            return "A_PLANAR with five planes";
                        default:
                            if (!conv) return "nothing";
                            d.flags |= static_cast<uint32_t>(DescFlag::CHAIN_IN) |
                                       static_cast<uint32_t>(DescFlag::CHAIN_OUT);
                            return "CHAIN_IN and CHAIN_OUT on a CONV";
                    }
                }
                if (d.opcode == Opcode::NOP) d.opcode = Opcode::LUT;
                d.out.count1 = 0;
                return "bad field";
            case 2:
                if (!op::usesA(d.opcode) || (d.flags & static_cast<uint32_t>(DescFlag::CHAIN_IN)))
                    return "nothing";
                d.a.addr = mBase - range(1, 4096);
                return "load outside the window";
            case 3:
                if (d.opcode == Opcode::NOP ||
                    (d.flags & static_cast<uint32_t>(DescFlag::CHAIN_OUT)))
                    return "nothing";
                d.out.addr = mBase + kArenaBytes + range(-8, 64);
                return "store outside the window";
            default:
                if (!op::usesW(d.opcode)) return "nothing";
                d.wAddr = (mBase + kArenaBytes - range(0, 4) * kVec) / kVec * kVec;
                return "stream outside the window";
        }
    }

  private:
    /// Float clamp bounds: mostly none (infinities or the finite range) or an activation's, else
    /// any bits (NaN, crossed bounds). Inputs are random bits: every class of value (NaN,
    /// infinities, subnormals, zeros) comes up.
    void floatClamp(Descriptor& d) {
        constexpr uint32_t kNegInf = 0xff800000u, kInf = 0x7f800000u, kLowest = 0xff7fffffu,
                           kMax = 0x7f7fffffu, kZero = 0, kOne = 0x3f800000u, kSix = 0x40c00000u;
        switch (range(0, 9)) {
            case 5:  // RELU
                d.fpMin = kZero, d.fpMax = kMax;
                break;
            case 6:  // RELU1
                d.fpMin = kOne | 0x80000000u, d.fpMax = kOne;
                break;
            case 7:  // RELU6
                d.fpMin = kZero, d.fpMax = kSix;
                break;
            case 8:
            case 9:
                d.fpMin = static_cast<uint32_t>(mRng());
                d.fpMax = static_cast<uint32_t>(mRng());
                break;
            default:
                d.fpMin = chance(50) ? kNegInf : kLowest;
                d.fpMax = chance(50) ? kInf : kMax;
        }
    }

    int32_t zeroPoint(bool isSigned) {
        if (chance(25)) return range(-256, 255);  // anything the 9-bit field holds
        return isSigned ? range(-128, 127) : range(0, 255);
    }

    void clamp(Descriptor& d) {
        if (chance(30)) {
            int a = range(-256, 255), b = range(-256, 255);
            d.actMin = std::min(a, b);
            d.actMax = std::max(a, b);
        } else {
            d.actMin = d.outSigned ? -128 : 0;
            d.actMax = d.outSigned ? 127 : 255;
            if (chance(30)) d.actMin += range(0, 40);
        }
    }

    uint32_t inputAddr(uint64_t span) {
        const uint32_t room =
            kInputBytes - static_cast<uint32_t>(std::min<uint64_t>(span, kInputBytes));
        return mBase + static_cast<uint32_t>(range(0, static_cast<int>(room)));
    }

    /// A tensor of `inner` x c1 x c2 x c3 rows somewhere in the input area.
    TensorDesc inputTensor(uint32_t inner, uint32_t c1, uint32_t c2, uint32_t c3) {
        TensorDesc t;
        t.inner = inner;
        t.count1 = c1;
        t.count2 = c2;
        t.count3 = c3;
        t.stride1 = inner + (chance(50) ? 0 : range(0, 20));
        if (chance(5)) t.stride1 = range(0, static_cast<int>(inner));  // overlapping rows
        t.stride2 = c1 * t.stride1 + (chance(50) ? 0 : range(0, 40));
        t.stride3 = c2 * t.stride2 + (chance(50) ? 0 : range(0, 40));
        const uint64_t span = uint64_t{c3 - 1} * t.stride3 + uint64_t{c2 - 1} * t.stride2 +
                              uint64_t{c1 - 1} * t.stride1 + inner;
        t.addr = inputAddr(span);
        anyUnusedStrides(t);
        return t;
    }

    /// An A_PLANAR input: `planes` planes of c1 x c2 elements of `size` bytes, each plane at
    /// any multiple of the element's size from the last (planes may overlap).
    TensorDesc planarTensor(uint32_t size, uint32_t planes, uint32_t c1, uint32_t c2) {
        TensorDesc t;
        t.inner = planes * size;
        t.count1 = c1;
        t.count2 = c2;
        t.count3 = 1;
        t.stride1 = size * (chance(70) ? 1 : range(0, 3));
        t.stride2 = c1 * t.stride1 + size * (chance(50) ? 0 : range(0, 9));
        t.stride3 = chance(70) ? c2 * t.stride2 + size * range(0, 9) : size * range(0, 40);
        const uint64_t span = uint64_t{planes - 1} * t.stride3 + uint64_t{c2 - 1} * t.stride2 +
                              uint64_t{c1 - 1} * t.stride1 + size;
        t.addr = inputAddr(span + size) / size * size;
        return t;
    }

    /// A dimension of one row never steps its stride: any value must do (all 32 bits).
    void anyUnusedStrides(TensorDesc& t) {
        if (t.count1 == 1 && chance(50)) t.stride1 = static_cast<uint32_t>(mRng());
        if (t.count2 == 1 && chance(50)) t.stride2 = static_cast<uint32_t>(mRng());
        if (t.count3 == 1 && chance(50)) t.stride3 = static_cast<uint32_t>(mRng());
    }

    /// An output region of its own (never overlapping another descriptor's).
    TensorDesc outputTensor(uint32_t inner, uint32_t c1, uint32_t c2, uint32_t c3) {
        TensorDesc t;
        t.inner = inner;
        t.count1 = c1;
        t.count2 = c2;
        t.count3 = c3;
        t.stride1 = inner + (chance(60) ? 0 : range(1, 9));
        t.stride2 = c1 * t.stride1 + (chance(60) ? 0 : range(1, 9));
        t.stride3 = c2 * t.stride2 + (chance(60) ? 0 : range(1, 9));
        const uint64_t span = uint64_t{c3 - 1} * t.stride3 + uint64_t{c2 - 1} * t.stride2 +
                              uint64_t{c1 - 1} * t.stride1 + inner;
        mOutputs += static_cast<uint32_t>(range(0, 15));
        t.addr = mOutputs;
        mOutputs += static_cast<uint32_t>(span) + 16;
        anyUnusedStrides(t);
        return t;
    }

    /// Room for a weight stream or table of `bytes` (16-byte aligned); filled with random bytes
    /// by the test, then quantization words written by quantWords().
    uint32_t weightAddr(uint64_t bytes) {
        REQUIRE(bytes <= kWeightBytes);
        if (mWeights + bytes > mBase + kInputBytes + kWeightBytes) mWeights = mBase + kInputBytes;
        const uint32_t addr = mWeights;
        mWeights += static_cast<uint32_t>((bytes + kVec - 1) / kVec * kVec);
        return addr;
    }

    void window(Descriptor& d, Opcode op) {
        d.opcode = op;
        d.aSigned = chance(50);
        d.bSigned = chance(50);
        d.outSigned = chance(50);
        d.kernelH = range(1, 3);
        d.kernelW = range(1, 3);
        if (chance(10)) d.kernelW = range(4, 5);
        d.strideH = range(1, 3);
        d.strideW = range(1, 3);
        d.dilationH = chance(70) ? 1 : 2;
        d.dilationW = chance(70) ? 1 : 2;
        d.padTop = range(0, 2);
        d.padLeft = range(0, 2);
        d.aZeroPoint = zeroPoint(d.aSigned);
        d.bZeroPoint = zeroPoint(d.bSigned);
        d.outZeroPoint = zeroPoint(d.outSigned);
        clamp(d);
    }

    /// A float CONV or DWCONV now and then (`allowed`): FP32 or FP16 with a float clamp.
    void maybeFloat(Descriptor& d, bool allowed) {
        if (!allowed || !chance(30)) return;
        d.format = static_cast<uint32_t>(chance(50) ? Format::FP32 : Format::FP16);
        floatClamp(d);
    }

    /// Bytes of an array descriptor's weight stream (the command processor's rule).
    static uint64_t weightBytes(const Descriptor& d) {
        const uint32_t vw = vectorWords(d);
        const uint64_t kt = kernelSteps(d);
        const uint32_t nb = (d.out.inner + kVec * vw - 1) / (kVec * vw);
        const uint32_t rowWords = vw == 1 ? 1 : kFloatWeightRowWords;
        return uint64_t{nb} * (kWeightQuantWords + uint64_t{kt} * kVec * rowWords) * kVec;
    }

    Descriptor conv(uint32_t inner, uint32_t outC, uint32_t outW, uint32_t outH,
                    bool floatAllowed = true) {
        Descriptor d;
        window(d, Opcode::CONV);
        maybeFloat(d, floatAllowed);
        const uint32_t inW = range(1, 9), inH = range(1, 9);
        d.aPlanar = inner <= 4 && chance(30);
        d.a = d.aPlanar ? planarTensor(elementBytes(d), inner, inW, inH)
                        : inputTensor(inner * elementBytes(d), inW, inH, 1);
        d.out = outputTensor(outC * elementBytes(d), outW, outH, 1);
        if (inner <= kArrayRows / 2 && inner * elementBytes(d) <= kVec &&
            d.kernelH * d.kernelW > 1 && chance(60))
            d.flags |= static_cast<uint32_t>(DescFlag::PACK);
        if (d.format == 0 && !(d.flags & static_cast<uint32_t>(DescFlag::PACK)) && !d.aPlanar &&
            chance(25))
            addResidual(d);
        const uint32_t packOrResidual =
            static_cast<uint32_t>(DescFlag::PACK) | static_cast<uint32_t>(DescFlag::RESIDUAL);
        if (!(d.flags & packOrResidual) && chance(20))
            d.flags |= static_cast<uint32_t>(DescFlag::WIDE);
        d.wAddr = weightAddr(weightBytes(d));
        return d;
    }

    /// RESIDUAL: B of OUT's shape from the input area, random ADD parameters.
    void addResidual(Descriptor& d) {
        d.flags |= static_cast<uint32_t>(DescFlag::RESIDUAL);
        d.b = inputTensor(d.out.inner, d.out.count1, d.out.count2, 1);
        d.midZeroPoint = zeroPoint(d.outSigned);
        d.resZeroPoint = zeroPoint(d.outSigned);
        scaling(d, true);
    }

    /// The quantized ADD's (`add`) or MUL's shift and multipliers, mostly moderate.
    void scaling(Descriptor& d, bool add) {
        d.leftShift = chance(70) ? 20 : range(0, 31);
        d.aMultiplier = range(1 << 29, INT32_MAX);
        d.bMultiplier = chance(20) ? -range(1 << 29, INT32_MAX) : range(1 << 29, INT32_MAX);
        d.outMultiplier = chance(90) ? range(1 << 30, INT32_MAX) : static_cast<int32_t>(mRng());
        d.aShift = chance(80) ? range(-12, 0) : range(-31, 31);
        d.bShift = chance(80) ? range(-12, 0) : range(-31, 31);
        d.outShift = add ? (chance(80) ? range(-25, -10) : range(-31, 31))
                         : (chance(80) ? range(-14, -2) : range(-31, 31));
    }

    /// A DWCONV's kernel and stride the TAPS mode takes, and the flag.
    void makeTaps(Descriptor& d) {
        d.dilationW = 1;
        d.kernelH = range(1, std::min<int>(3, kDwTapPorts));
        d.strideW = range(1, std::min<int>(3, kDwTapPorts / d.kernelH));
        d.kernelW = range(1, std::min<int>(5, kArrayRows / d.kernelH));
        d.flags |= static_cast<uint32_t>(DescFlag::TAPS);
    }

    Descriptor depthwise(uint32_t channels, uint32_t outW, uint32_t outH,
                         bool floatAllowed = true) {
        Descriptor d;
        window(d, Opcode::DWCONV);
        const bool taps = chance(50);
        maybeFloat(d, floatAllowed);
        if (taps) makeTaps(d);
        const uint32_t inW = range(1, 9), inH = range(1, 9);
        d.a = inputTensor(channels * elementBytes(d), inW, inH, 1);
        d.out = outputTensor(channels * elementBytes(d), outW, outH, 1);
        d.wAddr = weightAddr(weightBytes(d));
        mDiagonal[d.wAddr] = !taps && chance(50);
        return d;
    }

    Descriptor single() {
        const int pick = range(0, 99);
        Descriptor d;
        // Now and then a tile of several hundred pixels and more channel blocks.
        const bool big = chance(12);
        const auto side = [&] { return big ? range(7, 24) : range(1, 6); };
        if (pick < 28)
            return conv(chance(20) ? range(1, 4) : range(1, big ? 70 : 40), range(1, big ? 70 : 40),
                        side(), side());
        if (pick < 48) return depthwise(range(1, big ? 70 : 40), side(), side());
        if (pick < 64) {
            window(d, chance(50) ? Opcode::MAXPOOL : Opcode::AVGPOOL);
            d.truncate = chance(50);
            if (chance(30)) {
                d.format = static_cast<uint32_t>(chance(50) ? Format::FP32 : Format::FP16);
                floatClamp(d);
            }
            const uint32_t c = range(1, 40) * elementBytes(d);
            d.a = inputTensor(c, range(1, 9), range(1, 9), 1);
            d.out = outputTensor(c, range(1, 6), range(1, 6), 1);
            return d;
        }
        if (pick < 90) {
            const Opcode kinds[] = {Opcode::ADD, Opcode::MUL, Opcode::LUT, Opcode::FUNC,
                                    Opcode::NORM};
            d.opcode = kinds[range(0, 4)];
            d.aSigned = chance(50);
            d.bSigned = chance(50);
            d.outSigned = chance(50);
            const bool isFloat =
                d.opcode == Opcode::FUNC || (d.opcode != Opcode::LUT && chance(30));
            const bool isInt32 =
                !isFloat && (d.opcode == Opcode::ADD || d.opcode == Opcode::MUL) && chance(15);
            if (isFloat) d.format = static_cast<uint32_t>(chance(50) ? Format::FP32 : Format::FP16);
            if (isInt32) d.format = static_cast<uint32_t>(Format::INT32);
            const uint32_t inner = range(1, 40) * elementBytes(d), c1 = range(1, 4),
                           c2 = range(1, 3), c3 = range(1, 2);
            d.a = inputTensor(inner, c1, c2, c3);
            d.out = outputTensor(inner, c1, c2, c3);
            if (d.opcode == Opcode::LUT) {
                d.wAddr = weightAddr(256);
                return d;
            }
            if (d.opcode == Opcode::FUNC) {
                d.floatFn = range(0, 3);
                floatClamp(d);
                return d;
            }
            if (d.opcode == Opcode::NORM) {
                d.normL2 = chance(50);
                d.aZeroPoint = zeroPoint(d.aSigned);
                d.outZeroPoint = zeroPoint(d.outSigned);
                clamp(d);
                if (d.normL2) {
                    d.leftShift = chance(50) ? 7 : 0;
                    d.outShift = d.leftShift == 7 ? 0 : 7;
                } else {
                    d.wAddr = weightAddr(1024);
                }
                return d;
            }
            d.b = inputTensor(inner, c1, c2, c3);
            if (chance(20)) d.b.stride1 = 0;  // broadcast
            if (isFloat || isInt32) {
                floatClamp(d);
                d.negateB = chance(50);
                d.divide = isFloat && chance(50);
                if (d.opcode == Opcode::ADD && chance(40)) {
                    d.compare = range(1, 6);
                    if (chance(30)) d.b = d.a;  // equal operands
                }
                return d;
            }
            d.aZeroPoint = zeroPoint(d.aSigned);
            d.bZeroPoint = zeroPoint(d.bSigned);
            d.outZeroPoint = zeroPoint(d.outSigned);
            clamp(d);
            scaling(d, d.opcode == Opcode::ADD);
            return d;
        }
        d.opcode = Opcode::NOP;
        return d;
    }

    /// A CHAIN_OUT producer (CONV or DWCONV) and its CHAIN_IN 1x1 consumer.
    /// Now and then a CONV producer, a DWCONV that takes its result and passes its own on, and
    /// the consumer (an inverted residual block); the consumer sometimes adds a residual.
    std::vector<Descriptor> chainPair() {
        const uint32_t outW = range(1, 6), outH = range(1, 6);
        if (chance(25)) return floatChainPair(outW, outH);
        const uint32_t notChained =  // flags a CHAIN_OUT producer cannot have
            static_cast<uint32_t>(DescFlag::RESIDUAL) | static_cast<uint32_t>(DescFlag::WIDE);
        std::vector<Descriptor> chain;
        if (chance(30)) {
            Descriptor e = conv(range(1, 40), range(1, 40), range(1, 9), range(1, 9), false);
            e.flags &= ~notChained;
            e.flags |= static_cast<uint32_t>(DescFlag::CHAIN_OUT);
            Descriptor dw = depthwise(e.out.inner, outW, outH, false);
            dw.aSigned = e.outSigned;
            dw.a = inputTensor(e.out.inner, e.out.count1, e.out.count2, 1);
            dw.flags |= static_cast<uint32_t>(DescFlag::CHAIN_IN);
            chain = {e, dw};
        } else {
            chain.push_back(chance(50) ? depthwise(range(1, 40), outW, outH, false)
                                       : conv(range(1, 40), range(1, 40), outW, outH, false));
        }
        Descriptor& p = chain.back();
        p.flags &= ~notChained;
        p.flags |= static_cast<uint32_t>(DescFlag::CHAIN_OUT);
        Descriptor c;
        window(c, Opcode::CONV);
        c.kernelH = c.kernelW = c.strideH = c.strideW = 1;
        c.padTop = c.padLeft = 0;
        c.aSigned = p.outSigned;
        c.a = inputTensor(p.out.inner, outW, outH, 1);
        c.flags |= static_cast<uint32_t>(DescFlag::CHAIN_IN);
        const uint32_t outC = range(1, 40);
        c.out = outputTensor(outC, outW, outH, 1);
        if (chance(30)) addResidual(c);
        const uint32_t kt = (p.out.inner + kVec - 1) / kVec;
        c.wAddr =
            weightAddr(uint64_t{(outC + kVec - 1) / kVec} * (kWeightQuantWords + kt * kVec) * kVec);
        chain.push_back(c);
        return chain;
    }

    /// A float DWCONV (TAPS or diagonal blocks) of whole channel blocks chained into a 1x1 CONV
    /// of its format.
    std::vector<Descriptor> floatChainPair(uint32_t outW, uint32_t outH) {
        Descriptor p;
        window(p, Opcode::DWCONV);
        p.format = static_cast<uint32_t>(chance(50) ? Format::FP32 : Format::FP16);
        floatClamp(p);
        const bool taps = chance(60);
        if (taps) makeTaps(p);
        const uint32_t size = elementBytes(p), channels = kVec * range(1, 3);
        p.a = inputTensor(channels * size, range(1, 9), range(1, 9), 1);
        p.out = outputTensor(channels * size, outW, outH, 1);
        p.wAddr = weightAddr(weightBytes(p));
        mDiagonal[p.wAddr] = !taps && chance(50);
        p.flags |= static_cast<uint32_t>(DescFlag::CHAIN_OUT);
        Descriptor c;
        window(c, Opcode::CONV);
        c.format = p.format;
        floatClamp(c);
        c.kernelH = c.kernelW = c.strideH = c.strideW = 1;
        c.padTop = c.padLeft = 0;
        c.a = inputTensor(p.out.inner, outW, outH, 1);
        c.out = outputTensor(range(1, 40) * size, outW, outH, 1);
        c.flags |= static_cast<uint32_t>(DescFlag::CHAIN_IN);
        c.wAddr = weightAddr(weightBytes(c));
        return {p, c};
    }

  public:
    /// The weight streams' quantization words and diagonal blocks, written over the random
    /// weight area; float CONV and DWCONV streams and inputs, and most FUNC inputs, get moderate
    /// values.
    void shapeWeights(const std::vector<Descriptor>& chain, std::vector<uint8_t>& arena) {
        for (const Descriptor& d : chain) {
            if (d.opcode == Opcode::FUNC && chance(70)) shapeFloatInput(d, arena);
            if (d.opcode == Opcode::NORM && !d.normL2) shapeExponentials(d, arena);
            if (d.opcode != Opcode::CONV && d.opcode != Opcode::DWCONV) continue;
            if (d.format != 0) {
                shapeFloat(d, arena);
                continue;
            }
            const uint64_t kt = kernelSteps(d);
            const uint32_t nb = (d.out.inner + kVec - 1) / kVec;
            const uint64_t blockBytes = (kWeightQuantWords + uint64_t{kt} * kVec) * kVec;
            for (uint32_t b = 0; b < nb; ++b) {
                const uint64_t at = d.wAddr - mBase + b * blockBytes;
                if (at + blockBytes > arena.size()) continue;  // a broken chain's stream
                uint8_t* q = arena.data() + at;
                for (uint32_t l = 0; l < kVec; ++l) {
                    const int32_t bias =
                        chance(80) ? range(-20000, 20000) : static_cast<int32_t>(mRng());
                    const int32_t mult =
                        chance(85) ? range(1 << 30, INT32_MAX) : static_cast<int32_t>(mRng());
                    std::memcpy(q + 4 * l, &bias, 4);
                    std::memcpy(q + 4 * kVec + 4 * l, &mult, 4);
                    q[8 * kVec + l] =
                        static_cast<uint8_t>(chance(85) ? range(-12, -4) : range(-128, 127));
                }
                if (mDiagonal.count(d.wAddr) && mDiagonal[d.wAddr]) {
                    for (uint32_t k = 0; k < kt; ++k) {
                        uint8_t* block = q + (kWeightQuantWords + k * kVec) * kVec;
                        for (uint32_t r = 0; r < kVec; ++r)
                            for (uint32_t c = 0; c < kVec; ++c)
                                if (r != c)
                                    block[r * kVec + c] = static_cast<uint8_t>(d.bZeroPoint);
                    }
                }
            }
        }
    }

  private:
    /// A binary32 value: mostly moderate (|x| in 2^-8 .. 2^8), now and then any bits (NaN,
    /// infinities, subnormals, huge), zero or a subnormal.
    uint32_t moderateFloat() {
        const int kind = range(0, 99);
        if (kind < 2) return static_cast<uint32_t>(mRng());
        if (kind < 4) return chance(50) ? 0 : 0x80000000u;
        if (kind < 5) return static_cast<uint32_t>(range(1, 0x7fffff)) | (chance(50) << 31);
        return (chance(50) ? 0x80000000u : 0) | static_cast<uint32_t>(range(119, 135)) << 23 |
               static_cast<uint32_t>(mRng() & 0x7fffff);
    }

    /// A binary16 value the same way (|x| in 2^-7 .. 2^7).
    uint16_t moderateHalf() {
        const int kind = range(0, 99);
        if (kind < 2) return static_cast<uint16_t>(mRng());
        if (kind < 4) return chance(50) ? 0 : 0x8000u;
        return static_cast<uint16_t>((chance(50) ? 0x8000u : 0) | range(8, 22) << 10 |
                                     (mRng() & 0x3ff));
    }

    /// A float CONV or DWCONV: binary32 biases and weights (+0 off the diagonal of a diagonal
    /// depthwise block), moderate input elements.
    void shapeFloat(const Descriptor& d, std::vector<uint8_t>& arena) {
        const uint64_t bytes = weightBytes(d);
        const uint64_t at = d.wAddr - mBase;
        if (at + bytes <= arena.size()) {
            const uint32_t nb = (d.out.inner + kVec * vectorWords(d) - 1) / (kVec * vectorWords(d));
            const uint64_t blockBytes = bytes / nb;
            const bool diagonal = mDiagonal.count(d.wAddr) && mDiagonal[d.wAddr];
            for (uint32_t b = 0; b < nb; ++b) {
                uint8_t* q = arena.data() + at + b * blockBytes;
                for (uint32_t l = 0; l < kVec; ++l) {
                    const uint32_t bias = moderateFloat();
                    std::memcpy(q + 4 * l, &bias, 4);
                }
                uint8_t* rows = q + kWeightQuantWords * kVec;
                const uint64_t weights = (blockBytes - kWeightQuantWords * kVec) / 4;
                for (uint64_t i = 0; i < weights; ++i) {
                    const bool offDiagonal = i / kArrayCols % kArrayRows != i % kArrayCols;
                    const uint32_t w = diagonal && offDiagonal ? 0 : moderateFloat();
                    std::memcpy(rows + 4 * i, &w, 4);
                }
            }
        }
        shapeFloatInput(d, arena);
    }

    /// A softmax table as the driver writes one: e^0 = 1 (INT32_MAX in Q0.31) first, then
    /// exponentials of at most 1.
    void shapeExponentials(const Descriptor& d, std::vector<uint8_t>& arena) {
        const uint64_t at = d.wAddr - mBase;
        if (at + 1024 > arena.size()) return;
        for (uint32_t i = 0; i < 256; ++i) {
            const int32_t e = i == 0 ? INT32_MAX : range(0, INT32_MAX);
            std::memcpy(&arena[at + 4 * i], &e, 4);
        }
    }

    /// Moderate elements in A's rows.
    void shapeFloatInput(const Descriptor& d, std::vector<uint8_t>& arena) {
        const uint32_t size = elementBytes(d);
        for (uint32_t z = 0; z < d.a.count3; ++z) {
            for (uint32_t y = 0; y < d.a.count2; ++y) {
                for (uint32_t x = 0; x < d.a.count1; ++x) {
                    const uint64_t row = d.a.addr - mBase + uint64_t{z} * d.a.stride3 +
                                         uint64_t{y} * d.a.stride2 + uint64_t{x} * d.a.stride1;
                    for (uint32_t i = 0; i + size <= d.a.inner && row + i + size <= arena.size();
                         i += size) {
                        if (size == 4) {
                            const uint32_t v = moderateFloat();
                            std::memcpy(&arena[row + i], &v, 4);
                        } else {
                            const uint16_t v = moderateHalf();
                            std::memcpy(&arena[row + i], &v, 2);
                        }
                    }
                }
            }
        }
    }

    std::mt19937 mRng;
    uint32_t mBase;
    uint32_t mWeights = 0, mOutputs = 0;
    std::map<uint32_t, bool> mDiagonal;
};

struct Outcome {
    JobResult job;
    std::vector<uint8_t> arena;
    driver::PerformanceCounters counters;
};

Outcome runOn(driver::HardwareAccess& hw, uint32_t base, const std::vector<uint8_t>& image,
              const std::vector<Descriptor>& chain, uint32_t tag) {
    Outcome o;
    REQUIRE(hw.writeMemory(base, image.data(), image.size()).ok());
    ChainBuilder program;
    for (const Descriptor& d : chain) program.append(d);
    const uint32_t queue = base + kArenaBytes - 0x8000;
    const uint32_t record = base + kArenaBytes - 0x10;
    hw.writeRegister(reg::kControl, field::kControlPerfClear);
    auto job = runJob(hw, program, {queue, record, base, base + kArenaBytes}, tag, 5'000'000);
    REQUIRE(job.ok());
    o.job = *job;
    o.counters = hw.performanceCounters();
    o.arena.resize(image.size());
    REQUIRE(hw.readMemory(base, o.arena.data(), o.arena.size()).ok());
    if (o.job.errorCode != 0) {
        hw.writeRegister(reg::kControl, field::kControlSoftReset);
        for (int i = 0; i < 1000 && hw.readRegister(reg::kStatus) != 0; ++i) hw.advance(64);
        hw.writeRegister(reg::kIrqStatus, field::kIrqStatusDone | field::kIrqStatusError);
    }
    return o;
}

std::string describe(const std::vector<Descriptor>& chain) {
    std::ostringstream s;
    for (size_t i = 0; i < chain.size(); ++i) {
        const Descriptor& d = chain[i];
        s << i << ": " << op::name(d.opcode) << " flags " << d.flags << " a " << d.a.inner << "x"
          << d.a.count1 << "x" << d.a.count2 << "x" << d.a.count3 << " out " << d.out.inner << "x"
          << d.out.count1 << "x" << d.out.count2 << " k " << d.kernelH << "x" << d.kernelW << " s "
          << d.strideH << "x" << d.strideW << " d " << d.dilationH << "x" << d.dilationW << " pad "
          << d.padTop << "," << d.padLeft << " zp " << d.aZeroPoint << "," << d.bZeroPoint << ","
          << d.outZeroPoint << " act " << d.actMin << ".." << d.actMax << " signed " << d.aSigned
          << d.bSigned << d.outSigned << " format " << d.format << "\n";
    }
    return s.str();
}

}  // namespace

TEST_CASE("sim_funcsim_matches_rtl_random_descriptors") {
    driver::HardwareAccess& rtl = *testBench().npu;
    FunctionalNpu model;
    // NNCOSIM_FUNCSIM_CHAINS=N runs N chains, NNCOSIM_FUNCSIM_SEED=S from seed S.
    int chains = 160, first = 1, faults = 0, descriptors = 0;
    if (const char* n = std::getenv("NNCOSIM_FUNCSIM_CHAINS")) chains = std::atoi(n);
    if (const char* s = std::getenv("NNCOSIM_FUNCSIM_SEED")) first = std::atoi(s);
    REQUIRE(createSystemCPlatform().ok());
    for (int seed = first; seed < first + chains; ++seed) {
        // Every fourth chain in the last MiB of DRAM, so that high address bits carry too.
        const uint32_t base = seed % 4 == 3 ? kHighBase : kBase;
        ChainGenerator gen(seed, base);
        std::vector<Descriptor> chain = seed % 80 == 7   ? gen.everyOpcodePair()
                                        : seed % 10 == 5 ? gen.compareChain()
                                                         : gen.chain();
        // One RTL for every chain, never hard-reset in between: no job may leave state behind
        // that changes the next (after a MUL job a CONV once went wrong, before the requantizer
        // was flushed and counted its words itself).
        std::string broken = "nothing";
        if (seed % 8 == 0) broken = gen.breakChain(chain);
        std::vector<uint8_t> image(kArenaBytes);
        std::mt19937 fill(seed * 7919u);
        for (auto& b : image) b = static_cast<uint8_t>(fill());
        gen.shapeWeights(chain, image);
        CAPTURE(seed);
        CAPTURE(broken);
        INFO(describe(chain));
        const uint32_t jobTag = static_cast<uint32_t>(seed) * 2654435761u;  // all 32 bits vary
        const Outcome r = runOn(rtl, base, image, chain, jobTag);
        const Outcome m = runOn(model, base, image, chain, jobTag);
        REQUIRE(r.job.interrupted);
        REQUIRE(m.job.interrupted);
        CHECK(m.job.irqStatus == r.job.irqStatus);
        CHECK(m.job.errorCode == r.job.errorCode);
        CHECK(m.job.errorDesc == r.job.errorDesc);
        CHECK(m.job.errorAddr == r.job.errorAddr);
        descriptors += static_cast<int>(chain.size());
        if (r.job.errorCode != 0) {
            ++faults;
            continue;  // what an aborted job wrote is the RTL's timing
        }
        CHECK(m.job.descDone == r.job.descDone);
        CHECK(m.counters.macs == r.counters.macs);
        CHECK(m.counters.dmaBytesRead == r.counters.dmaBytesRead);
        CHECK(m.counters.dmaBytesWritten == r.counters.dmaBytesWritten);
        CHECK(m.counters.arrayActiveCycles == r.counters.arrayActiveCycles);
        // Everything but the record's cycle word (the model's is an estimate).
        const size_t cyclesWord = kArenaBytes - 0x10 + 4 * completion::kCyclesWord;
        size_t differ = image.size();
        for (size_t i = 0; i < image.size(); ++i) {
            if (i / 4 == cyclesWord / 4) continue;
            if (m.arena[i] != r.arena[i]) {
                differ = i;
                break;
            }
        }
        if (differ != image.size() && std::getenv("NNCOSIM_FUNCSIM_VERBOSE")) {
            for (size_t i = differ; i < image.size(); ++i) {
                if (m.arena[i] != r.arena[i] && i / 4 != cyclesWord / 4)
                    MESSAGE("  differs at +" << i << ": RTL " << int(r.arena[i]) << ", model "
                                             << int(m.arena[i]));
            }
        }
        if (differ != image.size()) {
            FAIL_CHECK("DRAM differs at " << base + differ << ": RTL " << int(r.arena[differ])
                                          << ", model " << int(m.arena[differ]));
        }
    }
    MESSAGE(chains << " chains, " << descriptors << " descriptors, " << faults
                   << " stopped by a fault");
    CHECK(faults > 0);
}

}  // namespace nncosim::sim::testing
