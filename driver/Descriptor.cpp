#include "driver/Descriptor.h"

namespace nncosim::npu {
namespace {

constexpr uint32_t kBeat = kDramBusBytes;

constexpr uint32_t flag(DescFlag f) {
    return static_cast<uint32_t>(f);
}

uint32_t wordsOf(uint32_t bytes) {
    return (bytes + kBeat - 1) / kBeat;
}

bool empty(const TensorDesc& t) {
    return t.inner == 0 || t.count1 == 0 || t.count2 == 0 || t.count3 == 0;
}

bool sameShape(const TensorDesc& x, const TensorDesc& y) {
    return x.inner == y.inner && x.count1 == y.count1 && x.count2 == y.count2 &&
           x.count3 == y.count3;
}

}  // namespace

ErrorCode descriptorError(const Descriptor& d, const ChainContext& chain) {
    const auto opcode = static_cast<uint32_t>(d.opcode);
    const bool badOpcode = opcode >= kOpcodeCount;
    const Opcode op = d.opcode;
    const bool window = !badOpcode && op::isWindow(op);
    const bool usesArray = !badOpcode && op::usesArray(op);
    const uint64_t vw = usesArray ? vectorWords(d) : 1;
    const uint64_t aWpr = wordsOf(d.a.inner);
    const uint64_t nb = (uint64_t{d.out.inner} + kBeat * vw - 1) / (kBeat * vw);
    const uint64_t aRows = uint64_t{d.a.count1} * d.a.count2 * d.a.count3;
    const uint64_t aWords = aRows * aWpr;
    const uint64_t pCount = uint64_t{d.out.count1} * d.out.count2;
    const bool taps = d.flags & flag(DescFlag::TAPS);
    const bool pack = d.flags & flag(DescFlag::PACK);
    const bool residual = d.flags & flag(DescFlag::RESIDUAL);
    const bool chainOut = d.flags & flag(DescFlag::CHAIN_OUT);
    const bool chainIn = d.flags & flag(DescFlag::CHAIN_IN);
    const bool last = d.flags & flag(DescFlag::LAST);
    const bool wide = d.flags & flag(DescFlag::WIDE);
    const uint64_t kt = kernelSteps(d);
    const uint64_t wWords = weightStreamWords(d);
    // A 6-bit shift field of -32 (0x20) is reserved.
    const auto minusThirtyTwo = [](int32_t shift) {
        return (static_cast<uint32_t>(shift) & 0x3fu) == 0x20;
    };

    bool bad = false;
    if (op != Opcode::NOP && !badOpcode) {
        bad = empty(d.a) || empty(d.out) || minusThirtyTwo(d.outShift) || d.actMin > d.actMax;
    }
    if (window) {
        bad |= d.kernelW == 0 || d.kernelH == 0 || d.strideW == 0 || d.strideH == 0 ||
               d.dilationW == 0 || d.dilationH == 0 || d.a.count3 != 1 || d.out.count3 != 1 ||
               pCount > kAccDepth || aWords > (wide ? 2 : 1) * kSpadWords || kt > 0xffff;
        if (op != Opcode::CONV) bad |= d.out.inner != d.a.inner;
        if (usesArray) bad |= d.wAddr % kBeat != 0 || wWords > 0xffffffffull;
        if (taps) {
            bad |= op != Opcode::DWCONV || !tapsFit(d.kernelH, d.kernelW, d.strideW, d.dilationW);
        }
        // PACK: at least two taps' channels in a K step's rows, a pixel within one word.
        if (pack) {
            bad |= op != Opcode::CONV || d.a.inner / vw > kArrayRows / 2 || d.a.inner > kBeat ||
                   chainIn;
        }
    }
    if ((taps || pack) && !window) bad = true;
    // A_PLANAR: a window operation loading A alone, one to four whole elements a pixel, every
    // element within one beat (addresses multiples of the element's size).
    if (d.aPlanar) {
        const uint32_t size = elementBytes(d);
        bad |= !window || chainIn || residual || d.a.inner == 0 || d.a.inner > 4 * size ||
               ((d.a.inner | d.a.addr | d.a.stride1 | d.a.stride2 | d.a.stride3) & (size - 1)) != 0;
    }
    // WIDE: a CONV tile in both buffers, loaded and computed alone.
    if (wide) bad |= op != Opcode::CONV || pack || residual || chainOut || chainIn;
    // RESIDUAL: B has OUT's shape and follows A (or the chained words) in the buffer.
    if (residual) {
        bad |= op != Opcode::CONV || pack || chainOut ||
               d.format != static_cast<uint32_t>(Format::INT8) || d.b.inner != d.out.inner ||
               d.b.count1 != d.out.count1 || d.b.count2 != d.out.count2 || d.b.count3 != 1 ||
               aWords + pCount * nb > kSpadWords || minusThirtyTwo(d.aShift) ||
               minusThirtyTwo(d.bShift) || minusThirtyTwo(d.outShift);
    }
    // CHAIN_IN reads the previous CHAIN_OUT tile as a 1x1 convolution's input or a depthwise
    // window's (which may pass its own result on).
    if (chainOut) {
        bad |= !usesArray || (chainIn && op != Opcode::DWCONV) || last ||
               pCount * nb * vw > kSpadWords;
    }
    if (chainIn) {
        bad |= !chain.prevChainOut || d.a.inner != chain.prevOutInner ||
               d.a.count1 != chain.prevOutCount1 || d.a.count2 != chain.prevOutCount2 ||
               d.format != chain.prevFormat;
        if (op == Opcode::CONV) {
            bad |= d.kernelW != 1 || d.kernelH != 1 || d.strideW != 1 || d.strideH != 1 ||
                   d.padTop != 0 || d.padLeft != 0 || d.out.count1 != d.a.count1 ||
                   d.out.count2 != d.a.count2;
        } else if (op != Opcode::DWCONV) {
            bad = true;
        }
    } else if (chain.prevChainOut) {
        bad = true;  // the chained result would have no reader
    }
    if (!badOpcode && op::usesB(op)) {
        bad |= !sameShape(d.a, d.b) || !sameShape(d.a, d.out) || empty(d.b) ||
               2 * aWords > kSpadWords || minusThirtyTwo(d.aShift) || minusThirtyTwo(d.bShift);
    }
    if (op == Opcode::LUT) {
        bad |= !sameShape(d.a, d.out) || aWords > kSpadWords || d.wAddr % kBeat != 0;
    }
    // A softmax row's output shift stays within 31 bits up to 511 elements.
    if (op == Opcode::NORM) {
        bad |= !sameShape(d.a, d.out) || aWords > kSpadWords ||
               (!d.normL2 && (d.a.inner > 511 || d.wAddr % kBeat != 0));
    }
    if (op == Opcode::FUNC) {
        bad |= !sameShape(d.a, d.out) || aWords > kSpadWords ||
               d.format == static_cast<uint32_t>(Format::INT8);
    }
    // Float formats: ADD, MUL, FUNC, pooling, and CONV / DWCONV (TAPS, PACK too), chained as a
    // DWCONV of whole channel blocks into a CONV only; INT32: ADD and MUL without DIVIDE; both
    // on whole elements.
    const auto format = static_cast<Format>(d.format);
    if (format != Format::INT8) {
        bad |= badOpcode || !(op::usesB(op) || window || op == Opcode::FUNC) ||
               (chainOut && (op != Opcode::DWCONV || chainIn || d.out.inner % (kBeat * vw) != 0)) ||
               (chainIn && op != Opcode::CONV) || d.a.inner % elementBytes(d) != 0 ||
               d.out.inner % elementBytes(d) != 0;
    }
    if (format == Format::INT32) bad |= !op::usesB(op) || (op == Opcode::MUL && d.divide);
    if (d.compare != 0) bad |= d.compare == 7 || op != Opcode::ADD || format == Format::INT8;
    if (badOpcode) return ErrorCode::BAD_OPCODE;
    return bad ? ErrorCode::BAD_FIELD : ErrorCode::NONE;
}

ChainError chainError(const Descriptor* chain, size_t count) {
    ChainContext context;
    for (size_t i = 0; i < count; ++i) {
        const ErrorCode code = descriptorError(chain[i], context);
        if (code != ErrorCode::NONE) return {i, code};
        context = ChainContext::after(chain[i]);
    }
    return {};
}

}  // namespace nncosim::npu
