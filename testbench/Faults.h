// Fault campaigns behind `nncosim faults`: a model runs many times on the NPU, each time with one
// injected hardware fault (sim::FaultOptions), and every run is classified by who noticed: the
// NPU (an error code), the comparison with the golden (the first diverging operation), nobody
// (the output is identical: masked), or the watchdog (a hang). After every faulty run the fault
// is removed and a clean run must pass on the same device: the fault left nothing behind.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "model/Model.h"
#include "model/Status.h"
#include "sim/Platform.h"

namespace nncosim {

/// Who noticed an injected fault.
enum class FaultOutcome {
    kDetectedByNpu,         ///< the job stopped with an NPU error code
    kDetectedByComparison,  ///< the outputs differ from the golden's
    kMasked,                ///< the outputs are identical to the golden's
    kHang,                  ///< the job stalled and the watchdog stopped it
    kOtherFailure,          ///< the execution failed otherwise (a testbench problem)
};
/// "npu-error", "comparison", "masked", "watchdog", "other-failure".
const char* outcomeName(FaultOutcome outcome);

/// The kinds a campaign draws from on `npu` (sim::faultKindExists), in FaultOptions order.
std::vector<sim::FaultOptions::Kind> campaignFaultKinds(sim::NpuImplementation npu);
/// "stuck-write-bit", "drop-write-beat", "stuck-requant-bit", "stuck-accumulator-bit",
/// "stuck-array-weight-bit", "stuck-dma-address-bit", "descriptor-bit-flip", "stall".
const char* faultKindName(sim::FaultOptions::Kind kind);
/// A fault in words, e.g. "stuck-accumulator-bit lane 3 bit 31 = 1".
std::string describeFault(const sim::FaultOptions& fault);

struct FaultRun {
    uint32_t index = 0;
    sim::FaultOptions fault;
    FaultOutcome outcome = FaultOutcome::kOtherFailure;
    /// The NPU's error (kDetectedByNpu, kHang), the first diverging operation and element
    /// (kDetectedByComparison), or why it failed.
    std::string detail;
    bool deviceUsable = false;  ///< the clean run after the fault matched the golden
    double seconds = 0.0;       ///< the faulty run, its classification and the clean run
};

/// One model on the process's NPU, ready for faulty runs: the golden's results and a clean NPU
/// run are made once, when created.
class FaultInjector {
  public:
    /// Prepares `model` (operations the driver does not take run on the CPU) on the process's
    /// NPU opened with implementation `npu`, and checks that a clean run matches the golden.
    static Result<std::unique_ptr<FaultInjector>> create(const Model& model,
                                                         const std::vector<TensorData>& inputs,
                                                         sim::NpuImplementation npu);
    ~FaultInjector();

    /// Runs the model with `fault` injected, classifies the run, then removes the fault and
    /// checks a clean run.
    FaultRun run(const sim::FaultOptions& fault);

    /// What a clean run did, to bound the faults drawn: the NPU jobs' descriptors (the longest
    /// job's) and data write beats (the fewest of any job).
    uint32_t descriptorsPerJob() const;
    uint64_t writeBeatsPerJob() const;

  private:
    FaultInjector();
    struct State;
    std::unique_ptr<State> mState;
};

struct FaultCampaignOptions {
    uint32_t count = 100;
    uint32_t seed = 1;
    sim::NpuImplementation npu = sim::NpuImplementation::kFunctional;
    /// Called after each run (progress).
    std::function<void(const FaultRun&)> onRun;
};

struct FaultCampaign {
    std::string model;
    std::string npu;  ///< "func" or "rtl"
    uint32_t seed = 0;
    std::vector<FaultRun> runs;
    double seconds = 0.0;
    size_t count(FaultOutcome outcome) const;
    size_t deviceUsableAfter() const;  ///< runs after which the clean run passed
};

/// Fault i of a campaign: a kind from campaignFaultKinds(npu) and its bit, level, beat or
/// descriptor, drawn from `seed` and i only (so one run can be repeated alone) within the
/// injector's figures.
sim::FaultOptions drawFault(uint32_t seed, uint32_t index, sim::NpuImplementation npu,
                            const FaultInjector& injector);

/// `options.count` runs of `model`, each with drawFault's fault.
Result<FaultCampaign> runFaultCampaign(const std::string& name, const Model& model,
                                       const std::vector<TensorData>& inputs,
                                       const FaultCampaignOptions& options);

/// The summary table: per fault kind, runs of each outcome, and the device checks.
std::string formatFaultTable(const FaultCampaign& campaign);
/// {"model", "npu", "seed", "runs", "seconds", "outcomes": {name: n}, "device_usable_after",
///  "by_kind": {kind: {outcome: n}}, "faults": [{"index", "kind", "fault", "outcome", "detail",
///  "device_usable", "seconds"}]}
nlohmann::json faultCampaignJson(const FaultCampaign& campaign);

}  // namespace nncosim
