#include "driver/NpuDevice.h"

#include <atomic>
#include <condition_variable>
#include <cstring>
#include <future>
#include <map>
#include <mutex>
#include <set>
#include <thread>

#include "driver/BufferTracker.h"
#include "driver/Compiler.h"
#include "driver/DeviceQueue.h"
#include "driver/IBuffer.h"
#include "driver/IBurst.h"
#include "driver/IExecution.h"
#include "driver/IPreparedModel.h"
#include "driver/Runtime.h"
#include "model/NpuExtension.h"
#include "model/RequestIo.h"
#include "model/Validation.h"

namespace nncosim::driver {
namespace {

using Shapes = std::vector<std::vector<uint32_t>>;

bool sameExtraParams(const ExtraParams& a, const ExtraParams& b) {
    if (a.index() != b.index()) return false;
    if (const auto* pa = std::get_if<SymmPerChannelQuantParams>(&a)) {
        const auto& pb = std::get<SymmPerChannelQuantParams>(b);
        return pa->channelDim == pb.channelDim && pa->scales == pb.scales;
    }
    if (const auto* ra = std::get_if<std::vector<uint8_t>>(&a))
        return *ra == std::get<std::vector<uint8_t>>(b);
    return true;
}

bool deadlinePassed(const OptionalTimePoint& deadline) {
    return deadline && Clock::now() >= *deadline;
}

// The synchronous end of a prepareModel* call: the deadline checked last, and a failure reported
// to the callback as well as returned.
Status rejectedPreparation(Status st, const char* function, const OptionalTimePoint& deadline,
                           IPreparedModelCallback& callback) {
    if (st.ok() && deadlinePassed(deadline))
        st = fail(ErrorStatus::MISSED_DEADLINE_PERSISTENT, function, ": the deadline has passed");
    if (!st.ok()) callback.notify(st, nullptr);
    return st;
}

// The preparation thread's last check: true, with the callback told, when it finished too late.
bool missedDeadline(const OptionalTimePoint& deadline, IPreparedModelCallback& callback) {
    if (!deadlinePassed(deadline)) return false;
    callback.notify(fail(ErrorStatus::MISSED_DEADLINE_TRANSIENT, "preparation missed its deadline"),
                    nullptr);
    return true;
}

OptionalTimePoint earlier(const OptionalTimePoint& a, const OptionalTimePoint& b) {
    if (!a) return b;
    if (!b) return a;
    return std::min(*a, *b);
}

// The rules of the vendor extension the generic model validation leaves to its driver.
Status validateExtensionUse(const Model& model) {
    const auto prefix = npu_extension::prefixIn(model);
    auto checkSubgraph = [&](const Subgraph& g) -> Status {
        for (const Operand& operand : g.operands) {
            const auto raw = static_cast<int32_t>(operand.type);
            if (prefix && isExtension(raw) && extensionPrefix(raw) == *prefix &&
                typeWithinExtension(raw) != npu_extension::kLutTable)
                return invalidArgument("com.nncosim.npu has no operand type ",
                                       typeWithinExtension(raw));
        }
        for (const Operation& op : g.operations) {
            const auto raw = static_cast<int32_t>(op.type);
            if (!prefix || !isExtension(raw) || extensionPrefix(raw) != *prefix) continue;
            if (typeWithinExtension(raw) != npu_extension::kLut8)
                return invalidArgument("com.nncosim.npu has no operation ",
                                       typeWithinExtension(raw));
            NN_RETURN_IF_ERROR(npu_extension::validateLut8(model, g, op));
        }
        return okStatus();
    };
    NN_RETURN_IF_ERROR(checkSubgraph(model.main));
    for (const Subgraph& g : model.referenced) NN_RETURN_IF_ERROR(checkSubgraph(g));
    return okStatus();
}

Status validateFullModel(const Model& model) {
    auto level = validateModel(model);
    if (!level) return level.status();
    return validateExtensionUse(model);
}

// What a prepared model needs of its model to validate requests and buffer roles: the main
// graph's inputs and outputs. A model prepared from cache has only this.
Model ioSignature(const Model& model) {
    Model s;
    for (const auto* list : {&model.main.inputIndexes, &model.main.outputIndexes}) {
        for (uint32_t k : *list) {
            Operand o = model.main.operands[k];
            o.location = {};
            (list == &model.main.inputIndexes ? s.main.inputIndexes : s.main.outputIndexes)
                .push_back(static_cast<uint32_t>(s.main.operands.size()));
            s.main.operands.push_back(std::move(o));
        }
    }
    s.extensionNameToPrefix = model.extensionNameToPrefix;
    return s;
}

void putU32(std::vector<uint8_t>& out, uint32_t v) {
    for (int i = 0; i < 4; ++i) out.push_back(static_cast<uint8_t>(v >> (8 * i)));
}

// Model cache payload: the I/O signature, then the program.
std::vector<uint8_t> serializeCachePayload(const Model& signature, const Program& program) {
    std::vector<uint8_t> out;
    putU32(out, static_cast<uint32_t>(signature.main.inputIndexes.size()));
    putU32(out, static_cast<uint32_t>(signature.main.outputIndexes.size()));
    for (const Operand& o : signature.main.operands) {
        putU32(out, static_cast<uint32_t>(o.type));
        uint32_t scale;
        std::memcpy(&scale, &o.scale, 4);
        putU32(out, scale);
        putU32(out, static_cast<uint32_t>(o.zeroPoint));
        putU32(out, static_cast<uint32_t>(o.dimensions.size()));
        for (uint32_t d : o.dimensions) putU32(out, d);
    }
    const auto p = serializeProgram(program);
    out.insert(out.end(), p.begin(), p.end());
    return out;
}

Result<std::pair<Model, Program>> deserializeCachePayload(const std::vector<uint8_t>& bytes,
                                                          std::vector<uint8_t> constants) {
    auto bad = [] {
        return fail(ErrorStatus::GENERAL_FAILURE, "cache: malformed model cache payload");
    };
    size_t pos = 0;
    auto u32 = [&](uint32_t* v) {
        if (bytes.size() - pos < 4) return false;
        *v = 0;
        for (int i = 0; i < 4; ++i) *v |= uint32_t{bytes[pos++]} << (8 * i);
        return true;
    };
    uint32_t nIn, nOut;
    if (!u32(&nIn) || !u32(&nOut) || nIn > 4096 || nOut > 4096) return bad();
    Model s;
    for (uint32_t i = 0; i < nIn + nOut; ++i) {
        Operand o;
        uint32_t type, scale, zero, rank;
        if (!u32(&type) || !u32(&scale) || !u32(&zero) || !u32(&rank) || rank > 64) return bad();
        o.type = static_cast<OperandType>(type);
        std::memcpy(&o.scale, &scale, 4);
        o.zeroPoint = static_cast<int32_t>(zero);
        o.dimensions.resize(rank);
        for (auto& d : o.dimensions) {
            if (!u32(&d)) return bad();
        }
        o.lifetime = i < nIn ? OperandLifeTime::SUBGRAPH_INPUT : OperandLifeTime::SUBGRAPH_OUTPUT;
        (i < nIn ? s.main.inputIndexes : s.main.outputIndexes).push_back(i);
        s.main.operands.push_back(std::move(o));
    }
    auto program = deserializeProgram(
        std::vector<uint8_t>(bytes.begin() + static_cast<long>(pos), bytes.end()),
        std::move(constants));
    if (!program) return program.status();
    if (program->inputs.size() != nIn || program->outputs.size() != nOut) return bad();
    return std::make_pair(std::move(s), std::move(*program));
}

// Measured with driver/bench/Calibrate.cpp (nncosim_calibrate) on MobileNet-v1 1.0 224, the
// reference workload of Android's driver guide, written by `nncosim zoo mobilenet_v1 [--quant8]`:
// quant8, 30 of 31 operations (all but SOFTMAX) took 3,613,248 cycles = 3.61 ms at 1 GHz on the
// Verilated NPU against 0.2265 s for the whole model on the golden on the CPU: execTime 0.016.
// The float model has no operation the NPU executes, so float, relaxed float, IF and WHILE keep
// "no information" (the maximum), as does powerUsage (the platform has no power model).
constexpr float kQuant8ExecTime = 0.016f;

Capabilities makeCapabilities() {
    Capabilities caps;
    const PerformanceInfo unknown;
    const PerformanceInfo quant8{kQuant8ExecTime, PerformanceInfo{}.powerUsage};
    caps.relaxedFloat32toFloat16PerformanceScalar = unknown;
    caps.relaxedFloat32toFloat16PerformanceTensor = unknown;
    caps.ifPerformance = unknown;
    caps.whilePerformance = unknown;
    for (int t = 0; t <= static_cast<int>(OperandType::TENSOR_QUANT8_ASYMM_SIGNED); ++t) {
        const auto type = static_cast<OperandType>(t);
        // The types of the operations the NPU executes: 8-bit tensors, int32 biases, scalars.
        const bool npu = type == OperandType::TENSOR_QUANT8_ASYMM ||
                         type == OperandType::TENSOR_QUANT8_ASYMM_SIGNED ||
                         type == OperandType::TENSOR_QUANT8_SYMM_PER_CHANNEL ||
                         type == OperandType::TENSOR_INT32 || type == OperandType::INT32 ||
                         type == OperandType::BOOL;
        caps.operandPerformance.push_back({type, npu ? quant8 : unknown});
    }
    return caps;
}

// ---------------------------------------------------------------------------------------------

class DeviceCore {
  public:
    DeviceCore(std::shared_ptr<HardwareAccess> hardware, const DeviceOptions& options)
        : name(options.name),
          key(options.cacheKey ? *options.cacheKey : randomCacheKey()),
          capabilities(makeCapabilities()),
          extensions{npu_extension::description()},
          runtime(std::move(hardware)),
          queue(options.agingQuantum) {}

