// The functional model's datapath: one descriptor's loads, weight stream, compute (the array
// with its accumulators, drain, requantizer and pool; the streaming units: element-wise, LUT,
// normalization, functions) and stores, as the RTL's units compute them.
#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <optional>

#include "driver/CostModel.h"
#include "model/FixedPoint.h"
#include "sim/FunctionalDma.h"

namespace nncosim::sim::funcsim {
namespace {

using npu::Descriptor;
using npu::ErrorCode;
using npu::Opcode;
using npu::TensorDesc;

/// One descriptor on the model's datapath: loads, compute, stores.
class Executor {
  public:
    Executor(const DmaPort& port, const Descriptor& d, uint32_t index, bool recordWrites,
             DescriptorTrace* trace, Counts* counts, const FaultOptions& fault,
             uint64_t* writeBeats)
        : mPort(port),
          mD(d),
          mIndex(index),
          mRecord(recordWrites),
          mTrace(trace),
          mCounts(counts),
          mFault(fault),
          mWriteBeats(writeBeats) {}

    /// Loads (a CHAIN_IN descriptor takes `chained`); false with `fault` on a DMA fault.
    bool load(std::vector<uint8_t>* chained, Fault* fault) {
        uint32_t addr = 0;
        if (!npu::op::usesA(mD.opcode)) return true;
        const bool chainIn = mD.flags & flag(npu::DescFlag::CHAIN_IN);
        if (chainIn) mA = std::move(*chained);
        std::optional<uint32_t> lastBeat;
        const bool aLoaded =
            chainIn ||
            (mD.aPlanar ? loadPlanarTensor(mPort, mD.a, npu::elementBytes(mD), &mA, mCounts, &addr)
                        : loadTensor(mPort, mD.a, &mA, mCounts, &addr, &lastBeat));
        if (!aLoaded || ((npu::op::usesB(mD.opcode) || residual()) &&
                         !loadTensor(mPort, mD.b, &mB, mCounts, &addr, &lastBeat))) {
            *fault = {ErrorCode::DMA_WINDOW, mIndex, addr};
            return false;
        }
        return true;
    }

    /// Whether the weight or table stream lies in the window (false with `fault`). The RTL
    /// starts a descriptor's stream with its load, before the next descriptor's fetch returns,
    /// so a stream outside the window is met before a bad field of the next descriptor.
    bool streamInWindow(Fault* fault) const {
        const uint64_t words = npu::weightStreamWords(mD);
        if (words == 0) return true;
        if (auto beat = mPort.firstOutside(mD.wAddr, words * kBeat)) {
            *fault = {ErrorCode::DMA_WINDOW, mIndex, *beat};
            return false;
        }
        return true;
    }

    /// Weight or table stream, compute and stores; false with `fault` on a DMA fault. A
    /// CHAIN_OUT result goes to `chainOut` instead of DRAM.
    bool run(std::vector<uint8_t>* chainOut, Fault* fault) {
        switch (mD.opcode) {
            case Opcode::NOP:
                return true;
            case Opcode::CONV:
            case Opcode::DWCONV:
            case Opcode::MAXPOOL:
            case Opcode::AVGPOOL:
                return window(chainOut, fault);
            case Opcode::ADD:
            case Opcode::MUL:
            case Opcode::LUT:
            case Opcode::FUNC:
            case Opcode::NORM:
                return elementwise(fault);
        }
        return true;
    }

  private:
    bool stream(uint32_t addr, uint64_t words, std::vector<uint8_t>* data, Fault* fault) {
        if (auto beat = mPort.firstOutside(addr, words * kBeat)) {
            *fault = {ErrorCode::DMA_WINDOW, mIndex, *beat};
            return false;
        }
        data->resize(words * kBeat);
        mPort.read(addr, static_cast<uint32_t>(words * kBeat), data->data());
        mCounts->read += words * kBeat;
        return true;
    }

    /// Checks every store row of `rows` (addr, bytes), then writes them. Rows of one store job
    /// (an output-channel block of a window operation, all of an element-wise one) follow each
    /// other; each block has its own `channel`.
    struct StoreRow {
        uint32_t addr, size;
        const uint8_t* data;
        uint32_t row, channel;
    };
    bool store(const std::vector<StoreRow>& rows, Fault* fault) {
        for (const StoreRow& r : rows) {
            if (auto beat = mPort.firstOutside(r.addr, r.size)) {
                *fault = {ErrorCode::DMA_WINDOW, mIndex, *beat};
                return false;
            }
        }
        // npu_dma_store's write combining: a row's last beat that ends inside the beat waits,
        // unless the row is its job's last, and the next row's first beat merges into it when it
        // is the same beat (one write beat for both).
        std::optional<uint32_t> held;
        for (size_t i = 0; i < rows.size(); ++i) {
            const StoreRow& r = rows[i];
            const bool merges = held == r.addr / kBeat;
            write(r, merges);
            mCounts->written += uint64_t{beatsOf(r.addr, r.size) - (merges ? 1 : 0)} * kBeat;
            if (mRecord) mTrace->writes.push_back({r.addr, r.size, r.row, r.channel});
            const bool lastOfJob = i + 1 == rows.size() || rows[i + 1].channel != r.channel;
            held.reset();
            if (!lastOfJob && (r.addr + r.size) % kBeat != 0) held = (r.addr + r.size) / kBeat;
        }
        return true;
    }

