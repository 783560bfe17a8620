// The golden reference executor: runs any valid NNAPI Model on the CPU, operation by
// operation, with the arithmetic of Android's CPU reference (quantized results bit-exact).
// It is the oracle every NPU result is judged against and the CPU fallback of the runtime.
#pragma once

#include <cstdint>
#include <functional>
#include <vector>

#include "model/Model.h"
#include "model/Status.h"
#include "model/Types.h"

namespace nncosim::golden {

struct ExecuteOptions {
    /// Longest time a WHILE loop may run (NNAPI: default 2 s, at most 15 s). A loop still
    /// running past it fails with MISSED_DEADLINE_TRANSIENT.
    Duration loopTimeout = kDefaultLoopTimeoutDuration;
    /// Called after each main-graph operation (index into Model::main.operations) with the
    /// values of its outputs, in the order of Operation::outputs. Used to find the first
    /// operation where a device diverges from the golden; leave empty when not needed.
    std::function<void(uint32_t operationIndex, const std::vector<TensorData>& outputs)> observer;
    /// Bytes the operations' outputs may take in all; an output past it fails the execution
    /// with GENERAL_FAILURE naming the operation, output and size (before allocating).
    uint64_t memoryLimitBytes = kDefaultMemoryLimitBytes;
};

/// Executes `model` on `inputs` (one per Model::main.inputIndexes, in that order) and returns
/// one TensorData per Model::main.outputIndexes with the shapes the operations computed.
///
/// Input dimensions must agree with the model's known dimensions and must give every unknown
/// one; each input's byte count must match its type and dimensions. An input with neither
/// dimensions nor bytes is omitted (a NO_VALUE request argument). Violations fail with
/// INVALID_ARGUMENT. The model is assumed valid (run model validation first); an operation
/// that fails during execution (e.g. an out-of-range index, an output shape contradicting
/// the model) fails with GENERAL_FAILURE, and an operation with no reference implementation
/// fails with GENERAL_FAILURE naming it.
Result<std::vector<TensorData>> execute(const Model& model, const std::vector<TensorData>& inputs,
                                        const ExecuteOptions& options = {});

}  // namespace nncosim::golden
