// The Verilated requantization unit (rtl/npu_requant.sv) as a SystemC module.
//
// The module owns the Verilated model (built with --cc, not --sc) and one SC_THREAD drives its
// clock: it runs batches of cycles in plain C++ and advances SystemC time once per batch, which
// keeps SystemC's cost negligible. Beats are streamed through the valid/ready handshake with
// optional random stalls on both sides, and a checker flags any output that changes or vanishes
// while stalled.
#pragma once

#include <array>
#include <cstdint>
#include <deque>
#include <memory>
#include <random>
#include <vector>

#include <systemc>

#include "model/FixedPoint.h"

class Vnpu_requant;
class VerilatedContext;

namespace nncosim::sim {

/// Lanes of the requantization unit: the RTL's Lanes parameter, set by the build for both.
inline constexpr int kRequantLanes = NNCOSIM_REQUANT_LANES;

/// Cycles from a beat's acceptance to its result on the outputs (the pipeline depth).
inline constexpr int kRequantLatency = 4;

/// One input beat: per lane an accumulator, its bias and its (per-channel) quantized
/// multiplier; the output zero point and activation range are shared by the beat. Values must
/// satisfy the RTL's contract: shift in [-31, 31]; zero point and bounds in [-128, 255].
struct RequantBeat {
    std::array<int32_t, kRequantLanes> accumulator{};
    std::array<int32_t, kRequantLanes> bias{};
    std::array<fixedpoint::QuantizedMultiplier, kRequantLanes> scale{};
    int32_t zeroPoint = 0;
    fixedpoint::ActivationRange range{-128, 127};
};

/// One output beat, each lane read as int8 when the beat's range is signed, else as uint8.
using RequantResult = std::array<int32_t, kRequantLanes>;

class RequantBlock : public sc_core::sc_module {
  public:
    SC_HAS_PROCESS(RequantBlock);

    RequantBlock(const sc_core::sc_module_name& name, const sc_core::sc_time& clockPeriod);
    ~RequantBlock() override;

    /// Percent of cycles in which the source offers a beat and the sink accepts one; 100 and
    /// 100 stream at full rate. Takes effect from the next cycle.
    void setTraffic(int validPercent, int readyPercent, uint32_t seed);

    /// Queues a beat; it enters the RTL when simulation runs (sc_start).
    void submit(const RequantBeat& beat);

    /// Results completed so far, in submission order; the returned ones are forgotten.
    std::vector<RequantResult> takeResults();

    /// True when every submitted beat has come out.
    bool idle() const { return mPending.empty() && mInFlightSigned.empty(); }

    /// Clock cycles run since reset.
    uint64_t cycles() const { return mCycles; }

    /// Cycles in which a stalled output beat was dropped or changed (must stay zero).
    uint64_t protocolErrors() const { return mProtocolErrors; }

  private:
    void clockThread();
    void reset();
    void runCycle();
    void driveInputs(const RequantBeat& beat);
    RequantResult readOutputs(bool isSigned) const;
    bool roll(int percent);

    static constexpr int kBatchCycles = 1024;

    std::unique_ptr<VerilatedContext> mContext;
    std::unique_ptr<Vnpu_requant> mModel;
    sc_core::sc_time mClockPeriod;
    sc_core::sc_event mWork;
    std::deque<RequantBeat> mPending;
    std::deque<bool> mInFlightSigned;  // signedness of accepted beats, oldest first
    std::vector<RequantResult> mResults;
    std::mt19937 mRng;
    int mValidPercent = 100;
    int mReadyPercent = 100;
    uint64_t mCycles = 0;
    uint64_t mProtocolErrors = 0;
    uint64_t mCyclesSinceOutput = 0;
    bool mStalledLastCycle = false;
    RequantResult mStalledData{};
};

}  // namespace nncosim::sim
