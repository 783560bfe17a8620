// Splitting a model's main graph between the NPU and the CPU as Android's NNAPI runtime does
// when a driver supports only part of a model: partitions of operations, each turned into a
// model of its own whose inputs and outputs are the tensors that cross partition boundaries.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>
#include <vector>

#include "model/Model.h"
#include "model/Status.h"
#include "model/Subgraphs.h"

namespace nncosim {

struct Partition {
    bool npu = false;
    std::vector<uint32_t> operations;  ///< main-graph operation indexes, in execution order
};

/// NNAPI's name of `preference` ("LOW_POWER", "FAST_SINGLE_ANSWER", "SUSTAINED_SPEED").
const char* nameOf(ExecutionPreference preference);
/// The preference the CLI spells `name` ("low-power", "fast-single-answer", "sustained-speed"),
/// or nullopt.
std::optional<ExecutionPreference> preferenceFromName(std::string_view name);

/// The CPU's figure in every comparison: Android's CPU device reports execTime and powerUsage
/// 1.0 for everything (NNAPI's figures are relative to the CPU).
inline constexpr float kCpuPerformance = 1.0f;

/// The figure the runtime compares for main-graph operation `operation` on a device with
/// `capabilities`, as Android's ModelBuilder::getPerformance: powerUsage for LOW_POWER,
/// execTime otherwise; of the type of the operation's first input (the relaxed float entries
/// for float32 in a relaxed model); IF: ifPerformance plus half of both branches' sums; WHILE:
/// whilePerformance plus the condition's and the body's sums.
float operationPerformance(const Model& model, uint32_t operation, const Capabilities& capabilities,
                           ExecutionPreference preference);

/// Where each main-graph operation runs best, as Android's findBestDeviceForEachOperation with
/// two devices, the NPU and the CPU: on the NPU when it supports the operation and its figure
/// (operationPerformance) is below the CPU's (kCpuPerformance); a tie goes to the CPU.
std::vector<bool> chooseNpu(const Model& model, const std::vector<bool>& supported,
                            const Capabilities& npuCapabilities, ExecutionPreference preference);

/// Partitions the main graph as Android's ExecutionPlan does: operations become ready when
/// every operand they read is available; the runtime keeps taking ready operations of the
/// current device (the NPU first, then the CPU) until none is left, then opens a partition on
/// the other device. `onNpu` has one entry per main-graph operation.
std::vector<Partition> partitionOperations(const Model& model, const std::vector<bool>& onNpu);

/// One partition per operation, in the model's order (to see every intermediate tensor).
std::vector<Partition> singleOperationPartitions(const Model& model,
                                                 const std::vector<bool>& onNpu);

/// Which main-graph operands must leave their partition: main-graph outputs and operands read
/// by an operation of another partition; with `everyResult`, every operation's outputs.
std::vector<bool> exportedOperands(const Model& model, const std::vector<Partition>& partitions,
                                   bool everyResult);

}  // namespace nncosim
