// The Verilated requantization unit inside SystemC against golden's requantize(), bit for bit.
#include "sim/tests/TestBench.h"

#include <doctest/doctest.h>

#include <algorithm>
#include <random>
#include <utility>
#include <vector>

#include "model/FixedPoint.h"

namespace nncosim::sim {
namespace {

using fixedpoint::ActivationRange;
using fixedpoint::kInt32Max;
using fixedpoint::kInt32Min;
using fixedpoint::QuantizedMultiplier;

// Streams the beats through the RTL (in slices, to bound memory) and requires every lane of
// every result to equal golden's arithmetic.
void runAndCompare(const std::vector<RequantBeat>& beats) {
    RequantBlock& block = testing::testBench().requant;
    constexpr size_t kSlice = 4096;
    for (size_t first = 0; first < beats.size(); first += kSlice) {
        const size_t last = std::min(beats.size(), first + kSlice);
        for (size_t i = first; i < last; ++i) {
            block.submit(beats[i]);
        }
        sc_core::sc_start();
        REQUIRE(block.idle());
        const std::vector<RequantResult> results = block.takeResults();
        REQUIRE(results.size() == last - first);
        for (size_t i = first; i < last; ++i) {
            const RequantBeat& beat = beats[i];
            for (int lane = 0; lane < kRequantLanes; ++lane) {
                const int32_t want =
                    fixedpoint::requantize(beat.accumulator[lane], beat.bias[lane],
                                           beat.scale[lane], beat.zeroPoint, beat.range);
                if (results[i - first][lane] != want) {
                    CAPTURE(i);
                    CAPTURE(lane);
                    CAPTURE(beat.accumulator[lane]);
                    CAPTURE(beat.bias[lane]);
                    CAPTURE(beat.scale[lane].multiplier);
                    CAPTURE(beat.scale[lane].shift);
                    CAPTURE(beat.zeroPoint);
                    CAPTURE(beat.range.min);
                    CAPTURE(beat.range.max);
                    REQUIRE(results[i - first][lane] == want);
                }
            }
        }
    }
    CHECK(block.protocolErrors() == 0);
}

// Output parameters of int8 and uint8 tensors: full ranges, fused activations, single values.
struct OutputParams {
    int32_t zeroPoint;
    ActivationRange range;
};

const std::vector<OutputParams>& outputParams() {
    static const std::vector<OutputParams> params = {
        {0, {-128, 127}},     {-128, {-128, 127}}, {127, {-128, 127}}, {0, {0, 127}},
        {-128, {-128, -116}}, {5, {4, 6}},         {-7, {-7, -7}},     {0, {0, 255}},
        {128, {0, 255}},      {255, {0, 255}},     {128, {128, 255}},  {0, {0, 12}},
        {100, {97, 103}},     {255, {255, 255}},
    };
    return params;
}

std::vector<int32_t> edgeValues() {
    std::vector<int32_t> values = {0, 1, -1, kInt32Min, kInt32Min + 1, kInt32Max, kInt32Max - 1};
    for (int bit = 1; bit < 31; ++bit) {
        for (int64_t delta = -1; delta <= 1; ++delta) {
            values.push_back(static_cast<int32_t>((int64_t{1} << bit) + delta));
            values.push_back(static_cast<int32_t>(-(int64_t{1} << bit) + delta));
        }
    }
    return values;
}

class Generator {
  public:
    explicit Generator(uint64_t seed) : mRng(seed) {}

    int range(int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(mRng); }

    int32_t uniform() { return static_cast<int32_t>(static_cast<uint32_t>(mRng())); }

    // Realistic accumulators mostly, with extremes and powers of two mixed in.
    int32_t accumulator() {
        switch (range(0, 7)) {
            case 0:
                return uniform();
            case 1:
                return range(0, 1) ? kInt32Min + range(0, 2) : kInt32Max - range(0, 2);
            case 2:
                return static_cast<int32_t>((range(0, 1) ? 1 : -1) * (int64_t{1} << range(0, 30)));
            default:
                return range(-(1 << 20), 1 << 20);
        }
    }

    QuantizedMultiplier scale() {
        const int32_t multiplier =
            range(0, 15) == 0 ? uniform() : (1 << 30) + range(0, (1 << 30) - 1);
        // Mostly right shifts, as real layers have, but every shift occurs.
        const int shift = range(0, 3) == 0 ? range(-31, 31) : range(-20, 2);
        return {multiplier, shift};
    }