    // Runs one job on the NPU in priority order; blocks until it ends.
    JobOutcome runJob(Priority priority, const Program& program,
                      const std::vector<TensorData>& inputs, const OptionalTimePoint& deadline) {
        std::promise<JobOutcome> done;
        auto future = done.get_future();
        queue.submit(priority, [&](bool cancelled) {
            JobOutcome outcome;
            if (cancelled) {
                outcome.status =
                    fail(ErrorStatus::DEVICE_UNAVAILABLE, "the device is shutting down");
            } else if (deadlinePassed(deadline)) {
                outcome.status = fail(ErrorStatus::MISSED_DEADLINE_TRANSIENT,
                                      "the deadline passed while queued");
            } else {
                outcome = runtime.run(program, inputs, deadline);
            }
            done.set_value(std::move(outcome));
        });
        return future.get();
    }

    const std::string name;
    const std::string version = "nncosim-npu 0.1 (NPU1 " + std::to_string(npu::kArrayRows) + "x" +
                                std::to_string(npu::kArrayCols) + ")";
    const CacheKey key;
    const Capabilities capabilities;
    const std::vector<Extension> extensions;
    BufferTracker buffers;
    Runtime runtime;
    DeviceQueue queue;  // last: destroyed first, so no job outlives the runtime
};

// A request whose driver-managed buffers are replaced by their storage, and those buffers.
struct ResolvedRequest {
    Request request;
    std::vector<std::pair<uint32_t, std::shared_ptr<ManagedBuffer>>> outputBuffers;  // output index
};

class FencedCallback : public IFencedExecutionCallback {
  public:
    FencedExecutionInfo getExecutionInfo() const override {
        std::unique_lock<std::mutex> lock(mMutex);
        mCondition.wait(lock, [this] { return mDone; });
        return mInfo;
    }
    void finish(FencedExecutionInfo info) {
        {
            std::lock_guard<std::mutex> lock(mMutex);
            mInfo = std::move(info);
            mDone = true;
        }
        mCondition.notify_all();
    }

