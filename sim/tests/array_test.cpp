// The systolic array against a matrix product: every output vector is the input vector times
// the weight block its tag selects, including across weight reloads that overlap streaming; in
// int8 mode exactly, in float mode bit for bit with the host's binary32 operations in the array's
// documented order.
#include "sim/tests/ArrayBlock.h"
#include "sim/tests/TestBench.h"

#include <doctest/doctest.h>

#include <Eigen/Core>
#include <cmath>
#include <limits>
#include <random>

namespace nncosim::sim::testing {
namespace {

constexpr int kVectors = 40;
static_assert(kVectors > kRows + kCols + 1);

// A script and, per step, the weight block its vector must meet (-1 for none).
struct Schedule {
    std::vector<ArrayStep> script;
    std::vector<int> blockOfStep;
};

// Loads block 0 into buffer 0; streams kVectors vectors on it while block 1 loads into buffer 1;
// streams kVectors on buffer 1 while block 2 replaces block 0 (its rows written only after the
// last buffer-0 vector has left them); streams kVectors on buffer 0 again; then empties the
// array. Every step starts as `idle`; fillVector(step) sets its input vector, loadRow(step,
// block, row) the data of a weight row.
template <typename FillVector, typename LoadRow>
Schedule reloadSchedule(const ArrayStep& idle, FillVector fillVector, LoadRow loadRow) {
    Schedule schedule;
    const auto add = [&](ArrayStep s, int block) {
        schedule.script.push_back(s);
        schedule.blockOfStep.push_back(block);
    };
    const auto load = [&](ArrayStep& s, bool buffer, int row, int block) {
        s.load = true;
        s.loadBuffer = buffer;
        s.loadRow = row;
        loadRow(s, block, row);
    };
    for (int r = 0; r < kRows; ++r) {
        ArrayStep s = idle;
        load(s, false, r, 0);
        add(s, -1);
    }
    for (int phase = 0; phase < 3; ++phase) {
        for (int v = 0; v < kVectors; ++v) {
            ArrayStep s = idle;
            s.tag = phase == 1;
            s.valid = true;
            fillVector(s);
            // Phase 0 loads block 1 into buffer 1 (idle); phase 1 loads block 2 into buffer 0
            // once the last buffer-0 vector is Cols + 1 cycles past each row.
            if (phase == 0 && v < kRows) {
                load(s, true, v, 1);
            }
            if (phase == 1 && v >= kCols + 1 && v < kCols + 1 + kRows) {
                load(s, false, v - kCols - 1, 2);
            }
            add(s, phase);
        }
    }
    for (int i = 0; i < kArrayLatency; ++i) {
        add(idle, -1);
    }
    return schedule;
}

// Plays the schedule and calls check(step, output) for every vector with its output vector.
template <typename Check>
void playAndCheck(const Schedule& schedule, Check check) {
    ArrayBlock& array = testBench().array;
    array.play(schedule.script);
    sc_core::sc_start();
    const auto& out = array.outputs();
    REQUIRE(out.size() == schedule.script.size());
    int checked = 0;
    for (size_t t = 0; t < schedule.script.size(); ++t) {
        if (schedule.blockOfStep[t] < 0) {
            continue;
        }
        CAPTURE(t);
        check(schedule.script[t], schedule.blockOfStep[t], out[t + kArrayLatency - 1]);
        ++checked;
    }
    CHECK(checked == 3 * kVectors);
}

TEST_CASE("sim_array_matrix_product") {
    std::mt19937 rng(0x5eed4001);
    const auto value = [&] { return static_cast<int32_t>(rng() % 511) - 255; };
    std::array<std::array<std::array<int32_t, kCols>, kRows>, 3> blocks{};
    for (auto& block : blocks) {
        for (auto& row : block) {
            for (auto& w : row) {
                w = value();
            }
        }
    }
    const Schedule schedule = reloadSchedule(
        ArrayStep{},
        [&](ArrayStep& s) {
            for (auto& a : s.act) {
                a = value();
            }
        },
        [&](ArrayStep& s, int block, int row) { s.loadData = blocks[block][row]; });
    playAndCheck(schedule, [&](const ArrayStep& s, int block, const auto& out) {
        for (int c = 0; c < kCols; ++c) {
            int32_t want = 0;
            for (int r = 0; r < kRows; ++r) {
                want += s.act[r] * blocks[block][r][c];
            }
            CAPTURE(c);
            REQUIRE(out[c] == want);
        }
    });
}

// Random binary32 operands: mostly moderate values of random magnitude and sign (so sums
// cancel and round), rarely zeros of either sign, subnormals, huge values (overflow),
// infinities and NaNs, so most column sums stay finite.
uint32_t randomFloatBits(std::mt19937& rng) {
    const uint32_t bits = rng();
    switch (rng() % 256) {  // a special value in about 1 of 40 operands
        case 0:
        case 1:
            return bits & 0x80000000u;  // +-0
        case 2:
        case 3:
            return bits & 0x807fffffu;  // subnormal
        case 4:
            return (bits & 0x80000000u) | 0x7f800000u;  // +-inf
        case 5:
            return 0x7f800000u | (bits & 0x807fffffu) | 1;  // NaN
        case 6:
            return (bits & 0x807fffffu) | 0x7e800000u;  // huge: products overflow
        default:                                        // exponents 2^-20 .. 2^11
            return (bits & 0x807fffffu) | ((107 + rng() % 32) << 23);
    }
}

TEST_CASE("sim_array_float_matrix_product") {
    std::mt19937 rng(0x5eed4002);
    std::array<std::array<std::array<uint32_t, kCols>, kRows>, 3> blocks{};
    for (auto& block : blocks) {
        for (auto& row : block) {
            for (auto& w : row) {
                w = randomFloatBits(rng);
            }
        }
    }
    ArrayStep idle;
    idle.floatMode = true;
    const Schedule schedule = reloadSchedule(
        idle,
        [&](ArrayStep& s) {
            for (auto& a : s.floatAct) {
                a = randomFloatBits(rng);
            }
        },
        [&](ArrayStep& s, int block, int row) { s.floatLoadData = blocks[block][row]; });
    const auto toFloat = [](uint32_t bits) { return Eigen::numext::bit_cast<float>(bits); };
    playAndCheck(schedule, [&](const ArrayStep& s, int block, const auto& out) {
        for (int c = 0; c < kCols; ++c) {
            // The array's order: -0, then each row's product added in turn, rounded each time.
            float want = -0.0f;
            for (int r = 0; r < kRows; ++r) {
                const float product = toFloat(s.floatAct[r]) * toFloat(blocks[block][r][c]);
                want = want + product;
            }
            const uint32_t got = static_cast<uint32_t>(out[c]);
            CAPTURE(c);
            if (std::isnan(want)) {
                REQUIRE(got == 0x7fc00000u);  // the canonical NaN
            } else {
                REQUIRE(got == Eigen::numext::bit_cast<uint32_t>(want));
            }
        }
    });
}

// Depthwise mode: every PE multiplies an operand of its own by its row's weight (the buffer its
// row's tag picks); a vector's row r takes its operands r + 1 cycles after the vector enters,
// and its column sums leave with row Rows - 1's operands. Int8: exact sums over all rows. Float:
// -0, then the product of each row that holds a kernel tap, in row order, rounded each time.
TEST_CASE("sim_array_depthwise_product") {
    for (const bool floatMode : {false, true}) {
        CAPTURE(floatMode);
        std::mt19937 rng(floatMode ? 0x5eed4004 : 0x5eed4003);
        const auto value = [&] { return static_cast<int32_t>(rng() % 511) - 255; };
        const int taps = kRows - kRows / 4;  // float mode: the rows after these hold no tap
        std::array<std::array<std::array<int32_t, kCols>, kRows>, 2> w{};
        std::array<std::array<std::array<uint32_t, kCols>, kRows>, 2> floatW{};
        struct Vector {
            std::array<std::array<int32_t, kCols>, kRows> act{};
            std::array<std::array<uint32_t, kCols>, kRows> floatAct{};
            std::array<bool, kRows> tag{};
        };
        std::vector<Vector> vectors(kVectors);
        for (int b = 0; b < 2; ++b) {
            for (int r = 0; r < kRows; ++r) {
                for (int c = 0; c < kCols; ++c) {
                    w[b][r][c] = value();
                    floatW[b][r][c] = randomFloatBits(rng);
                }
            }
        }
        for (Vector& v : vectors) {
            for (int r = 0; r < kRows; ++r) {
                v.tag[r] = rng() % 2 != 0;
                for (int c = 0; c < kCols; ++c) {
                    v.act[r][c] = value();
                    v.floatAct[r][c] = randomFloatBits(rng);
                }
            }
        }
        ArrayStep idle;
        idle.floatMode = floatMode;
        idle.depthwise = true;
        for (int r = 0; r < kRows; ++r) {
            idle.rowOn[r] = r < taps;
        }
        std::vector<ArrayStep> script;
        for (int b = 0; b < 2; ++b) {
            for (int r = 0; r < kRows; ++r) {
                ArrayStep s = idle;
                s.load = true;
                s.loadBuffer = b == 1;
                s.loadRow = r;
                for (int c = 0; c < kCols; ++c) {
                    s.loadData[c] = w[b][r][c];
                    s.floatLoadData[c] = floatW[b][r][c];
                }
                script.push_back(s);
            }
        }
        const int start = static_cast<int>(script.size());
        for (int t = 0; t < kVectors + kRows + 1; ++t) {
            ArrayStep s = idle;
            s.valid = t < kVectors;
            for (int r = 0; r < kRows; ++r) {
                const int v = t - 1 - r;
                if (v < 0 || v >= kVectors) continue;
                s.dwAct[r] = vectors[v].act[r];
                s.floatDwAct[r] = vectors[v].floatAct[r];
                s.dwTag[r] = vectors[v].tag[r];
            }
            script.push_back(s);
        }
        ArrayBlock& array = testBench().array;
        array.play(script);
        sc_core::sc_start();
        const auto& out = array.outputs();
        REQUIRE(out.size() == script.size());
        const auto toFloat = [](uint32_t bits) { return Eigen::numext::bit_cast<float>(bits); };
        for (int v = 0; v < kVectors; ++v) {
            CAPTURE(v);
            const auto& got = out[start + v + kRows];
            for (int c = 0; c < kCols; ++c) {
                CAPTURE(c);
                if (!floatMode) {
                    int32_t want = 0;
                    for (int r = 0; r < kRows; ++r) {
                        want += vectors[v].act[r][c] * w[vectors[v].tag[r]][r][c];
                    }
                    REQUIRE(got[c] == want);
                    continue;
                }
                float want = -0.0f;
                for (int r = 0; r < taps; ++r) {
                    want = want + toFloat(vectors[v].floatAct[r][c]) *
                                      toFloat(floatW[vectors[v].tag[r]][r][c]);
                }
                const uint32_t bits = static_cast<uint32_t>(got[c]);
                if (std::isnan(want)) {
                    REQUIRE(bits == 0x7fc00000u);
                } else {
                    REQUIRE(bits == Eigen::numext::bit_cast<uint32_t>(want));
                }
            }
        }
    }
}

}  // namespace
}  // namespace nncosim::sim::testing
