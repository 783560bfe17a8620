// The Verilated systolic array (rtl/npu_array.sv) alone, as a SystemC module for its block
// testbench: it plays a script of per-cycle inputs and records the output vector of every
// cycle. Like the other blocks it owns its model and advances SystemC time once per script.
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <vector>

#include <systemc>

#include "driver/NpuRegisters.h"

class Vnpu_array;
class VerilatedContext;

namespace nncosim::sim::testing {

inline constexpr int kRows = npu::kArrayRows;
inline constexpr int kCols = npu::kArrayCols;
/// Cycles from an input vector to its output vector.
inline constexpr int kArrayLatency = kRows + kCols;

struct ArrayStep {
    std::array<int32_t, kRows> act{};  ///< signed 9-bit values
    bool valid = false;                ///< a vector enters (float PEs compute only then)
    bool tag = false;                  ///< weight buffer the vector uses
    bool load = false;                 ///< write one weight row this cycle
    bool loadBuffer = false;
    int loadRow = 0;
    std::array<int32_t, kCols> loadData{};
    bool floatMode = false;  ///< binary32 operands below instead of the above
    std::array<uint32_t, kRows> floatAct{};
    std::array<uint32_t, kCols> floatLoadData{};
    /// Depthwise mode: an operand per PE and a tag per row (binary32 operands in float mode),
    /// and which rows hold a kernel tap (float mode).
    bool depthwise = false;
    std::array<std::array<int32_t, kCols>, kRows> dwAct{};
    std::array<std::array<uint32_t, kCols>, kRows> floatDwAct{};
    std::array<bool, kRows> dwTag{};
    std::array<bool, kRows> rowOn{};
};

class ArrayBlock : public sc_core::sc_module {
  public:
    SC_HAS_PROCESS(ArrayBlock);
    ArrayBlock(const sc_core::sc_module_name& name, const sc_core::sc_time& clockPeriod);
    ~ArrayBlock() override;

    /// Queues a script; sc_start() runs it. outputs()[i] is psum_o after step i's clock edge
    /// (binary32 bits in float mode).
    void play(std::vector<ArrayStep> script);
    const std::vector<std::array<int32_t, kCols>>& outputs() const { return mOutputs; }

  private:
    void clockThread();

    std::unique_ptr<VerilatedContext> mContext;
    std::unique_ptr<Vnpu_array> mModel;
    sc_core::sc_time mClockPeriod;
    sc_core::sc_event mWork;
    std::vector<ArrayStep> mScript;
    std::vector<std::array<int32_t, kCols>> mOutputs;
};

}  // namespace nncosim::sim::testing
