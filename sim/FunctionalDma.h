// The functional model's view of the NPU's memory and datapath, shared by the device
// (FunctionalNpu.cpp: registers, doorbell, descriptor fetch and jobs) and the datapath
// (FunctionalExecutor.cpp: one descriptor's loads, compute and stores). Internal to sim/.
#pragma once

#include <cstdint>
#include <cstring>
#include <functional>
#include <vector>

#include "driver/Descriptor.h"
#include "sim/FunctionalDatapath.h"
#include "sim/FunctionalNpu.h"

namespace nncosim::sim::funcsim {

using npu::Descriptor;
using npu::ErrorCode;
using npu::Opcode;
using npu::TensorDesc;

constexpr uint32_t kBeat = npu::kDramBusBytes;
constexpr uint32_t kLanes = npu::kArrayCols;
constexpr uint32_t kDescriptorBytes = npu::kDescriptorWords * 4;
constexpr uint32_t kRecordBytes = npu::kCompletionWords * 4;
// Pixels whose im2col rows are built and multiplied at a time (bounds the model's memory).
constexpr uint32_t kPixelChunk = 64;

constexpr uint32_t flag(npu::DescFlag f) {
    return static_cast<uint32_t>(f);
}

inline uint32_t wordsOf(uint32_t bytes) {
    return (bytes + kBeat - 1) / kBeat;
}

/// A float element of a float-format tensor as binary32 bits (binary16 widened).
inline uint32_t readFloat(const uint8_t* at, bool half) {
    if (half) {
        uint16_t h;
        std::memcpy(&h, at, sizeof h);
        return datapath::fp16ToFp32(h);
    }
    uint32_t v;
    std::memcpy(&v, at, sizeof v);
    return v;
}

/// Stores binary32 `v` as a float-format element (binary16 rounded to nearest even).
inline void writeFloat(uint8_t* at, uint32_t v, bool half) {
    if (half) {
        const uint16_t h = datapath::fp32ToFp16(v);
        std::memcpy(at, &h, sizeof h);
    } else {
        std::memcpy(at, &v, sizeof v);
    }
}

/// Beats of a row of `inner` bytes at `addr` (any alignment).
inline uint32_t beatsOf(uint32_t addr, uint32_t inner) {
    return (addr % kBeat + inner + kBeat - 1) / kBeat;
}

/// Row addresses of a 4-D strided tensor in walk order (dimension 1 fastest), 32-bit wrapping.
template <typename F>
inline void forEachRow(const TensorDesc& t, F&& f) {
    uint32_t row = 0;
    for (uint32_t i3 = 0; i3 < t.count3; ++i3) {
        for (uint32_t i2 = 0; i2 < t.count2; ++i2) {
            uint32_t addr = t.addr + i3 * t.stride3 + i2 * t.stride2;
            for (uint32_t i1 = 0; i1 < t.count1; ++i1, addr += t.stride1) {
                if (!f(row++, addr)) return;
            }
        }
    }
}

/// An 18-bit signed window coordinate of the feeder: v modulo 2^18, sign-extended.
inline int32_t windowCoordinate(int64_t v) {
    return static_cast<int32_t>((static_cast<uint32_t>(v) & 0x3ffffu) ^ 0x20000u) - 0x20000;
}

struct Fault {
    ErrorCode code = ErrorCode::NONE;
    uint32_t desc = 0;
    uint32_t addr = 0;
};

/// DRAM as the NPU's DMA sees it: beats checked against the job's window, reads outside the
/// DRAM (inside the window) returning zeros and writes there vanishing, as on the platform.
struct DmaPort {
    uint8_t* dram;
    uint64_t size;
    uint64_t base, limit;

    /// An injected fault (FaultOptions::kStuckDmaAddressBit): the address bits set in
    /// `stuckMask` are those of `stuckValue` on every beat.
    uint32_t stuckMask = 0, stuckValue = 0;

    bool inWindow(uint32_t beat) const { return beat >= base && uint64_t{beat} + kBeat <= limit; }

    uint32_t stuck(uint32_t addr) const { return (addr & ~stuckMask) | stuckValue; }

    /// The first beat of [addr, addr + bytes) outside the window, if any (as the beat's address
    /// goes out, stuck bit included).
    std::optional<uint32_t> firstOutside(uint32_t addr, uint64_t bytes) const {
        const uint32_t first = addr / kBeat * kBeat;
        const uint64_t beats = (addr % kBeat + bytes + kBeat - 1) / kBeat;
        const uint64_t end = uint64_t{first} + beats * kBeat;
        if (stuckMask == 0 && first >= base && end <= limit && end <= (uint64_t{1} << 32))
            return std::nullopt;
        for (uint64_t b = 0; b < beats; ++b) {
            const auto beat = stuck(static_cast<uint32_t>(first + b * kBeat));
            if (!inWindow(beat)) return beat;
        }
        return std::nullopt;
    }

    void read(uint32_t addr, uint32_t bytes, uint8_t* out) const {
        forEachBeatPiece(addr, bytes, [&](uint32_t a, uint32_t n, uint32_t done) {
            readLinear(a, n, out + done);
        });
    }

    void write(uint32_t addr, uint32_t bytes, const uint8_t* data) const {
        forEachBeatPiece(addr, bytes, [&](uint32_t a, uint32_t n, uint32_t done) {
            writeLinear(a, n, data + done);
        });
    }