  private:
    mutable std::mutex mMutex;
    mutable std::condition_variable mCondition;
    bool mDone = false;
    FencedExecutionInfo mInfo;
};

class PreparedModel : public IPreparedModel, public std::enable_shared_from_this<PreparedModel> {
  public:
    PreparedModel(std::shared_ptr<DeviceCore> core, Model model, bool fullModel, Priority priority,
                  std::shared_ptr<const Program> program)
        : mCore(std::move(core)),
          mModel(std::move(model)),
          mFullModel(fullModel),
          mPriority(priority),
          mProgram(std::move(program)) {}

    const Model& model() const { return mModel; }
    const DeviceCore* core() const { return mCore.get(); }

    ExecutionResult execute(const Request& request, MeasureTiming measure,
                            const OptionalTimePoint& deadline,
                            const OptionalDuration& loopTimeout) const override {
        const auto start = Clock::now();
        auto resolved = resolve(request, measure, deadline, loopTimeout);
        if (!resolved) return ExecutionResult::failure(resolved.status());
        return run(*resolved, measure, deadline, start);
    }

    Status executeAsynchronously(const Request& request, MeasureTiming measure,
                                 const OptionalTimePoint& deadline,
                                 const OptionalDuration& loopTimeout,
                                 std::shared_ptr<IExecutionCallback> callback) const override {
        if (!callback) return invalidArgument("executeAsynchronously: null callback");
        const auto start = Clock::now();
        auto resolved = resolve(request, measure, deadline, loopTimeout);
        if (!resolved) {
            callback->notify(ExecutionResult::failure(resolved.status()));
            return resolved.status();
        }
        std::thread([self = shared_from_this(), r = std::move(*resolved), measure, deadline, start,
                     callback = std::move(callback)] {
            callback->notify(self->run(r, measure, deadline, start));
        }).detach();
        return okStatus();
    }

    Result<FencedExecution> executeFenced(
        const Request& request, const std::vector<SyncFence>& waitFor, MeasureTiming measure,
        const OptionalTimePoint& deadline, const OptionalDuration& loopTimeout,
        const OptionalDuration& timeoutAfterFence) const override {
        return launchFenced(request, waitFor, measure, deadline, loopTimeout, timeoutAfterFence,
                            nullptr);
    }