    /// Writes one row through the write port's injected faults (a stuck data bit, a dropped
    /// beat); `merges`: its first beat is the previous row's last (one beat of the port).
    void write(const StoreRow& r, bool merges) {
        using Kind = FaultOptions::Kind;
        const uint32_t beats = beatsOf(r.addr, r.size);
        const uint64_t first = *mWriteBeats - (merges ? 1 : 0);
        *mWriteBeats = first + beats;
        const uint8_t* data = r.data;
        std::vector<uint8_t> faulty;
        if (mFault.kind == Kind::kStuckWriteBit) {
            faulty.assign(r.data, r.data + r.size);
            const uint32_t bit = mFault.bit % (8 * kBeat);
            for (uint32_t i = 0; i < r.size; ++i) {
                if ((r.addr + i) % kBeat == bit / 8) setBit(&faulty[i], bit % 8, mFault.value);
            }
            data = faulty.data();
        }
        if (mFault.kind != Kind::kDropWriteBeat || mFault.beat < first ||
            mFault.beat >= first + beats) {
            mPort.write(r.addr, r.size, data);
            return;
        }
        // The dropped beat's bytes of the row stay as they were.
        const uint32_t beatStart =
            (r.addr / kBeat + static_cast<uint32_t>(mFault.beat - first)) * kBeat;
        const uint32_t from = std::max(r.addr, beatStart) - r.addr;
        const uint32_t to = std::min(r.addr + r.size, beatStart + kBeat) - r.addr;
        mPort.write(r.addr, from, data);
        mPort.write(r.addr + to, r.size - to, data + to);
    }

    static void setBit(uint8_t* byte, uint32_t bit, bool value) {
        const auto mask = static_cast<uint8_t>(1u << bit);
        *byte = value ? *byte | mask : *byte & static_cast<uint8_t>(~mask);
    }

    /// kStuckRequantBit on `rows` requantized words (`stride` bytes apart) from `out`.
    void stickRequantBit(uint8_t* out, uint64_t rows, uint64_t stride) const {
        if (mFault.kind != FaultOptions::Kind::kStuckRequantBit) return;
        const uint32_t bit = mFault.bit % (8 * kBeat);
        for (uint64_t r = 0; r < rows; ++r)
            setBit(out + r * stride + bit / 8, bit % 8, mFault.value);
    }

    int32_t act(uint8_t byte) const {
        return datapath::wrap9(datapath::widen(byte, mD.aSigned) - mD.aZeroPoint);
    }
    int32_t weight(uint8_t byte) const {
        return datapath::wrap9(datapath::widen(byte, mD.bSigned) - mD.bZeroPoint);
    }

    bool window(std::vector<uint8_t>* chainOut, Fault* fault) {
        const Descriptor& d = mD;
        const bool conv = d.opcode == Opcode::CONV, dw = d.opcode == Opcode::DWCONV;
        const bool array = conv || dw;
        const bool taps = d.flags & flag(npu::DescFlag::TAPS);
        // A block of output channels is kLanes elements, vw words (float array operations).
        const uint32_t vw = npu::vectorWords(d), blockBytes = kBeat * vw;
        const uint32_t channels = d.a.inner / vw;
        const uint32_t aWpr = wordsOf(d.a.inner);
        const uint32_t outW = d.out.count1, outH = d.out.count2, outC = d.out.inner;
        const uint32_t nb = (outC + blockBytes - 1) / blockBytes;
        const uint32_t pixels = outW * outH;
        const uint32_t kTaps = d.kernelH * d.kernelW;
        const uint64_t kt = npu::kernelSteps(d);
        const uint32_t rowWords = vw == 1 ? 1 : npu::kFloatWeightRowWords;
        const uint64_t blockWords =
            npu::kWeightQuantWords + uint64_t{kt} * npu::kArrayRows * rowWords;
        std::vector<uint8_t> weights;
        if (array && !stream(d.wAddr, nb * blockWords, &weights, fault)) return false;
        if (array) stickArrayWeightBit(&weights, blockWords, rowWords);

        const uint32_t rowBytes = aWpr * kBeat;
        const uint8_t* input = mA.data();
        // The output tile, pixel-major, nb blocks per pixel (also the CHAIN_OUT layout).
        std::vector<uint8_t> out(uint64_t{pixels} * nb * blockBytes, 0);
        const uint32_t outRow = nb * blockBytes;

        prepareTaps();
        if (array && vw != 1) {
            floatArray(weights, blockWords * kBeat, input, rowBytes, out.data(), outRow);
        } else if (conv) {
            convolve(weights, input, rowBytes, out.data());
        } else if (dw) {
            depthwise(weights, input, rowBytes, out.data());
        } else {
            pool(input, rowBytes, out.data());
        }
        if (array) {
            // Per vector: valid rows x valid columns (CONV), the block's columns (DWCONV).
            mCounts->macs += uint64_t{pixels} * kTaps * (conv ? channels : 1) * (outC / vw);
            const uint64_t steps =
                taps ? uint64_t{outH} * (outW + (d.kernelW - 1) / d.strideW) : pixels;
            mCounts->active += nb * kt * steps;
        }
        if (residual()) addResidual(out.data(), out.size());
        if (d.flags & flag(npu::DescFlag::CHAIN_OUT)) {
            *chainOut = std::move(out);
            return true;
        }
        std::vector<StoreRow> rows;
        rows.reserve(uint64_t{nb} * pixels);
        for (uint32_t b = 0; b < nb; ++b) {
            const uint32_t bytes = std::min(blockBytes, outC - b * blockBytes);
            for (uint32_t oy = 0; oy < outH; ++oy) {
                for (uint32_t ox = 0; ox < outW; ++ox) {
                    const uint32_t p = oy * outW + ox;
                    rows.push_back(
                        {d.out.addr + b * blockBytes + ox * d.out.stride1 + oy * d.out.stride2,
                         bytes, out.data() + uint64_t{p} * outRow + b * blockBytes, p, b * kLanes});
                }
            }
        }
        return store(rows, fault);
    }

