// Random constrained tests of the regression: one legal NNAPI operation (CONV_2D,
// DEPTHWISE_CONV_2D, AVERAGE_POOL_2D, MAX_POOL_2D, ADD, MUL or FULLY_CONNECTED) with random
// 8-bit quantized types, shapes and parameters, drawn from a seed so that any failing test can
// be rebuilt from its seed alone.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "model/Model.h"

namespace nncosim {

struct RandomTest {
    uint32_t seed = 0;
    OperationType operation = OperationType::ADD;
    /// The operation and its draws, e.g. "CONV_2D quant8_signed input [1,9,7,5] filter
    /// [8,3,3,5] per-channel stride 2x1 dilation 1x2 explicit padding 1,0,1,1 RELU6 NHWC".
    std::string description;
    Model model;
    std::vector<TensorData> inputs;  ///< one per main-graph input
};

/// Builds the test of `seed`: the same model and inputs for the same seed on every platform
/// (the draws use their own generator, not the standard distributions). The model is meant to
/// be valid NNAPI by construction; callers still validate it, since a generator bug must show
/// as a failure, not pass silently.
RandomTest makeRandomTest(uint32_t seed);

/// The seed of test `index` of a run seeded with `runSeed` (distinct runs give distinct sets).
uint32_t randomTestSeed(uint32_t runSeed, uint32_t index);

}  // namespace nncosim