    // executeFenced, calling `onDone` (if any) when the execution has ended.
    Result<FencedExecution> launchFenced(const Request& request,
                                         const std::vector<SyncFence>& waitFor,
                                         MeasureTiming measure, const OptionalTimePoint& deadline,
                                         const OptionalDuration& loopTimeout,
                                         const OptionalDuration& timeoutAfterFence,
                                         std::function<void()> onDone) const {
        const auto start = Clock::now();
        NN_RETURN_IF_ERROR(validateDuration(timeoutAfterFence));
        for (size_t i = 0; i < waitFor.size(); ++i) {
            if (waitFor[i].empty())
                return invalidArgument("executeFenced: waitFor fence ", i, " is empty");
        }
        auto resolved = resolve(request, measure, deadline, loopTimeout);
        if (!resolved) return resolved.status();
        for (size_t i = 0; i < resolved->request.outputs.size(); ++i) {
            const auto& arg = resolved->request.outputs[i];
            if (arg.lifetime == Request::Argument::LifeTime::NO_VALUE) continue;
            const Operand& o = mModel.main.operands[mModel.main.outputIndexes[i]];
            auto dims = combineDimensions(o.dimensions, arg.dimensions);
            Operand probe = o;
            probe.dimensions = dims ? *dims : std::vector<uint32_t>{};
            if (hasUnknownDimensions(probe))
                return invalidArgument("executeFenced: output ", i, " has an unknown shape");
        }
        auto fence = createSyncFence();
        if (!fence) return fence.status();
        auto callback = std::make_shared<FencedCallback>();
        std::thread([self = shared_from_this(), r = std::move(*resolved), waitFor, measure,
                     deadline, timeoutAfterFence, start, signaler = std::move(fence->second),
                     callback, onDone = std::move(onDone)]() mutable {
            FencedExecutionInfo info;
            for (const SyncFence& f : waitFor) {
                OptionalDuration left;
                if (deadline)
                    left = std::max(Duration::zero(),
                                    std::chrono::duration_cast<Duration>(*deadline - Clock::now()));
                const auto state = f.wait(left);
                if (state == SyncFence::State::ACTIVE) {
                    info.status = fail(ErrorStatus::MISSED_DEADLINE_TRANSIENT,
                                       "the deadline passed waiting for fences");
                } else if (state == SyncFence::State::ERROR) {
                    info.status =
                        fail(ErrorStatus::GENERAL_FAILURE, "a waitFor fence signaled an error");
                }
                if (!info.status.ok()) break;
            }
            if (info.status.ok()) {
                const auto fenced = Clock::now();
                OptionalTimePoint limit = deadline;
                if (timeoutAfterFence) limit = earlier(limit, fenced + *timeoutAfterFence);
                ExecutionResult result = self->run(r, measure, limit, fenced);
                info.status = result.status;
                if (result.ok() && measure == MeasureTiming::YES) {
                    info.timingFenced = result.timing;
                    info.timingLaunched = {
                        result.timing.timeOnDevice,
                        std::chrono::duration_cast<Duration>(Clock::now() - start)};
                }
            }
            const bool ok = info.status.ok();
            callback->finish(std::move(info));
            signaler.signal(ok);
            if (onDone) onDone();
        }).detach();
        return FencedExecution{fence->first, callback};
    }

    Result<SharedExecution> createReusableExecution(
        const Request& request, MeasureTiming measure,
        const OptionalDuration& loopTimeout) const override;

    Result<SharedBurst> configureExecutionBurst() const override;

    // Validates everything about an execution and replaces buffer tokens by their storage.
    Result<ResolvedRequest> resolve(const Request& request, MeasureTiming measure,
                                    const OptionalTimePoint& deadline,
                                    const OptionalDuration& loopTimeout) const {
        NN_RETURN_IF_ERROR(validateMeasureTiming(measure));
        NN_RETURN_IF_ERROR(validateDeadline(deadline));
        NN_RETURN_IF_ERROR(validateLoopTimeout(loopTimeout));
        NN_RETURN_IF_ERROR(validateRequest(request, mModel));
        ResolvedRequest r{request, {}};
        for (uint32_t p = 0; p < request.pools.size(); ++p) {
            const auto* token = std::get_if<MemoryDomainToken>(&request.pools[p]);
            if (!token) continue;
            auto buffer = mCore->buffers.get(*token);
            if (!buffer)
                return invalidArgument("request pool ", p, ": token ", *token,
                                       " is not a buffer of this device");
            NN_RETURN_IF_ERROR(buffer->validateRequest(p, request, this));
            r.request.pools[p] = buffer->storage();
            const auto size = static_cast<uint32_t>(buffer->size());
            for (auto& arg : r.request.inputs) {
                if (arg.lifetime != Request::Argument::LifeTime::POOL ||
                    arg.location.poolIndex != p)
                    continue;
                arg.location.length = size;
                if (arg.dimensions.empty()) arg.dimensions = buffer->dimensions();
            }
            for (uint32_t i = 0; i < r.request.outputs.size(); ++i) {
                auto& arg = r.request.outputs[i];
                if (arg.lifetime != Request::Argument::LifeTime::POOL ||
                    arg.location.poolIndex != p)
                    continue;
                arg.location.length = size;
                if (arg.dimensions.empty()) arg.dimensions = buffer->operand().dimensions;
                r.outputBuffers.emplace_back(i, buffer);
            }
        }
        return r;
    }

