// Internal to the driver (not part of its API, whose headers are IDevice.h & co. and
// NpuDevice.h): IPreparedModel on the NPU — request validation and resolution of driver-managed
// buffers, synchronous, asynchronous and fenced execution, compilation of variants for new input
// shapes — and the callback of its fenced executions.
#pragma once

#include <atomic>
#include <condition_variable>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <utility>
#include <vector>

#include "driver/BufferTracker.h"
#include "driver/Compiler.h"
#include "driver/ControlFlow.h"
#include "driver/IPreparedModel.h"
#include "driver/Program.h"

namespace nncosim::driver::detail {

class DeviceCore;

// A request whose driver-managed buffers are replaced by their storage, and those buffers.
struct ResolvedRequest {
    Request request;
    std::vector<std::pair<uint32_t, std::shared_ptr<ManagedBuffer>>> outputBuffers;  // output index
    Duration loopTimeout = kDefaultLoopTimeoutDuration;
};

// The IFencedExecutionCallback of an NpuPreparedModel's fenced execution.
class FencedCallback : public IFencedExecutionCallback {
  public:
    FencedExecutionInfo getExecutionInfo() const override;
    void finish(FencedExecutionInfo info);

  private:
    mutable std::mutex mMutex;
    mutable std::condition_variable mCondition;
    bool mDone = false;
    FencedExecutionInfo mInfo;
};

class NpuPreparedModel : public IPreparedModel,
                         public std::enable_shared_from_this<NpuPreparedModel> {
  public:
    NpuPreparedModel(std::shared_ptr<DeviceCore> core, Model model, bool fullModel,
                     Priority priority, std::shared_ptr<const Program> program);

    /// The priority its executions run with (kept in the compilation cache too).
    Priority priority() const { return mPriority; }

    const Model& model() const { return mModel; }

    // For models with IF or WHILE: compiles every stretch of known shapes now and checks it
    // fits `arenaCapacity` (ControlFlowRunner::precompile); OK for the others.
    Status precompileControlFlow(uint64_t arenaCapacity) const;
    const DeviceCore* core() const { return mCore.get(); }

    ExecutionResult execute(const Request& request, MeasureTiming measure,
                            const OptionalTimePoint& deadline,
                            const OptionalDuration& loopTimeout) const override;

    Status executeAsynchronously(const Request& request, MeasureTiming measure,
                                 const OptionalTimePoint& deadline,
                                 const OptionalDuration& loopTimeout,
                                 std::shared_ptr<IExecutionCallback> callback) const override;

    Result<FencedExecution> executeFenced(const Request& request,
                                          const std::vector<SyncFence>& waitFor,
                                          MeasureTiming measure, const OptionalTimePoint& deadline,
                                          const OptionalDuration& loopTimeout,
                                          const OptionalDuration& timeoutAfterFence) const override;

    // executeFenced, calling `onDone` (if any) when the execution has ended.
    Result<FencedExecution> launchFenced(const Request& request,
                                         const std::vector<SyncFence>& waitFor,
                                         MeasureTiming measure, const OptionalTimePoint& deadline,
                                         const OptionalDuration& loopTimeout,
                                         const OptionalDuration& timeoutAfterFence,
                                         std::function<void()> onDone) const;

    Result<SharedExecution> createReusableExecution(
        const Request& request, MeasureTiming measure,
        const OptionalDuration& loopTimeout) const override;

    Result<SharedBurst> configureExecutionBurst() const override;

    // createReusableExecution for a burst: the execution shares the burst's busy flag.
    Result<SharedExecution> createReusableExecution(
        const Request& request, MeasureTiming measure, const OptionalDuration& loopTimeout,
        std::shared_ptr<std::atomic<bool>> burstBusy) const;

  private:
    // Validates everything about an execution and replaces buffer tokens by their storage.
    Result<ResolvedRequest> resolve(const Request& request, MeasureTiming measure,
                                    const OptionalTimePoint& deadline,
                                    const OptionalDuration& loopTimeout) const;

    // Runs a resolved request: compile for its shapes if needed, then the device.
    ExecutionResult run(const ResolvedRequest& r, MeasureTiming measure,
                        const OptionalTimePoint& deadline, TimePoint start) const;

    // Adds the host time spent letting the device run to `hostTimeOnDevice`.
    ExecutionResult runOnDevice(const ResolvedRequest& r, const OptionalTimePoint& deadline,
                                Duration* hostTimeOnDevice) const;

    // The program for these inputs' shapes (and values of compile-time inputs): the one compiled
    // at preparation, or a variant compiled now and kept.
    Result<std::shared_ptr<const Program>> programFor(const std::vector<TensorData>& inputs) const;

    const std::shared_ptr<DeviceCore> mCore;
    const Model mModel;
    const bool mFullModel;
    const Priority mPriority;
    const std::shared_ptr<const Program> mProgram;  // for the model's own input shapes, if known
    const ProgramVariants mVariants;
    // Models with IF or WHILE run job by job; null for the others.
    const std::unique_ptr<const ControlFlowRunner> mControlFlow;
};

}  // namespace nncosim::driver::detail
