// The NPU backends: the driver alone (`npu`) and the host runtime partitioning between the NPU
// and the golden (`auto`).
#include <cstring>

#include "driver/Callbacks.h"
#include "driver/IBuffer.h"
#include "driver/IBurst.h"
#include "driver/IDevice.h"
#include "driver/IExecution.h"
#include "driver/IPreparedModel.h"
#include "model/RequestIo.h"
#include "model/Validation.h"
#include "testbench/Backend.h"
#include "testbench/runtime/HostRuntime.h"

namespace nncosim {
namespace {

class NpuPreparedModel : public PreparedBackendModel {
  public:
    NpuPreparedModel(driver::SharedDevice device, driver::SharedPreparedModel prepared,
                     const Model& model, ExecutionPath path, RequestMemory memory)
        : mDevice(std::move(device)),
          mPrepared(std::move(prepared)),
          mModel(model),
          mPath(path),
          mMemory(memory) {}

    ExecutionOutcome execute(const Request& request, Duration loopTimeout) override {
        if (mMemory == RequestMemory::SHARED) return run(request, loopTimeout);
        // Device memory: every input and output in a buffer of its own.
        Request onDevice = request;
        std::vector<driver::SharedBuffer> buffers, outputBuffers;  // alive until the end
        for (const bool isOutput : {false, true}) {
            auto& args = isOutput ? onDevice.outputs : onDevice.inputs;
            for (uint32_t i = 0; i < args.size(); ++i) {
                if (args[i].lifetime != Request::Argument::LifeTime::POOL) continue;
                const BufferRole role{0, i, 1.0f};
                auto buffer = mDevice->allocate({}, {mPrepared}, isOutput ? noRoles() : one(role),
                                                isOutput ? one(role) : noRoles());
                if (!buffer) return {buffer.status(), {}};
                if (!isOutput) {
                    auto bytes = bytesOf(request, args[i]);
                    if (!bytes) return {bytes.status(), {}};
                    Status st = (*buffer)->copyFrom(*bytes, args[i].dimensions);
                    if (!st.ok()) return {st, {}};
                } else {
                    outputBuffers.resize(i + 1);
                    outputBuffers[i] = *buffer;
                }
                onDevice.pools.push_back((*buffer)->getToken());
                buffers.push_back(*buffer);
                args[i] = {};
                args[i].location.poolIndex = static_cast<uint32_t>(onDevice.pools.size() - 1);
            }
        }
        ExecutionOutcome out = run(onDevice, loopTimeout);
        for (size_t i = 0; out.status.ok() && i < outputBuffers.size(); ++i) {
            if (!outputBuffers[i]) continue;
            const auto& arg = request.outputs[i];
            auto bytes = Memory::create(arg.location.length);
            if (!bytes) return {bytes.status(), {}};
            out.status = outputBuffers[i]->copyTo(*bytes);
            if (out.status.ok()) out.status = copyInto(request, arg, **bytes);
        }
        return out;
    }

  private:
    static std::vector<BufferRole> noRoles() { return {}; }
    static std::vector<BufferRole> one(BufferRole role) { return {role}; }

    // The bytes of a pool argument in a memory of their own.
    static Result<SharedMemory> bytesOf(const Request& request, const Request::Argument& arg) {
        const auto* pool = std::get_if<SharedMemory>(&request.pools.at(arg.location.poolIndex));
        if (!pool) return invalidArgument("the request's argument is not in shared memory");
        auto bytes = Memory::create(arg.location.length);
        if (!bytes) return bytes.status();
        std::memcpy((*bytes)->data(), (*pool)->data() + arg.location.offset, arg.location.length);
        return *bytes;
    }
    static Status copyInto(const Request& request, const Request::Argument& arg,
                           const Memory& bytes) {
        const auto* pool = std::get_if<SharedMemory>(&request.pools.at(arg.location.poolIndex));
        if (!pool) return invalidArgument("the request's argument is not in shared memory");
        std::memcpy((*pool)->data() + arg.location.offset, bytes.data(), arg.location.length);
        return okStatus();
    }

    // One execution on the configured path.
    ExecutionOutcome run(const Request& request, Duration loopTimeout) {
        driver::ExecutionResult result;
        switch (mPath) {
            case ExecutionPath::SYNC:
                result = mPrepared->execute(request, MeasureTiming::NO, {}, loopTimeout);
                break;
            case ExecutionPath::ASYNC: {
                auto callback = std::make_shared<driver::ExecutionCallback>();
                Status st = mPrepared->executeAsynchronously(request, MeasureTiming::NO, {},
                                                             loopTimeout, callback);
                result = st.ok() ? callback->result() : driver::ExecutionResult::failure(st);
                break;
            }
            case ExecutionPath::FENCED: {
                auto fenced =
                    mPrepared->executeFenced(request, {}, MeasureTiming::NO, {}, loopTimeout, {});
                if (!fenced) return {fenced.status(), {}};
                // Fenced executions report no shapes: the outputs are fully specified.
                ExecutionOutcome out{fenced->callback->getExecutionInfo().status, {}};
                for (size_t i = 0; i < mModel.main.outputIndexes.size(); ++i) {
                    const auto& arg = request.outputs[i].dimensions;
                    out.outputShapes.push_back(
                        {arg.empty() ? mModel.main.operands[mModel.main.outputIndexes[i]].dimensions
                                     : arg,
                         true});
                }
                return out;
            }
            case ExecutionPath::BURST: {
                auto burst = mPrepared->configureExecutionBurst();
                if (!burst) return {burst.status(), {}};
                result = (*burst)->execute(request, MeasureTiming::NO, {}, loopTimeout);
                break;
            }
            case ExecutionPath::REUSABLE: {
                auto execution =
                    mPrepared->createReusableExecution(request, MeasureTiming::NO, loopTimeout);
                if (!execution) return {execution.status(), {}};
                // Computed twice: a reusable execution must give the same result again.
                result = (*execution)->compute({});
                if (result.ok()) result = (*execution)->compute({});
                break;
            }
        }
        return {std::move(result.status), std::move(result.outputShapes)};
    }