    /// kStuckAccumulatorBit on the accumulator of `lane`, as the drain reads it.
    uint32_t stickAccumulatorBit(uint32_t value, uint32_t lane) const {
        if (mFault.kind != FaultOptions::Kind::kStuckAccumulatorBit ||
            lane != mFault.bit / 32 % kLanes)
            return value;
        const uint32_t mask = 1u << (mFault.bit % 32);
        return mFault.value ? value | mask : value & ~mask;
    }

    /// Requantizes a block's accumulators into `out` (pixel-major rows of outRow bytes).
    void drain(const int32_t* acc, uint32_t count, const BlockQuant& q, uint8_t* out,
               uint32_t outRow) const {
        std::vector<int32_t> faulty;
        if (mFault.kind == FaultOptions::Kind::kStuckAccumulatorBit) {
            faulty.assign(acc, acc + uint64_t{count} * kLanes);
            for (uint64_t i = 0; i < faulty.size(); ++i) {
                faulty[i] = static_cast<int32_t>(
                    stickAccumulatorBit(static_cast<uint32_t>(faulty[i]), i % kLanes));
            }
            acc = faulty.data();
        }
        // RESIDUAL: the result is the ADD's input, clamped to the type's range only.
        const bool res = residual();
        const int32_t typeMin = mD.outSigned ? -128 : 0, typeMax = mD.outSigned ? 127 : 255;
        datapath::requantizeRows(acc, count, kLanes, q, res ? mD.midZeroPoint : mD.outZeroPoint,
                                 res ? typeMin : mD.actMin, res ? typeMax : mD.actMax, out, outRow);
        stickRequantBit(out, count, outRow);
    }

    bool residual() const {
        return mD.opcode == Opcode::CONV && (mD.flags & flag(npu::DescFlag::RESIDUAL));
    }

    /// NNAPI's quantized ADD of a and b (rtl/npu_eltwise.sv), before its output requantization.
    uint32_t addSum(uint8_t a, bool aSigned, int32_t aZero, uint8_t b, bool bSigned,
                    int32_t bZero) const {
        const Descriptor& d = mD;
        const auto ac = static_cast<uint32_t>(datapath::widen(a, aSigned) - aZero);
        const auto bc = static_cast<uint32_t>(datapath::widen(b, bSigned) - bZero);
        return static_cast<uint32_t>(datapath::mulByQuantizedMultiplier(
                   ac << d.leftShift, d.aMultiplier, shiftOf(d.aShift))) +
               static_cast<uint32_t>(datapath::mulByQuantizedMultiplier(
                   bc << d.leftShift, d.bMultiplier, shiftOf(d.bShift)));
    }

    static datapath::SplitShift shiftOf(int32_t shift) {
        return datapath::splitShift(datapath::shiftBits(shift));
    }

    /// RESIDUAL (rtl/npu_residual.sv): B added to the requantized tile `out` (B's layout: pixel
    /// major, a pixel's words side by side).
    void addResidual(uint8_t* out, uint64_t bytes) const {
        const Descriptor& d = mD;
        for (uint64_t i = 0; i < bytes; ++i) {
            out[i] = datapath::requantize(
                addSum(out[i], d.outSigned, d.midZeroPoint, mB[i], d.outSigned, d.resZeroPoint), 0,
                d.outMultiplier, shiftOf(d.outShift), d.outZeroPoint, d.actMin, d.actMax);
        }
    }

    /// kStuckArrayWeightBit on a streamed weight block set: row r of a block's K step is
    /// `rowWords` words; column c's weight is byte c (int8) or the binary32 at byte 4c of the row,
    /// whose top byte (sign and exponent) holds the stuck bit.
    void stickArrayWeightBit(std::vector<uint8_t>* weights, uint64_t blockWords,
                             uint32_t rowWords) const {
        if (mFault.kind != FaultOptions::Kind::kStuckArrayWeightBit) return;
        const uint32_t pe = mFault.bit / 8 % (npu::kArrayRows * npu::kArrayCols);
        const uint32_t row = pe / npu::kArrayCols, column = pe % npu::kArrayCols;
        const uint32_t byte = rowWords == 1 ? column : 4 * column + 3;
        for (uint64_t w = 0; w < weights->size() / kBeat; ++w) {
            const uint64_t inBlock = w % blockWords;
            if (inBlock < npu::kWeightQuantWords) continue;
            const uint64_t k = inBlock - npu::kWeightQuantWords;
            if (k / rowWords % npu::kArrayRows != row || k % rowWords != byte / kBeat) continue;
            setBit(&(*weights)[w * kBeat + byte % kBeat], mFault.bit % 8, mFault.value);
        }
    }