    /// f(address, bytes, offset) over [addr, addr + bytes): in one piece, or beat by beat at
    /// their stuck addresses when an address bit is stuck.
    template <typename F>
    void forEachBeatPiece(uint32_t addr, uint32_t bytes, F&& f) const {
        if (stuckMask == 0) return f(addr, bytes, 0);
        for (uint32_t done = 0; done < bytes;) {
            const uint32_t a = addr + done;
            const uint32_t n = std::min(bytes - done, kBeat - a % kBeat);
            f(stuck(a), n, done);
            done += n;
        }
    }

    void readLinear(uint32_t addr, uint32_t bytes, uint8_t* out) const {
        if (uint64_t{addr} + bytes <= size) {
            std::memcpy(out, dram + addr, bytes);
            return;
        }
        for (uint32_t i = 0; i < bytes; ++i) {
            const uint32_t a = addr + i;
            out[i] = a < size ? dram[a] : 0;
        }
    }

    void writeLinear(uint32_t addr, uint32_t bytes, const uint8_t* data) const {
        if (uint64_t{addr} + bytes <= size) {
            std::memcpy(dram + addr, data, bytes);
            return;
        }
        for (uint32_t i = 0; i < bytes; ++i) {
            const uint32_t a = addr + i;
            if (a < size) dram[a] = data[i];
        }
    }
};

/// What one descriptor's execution counted.
struct Counts {
    uint64_t macs = 0, read = 0, written = 0, active = 0;
};

/// Loads a tensor as the load DMA does: every row ceil(INNER / Vec) words, zero-filled tails.
/// A row whose first beat is the beat the load read last reuses it (`lastBeat`, kept from A to
/// B): only its other beats are read.
inline bool loadTensor(const DmaPort& port, const TensorDesc& t, std::vector<uint8_t>* buffer,
                       Counts* counts, uint32_t* faultAddr, std::optional<uint32_t>* lastBeat) {
    const uint32_t rowBytes = wordsOf(t.inner) * kBeat;
    const uint64_t rows = uint64_t{t.count1} * t.count2 * t.count3;
    buffer->assign(rows * rowBytes, 0);
    bool ok = true;
    forEachRow(t, [&](uint32_t row, uint32_t addr) {
        if (auto beat = port.firstOutside(addr, t.inner)) {
            *faultAddr = *beat;
            ok = false;
            return false;
        }
        port.read(addr, t.inner, buffer->data() + uint64_t{row} * rowBytes);
        const uint32_t beats = beatsOf(addr, t.inner);
        const bool reused = *lastBeat == addr / kBeat;
        counts->read += uint64_t{beats - (reused ? 1 : 0)} * kBeat;
        *lastBeat = addr / kBeat + beats - 1;
        return true;
    });
    return ok;
}

/// Loads a planar A (A_PLANAR) as the load DMA does: row r's element p (`size` bytes) from the
/// row's address + p x STRIDE3, the row one word. Each plane keeps the beat it read last.
inline bool loadPlanarTensor(const DmaPort& port, const TensorDesc& t, uint32_t size,
                             std::vector<uint8_t>* buffer, Counts* counts, uint32_t* faultAddr) {
    const uint32_t planes = t.inner / size;
    const uint64_t rows = uint64_t{t.count1} * t.count2 * t.count3;
    buffer->assign(rows * kBeat, 0);
    std::vector<std::optional<uint32_t>> lastBeat(planes);
    bool ok = true;
    forEachRow(t, [&](uint32_t row, uint32_t addr) {
        for (uint32_t p = 0; p < planes; ++p) {
            const uint32_t at = addr + p * t.stride3;
            if (lastBeat[p] != at / kBeat) {
                if (auto beat = port.firstOutside(at, size)) {
                    *faultAddr = *beat;
                    ok = false;
                    return false;
                }
                counts->read += kBeat;
                lastBeat[p] = at / kBeat;
            }
            port.read(at, size, buffer->data() + uint64_t{row} * kBeat + p * size);
        }
        return true;
    });
    return ok;
}

/// The weight stream's block parameters for output-channel block `nb` at `block`.
using BlockQuant = datapath::LaneQuant;
static_assert(kLanes <= 64, "LaneQuant holds 64 lanes");

inline BlockQuant blockQuant(const uint8_t* block) {
    BlockQuant q;
    for (uint32_t l = 0; l < kLanes; ++l) {
        std::memcpy(&q.bias[l], block + 4 * l, 4);
        std::memcpy(&q.multiplier[l], block + 4 * kBeat + 4 * l, 4);
        const datapath::SplitShift shift = datapath::splitShift(block[8 * kBeat + l] & 0x3fu);
        q.left[l] = shift.left;
        q.right[l] = shift.right;
    }
    return q;
}

/// One descriptor on the model's datapath: its loads (a CHAIN_IN descriptor takes `chained`) and
/// weight stream, then `fetchNext` (the RTL fetches and decodes the next descriptor while this
/// one loads), then compute and stores (a CHAIN_OUT result into `chainOut`). False with `fault`
/// set when a DMA access faults or `fetchNext` fails.
bool executeDescriptor(const DmaPort& port, const npu::Descriptor& d, uint32_t index,
                       bool recordWrites, DescriptorTrace* trace, Counts* counts,
                       const FaultOptions& injected, uint64_t* writeBeats,
                       std::vector<uint8_t>* chained, const std::function<bool(Fault*)>& fetchNext,
                       std::vector<uint8_t>* chainOut, Fault* fault);

}  // namespace nncosim::sim::funcsim
