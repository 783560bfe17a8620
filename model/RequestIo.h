// Moving tensor bytes between a Request's arguments (pointers or shared-memory pools) and
// TensorData: how every executor (golden on the CPU, the driver staging to device memory)
// reads a request's inputs and fills its outputs.
#pragma once

#include <vector>

#include "model/Model.h"
#include "model/Status.h"

namespace nncosim {

/// The inputs of a validated request, one per model input: actual dimensions (request
/// dimensions where given, else the model's) and bytes. An omitted (NO_VALUE) input has no
/// bytes. Fails with INVALID_ARGUMENT when a pool is a driver buffer token (the caller must
/// resolve those first) or an input's dimensions are still unknown.
Result<std::vector<TensorData>> readRequestInputs(const Model& model, const Request& request);

/// Copies `outputs` (one per model output) into the request's output arguments and reports
/// each output's shape. When an argument's buffer is smaller than its output, nothing more is
/// copied, that shape is marked insufficient, and the result is OUTPUT_INSUFFICIENT_SIZE (with
/// every shape filled in, as the NNAPI contract requires).
Status writeRequestOutputs(const Model& model, const Request& request,
                           const std::vector<TensorData>& outputs,
                           std::vector<OutputShape>* shapes);

}  // namespace nncosim