    /// Tap t's offsets from an output pixel's (oy * STRIDE_H, ox * STRIDE_W).
    void prepareTaps() {
        const Descriptor& d = mD;
        const uint32_t taps = d.kernelH * d.kernelW;
        mTapY.resize(taps);
        mTapX.resize(taps);
        for (uint32_t t = 0; t < taps; ++t) {
            mTapY[t] = int64_t{t / d.kernelW} * d.dilationH - d.padTop;
            mTapX[t] = int64_t{t % d.kernelW} * d.dilationW - d.padLeft;
        }
    }

    /// The input pixel (scratchpad row) of output pixel p's tap t, or -1 for padding, with the
    /// feeder's 18-bit coordinates.
    int32_t position(uint32_t p, uint32_t t) const {
        const Descriptor& d = mD;
        int64_t iy = int64_t{p / d.out.count1} * d.strideH + mTapY[t];
        int64_t ix = int64_t{p % d.out.count1} * d.strideW + mTapX[t];
        if (iy >= (1 << 17) || iy < -(1 << 17)) iy = windowCoordinate(iy);
        if (ix >= (1 << 17) || ix < -(1 << 17)) ix = windowCoordinate(ix);
        const bool in = iy >= 0 && ix >= 0 && iy < d.a.count2 && ix < d.a.count1;
        return in ? static_cast<int32_t>(iy * d.a.count1 + ix) : -1;
    }

    /// position() of every tap of pixel p.
    void positions(uint32_t p, int32_t* out) const {
        for (uint32_t t = 0; t < mTapY.size(); ++t) out[t] = position(p, t);
    }

    void convolve(const std::vector<uint8_t>& weights, const uint8_t* input, uint32_t rowBytes,
                  uint8_t* out) const {
        const Descriptor& d = mD;
        const uint32_t channels = d.a.inner;
        const uint32_t kTaps = d.kernelH * d.kernelW;
        const uint32_t nb = wordsOf(d.out.inner);
        const uint32_t pixels = d.out.count1 * d.out.count2;
        const uint64_t k = uint64_t{kTaps} * channels;
        const uint64_t kEven = (k + 1) / 2 * 2;
        const npu::ConvWeightRows rows(d);
        const uint64_t blockBytes =
            (npu::kWeightQuantWords + uint64_t{rows.kSteps()} * npu::kArrayRows) * kBeat;
        // Weights of every block as k x lanes matrices (row = tap-major input channel), packed.
        std::vector<int16_t> packed(nb * kEven * kLanes), matrix(kEven * kLanes);
        std::vector<BlockQuant> quant(nb);
        for (uint32_t b = 0; b < nb; ++b) {
            const uint8_t* block = weights.data() + b * blockBytes;
            quant[b] = blockQuant(block);
            std::fill(matrix.begin(), matrix.end(), 0);
            for (uint32_t t = 0; t < kTaps; ++t) {
                for (uint32_t c = 0; c < channels; ++c) {
                    const uint8_t* row =
                        block + npu::kWeightQuantWords * kBeat + uint64_t{rows.row(t, c)} * kBeat;
                    int16_t* dst = matrix.data() + (uint64_t{t} * channels + c) * kLanes;
                    for (uint32_t l = 0; l < kLanes; ++l)
                        dst[l] = static_cast<int16_t>(weight(row[l]));
                }
            }
            datapath::packPairs(matrix.data(), kEven, packed.data() + b * kEven * kLanes);
        }
        // Activations: im2col rows of kPixelChunk pixels at a time.
        std::vector<int16_t> lut(256);
        for (int v = 0; v < 256; ++v) lut[v] = static_cast<int16_t>(act(static_cast<uint8_t>(v)));
        std::vector<int16_t> cols(uint64_t{kPixelChunk} * kEven);
        std::vector<int32_t> pos(kTaps);
        std::vector<int32_t> acc(uint64_t{kPixelChunk} * kLanes);
        const uint32_t outRow = nb * kBeat;
        for (uint32_t p0 = 0; p0 < pixels; p0 += kPixelChunk) {
            const uint32_t count = std::min(kPixelChunk, pixels - p0);
            for (uint32_t i = 0; i < count; ++i) {
                int16_t* row = cols.data() + uint64_t{i} * kEven;
                positions(p0 + i, pos.data());
                for (uint32_t t = 0; t < kTaps; ++t) {
                    int16_t* dst = row + uint64_t{t} * channels;
                    if (pos[t] < 0) {
                        std::fill(dst, dst + channels, 0);
                        continue;
                    }
                    const uint8_t* src = input + uint64_t(pos[t]) * rowBytes;
                    for (uint32_t c = 0; c < channels; ++c) dst[c] = lut[src[c]];
                }
                if (kEven != k) row[k] = 0;
            }
            for (uint32_t b = 0; b < nb; ++b) {
                datapath::gemm(cols.data(), count, kEven, kEven, packed.data() + b * kEven * kLanes,
                               acc.data());
                drain(acc.data(), count, quant[b], out + uint64_t{p0} * outRow + b * kBeat, outRow);
            }
        }
    }

