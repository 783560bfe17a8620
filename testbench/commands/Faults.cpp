// `nncosim faults MODEL --count N --seed S [--npu func|rtl] [--test NAME] [--json FILE]`: a fault
// campaign (testbench/Faults.h): N runs of the model on the NPU, each with one random hardware
// fault, classified as detected by the NPU, detected by comparison, masked or caught by the
// watchdog, with the device checked by a clean run after each.
#include <fstream>
#include <iostream>

#include "model/OutputFile.h"
#include "model/Validation.h"
#include "testbench/Faults.h"
#include "testbench/ModelFiles.h"
#include "testbench/ModelRun.h"
#include "testbench/commands/Commands.h"

namespace nncosim::cli {
namespace {

struct FaultsOptions {
    std::string path;
    std::string test;
    uint32_t count = 100;
    uint32_t seed = 1;
    std::string npu = "func";
    std::string jsonPath;
    bool verbose = false;
};

int runFaults(const FaultsOptions& options) {
    auto file = loadModelFile(options.path);
    if (!file) {
        std::cerr << "nncosim faults: " << file.status().message << "\n";
        return 2;
    }
    auto selected = selectTest(*file, options.test);
    if (!selected) {
        std::cerr << "nncosim faults: " << selected.status().message << "\n";
        return 2;
    }
    const CtsTest& test = **selected;
    if (auto level = validateModel(test.model); !level) {
        std::cerr << "nncosim faults: invalid model: " << level.status().message << "\n";
        return 2;
    }
    std::vector<TensorData> inputs = test.inputs;
    if (inputs.empty() && !test.model.main.inputIndexes.empty()) {
        auto random = randomModelInputs(test.model, options.seed);
        if (!random) {
            std::cerr << "nncosim faults: " << random.status().message << "\n";
            return 2;
        }
        inputs = std::move(*random);
    }
    FaultCampaignOptions campaignOptions;
    campaignOptions.count = options.count;
    campaignOptions.seed = options.seed;
    campaignOptions.npu = platformFor(options.npu).npu;
    campaignOptions.onRun = [&options](const FaultRun& run) {
        if (!options.verbose && run.outcome != FaultOutcome::kOtherFailure && run.deviceUsable)
            return;
        std::cout << "run " << run.index << ": " << describeFault(run.fault) << ": "
                  << outcomeName(run.outcome) << (run.detail.empty() ? "" : ": " + run.detail)
                  << (run.deviceUsable ? "" : "; THE CLEAN RUN AFTER IT FAILED") << "\n";
    };
    std::cout << "fault campaign: " << test.name << " on the " << options.npu << " NPU, "
              << options.count << " runs, seed " << options.seed << "\n";
    auto campaign = runFaultCampaign(test.name, test.model, inputs, campaignOptions);
    if (!campaign) {
        std::cerr << "nncosim faults: " << campaign.status().message << "\n";
        return 2;
    }
    std::cout << "\n" << formatFaultTable(*campaign);
    if (!options.jsonPath.empty()) {
        if (Status written =
                writeOutputFile(options.jsonPath, faultCampaignJson(*campaign).dump(2) + "\n");
            !written.ok()) {
            std::cerr << "nncosim faults: " << written.message << "\n";
            return 2;
        }
        std::cout << "JSON: " << options.jsonPath << "\n";
    }
    // Every outcome is a finding; a device left unusable or a run that failed otherwise is not.
    const bool healthy = campaign->deviceUsableAfter() == campaign->runs.size() &&
                         campaign->count(FaultOutcome::kOtherFailure) == 0;
    return healthy ? 0 : 1;
}

}  // namespace

void addFaultsCommand(CLI::App& app) {
    auto options = std::make_shared<FaultsOptions>();
    CLI::App* cmd = app.add_subcommand(
        "faults",
        "Fault campaign: run a model N times with one random hardware fault each and classify "
        "who noticed (the NPU, the comparison with the golden, nobody, the watchdog)");
    cmd->add_option("model", options->path, "Model file (CTS JSON or .tflite)")->required();
    cmd->add_option("--test", options->test, "Test of the file to run (default: the first)");
    cmd->add_option("--count", options->count, "Runs, one fault each")
        ->check(CLI::Range(1u, 10000000u))
        ->capture_default_str();
    cmd->add_option("--seed", options->seed,
                    "Seed of the faults (and of the inputs when the file has none)")
        ->capture_default_str();
    cmd->add_option("--npu", options->npu,
                    "func: every fault kind, fast; rtl: the RTL's fault ports only (stuck "
                    "write-data bit, dropped write beat, stuck requantizer bit)")
        ->check(CLI::IsMember({"rtl", "func"}))
        ->capture_default_str();
    cmd->add_option("--json", options->jsonPath, "Write the table and every run as JSON");
    cmd->add_flag("-v,--verbose", options->verbose, "Print every run (default: only problems)");
    cmd->callback([options] { gExitStatus = runFaults(*options); });
}

}  // namespace nncosim::cli
