// The systolic array against a matrix product: every output vector is the input vector times
// the weight block its tag selects, including across weight reloads that overlap streaming.
#include "sim/tests/ArrayBlock.h"
#include "sim/tests/TestBench.h"

#include <doctest/doctest.h>

#include <random>

namespace nncosim::sim::testing {
namespace {

using Block = std::array<std::array<int32_t, kCols>, kRows>;

Block randomBlock(std::mt19937& rng) {
    Block w{};
    for (auto& row : w) {
        for (auto& v : row) {
            v = static_cast<int32_t>(rng() % 511) - 255;
        }
    }
    return w;
}

TEST_CASE("sim_array_matrix_product") {
    ArrayBlock& array = testBench().array;
    std::mt19937 rng(0x5eed4001);
    const std::array<Block, 3> blocks = {randomBlock(rng), randomBlock(rng), randomBlock(rng)};

    // Script: load block 0 into buffer 0; stream 40 vectors on it while block 1 loads into
    // buffer 1; stream 40 on buffer 1 while block 2 replaces block 0 (its rows written only
    // after the last buffer-0 vector has left them); stream 40 on buffer 0 again.
    std::vector<ArrayStep> script;
    std::vector<int> blockOfStep;  // weight block each step's vector must meet, -1 for none
    const auto loadRow = [&](ArrayStep& s, bool buffer, int row, const Block& b) {
        s.load = true;
        s.loadBuffer = buffer;
        s.loadRow = row;
        s.loadData = b[row];
    };
    for (int r = 0; r < kRows; ++r) {
        ArrayStep s;
        loadRow(s, false, r, blocks[0]);
        script.push_back(s);
        blockOfStep.push_back(-1);
    }
    constexpr int kVectors = 40;
    static_assert(kVectors > kRows + kCols + 1);
    for (int phase = 0; phase < 3; ++phase) {
        const bool tag = phase == 1;
        const int block = phase;
        for (int v = 0; v < kVectors; ++v) {
            ArrayStep s;
            s.tag = tag;
            for (auto& a : s.act) {
                a = static_cast<int32_t>(rng() % 511) - 255;
            }
            // Phase 0 loads block 1 into buffer 1 (idle); phase 1 loads block 2 into buffer 0
            // once the last buffer-0 vector is Cols + 1 cycles past each row.
            if (phase == 0 && v < kRows) {
                loadRow(s, true, v, blocks[1]);
            }
            if (phase == 1 && v >= kCols + 1 && v < kCols + 1 + kRows) {
                loadRow(s, false, v - kCols - 1, blocks[2]);
            }
            script.push_back(s);
            blockOfStep.push_back(block);
        }
    }
    for (int i = 0; i < kArrayLatency; ++i) {
        script.push_back(ArrayStep{});
        blockOfStep.push_back(-1);
    }

    array.play(script);
    sc_core::sc_start();
    const auto& out = array.outputs();
    REQUIRE(out.size() == script.size());
    int checked = 0;
    for (size_t t = 0; t < script.size(); ++t) {
        if (blockOfStep[t] < 0) {
            continue;
        }
        const Block& w = blocks[blockOfStep[t]];
        const size_t at = t + kArrayLatency - 1;
        REQUIRE(at < out.size());
        for (int c = 0; c < kCols; ++c) {
            int32_t want = 0;
            for (int r = 0; r < kRows; ++r) {
                want += script[t].act[r] * w[r][c];
            }
            CAPTURE(t);
            CAPTURE(c);
            REQUIRE(out[at][c] == want);
        }
        ++checked;
    }
    CHECK(checked == 3 * kVectors);
}

}  // namespace
}  // namespace nncosim::sim::testing
