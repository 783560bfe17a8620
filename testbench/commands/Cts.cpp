// `nncosim cts [--backend ...] [--summary FILE.json] [--junit FILE.xml] [-j N]
// [--preference low-power|fast-single-answer|sustained-speed] [--per-operation N] PATH...`: runs
// every test of the CTS JSON files under PATH and judges it by the CTS accuracy rule.
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <iomanip>
#include <iostream>
#include <map>
#include <mutex>
#include <nlohmann/json.hpp>
#include <set>
#include <thread>

#include "model/CtsReader.h"
#include "testbench/Backend.h"
#include "testbench/CtsRunner.h"
#include "testbench/JUnit.h"
#include "testbench/commands/Commands.h"
#include "testbench/runtime/HostRuntime.h"
#include "testbench/runtime/Partitioner.h"

namespace nncosim::cli {
namespace {

struct CtsOptions {
    std::vector<std::string> paths;
    std::string backend = "golden";
    std::string summaryPath;
    std::string junitPath;
    unsigned jobs = std::max(1u, std::thread::hardware_concurrency());
    bool verbose = false;
    uint64_t memoryLimitBytes = kDefaultMemoryLimitBytes;
    std::string execution = "sync";  // npu backend: a HAL execution path, or all
    std::string memory = "shared";   // npu backend: shared, device, or all
    std::string npu = "rtl";
    uint32_t dramBytesPerCycle = 16;
    std::string preference = "fast-single-answer";  // npu and auto backends
    unsigned perOperation = 0;  // > 0: only a sample, this many supported tests per operation
};

struct Tally {
    size_t passed = 0, failed = 0, unsupported = 0;
    void add(Verdict v) {
        (v == Verdict::PASSED ? passed : v == Verdict::FAILED ? failed : unsupported)++;
    }
    size_t total() const { return passed + failed + unsupported; }
};

// The backends every test runs on: one, or for the npu backend one per execution path and
// request memory asked for.
std::vector<std::unique_ptr<Backend>> makeBackends(const CtsOptions& options) {
    std::vector<std::unique_ptr<Backend>> backends;
    const ExecutionPreference preference = *preferenceFromName(options.preference);  // checked
    if (options.backend == "golden") backends.push_back(makeGoldenBackend());
    if (options.backend == "auto") backends.push_back(makeAutoBackend(preference));
    if (options.backend != "npu") return backends;
    for (ExecutionPath path : {ExecutionPath::SYNC, ExecutionPath::ASYNC, ExecutionPath::FENCED,
                               ExecutionPath::BURST, ExecutionPath::REUSABLE}) {
        if (options.execution != "all" && options.execution != nameOf(path)) continue;
        for (RequestMemory memory : {RequestMemory::SHARED, RequestMemory::DEVICE}) {
            if (options.memory == "all" || options.memory == nameOf(memory))
                backends.push_back(makeNpuBackend(path, memory, preference));
        }
    }
    return backends;
}

// A test on every backend: the first failure, else unsupported if one does not support it.
CtsTestResult runOnEach(const std::vector<std::unique_ptr<Backend>>& backends, const CtsTest& test,
                        const std::string& file, uint64_t memoryLimitBytes) {
    CtsTestResult combined;
    for (const auto& backend : backends) {
        CtsTestResult r =
            runCtsTest(*backend, test, file, kDefaultLoopTimeoutDuration, memoryLimitBytes);
        if (backends.size() > 1 && r.verdict == Verdict::FAILED)
            r.message = backend->name() + ": " + r.message;
        const double seconds = combined.seconds + r.seconds;
        if (&backend == &backends.front() || r.verdict == Verdict::FAILED ||
            (r.verdict == Verdict::UNSUPPORTED && combined.verdict == Verdict::PASSED))
            combined = std::move(r);
        combined.seconds = seconds;
        if (combined.verdict == Verdict::FAILED) break;
    }
    return combined;
}

// The sample --per-operation N picks: in file order, each test the backend supports that
// exercises an operation type in a numerics class (testNumerics: float, quantized, integer)
// fewer than N picked tests exercise yet (a test counts for every operation type it
// exercises). By file, the indexes of the picked tests.
std::vector<std::set<size_t>> pickSample(const CtsOptions& options,
                                         const std::vector<std::string>& files) {
    std::vector<std::set<size_t>> picked(files.size());
    const auto backends = makeBackends(options);
    std::map<std::pair<OperationType, std::string>, unsigned> covered;
    for (size_t f = 0; f < files.size(); ++f) {
        auto file = readCtsFile(files[f]);
        if (!file) continue;  // reported by the run itself
        for (size_t i = 0; i < file->tests.size(); ++i) {
            const CtsTest& test = file->tests[i];
            if (!test.readError.empty()) continue;
            const std::string numerics = testNumerics(test);
            const auto operations = testedOperations(test);
            const bool wanted = std::any_of(operations.begin(), operations.end(), [&](auto op) {
                return covered[{op, numerics}] < options.perOperation;
            });
            if (!wanted) continue;
            auto supported = backends.front()->supportsModel(test.model);
            if (!supported || !*supported) continue;
            picked[f].insert(i);
            for (OperationType op : operations) ++covered[{op, numerics}];
        }
    }
    return picked;
}

int runCts(const CtsOptions& options) {
    if (options.backend != "npu" && (options.execution != "sync" || options.memory != "shared")) {
        std::cerr << "nncosim cts: --execution and --memory apply to --backend npu only\n";
        return 2;
    }
    if (options.backend == "golden" && options.preference != "fast-single-answer") {
        std::cerr << "nncosim cts: --preference applies to --backend npu and auto only\n";
        return 2;
    }
    auto files = findJsonFiles(options.paths);
    if (!files) {
        std::cerr << "nncosim cts: " << files.status().message << "\n";
        return 2;
    }
    if (options.backend != "golden") {
        // The process's NPU, before any worker opens it.
        sim::PlatformConfig platform = platformFor(options.npu);
        if (!setDramBandwidth(platform, options.dramBytesPerCycle, "nncosim cts")) return 2;
        if (auto npu = openNpu(platform); !npu) {
            std::cerr << "nncosim cts: cannot open the NPU: " << npu.status().message << "\n";
            return 2;
        }
    }
    const auto start = std::chrono::steady_clock::now();
    const std::vector<std::set<size_t>> sample =
        options.perOperation ? pickSample(options, *files) : std::vector<std::set<size_t>>{};
    std::vector<std::vector<CtsTestResult>> resultsPerFile(files->size());
    std::vector<std::string> unreadable;
    std::atomic<size_t> nextFile{0}, filesDone{0}, testsDone{0}, testsFailed{0};
    std::mutex mutex;
    const bool tty = isatty(STDERR_FILENO);

    auto worker = [&] {
        const auto backends = makeBackends(options);
        for (size_t f; (f = nextFile++) < files->size();) {
            auto file = readCtsFile((*files)[f]);
            if (!file) {
                std::lock_guard<std::mutex> lock(mutex);
                unreadable.push_back(file.status().message);
            } else {
                for (size_t i = 0; i < file->tests.size(); ++i) {
                    if (!sample.empty() && sample[f].count(i) == 0) continue;
                    const CtsTest& test = file->tests[i];
                    CtsTestResult r =
                        runOnEach(backends, test, (*files)[f], options.memoryLimitBytes);
                    testsFailed += r.verdict == Verdict::FAILED;
                    ++testsDone;
                    if (options.verbose) {
                        std::lock_guard<std::mutex> lock(mutex);
                        std::cout << verdictName(r.verdict) << " " << r.name << " (" << r.seconds
                                  << " s)\n";
                    }
                    resultsPerFile[f].push_back(std::move(r));
                }
            }
            ++filesDone;
            if (tty) {
                std::lock_guard<std::mutex> lock(mutex);
                std::cerr << "\r[" << filesDone << "/" << files->size() << " files] " << testsDone
                          << " tests, " << testsFailed << " failed" << std::flush;
            }
        }
    };
    std::vector<std::thread> threads;
    for (unsigned i = 0; i < std::max(1u, options.jobs); ++i) threads.emplace_back(worker);
    for (auto& t : threads) t.join();
    if (tty) std::cerr << "\n";
    const double seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();

    // Report: failures, the per-operation table, the totals.
    Tally total;
    std::map<std::string, Tally> byOperation, byNumerics;
    std::vector<JUnitCase> junit;
    nlohmann::json failures = nlohmann::json::array();
    for (const auto& results : resultsPerFile) {
        for (const CtsTestResult& r : results) {
            total.add(r.verdict);
            for (OperationType op : r.operations) byOperation[nameOf(op)].add(r.verdict);
            if (!r.numerics.empty()) byNumerics[r.numerics].add(r.verdict);
            if (r.verdict == Verdict::FAILED) {
                std::cout << "FAILED " << r.file << " " << r.name << ": " << r.message << "\n";
                failures.push_back({{"file", r.file}, {"name", r.name}, {"message", r.message}});
            }
            std::string suite = std::filesystem::path(r.file).parent_path().filename().string() +
                                "." + std::filesystem::path(r.file).stem().string();
            junit.push_back({suite, r.name, r.seconds, r.verdict == Verdict::FAILED,
                             r.verdict == Verdict::UNSUPPORTED, r.message});
        }
    }
    for (const auto& message : unreadable) std::cout << "UNREADABLE " << message << "\n";
    std::cout << "\n"
              << std::left << std::setw(34) << "operation" << std::right << std::setw(8) << "passed"
              << std::setw(8) << "failed" << std::setw(13) << "unsupported"
              << "\n";
    nlohmann::json byOperationJson = nlohmann::json::object();
    for (const auto& [op, t] : byOperation) {
        std::cout << std::left << std::setw(34) << op << std::right << std::setw(8) << t.passed
                  << std::setw(8) << t.failed << std::setw(13) << t.unsupported << "\n";
        byOperationJson[op] = {
            {"passed", t.passed}, {"failed", t.failed}, {"unsupported", t.unsupported}};
    }
    // What a backend claims of each kind of test (float, quantized-only, integer-only).
    nlohmann::json byNumericsJson = nlohmann::json::object();
    std::cout << "\n";
    for (const auto& [numerics, t] : byNumerics) {
        const double claimed = 100.0 * (t.passed + t.failed) / std::max<size_t>(1, t.total());
        std::cout << std::left << std::setw(34) << (numerics + " tests") << std::right
                  << std::setw(8) << t.passed << std::setw(8) << t.failed << std::setw(13)
                  << t.unsupported << "   claimed " << std::fixed << std::setprecision(1) << claimed
                  << " %\n";
        byNumericsJson[numerics] = {
            {"passed", t.passed}, {"failed", t.failed}, {"unsupported", t.unsupported}};
    }
    const std::string label =
        options.backend + (options.backend == "golden"
                               ? ""
                               : ", --npu " + options.npu + ", --preference " + options.preference);
    std::cout << "\ncts (" << label << "): " << total.total() << " tests, " << total.passed
              << " passed, " << total.failed << " failed, " << total.unsupported
              << " unsupported in " << std::fixed << std::setprecision(1) << seconds << " s"
              << (unreadable.empty()
                      ? ""
                      : ", " + std::to_string(unreadable.size()) + " files unreadable")
              << "\n";

    if (!options.summaryPath.empty()) {
        nlohmann::json summary = {
            {"backend", options.backend},
            {"total", total.total()},
            {"npu", options.backend == "golden" ? "" : options.npu},
            {"preference", options.backend == "golden" ? "" : options.preference},
            {"passed", total.passed},
            {"failed", total.failed},
            {"unsupported", total.unsupported},
            {"seconds", seconds},
            {"by_operation", byOperationJson},
            {"by_numerics", byNumericsJson},
            {"failures", failures}};
        std::ofstream out(options.summaryPath);
        out << summary.dump(2) << "\n";
        if (!out) {
            std::cerr << "nncosim cts: cannot write " << options.summaryPath << "\n";
            return 2;
        }
    }
    if (!options.junitPath.empty() &&
        !writeJUnit(options.junitPath, "nncosim.cts." + options.backend, junit)) {
        std::cerr << "nncosim cts: cannot write " << options.junitPath << "\n";
        return 2;
    }
    return total.failed == 0 && unreadable.empty() ? 0 : 1;
}

}  // namespace

void addCtsCommand(CLI::App& app) {
    auto options = std::make_shared<CtsOptions>();
    CLI::App* cmd =
        app.add_subcommand("cts", "Run NNAPI conformance tests (CTS JSON files or folders)");
    cmd->add_option("paths", options->paths, "CTS JSON files or folders of them")->required();
    cmd->add_option("--backend", options->backend, "Where models run")
        ->check(CLI::IsMember({"golden", "npu", "auto"}));
    cmd->add_option("--summary", options->summaryPath,
                    "Write the summary (totals, by_operation) as JSON");
    cmd->add_option("--junit", options->junitPath, "Write JUnit XML for CI");
    cmd->add_option("-j,--jobs", options->jobs, "Parallel workers")->check(CLI::Range(1u, 256u));
    cmd->add_option("--execution", options->execution,
                    "npu backend: the HAL execution path of every execution")
        ->check(CLI::IsMember({"sync", "async", "fenced", "burst", "reusable", "all"}));
    cmd->add_option("--memory", options->memory,
                    "npu backend: request tensors in shared memory or in driver-allocated "
                    "buffers (device)")
        ->check(CLI::IsMember({"shared", "device", "all"}));
    cmd->add_option("--preference", options->preference,
                    "npu and auto backends: the application's ExecutionPreference, given to "
                    "every preparation; with auto an operation runs on the NPU only when the "
                    "driver's figure for it beats the CPU's (as in `nncosim run`)")
        ->check(CLI::IsMember({"low-power", "fast-single-answer", "sustained-speed"}))
        ->capture_default_str();
    cmd->add_option("--per-operation", options->perOperation,
                    "Run only a sample: in file order, the tests the backend supports that "
                    "exercise an operation type, in a numerics class (float, quantized, "
                    "integer), fewer than N sampled tests exercise yet (every operation the "
                    "backend supports in the set, in each class, at least N times)")
        ->check(CLI::Range(1u, 1000000u));
    addMemoryLimitOption(*cmd, options->memoryLimitBytes);
    addNpuOption(*cmd, options->npu);
    addDramOption(*cmd, options->dramBytesPerCycle);
    cmd->add_flag("-v,--verbose", options->verbose, "Print every test's verdict");
    cmd->callback([options] { gExitStatus = runCts(*options); });
}

}  // namespace nncosim::cli
