// What a descriptor means, beside its layout (driver/NpuRegisters.h, generated from
// rtl/data/npu.json): the sizes derived from its fields and the rules that refuse it. Every side
// includes this one header: the chain builder and the cost, energy and functional models use the
// sizes, the functional model refuses what descriptorError refuses (the chain builder checks its
// own chains with it in debug builds). rtl/npu_cmd.sv is the independent second implementation,
// kept in agreement by the RTL-vs-model random descriptor test.
#pragma once

#include <algorithm>
#include <cstdint>

#include "driver/NpuRegisters.h"

namespace nncosim::npu {

/// a / b rounded up.
inline constexpr uint32_t ceilDiv(uint32_t a, uint32_t b) {
    return (a + b - 1) / b;
}

/// Scratchpad words (bus beats) of a row of `bytes`.
inline constexpr uint32_t wordsPerRow(uint32_t bytes) {
    return ceilDiv(bytes, kDramBusBytes);
}

/// Bytes per element of a FORMAT: 1 for quantized formats, 4 for FP32 and INT32, 2 for FP16.
inline uint32_t formatBytes(uint32_t format) {
    switch (static_cast<Format>(format)) {
        case Format::FP32:
        case Format::INT32:
            return 4;
        case Format::FP16:
            return 2;
        default:
            return 1;
    }
}

/// Bytes per element of the tensors of `d`.
inline uint32_t elementBytes(const Descriptor& d) {
    return formatBytes(d.format);
}

/// Scratchpad words of one array input vector (kArrayRows elements) of `d`, as
/// rtl/npu_core_pkg.sv's vec_words: a float CONV or DWCONV's element bytes, else 1. A float
/// weight stream holds binary32, kFloatWeightRowWords words per row of a block.
inline uint32_t vectorWords(const Descriptor& d) {
    return op::usesArray(d.opcode) ? elementBytes(d) : 1;
}
inline constexpr uint32_t kFloatWeightRowWords = kArrayCols * 4 / kDramBusBytes;

/// Whether `d` reads tensor B: ADD and MUL, and a RESIDUAL convolution.
inline bool readsB(const Descriptor& d) {
    return op::usesB(d.opcode) || (d.flags & static_cast<uint32_t>(DescFlag::RESIDUAL)) != 0;
}

/// Kernel taps one K step of a PACK convolution over `inChannels` holds (rtl/npu_cmd.sv): as
/// many as the array rows take, at most one per scratchpad read port.
inline uint32_t packTaps(uint32_t inChannels) {
    if (inChannels == 0 || inChannels > kArrayRows) return 1;  // a descriptor PACK refuses
    return std::min(kArrayRows / inChannels, kDwTapPorts);
}

/// K steps of a PACK convolution of `taps` kernel taps over `inChannels`.
inline uint32_t packSteps(uint32_t taps, uint32_t inChannels) {
    return (taps + packTaps(inChannels) - 1) / packTaps(inChannels);
}

/// K steps per output-channel block of a window descriptor (rtl/npu_cmd.sv's kt): one for TAPS,
/// the taps' groups for PACK, every tap and input vector for CONV, every tap otherwise.
inline uint64_t kernelSteps(const Descriptor& d) {
    const uint64_t taps = uint64_t{d.kernelH} * d.kernelW;
    const uint64_t vw = vectorWords(d);
    if (d.flags & static_cast<uint32_t>(DescFlag::TAPS)) return 1;
    if (d.flags & static_cast<uint32_t>(DescFlag::PACK))
        return packSteps(d.kernelH * d.kernelW, d.a.inner / elementBytes(d));
    if (d.opcode != Opcode::CONV) return taps;
    const uint64_t aWords = (uint64_t{d.a.inner} + kDramBusBytes - 1) / kDramBusBytes;
    return taps * ((aWords + vw - 1) / vw);
}

/// Words of the stream at W_ADDR that `d` reads: an array operation's weight blocks (each its
/// quantization words, then kArrayRows rows per K step), a LUT's table, a softmax's
/// exponentials; 0 for other opcodes.
inline uint64_t weightStreamWords(const Descriptor& d) {
    switch (d.opcode) {
        case Opcode::CONV:
        case Opcode::DWCONV: {
            const uint64_t vw = vectorWords(d), rowWords = vw == 1 ? 1 : kFloatWeightRowWords;
            const uint64_t blocks =
                (uint64_t{d.out.inner} + kDramBusBytes * vw - 1) / (kDramBusBytes * vw);
            return blocks * (kWeightQuantWords + kernelSteps(d) * kArrayRows * rowWords);
        }
        case Opcode::LUT:
            return 256 / kDramBusBytes;
        case Opcode::NORM:
            return d.normL2 ? 0 : 256 * 4 / kDramBusBytes;
        default:
            return 0;
    }
}

/// The rows of a CONV weight stream's blocks (packConvWeights, packFloatConvWeights): row r of
/// K step k is row k * kArrayRows + r. A convolution over at most kArrayRows / 2 channels with
/// more than one tap, a pixel's elements within one word, packs taps (DescFlag::PACK): tap t's
/// channels are rows (t % P) * inChannels .. of K step t / P; otherwise K step
/// t * words + c / kArrayRows holds channel c of tap t in row c % kArrayRows.
struct ConvWeightRows {
    uint32_t inChannels = 0, taps = 0;
    bool packed = false;

