#include "driver/NpuPreparedModel.h"

#include <algorithm>
#include <optional>
#include <thread>

#include "driver/AsyncWork.h"
#include "driver/Compiler.h"
#include "driver/DeviceCore.h"
#include "driver/NpuBurst.h"
#include "driver/NpuExecution.h"
#include "model/RequestIo.h"
#include "model/Validation.h"

namespace nncosim::driver::detail {
namespace {

OptionalTimePoint earlier(const OptionalTimePoint& a, const OptionalTimePoint& b) {
    if (!a) return b;
    if (!b) return a;
    return std::min(*a, *b);
}

// IDevice::allocate: "A buffer will return to the uninitialized state if it is used as an
// output in a failed execution" — whichever way the execution failed.
void uninitializeOutputs(const ResolvedRequest& r) {
    for (const auto& [index, buffer] : r.outputBuffers) buffer->setUninitialized();
}

}  // namespace

FencedExecutionInfo FencedCallback::getExecutionInfo() const {
    std::unique_lock<std::mutex> lock(mMutex);
    mCondition.wait(lock, [this] { return mDone; });
    return mInfo;
}

void FencedCallback::finish(FencedExecutionInfo info) {
    {
        std::lock_guard<std::mutex> lock(mMutex);
        mInfo = std::move(info);
        mDone = true;
    }
    mCondition.notify_all();
}

NpuPreparedModel::NpuPreparedModel(std::shared_ptr<DeviceCore> core, Model model, bool fullModel,
                                   Priority priority, std::shared_ptr<const Program> program)
    : mCore(std::move(core)),
      mModel(std::move(model)),
      mFullModel(fullModel),
      mPriority(priority),
      mProgram(std::move(program)),
      mVariants(mModel),
      mControlFlow(hasControlFlow(mModel) ? std::make_unique<ControlFlowRunner>(mModel) : nullptr) {
}

Status NpuPreparedModel::precompileControlFlow(uint64_t arenaCapacity) const {
    return mControlFlow ? mControlFlow->precompile(arenaCapacity) : okStatus();
}

ExecutionResult NpuPreparedModel::execute(const Request& request, MeasureTiming measure,
                                          const OptionalTimePoint& deadline,
                                          const OptionalDuration& loopTimeout) const {
    const auto start = Clock::now();
    auto resolved = resolve(request, measure, deadline, loopTimeout);
    if (!resolved) return ExecutionResult::failure(resolved.status());
    return run(*resolved, measure, deadline, start);
}

Status NpuPreparedModel::executeAsynchronously(const Request& request, MeasureTiming measure,
                                               const OptionalTimePoint& deadline,
                                               const OptionalDuration& loopTimeout,
                                               std::shared_ptr<IExecutionCallback> callback) const {
    if (!callback) return invalidArgument("executeAsynchronously: null callback");
    const auto start = Clock::now();
    auto resolved = resolve(request, measure, deadline, loopTimeout);
    if (!resolved) {
        callback->notify(ExecutionResult::failure(resolved.status()));
        return resolved.status();
    }
    auto shared = std::make_shared<const ResolvedRequest>(std::move(*resolved));
    Status posted =
        postWork([self = shared_from_this(), shared, measure, deadline, start, callback] {
            callback->notify(self->run(*shared, measure, deadline, start));
        });
    if (!posted.ok()) {
        uninitializeOutputs(*shared);
        callback->notify(ExecutionResult::failure(posted));
    }
    return posted;
}

Result<FencedExecution> NpuPreparedModel::executeFenced(
    const Request& request, const std::vector<SyncFence>& waitFor, MeasureTiming measure,
    const OptionalTimePoint& deadline, const OptionalDuration& loopTimeout,
    const OptionalDuration& timeoutAfterFence) const {
    return launchFenced(request, waitFor, measure, deadline, loopTimeout, timeoutAfterFence,
                        nullptr);
}

Result<FencedExecution> NpuPreparedModel::launchFenced(
    const Request& request, const std::vector<SyncFence>& waitFor, MeasureTiming measure,
    const OptionalTimePoint& deadline, const OptionalDuration& loopTimeout,
    const OptionalDuration& timeoutAfterFence, std::function<void()> onDone) const {
    const auto start = Clock::now();
    NN_RETURN_IF_ERROR(validateDuration(timeoutAfterFence));
    for (size_t i = 0; i < waitFor.size(); ++i) {
        if (waitFor[i].empty())
            return invalidArgument("executeFenced: waitFor fence ", i, " is empty");
        if (waitFor[i].state() == SyncFence::State::ERROR)
            return invalidArgument("executeFenced: waitFor fence ", i, " is in the error state");
    }
    auto resolved = resolve(request, measure, deadline, loopTimeout);
    if (!resolved) return resolved.status();
    std::optional<Status> insufficient;
    for (size_t i = 0; i < resolved->request.outputs.size(); ++i) {
        const auto& arg = resolved->request.outputs[i];
        if (arg.lifetime == Request::Argument::LifeTime::NO_VALUE) continue;
        const Operand& o = mModel.main.operands[mModel.main.outputIndexes[i]];
        auto dims = combineDimensions(o.dimensions, arg.dimensions);
        Operand probe = o;
        probe.dimensions = dims ? *dims : std::vector<uint32_t>{};
        if (hasUnknownDimensions(probe))
            return invalidArgument("executeFenced: output ", i, " has an unknown shape");
        // Every output's shape is known: a buffer too short for its output is known now, and
        // the fenced path has no output shapes to report, so the call itself fails.
        const uint64_t size = byteSize(probe.type, probe.dimensions);
        if (!insufficient && size > arg.location.length)
            insufficient = fail(ErrorStatus::OUTPUT_INSUFFICIENT_SIZE, "executeFenced: output ", i,
                                " needs ", size, " bytes, its buffer has ", arg.location.length);
    }
    if (insufficient) {
        uninitializeOutputs(*resolved);
        return *insufficient;
    }
    auto fence = createSyncFence();
    if (!fence) {
        uninitializeOutputs(*resolved);
        return fence.status();
    }
    auto callback = std::make_shared<FencedCallback>();
    auto signaler = std::make_shared<FenceSignaler>(std::move(fence->second));
    // Runs once every waitFor fence has signaled (on a worker thread), or reports why not.
    auto shared = std::make_shared<const ResolvedRequest>(std::move(*resolved));
    auto go = [self = shared_from_this(), r = shared, measure, deadline, timeoutAfterFence, start,
               signaler, callback, onDone = std::move(onDone)](Status waited) {
        FencedExecutionInfo info;
        info.status = std::move(waited);
        if (!info.status.ok()) {
            uninitializeOutputs(*r);  // never ran: a waitFor fence failed or the deadline passed
        } else {
            const auto fenced = Clock::now();
            OptionalTimePoint limit = deadline;
            if (timeoutAfterFence) limit = earlier(limit, fenced + *timeoutAfterFence);
            ExecutionResult result = self->run(*r, measure, limit, fenced);
            info.status = result.status;
            if (result.ok() && measure == MeasureTiming::YES) {
                info.timingFenced = result.timing;
                // Launched: the same execution plus the time from the call to the fences.
                info.timingLaunched = {result.timing.timeOnDevice,
                                       *result.timing.timeInDriver +
                                           std::chrono::duration_cast<Duration>(fenced - start)};
            }
        }
        const bool ok = info.status.ok();
        callback->finish(std::move(info));
        if (onDone) onDone();  // before the fence: whoever waits on it may compute again at once
        signaler->signal(ok);
    };
    if (Status waiting = whenSignaled(waitFor, deadline, std::move(go)); !waiting.ok()) {
        uninitializeOutputs(*shared);
        return waiting;
    }
    return FencedExecution{fence->first, callback};
}

Result<SharedExecution> NpuPreparedModel::createReusableExecution(
    const Request& request, MeasureTiming measure, const OptionalDuration& loopTimeout) const {
    return createReusableExecution(request, measure, loopTimeout, nullptr);
}

Result<SharedExecution> NpuPreparedModel::createReusableExecution(
    const Request& request, MeasureTiming measure, const OptionalDuration& loopTimeout,
    std::shared_ptr<std::atomic<bool>> burstBusy) const {
    auto resolved = resolve(request, measure, {}, loopTimeout);
    if (!resolved) return resolved.status();
    return SharedExecution(std::make_shared<NpuExecution>(shared_from_this(), request, measure,
                                                          loopTimeout, std::move(burstBusy)));
}

Result<SharedBurst> NpuPreparedModel::configureExecutionBurst() const {
    return SharedBurst(std::make_shared<NpuBurst>(shared_from_this()));
}

Result<ResolvedRequest> NpuPreparedModel::resolve(const Request& request, MeasureTiming measure,
                                                  const OptionalTimePoint& deadline,
                                                  const OptionalDuration& loopTimeout) const {
    NN_RETURN_IF_ERROR(validateMeasureTiming(measure));
    NN_RETURN_IF_ERROR(validateDeadline(deadline));
    NN_RETURN_IF_ERROR(validateLoopTimeout(loopTimeout));
    NN_RETURN_IF_ERROR(validateRequest(request, mModel));
    ResolvedRequest r{request, {}, loopTimeout.value_or(kDefaultLoopTimeoutDuration)};
    for (uint32_t p = 0; p < request.pools.size(); ++p) {
        const auto* token = std::get_if<MemoryDomainToken>(&request.pools[p]);
        if (!token) continue;
        auto buffer = mCore->buffers.get(*token);
        if (!buffer)
            return invalidArgument("request pool ", p, ": token ", *token,
                                   " is not a buffer of this device");
        NN_RETURN_IF_ERROR(buffer->validateRequest(p, request, this));
        // An output buffer of unknown shape has its storage bound in runOnDevice, once the
        // program says what it writes; an input buffer is initialized, so it has storage.
        auto [storage, dimensions] = buffer->contents();
        const auto size = storage ? static_cast<uint32_t>(storage->size()) : 0;
        r.request.pools[p] = std::move(storage);
        for (auto& arg : r.request.inputs) {
            if (arg.lifetime != Request::Argument::LifeTime::POOL || arg.location.poolIndex != p)
                continue;
            arg.location.length = size;
            if (arg.dimensions.empty()) arg.dimensions = dimensions;
        }
        for (uint32_t i = 0; i < r.request.outputs.size(); ++i) {
            auto& arg = r.request.outputs[i];
            if (arg.lifetime != Request::Argument::LifeTime::POOL || arg.location.poolIndex != p)
                continue;
            arg.location.length = size;
            if (arg.dimensions.empty()) arg.dimensions = buffer->operand().dimensions;
            r.outputBuffers.emplace_back(i, buffer);
        }
    }
    return r;
}

ExecutionResult NpuPreparedModel::run(const ResolvedRequest& r, MeasureTiming measure,
                                      const OptionalTimePoint& deadline, TimePoint start) const {
    Duration hostTimeOnDevice{0};
    ExecutionResult result = runOnDevice(r, deadline, &hostTimeOnDevice);
    for (const auto& [index, buffer] : r.outputBuffers) {
        if (result.ok())
            buffer->setInitialized(result.outputShapes[index].dimensions);
        else
            buffer->setUninitialized();
    }
    if (result.ok() && measure == MeasureTiming::YES) {
        // Two independent measurements: the device's time is its cycles at its clock; the
        // driver's own time is the host's wall time in the call less the host time spent
        // simulating the device (which says how fast the simulator is, not the driver). As on
        // silicon, where the driver waits while the device runs, the time in the driver is the
        // driver's own time plus the device's.
        const auto wall = std::chrono::duration_cast<Duration>(Clock::now() - start);
        const Duration own = std::max(wall - hostTimeOnDevice, Duration::zero());
        result.timing.timeInDriver = own + result.timing.timeOnDevice.value_or(Duration::zero());
    } else {
        result.timing = {};
    }
    return result;
}

ExecutionResult NpuPreparedModel::runOnDevice(const ResolvedRequest& r,
                                              const OptionalTimePoint& deadline,
                                              Duration* hostTimeOnDevice) const {
    if (deadlinePassed(deadline))
        return ExecutionResult::failure(
            fail(ErrorStatus::MISSED_DEADLINE_PERSISTENT, "the deadline has passed"));
    auto inputs = readRequestInputs(mModel, r.request);
    if (!inputs) return ExecutionResult::failure(inputs.status());
    const auto runJob = [&](const Program& program, const std::vector<TensorData>& in) {
        return mCore->runJob(mPriority, program, in, deadline);
    };
    // What the execution writes: a program's outputs are known before it runs; with control
    // flow, they are known once it has run.
    std::shared_ptr<const Program> program;
    std::vector<ProgramIo> written;
    JobOutcome outcome;
    if (mControlFlow) {
        outcome = mControlFlow->run(*inputs, r.loopTimeout, runJob);
        *hostTimeOnDevice += outcome.hostTimeOnDevice;
        if (!outcome.status.ok()) return ExecutionResult::failure(outcome.status);
        for (const TensorData& t : outcome.outputs)
            written.push_back({0, static_cast<uint32_t>(t.bytes.size()), t.dimensions});
    } else {
        auto compiled = programFor(*inputs);
        if (!compiled) return ExecutionResult::failure(compiled.status());
        program = *compiled;
        written = program->outputs;
    }
    // Output buffers of unknown shape take the shape the execution writes.
    Request request = r.request;
    for (const auto& [index, buffer] : r.outputBuffers) {
        if (buffer->shapeFixed()) continue;
        auto storage = buffer->storageFor(written[index].dimensions);
        if (!storage)
            return ExecutionResult::failure(fail(ErrorStatus::GENERAL_FAILURE, "output ", index,
                                                 ": ", storage.status().message));
        auto& arg = request.outputs[index];
        arg.location.length = static_cast<uint32_t>((*storage)->size());
        request.pools[arg.location.poolIndex] = std::move(*storage);
    }
    // Outputs too small for their shapes: no need to run the device (again).
    ExecutionResult result;
    bool sufficient = true;
    for (size_t i = 0; i < written.size(); ++i) {
        const ProgramIo& io = written[i];
        const auto& arg = request.outputs[i];
        OutputShape shape{io.dimensions, true};
        if (arg.lifetime != Request::Argument::LifeTime::NO_VALUE &&
            io.size > arg.location.length) {
            shape.isSufficient = false;
            sufficient = false;
        }
        result.outputShapes.push_back(std::move(shape));
    }
    if (!sufficient) {
        result.status = fail(ErrorStatus::OUTPUT_INSUFFICIENT_SIZE,
                             "an output buffer is smaller than its output");
        return result;
    }
    if (program) {
        outcome = runJob(*program, *inputs);
        *hostTimeOnDevice += outcome.hostTimeOnDevice;
        if (!outcome.status.ok()) return ExecutionResult::failure(outcome.status);
    }
    result.status = writeRequestOutputs(mModel, request, outcome.outputs, &result.outputShapes);
    if (!result.ok()) return ExecutionResult::failure(result.status);
    result.timing.timeOnDevice = mCore->runtime.deviceTime(outcome.cycles);
    return result;
}

Result<std::shared_ptr<const Program>> NpuPreparedModel::programFor(
    const std::vector<TensorData>& inputs) const {
    if (mProgram) {
        bool same = inputs.size() == mProgram->inputs.size();
        for (size_t i = 0; same && i < inputs.size(); ++i)
            same = inputs[i].dimensions == mProgram->inputs[i].dimensions;
        if (same) return mProgram;
    }
    if (!mFullModel)
        return fail(ErrorStatus::GENERAL_FAILURE,
                    "a model prepared from cache runs only the input shapes it was compiled for");
    return mVariants.get(inputs);
}

}  // namespace nncosim::driver::detail
