#include "testbench/runtime/HostRuntime.h"

#include <algorithm>
#include <chrono>
#include <cstring>
#include <iomanip>
#include <mutex>
#include <numeric>
#include <sstream>

#include "driver/Callbacks.h"
#include "driver/Compiler.h"
#include "driver/IPreparedModel.h"
#include "driver/NpuDevice.h"
#include "golden/Executor.h"
#include "model/Validation.h"

namespace nncosim {

Result<std::shared_ptr<NpuContext>> makeNpuContext(const sim::PlatformConfig& config,
                                                   const driver::DeviceOptions& deviceOptions) {
    auto platform = sim::createPlatform(config);
    if (!platform) return platform.status();
    auto profiler = std::make_shared<NpuProfiler>(*platform);
    auto device = driver::makeNpuDevice(profiler, deviceOptions);
    if (!device) return device.status();
    return std::make_shared<NpuContext>(
        NpuContext{profiler, *device, config.npu, config.dramBytesPerCycle,
                   std::dynamic_pointer_cast<sim::CosimPlatform>(*platform)});
}

Result<std::shared_ptr<NpuContext>> openNpu(const sim::PlatformConfig& config) {
    static std::mutex mutex;
    static std::shared_ptr<NpuContext> context;
    std::lock_guard<std::mutex> lock(mutex);
    if (context) return context;
    auto made = makeNpuContext(config);
    if (!made) return made.status();
    context = *made;
    return context;
}

NpuCounters ExecutionRecord::npuTotal() const {
    NpuCounters total;
    for (const PartitionRecord& p : partitions) {
        if (p.job) total.add(p.job->total);
    }
    return total;
}

namespace {

double secondsSince(std::chrono::steady_clock::time_point start) {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

/// Executes a prepared partition on the driver: the inputs in shared memory as the NNAPI
/// runtime sends them, the outputs read back; an output of unknown size gets a second try with
/// the sizes the driver reported.
Result<std::vector<TensorData>> executeOnDriver(const driver::IPreparedModel& prepared,
                                                const Model& model,
                                                const std::vector<TensorData>& inputs,
                                                Duration loopTimeout) {
    Request request;
    for (const TensorData& input : inputs) {
        Request::Argument arg;
        if (input.dimensions.empty() && input.bytes.empty()) {
            arg.lifetime = Request::Argument::LifeTime::NO_VALUE;
        } else {
            auto memory =
                Memory::create(std::max<size_t>(input.bytes.size(), 1), "host-runtime-input");
            if (!memory) return memory.status();
            if (!input.bytes.empty())
                std::memcpy((*memory)->data(), input.bytes.data(), input.bytes.size());
            request.pools.push_back(*memory);
            arg.location.poolIndex = static_cast<uint32_t>(request.pools.size() - 1);
            arg.location.length = static_cast<uint32_t>(input.bytes.size());
            arg.dimensions = input.dimensions;
        }
        request.inputs.push_back(std::move(arg));
    }
    const Subgraph& g = model.main;
    std::vector<uint64_t> lengths;
    for (uint32_t k : g.outputIndexes)
        lengths.push_back(byteSize(g.operands[k].type, g.operands[k].dimensions));
    const size_t firstOutputPool = request.pools.size();
    for (int attempt = 0; attempt < 2; ++attempt) {
        request.pools.resize(firstOutputPool);
        request.outputs.clear();
        for (uint64_t length : lengths) {
            auto memory = Memory::create(std::max<uint64_t>(length, 1), "host-runtime-output");
            if (!memory) return memory.status();
            request.pools.push_back(*memory);
            Request::Argument arg;
            arg.location.poolIndex = static_cast<uint32_t>(request.pools.size() - 1);
            arg.location.length = static_cast<uint32_t>(std::max<uint64_t>(length, 1));
            request.outputs.push_back(std::move(arg));
        }
        const driver::ExecutionResult result =
            prepared.execute(request, MeasureTiming::YES, {}, loopTimeout);
        if (result.status.code == ErrorStatus::OUTPUT_INSUFFICIENT_SIZE && attempt == 0 &&
            result.outputShapes.size() == lengths.size()) {
            for (size_t i = 0; i < lengths.size(); ++i) {
                lengths[i] = byteSize(g.operands[g.outputIndexes[i]].type,
                                      result.outputShapes[i].dimensions);
            }
            continue;
        }
        if (!result.ok()) return result.status;
        if (result.outputShapes.size() != lengths.size()) {
            return fail(ErrorStatus::GENERAL_FAILURE, "the driver reported ",
                        result.outputShapes.size(), " output shapes for ", lengths.size(),
                        " outputs");
        }
        std::vector<TensorData> outputs;
        for (size_t i = 0; i < lengths.size(); ++i) {
            TensorData t;
            t.dimensions = result.outputShapes[i].dimensions;
            const auto& memory = std::get<SharedMemory>(request.pools[firstOutputPool + i]);
            const uint64_t size = byteSize(g.operands[g.outputIndexes[i]].type, t.dimensions);
            t.bytes.assign(memory->data(),
                           memory->data() + std::min<uint64_t>(size, memory->size()));
            outputs.push_back(std::move(t));
        }
        return outputs;
    }
    return fail(ErrorStatus::GENERAL_FAILURE, "the driver asked twice for larger output buffers");
}

}  // namespace

struct HostRuntime::Step {
    bool npu = false;
    std::optional<PartitionModel> part;  ///< absent: nothing of the partition is used
    driver::SharedPreparedModel prepared;
};

HostRuntime::~HostRuntime() = default;

Result<std::unique_ptr<HostRuntime>> HostRuntime::create(const Model& model,
                                                         const RuntimeOptions& options) {
    auto level = validateModel(model);
    if (!level) return level.status();
    std::unique_ptr<HostRuntime> rt(new HostRuntime());
    rt->mModel = model;
    rt->mOptions = options;
    const size_t n = model.main.operations.size();
    std::vector<bool> onNpu(n, false);
    rt->mCpuReasons.assign(n, "--backend golden");
    if (options.placement != Placement::kGolden) {
        if (options.npu) {
            rt->mNpu = options.npu;
        } else {
            auto npu = openNpu();
            if (!npu) return npu.status();
            rt->mNpu = *npu;
        }
        rt->mNpu->hardware->setSampleCycles(options.profileSampleCycles);
        auto supported = rt->mNpu->device->getSupportedOperations(model);
        if (!supported) return supported.status();
        std::ostringstream unsupported;
        const Capabilities& caps = rt->mNpu->device->getCapabilities();
        const std::vector<bool> better =
            options.placement == Placement::kAuto
                ? chooseNpu(model, *supported, caps, options.preference)
                : *supported;
        for (uint32_t i = 0; i < n; ++i) {
            onNpu[i] = better[i];
            rt->mCpuReasons[i].clear();
            if (onNpu[i]) continue;
            if ((*supported)[i]) {
                const bool lowPower = options.preference == ExecutionPreference::LOW_POWER;
                std::ostringstream why;
                why << std::setprecision(3) << nameOf(options.preference) << ": the NPU's "
                    << (lowPower ? "powerUsage " : "execTime ")
                    << operationPerformance(model, i, caps, options.preference)
                    << " is not below the CPU's " << kCpuPerformance;
                rt->mCpuReasons[i] = why.str();
                continue;
            }
            const Status why = driver::checkOperationSupported(model, i);
            rt->mCpuReasons[i] = why.ok() ? "not supported by the driver" : why.message;
            unsupported << "\n  operation " << i << " " << nameOf(model.main.operations[i].type)
                        << ": " << rt->mCpuReasons[i];
        }
        if (options.placement == Placement::kNpu && !unsupported.str().empty()) {
            return fail(ErrorStatus::GENERAL_FAILURE,
                        "the NPU does not support every operation:", unsupported.str());
        }
    }
    rt->mPartitions = options.onePartitionPerOperation ? singleOperationPartitions(model, onNpu)
                                                       : partitionOperations(model, onNpu);
    const std::vector<bool> exported = exportedOperands(
        model, rt->mPartitions, options.exposeIntermediates || options.onePartitionPerOperation);
    for (Partition& partition : rt->mPartitions) {
        Step step;
        step.npu = partition.npu;
        auto part = extractPartition(model, partition.operations, exported);
        if (part) {
            step.part = std::move(*part);
            if (step.npu) {
                auto prepared = driver::prepareModelBlocking(*rt->mNpu->device, step.part->model,
                                                             options.preference);
                if (!prepared && options.placement == Placement::kNpu) return prepared.status();
                if (prepared) {
                    step.prepared = *prepared;
                } else {
                    // As Android's runtime: a partition the driver cannot prepare falls back to
                    // the CPU.
                    step.npu = partition.npu = false;
                    for (uint32_t i : partition.operations) {
                        rt->mCpuReasons[i] = "the driver failed to prepare its partition: " +
                                             prepared.status().message;
                    }
                }
            }
        }
        rt->mSteps.push_back(std::move(step));
    }
    return rt;
}

Result<std::vector<TensorData>> HostRuntime::fallBackToCpu(
    const std::vector<TensorData>& inputs, ExecutionRecord& rec,
    std::vector<std::optional<TensorData>>& values, Duration loopTimeout) const {
    const Subgraph& g = mModel.main;
    PartitionRecord pr;
    pr.operations.resize(g.operations.size());
    std::iota(pr.operations.begin(), pr.operations.end(), 0u);
    for (OperationRecord& op : rec.operations) {
        op.npu = false;
        op.partition = static_cast<uint32_t>(rec.partitions.size());
        op.counters.reset();
        op.cpuReason = "a zero-sized tensor between partitions: the whole model ran on the CPU";
    }
    const auto start = std::chrono::steady_clock::now();
    golden::ExecuteOptions options;
    options.loopTimeout = loopTimeout;
    auto outputs = golden::execute(mModel, inputs, options);
    pr.seconds = secondsSince(start);
    rec.cpuSeconds += pr.seconds;
    rec.partitions.push_back(std::move(pr));
    if (mNpu)
        rec.deviceTime =
            Duration(static_cast<int64_t>(rec.npuCycles * mNpu->hardware->clockPeriodPs() / 1000));
    if (!outputs) return outputs.status();
    for (size_t i = 0; i < outputs->size(); ++i) values[g.outputIndexes[i]] = (*outputs)[i];
    rec.values = std::move(values);
    return outputs;
}

Result<std::vector<TensorData>> HostRuntime::execute(const std::vector<TensorData>& inputs,
                                                     ExecutionRecord* record,
                                                     Duration loopTimeout) const {
    const Subgraph& g = mModel.main;
    if (inputs.size() != g.inputIndexes.size()) {
        return invalidArgument("the model has ", g.inputIndexes.size(), " inputs, ", inputs.size(),
                               " given");
    }
    std::vector<std::optional<TensorData>> values(g.operands.size());
    for (size_t i = 0; i < inputs.size(); ++i) values[g.inputIndexes[i]] = inputs[i];
    ExecutionRecord local;
    ExecutionRecord& rec = record ? *record : local;
    rec = {};
    rec.operations.resize(g.operations.size());
    for (uint32_t i = 0; i < g.operations.size(); ++i) {
        rec.operations[i].index = i;
        rec.operations[i].type = g.operations[i].type;
        rec.operations[i].cpuReason = mCpuReasons[i];
    }
    if (mNpu) mNpu->hardware->takeJobs();  // forget jobs run before this execution
    for (size_t s = 0; s < mSteps.size(); ++s) {
        const Step& step = mSteps[s];
        PartitionRecord pr;
        pr.npu = step.npu;
        pr.operations = mPartitions[s].operations;
        for (uint32_t i : pr.operations) {
            rec.operations[i].npu = step.npu;
            rec.operations[i].partition = static_cast<uint32_t>(s);
        }
        if (!step.part) {
            rec.partitions.push_back(std::move(pr));
            continue;
        }
        const PartitionModel& part = *step.part;
        std::vector<TensorData> stepInputs;
        for (uint32_t k : part.inputs) {
            if (!values[k])
                return fail(ErrorStatus::GENERAL_FAILURE, "operand ", k,
                            " has no value for partition ", s);
            stepInputs.push_back(*values[k]);
        }
        // No request can carry a zero-sized tensor (a 0 dimension means unknown): as Android's
        // runtime, the whole model then falls back to the CPU.
        const bool zeroSizedInput =
            std::any_of(stepInputs.begin(), stepInputs.end(), [](const TensorData& t) {
                return std::find(t.dimensions.begin(), t.dimensions.end(), 0u) !=
                       t.dimensions.end();
            });
        if (zeroSizedInput) return fallBackToCpu(inputs, rec, values, loopTimeout);
        const auto start = std::chrono::steady_clock::now();
        Result<std::vector<TensorData>> outputs = std::vector<TensorData>{};
        if (step.npu) {
            if (mOptions.beforeNpuPartition) mOptions.beforeNpuPartition(s, part);
            outputs = executeOnDriver(*step.prepared, part.model, stepInputs, loopTimeout);
            pr.job = mNpu->hardware->takeJobs();
        } else {
            golden::ExecuteOptions goldenOptions;
            goldenOptions.loopTimeout = loopTimeout;
            outputs = golden::execute(part.model, stepInputs, goldenOptions);
        }
        pr.seconds = secondsSince(start);
        if (!outputs) {
            Status status = outputs.status();
            status.message = std::string(step.npu ? "NPU" : "CPU") + " partition " +
                             std::to_string(s) + " (operations " +
                             std::to_string(pr.operations.front()) + ".." +
                             std::to_string(pr.operations.back()) + "): " + status.message;
            return status;
        }
        for (size_t o = 0; o < part.outputs.size(); ++o)
            values[part.outputs[o]] = std::move((*outputs)[o]);
        if (step.npu && pr.job) {
            rec.npuCycles += pr.job->total.cycles;
            // Without shares per tag (several jobs, of IF or WHILE, or no sampling), a lone
            // operation has the whole.
            if (pr.job->byTag.empty() && part.operations.size() == 1)
                rec.operations[part.operations[0]].counters = pr.job->total;
            for (const auto& [tag, share] : pr.job->byTag) {
                if (tag < part.operations.size())
                    rec.operations[part.operations[tag]].counters = share;
            }
            for (const auto& [from, into] : pr.job->fusedInto) {
                if (from < part.operations.size() && into < part.operations.size())
                    rec.operations[part.operations[from]].fusedInto = part.operations[into];
            }
        } else if (!step.npu) {
            rec.cpuSeconds += pr.seconds;
        }
        rec.partitions.push_back(std::move(pr));
    }
    if (mNpu)
        rec.deviceTime =
            Duration(static_cast<int64_t>(rec.npuCycles * mNpu->hardware->clockPeriodPs() / 1000));
    std::vector<TensorData> outputs;
    for (uint32_t k : g.outputIndexes) {
        if (!values[k])
            return fail(ErrorStatus::GENERAL_FAILURE, "model output operand ", k,
                        " was not computed");
        outputs.push_back(*values[k]);
    }
    rec.values = std::move(values);
    return outputs;
}

}  // namespace nncosim
