#include "testbench/Faults.h"

#include <algorithm>
#include <chrono>
#include <iomanip>
#include <map>
#include <random>
#include <sstream>

#include "driver/NpuRegisters.h"
#include "golden/Executor.h"
#include "testbench/ModelRun.h"
#include "testbench/runtime/HostRuntime.h"

namespace nncosim {
namespace {

using Kind = sim::FaultOptions::Kind;

constexpr FaultOutcome kOutcomes[] = {FaultOutcome::kDetectedByNpu,
                                      FaultOutcome::kDetectedByComparison, FaultOutcome::kMasked,
                                      FaultOutcome::kHang, FaultOutcome::kOtherFailure};

double secondsSince(std::chrono::steady_clock::time_point start) {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

}  // namespace

const char* outcomeName(FaultOutcome outcome) {
    switch (outcome) {
        case FaultOutcome::kDetectedByNpu:
            return "npu-error";
        case FaultOutcome::kDetectedByComparison:
            return "comparison";
        case FaultOutcome::kMasked:
            return "masked";
        case FaultOutcome::kHang:
            return "watchdog";
        case FaultOutcome::kOtherFailure:
            break;
    }
    return "other-failure";
}

const char* faultKindName(Kind kind) {
    switch (kind) {
        case Kind::kNone:
            return "none";
        case Kind::kStuckWriteBit:
            return "stuck-write-bit";
        case Kind::kDropWriteBeat:
            return "drop-write-beat";
        case Kind::kStuckRequantBit:
            return "stuck-requant-bit";
        case Kind::kStuckAccumulatorBit:
            return "stuck-accumulator-bit";
        case Kind::kStuckArrayWeightBit:
            return "stuck-array-weight-bit";
        case Kind::kStuckDmaAddressBit:
            return "stuck-dma-address-bit";
        case Kind::kDescriptorBitFlip:
            return "descriptor-bit-flip";
        case Kind::kStall:
            return "stall";
    }
    return "?";
}

std::vector<Kind> campaignFaultKinds(sim::NpuImplementation npu) {
    std::vector<Kind> kinds;
    for (Kind k : {Kind::kStuckWriteBit, Kind::kDropWriteBeat, Kind::kStuckRequantBit,
                   Kind::kStuckAccumulatorBit, Kind::kStuckArrayWeightBit,
                   Kind::kStuckDmaAddressBit, Kind::kDescriptorBitFlip, Kind::kStall}) {
        if (sim::faultKindExists(npu, k)) kinds.push_back(k);
    }
    return kinds;
}

std::string describeFault(const sim::FaultOptions& f) {
    std::ostringstream out;
    out << faultKindName(f.kind);
    const char* level = f.value ? " = 1" : " = 0";
    switch (f.kind) {
        case Kind::kNone:
        case Kind::kStall:
            break;
        case Kind::kStuckWriteBit:
        case Kind::kStuckRequantBit:
            out << " lane " << f.bit / 8 << " bit " << f.bit % 8 << level;
            break;
        case Kind::kDropWriteBeat:
            out << " beat " << f.beat;
            break;
        case Kind::kStuckAccumulatorBit:
            out << " lane " << f.bit / 32 << " bit " << f.bit % 32 << level;
            break;
        case Kind::kStuckArrayWeightBit: {
            const uint32_t pe = f.bit / 8;
            out << " PE row " << pe / npu::kArrayCols << " column " << pe % npu::kArrayCols
                << " bit " << f.bit % 8 << level;
            break;
        }
        case Kind::kStuckDmaAddressBit:
            out << " bit " << f.bit << level;
            break;
        case Kind::kDescriptorBitFlip:
            out << " descriptor " << f.beat << " word " << f.bit / 32 << " bit " << f.bit % 32;
            break;
    }
    return out.str();
}

// ---------------------------------------------------------------------------------------------

struct FaultInjector::State {
    Model model;
    std::vector<TensorData> inputs;
    std::shared_ptr<NpuContext> npu;
    std::unique_ptr<HostRuntime> runtime;
    std::unique_ptr<HostRuntime> exposed;  ///< every result visible, for the first divergence
    std::vector<TensorData> goldenOutputs;
    std::vector<std::vector<TensorData>> goldenResults;  ///< per main-graph operation
    uint32_t watchdogLimit = 0;
    uint32_t descriptors = 0;
    uint64_t writeBeats = 0;

