#include "driver/NpuDevice.h"

#include <cstring>
#include <future>
#include <iostream>
#include <optional>
#include <set>
#include <thread>

#include "driver/AsyncWork.h"
#include "driver/BufferTracker.h"
#include "driver/Compiler.h"
#include "driver/DeviceCore.h"
#include "driver/NpuBuffer.h"
#include "driver/NpuPreparedModel.h"
#include "model/NpuExtension.h"
#include "model/Validation.h"

// IDevice on the NPU. Its prepared models, executions, bursts and buffers are in
// NpuPreparedModel, NpuExecution, NpuBurst and NpuBuffer, the state they share in DeviceCore.

namespace nncosim::driver {
namespace {

using detail::deadlinePassed;
using detail::DeviceCore;
using detail::NpuBuffer;
using detail::NpuPreparedModel;

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

// The synchronous end of a prepareModel* call: the deadline checked last, and a failure reported
// to the callback as well as returned.
Status rejectedPreparation(Status st, const char* function, const OptionalTimePoint& deadline,
                           IPreparedModelCallback& callback) {
    if (st.ok() && deadlinePassed(deadline))
        st = fail(ErrorStatus::MISSED_DEADLINE_PERSISTENT, function, ": the deadline has passed");
    if (!st.ok()) callback.notify(st, nullptr);
    return st;
}

// A preparation's last check: the status notified to the callback when it finished too late.
std::optional<Status> missedDeadline(const OptionalTimePoint& deadline,
                                     IPreparedModelCallback& callback) {
    if (!deadlinePassed(deadline)) return std::nullopt;
    Status st = fail(ErrorStatus::MISSED_DEADLINE_TRANSIENT, "preparation missed its deadline");
    callback.notify(st, nullptr);
    return st;
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
std::vector<uint8_t> serializeCachePayload(const Model& signature, Priority priority,
                                           const Program& program) {
    std::vector<uint8_t> out;
    putU32(out, static_cast<uint32_t>(priority));
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

// What a model cache holds: the model's I/O signature, its priority and its program.
struct CachePayload {
    Model signature;
    Priority priority = kDefaultPriority;
    Program program;
};

Result<CachePayload> deserializeCachePayload(const std::vector<uint8_t>& bytes,
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
    uint32_t priority, nIn, nOut;
    if (!u32(&priority) || !u32(&nIn) || !u32(&nOut) || nIn > 4096 || nOut > 4096) return bad();
    if (!validatePriority(static_cast<Priority>(priority)).ok()) return bad();
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
    // The signature is a model's I/O as validation accepted it: sizes within NNAPI's 32 bits,
    // and those the program fixed equal to what its buffers hold.
    for (uint32_t i = 0; i < nIn + nOut; ++i) {
        const Operand& o = s.main.operands[i];
        const ProgramIo& io = i < nIn ? program->inputs[i] : program->outputs[i - nIn];
        if (!isTensorType(o.type) || knownByteSize(o.type, o.dimensions) > kMaxOperandBytes ||
            (!hasUnknownDimensions(o) && byteSize(o.type, o.dimensions) != io.size))
            return bad();
    }
    return CachePayload{std::move(s), static_cast<Priority>(priority), std::move(*program)};
}

class NpuDevice : public IDevice {
  public:
    explicit NpuDevice(std::shared_ptr<DeviceCore> core) : mCore(std::move(core)) {}

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
        // What is claimed must prepare: prepareModel rejects a declared shape its operation
        // contradicts, so such an operation is not claimed.
        const std::vector<bool> shapesAgree = declaredShapesAgree(model);
        std::vector<bool> supported;
        for (uint32_t i = 0; i < model.main.operations.size(); ++i)
            supported.push_back(shapesAgree[i] && checkOperationSupported(model, i).ok() &&
                                fitsDeviceMemory(model, model.main, model.main.operations[i]));
        return supported;
    }

    Status prepareModel(const Model& model, ExecutionPreference preference, Priority priority,
                        const OptionalTimePoint& deadline,
                        const std::vector<SharedHandle>& modelCache,
                        const std::vector<SharedHandle>& dataCache, const CacheToken& token,
                        std::shared_ptr<IPreparedModelCallback> callback) const override {
        if (!callback) return invalidArgument("prepareModel: null callback");
        Status st = validateFullModel(model);
        // A declared shape its operation contradicts would only fail at execution.
        if (st.ok()) st = validateDeclaredShapes(model);
        // The preference is checked, then not used: the compiler has one policy, fewest cycles,
        // and the choices that save cycles (fusion, tiling) save DRAM traffic too, the energy
        // model's largest term (docs/npu.md); one core runs one job at a time, so there is no
        // throughput to trade for sustained speed.
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
        Status posted =
            postWork([core = mCore, model, priority, deadline, shared, token, callback] {
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
                                {serializeCachePayload(ioSignature(model), priority, program),
                                 program.constants},
                                (*shared)[0].get(), (*shared)[1].get());
                }
                callback->notify(okStatus(), prepared->first);
            });
        if (!posted.ok()) callback->notify(posted, nullptr);
        return posted;
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
        // Reading and authenticating the files takes no longer than validating a model, so it
        // happens here and a modified or foreign cache is this call's status, as the HAL asks.
        auto contents = loadFromCache(mCore->key, token, files[0].get(), files[1].get());
        Result<CachePayload> payload = contents.status();
        if (contents)
            payload = deserializeCachePayload(contents->program, std::move(contents->constants));
        if (!payload) {
            callback->notify(payload.status(), nullptr);
            return payload.status();
        }
        // The callback's status is the call's (IDevice.aidl: notify, then return the same).
        if (auto missed = missedDeadline(deadline, *callback)) return *missed;
        auto program = std::make_shared<const Program>(std::move(payload->program));
        callback->notify(okStatus(), std::make_shared<NpuPreparedModel>(
                                         mCore, std::move(payload->signature), false,
                                         payload->priority, std::move(program)));
        return okStatus();
    }