    void depthwise(const std::vector<uint8_t>& weights, const uint8_t* input, uint32_t rowBytes,
                   uint8_t* out) const {
        const Descriptor& d = mD;
        const bool taps = d.flags & flag(npu::DescFlag::TAPS);
        const uint32_t channels = d.a.inner;
        const uint32_t kTaps = d.kernelH * d.kernelW;
        const uint32_t nb = wordsOf(d.out.inner);
        const uint32_t pixels = d.out.count1 * d.out.count2;
        const uint32_t kt = taps ? 1 : kTaps;
        const uint64_t blockBytes =
            (npu::kWeightQuantWords + uint64_t{kt} * npu::kArrayRows) * kBeat;
        const uint32_t outRow = nb * kBeat;
        std::vector<uint32_t> acc(uint64_t{pixels} * kLanes);
        std::vector<int32_t> diag(uint64_t{kTaps} * kLanes);  // per tap, channel c's weight
        std::vector<int32_t> pos(kTaps), lut(256);
        for (int v = 0; v < 256; ++v) lut[v] = act(static_cast<uint8_t>(v));
        for (uint32_t b = 0; b < nb; ++b) {
            const uint8_t* block = weights.data() + b * blockBytes;
            const BlockQuant q = blockQuant(block);
            const uint8_t* rows = block + npu::kWeightQuantWords * kBeat;
            const uint32_t lanes = std::min(kLanes, channels - b * kLanes);
            // TAPS: row t of the one block is tap t, column c channel c. Otherwise tap t has a
            // block of its own, row r input lane r, column c output lane c: the RTL multiplies
            // the whole block, so weights off the diagonal count unless they are zero.
            const auto blockWeight = [&](uint32_t t, uint32_t r, uint32_t c) {
                return weight(rows[(uint64_t{t} * npu::kArrayRows + r) * kBeat + c]);
            };
            bool diagonal = true;
            for (uint32_t t = 0; t < kTaps; ++t) {
                for (uint32_t c = 0; c < kLanes; ++c) {
                    diag[uint64_t{t} * kLanes + c] =
                        taps ? weight(rows[t * kBeat + c]) : blockWeight(t, c, c);
                    if (taps) continue;
                    for (uint32_t r = 0; r < lanes && diagonal && c < lanes; ++r)
                        diagonal = r == c || blockWeight(t, r, c) == 0;
                }
            }
            std::fill(acc.begin(), acc.end(), 0);
            for (uint32_t p = 0; p < pixels; ++p) {
                uint32_t* sum = acc.data() + uint64_t{p} * kLanes;
                positions(p, pos.data());
                for (uint32_t t = 0; t < kTaps; ++t) {
                    if (pos[t] < 0) continue;
                    const uint8_t* src = input + uint64_t(pos[t]) * rowBytes + b * kBeat;
                    if (taps || diagonal) {
                        const int32_t* wt = diag.data() + uint64_t{t} * kLanes;
                        for (uint32_t c = 0; c < lanes; ++c)
                            sum[c] += static_cast<uint32_t>(lut[src[c]] * wt[c]);
                    } else {
                        for (uint32_t r = 0; r < lanes; ++r) {
                            const int32_t x = lut[src[r]];
                            for (uint32_t c = 0; c < kLanes; ++c)
                                sum[c] += static_cast<uint32_t>(x * blockWeight(t, r, c));
                        }
                    }
                }
            }
            drain(reinterpret_cast<const int32_t*>(acc.data()), pixels, q, out + b * kBeat, outRow);
        }
    }

