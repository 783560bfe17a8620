// Verilated headers come before <systemc> (pulled in by ArrayBlock.h).
#include "Vnpu_array.h"
#include "verilated.h"

#include "sim/tests/ArrayBlock.h"

#include <type_traits>

namespace nncosim::sim::testing {
namespace {

// Packs signed fields of `bits` bits, element 0 lowest, into a Verilator port.
template <typename Port, size_t N>
void packPort(Port& port, const std::array<int32_t, N>& values, unsigned bits) {
    std::vector<uint32_t> words((N * bits + 31) / 32, 0);
    for (size_t i = 0; i < N; ++i) {
        const uint64_t field = static_cast<uint32_t>(values[i]) & ((1u << bits) - 1);
        const size_t lsb = i * bits;
        words[lsb / 32] |= static_cast<uint32_t>(field << (lsb % 32));
        if (lsb % 32 + bits > 32) {
            words[lsb / 32 + 1] |= static_cast<uint32_t>(field >> (32 - lsb % 32));
        }
    }
    if constexpr (std::is_integral_v<Port>) {
        uint64_t value = words[0];
        if (words.size() > 1) {
            value |= uint64_t{words[1]} << 32;
        }
        port = static_cast<Port>(value);
    } else {
        for (size_t w = 0; w < words.size(); ++w) {
            port[w] = words[w];
        }
    }
}

}  // namespace

ArrayBlock::ArrayBlock(const sc_core::sc_module_name& name, const sc_core::sc_time& clockPeriod)
    : sc_core::sc_module(name),
      mContext(std::make_unique<VerilatedContext>()),
      mModel(std::make_unique<Vnpu_array>(mContext.get(), "npu_array")),
      mClockPeriod(clockPeriod) {
    SC_THREAD(clockThread);
}

ArrayBlock::~ArrayBlock() {
    mModel->final();
}

void ArrayBlock::play(std::vector<ArrayStep> script) {
    mScript = std::move(script);
    mOutputs.clear();
    mWork.notify(sc_core::SC_ZERO_TIME);
}

void ArrayBlock::clockThread() {
    mModel->rst_ni = 0;
    mModel->clk_i = 0;
    mModel->eval();
    mModel->rst_ni = 1;
    while (true) {
        wait(mWork);
        for (const ArrayStep& step : mScript) {
            Vnpu_array& m = *mModel;
            packPort(m.act_i, step.act, 9);
            m.tag_i = step.tag;
            m.valid_i = step.valid;
            m.wload_valid_i = step.load;
            m.wload_buf_i = step.loadBuffer;
            m.wload_row_i = step.loadRow;
            packPort(m.wload_data_i, step.loadData, 9);
            m.fp_mode_i = step.floatMode;
            m.wload_fp_i = step.floatMode;
            m.fp_diag_i = 0;
            m.dw_mode_i = step.depthwise;
            for (int r = 0; r < kRows; ++r) {
                m.fp_act_i[r] = step.floatAct[r];
                m.dw_tag_i[r] = step.dwTag[r];
                m.dw_row_on_i[r] = step.rowOn[r];
                for (int c = 0; c < kCols; ++c) {
                    m.dw_act_i[r][c] = static_cast<uint16_t>(step.dwAct[r][c] & 0x1ff);
                    m.fp_dw_act_i[r][c] = step.floatDwAct[r][c];
                }
            }
            for (int c = 0; c < kCols; ++c) {
                m.fp_wload_data_i[c] = step.floatLoadData[c];
            }
            m.clk_i = 0;
            m.eval();
            m.clk_i = 1;
            m.eval();
            std::array<int32_t, kCols> out{};
            for (int c = 0; c < kCols; ++c) {
                out[c] = static_cast<int32_t>(m.psum_o[c]);
            }
            mOutputs.push_back(out);
        }
        wait(mClockPeriod * static_cast<double>(mScript.size()));
    }
}

}  // namespace nncosim::sim::testing