    Result<SharedBuffer> allocate(const BufferDesc& desc,
                                  const std::vector<SharedPreparedModel>& preparedModels,
                                  const std::vector<BufferRole>& inputRoles,
                                  const std::vector<BufferRole>& outputRoles) const override {
        if (preparedModels.empty()) return invalidArgument("allocate: no prepared model");
        if (inputRoles.empty() && outputRoles.empty()) return invalidArgument("allocate: no role");
        std::vector<const NpuPreparedModel*> models;
        for (size_t i = 0; i < preparedModels.size(); ++i) {
            const auto* m = dynamic_cast<const NpuPreparedModel*>(preparedModels[i].get());
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
            // Extension operands too: their extra parameters are part of their type.
            if (o.type != first.type || o.scale != first.scale || o.zeroPoint != first.zeroPoint ||
                !sameExtraParams(o.extraParams, first.extraParams))
                return invalidArgument(
                    "allocate: the roles' operands differ in type, "
                    "quantization or extra parameters");
            auto combined = combineDimensions(dims, o.dimensions);
            if (!combined) return invalidArgument("allocate: ", combined.status().message);
            dims = *combined;
        }
        Operand operand = first;
        operand.dimensions = dims;
        if (isScalarType(operand.type) && !dims.empty())
            return invalidArgument("allocate: dimensions for a scalar");
        // Valid requests this driver does not support are GENERAL_FAILURE, as the HAL says.
        if (isExtension(operand.type))
            return fail(ErrorStatus::GENERAL_FAILURE,
                        "allocate: buffers of extension types are not supported by this driver");
        auto buffer = std::make_shared<ManagedBuffer>(std::move(roles), operand);
        // A buffer of unknown shape gets its storage when a copyFrom or an execution sets it.
        if (buffer->shapeFixed()) {
            const uint64_t size = byteSize(operand.type, dims);
            // A valid descriptor beyond what this driver's buffers hold: a property the driver
            // does not support, GENERAL_FAILURE as the AIDL says (not the caller's error).
            if (size > kMaxBufferBytes)
                return fail(ErrorStatus::GENERAL_FAILURE, "allocate: a buffer of ",
                            byteSizeText(size), " (this driver's buffers hold at most ",
                            byteSizeText(kMaxBufferBytes), ")");
            auto storage = buffer->storageFor(dims);
            if (!storage) return storage.status();
        }
        const MemoryDomainToken token = mCore->buffers.add(buffer);
        return SharedBuffer(std::make_shared<NpuBuffer>(mCore, std::move(buffer), token));
    }

