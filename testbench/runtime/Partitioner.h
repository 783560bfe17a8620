// Splitting a model's main graph between the NPU and the CPU as Android's NNAPI runtime does
// when a driver supports only part of a model: partitions of operations, each turned into a
// model of its own whose inputs and outputs are the tensors that cross partition boundaries.
#pragma once

#include <cstdint>
#include <vector>

#include "model/Model.h"
#include "model/Status.h"

namespace nncosim {

struct Partition {
    bool npu = false;
    std::vector<uint32_t> operations;  ///< main-graph operation indexes, in execution order
};

/// Partitions the main graph as Android's ExecutionPlan does: operations become ready when
/// every operand they read is available; the runtime keeps taking ready operations of the
/// current device (the NPU first, then the CPU) until none is left, then opens a partition on
/// the other device. `onNpu` has one entry per main-graph operation.
std::vector<Partition> partitionOperations(const Model& model, const std::vector<bool>& onNpu);

/// One partition per operation, in the model's order (to see every intermediate tensor).
std::vector<Partition> singleOperationPartitions(const Model& model,
                                                 const std::vector<bool>& onNpu);

/// A partition as a model of its own.
struct PartitionModel {
    Model model;
    std::vector<uint32_t> inputs;      ///< main-graph operand of each model input
    std::vector<uint32_t> outputs;     ///< main-graph operand of each model output
    std::vector<uint32_t> operations;  ///< main-graph operation of each model operation
};

/// The model of `operations` (main-graph indexes in a valid execution order): operands they
/// read that are main-graph inputs or written outside the partition become its inputs; operands
/// they write with `exported[k]` set become its outputs; constant values, pools and referenced
/// subgraphs are carried along.
/// Fails with INVALID_ARGUMENT when the partition would have no output.
Result<PartitionModel> extractPartition(const Model& model, const std::vector<uint32_t>& operations,
                                        const std::vector<bool>& exported);

/// Which main-graph operands must leave their partition: main-graph outputs and operands read
/// by an operation of another partition; with `everyResult`, every operation's outputs.
std::vector<bool> exportedOperands(const Model& model, const std::vector<Partition>& partitions,
                                   bool everyResult);

}  // namespace nncosim