    const driver::SharedDevice mDevice;
    const driver::SharedPreparedModel mPrepared;
    const Model mModel;
    const ExecutionPath mPath;
    const RequestMemory mMemory;
};

class NpuBackend : public Backend {
  public:
    NpuBackend(ExecutionPath path, RequestMemory memory, ExecutionPreference preference)
        : mPath(path), mMemory(memory), mPreference(preference) {}

    std::string name() const override {
        if (mPath == ExecutionPath::SYNC && mMemory == RequestMemory::SHARED) return "npu";
        return std::string("npu (") + nameOf(mPath) + ", " + nameOf(mMemory) + " memory)";
    }
    bool reportsOutputShapes() const override {
        return mPath != ExecutionPath::FENCED && mMemory == RequestMemory::SHARED;
    }
    bool writesRequestOutputs() const override { return mMemory == RequestMemory::SHARED; }

    Result<bool> supportsModel(const Model& model) override {
        auto npu = openNpu();
        if (!npu) return npu.status();
        auto supported = (*npu)->device->getSupportedOperations(model);
        if (!supported) return supported.status();
        for (bool s : *supported) {
            if (!s) return false;
        }
        return true;
    }

    Result<std::unique_ptr<PreparedBackendModel>> prepare(const Model& model) override {
        auto npu = openNpu();
        if (!npu) return npu.status();
        auto prepared = driver::prepareModelBlocking(*(*npu)->device, model, mPreference);
        if (!prepared) return prepared.status();
        return std::unique_ptr<PreparedBackendModel>(
            new NpuPreparedModel((*npu)->device, *prepared, model, mPath, mMemory));
    }

  private:
    const ExecutionPath mPath;
    const RequestMemory mMemory;
    const ExecutionPreference mPreference;
};

class AutoPreparedModel : public PreparedBackendModel {
  public:
    explicit AutoPreparedModel(std::unique_ptr<HostRuntime> runtime)
        : mRuntime(std::move(runtime)) {}

    ExecutionOutcome execute(const Request& request, Duration loopTimeout) override {
        const Model& model = mRuntime->model();
        ExecutionOutcome out;
        out.status = validateRequest(request, model);
        if (!out.status.ok()) return out;
        auto inputs = readRequestInputs(model, request);
        if (!inputs) return {inputs.status(), {}};
        auto outputs = mRuntime->execute(*inputs, nullptr, loopTimeout);
        if (!outputs) return {outputs.status(), {}};
        out.status = writeRequestOutputs(model, request, *outputs, &out.outputShapes);
        return out;
    }

  private:
    const std::unique_ptr<HostRuntime> mRuntime;
};

class AutoBackend : public Backend {
  public:
    explicit AutoBackend(ExecutionPreference preference) : mPreference(preference) {}

    std::string name() const override { return "auto"; }

    Result<bool> supportsModel(const Model& model) override {
        auto level = validateModel(model);
        if (!level) return level.status();
        return true;
    }

    Result<std::unique_ptr<PreparedBackendModel>> prepare(const Model& model) override {
        RuntimeOptions options;
        options.preference = mPreference;
        auto runtime = HostRuntime::create(model, options);
        if (!runtime) return runtime.status();
        return std::unique_ptr<PreparedBackendModel>(new AutoPreparedModel(std::move(*runtime)));
    }

  private:
    const ExecutionPreference mPreference;
};

}  // namespace

const char* nameOf(ExecutionPath path) {
    switch (path) {
        case ExecutionPath::SYNC:
            return "sync";
        case ExecutionPath::ASYNC:
            return "async";
        case ExecutionPath::FENCED:
            return "fenced";
        case ExecutionPath::BURST:
            return "burst";
        case ExecutionPath::REUSABLE:
            return "reusable";
    }
    return "?";
}

const char* nameOf(RequestMemory memory) {
    return memory == RequestMemory::SHARED ? "shared" : "device";
}

std::unique_ptr<Backend> makeNpuBackend(ExecutionPath path, RequestMemory memory,
                                        ExecutionPreference preference) {
    return std::make_unique<NpuBackend>(path, memory, preference);
}

std::unique_ptr<Backend> makeAutoBackend(ExecutionPreference preference) {
    return std::make_unique<AutoBackend>(preference);
}

}  // namespace nncosim