    /// The first output that differs from the golden's, described; empty when all match.
    std::string firstOutputMismatch(const std::vector<TensorData>& outputs) const {
        const Subgraph& g = model.main;
        for (size_t i = 0; i < outputs.size() && i < goldenOutputs.size(); ++i) {
            const uint32_t k = g.outputIndexes[i];
            const TensorCheck c = checkTensor("output " + std::to_string(i), k, g.operands[k],
                                              isRelaxed(model), outputs[i], &goldenOutputs[i]);
            if (c.ok()) continue;
            return "output " + std::to_string(i) + ": " +
                   (c.comparison ? c.comparison->describe() : std::string("shape differs"));
        }
        return outputs.size() == goldenOutputs.size() ? "" : "a different number of outputs";
    }

    /// Runs the model with its intermediates visible and names the first operation (in execution
    /// order) whose result differs from the golden's; empty when none does.
    std::string firstDivergence(std::string* note) const {
        ExecutionRecord record;
        auto outputs = exposed->execute(inputs, &record);
        if (!outputs) {
            *note = "the run with intermediates visible failed: " + outputs.status().message;
            return "";
        }
        const Subgraph& g = model.main;
        for (const PartitionRecord& p : record.partitions) {
            for (uint32_t i : p.operations) {
                const Operation& op = g.operations[i];
                for (uint32_t o = 0; o < op.outputs.size() && o < goldenResults[i].size(); ++o) {
                    const uint32_t k = op.outputs[o];
                    if (!record.values[k]) continue;
                    const TensorCheck c = checkTensor("", k, g.operands[k], isRelaxed(model),
                                                      *record.values[k], &goldenResults[i][o]);
                    if (c.ok()) continue;
                    std::ostringstream out;
                    out << "operation " << i << " " << nameOf(op.type) << " ("
                        << (p.npu ? "NPU" : "CPU") << ") output " << o << ": "
                        << (c.comparison ? c.comparison->describe() : "shape differs");
                    return out.str();
                }
            }
        }
        *note = "every intermediate matched with them visible";
        return "";
    }
};

FaultInjector::FaultInjector() : mState(std::make_unique<State>()) {}
FaultInjector::~FaultInjector() = default;

Result<std::unique_ptr<FaultInjector>> FaultInjector::create(const Model& model,
                                                             const std::vector<TensorData>& inputs,
                                                             sim::NpuImplementation npu) {
    std::unique_ptr<FaultInjector> injector(new FaultInjector());
    State& s = *injector->mState;
    s.model = model;
    s.inputs = inputs;
    sim::PlatformConfig config;
    config.npu = npu;
    auto context = openNpu(config);
    if (!context) return context.status();
    if ((*context)->implementation != npu)
        return invalidArgument("this process's NPU is already the ",
                               sim::nameOf((*context)->implementation), " one");
    s.npu = *context;

    RuntimeOptions options;
    options.placement = Placement::kAuto;
    options.npu = s.npu;
    auto runtime = HostRuntime::create(model, options);
    if (!runtime) return runtime.status();
    s.runtime = std::move(*runtime);
    options.exposeIntermediates = true;
    auto exposed = HostRuntime::create(model, options);
    if (!exposed) return exposed.status();
    s.exposed = std::move(*exposed);

    s.goldenResults.resize(model.main.operations.size());
    golden::ExecuteOptions goldenOptions;
    goldenOptions.observer = [&s](uint32_t i, const std::vector<TensorData>& results) {
        s.goldenResults[i] = results;
    };
    auto golden = golden::execute(model, inputs, goldenOptions);
    if (!golden) return fail(golden.status().code, "the golden: ", golden.status().message);
    s.goldenOutputs = std::move(*golden);

    // A clean run must match, and tells how long jobs run and how much they write.
    ExecutionRecord record;
    auto outputs = s.runtime->execute(inputs, &record);
    if (!outputs) return fail(outputs.status().code, "the clean run: ", outputs.status().message);
    if (std::string mismatch = s.firstOutputMismatch(*outputs); !mismatch.empty())
        return fail(ErrorStatus::GENERAL_FAILURE,
                    "the clean run differs from the golden (no fault injected): ", mismatch);
    uint64_t longestJob = 0;
    s.writeBeats = UINT64_MAX;
    for (const PartitionRecord& p : record.partitions) {
        if (!p.job) continue;
        longestJob = std::max(longestJob, p.job->total.cycles);
        // Less the completion record's beat.
        const uint64_t beats = p.job->total.dmaBytesWritten / npu::kDramBusBytes;
        s.writeBeats = std::min(s.writeBeats, beats > 1 ? beats - 1 : 1);
    }
    if (longestJob == 0)
        return invalidArgument("the NPU runs no operation of this model: nothing to inject into");
    s.descriptors = std::max(1u, s.npu->hardware->readRegister(npu::reg::kDescDone));
    // The watchdog counts cycles without a retirement: no descriptor takes longer than its whole
    // job, so four jobs' time never stops a healthy one and bounds a hang's cost.
    s.watchdogLimit =
        static_cast<uint32_t>(std::min<uint64_t>(4 * longestJob + 100000, UINT32_MAX));
    return injector;
}

uint32_t FaultInjector::descriptorsPerJob() const {
    return mState->descriptors;
}

uint64_t FaultInjector::writeBeatsPerJob() const {
    return mState->writeBeats;
}

FaultRun FaultInjector::run(const sim::FaultOptions& fault) {
    const auto start = std::chrono::steady_clock::now();
    State& s = *mState;
    FaultRun run;
    run.fault = fault;
    driver::HardwareAccess& platform = s.npu->hardware->inner();
    s.npu->hardware->writeRegister(npu::reg::kWatchdogLimit, s.watchdogLimit);
    if (Status st = sim::setFault(platform, fault); !st.ok()) {
        run.detail = st.message;
        run.seconds = secondsSince(start);
        return run;
    }
    auto outputs = s.runtime->execute(s.inputs);
    if (!outputs) {
        const std::string& message = outputs.status().message;
        const size_t at = message.find("NPU error ");
        run.outcome = at == std::string::npos ? FaultOutcome::kOtherFailure
                      : message.compare(at, 18, "NPU error WATCHDOG") == 0
                          ? FaultOutcome::kHang
                          : FaultOutcome::kDetectedByNpu;
        run.detail =
            at == std::string::npos ? message : message.substr(at, message.find(';', at) - at);
    } else if (std::string mismatch = s.firstOutputMismatch(*outputs); mismatch.empty()) {
        run.outcome = FaultOutcome::kMasked;
    } else {
        run.outcome = FaultOutcome::kDetectedByComparison;
        std::string note;
        run.detail = s.firstDivergence(&note);
        if (run.detail.empty()) run.detail = mismatch + " (" + note + ")";
    }
    // The device must come out of it usable: the same job, fault removed, must pass.
    (void)sim::setFault(platform, {});
    auto clean = s.runtime->execute(s.inputs);
    run.deviceUsable = clean && s.firstOutputMismatch(*clean).empty();
    run.seconds = secondsSince(start);
    return run;
}

// ---------------------------------------------------------------------------------------------

sim::FaultOptions drawFault(uint32_t seed, uint32_t index, sim::NpuImplementation npu,
                            const FaultInjector& injector) {
    std::mt19937_64 rng(uint64_t{seed} << 32 | index);
    const std::vector<Kind> kinds = campaignFaultKinds(npu);
    const auto below = [&rng](uint64_t n) {
        return std::uniform_int_distribution<uint64_t>(0, n - 1)(rng);
    };
    sim::FaultOptions f;
    f.kind = kinds[below(kinds.size())];
    f.value = below(2) == 1;
    switch (f.kind) {
        case Kind::kStuckWriteBit:
        case Kind::kStuckRequantBit:
            f.bit = static_cast<uint32_t>(below(8 * npu::kDramBusBytes));
            break;
        case Kind::kDropWriteBeat:
            f.beat = below(injector.writeBeatsPerJob());
            break;
        case Kind::kStuckAccumulatorBit:
            f.bit = static_cast<uint32_t>(below(32 * npu::kArrayCols));
            break;
        case Kind::kStuckArrayWeightBit:
            f.bit = static_cast<uint32_t>(below(8 * npu::kArrayRows * npu::kArrayCols));
            break;
        case Kind::kStuckDmaAddressBit:  // a beat's address: bits 4..31
            f.bit = 4 + static_cast<uint32_t>(below(28));
            break;
        case Kind::kDescriptorBitFlip:
            f.beat = below(injector.descriptorsPerJob());
            f.bit = static_cast<uint32_t>(below(32 * npu::kDescriptorWords));
            break;
        case Kind::kNone:
        case Kind::kStall:
            break;
    }
    return f;
}

size_t FaultCampaign::count(FaultOutcome outcome) const {
    return std::count_if(runs.begin(), runs.end(),
                         [outcome](const FaultRun& r) { return r.outcome == outcome; });
}

size_t FaultCampaign::deviceUsableAfter() const {
    return std::count_if(runs.begin(), runs.end(),
                         [](const FaultRun& r) { return r.deviceUsable; });
}

Result<FaultCampaign> runFaultCampaign(const std::string& name, const Model& model,
                                       const std::vector<TensorData>& inputs,
                                       const FaultCampaignOptions& options) {
    const auto start = std::chrono::steady_clock::now();
    auto injector = FaultInjector::create(model, inputs, options.npu);
    if (!injector) return injector.status();
    FaultCampaign campaign;
    campaign.model = name;
    campaign.npu = sim::nameOf(options.npu);
    campaign.seed = options.seed;
    for (uint32_t i = 0; i < options.count; ++i) {
        FaultRun run = (*injector)->run(drawFault(options.seed, i, options.npu, **injector));
        run.index = i;
        if (options.onRun) options.onRun(run);
        campaign.runs.push_back(std::move(run));
    }
    campaign.seconds = secondsSince(start);
    return campaign;
}

std::string formatFaultTable(const FaultCampaign& campaign) {
    std::map<std::string, std::map<FaultOutcome, size_t>> byKind;
    for (const FaultRun& r : campaign.runs) ++byKind[faultKindName(r.fault.kind)][r.outcome];
    std::ostringstream out;
    const auto row = [&out](const std::string& label, const std::map<FaultOutcome, size_t>& n) {
        size_t total = 0;
        out << std::left << std::setw(24) << label << std::right;
        for (FaultOutcome o : kOutcomes) {
            const auto it = n.find(o);
            const size_t v = it == n.end() ? 0 : it->second;
            total += v;
            out << std::setw(14) << v;
        }
        out << std::setw(8) << total << "\n";
    };
    out << std::left << std::setw(24) << "fault kind" << std::right;
    for (FaultOutcome o : kOutcomes) out << std::setw(14) << outcomeName(o);
    out << std::setw(8) << "runs"
        << "\n";
    std::map<FaultOutcome, size_t> all;
    for (const auto& [kind, n] : byKind) {
        row(kind, n);
        for (const auto& [o, v] : n) all[o] += v;
    }
    row("all", all);
    const size_t runs = campaign.runs.size();
    const size_t byNpu = campaign.count(FaultOutcome::kDetectedByNpu),
                 byComparison = campaign.count(FaultOutcome::kDetectedByComparison),
                 byWatchdog = campaign.count(FaultOutcome::kHang);
    const size_t detected = byNpu + byComparison + byWatchdog;
    out << std::fixed << std::setprecision(1) << "detected " << detected << " of " << runs << " ("
        << (runs ? 100.0 * detected / runs : 0.0) << "%): " << byNpu << " by the NPU, "
        << byComparison << " by comparison, " << byWatchdog << " by the watchdog; "
        << campaign.count(FaultOutcome::kMasked) << " masked; device usable after "
        << campaign.deviceUsableAfter() << " of " << runs
        << " runs (the clean run after each passed); " << campaign.seconds << " s\n";
    return out.str();
}

nlohmann::json faultCampaignJson(const FaultCampaign& campaign) {
    nlohmann::json outcomes = nlohmann::json::object(), byKind = nlohmann::json::object(),
                   faults = nlohmann::json::array();
    for (FaultOutcome o : kOutcomes) outcomes[outcomeName(o)] = campaign.count(o);
    for (const FaultRun& r : campaign.runs) {
        nlohmann::json& kind = byKind[faultKindName(r.fault.kind)];
        if (kind.is_null())
            for (FaultOutcome o : kOutcomes) kind[outcomeName(o)] = 0;
        kind[outcomeName(r.outcome)] = kind[outcomeName(r.outcome)].get<size_t>() + 1;
        faults.push_back({{"index", r.index},
                          {"kind", faultKindName(r.fault.kind)},
                          {"fault", describeFault(r.fault)},
                          {"outcome", outcomeName(r.outcome)},
                          {"detail", r.detail},
                          {"device_usable", r.deviceUsable},
                          {"seconds", r.seconds}});
    }
    return {{"model", campaign.model},
            {"npu", campaign.npu},
            {"seed", campaign.seed},
            {"runs", campaign.runs.size()},
            {"seconds", campaign.seconds},
            {"outcomes", outcomes},
            {"device_usable_after", campaign.deviceUsableAfter()},
            {"by_kind", byKind},
            {"faults", faults}};
}

}  // namespace nncosim