    // Runs a resolved request: compile for its shapes if needed, then the device.
    ExecutionResult run(const ResolvedRequest& r, MeasureTiming measure,
                        const OptionalTimePoint& deadline, TimePoint start) const {
        ExecutionResult result = runOnDevice(r, deadline);
        for (const auto& [index, buffer] : r.outputBuffers) {
            if (result.ok())
                buffer->setInitialized(result.outputShapes[index].dimensions);
            else
                buffer->setUninitialized();
        }
        if (result.ok() && measure == MeasureTiming::YES) {
            result.timing.timeInDriver = std::chrono::duration_cast<Duration>(Clock::now() - start);
        } else {
            result.timing = {};
        }
        return result;
    }

  private:
    ExecutionResult runOnDevice(const ResolvedRequest& r, const OptionalTimePoint& deadline) const {
        if (deadlinePassed(deadline))
            return ExecutionResult::failure(
                fail(ErrorStatus::MISSED_DEADLINE_PERSISTENT, "the deadline has passed"));
        auto inputs = readRequestInputs(mModel, r.request);
        if (!inputs) return ExecutionResult::failure(inputs.status());
        Shapes shapes;
        for (const auto& t : *inputs) shapes.push_back(t.dimensions);
        auto program = programFor(shapes, *inputs);
        if (!program) return ExecutionResult::failure(program.status());
        // Outputs too small for their shapes: no need to run the device.
        ExecutionResult result;
        bool sufficient = true;
        for (size_t i = 0; i < (*program)->outputs.size(); ++i) {
            const ProgramIo& io = (*program)->outputs[i];
            const auto& arg = r.request.outputs[i];
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
        JobOutcome outcome = mCore->runJob(mPriority, **program, *inputs, deadline);
        if (!outcome.status.ok()) return ExecutionResult::failure(outcome.status);
        result.status =
            writeRequestOutputs(mModel, r.request, outcome.outputs, &result.outputShapes);
        if (!result.ok()) return ExecutionResult::failure(result.status);
        result.timing.timeOnDevice = mCore->runtime.deviceTime(outcome.cycles);
        return result;
    }

    // The program for these input shapes (and values of compile-time inputs): the one compiled
    // at preparation, or a variant compiled now and kept.
    Result<std::shared_ptr<const Program>> programFor(const Shapes& shapes,
                                                      const std::vector<TensorData>& inputs) const {
        if (mProgram) {
            bool same = shapes.size() == mProgram->inputs.size();
            for (size_t i = 0; same && i < shapes.size(); ++i)
                same = shapes[i] == mProgram->inputs[i].dimensions;
            if (same) return mProgram;
        }
        if (!mFullModel)
            return fail(
                ErrorStatus::GENERAL_FAILURE,
                "a model prepared from cache runs only the input shapes it was compiled for");
        VariantKey key{shapes, {}};
        InputValues values;
        for (uint32_t pos : mCompileTimeInputs) {
            key.second.push_back(inputs[pos].bytes);
            values[mModel.main.inputIndexes[pos]] = inputs[pos].bytes;
        }
        std::lock_guard<std::mutex> lock(mMutex);
        if (auto it = mVariants.find(key); it != mVariants.end()) return it->second;
        auto program = compileModel(mModel, shapes, values);
        if (!program) return program.status();
        auto shared = std::make_shared<const Program>(std::move(*program));
        if (mVariants.size() >= kMaxVariants) mVariants.clear();
        mVariants[std::move(key)] = shared;
        return shared;
    }

    const std::shared_ptr<DeviceCore> mCore;
    const Model mModel;
    const bool mFullModel;
    const Priority mPriority;
    const std::shared_ptr<const Program> mProgram;  // for the model's own input shapes, if known
    const std::vector<uint32_t> mCompileTimeInputs = compileTimeInputs(mModel);
    // Programs compiled at execution time, by input shapes and compile-time input values.
    using VariantKey = std::pair<Shapes, std::vector<std::vector<uint8_t>>>;
    static constexpr size_t kMaxVariants = 16;
    mutable std::mutex mMutex;
    mutable std::map<VariantKey, std::shared_ptr<const Program>> mVariants;
};

// Marks an object busy for the duration of one computation.
class BusyGuard {
  public:
    explicit BusyGuard(std::atomic<bool>& busy) : mBusy(busy), mAcquired(!busy.exchange(true)) {}
    ~BusyGuard() {
        if (mAcquired) mBusy = false;
    }
    bool acquired() const { return mAcquired; }

  private:
    std::atomic<bool>& mBusy;
    bool mAcquired;
};

class Execution : public IExecution {
  public:
    Execution(std::shared_ptr<const PreparedModel> model, Request request, MeasureTiming measure,
              OptionalDuration loopTimeout)
        : mModel(std::move(model)),
          mRequest(std::move(request)),
          mMeasure(measure),
          mLoopTimeout(loopTimeout) {}

