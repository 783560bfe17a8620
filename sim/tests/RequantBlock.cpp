// Verilated headers come before <systemc> (pulled in by RequantBlock.h).
#include "Vnpu_requant.h"
#include "verilated.h"

#include "sim/tests/RequantBlock.h"

#include <algorithm>
#include <type_traits>

namespace nncosim::sim {
namespace {

// A beat's worth of one packed port, as 32-bit words (lane 0 in the low bits).
template <int kFieldBits>
using PortWords = std::array<uint32_t, (kRequantLanes * kFieldBits + 31) / 32>;

template <size_t N>
void putField(std::array<uint32_t, N>& words, unsigned lsb, unsigned width, uint32_t value) {
    const unsigned index = lsb / 32;
    const unsigned offset = lsb % 32;
    const uint64_t mask = ((uint64_t{1} << width) - 1) << offset;
    uint64_t chunk = words[index];
    if (index + 1 < N) {
        chunk |= uint64_t{words[index + 1]} << 32;
    }
    chunk = (chunk & ~mask) | ((uint64_t{value} << offset) & mask);
    words[index] = static_cast<uint32_t>(chunk);
    if (index + 1 < N) {
        words[index + 1] = static_cast<uint32_t>(chunk >> 32);
    }
}

template <size_t N>
uint32_t getField(const std::array<uint32_t, N>& words, unsigned lsb, unsigned width) {
    const unsigned index = lsb / 32;
    uint64_t chunk = words[index];
    if (index + 1 < N) {
        chunk |= uint64_t{words[index + 1]} << 32;
    }
    return static_cast<uint32_t>((chunk >> (lsb % 32)) & ((uint64_t{1} << width) - 1));
}

// Verilator represents ports up to 64 bits as integers and wider ones as VlWide arrays.
template <typename Port, size_t N>
void writePort(Port& port, const std::array<uint32_t, N>& words) {
    static_assert(std::is_integral_v<Port> && N <= 2);
    uint64_t value = words[0];
    if constexpr (N == 2) {
        value |= uint64_t{words[1]} << 32;
    }
    port = static_cast<Port>(value);
}

template <size_t M, size_t N>
void writePort(VlWide<M>& port, const std::array<uint32_t, N>& words) {
    static_assert(M == N, "port width disagrees with kRequantLanes");
    std::copy(words.begin(), words.end(), port.data());
}

template <typename Port, size_t N>
void readPort(const Port& port, std::array<uint32_t, N>& words) {
    static_assert(std::is_integral_v<Port> && N <= 2);
    const uint64_t value = port;
    words[0] = static_cast<uint32_t>(value);
    if constexpr (N == 2) {
        words[1] = static_cast<uint32_t>(value >> 32);
    }
}

template <size_t M, size_t N>
void readPort(const VlWide<M>& port, std::array<uint32_t, N>& words) {
    static_assert(M == N, "port width disagrees with kRequantLanes");
    std::copy(port.data(), port.data() + M, words.begin());
}

// A pipeline that holds beats this long without producing one has lost them.
constexpr uint64_t kWatchdogCycles = 100000;

}  // namespace

RequantBlock::RequantBlock(const sc_core::sc_module_name& name, const sc_core::sc_time& clockPeriod)
    : sc_core::sc_module(name),
      mContext(std::make_unique<VerilatedContext>()),
      mModel(std::make_unique<Vnpu_requant>(mContext.get(), "npu_requant")),
      mClockPeriod(clockPeriod),
      mRng(1) {
    SC_THREAD(clockThread);
}

RequantBlock::~RequantBlock() {
    mModel->final();
}

void RequantBlock::setTraffic(int validPercent, int readyPercent, uint32_t seed) {
    // Zero would stall forever; one percent is the slowest traffic.
    mValidPercent = std::clamp(validPercent, 1, 100);
    mReadyPercent = std::clamp(readyPercent, 1, 100);
    mRng.seed(seed);
}

void RequantBlock::submit(const RequantBeat& beat) {
    mPending.push_back(beat);
    mWork.notify(sc_core::SC_ZERO_TIME);
}

std::vector<RequantResult> RequantBlock::takeResults() {
    std::vector<RequantResult> results;
    results.swap(mResults);
    return results;
}

void RequantBlock::clockThread() {
    reset();
    while (true) {
        if (idle()) {
            wait(mWork);
            continue;
        }
        // Nothing outside this module reacts to single cycles: run a batch, then let time catch up.
        int ran = 0;
        while (ran < kBatchCycles && !idle()) {
            runCycle();
            ++ran;
        }
        wait(mClockPeriod * static_cast<double>(ran));
    }
}

void RequantBlock::reset() {
    mModel->flush_i = 0;
    mModel->in_valid_i = 0;
    mModel->out_ready_i = 0;
    mModel->rst_ni = 0;
    for (int edge = 0; edge < 4; ++edge) {
        mModel->clk_i = edge % 2;
        mModel->eval();
    }
    mModel->rst_ni = 1;
    mModel->clk_i = 0;
    mModel->eval();
    wait(mClockPeriod * 2.0);
}

bool RequantBlock::roll(int percent) {
    return percent >= 100 || static_cast<int>(mRng() % 100) < percent;
}

void RequantBlock::driveInputs(const RequantBeat& beat) {
    PortWords<32> accumulators{};
    PortWords<32> biases{};
    PortWords<32> multipliers{};
    PortWords<6> shifts{};
    for (unsigned lane = 0; lane < kRequantLanes; ++lane) {
        accumulators[lane] = static_cast<uint32_t>(beat.accumulator[lane]);
        biases[lane] = static_cast<uint32_t>(beat.bias[lane]);
        multipliers[lane] = static_cast<uint32_t>(beat.scale[lane].multiplier);
        putField(shifts, lane * 6, 6, static_cast<uint32_t>(beat.scale[lane].shift));
    }
    writePort(mModel->acc_i, accumulators);
    writePort(mModel->bias_i, biases);
    writePort(mModel->multiplier_i, multipliers);
    writePort(mModel->shift_i, shifts);
    mModel->zero_point_i = static_cast<uint32_t>(beat.zeroPoint) & 0x1ff;
    mModel->act_min_i = static_cast<uint32_t>(beat.range.min) & 0x1ff;
    mModel->act_max_i = static_cast<uint32_t>(beat.range.max) & 0x1ff;
}

RequantResult RequantBlock::readOutputs(bool isSigned) const {
    PortWords<8> data{};
    readPort(mModel->data_o, data);
    RequantResult result{};
    for (unsigned lane = 0; lane < kRequantLanes; ++lane) {
        const uint32_t byte = getField(data, lane * 8, 8);
        result[lane] = isSigned ? static_cast<int8_t>(byte) : static_cast<int32_t>(byte);
    }
    return result;
}

void RequantBlock::runCycle() {
    const bool offered = !mPending.empty() && roll(mValidPercent);
    mModel->in_valid_i = offered;
    if (offered) {
        driveInputs(mPending.front());
    }
    const bool ready = roll(mReadyPercent);
    mModel->out_ready_i = ready;
    mModel->clk_i = 0;
    mModel->eval();

    // Sample both handshakes before the rising edge.
    const bool accepted = offered && mModel->in_ready_o;
    const bool outValid = mModel->out_valid_o;
    if (outValid && mInFlightSigned.empty()) {
        ++mProtocolErrors;  // a beat nobody sent
    } else if (mStalledLastCycle &&
               (!outValid || readOutputs(mInFlightSigned.front()) != mStalledData)) {
        ++mProtocolErrors;  // a stalled beat must wait unchanged
    }
    mStalledLastCycle = false;
    if (outValid && !mInFlightSigned.empty()) {
        const RequantResult data = readOutputs(mInFlightSigned.front());
        if (ready) {
            mResults.push_back(data);
            mInFlightSigned.pop_front();
            mCyclesSinceOutput = 0;
        } else {
            mStalledLastCycle = true;
            mStalledData = data;
        }
    }

    mModel->clk_i = 1;
    mModel->eval();
    if (accepted) {
        mInFlightSigned.push_back(mPending.front().range.min < 0);
        mPending.pop_front();
    }
    ++mCycles;
    if (!mInFlightSigned.empty() && ++mCyclesSinceOutput > kWatchdogCycles) {
        // Lost beats: report them instead of simulating forever.
        mProtocolErrors += mInFlightSigned.size();
        mInFlightSigned.clear();
        mCyclesSinceOutput = 0;
    }
}

}  // namespace nncosim::sim
