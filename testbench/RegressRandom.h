// Random constrained tests of the regression: one legal NNAPI operation (CONV_2D,
// DEPTHWISE_CONV_2D, AVERAGE_POOL_2D, MAX_POOL_2D, ADD, MUL, FULLY_CONNECTED, or a lookup:
// LOGISTIC, TANH, HARD_SWISH), or a chain of two, with random 8-bit quantized types, shapes and
// parameters, drawn from a seed so that any failing test can be rebuilt from its seed alone.
// A test can be aimed at a functional coverage point of the RTL (coverage-directed random):
// the draws then force what the point needs, e.g. a MAX_POOL_2D feeding an ADD for
// `maxpool_then_add`, or a strided window for `conv_strided`.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "model/Model.h"

namespace nncosim {

struct RandomTest {
    uint32_t seed = 0;
    std::string target;                     ///< the coverage point aimed at; empty: uniform
    std::vector<OperationType> operations;  ///< in chain order
    /// The type and operations with their draws, e.g. "quant8_signed CONV_2D input [1,9,7,5]
    /// filter [8,3,3,5] per-channel explicit padding 1,0,1,1 stride 2x1 RELU6 NHWC dilation 1x2
    /// -> MAX_POOL_2D ...".
    std::string description;
    Model model;
    std::vector<TensorData> inputs;  ///< one per main-graph input
};

/// Builds the test of `seed`: the same model and inputs for the same seed on every platform
/// (the draws use their own generator, not the standard distributions). The model is meant to
/// be valid NNAPI by construction; callers still validate it, since a generator bug must show
/// as a failure, not pass silently.
RandomTest makeRandomTest(uint32_t seed, const std::string& target = {});

/// The functional coverage points of rtl/npu_cmd.sv a test can be aimed at, by their short
/// names (`conv_strided`, `maxpool_then_add`, ...). The others (NOP sequences, faults, strided
/// lookup rows) are beyond what a model can ask of the driver; sim_tests reaches them.
std::vector<std::string> randomTestTargets();
bool isRandomTestTarget(const std::string& name);

/// The seed of test `index` of a run seeded with `runSeed` (distinct runs give distinct sets).
uint32_t randomTestSeed(uint32_t runSeed, uint32_t index);

}  // namespace nncosim