    /// A float CONV or DWCONV as the array computes it (rtl/npu_array.sv, npu_accum.sv,
    /// npu_pool.sv), block by block of kLanes output channels. Per K step (conv: tap, then input
    /// channel block; depthwise: tap) column c sums its rows in order from -0 (depthwise: its
    /// diagonal row only), each product and each sum rounded; the accumulator takes the first K
    /// step's sum and adds the others in order; the finish adds the bias, clamps and rounds to
    /// binary16 for FP16. A TAPS DWCONV has one K step: column c sums the taps' rows in order
    /// from -0. A PACK CONV's K steps hold several taps' channels (npu::ConvWeightRows), its
    /// padding rows +0. Inputs outside the tensor or past the channels are +0.
    void floatArray(const std::vector<uint8_t>& weights, uint64_t blockBytes, const uint8_t* input,
                    uint32_t rowBytes, uint8_t* out, uint32_t outRow) const {
        const Descriptor& d = mD;
        const bool conv = d.opcode == Opcode::CONV;
        const bool half = d.format == static_cast<uint32_t>(npu::Format::FP16);
        const uint32_t size = npu::elementBytes(d);
        const uint32_t inElems = d.a.inner / size, outElems = d.out.inner / size;
        const uint32_t kTaps = d.kernelH * d.kernelW;
        const uint32_t nb = (outElems + kLanes - 1) / kLanes;
        const uint32_t pixels = d.out.count1 * d.out.count2;
        const uint32_t rowStride = npu::kFloatWeightRowWords * kBeat;
        const bool taps = d.flags & flag(npu::DescFlag::TAPS);
        const npu::ConvWeightRows convRows(d);
        const uint32_t kSteps = conv ? convRows.kSteps() : kTaps;
        std::vector<int32_t> pos(kTaps);
        uint32_t act[kLanes], acc[kLanes], bias[kLanes];
        for (uint32_t b = 0; b < nb; ++b) {
            const uint8_t* block = weights.data() + b * blockBytes;
            const uint8_t* rows = block + npu::kWeightQuantWords * kBeat;
            std::memcpy(bias, block, sizeof bias);
            const uint32_t lanes = std::min(kLanes, outElems - b * kLanes);
            for (uint32_t p = 0; p < pixels; ++p) {
                positions(p, pos.data());
                // Tap t's element of channel c, +0 outside the input or past the channels.
                const auto element = [&](uint32_t t, uint32_t c) -> uint32_t {
                    if (pos[t] < 0 || c >= inElems) return 0;
                    return readFloat(input + uint64_t(pos[t]) * rowBytes + c * size, half);
                };
                if (taps) {
                    for (uint32_t c = 0; c < kLanes; ++c) acc[c] = npu::kFp32NegZero;
                    for (uint32_t t = 0; t < kTaps; ++t) {
                        for (uint32_t c = 0; c < kLanes; ++c) {
                            uint32_t weight;
                            std::memcpy(&weight, rows + t * rowStride + 4 * c, 4);
                            acc[c] = datapath::fp32Add(
                                acc[c], datapath::fp32Mul(element(t, b * kLanes + c), weight));
                        }
                    }
                } else {
                    for (uint32_t kt = 0; kt < kSteps; ++kt) {
                        for (uint32_t i = 0; i < kLanes; ++i) {
                            uint32_t t = kt, c = b * kLanes + i;  // depthwise: tap kt, block b
                            act[i] =
                                !conv || convRows.tapChannel(kt, i, &t, &c) ? element(t, c) : 0;
                        }
                        const uint8_t* w = rows + uint64_t{kt} * kLanes * rowStride;
                        for (uint32_t c = 0; c < kLanes; ++c) {
                            uint32_t sum = npu::kFp32NegZero;
                            for (uint32_t i = conv ? 0 : c; i < (conv ? kLanes : c + 1); ++i) {
                                uint32_t weight;
                                std::memcpy(&weight, w + i * rowStride + 4 * c, 4);
                                sum = datapath::fp32Add(sum, datapath::fp32Mul(act[i], weight));
                            }
                            acc[c] = kt == 0 ? sum : datapath::fp32Add(acc[c], sum);
                        }
                    }
                }
                uint8_t* dst = out + uint64_t{p} * outRow + b * kLanes * size;
                for (uint32_t c = 0; c < lanes; ++c) {
                    const uint32_t v = datapath::fp32Add(stickAccumulatorBit(acc[c], c), bias[c]);
                    writeFloat(dst + c * size, datapath::fp32Clamp(v, d.fpMin, d.fpMax), half);
                }
            }
        }
    }

    /// Float pooling as rtl/npu_accum.sv and npu_pool.sv compute it: per word, binary32 lanes
    /// (binary16 widened), max or sum over the valid taps in tap order, the average divided by
    /// the count, the clamp, binary16 rounded.
    void floatPool(const uint8_t* input, uint32_t rowBytes, uint8_t* out) const {
        const Descriptor& d = mD;
        const bool maxpool = d.opcode == Opcode::MAXPOOL;
        const bool half = d.format == static_cast<uint32_t>(npu::Format::FP16);
        const uint32_t size = half ? 2 : 4, lanes = kBeat / size;
        const uint32_t kTaps = d.kernelH * d.kernelW;
        const uint32_t nb = wordsOf(d.out.inner);
        const uint32_t pixels = d.out.count1 * d.out.count2;
        std::vector<int32_t> pos(kTaps);
        for (uint32_t b = 0; b < nb; ++b) {
            for (uint32_t p = 0; p < pixels; ++p) {
                uint32_t acc[kLanes / 2];
                std::fill(acc, acc + lanes, maxpool ? npu::kFp32NegInf : npu::kFp32NegZero);
                uint32_t count = 0;
                positions(p, pos.data());
                for (uint32_t t = 0; t < kTaps; ++t) {
                    if (pos[t] < 0) continue;
                    const uint8_t* src = input + uint64_t(pos[t]) * rowBytes + b * kBeat;
                    for (uint32_t l = 0; l < lanes; ++l) {
                        const uint32_t v = readFloat(src + l * size, half);
                        acc[l] =
                            maxpool ? datapath::fp32Max(acc[l], v) : datapath::fp32Add(acc[l], v);
                    }
                    ++count;
                }
                uint8_t* dst = out + (uint64_t{p} * nb + b) * kBeat;
                for (uint32_t l = 0; l < lanes; ++l) {
                    const uint32_t v = maxpool ? acc[l] : datapath::fp32DivCount(acc[l], count);
                    writeFloat(dst + l * size, datapath::fp32Clamp(v, d.fpMin, d.fpMax), half);
                }
            }
        }
    }

