// Fault campaigns (testbench/Faults.h) on the functional model: each class of outcome appears
// where the fault must produce it, and the device is usable after every fault.
#include <doctest/doctest.h>

#include <set>

#include "testbench/Faults.h"
#include "testbench/Zoo.h"

using namespace nncosim;
using Kind = sim::FaultOptions::Kind;

namespace {

/// A small MobileNet-v1 quant8 (every NPU operation kind of the full one) on the functional
/// model.
FaultInjector& injector() {
    static std::unique_ptr<FaultInjector> made = [] {
        zoo::ZooConfig config;
        config.precision = zoo::Precision::kQuant8;
        config.inputSize = 32;
        config.widthMultiplier = 0.25f;
        config.numClasses = 10;
        auto model = zoo::buildZooModel(config);
        REQUIRE(model.ok());
        auto inputs = zoo::randomInputs(*model, 1);
        REQUIRE(inputs.ok());
        auto created = FaultInjector::create(*model, *inputs, sim::NpuImplementation::kFunctional);
        REQUIRE_MESSAGE(created.ok(), created.status().message);
        return std::move(*created);
    }();
    return *made;
}

FaultRun runFault(Kind kind, uint32_t bit, bool value = true, uint64_t beat = 0) {
    sim::FaultOptions fault;
    fault.kind = kind;
    fault.bit = bit;
    fault.value = value;
    fault.beat = beat;
    FaultRun run = injector().run(fault);
    const std::string said =
        describeFault(fault) + ": " + outcomeName(run.outcome) + ": " + run.detail;
    MESSAGE(said);
    CHECK(run.deviceUsable);
    return run;
}

}  // namespace

TEST_CASE("faults_each_outcome_where_it_must_be") {
    // The opcode's top bit (word 0 bit 7) makes an opcode the NPU does not have.
    FaultRun run = runFault(Kind::kDescriptorBitFlip, 7);
    CHECK(run.outcome == FaultOutcome::kDetectedByNpu);
    CHECK(run.detail.find("BAD_OPCODE at descriptor 0") != std::string::npos);

    // An accumulator's sign bit stuck high: the first convolution's results go wrong, and the
    // comparison names it (operation 0, the first CONV_2D).
    run = runFault(Kind::kStuckAccumulatorBit, 31);
    CHECK(run.outcome == FaultOutcome::kDetectedByComparison);
    CHECK(run.detail.find("operation 0 CONV_2D (NPU) output 0") == 0);

    // A job that never retires a descriptor: the watchdog ends it.
    run = runFault(Kind::kStall, 0);
    CHECK(run.outcome == FaultOutcome::kHang);
    CHECK(run.detail.find("NPU error WATCHDOG") == 0);

    // Address bit 31 stuck at 0 in a 256 MB DRAM: every address already has it at 0.
    run = runFault(Kind::kStuckDmaAddressBit, 31, false);
    CHECK(run.outcome == FaultOutcome::kMasked);

    // Address bit 30 stuck at 1: every beat leaves the job's window.
    run = runFault(Kind::kStuckDmaAddressBit, 30, true);
    CHECK(run.outcome == FaultOutcome::kDetectedByNpu);
    CHECK(run.detail.find("NPU error DMA_WINDOW") == 0);

    // The write port: a data bit stuck, a beat dropped; and a PE's weight register.
    CHECK(runFault(Kind::kStuckWriteBit, 7).outcome == FaultOutcome::kDetectedByComparison);
    CHECK(runFault(Kind::kDropWriteBeat, 0, true, 0).outcome ==
          FaultOutcome::kDetectedByComparison);
    CHECK(runFault(Kind::kStuckArrayWeightBit, 7).outcome == FaultOutcome::kDetectedByComparison);
    CHECK(runFault(Kind::kStuckRequantBit, 6).outcome == FaultOutcome::kDetectedByComparison);
}

TEST_CASE("faults_campaign_sample") {
    zoo::ZooConfig config;
    config.precision = zoo::Precision::kQuant8;
    config.inputSize = 32;
    config.widthMultiplier = 0.25f;
    config.numClasses = 10;
    auto model = zoo::buildZooModel(config);
    REQUIRE(model.ok());
    auto inputs = zoo::randomInputs(*model, 1);
    REQUIRE(inputs.ok());
    FaultCampaignOptions options;
    options.count = 40;
    options.seed = 3;
    auto campaign = runFaultCampaign("small", *model, *inputs, options);
    REQUIRE_MESSAGE(campaign.ok(), campaign.status().message);
    MESSAGE("\n" << formatFaultTable(*campaign));
    CHECK(campaign->runs.size() == 40);
    CHECK(campaign->deviceUsableAfter() == 40);
    CHECK(campaign->count(FaultOutcome::kOtherFailure) == 0);
    // Every kind the functional model has is drawn in 40 runs of this seed.
    std::set<Kind> kinds;
    for (const FaultRun& r : campaign->runs) kinds.insert(r.fault.kind);
    CHECK(kinds.size() == campaignFaultKinds(sim::NpuImplementation::kFunctional).size());
    // Repeating one run alone gives its outcome again (faults depend on seed and index only).
    auto again = FaultInjector::create(*model, *inputs, sim::NpuImplementation::kFunctional);
    REQUIRE(again.ok());
    const FaultRun& fifth = campaign->runs[5];
    const FaultRun alone =
        (*again)->run(drawFault(3, 5, sim::NpuImplementation::kFunctional, **again));
    CHECK(alone.outcome == fifth.outcome);
    CHECK(alone.detail == fifth.detail);
    const nlohmann::json json = faultCampaignJson(*campaign);
    CHECK(json["runs"] == 40);
    CHECK(json["faults"].size() == 40);
    CHECK(json["device_usable_after"] == 40);
}