    ExecutionResult compute(const OptionalTimePoint& deadline) const override {
        BusyGuard guard(*mBusy);
        if (!guard.acquired())
            return ExecutionResult::failure(
                invalidArgument("compute: another computation is running on this execution"));
        return mModel->execute(mRequest, mMeasure, deadline, mLoopTimeout);
    }

    Result<FencedExecution> computeFenced(
        const std::vector<SyncFence>& waitFor, const OptionalTimePoint& deadline,
        const OptionalDuration& timeoutAfterFence) const override {
        if (mBusy->exchange(true))
            return invalidArgument(
                "computeFenced: another computation is running on this execution");
        auto result = mModel->launchFenced(mRequest, waitFor, mMeasure, deadline, mLoopTimeout,
                                           timeoutAfterFence, [busy = mBusy] { *busy = false; });
        if (!result) *mBusy = false;
        return result;
    }

  private:
    const std::shared_ptr<const PreparedModel> mModel;
    const Request mRequest;
    const MeasureTiming mMeasure;
    const OptionalDuration mLoopTimeout;
    const std::shared_ptr<std::atomic<bool>> mBusy = std::make_shared<std::atomic<bool>>(false);
};

class Burst : public IBurst {
  public:
    explicit Burst(std::shared_ptr<const PreparedModel> model) : mModel(std::move(model)) {}

    OptionalCacheHold cacheMemory(const SharedMemory& memory) const override {
        if (!memory) return nullptr;
        // Shared memory stays mapped for as long as the hold (or a request) references it.
        return std::make_shared<const SharedMemory>(memory);
    }

    ExecutionResult execute(const Request& request, MeasureTiming measure,
                            const OptionalTimePoint& deadline,
                            const OptionalDuration& loopTimeout) const override {
        BusyGuard guard(mBusy);
        if (!guard.acquired())
            return ExecutionResult::failure(
                invalidArgument("burst: another execution is running on this burst"));
        return mModel->execute(request, measure, deadline, loopTimeout);
    }

    Result<SharedExecution> createReusableExecution(
        const Request& request, MeasureTiming measure,
        const OptionalDuration& loopTimeout) const override {
        return mModel->createReusableExecution(request, measure, loopTimeout);
    }

  private:
    const std::shared_ptr<const PreparedModel> mModel;
    mutable std::atomic<bool> mBusy{false};
};

Result<SharedExecution> PreparedModel::createReusableExecution(
    const Request& request, MeasureTiming measure, const OptionalDuration& loopTimeout) const {
    auto resolved = resolve(request, measure, {}, loopTimeout);
    if (!resolved) return resolved.status();
    return SharedExecution(
        std::make_shared<Execution>(shared_from_this(), request, measure, loopTimeout));
}

Result<SharedBurst> PreparedModel::configureExecutionBurst() const {
    return SharedBurst(std::make_shared<Burst>(shared_from_this()));
}

class Buffer : public IBuffer {
  public:
    Buffer(std::shared_ptr<DeviceCore> core, std::shared_ptr<ManagedBuffer> buffer,
           MemoryDomainToken token)
        : mCore(std::move(core)), mBuffer(std::move(buffer)), mToken(token) {}
    ~Buffer() override { mCore->buffers.remove(mToken); }

    MemoryDomainToken getToken() const override { return mToken; }

    Status copyTo(const SharedMemory& dst) const override {
        if (!dst) return invalidArgument("copyTo: null memory");
        if (!dst->writable()) return invalidArgument("copyTo: the destination is not writable");
        NN_RETURN_IF_ERROR(mBuffer->validateCopyTo(dst->size()));
        std::memcpy(dst->data(), mBuffer->storage()->data(), mBuffer->size());
        return okStatus();
    }

    Status copyFrom(const SharedMemory& src,
                    const std::vector<uint32_t>& dimensions) const override {
        Status st = src ? mBuffer->validateCopyFrom(dimensions, src->size())
                        : invalidArgument("copyFrom: null memory");
        if (!st.ok()) {
            mBuffer->setUninitialized();
            return st;
        }
        std::memcpy(mBuffer->storage()->data(), src->data(), mBuffer->size());
        mBuffer->setInitialized(dimensions.empty() ? mBuffer->operand().dimensions : dimensions);
        return okStatus();
    }

  private:
    const std::shared_ptr<DeviceCore> mCore;
    const std::shared_ptr<ManagedBuffer> mBuffer;
    const MemoryDomainToken mToken;
};

class Device : public IDevice {
  public:
    explicit Device(std::shared_ptr<DeviceCore> core) : mCore(std::move(core)) {}

    const std::string& getName() const override { return mCore->name; }
    const std::string& getVersionString() const override { return mCore->version; }
    FeatureLevel getFeatureLevel() const override { return FeatureLevel::kAidlV2; }
    DeviceType getType() const override { return DeviceType::ACCELERATOR; }
    const std::vector<Extension>& getSupportedExtensions() const override {
        return mCore->extensions;
    }
    const Capabilities& getCapabilities() const override { return mCore->capabilities; }
    std::pair<uint32_t, uint32_t> getNumberOfCacheFilesNeeded() const override {
        return {kNumModelCacheFiles, kNumDataCacheFiles};
    }
    Status wait() const override { return okStatus(); }  // a fault is recovered within its job

