// Parts of a model as models of their own: a stretch of main-graph operations (a partition of
// the runtime, a straight run of operations between control flow in the driver), or a
// referenced subgraph (an IF branch, a WHILE condition or body).
#pragma once

#include <cstdint>
#include <vector>

#include "model/Model.h"
#include "model/Status.h"

namespace nncosim {

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

/// Which main-graph operands must leave their group of operations (`groupOf`: each operation's
/// group): main-graph outputs and operands read by an operation of another group; with
/// `everyResult`, every operation's outputs.
std::vector<bool> exportedOperands(const Model& model, const std::vector<uint32_t>& groupOf,
                                   bool everyResult);

/// The model whose main graph is referenced subgraph `index` of `model` (constants, pools and
/// the other referenced subgraphs carried along).
Model subgraphModel(const Model& model, uint32_t index);

}  // namespace nncosim