    void pool(const uint8_t* input, uint32_t rowBytes, uint8_t* out) const {
        const Descriptor& d = mD;
        if (d.format != static_cast<uint32_t>(npu::Format::INT8))
            return floatPool(input, rowBytes, out);
        const bool maxpool = d.opcode == Opcode::MAXPOOL;
        const uint32_t kTaps = d.kernelH * d.kernelW;
        const uint32_t nb = wordsOf(d.out.inner);
        const uint32_t pixels = d.out.count1 * d.out.count2;
        const uint32_t outRow = nb * kBeat;
        std::vector<int32_t> pos(kTaps);
        for (uint32_t b = 0; b < nb; ++b) {
            const uint32_t lanes = std::min(kLanes, d.out.inner - b * kLanes);
            for (uint32_t p = 0; p < pixels; ++p) {
                // Max over valid taps (INT32_MIN when none); sum and count of valid taps.
                int32_t best[kLanes];
                uint32_t sum[kLanes] = {};
                uint32_t count = 0;
                std::fill(best, best + kLanes, INT32_MIN);
                positions(p, pos.data());
                for (uint32_t t = 0; t < kTaps; ++t) {
                    if (pos[t] < 0) continue;
                    const uint8_t* src = input + uint64_t(pos[t]) * rowBytes + b * kBeat;
                    for (uint32_t l = 0; l < lanes; ++l) {
                        const int32_t x = datapath::widen(src[l], d.aSigned);
                        best[l] = std::max(best[l], x);
                        sum[l] += static_cast<uint32_t>(x);
                    }
                    ++count;
                }
                uint8_t* dst = out + uint64_t{p} * outRow + b * kBeat;
                for (uint32_t l = 0; l < lanes; ++l) {
                    const int32_t value =
                        maxpool ? best[l]
                                : datapath::averageFinish(sum[l], count & 0xffffu, d.truncate);
                    dst[l] = datapath::clampByte(value, d.actMin, d.actMax);
                }
            }
        }
    }

    /// Whether `d.compare` holds for `a` against `b`: signed integers, or IEEE floats (binary32
    /// bits, binary16 widened), which the host's comparisons are.
    static bool compareHolds(const Descriptor& d, uint32_t a, uint32_t b) {
        const bool fp = d.format != static_cast<uint32_t>(npu::Format::INT32);
        const auto ordered = [&](auto x, auto y) {
            switch (static_cast<npu::Compare>(d.compare)) {
                case npu::Compare::EQ:
                    return x == y;
                case npu::Compare::NE:
                    return x != y;
                case npu::Compare::LT:
                    return x < y;
                case npu::Compare::LE:
                    return x <= y;
                case npu::Compare::GT:
                    return x > y;
                default:
                    return x >= y;
            }
        };
        if (fp) {
            float x, y;
            std::memcpy(&x, &a, sizeof x);
            std::memcpy(&y, &b, sizeof y);
            return ordered(x, y);
        }
        return ordered(static_cast<int32_t>(a), static_cast<int32_t>(b));
    }

    /// A float or INT32 ADD, MUL or FUNC word by word, as rtl/npu_eltwise.sv computes its
    /// lanes.
    void wideElementwise(uint8_t* out, uint64_t bytes) const {
        const Descriptor& d = mD;
        const auto function = [&](uint32_t a) {
            switch (static_cast<npu::Function>(d.floatFn)) {
                case npu::Function::EXP:
                    return datapath::fp32Exp(a);
                case npu::Function::LOG:
                    return datapath::fp32Log(a);
                case npu::Function::SQRT:
                    return datapath::fp32Sqrt(a);
                default:
                    return datapath::fp32Trunc(a);
            }
        };
        const auto lane = [&](uint32_t a, uint32_t b) {
            if (d.compare != 0) return compareHolds(d, a, b) ? 1u : 0u;
            if (d.format == static_cast<uint32_t>(npu::Format::INT32))
                return d.opcode == Opcode::MUL ? a * b : d.negateB ? a - b : a + b;
            uint32_t v;
            if (d.opcode == Opcode::FUNC)
                v = function(a);
            else if (d.opcode == Opcode::MUL)
                v = d.divide ? datapath::fp32Div(a, b) : datapath::fp32Mul(a, b);
            else
                v = datapath::fp32Add(a, d.negateB ? b ^ npu::kFp32NegZero : b);
            return datapath::fp32Clamp(v, d.fpMin, d.fpMax);
        };
        const bool half = d.format == static_cast<uint32_t>(npu::Format::FP16);
        const bool two = npu::op::usesB(d.opcode);
        for (uint64_t i = 0; i < bytes; i += npu::elementBytes(d)) {
            const uint32_t a = readFloat(&mA[i], half), b = two ? readFloat(&mB[i], half) : 0;
            if (half && d.compare != 0) {  // a binary16 0 or 1 as an integer
                const uint16_t holds = compareHolds(d, a, b) ? 1 : 0;
                std::memcpy(out + i, &holds, sizeof holds);
                continue;
            }
            writeFloat(out + i, lane(a, b), half);
        }
    }

    /// A quantized ADD or MUL (requantized), or a LUT, byte by byte.
    void quantizedElementwise(const std::vector<uint8_t>& table, uint8_t* out,
                              uint64_t bytes) const {
        const Descriptor& d = mD;
        for (uint64_t i = 0; i < bytes; ++i) {
            const uint8_t a = mA[i];
            if (d.opcode == Opcode::LUT) {
                out[i] = table[a];
                continue;
            }
            const uint8_t b = mB[i];
            uint32_t value;
            if (d.opcode == Opcode::ADD) {
                value = addSum(a, d.aSigned, d.aZeroPoint, b, d.bSigned, d.bZeroPoint);
            } else {
                value = static_cast<uint32_t>(datapath::widen(a, d.aSigned) - d.aZeroPoint) *
                        static_cast<uint32_t>(datapath::widen(b, d.bSigned) - d.bZeroPoint);
            }
            out[i] = datapath::requantize(value, 0, d.outMultiplier, shiftOf(d.outShift),
                                          d.outZeroPoint, d.actMin, d.actMax);
        }
        // The requantizer's fault port: quantized ADD and MUL only.
        if (d.opcode != Opcode::LUT) stickRequantBit(out, bytes / kBeat, kBeat);
    }

