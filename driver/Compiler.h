// The compiler: which operations the NPU executes exactly, and the lowering of a model's main
// graph to an NPU program (tiling to the scratchpads and accumulator banks, weight-stream
// packing with per-channel requantization parameters, fused activations, lookup tables).
#pragma once

#include <vector>

#include "driver/Program.h"
#include "model/Model.h"
#include "model/Status.h"

namespace nncosim::driver {

/// Whether the NPU executes main-graph operation `index` bit-exactly (the golden's
/// arithmetic): quantized 8-bit operands, NHWC layout, constant weights and parameters, and
/// parameter values within the descriptor fields. The model must be valid.
Status checkOperationSupported(const Model& model, uint32_t index);

/// Lowers the main graph of a valid model whose every operation is supported. `inputShapes`
/// gives one fully specified shape per model input (empty: the model's own dimensions).
/// Fails with GENERAL_FAILURE when a shape met at compile time exceeds what the descriptors
/// can express.
Result<Program> compileModel(const Model& model, const std::vector<std::vector<uint32_t>>& inputShapes);

}  // namespace nncosim::driver