  private:
    // Whether the known operands of operation `op` of `graph` fit the device's memory at all
    // (unknown sizes are decided when a program is compiled for them); for IF and WHILE, also
    // those of every operation of the subgraphs they run, recursively.
    bool fitsDeviceMemory(const Model& model, const Subgraph& graph, const Operation& op,
                          int depth = 0) const {
        uint64_t bytes = 0;
        for (const auto* list : {&op.inputs, &op.outputs}) {
            for (uint32_t k : *list) {
                const Operand& o = graph.operands[k];
                bytes += knownByteSize(o.type, o.dimensions);
            }
        }
        if (bytes > mCore->runtime.arenaCapacity()) return false;
        if (op.type != OperationType::IF && op.type != OperationType::WHILE) return true;
        if (depth > 64) return false;  // validation forbids cycles; never recurse without end
        for (uint32_t k : op.inputs) {
            const Operand& o = graph.operands[k];
            if (o.lifetime != OperandLifeTime::SUBGRAPH ||
                o.location.offset >= model.referenced.size())
                continue;
            const Subgraph& sub = model.referenced[o.location.offset];
            for (const Operation& inner : sub.operations) {
                if (!fitsDeviceMemory(model, sub, inner, depth + 1)) return false;
            }
        }
        return true;
    }

    // Compiles `model` (when its input shapes are known) into a prepared model.
    static Result<std::pair<SharedPreparedModel, std::shared_ptr<const Program>>> prepare(
        const std::shared_ptr<DeviceCore>& core, const Model& model, Priority priority) {
        for (uint32_t i = 0; i < model.main.operations.size(); ++i) {
            Status st = checkOperationSupported(model, i);
            if (!st.ok())
                return fail(ErrorStatus::GENERAL_FAILURE, "operation ", i,
                            " is not supported by the NPU: ", st.message);
        }
        // Models with IF or WHILE compile each stretch when it first runs.
        bool inputsKnown = compileTimeInputs(model).empty() && !hasControlFlow(model);
        for (uint32_t k : model.main.inputIndexes)
            inputsKnown = inputsKnown && !hasUnknownDimensions(model.main.operands[k]);
        std::shared_ptr<const Program> program;
        if (inputsKnown) {
            auto compiled = compileModel(model, {});
            if (!compiled) return compiled.status();
            // What prepares must launch: a program larger than the device fails here.
            if (compiled->arenaSize > core->runtime.arenaCapacity())
                return fail(ErrorStatus::RESOURCE_EXHAUSTED_PERSISTENT, "the model needs ",
                            byteSizeText(compiled->arenaSize), " of device memory, the device has ",
                            byteSizeText(core->runtime.arenaCapacity()));
            program = std::make_shared<const Program>(std::move(*compiled));
        }
        auto prepared = std::make_shared<NpuPreparedModel>(core, model, true, priority, program);
        // The same for the jobs of IF and WHILE models: every stretch whose shapes are known is
        // compiled now, and one that does not fit the device fails the preparation.
        NN_RETURN_IF_ERROR(prepared->precompileControlFlow(core->runtime.arenaCapacity()));
        return std::make_pair(SharedPreparedModel(prepared), program);
    }

    const std::shared_ptr<DeviceCore> mCore;
};

}  // namespace

Result<SharedDevice> makeNpuDevice(std::shared_ptr<HardwareAccess> hardware,
                                   DeviceOptions options) {
    // A stale calibration record must not go unnoticed: the driver has no other log.
    for (const CalibrationRun* run :
         {&options.calibration, &options.floatCalibration, &options.relaxedCalibration}) {
        if (Status st = checkCalibration(*run); !st.ok())
            std::cerr << "nncosim driver: " << st.message << "\n";
    }
    if (!options.cacheKey && !options.cacheKeyFile.empty()) {
        auto key = loadOrCreateCacheKey(options.cacheKeyFile);
        if (!key) return key.status();
        options.cacheKey = *key;
    }
    auto core = std::make_shared<DeviceCore>(std::move(hardware), options);
    // The hardware is touched only from the queue's worker thread.
    std::promise<Status> init;
    core->queue.submit(Priority::HIGH, [&](bool) { init.set_value(core->runtime.initialize()); });
    Status st = init.get_future().get();
    if (!st.ok()) return st;
    return SharedDevice(std::make_shared<NpuDevice>(std::move(core)));
}

}  // namespace nncosim::driver
