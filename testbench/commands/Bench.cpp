// `nncosim bench golden [--cts PATH] [-j N] [--runs N] [--input-size N] [--no-cts] [--json FILE]`:
// wall time of the whole CTS on the golden (the `nncosim cts` path: runCtsTest on every test,
// -j workers) and of single-threaded inferences of the zoo networks (best of --runs).
// `nncosim bench npu [--model FILE] [--runs N] [--no-rtl] [--cts PATH] [-j N] [--no-cts]
// [--json FILE]`: the functional model against the RTL on one network (MobileNet-v1 224 quant8 by
// default, --backend auto: execution wall time on each, outputs compared), and the whole CTS with
// --backend auto --npu func against the golden (both with -j workers).
#include <time.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <fstream>
#include <iomanip>
#include <iostream>
#include <mutex>
#include <nlohmann/json.hpp>
#include <thread>

#include "golden/Executor.h"
#include "model/CtsReader.h"
#include "model/OutputFile.h"
#include "testbench/Backend.h"
#include "testbench/CtsRunner.h"
#include "testbench/ModelFiles.h"
#include "testbench/ModelRun.h"
#include "testbench/Zoo.h"
#include "testbench/commands/Commands.h"
#include "testbench/runtime/HostRuntime.h"

namespace nncosim::cli {
namespace {

// The figures issue 3 asks the golden to reach on the 2-core reference machine.
constexpr double kCtsTargetSeconds = 60.0;
constexpr double kMobileNetFloatTargetSeconds = 0.5;

struct BenchOptions {
    std::string ctsPath = NNCOSIM_CTS_DIR;
    unsigned jobs = std::max(1u, std::thread::hardware_concurrency());
    unsigned runs = 3;
    uint32_t inputSize = 224;
    bool noCts = false;
    std::string jsonPath;
};

double secondsSince(std::chrono::steady_clock::time_point start) {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

/// CPU seconds of this process or thread: on a shared machine, what the work itself cost.
double cpuSeconds(clockid_t clock) {
    timespec t{};
    clock_gettime(clock, &t);
    return static_cast<double>(t.tv_sec) + 1e-9 * static_cast<double>(t.tv_nsec);
}

struct CtsFigures {
    size_t files = 0, tests = 0, passed = 0, failed = 0, unsupported = 0, unreadable = 0;
    double seconds = 0.0;
    double workerCpuSeconds = 0.0;  ///< of all workers together
};

/// Every test of every file under `path`, on one backend per worker (golden, npu or auto), as
/// `nncosim cts`.
Result<CtsFigures> benchCts(const std::string& path, unsigned jobs,
                            const std::string& backendName = "golden") {
    auto files = findJsonFiles({path});
    if (!files) return files.status();
    CtsFigures figures;
    figures.files = files->size();
    std::atomic<size_t> next{0}, passed{0}, failed{0}, unsupported{0}, unreadable{0};
    const auto start = std::chrono::steady_clock::now();
    const double cpuStart = cpuSeconds(CLOCK_PROCESS_CPUTIME_ID);
    auto worker = [&] {
        auto backend = backendName == "golden" ? makeGoldenBackend()
                       : backendName == "npu"  ? makeNpuBackend()
                                               : makeAutoBackend();
        for (size_t f; (f = next++) < files->size();) {
            auto file = readCtsFile((*files)[f]);
            if (!file) {
                ++unreadable;
                continue;
            }
            for (const CtsTest& test : file->tests) {
                const Verdict v = runCtsTest(*backend, test, (*files)[f]).verdict;
                ++(v == Verdict::PASSED ? passed : v == Verdict::FAILED ? failed : unsupported);
            }
        }
    };
    std::vector<std::thread> threads;
    for (unsigned i = 0; i < jobs; ++i) threads.emplace_back(worker);
    for (auto& t : threads) t.join();
    figures.seconds = secondsSince(start);
    figures.workerCpuSeconds = cpuSeconds(CLOCK_PROCESS_CPUTIME_ID) - cpuStart;
    figures.passed = passed;
    figures.failed = failed;
    figures.unsupported = unsupported;
    figures.unreadable = unreadable;
    figures.tests = figures.passed + figures.failed + figures.unsupported;
    return figures;
}

struct ModelFigures {
    std::string name;
    size_t operations = 0;
    uint64_t macs = 0;
    std::vector<double> seconds;  ///< wall time of each run, sorted
    double bestCpuSeconds = 0.0;  ///< thread CPU time of the fastest run by CPU
    std::string error;            ///< why it could not run; empty when it ran
};

ModelFigures benchModel(const zoo::ZooConfig& config, unsigned runs) {
    ModelFigures figures;
    figures.name = zoo::modelName(config);
    auto model = zoo::buildZooModel(config);
    if (!model) {
        figures.error = model.status().message;
        return figures;
    }
    figures.operations = model->main.operations.size();
    figures.macs = zoo::countMacs(*model);
    auto inputs = zoo::randomInputs(*model, config.seed);
    if (!inputs) {
        figures.error = inputs.status().message;
        return figures;
    }
    for (unsigned r = 0; r < runs; ++r) {
        const auto start = std::chrono::steady_clock::now();
        const double cpuStart = cpuSeconds(CLOCK_THREAD_CPUTIME_ID);
        auto outputs = golden::execute(*model, *inputs);
        const double cpu = cpuSeconds(CLOCK_THREAD_CPUTIME_ID) - cpuStart;
        const double seconds = secondsSince(start);
        if (!outputs) {
            figures.error = outputs.status().message;
            return figures;
        }
        figures.seconds.push_back(seconds);
        figures.bestCpuSeconds = r == 0 ? cpu : std::min(figures.bestCpuSeconds, cpu);
    }
    std::sort(figures.seconds.begin(), figures.seconds.end());
    return figures;
}

int runBenchGolden(const BenchOptions& options) {
    nlohmann::json report = {{"backend", "golden"},
                             {"hardware_threads", std::thread::hardware_concurrency()}};
    bool ok = true;
    std::cout << std::fixed;
    if (!options.noCts) {
        std::cerr << "running every CTS test under " << options.ctsPath << " with " << options.jobs
                  << " workers...\n";
        auto cts = benchCts(options.ctsPath, options.jobs);
        if (!cts) {
            std::cerr << "nncosim bench: " << cts.status().message << "\n";
            return 2;
        }
        std::cout << "CTS " << options.ctsPath << ": " << cts->tests << " tests in " << cts->files
                  << " files (" << cts->passed << " passed, " << cts->failed << " failed, "
                  << cts->unsupported << " unsupported"
                  << (cts->unreadable ? ", " + std::to_string(cts->unreadable) + " files unreadable"
                                      : "")
                  << ") in " << std::setprecision(1) << cts->seconds << " s wall with -j "
                  << options.jobs << ", " << cts->workerCpuSeconds << " s CPU (target < "
                  << kCtsTargetSeconds << " s wall)\n";
        report["cts"] = {{"path", options.ctsPath},
                         {"jobs", options.jobs},
                         {"files", cts->files},
                         {"tests", cts->tests},
                         {"passed", cts->passed},
                         {"failed", cts->failed},
                         {"unsupported", cts->unsupported},
                         {"unreadable_files", cts->unreadable},
                         {"seconds", cts->seconds},
                         {"cpu_seconds", cts->workerCpuSeconds},
                         {"target_seconds", kCtsTargetSeconds}};
    }

    // One inference at a time on this thread: the golden itself is single-threaded.
    struct Case {
        zoo::Network network;
        zoo::Precision precision;
    };
    const Case cases[] = {{zoo::Network::kMobileNetV1, zoo::Precision::kFloat32},
                          {zoo::Network::kMobileNetV1, zoo::Precision::kQuant8},
                          {zoo::Network::kMobileNetV1, zoo::Precision::kQuant8PerChannel},
                          {zoo::Network::kMobileNetV2, zoo::Precision::kFloat32},
                          {zoo::Network::kMobileNetV2, zoo::Precision::kQuant8},
                          {zoo::Network::kResNet18, zoo::Precision::kFloat32},
                          {zoo::Network::kResNet18, zoo::Precision::kQuant8}};
    std::cout << "\n"
              << std::left << std::setw(40) << "model (one inference, 1 thread)" << std::right
              << std::setw(5) << "ops" << std::setw(10) << "GMAC" << std::setw(10) << "best s"
              << std::setw(10) << "median s" << std::setw(10) << "CPU s" << std::setw(10)
              << "GMAC/s"
              << "\n";
    nlohmann::json models = nlohmann::json::array();
    for (const Case& c : cases) {
        zoo::ZooConfig config;
        config.network = c.network;
        config.precision = c.precision;
        config.inputSize = options.inputSize;
        const ModelFigures m = benchModel(config, options.runs);
        std::cout << std::left << std::setw(40) << m.name << std::right;
        if (!m.error.empty()) {
            ok = false;
            std::cout << "  failed: " << m.error << "\n";
            models.push_back({{"name", m.name}, {"error", m.error}});
            continue;
        }
        const double best = m.seconds.front(), median = m.seconds[m.seconds.size() / 2];
        const double gmac = static_cast<double>(m.macs) * 1e-9;
        std::cout << std::setw(5) << m.operations << std::setw(10) << std::setprecision(3) << gmac
                  << std::setw(10) << best << std::setw(10) << median << std::setw(10)
                  << m.bestCpuSeconds << std::setw(10) << std::setprecision(2) << gmac / best;
        const bool targeted = c.network == zoo::Network::kMobileNetV1 &&
                              c.precision == zoo::Precision::kFloat32 && options.inputSize == 224;
        if (targeted)
            std::cout << "  (target < " << std::setprecision(1) << kMobileNetFloatTargetSeconds
                      << " s)";
        std::cout << "\n";
        nlohmann::json entry = {{"name", m.name},
                                {"operations", m.operations},
                                {"macs", m.macs},
                                {"runs", m.seconds},
                                {"best_seconds", best},
                                {"median_seconds", median},
                                {"best_cpu_seconds", m.bestCpuSeconds}};
        if (targeted) entry["target_seconds"] = kMobileNetFloatTargetSeconds;
        models.push_back(std::move(entry));
    }
    report["models"] = std::move(models);

    if (!options.jsonPath.empty()) {
        if (Status written = writeOutputFile(options.jsonPath, report.dump(2) + "\n");
            !written.ok()) {
            std::cerr << "nncosim bench: " << written.message << "\n";
            return 2;
        }
    }
    return ok ? 0 : 1;
}

std::string withCommas(uint64_t v) {
    std::string s = std::to_string(v);
    for (int i = static_cast<int>(s.size()) - 3; i > 0; i -= 3)
        s.insert(static_cast<size_t>(i), ",");
    return s;
}

struct NpuBenchOptions {
    std::string modelPath;  ///< empty: MobileNet-v1 quant8 from the zoo
    uint32_t inputSize = 224;
    unsigned runs = 3;     ///< executions on the functional model (best and median)
    unsigned rtlRuns = 1;  ///< executions on the RTL
    bool noRtl = false;
    bool noCts = false;
    std::string ctsPath = NNCOSIM_CTS_DIR;
    unsigned jobs = 2;
    std::string jsonPath;
};

// The figures issue 11 asks the functional model to reach on the 2-core reference machine.
constexpr double kFuncSpeedupTarget = 100.0;
constexpr double kFuncCtsTargetRatio = 2.0;

struct NpuRunFigures {
    double prepareSeconds = 0.0;
    std::vector<double> seconds;  ///< wall time of each execution, sorted
    double bestCpuSeconds = 0.0;
    uint64_t npuCycles = 0;
    std::vector<TensorData> outputs;
    std::string error;
};

/// Prepares `model` with --backend auto on `npu` and executes it `runs` times.
NpuRunFigures benchNpuRuns(const Model& model, const std::vector<TensorData>& inputs,
                           const sim::PlatformConfig& config, unsigned runs) {
    NpuRunFigures f;
    auto npu = makeNpuContext(config);
    if (!npu) {
        f.error = npu.status().message;
        return f;
    }
    RuntimeOptions options;
    options.placement = Placement::kAuto;
    options.npu = *npu;
    const auto start = std::chrono::steady_clock::now();
    auto runtime = HostRuntime::create(model, options);
    f.prepareSeconds = secondsSince(start);
    if (!runtime) {
        f.error = runtime.status().message;
        return f;
    }
    for (unsigned r = 0; r < runs; ++r) {
        ExecutionRecord record;
        const auto t = std::chrono::steady_clock::now();
        // The driver executes on threads of its own: the process's CPU time.
        const double cpu = cpuSeconds(CLOCK_PROCESS_CPUTIME_ID);
        auto outputs = (*runtime)->execute(inputs, &record);
        const double cpuUsed = cpuSeconds(CLOCK_PROCESS_CPUTIME_ID) - cpu;
        f.seconds.push_back(secondsSince(t));
        if (!outputs) {
            f.error = outputs.status().message;
            return f;
        }
        f.bestCpuSeconds = r == 0 ? cpuUsed : std::min(f.bestCpuSeconds, cpuUsed);
        f.npuCycles = record.npuCycles;
        f.outputs = std::move(*outputs);
    }
    std::sort(f.seconds.begin(), f.seconds.end());
    return f;
}

nlohmann::json runJson(const NpuRunFigures& f) {
    return {{"prepare_seconds", f.prepareSeconds},
            {"execute_seconds", f.seconds},
            {"best_execute_seconds", f.seconds.empty() ? 0.0 : f.seconds.front()},
            {"best_cpu_seconds", f.bestCpuSeconds},
            {"npu_cycles", f.npuCycles}};
}

int runBenchNpu(const NpuBenchOptions& options) {
    std::cout << std::fixed;
    nlohmann::json report = {{"hardware_threads", std::thread::hardware_concurrency()}};
    bool ok = true;

    // One network on both implementations.
    Model model;
    std::vector<TensorData> inputs;
    std::string name;
    if (options.modelPath.empty()) {
        zoo::ZooConfig config;
        config.network = zoo::Network::kMobileNetV1;
        config.precision = zoo::Precision::kQuant8;
        config.inputSize = options.inputSize;
        auto built = zoo::buildZooModel(config);
        if (!built) {
            std::cerr << "nncosim bench: " << built.status().message << "\n";
            return 2;
        }
        model = std::move(*built);
        auto random = zoo::randomInputs(model, config.seed ^ 0x9e3779b9u);
        if (!random) {
            std::cerr << "nncosim bench: " << random.status().message << "\n";
            return 2;
        }
        inputs = std::move(*random);
        name = zoo::modelName(config);
    } else {
        auto file = loadModelFile(options.modelPath, nullptr);
        if (!file) {
            std::cerr << "nncosim bench: " << file.status().message << "\n";
            return 2;
        }
        auto test = selectTest(*file, "");
        if (!test) {
            std::cerr << "nncosim bench: " << test.status().message << "\n";
            return 2;
        }
        model = (*test)->model;
        inputs = (*test)->inputs;
        name = (*test)->name;
        if (inputs.size() != model.main.inputIndexes.size()) {
            auto random = randomModelInputs(model, 1);
            if (!random) {
                std::cerr << "nncosim bench: " << random.status().message << "\n";
                return 2;
            }
            inputs = std::move(*random);
        }
    }
    std::cerr << "running " << name << " (--backend auto) on the functional model...\n";
    sim::PlatformConfig funcConfig;
    funcConfig.npu = sim::NpuImplementation::kFunctional;
    const NpuRunFigures func = benchNpuRuns(model, inputs, funcConfig, options.runs);
    if (!func.error.empty()) {
        std::cerr << "nncosim bench: functional model: " << func.error << "\n";
        return 2;
    }
    std::cout << name << ", --backend auto\n";
    std::cout << "  --npu func: prepare " << std::setprecision(3) << func.prepareSeconds
              << " s, execute best " << func.seconds.front() << " s, median "
              << func.seconds[func.seconds.size() / 2] << " s (" << func.bestCpuSeconds
              << " s CPU), " << withCommas(func.npuCycles) << " estimated NPU cycles\n";
    nlohmann::json network = {{"name", name}, {"func", runJson(func)}};
    if (!options.noRtl) {
        std::cerr << "running " << name << " (--backend auto) on the RTL...\n";
        const NpuRunFigures rtl =
            benchNpuRuns(model, inputs, sim::PlatformConfig{}, std::max(1u, options.rtlRuns));
        if (!rtl.error.empty()) {
            std::cerr << "nncosim bench: RTL: " << rtl.error << "\n";
            return 2;
        }
        const bool identical =
            rtl.outputs.size() == func.outputs.size() &&
            std::equal(rtl.outputs.begin(), rtl.outputs.end(), func.outputs.begin(),
                       [](const auto& a, const auto& b) { return a.bytes == b.bytes; });
        ok = ok && identical;
        const double speedup = rtl.seconds.front() / func.seconds.front();
        std::cout << "  --npu rtl:  prepare " << std::setprecision(3) << rtl.prepareSeconds
                  << " s, execute " << rtl.seconds.front() << " s (" << rtl.bestCpuSeconds
                  << " s CPU), " << withCommas(rtl.npuCycles) << " measured NPU cycles\n";
        std::cout << "  functional model " << std::setprecision(1) << speedup
                  << "x faster than the RTL (execution; target >= " << kFuncSpeedupTarget << "x), "
                  << rtl.seconds.front() / (func.seconds.front() + func.prepareSeconds)
                  << "x with its preparation; outputs " << (identical ? "identical" : "DIFFER")
                  << "; estimated cycles " << std::setprecision(3)
                  << static_cast<double>(func.npuCycles) / static_cast<double>(rtl.npuCycles)
                  << " of the measured\n";
        network["rtl"] = runJson(rtl);
        network["speedup"] = speedup;
        network["speedup_target"] = kFuncSpeedupTarget;
        network["outputs_identical"] = identical;
    }
    report["network"] = std::move(network);

    if (!options.noCts) {
        // The process's NPU is the functional model for the auto backend's workers.
        if (auto npu = openNpu(funcConfig); !npu) {
            std::cerr << "nncosim bench: " << npu.status().message << "\n";
            return 2;
        }
        std::cerr << "running every CTS test under " << options.ctsPath << " on the golden, then "
                  << "--backend auto --npu func, -j " << options.jobs << "...\n";
        auto golden = benchCts(options.ctsPath, options.jobs, "golden");
        auto automatic = golden ? benchCts(options.ctsPath, options.jobs, "auto") : golden;
        if (!automatic) {
            std::cerr << "nncosim bench: " << automatic.status().message << "\n";
            return 2;
        }
        const double ratio = automatic->seconds / golden->seconds;
        std::cout << "CTS " << options.ctsPath << ", -j " << options.jobs << ": " << golden->tests
                  << " tests\n"
                  << "  golden:                  " << std::setprecision(1) << golden->seconds
                  << " s wall, " << golden->workerCpuSeconds << " s CPU, " << golden->failed
                  << " failed\n"
                  << "  --backend auto --npu func: " << automatic->seconds << " s wall, "
                  << automatic->workerCpuSeconds << " s CPU, " << automatic->failed << " failed\n"
                  << "  ratio " << std::setprecision(2) << ratio
                  << " (target <= " << kFuncCtsTargetRatio << ")\n";
        const auto ctsJson = [](const CtsFigures& c) {
            return nlohmann::json{{"tests", c.tests},     {"passed", c.passed},
                                  {"failed", c.failed},   {"unsupported", c.unsupported},
                                  {"seconds", c.seconds}, {"cpu_seconds", c.workerCpuSeconds}};
        };
        report["cts"] = {{"path", options.ctsPath},
                         {"jobs", options.jobs},
                         {"golden", ctsJson(*golden)},
                         {"auto_func", ctsJson(*automatic)},
                         {"ratio", ratio},
                         {"ratio_target", kFuncCtsTargetRatio}};
    }
    if (!options.jsonPath.empty()) {
        if (Status written = writeOutputFile(options.jsonPath, report.dump(2) + "\n");
            !written.ok()) {
            std::cerr << "nncosim bench: " << written.message << "\n";
            return 2;
        }
    }
    return ok ? 0 : 1;
}

}  // namespace

void addBenchCommand(CLI::App& app) {
    CLI::App* bench = app.add_subcommand("bench", "Benchmarks that print figures");
    bench->require_subcommand(1);
    auto options = std::make_shared<BenchOptions>();
    CLI::App* golden =
        bench->add_subcommand("golden", "Wall time of the CTS and of zoo networks on the golden");
    golden->add_option("--cts", options->ctsPath, "CTS JSON files or folder")
        ->capture_default_str();
    golden->add_option("-j,--jobs", options->jobs, "Parallel CTS workers")
        ->check(CLI::Range(1u, 256u));
    golden->add_option("--runs", options->runs, "Inferences per network (best and median reported)")
        ->check(CLI::Range(1u, 1000u));
    golden->add_option("--input-size", options->inputSize, "Input height and width of the networks")
        ->check(CLI::Range(1u, 4096u));
    golden->add_flag("--no-cts", options->noCts, "Only the networks");
    golden->add_option("--json", options->jsonPath, "Write the figures as JSON");
    golden->callback([options] { gExitStatus = runBenchGolden(*options); });

    auto npuOptions = std::make_shared<NpuBenchOptions>();
    CLI::App* npu = bench->add_subcommand(
        "npu",
        "The functional model against the RTL on a network, and the CTS with --backend auto "
        "--npu func against the golden");
    npu->add_option("--model", npuOptions->modelPath,
                    "Model file (default: MobileNet-v1 quant8 from the zoo)");
    npu->add_option("--input-size", npuOptions->inputSize, "Input size of the zoo network")
        ->check(CLI::Range(1u, 4096u));
    npu->add_option("--runs", npuOptions->runs, "Executions on the functional model")
        ->check(CLI::Range(1u, 1000u));
    npu->add_option("--rtl-runs", npuOptions->rtlRuns, "Executions on the RTL")
        ->check(CLI::Range(1u, 100u));
    npu->add_flag("--no-rtl", npuOptions->noRtl, "Skip the RTL run");
    npu->add_option("--cts", npuOptions->ctsPath, "CTS JSON files or folder")
        ->capture_default_str();
    npu->add_option("-j,--jobs", npuOptions->jobs, "Parallel CTS workers")
        ->check(CLI::Range(1u, 256u))
        ->capture_default_str();
    npu->add_flag("--no-cts", npuOptions->noCts, "Only the network");
    npu->add_option("--json", npuOptions->jsonPath, "Write the figures as JSON");
    npu->callback([npuOptions] { gExitStatus = runBenchNpu(*npuOptions); });
}

}  // namespace nncosim::cli