    Result<std::vector<bool>> getSupportedOperations(const Model& model) const override {
        NN_RETURN_IF_ERROR(validateFullModel(model));
        std::vector<bool> supported;
        for (uint32_t i = 0; i < model.main.operations.size(); ++i)
            supported.push_back(checkOperationSupported(model, i).ok());
        return supported;
    }

    Status prepareModel(const Model& model, ExecutionPreference preference, Priority priority,
                        const OptionalTimePoint& deadline,
                        const std::vector<SharedHandle>& modelCache,
                        const std::vector<SharedHandle>& dataCache, const CacheToken& token,
                        std::shared_ptr<IPreparedModelCallback> callback) const override {
        if (!callback) return invalidArgument("prepareModel: null callback");
        Status st = validateFullModel(model);
        if (st.ok()) st = validateExecutionPreference(preference);
        if (st.ok()) st = validatePriority(priority);
        if (st.ok()) st = validateDeadline(deadline);
        st = rejectedPreparation(st, "prepareModel", deadline, *callback);
        if (!st.ok()) return st;
        // Caching is optional: only exactly the announced numbers of usable files are used.
        std::vector<UniqueFd> files;
        if (modelCache.size() == kNumModelCacheFiles && dataCache.size() == kNumDataCacheFiles) {
            for (const auto* list : {&modelCache, &dataCache}) {
                for (const auto& handle : *list) {
                    if (!handle) continue;
                    if (auto fd = dupFd(handle->get()); fd) files.push_back(std::move(*fd));
                }
            }
            if (files.size() != 2) files.clear();
        }
        auto shared = std::make_shared<std::vector<UniqueFd>>(std::move(files));
        std::thread([core = mCore, model, priority, deadline, shared, token, callback] {
            auto prepared = prepare(core, model, priority);
            if (!prepared) {
                callback->notify(prepared.status(), nullptr);
                return;
            }
            if (missedDeadline(deadline, *callback)) return;
            if (!shared->empty() && prepared->second) {
                const auto& program = *prepared->second;
                // A failure to save never fails the preparation.
                saveToCache(core->key, token,
                            {serializeCachePayload(ioSignature(model), program), program.constants},
                            (*shared)[0].get(), (*shared)[1].get());
            }
            callback->notify(okStatus(), prepared->first);
        }).detach();
        return okStatus();
    }

    Status prepareModelFromCache(const OptionalTimePoint& deadline,
                                 const std::vector<SharedHandle>& modelCache,
                                 const std::vector<SharedHandle>& dataCache,
                                 const CacheToken& token,
                                 std::shared_ptr<IPreparedModelCallback> callback) const override {
        if (!callback) return invalidArgument("prepareModelFromCache: null callback");
        Status st = validateDeadline(deadline);
        if (st.ok() &&
            (modelCache.size() != kNumModelCacheFiles || dataCache.size() != kNumDataCacheFiles))
            st = invalidArgument("prepareModelFromCache: expected ", kNumModelCacheFiles,
                                 " model and ", kNumDataCacheFiles, " data cache files, got ",
                                 modelCache.size(), " and ", dataCache.size());
        std::vector<UniqueFd> files;
        for (const auto* list : {&modelCache, &dataCache}) {
            for (const auto& handle : *list) {
                if (!st.ok()) break;
                auto fd = handle ? dupFd(handle->get())
                                 : Result<UniqueFd>(invalidArgument("null cache handle"));
                if (!fd)
                    st = fd.status();
                else
                    files.push_back(std::move(*fd));
            }
        }
        st = rejectedPreparation(st, "prepareModelFromCache", deadline, *callback);
        if (!st.ok()) return st;
        auto shared = std::make_shared<std::vector<UniqueFd>>(std::move(files));
        std::thread([core = mCore, deadline, shared, token, callback] {
            auto contents = loadFromCache(core->key, token, (*shared)[0].get(), (*shared)[1].get());
            if (!contents) {
                callback->notify(contents.status(), nullptr);
                return;
            }
            auto payload =
                deserializeCachePayload(contents->program, std::move(contents->constants));
            if (!payload) {
                callback->notify(payload.status(), nullptr);
                return;
            }
            if (missedDeadline(deadline, *callback)) return;
            auto program = std::make_shared<const Program>(std::move(payload->second));
            callback->notify(okStatus(),
                             std::make_shared<PreparedModel>(core, std::move(payload->first), false,
                                                             kDefaultPriority, std::move(program)));
        }).detach();
        return okStatus();
    }

