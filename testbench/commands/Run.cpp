// `nncosim run MODEL.json|.tflite [--backend npu|auto|golden] [--npu rtl|func]
// [--compare golden|none] [--waves DIR] [--json FILE] [--inputs file|random | --input FILE...]
// [--seed S] [--save-outputs DIR] [--fault SPEC] [--cosim] [--rtl-from OP]
// [--preference low-power|fast-single-answer|sustained-speed]`: runs one model
// through the host runtime, compares it with the golden, names the first diverging operation
// and dumps its waves (ModelRun.h).
#include <filesystem>
#include <fstream>
#include <iostream>
#include <optional>

#include "model/OutputFile.h"
#include "model/Validation.h"
#include "testbench/ModelFiles.h"
#include "testbench/ModelRun.h"
#include "testbench/TensorFiles.h"
#include "testbench/commands/Commands.h"

namespace nncosim::cli {
namespace {

// Cycles dumped after the run when the trace window reaches further: the NPU is idle by then.
constexpr uint64_t kIdleTraceCycles = 1000;

struct RunCommandOptions {
    std::string path;
    std::string test;
    std::string backend = "auto";
    std::string preference = "fast-single-answer";
    std::string compare = "golden";
    std::string wavesDir;
    std::string jsonPath;
    std::string inputs = "file";
    std::vector<std::string> inputFiles;  ///< --input: one per model input
    std::string saveOutputsDir;
    uint32_t seed = 1;
    std::string fault;
    uint64_t sampleCycles = 256;
    std::string tracePath;
    uint64_t traceCycles = 0;
    uint64_t traceStart = 0;
    uint64_t memoryLimitBytes = kDefaultMemoryLimitBytes;
    std::string npu = "rtl";
    uint32_t dramBytesPerCycle = 16;
    bool cosim = false;
    std::string rtlFrom;
};

Placement placementOf(const std::string& backend) {
    return backend == "golden" ? Placement::kGolden
           : backend == "npu"  ? Placement::kNpu
                               : Placement::kAuto;
}

/// Writes output_<i>.npy (the device's) and golden_<i>.npy (when compared) into `dir`; returns
/// the paths written, or the failure.
Result<nlohmann::json> saveOutputs(const std::string& dir, const Model& model,
                                   const RunReport& report) {
    std::error_code ec;
    std::filesystem::create_directories(dir, ec);
    if (ec) return invalidArgument("cannot create ", dir, ": ", ec.message());
    nlohmann::json saved = {{"device", nlohmann::json::array()},
                            {"golden", nlohmann::json::array()}};
    auto save = [&](const char* stem, const std::vector<TensorData>& values,
                    nlohmann::json& list) -> Status {
        for (size_t i = 0; i < values.size(); ++i) {
            const OperandType type = model.main.operands[model.main.outputIndexes[i]].type;
            const std::string path =
                (std::filesystem::path(dir) / (stem + std::to_string(i) + ".npy")).string();
            if (Status st = writeTensorFile(path, type, values[i]); !st.ok()) return st;
            list.push_back(path);
        }
        return okStatus();
    };
    if (Status st = save("output_", report.outputValues, saved["device"]); !st.ok()) return st;
    if (Status st = save("golden_", report.goldenValues, saved["golden"]); !st.ok()) return st;
    return saved;
}

int runRun(const RunCommandOptions& options) {
    std::vector<std::string> notes;
    std::vector<std::string> inputNames;
    auto file = loadModelFile(options.path, &notes, &inputNames);
    if (!file) {
        std::cerr << "nncosim run: " << file.status().message << "\n";
        return 2;
    }
    for (const std::string& note : notes) std::cerr << "note: " << note << "\n";
    auto selected = selectTest(*file, options.test);
    if (!selected) {
        std::cerr << "nncosim run: " << selected.status().message << "\n";
        return 2;
    }
    const CtsTest* test = *selected;
    if (auto level = validateModel(test->model); !level) {
        std::cerr << "nncosim run: invalid model: " << level.status().message << "\n";
        return 2;
    }
    if (Status st = checkMemoryLimit(test->model, options.memoryLimitBytes); !st.ok()) {
        std::cerr << "nncosim run: " << st.message << "\n";
        return 2;
    }

    // Inputs: the --input files, else the file's when it has them, else random from the seed.
    std::vector<TensorData> inputs = test->inputs;
    const bool fileHasInputs = !inputs.empty() || test->model.main.inputIndexes.empty();
    const bool fromFiles = !options.inputFiles.empty();
    const bool randomInputs = !fromFiles && (options.inputs == "random" || !fileHasInputs);
    std::vector<std::string> inputArgs = {"--inputs", randomInputs ? "random" : "file"};
    if (fromFiles) {
        auto read = readInputFiles(test->model, options.inputFiles, inputNames);
        if (!read) {
            std::cerr << "nncosim run: " << read.status().message << "\n";
            return 2;
        }
        inputs = std::move(*read);
        inputArgs.clear();
        std::cout << "inputs:";
        for (const std::string& path : options.inputFiles) {
            std::cout << " " << path;
            inputArgs.push_back("--input");
            inputArgs.push_back(std::filesystem::absolute(path).string());
        }
        std::cout << "\n";
    } else if (randomInputs) {
        auto random = randomModelInputs(test->model, options.seed);
        if (!random) {
            std::cerr << "nncosim run: " << random.status().message << "\n";
            return 2;
        }
        inputs = std::move(*random);
        std::cout << "inputs: random, seed " << options.seed
                  << (options.inputs == "random" ? "" : " (the file has none)") << "\n";
    }

    // The platform is configured once per process: faults and the trace window go in first.
    sim::PlatformConfig platform = platformFor(options.npu);
    const bool functional = platform.npu == sim::NpuImplementation::kFunctional;
    if (!setDramBandwidth(platform, options.dramBytesPerCycle, "nncosim run")) return 2;
    if (functional && (options.cosim || !options.rtlFrom.empty())) {
        std::cerr << "nncosim run: " << (options.cosim ? "--cosim" : "--rtl-from")
                  << " runs the RTL beside the functional model: it needs --npu rtl\n";
        return 2;
    }
    if ((options.cosim || !options.rtlFrom.empty()) && options.backend == "golden") {
        std::cerr << "nncosim run: " << (options.cosim ? "--cosim" : "--rtl-from")
                  << " needs the NPU (--backend npu or auto)\n";
        return 2;
    }
    std::optional<uint32_t> rtlFrom;
    if (!options.rtlFrom.empty()) {
        auto op = resolveOperation(test->model, options.rtlFrom);
        if (!op) {
            std::cerr << "nncosim run: " << op.status().message << "\n";
            return 2;
        }
        rtlFrom = *op;
    }
    platform.cosim.enabled = options.cosim || rtlFrom.has_value();
    platform.cosim.lockstep = options.cosim;
    if (functional && (!options.fault.empty() || !options.tracePath.empty())) {
        std::cerr << "nncosim run: " << (options.fault.empty() ? "--trace" : "--fault")
                  << " needs the RTL (--npu rtl): the functional model has no signals and no "
                     "injected faults\n";
        return 2;
    }
    RunOptions run;
    run.cosim = options.cosim;
    run.rtlFrom = rtlFrom;
    run.placement = placementOf(options.backend);
    run.preference = *preferenceFromName(options.preference);  // checked by the option
    run.compareGolden = options.compare == "golden";
    run.wavesDir = options.wavesDir;
    run.sampleCycles = options.sampleCycles;
    run.rerunArgs = {options.path,
                     "--test",
                     test->name,
                     "--backend",
                     options.backend,
                     "--preference",
                     options.preference,
                     "--compare",
                     options.compare,
                     "--seed",
                     std::to_string(options.seed),
                     "--sample-cycles",
                     std::to_string(options.sampleCycles)};
    run.rerunArgs.insert(run.rerunArgs.end(), inputArgs.begin(), inputArgs.end());
    // The waves' child process sees the same memory system.
    run.childArgs = {"--dram-bytes-per-cycle", std::to_string(options.dramBytesPerCycle)};
    // The waves of a divergence come from the RTL (a child process): the functional model's
    // estimated cycles cannot place a window inside a repetition of this run.
    if (functional) run.rerunArgs.clear();
    if (!options.fault.empty()) {
        auto fault = parseFaultSpec(options.fault);
        if (!fault) {
            std::cerr << "nncosim run: " << fault.status().message << "\n";
            return 2;
        }
        platform.fault = *fault;
        run.childArgs.insert(run.childArgs.end(), {"--fault", options.fault});
    }
    // Output files that cannot be written are refused before the run, not after it.
    for (const std::string* path : {&options.tracePath, &options.jsonPath}) {
        if (path->empty()) continue;
        if (Status st = checkOutputPath(*path); !st.ok()) {
            std::cerr << "nncosim run: " << st.message << "\n";
            return 2;
        }
    }
    if (!options.tracePath.empty()) {
        if (run.placement == Placement::kGolden) {
            std::cerr << "nncosim run: --trace needs the NPU (--backend npu or auto)\n";
            return 2;
        }
        platform.trace.enabled = true;
        platform.trace.path = options.tracePath;
        const bool vcd = options.tracePath.size() > 4 &&
                         options.tracePath.compare(options.tracePath.size() - 4, 4, ".vcd") == 0;
        platform.trace.format =
            vcd ? sim::TraceOptions::Format::kVcd : sim::TraceOptions::Format::kFst;
        if (options.traceStart > 0) {
            platform.trace.startCycle = options.traceStart;
            platform.trace.stopCycle = options.traceStart + options.traceCycles;
        } else {
            platform.trace.startEvent = "doorbell";
            platform.trace.stopCycle = options.traceCycles;
        }
        run.findDivergence = false;  // this process dumps one window; it does not look for another
    }
    if (run.placement != Placement::kGolden) {
        auto npu = openNpu(platform);
        if (!npu) {
            std::cerr << "nncosim run: cannot open the NPU: " << npu.status().message << "\n";
            return 2;
        }
    }

    auto report = runModel(test->name, test->model, inputs, run);
    if (!report) {
        std::cerr << "nncosim run: " << nameOf(report.status().code) << ": "
                  << report.status().message << "\n";
        return 2;
    }
    if (!options.tracePath.empty()) {
        // Run the device to the end of the window so that the dump is complete and closed.
        auto npu = openNpu();
        std::optional<uint64_t> end;
        if (options.traceStart > 0) end = options.traceStart + options.traceCycles;
        for (const PartitionRecord& p : report->record.partitions) {
            if (p.job && !end) end = p.job->startCycle + options.traceCycles;
        }
        const uint64_t now = (*npu)->hardware->cycleCount();
        if (end && now < *end + 2) {
            // An idle NPU has nothing more to show: the dump ends shortly after the run.
            const uint64_t stop = std::min(*end + 2, now + kIdleTraceCycles);
            if (stop < *end + 2)
                std::cerr << "note: the run ended at cycle " << now << "; the dump stops at cycle "
                          << stop << ", not at the window's end " << *end << "\n";
            (*npu)->hardware->advance(stop - now);
        }
        // A VCD is converted from its FST (path.fst) when the dump closes.
        if (!std::filesystem::exists(options.tracePath) &&
            !std::filesystem::exists(options.tracePath + ".fst")) {
            std::cerr << "nncosim run: --trace " << options.tracePath
                      << ": nothing was dumped (the window starts at cycle "
                      << (options.traceStart ? options.traceStart : 0)
                      << (options.traceStart ? "" : " of the first doorbell")
                      << ", the run ended at cycle " << (*npu)->hardware->cycleCount() << ")\n";
            return 2;
        }
    }
    std::cout << formatReport(*report);
    nlohmann::json json = reportJson(*report);
    if (!options.saveOutputsDir.empty()) {
        auto saved = saveOutputs(options.saveOutputsDir, test->model, *report);
        if (!saved) {
            std::cerr << "nncosim run: cannot save the outputs: " << saved.status().message << "\n";
            return 2;
        }
        std::cout << "saved:";
        for (const auto* list : {&(*saved)["device"], &(*saved)["golden"]})
            for (const auto& path : *list) std::cout << " " << path.get<std::string>();
        std::cout << "\n";
        json["saved_outputs"] = std::move(*saved);
    }
    if (!options.jsonPath.empty()) {
        if (Status written = writeOutputFile(options.jsonPath, json.dump(2) + "\n");
            !written.ok()) {
            std::cerr << "nncosim run: " << written.message << "\n";
            return 2;
        }
    }
    return report->passed() ? 0 : 1;
}

}  // namespace

void addRunCommand(CLI::App& app) {
    auto options = std::make_shared<RunCommandOptions>();
    CLI::App* cmd = app.add_subcommand(
        "run", "Run one model, compare it with the golden, localize divergences");
    cmd->add_option("model", options->path, "Model file (CTS JSON or .tflite)")->required();
    cmd->add_option("--test", options->test, "Test of the file to run (default: the first)");
    cmd->add_option("--backend", options->backend,
                    "Where the model runs (auto: NPU where supported, CPU elsewhere)")
        ->check(CLI::IsMember({"npu", "auto", "golden"}))
        ->capture_default_str();
    cmd->add_option("--preference", options->preference,
                    "The application's ExecutionPreference: with --backend auto an operation "
                    "runs on the NPU only when the driver's powerUsage (low-power) or execTime "
                    "(the others) for it is below the CPU's, as Android's runtime decides")
        ->check(CLI::IsMember({"low-power", "fast-single-answer", "sustained-speed"}))
        ->capture_default_str();
    cmd->add_option("--compare", options->compare, "Reference the outputs are compared with")
        ->check(CLI::IsMember({"golden", "none"}))
        ->capture_default_str();
    cmd->add_option(
        "--waves", options->wavesDir,
        "On a divergence on the NPU, dump the diverging operation's waves (FST + .gtkw) here");
    cmd->add_option("--json", options->jsonPath, "Write the report as JSON");
    auto* inputs = cmd->add_option("--inputs", options->inputs,
                                   "Inputs: the file's (random when it has none) or random")
                       ->check(CLI::IsMember({"file", "random"}))
                       ->capture_default_str();
    cmd->add_option("--input", options->inputFiles,
                    "Input values, one file per model input in order: .npy (the input's dtype "
                    "and shape) or raw bytes of exactly the input's size")
        ->excludes(inputs);
    cmd->add_option("--save-outputs", options->saveOutputsDir,
                    "Write output_<i>.npy (device) and golden_<i>.npy (when compared) here");
    cmd->add_option("--seed", options->seed, "Seed of random inputs")->capture_default_str();
    addMemoryLimitOption(*cmd, options->memoryLimitBytes);
    addNpuOption(*cmd, options->npu);
    addDramOption(*cmd, options->dramBytesPerCycle);
    cmd->add_flag("--cosim", options->cosim,
                  "Lockstep co-simulation: the RTL and the functional model run the same jobs, "
                  "compared after every retired descriptor; the first difference is reported "
                  "with its descriptor's waves (into --waves DIR, default waves)");
    cmd->add_option("--rtl-from", options->rtlFrom,
                    "Fast-forward: operations before OP run on the functional model, the RTL from "
                    "OP on (OP: an operation index, TYPE or TYPE:N, N-th of the type from 0, "
                    "negative from the end)");
    cmd->add_option(
        "--fault", options->fault,
        "Make the hardware misbehave: write-bit:N[=0|1] (bit N of the NPU's DRAM write data stuck "
        "at 1 or 0), requant-bit:N[=0|1] (bit N of every requantized word stuck: a datapath "
        "fault) or drop-write-beat:N (the N-th DRAM write beat of every job is lost)");
    cmd->add_option("--sample-cycles", options->sampleCycles,
                    "Attribute NPU counters to operations every N cycles (0: per partition only)")
        ->capture_default_str();
    auto* trace =
        cmd->add_option("--trace", options->tracePath,
                        "Dump the NPU's waves (FST, or VCD by extension) from the first doorbell");
    cmd->add_option("--trace-cycles", options->traceCycles, "Cycles dumped from the first doorbell")
        ->check(CLI::Range(uint64_t{1}, uint64_t{1} << 40))
        ->needs(trace);
    trace->needs("--trace-cycles");
    cmd->add_option("--trace-start", options->traceStart,
                    "Dump from this platform cycle instead of from the first doorbell")
        ->needs(trace);
    cmd->callback([options] { gExitStatus = runRun(*options); });
}

}  // namespace nncosim::cli