    RequantBeat beat() {
        RequantBeat beat;
        for (int lane = 0; lane < kRequantLanes; ++lane) {
            beat.accumulator[lane] = accumulator();
            beat.bias[lane] = range(0, 7) == 0 ? uniform() : range(-100000, 100000);
            beat.scale[lane] = scale();
        }
        if (range(0, 1)) {
            const auto& params = outputParams();
            const OutputParams& chosen = params[range(0, params.size() - 1)];
            beat.zeroPoint = chosen.zeroPoint;
            beat.range = chosen.range;
        } else {
            const bool isSigned = range(0, 1);
            const int low = isSigned ? -128 : 0;
            const int a = range(low, low + 255);
            const int b = range(low, low + 255);
            beat.zeroPoint = range(low, low + 255);
            beat.range = {std::min(a, b), std::max(a, b)};
        }
        return beat;
    }

  private:
    std::mt19937_64 mRng;
};

TEST_CASE("sim_requant_corner_cases") {
    testing::testBench().requant.setTraffic(100, 100, 1);
    const std::vector<int32_t> accumulators = edgeValues();
    const std::vector<int32_t> biases = {0, 1, -1, kInt32Max, kInt32Min};
    const std::vector<int32_t> multipliers = {0,         1,         1 << 30,    (1 << 30) + 1,
                                              kInt32Max, kInt32Min, -(1 << 30), 1518500250};
    const std::vector<int> shifts = {-31, -30, -17, -1, 0, 1, 2, 30, 31};

    std::vector<RequantBeat> beats;
    RequantBeat beat;
    int lane = 0;
    size_t paramIndex = 0;
    for (int32_t acc : accumulators) {
        for (int32_t bias : biases) {
            for (int32_t multiplier : multipliers) {
                for (int shift : shifts) {
                    beat.accumulator[lane] = acc;
                    beat.bias[lane] = bias;
                    beat.scale[lane] = {multiplier, shift};
                    if (++lane == kRequantLanes) {
                        const OutputParams& params =
                            outputParams()[paramIndex++ % outputParams().size()];
                        beat.zeroPoint = params.zeroPoint;
                        beat.range = params.range;
                        beats.push_back(beat);
                        lane = 0;
                    }
                }
            }
        }
    }
    // Every lane sees a min * min product, the one that saturates the high half.
    for (int i = 0; i < kRequantLanes; ++i) {
        beat.accumulator[i] = kInt32Min;
        beat.bias[i] = 0;
        beat.scale[i] = {kInt32Min, i % 2 ? 0 : -(i + 1)};
    }
    beat.zeroPoint = -128;
    beat.range = {-128, 127};
    beats.push_back(beat);
    runAndCompare(beats);
}

TEST_CASE("sim_requant_random") {
    testing::testBench().requant.setTraffic(100, 100, 2);
    Generator gen(0x5eed1001);
    std::vector<RequantBeat> beats;
    constexpr int kBeats = 250000;  // four million requantizations at 16 lanes
    beats.reserve(kBeats);
    for (int i = 0; i < kBeats; ++i) {
        beats.push_back(gen.beat());
    }
    runAndCompare(beats);
}

TEST_CASE("sim_requant_stalls") {
    // Both sides stall at random: results stay exact and in order, stalled outputs hold.
    Generator gen(0x5eed1002);
    constexpr std::pair<int, int> kTraffic[] = {{70, 60}, {100, 20}, {15, 100}};
    for (const auto& [validPercent, readyPercent] : kTraffic) {
        RequantBlock& block = testing::testBench().requant;
        block.setTraffic(validPercent, readyPercent, 3);
        const uint64_t cyclesBefore = block.cycles();
        std::vector<RequantBeat> beats;
        for (int i = 0; i < 20000; ++i) {
            beats.push_back(gen.beat());
        }
        runAndCompare(beats);
        const uint64_t cycles = block.cycles() - cyclesBefore;
        // Stalls cost cycles: at least 1 / min(rate) cycles per beat, minus randomness.
        CHECK(static_cast<double>(cycles) >
              0.9 * beats.size() * 100.0 / std::min(validPercent, readyPercent));
    }
}

TEST_CASE("sim_requant_throughput") {
    // Without stalls the pipeline takes one beat per cycle and adds only its latency.
    RequantBlock& block = testing::testBench().requant;
    block.setTraffic(100, 100, 4);
    Generator gen(0x5eed1003);
    std::vector<RequantBeat> beats;
    for (int i = 0; i < 1000; ++i) {
        beats.push_back(gen.beat());
    }
    runAndCompare({gen.beat()});  // the first run of a process includes the reset
    const uint64_t cyclesBefore = block.cycles();
    const sc_core::sc_time timeBefore = sc_core::sc_time_stamp();
    runAndCompare(beats);
    CHECK(block.cycles() - cyclesBefore == beats.size() + kRequantLatency);
    // SystemC time advances with the clock: 1 ns per cycle.
    CHECK(sc_core::sc_time_stamp() - timeBefore ==
          sc_core::sc_time(static_cast<double>(beats.size() + kRequantLatency), sc_core::SC_NS));
}

}  // namespace
}  // namespace nncosim::sim