    Result<SharedBuffer> allocate(const BufferDesc& desc,
                                  const std::vector<SharedPreparedModel>& preparedModels,
                                  const std::vector<BufferRole>& inputRoles,
                                  const std::vector<BufferRole>& outputRoles) const override {
        if (preparedModels.empty()) return invalidArgument("allocate: no prepared model");
        if (inputRoles.empty() && outputRoles.empty()) return invalidArgument("allocate: no role");
        std::vector<const PreparedModel*> models;
        for (size_t i = 0; i < preparedModels.size(); ++i) {
            const auto* m = dynamic_cast<const PreparedModel*>(preparedModels[i].get());
            if (!m || m->core() != mCore.get())
                return invalidArgument("allocate: prepared model ", i,
                                       " is not a model of this device");
            models.push_back(m);
        }
        std::set<BufferUse> roles;
        std::vector<Operand> operands;
        for (const auto* list : {&inputRoles, &outputRoles}) {
            const bool isOutput = list == &outputRoles;
            for (const BufferRole& role : *list) {
                NN_RETURN_IF_ERROR(validateBufferRole(role));
                if (role.modelIndex >= models.size())
                    return invalidArgument("allocate: role model index ", role.modelIndex,
                                           " out of range");
                const Model& model = models[role.modelIndex]->model();
                const auto& indexes = isOutput ? model.main.outputIndexes : model.main.inputIndexes;
                if (role.ioIndex >= indexes.size())
                    return invalidArgument("allocate: role io index ", role.ioIndex,
                                           " out of range");
                if (!roles.insert({models[role.modelIndex], isOutput, role.ioIndex}).second)
                    return invalidArgument("allocate: role given twice");
                operands.push_back(model.main.operands[indexes[role.ioIndex]]);
            }
        }
        const Operand& first = operands.front();
        std::vector<uint32_t> dims = desc.dimensions;
        for (const Operand& o : operands) {
            if (o.type != first.type || o.scale != first.scale || o.zeroPoint != first.zeroPoint ||
                (!isExtension(o.type) && !sameExtraParams(o.extraParams, first.extraParams)))
                return invalidArgument(
                    "allocate: the roles' operands differ in type or quantization");
            auto combined = combineDimensions(dims, o.dimensions);
            if (!combined) return invalidArgument("allocate: ", combined.status().message);
            dims = *combined;
        }
        Operand operand = first;
        operand.dimensions = dims;
        if (isScalarType(operand.type) && !dims.empty())
            return invalidArgument("allocate: dimensions for a scalar");
        if (isExtension(operand.type) || hasUnknownDimensions(operand))
            return invalidArgument("allocate: the buffer's shape ", toString(dims),
                                   " is not fully specified (unsupported by this driver)");
        const uint64_t size = byteSize(operand.type, dims);
        if (size == 0 || size > (uint64_t{1} << 31))
            return invalidArgument("allocate: buffer of ", size, " bytes");
        auto storage = Memory::create(size, "nncosim-buffer");
        if (!storage) return storage.status();
        auto buffer =
            std::make_shared<ManagedBuffer>(*storage, std::move(roles), std::move(operand));
        const MemoryDomainToken token = mCore->buffers.add(buffer);
        return SharedBuffer(std::make_shared<Buffer>(mCore, std::move(buffer), token));
    }

  private:
    // Compiles `model` (when its input shapes are known) into a prepared model.
    static Result<std::pair<SharedPreparedModel, std::shared_ptr<const Program>>> prepare(
        const std::shared_ptr<DeviceCore>& core, const Model& model, Priority priority) {
        for (uint32_t i = 0; i < model.main.operations.size(); ++i) {
            Status st = checkOperationSupported(model, i);
            if (!st.ok())
                return fail(ErrorStatus::GENERAL_FAILURE, "operation ", i,
                            " is not supported by the NPU: ", st.message);
        }
        bool inputsKnown = compileTimeInputs(model).empty();
        for (uint32_t k : model.main.inputIndexes)
            inputsKnown = inputsKnown && !hasUnknownDimensions(model.main.operands[k]);
        std::shared_ptr<const Program> program;
        if (inputsKnown) {
            auto compiled = compileModel(model, {});
            if (!compiled) return compiled.status();
            program = std::make_shared<const Program>(std::move(*compiled));
        }
        auto prepared = std::make_shared<PreparedModel>(core, model, true, priority, program);
        return std::make_pair(SharedPreparedModel(prepared), program);
    }

    const std::shared_ptr<DeviceCore> mCore;
};

}  // namespace

Result<SharedDevice> makeNpuDevice(std::shared_ptr<HardwareAccess> hardware,
                                   DeviceOptions options) {
    auto core = std::make_shared<DeviceCore>(std::move(hardware), options);
    // The hardware is touched only from the queue's worker thread.
    std::promise<Status> init;
    core->queue.submit(Priority::HIGH, [&](bool) { init.set_value(core->runtime.initialize()); });
    Status st = init.get_future().get();
    if (!st.ok()) return st;
    return SharedDevice(std::make_shared<Device>(std::move(core)));
}

}  // namespace nncosim::driver