    /// NORM rows (rtl/npu_eltwise.sv): a row of A is one vector, normalized as NNAPI's integer
    /// SOFTMAX (exponentials from `table`) or L2_NORMALIZATION defines it (model/FixedPoint.h).
    void normRows(const std::vector<uint8_t>& table, uint8_t* out, uint32_t rowBytes) const {
        const Descriptor& d = mD;
        const uint64_t rows = uint64_t{d.a.count1} * d.a.count2 * d.a.count3;
        const auto shift6 = [](int32_t shift) { return static_cast<uint32_t>(shift) & 0x3f; };
        for (uint64_t r = 0; r < rows; ++r) {
            const uint8_t* x = &mA[r * rowBytes];
            uint8_t* y = out + r * rowBytes;
            const auto value = [&](uint32_t i) { return datapath::widen(x[i], d.aSigned); };
            uint32_t sum = 0;  // wrapping, as the RTL adds
            if (d.normL2) {
                for (uint32_t i = 0; i < d.a.inner; ++i) {
                    const int32_t diff = value(i) - d.aZeroPoint;
                    sum += static_cast<uint32_t>(diff * diff);
                }
                const auto inv = fixedpoint::inverseSqrtMultiplier(static_cast<int32_t>(sum));
                for (uint32_t i = 0; i < d.a.inner; ++i) {
                    const auto diff = static_cast<uint32_t>(value(i) - d.aZeroPoint);
                    const int32_t v = datapath::mulByQuantizedMultiplier(
                        diff << d.leftShift, inv.multiplier,
                        shift6(inv.shift + datapath::shiftBits(d.outShift)));
                    y[i] = datapath::clampByte(v + d.outZeroPoint, d.actMin, d.actMax);
                }
                continue;
            }
            int32_t maxValue = -256;
            for (uint32_t i = 0; i < d.a.inner; ++i) maxValue = std::max(maxValue, value(i));
            const auto exp = [&](uint32_t i) {
                int32_t e;
                std::memcpy(&e, &table[4 * static_cast<uint32_t>((maxValue - value(i)) & 0xff)], 4);
                return e;
            };
            for (uint32_t i = 0; i < d.a.inner; ++i)
                sum += static_cast<uint32_t>(fixedpoint::roundingDivideByPOT(exp(i), 12));
            const int headroom = fixedpoint::countLeadingZeros(sum);
            using F0 = fixedpoint::FixedPoint<int32_t, 0>;
            const uint32_t normalized = headroom >= 32 ? 0 : sum << headroom;
            const int32_t scale =
                fixedpoint::oneOverOnePlusXForXIn01(
                    F0::fromRaw(static_cast<int32_t>(normalized - (uint32_t{1} << 31))))
                    .raw();
            for (uint32_t i = 0; i < d.a.inner; ++i) {
                const int32_t v = datapath::mulByQuantizedMultiplier(static_cast<uint32_t>(exp(i)),
                                                                     scale, shift6(headroom - 35));
                y[i] = datapath::clampByte(v + d.outZeroPoint, d.actMin, d.actMax);
            }
        }
    }

    bool elementwise(Fault* fault) {
        const Descriptor& d = mD;
        std::vector<uint8_t> table;
        const uint64_t tableWords = npu::weightStreamWords(d);  // LUT's, softmax's
        if (tableWords > 0 && !stream(d.wAddr, tableWords, &table, fault)) return false;
        const uint32_t rowBytes = wordsOf(d.a.inner) * kBeat;
        const uint64_t rows = uint64_t{d.a.count1} * d.a.count2 * d.a.count3;
        std::vector<uint8_t> out(rows * rowBytes);
        if (d.opcode == Opcode::NORM)
            normRows(table, out.data(), rowBytes);
        else if (d.format != static_cast<uint32_t>(npu::Format::INT8))
            wideElementwise(out.data(), out.size());
        else
            quantizedElementwise(table, out.data(), out.size());
        std::vector<StoreRow> store_;
        store_.reserve(rows);
        forEachRow(d.out, [&](uint32_t row, uint32_t addr) {
            store_.push_back({addr, d.out.inner, out.data() + uint64_t{row} * rowBytes, row, 0});
            return true;
        });
        return store(store_, fault);
    }

    const DmaPort& mPort;
    const Descriptor& mD;
    const uint32_t mIndex;
    const bool mRecord;
    DescriptorTrace* mTrace;
    Counts* mCounts;
    const FaultOptions& mFault;
    uint64_t* mWriteBeats;  // the job's data write beats so far
    std::vector<uint8_t> mA, mB;
    std::vector<int64_t> mTapY, mTapX;
};

}  // namespace

bool executeDescriptor(const DmaPort& port, const Descriptor& d, uint32_t index, bool recordWrites,
                       DescriptorTrace* trace, Counts* counts, const FaultOptions& injected,
                       uint64_t* writeBeats, std::vector<uint8_t>* chained,
                       const std::function<bool(Fault*)>& fetchNext, std::vector<uint8_t>* chainOut,
                       Fault* fault) {
    Executor executor(port, d, index, recordWrites, trace, counts, injected, writeBeats);
    return executor.load(chained, fault) && executor.streamInWindow(fault) && fetchNext(fault) &&
           executor.run(chainOut, fault);
}

}  // namespace nncosim::sim::funcsim
