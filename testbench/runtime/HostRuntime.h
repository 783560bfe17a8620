// The host runtime: plays the NNAPI framework for a model on this machine. It asks the
// driver which operations the NPU supports, partitions the main graph between the NPU and the
// CPU (the golden reference) as Android's runtime does, prepares every partition on its device,
// and on execution runs the partitions in order, moving the tensors that cross partition
// boundaries between them. It reports where every operation ran and what the NPU measured.
#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "driver/IDevice.h"
#include "driver/NpuDevice.h"
#include "model/Model.h"
#include "model/Status.h"
#include "sim/Cosim.h"
#include "sim/Platform.h"
#include "testbench/NpuProfiler.h"
#include "testbench/runtime/Partitioner.h"

namespace nncosim {

/// An NPU (the SystemC platform or the functional model), watched by a profiler, with the
/// driver on it.
struct NpuContext {
    std::shared_ptr<NpuProfiler> hardware;
    driver::SharedDevice device;
    sim::NpuImplementation implementation = sim::NpuImplementation::kRtl;
    uint32_t dramBytesPerCycle = 16;  ///< the platform's DRAM bandwidth
    /// Co-simulation (sim::PlatformConfig::cosim): the platform under the profiler.
    std::shared_ptr<sim::CosimPlatform> cosim;
    /// The functional model's cycles are the cost model's estimates, not measurements.
    bool cyclesEstimated() const { return implementation != sim::NpuImplementation::kRtl; }
};

/// Opens the process's NPU. SystemC elaborates once per process: the first call creates the
/// platform with `config` (implementation, trace and fault options included, sim::createPlatform);
/// later calls return the same context whatever their `config`.
Result<std::shared_ptr<NpuContext>> openNpu(const sim::PlatformConfig& config = {});

/// A context of its own (not the process's) on sim::createPlatform(config): for running the same
/// model on two implementations in one process (the RTL one is still the process's one SystemC
/// platform), or a device with other options (e.g. energy parameters) on a functional model.
Result<std::shared_ptr<NpuContext>> makeNpuContext(const sim::PlatformConfig& config,
                                                   const driver::DeviceOptions& device = {});

/// Where the runtime may place operations.
enum class Placement {
    kGolden,  ///< everything on the CPU (the golden reference)
    kNpu,   ///< everything on the NPU; preparation fails unless the driver supports every operation
    kAuto,  ///< the NPU where the driver supports an operation, the CPU elsewhere
};

struct RuntimeOptions {
    Placement placement = Placement::kAuto;
    /// The application's ExecutionPreference. With Placement::kAuto an operation the driver
    /// supports runs on the NPU only when the NPU's figure for it beats the CPU's, as Android's
    /// runtime decides (chooseNpu): powerUsage for LOW_POWER, execTime for FAST_SINGLE_ANSWER and
    /// SUSTAINED_SPEED. Every partition is prepared with it. Placement::kNpu runs everything on
    /// the NPU whatever the figures (a compilation for that one device).
    ExecutionPreference preference = kDefaultExecutionPreference;
    /// Every operation in a partition of its own (each intermediate tensor crosses the host).
    bool onePartitionPerOperation = false;
    /// Every operation's outputs are partition outputs, so the host sees every intermediate
    /// tensor while the partitions stay as they are.
    bool exposeIntermediates = false;
    /// Sample the NPU every this many cycles to attribute its counters to operations
    /// (NpuProfiler); 0: per partition only.
    uint64_t profileSampleCycles = 0;
    /// The NPU to run on; empty: the process's (openNpu()).
    std::shared_ptr<NpuContext> npu;
    /// Called before each NPU partition executes (partition index, its model), e.g. to tell a
    /// co-simulation platform where the partition's job runs.
    std::function<void(size_t, const PartitionModel&)> beforeNpuPartition;
};

struct OperationRecord {
    uint32_t index = 0;  ///< main-graph operation
    OperationType type = OperationType::ADD;
    bool npu = false;
    uint32_t partition = 0;
    std::string cpuReason;  ///< why the NPU does not take it (empty when it runs on the NPU)
    std::optional<NpuCounters> counters;  ///< its share of its NPU job, when sampled
    /// The driver fused it with this main-graph operation (a depthwise layer chained into the
    /// 1x1 convolution after it): they overlap on the device, and `counters` of that operation
    /// hold both. Known when sampled.
    std::optional<uint32_t> fusedInto;
};

struct PartitionRecord {
    bool npu = false;
    std::vector<uint32_t> operations;  ///< main-graph operations in execution order
    double seconds = 0.0;              ///< host wall time of its execution
    std::optional<NpuJobProfile> job;  ///< NPU partitions: the job the driver ran
};

struct ExecutionRecord {
    std::vector<PartitionRecord> partitions;
    std::vector<OperationRecord> operations;  ///< one per main-graph operation
    uint64_t npuCycles = 0;                   ///< all NPU jobs, doorbell to interrupt
    Duration deviceTime{0};                   ///< npuCycles at the device clock
    double cpuSeconds = 0.0;                  ///< wall time of the CPU partitions
    /// Values of the main-graph operands that crossed the host (model inputs, partition
    /// outputs), by operand index; every operation's outputs with exposeIntermediates or
    /// onePartitionPerOperation.
    std::vector<std::optional<TensorData>> values;

    /// The NPU partitions' job counters, summed.
    NpuCounters npuTotal() const;
};

class HostRuntime {
  public:
    /// Validates `model`, plans its partitions and prepares each on its device. The NPU is
    /// opened (openNpu) when an operation goes there. Fails with INVALID_ARGUMENT for an invalid
    /// model and, with Placement::kNpu, with GENERAL_FAILURE naming the unsupported operations.
    static Result<std::unique_ptr<HostRuntime>> create(const Model& model,
                                                       const RuntimeOptions& options);
    ~HostRuntime();

    const Model& model() const { return mModel; }
    const std::vector<Partition>& partitions() const { return mPartitions; }
    /// Per main-graph operation: empty when the NPU takes it, else why it runs on the CPU.
    const std::vector<std::string>& cpuReasons() const { return mCpuReasons; }

    /// Runs the model on `inputs` (one per main-graph input; no dimensions and no bytes for an
    /// omitted one) and returns one tensor per main-graph output. Fills `record` when given.
    /// `loopTimeout` bounds WHILE loops on either device. The NPU figures in `record` are only
    /// meaningful when no other execution uses the NPU at the same time (NpuProfiler).
    Result<std::vector<TensorData>> execute(
        const std::vector<TensorData>& inputs, ExecutionRecord* record = nullptr,
        Duration loopTimeout = kDefaultLoopTimeoutDuration) const;

  private:
    struct Step;
    HostRuntime() = default;
    /// Android's full CPU fallback: the whole model on the golden, recorded as one more partition.
    Result<std::vector<TensorData>> fallBackToCpu(const std::vector<TensorData>& inputs,
                                                  ExecutionRecord& rec,
                                                  std::vector<std::optional<TensorData>>& values,
                                                  Duration loopTimeout) const;

    Model mModel;
    RuntimeOptions mOptions;
    std::shared_ptr<NpuContext> mNpu;
    std::vector<Partition> mPartitions;
    std::vector<std::string> mCpuReasons;
    std::vector<Step> mSteps;
};

}  // namespace nncosim
