// IF and WHILE on the NPU. The command processor has no branches, so the driver sequences
// control flow on the host, as drivers of accelerators without a control processor do: each
// straight run of operations of a graph (the main graph, an IF branch, a WHILE condition or body)
// is one NPU job of its own program, and the driver reads a condition's TENSOR_BOOL8 back from its
// job to pick the branch or end the loop. Every other operation runs on the NPU.
#pragma once

#include <functional>
#include <memory>
#include <vector>

#include "driver/Program.h"
#include "driver/Runtime.h"
#include "model/Model.h"
#include "model/Status.h"

namespace nncosim::driver {

/// Whether the main graph of `model` has IF or WHILE operations.
bool hasControlFlow(const Model& model);

/// Whether the NPU runs IF or WHILE `op` of the main graph: every operation of every subgraph it
/// references is supported, recursively.
Status controlFlowSupported(const Model& model, const Operation& op);

/// Runs a model with control flow, job by job; each stretch's programs are compiled when first
/// needed, per input shapes, and kept. Thread-safe.
class ControlFlowRunner {
  public:
    /// Runs one program with its inputs on the device.
    using RunJob = std::function<JobOutcome(const Program&, const std::vector<TensorData>&)>;

    explicit ControlFlowRunner(const Model& model);
    ~ControlFlowRunner();

    /// What prepares must launch: compiles now every stretch of every graph whose input shapes
    /// the model fixes (and whose weights are not inputs), keeping the programs for the
    /// executions. Fails as the compiler does, or with RESOURCE_EXHAUSTED_PERSISTENT when a
    /// stretch needs more than `arenaCapacity` bytes of device memory. Stretches of unknown
    /// shapes are compiled, and checked, when they first run.
    Status precompile(uint64_t arenaCapacity) const;

    /// The main graph's outputs for `inputs`, with the cycles of all jobs. A WHILE that is still
    /// looping after `loopTimeout` fails with MISSED_DEADLINE_TRANSIENT; a job's failure is the
    /// run's.
    JobOutcome run(const std::vector<TensorData>& inputs, Duration loopTimeout,
                   const RunJob& runJob) const;

  private:
    struct Graph;
    struct Execution;
    Result<std::vector<TensorData>> runGraph(size_t graph, std::vector<TensorData> inputs,
                                             Execution& execution) const;

    std::vector<std::unique_ptr<Graph>> mGraphs;  // the main graph, then each referenced one
};

}  // namespace nncosim::driver
