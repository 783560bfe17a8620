#include "driver/tests/FakeNpu.h"

#include <algorithm>
#include <cstring>
#include <thread>

#include "driver/ChainBuilder.h"
#include "model/FixedPoint.h"

namespace nncosim::driver::testing {
namespace {

constexpr uint32_t kBeat = npu::kDramBusBytes;
constexpr uint32_t kIrqAll = npu::field::kIrqStatusDone | npu::field::kIrqStatusError;

constexpr uint32_t kLast = static_cast<uint32_t>(npu::DescFlag::LAST);
constexpr uint32_t kTaps = static_cast<uint32_t>(npu::DescFlag::TAPS);
constexpr uint32_t kChainOut = static_cast<uint32_t>(npu::DescFlag::CHAIN_OUT);
constexpr uint32_t kChainIn = static_cast<uint32_t>(npu::DescFlag::CHAIN_IN);

int32_t readValue(uint8_t byte, bool isSigned) {
    return isSigned ? int32_t(int8_t(byte)) : int32_t(byte);
}

}  // namespace

FakeNpu::FakeNpu(uint64_t dramBytes) : mDram(dramBytes, 0) {
    mRegs[npu::reg::kIrqEnable] = npu::reset::kIrqEnable;
    mRegs[npu::reg::kWatchdogLimit] = npu::reset::kWatchdogLimit;
}

uint32_t FakeNpu::readRegister(uint32_t offset) {
    std::lock_guard<std::mutex> lock(mMutex);
    mCycles += 2;
    switch (offset) {
        case npu::reg::kId:
            return npu::kNpuId;
        case npu::reg::kVersion:
            return npu::reset::kVersion;
        case npu::reg::kConfigArray:
            return npu::reset::kConfigArray;
        case npu::reg::kConfigSpad:
            return npu::kSpadWords;
        case npu::reg::kConfigAcc:
            return npu::kAccDepth;
        default:
            return mRegs[offset];
    }
}

void FakeNpu::writeRegister(uint32_t offset, uint32_t value) {
    std::lock_guard<std::mutex> lock(mMutex);
    mCycles += 2;
    switch (offset) {
        case npu::reg::kControl:
            if (value & npu::field::kControlSoftReset) {
                mJobPending = mHanging = false;
                for (uint32_t r : {npu::reg::kStatus, npu::reg::kErrorCode, npu::reg::kErrorDesc,
                                   npu::reg::kErrorAddr, npu::reg::kIrqStatus})
                    mRegs[r] = 0;
            }
            return;
        case npu::reg::kIrqStatus:
            mRegs[offset] &= ~value;
            return;
        case npu::reg::kDoorbell:
            if (mRegs[npu::reg::kStatus] & (npu::field::kStatusBusy | npu::field::kStatusError))
                return;
            mRegs[npu::reg::kJobTag] = value;
            mRegs[npu::reg::kStatus] = npu::field::kStatusBusy;
            mJobPending = true;
            if (mHangNext) {
                mHangNext = false;
                mHanging = true;
                mHangStart = mCycles;
            }
            return;
        case npu::reg::kDmaWindowBase:
        case npu::reg::kDmaWindowLimit:
            mRegs[offset] = value & ~(kBeat - 1);
            return;
        default:
            mRegs[offset] = value;
    }
}

Status FakeNpu::writeMemory(uint64_t address, const void* data, size_t size) {
    std::lock_guard<std::mutex> lock(mMutex);
    if (address > mDram.size() || size > mDram.size() - address)
        return invalidArgument("fake NPU: write outside DRAM");
    if (size) std::memcpy(mDram.data() + address, data, size);
    return okStatus();
}

Status FakeNpu::readMemory(uint64_t address, void* data, size_t size) {
    std::lock_guard<std::mutex> lock(mMutex);
    if (address > mDram.size() || size > mDram.size() - address)
        return invalidArgument("fake NPU: read outside DRAM");
    if (size) std::memcpy(data, mDram.data() + address, size);
    return okStatus();
}

bool FakeNpu::interruptPending() {
    std::lock_guard<std::mutex> lock(mMutex);
    return (mRegs[npu::reg::kIrqStatus] & mRegs[npu::reg::kIrqEnable]) != 0;
}

bool FakeNpu::waitForInterrupt(uint64_t timeoutCycles) {
    std::lock_guard<std::mutex> lock(mMutex);
    if (mJobPending && mHanging) {
        const uint64_t limit =
            mRegs[npu::reg::kWatchdogLimit] ? mRegs[npu::reg::kWatchdogLimit] : (1ull << 32);
        if (mCycles + timeoutCycles - mHangStart >= limit) {
            mCycles = mHangStart + limit;
            mBusyCycles += limit;
            mJobPending = mHanging = false;
            mRegs[npu::reg::kStatus] = npu::field::kStatusError;
            mRegs[npu::reg::kErrorCode] = static_cast<uint32_t>(npu::ErrorCode::WATCHDOG);
            mRegs[npu::reg::kIrqStatus] |= npu::field::kIrqStatusError;
        } else {
            mCycles += timeoutCycles;
            // Simulating takes wall time: a hanging job lets deadlines pass.
            std::this_thread::sleep_for(std::chrono::milliseconds(3));
        }
    } else if (mJobPending) {
        runJob();
    } else if ((mRegs[npu::reg::kIrqStatus] & mRegs[npu::reg::kIrqEnable]) == 0) {
        mCycles += timeoutCycles;
    }
    return (mRegs[npu::reg::kIrqStatus] & mRegs[npu::reg::kIrqEnable]) != 0;
}

void FakeNpu::advance(uint64_t cycles) {
    std::lock_guard<std::mutex> lock(mMutex);
    mCycles += cycles;
}

uint64_t FakeNpu::cycleCount() {
    std::lock_guard<std::mutex> lock(mMutex);
    return mCycles;
}

PerformanceCounters FakeNpu::performanceCounters() {
    std::lock_guard<std::mutex> lock(mMutex);
    PerformanceCounters c;
    c.busyCycles = mBusyCycles;
    c.macs = mMacs;
    return c;
}

size_t FakeNpu::nonZeroBytes() const {
    std::lock_guard<std::mutex> lock(mMutex);
    return static_cast<size_t>(
        std::count_if(mDram.begin(), mDram.end(), [](uint8_t b) { return b != 0; }));
}

bool FakeNpu::inWindow(uint64_t address, uint64_t size) const {
    const uint64_t first = address / kBeat * kBeat;
    const uint64_t end = (address + std::max<uint64_t>(size, 1) + kBeat - 1) / kBeat * kBeat;
    const uint64_t base = mRegs.at(npu::reg::kDmaWindowBase),
                   limit = mRegs.at(npu::reg::kDmaWindowLimit);
    return first >= base && end <= limit && end <= mDram.size();
}

bool FakeNpu::load(const npu::TensorDesc& t, std::vector<std::vector<uint8_t>>* rows,
                   Fault* fault) {
    rows->clear();
    for (uint32_t i3 = 0; i3 < t.count3; ++i3) {
        for (uint32_t i2 = 0; i2 < t.count2; ++i2) {
            for (uint32_t i1 = 0; i1 < t.count1; ++i1) {
                const uint64_t a = uint64_t{t.addr} + uint64_t{i1} * t.stride1 +
                                   uint64_t{i2} * t.stride2 + uint64_t{i3} * t.stride3;
                if (!inWindow(a, t.inner)) {
                    *fault = {npu::ErrorCode::DMA_WINDOW, static_cast<uint32_t>(a / kBeat * kBeat)};
                    return false;
                }
                rows->emplace_back(mDram.begin() + static_cast<long>(a),
                                   mDram.begin() + static_cast<long>(a + t.inner));
            }
        }
    }
    return true;
}

bool FakeNpu::store(const npu::TensorDesc& t, const std::vector<std::vector<uint8_t>>& rows,
                    Fault* fault) {
    size_t r = 0;
    for (uint32_t i3 = 0; i3 < t.count3; ++i3) {
        for (uint32_t i2 = 0; i2 < t.count2; ++i2) {
            for (uint32_t i1 = 0; i1 < t.count1; ++i1, ++r) {
                const uint64_t a = uint64_t{t.addr} + uint64_t{i1} * t.stride1 +
                                   uint64_t{i2} * t.stride2 + uint64_t{i3} * t.stride3;
                if (!inWindow(a, t.inner)) {
                    *fault = {npu::ErrorCode::DMA_WINDOW, static_cast<uint32_t>(a / kBeat * kBeat)};
                    return false;
                }
                std::memcpy(mDram.data() + a, rows[r].data(), t.inner);
            }
        }
    }
    return true;
}

void FakeNpu::runJob() {
    mJobPending = false;
    mChain.reset();
    ++mJobs;
    mLastWindow = {mRegs[npu::reg::kDmaWindowBase], mRegs[npu::reg::kDmaWindowLimit]};
    const uint64_t start = mCycles;
    uint32_t address = mRegs[npu::reg::kQueueBase];
    uint32_t done = 0;
    Fault fault{npu::ErrorCode::NONE, 0};
    const bool aligned = address % kBeat == 0 && mRegs[npu::reg::kCompletionAddr] % kBeat == 0;
    if (!aligned) fault = {npu::ErrorCode::BAD_QUEUE, address};
    for (bool last = !aligned; !last; address += npu::kDescriptorWords * 4) {
        if (!inWindow(address, npu::kDescriptorWords * 4)) {
            fault = {npu::ErrorCode::DMA_WINDOW, address};
            break;
        }
        npu::DescriptorWords words;
        std::memcpy(words.data(), mDram.data() + address, sizeof(words));
        const npu::Descriptor d = npu::Descriptor::decode(words);
        if (done == 0 && d.a.addr < mDram.size()) mFirstInputBytes.push_back(mDram[d.a.addr]);
        last = d.flags & static_cast<uint32_t>(npu::DescFlag::LAST);
        if (!execute(d, &fault)) {
            if (fault.code != npu::ErrorCode::DMA_WINDOW) fault.address = address;
            break;
        }
        ++done;
        mCycles += 100;
    }
    mBusyCycles += mCycles - start;
    const uint32_t record[npu::kCompletionWords] = {mRegs[npu::reg::kJobTag],
                                                    static_cast<uint32_t>(fault.code), done,
                                                    static_cast<uint32_t>(mCycles - start)};
    const uint32_t completion = mRegs[npu::reg::kCompletionAddr];
    if (fault.code != npu::ErrorCode::BAD_QUEUE && inWindow(completion, sizeof(record)))
        std::memcpy(mDram.data() + completion, record, sizeof(record));
    else if (fault.code == npu::ErrorCode::NONE)
        fault = {npu::ErrorCode::DMA_WINDOW, completion};
    mRegs[npu::reg::kDescDone] = done;
    if (fault.code == npu::ErrorCode::NONE) {
        mRegs[npu::reg::kStatus] = 0;
        mRegs[npu::reg::kIrqStatus] |= npu::field::kIrqStatusDone;
    } else {
        mRegs[npu::reg::kStatus] = npu::field::kStatusError;
        mRegs[npu::reg::kErrorCode] = static_cast<uint32_t>(fault.code);
        mRegs[npu::reg::kErrorDesc] = done;
        mRegs[npu::reg::kErrorAddr] = fault.address;
        mRegs[npu::reg::kIrqStatus] |= npu::field::kIrqStatusError;
    }
}

bool FakeNpu::execute(const npu::Descriptor& d, Fault* fault) {
    using Rows = std::vector<std::vector<uint8_t>>;
    const auto badField = [&] {
        *fault = {npu::ErrorCode::BAD_FIELD, 0};
        return false;
    };
    auto tensorOk = [](const npu::TensorDesc& t) {
        return t.inner && t.count1 && t.count2 && t.count3;
    };
    const fixedpoint::ActivationRange range{d.actMin, d.actMax};
    switch (d.opcode) {
        case npu::Opcode::NOP:
            return !mChain || badField();  // a CHAIN_OUT must be followed by its CHAIN_IN
        case npu::Opcode::LUT:
        case npu::Opcode::ADD:
        case npu::Opcode::MUL: {
            if (!tensorOk(d.a) || !tensorOk(d.out) || mChain ||
                (d.flags & (kChainOut | kChainIn | kTaps)))
                return badField();
            Rows a, b;
            if (!load(d.a, &a, fault)) return false;
            if (npu::op::usesB(d.opcode) && !load(d.b, &b, fault)) return false;
            std::vector<uint8_t> table(256);
            if (npu::op::usesW(d.opcode)) {
                if (d.wAddr % kBeat || !inWindow(d.wAddr, 256)) {
                    *fault = {npu::ErrorCode::DMA_WINDOW, d.wAddr};
                    return false;
                }
                std::memcpy(table.data(), mDram.data() + d.wAddr, 256);
            }
            Rows out = a;
            for (size_t r = 0; r < a.size(); ++r) {
                for (size_t i = 0; i < a[r].size(); ++i) {
                    const int32_t x = readValue(a[r][i], d.aSigned);
                    int32_t y = 0;
                    if (d.opcode == npu::Opcode::LUT) {
                        out[r][i] = table[a[r][i]];
                        continue;
                    }
                    const int32_t v = readValue(b[r][i], d.bSigned);
                    if (d.opcode == npu::Opcode::ADD) {
                        const int32_t s1 =
                            fixedpoint::wrappingShiftLeft(x - d.aZeroPoint, d.leftShift);
                        const int32_t s2 =
                            fixedpoint::wrappingShiftLeft(v - d.bZeroPoint, d.leftShift);
                        const int32_t sum =
                            fixedpoint::multiplyByQuantizedMultiplier(s1, d.aMultiplier, d.aShift) +
                            fixedpoint::multiplyByQuantizedMultiplier(s2, d.bMultiplier, d.bShift);
                        y = fixedpoint::multiplyByQuantizedMultiplier(sum, d.outMultiplier,
                                                                      d.outShift);
                    } else {
                        y = fixedpoint::multiplyByQuantizedMultiplier(
                            (x - d.aZeroPoint) * (v - d.bZeroPoint), d.outMultiplier, d.outShift);
                    }
                    out[r][i] =
                        static_cast<uint8_t>(std::clamp(y + d.outZeroPoint, range.min, range.max));
                }
            }
            mCycles += a.size();
            return store(d.out, out, fault);
        }
        case npu::Opcode::CONV:
        case npu::Opcode::DWCONV:
        case npu::Opcode::MAXPOOL:
        case npu::Opcode::AVGPOOL: {
            if (!tensorOk(d.a) || !tensorOk(d.out) || !d.kernelW || !d.kernelH || !d.strideW ||
                !d.strideH || !d.dilationW || !d.dilationH ||
                d.out.count1 * d.out.count2 > npu::kAccDepth)
                return badField();
            const bool conv = npu::op::usesArray(d.opcode);
            const bool dw = d.opcode == npu::Opcode::DWCONV;
            const bool taps = d.flags & kTaps, chainIn = d.flags & kChainIn,
                       chainOut = d.flags & kChainOut;
            // docs/registers.md: TAPS on DWCONV where the kernel fits; CHAIN_OUT on CONV or
            // DWCONV, not LAST, followed by a CHAIN_IN CONV 1x1, stride 1, no padding, whose A
            // has the chained tile's shape.
            npu::ConvGeometry geometry;
            geometry.kernelH = d.kernelH, geometry.kernelW = d.kernelW;
            geometry.strideH = d.strideH, geometry.strideW = d.strideW;
            geometry.dilationH = d.dilationH, geometry.dilationW = d.dilationW;
            if ((taps && (!dw || !npu::depthwiseUsesTaps(geometry))) ||
                (chainOut && (!conv || chainIn || (d.flags & kLast))) ||
                (chainIn != mChain.has_value()) ||
                (chainIn && (d.opcode != npu::Opcode::CONV || d.kernelW != 1 || d.kernelH != 1 ||
                             d.strideW != 1 || d.strideH != 1 || d.padTop || d.padLeft ||
                             d.a.inner != mChain->inner || d.a.count1 != mChain->count1 ||
                             d.a.count2 != mChain->count2 || d.a.count3 != 1)))
                return badField();
            Rows in;
            if (chainIn) {
                in = std::move(mChain->rows);
                mChain.reset();
            } else if (!load(d.a, &in, fault)) {
                return false;
            }
            const uint32_t inW = d.a.count1, inH = d.a.count2, inC = d.a.inner;
            const uint32_t outW = d.out.count1, outH = d.out.count2, outC = d.out.inner;
            if (inW * inH * ((inC + kBeat - 1) / kBeat) > npu::kSpadWords) return badField();
            if (chainOut && outW * outH * ((outC + kBeat - 1) / kBeat) > npu::kSpadWords)
                return badField();
            if (!conv && outC != inC) return badField();
            if (dw && outC != inC) return badField();
            // K steps per output-channel block: TAPS holds every tap in one block.
            const uint32_t cBlocks = dw ? 1 : (inC + npu::kArrayRows - 1) / npu::kArrayRows;
            const uint64_t kSteps = taps ? 1 : uint64_t{d.kernelH} * d.kernelW * cBlocks;
            const uint64_t blockBytes =
                npu::kWeightQuantWords * kBeat + kSteps * npu::kArrayRows * npu::kArrayCols;
            const uint64_t blocks = (outC + npu::kArrayCols - 1) / npu::kArrayCols;
            if (conv && (d.wAddr % kBeat || !inWindow(d.wAddr, blocks * blockBytes))) {
                *fault = {npu::ErrorCode::DMA_WINDOW, d.wAddr};
                return false;
            }
            auto weightByte = [&](uint32_t o, uint32_t ky, uint32_t kx, uint32_t c) {
                const uint64_t base =
                    d.wAddr + (o / npu::kArrayCols) * blockBytes + npu::kWeightQuantWords * kBeat;
                const uint32_t n = o % npu::kArrayCols;
                if (taps) return mDram[base + (ky * d.kernelW + kx) * npu::kArrayCols + n];
                const uint32_t cb = dw ? 0 : c / npu::kArrayRows, k = dw ? n : c % npu::kArrayRows;
                return mDram[base +
                             ((uint64_t{ky} * d.kernelW + kx) * cBlocks + cb) * npu::kArrayRows *
                                 npu::kArrayCols +
                             k * npu::kArrayCols + n];
            };
            Rows out(uint64_t{outW} * outH, std::vector<uint8_t>(outC));
            for (uint32_t oy = 0; oy < outH; ++oy) {
                for (uint32_t ox = 0; ox < outW; ++ox) {
                    for (uint32_t o = 0; o < outC; ++o) {
                        int64_t acc = 0;
                        int32_t best = INT32_MIN;
                        int32_t count = 0;
                        for (uint32_t ky = 0; ky < d.kernelH; ++ky) {
                            for (uint32_t kx = 0; kx < d.kernelW; ++kx) {
                                const int64_t iy =
                                    int64_t{oy} * d.strideH + int64_t{ky} * d.dilationH - d.padTop;
                                const int64_t ix =
                                    int64_t{ox} * d.strideW + int64_t{kx} * d.dilationW - d.padLeft;
                                if (iy < 0 || ix < 0 || iy >= inH || ix >= inW) continue;
                                const auto& pixel = in[static_cast<size_t>(iy * inW + ix)];
                                if (!conv) {
                                    const int32_t x = readValue(pixel[o], d.aSigned);
                                    best = std::max(best, x);
                                    acc += x;
                                    ++count;
                                    continue;
                                }
                                const uint32_t c0 = dw ? o : 0, c1 = dw ? o + 1 : inC;
                                for (uint32_t c = c0; c < c1; ++c) {
                                    acc += int64_t{readValue(pixel[c], d.aSigned) - d.aZeroPoint} *
                                           (readValue(weightByte(o, ky, kx, c), d.bSigned) -
                                            d.bZeroPoint);
                                }
                                mMacs += c1 - c0;
                            }
                        }
                        int32_t y;
                        if (conv) {
                            const uint64_t q = d.wAddr + (o / npu::kArrayCols) * blockBytes;
                            const uint32_t n = o % npu::kArrayCols;
                            int32_t bias, multiplier;
                            std::memcpy(&bias, &mDram[q + 4 * n], 4);
                            std::memcpy(&multiplier, &mDram[q + 64 + 4 * n], 4);
                            const int shift = int8_t(mDram[q + 128 + n]);
                            y = fixedpoint::requantize(static_cast<int32_t>(acc), bias,
                                                       {multiplier, shift}, d.outZeroPoint, range);
                        } else if (d.opcode == npu::Opcode::MAXPOOL) {
                            y = std::clamp(best, range.min, range.max);
                        } else {
                            const int32_t s = static_cast<int32_t>(acc);
                            const int32_t avg = count == 0 ? 0
                                                : s >= 0   ? (s + count / 2) / count
                                                           : (s - count / 2) / count;
                            y = std::clamp(avg, range.min, range.max);
                        }
                        out[uint64_t{oy} * outW + ox][o] = static_cast<uint8_t>(y);
                    }
                }
            }
            mCycles += uint64_t{outW} * outH * ((outC + 15) / 16);
            if (chainOut) {
                mChain = Chain{d.out.inner, d.out.count1, d.out.count2, std::move(out)};
                return true;
            }
            return store(d.out, out, fault);
        }
    }
    *fault = {npu::ErrorCode::BAD_OPCODE, 0};
    return false;
}

}  // namespace nncosim::driver::testing