    /// The layout the driver packs for these sizes and elements of `elementBytes`.
    ConvWeightRows(uint32_t inChannels, uint32_t kernelH, uint32_t kernelW,
                   uint32_t elementBytes = 1)
        : inChannels(inChannels),
          taps(kernelH * kernelW),
          packed(inChannels <= kArrayRows / 2 && inChannels * elementBytes <= kDramBusBytes &&
                 taps > 1) {}
    /// The layout a CONV descriptor reads (its PACK flag).
    explicit ConvWeightRows(const Descriptor& d)
        : inChannels(d.a.inner / elementBytes(d)),
          taps(d.kernelH * d.kernelW),
          packed((d.flags & static_cast<uint32_t>(DescFlag::PACK)) != 0) {}

    uint32_t words() const { return (inChannels + kArrayRows - 1) / kArrayRows; }
    uint32_t kSteps() const { return packed ? packSteps(taps, inChannels) : taps * words(); }
    /// The row of channel c of tap t (ky * kernelW + kx).
    uint32_t row(uint32_t t, uint32_t c) const {
        if (packed) {
            const uint32_t perStep = packTaps(inChannels);
            return t / perStep * kArrayRows + t % perStep * inChannels + c;
        }
        return (t * words() + c / kArrayRows) * kArrayRows + c % kArrayRows;
    }
    /// The tap and channel of row r of K step k (row's inverse); false for a padding row.
    bool tapChannel(uint32_t k, uint32_t r, uint32_t* t, uint32_t* c) const {
        if (packed) {
            const uint32_t perStep = packTaps(inChannels);
            *t = k * perStep + r / inChannels;
            *c = r % inChannels;
            return r < perStep * inChannels && *t < taps;
        }
        *t = k / words();
        *c = k % words() * kArrayRows + r;
        return *c < inChannels;
    }
};

/// binary32 bit patterns of the float formats' identities and unclamped bounds: -0 (of ADD, and
/// the sign bit), -inf (of max) and +inf; [-inf, +inf] is a float clamp that clamps nothing
/// (MAXIMUM and MINIMUM keep infinities, which a fused activation of NONE clamps).
inline constexpr uint32_t kFp32NegZero = 0x80000000u, kFp32NegInf = 0xff800000u,
                          kFp32Inf = 0x7f800000u;

/// Whether a depthwise window of these taps runs in the array's TAPS mode (kernel taps on array
/// rows): KERNEL_H * STRIDE_W <= kDwTapPorts, KERNEL_H * KERNEL_W <= kArrayRows, horizontal
/// dilation 1.
inline bool tapsFit(uint32_t kernelH, uint32_t kernelW, uint32_t strideW, uint32_t dilationW) {
    return kernelH * strideW <= kDwTapPorts && kernelH * kernelW <= kArrayRows && dilationW == 1;
}

/// What decoding a descriptor needs of the one before it: a CHAIN_OUT result must have its
/// reader, a CHAIN_IN descriptor a writer of its shape and format.
struct ChainContext {
    bool prevChainOut = false;
    uint32_t prevOutInner = 0, prevOutCount1 = 0, prevOutCount2 = 0, prevFormat = 0;
    /// The context after `d` decoded.
    static ChainContext after(const Descriptor& d) {
        return {(d.flags & static_cast<uint32_t>(DescFlag::CHAIN_OUT)) != 0, d.out.inner,
                d.out.count1, d.out.count2, d.format};
    }
};

/// The NPU's decode-time verdict on `d` after a descriptor that left `chain` (rtl/npu_cmd.sv):
/// BAD_OPCODE, BAD_FIELD (a field out of range, a tile larger than a buffer, a flag where the
/// opcode takes none, a broken chain) or NONE.
ErrorCode descriptorError(const Descriptor& d, const ChainContext& chain);

/// descriptorError over a whole chain from its start: the first refused descriptor's index and
/// code, or none.
struct ChainError {
    size_t index = 0;
    ErrorCode code = ErrorCode::NONE;
};
ChainError chainError(const Descriptor* chain, size_t count);

}  // namespace nncosim::npu
