// `nncosim cts [--backend ...] [--summary FILE.json] [--junit FILE.xml] [-j N]
// [--preference low-power|fast-single-answer|sustained-speed] [--per-operation N] PATH...`: runs
// every test of the CTS JSON files under PATH and judges it by the CTS accuracy rule.
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iomanip>
#include <iostream>
#include <map>
#include <mutex>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <thread>

#include "model/CtsReader.h"
#include "model/OutputFile.h"
#include "sim/ChildProcess.h"
#include "testbench/Backend.h"
#include "testbench/CtsRunner.h"
#include "testbench/JUnit.h"
#include "testbench/commands/Commands.h"
#include "testbench/runtime/HostRuntime.h"
#include "testbench/runtime/Partitioner.h"

namespace nncosim::cli {
namespace {

// A process of a parallel RTL run is stuck past this (the whole CTS takes minutes).
constexpr double kShardTimeoutSeconds = 24 * 3600;

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
    // Internal, for the processes of a parallel RTL run (runInProcesses): this process runs the
    // tests whose (file index + test index) % count == index and writes their results here.
    std::string shard;
    std::string resultsPath;
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

/// A test's result as the processes of a parallel run exchange it.
nlohmann::json toJson(const CtsTestResult& r, size_t fileIndex, size_t testIndex) {
    std::vector<std::string> operations;
    for (OperationType op : r.operations) operations.push_back(nameOf(op));
    return {{"file_index", fileIndex},
            {"test_index", testIndex},
            {"file", r.file},
            {"name", r.name},
            {"operations", operations},
            {"numerics", r.numerics},
            {"verdict", verdictName(r.verdict)},
            {"message", r.message},
            {"seconds", r.seconds}};
}

std::optional<CtsTestResult> resultFromJson(const nlohmann::json& j) {
    try {
        CtsTestResult r;
        r.file = j.at("file").get<std::string>();
        r.name = j.at("name").get<std::string>();
        for (const auto& name : j.at("operations")) {
            const auto op = operationTypeFromString(name.get<std::string>());
            if (!op) return std::nullopt;
            r.operations.push_back(*op);
        }
        r.numerics = j.at("numerics").get<std::string>();
        r.verdict = verdictFromName(j.at("verdict").get<std::string>());
        r.message = j.at("message").get<std::string>();
        r.seconds = j.at("seconds").get<double>();
        return r;
    } catch (const nlohmann::json::exception&) {
        return std::nullopt;
    }
}

/// The RTL's SystemC simulation is one per process, so threads of one process take turns on
/// it: with --npu rtl, `-j N` runs N processes of this command instead, each on every N-th
/// test, and gathers their results into `resultsPerFile` (failures to run into `unreadable`).
void runInProcesses(const CtsOptions& options, size_t fileCount,
                    std::vector<std::vector<CtsTestResult>>& resultsPerFile,
                    std::vector<std::string>& unreadable) {
    namespace fs = std::filesystem;
    std::string pattern = (fs::temp_directory_path() / "nncosim-cts-XXXXXX").string();
    if (!::mkdtemp(pattern.data())) {
        unreadable.push_back("cannot make a folder for the parallel run's results");
        return;
    }
    const fs::path dir(pattern);
    std::error_code ec;
    const std::string self = fs::read_symlink("/proc/self/exe", ec).string();
    const unsigned count = options.jobs;
    std::vector<sim::ChildExit> exits(count);
    std::vector<std::thread> threads;
    for (unsigned i = 0; i < count; ++i) {
        std::vector<std::string> argv = {self, "cts"};
        argv.insert(argv.end(), options.paths.begin(), options.paths.end());
        argv.insert(argv.end(), {"--backend",
                                 options.backend,
                                 "--npu",
                                 options.npu,
                                 "--execution",
                                 options.execution,
                                 "--memory",
                                 options.memory,
                                 "--preference",
                                 options.preference,
                                 "--memory-limit",
                                 std::to_string(options.memoryLimitBytes),
                                 "--dram-bytes-per-cycle",
                                 std::to_string(options.dramBytesPerCycle),
                                 "-j",
                                 "1",
                                 "--shard",
                                 std::to_string(i) + "/" + std::to_string(count),
                                 "--results-json",
                                 (dir / ("shard-" + std::to_string(i) + ".json")).string()});
        const std::string log = (dir / ("shard-" + std::to_string(i) + ".log")).string();
        threads.emplace_back(
            [argv, log, &exits, i] { exits[i] = sim::runChild(argv, log, kShardTimeoutSeconds); });
    }
    for (auto& t : threads) t.join();
    bool keep = false;
    std::vector<std::vector<std::pair<size_t, CtsTestResult>>> indexed(fileCount);
    for (unsigned i = 0; i < count; ++i) {
        const std::string shard = std::to_string(i) + "/" + std::to_string(count);
        const fs::path log = dir / ("shard-" + std::to_string(i) + ".log");
        std::ifstream in(dir / ("shard-" + std::to_string(i) + ".json"));
        const nlohmann::json j = nlohmann::json::parse(in, nullptr, false);
        // Exit status 1 is failed tests; anything else, or no results, fails the run.
        if ((exits[i].status != 0 && exits[i].status != 1) || !j.is_object()) {
            unreadable.push_back("process " + shard + " of the parallel run ended without " +
                                 "its results (see " + log.string() + ")");
            keep = true;
            continue;
        }
        for (const auto& message : j.value("unreadable", nlohmann::json::array()))
            if (message.is_string()) unreadable.push_back(message.get<std::string>());
        for (const auto& entry : j.value("results", nlohmann::json::array())) {
            auto r = resultFromJson(entry);
            const size_t f = entry.value("file_index", fileCount);
            if (!r || f >= fileCount) {
                unreadable.push_back("a malformed result from process " + shard);
                keep = true;
                continue;
            }
            indexed[f].emplace_back(entry.value("test_index", size_t{0}), std::move(*r));
        }
    }
    // Each file's tests in their order in the file (each process ran some of them).
    for (size_t f = 0; f < fileCount; ++f) {
        std::sort(indexed[f].begin(), indexed[f].end(),
                  [](const auto& a, const auto& b) { return a.first < b.first; });
        for (auto& [index, r] : indexed[f]) resultsPerFile[f].push_back(std::move(r));
    }
    if (!keep) fs::remove_all(dir, ec);
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
    const bool inProcesses = options.backend != "golden" && options.npu == "rtl" &&
                             options.jobs > 1 && options.shard.empty();
    uint32_t shardIndex = 0, shardCount = 1;
    if (!options.shard.empty() &&
        std::sscanf(options.shard.c_str(), "%u/%u", &shardIndex, &shardCount) != 2) {
        std::cerr << "nncosim cts: --shard takes I/N\n";
        return 2;
    }
    if (options.backend != "golden" && !inProcesses) {
        // The process's NPU, before any worker opens it.
        sim::PlatformConfig platform = platformFor(options.npu);
        if (!setDramBandwidth(platform, options.dramBytesPerCycle, "nncosim cts")) return 2;
        if (auto npu = openNpu(platform); !npu) {
            std::cerr << "nncosim cts: cannot open the NPU: " << npu.status().message << "\n";
            return 2;
        }
    }
    const auto start = std::chrono::steady_clock::now();
    // The processes of a parallel run pick the same sample each.
    const std::vector<std::set<size_t>> sample = options.perOperation && !inProcesses
                                                     ? pickSample(options, *files)
                                                     : std::vector<std::set<size_t>>{};
    std::vector<std::vector<CtsTestResult>> resultsPerFile(files->size());
    std::vector<std::string> unreadable;
    std::atomic<size_t> nextFile{0}, filesDone{0}, testsDone{0}, testsFailed{0};
    nlohmann::json shardResults = nlohmann::json::array();
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
                for (size_t t = 0; t < file->tests.size(); ++t) {
                    if (!sample.empty() && sample[f].count(t) == 0) continue;
                    if (shardCount > 1 && (f + t) % shardCount != shardIndex) continue;
                    const CtsTest& test = file->tests[t];
                    CtsTestResult r =
                        runOnEach(backends, test, (*files)[f], options.memoryLimitBytes);
                    if (!options.resultsPath.empty()) {
                        std::lock_guard<std::mutex> lock(mutex);
                        shardResults.push_back(toJson(r, f, t));
                    }
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
    if (inProcesses) {
        runInProcesses(options, files->size(), resultsPerFile, unreadable);
    } else {
        std::vector<std::thread> threads;
        for (unsigned i = 0; i < std::max(1u, options.jobs); ++i) threads.emplace_back(worker);
        for (auto& t : threads) t.join();
        if (tty) std::cerr << "\n";
    }
    if (!options.resultsPath.empty()) {
        const nlohmann::json results = {{"results", shardResults}, {"unreadable", unreadable}};
        if (Status written = writeOutputFile(options.resultsPath, results.dump() + "\n");
            !written.ok()) {
            std::cerr << "nncosim cts: " << written.message << "\n";
            return 2;
        }
    }
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
        if (Status written = writeOutputFile(options.summaryPath, summary.dump(2) + "\n");
            !written.ok()) {
            std::cerr << "nncosim cts: " << written.message << "\n";
            return 2;
        }
    }
    if (!options.junitPath.empty()) {
        const Status written =
            writeJUnit(options.junitPath, "nncosim.cts." + options.backend, junit);
        if (!written.ok()) {
            std::cerr << "nncosim cts: " << written.message << "\n";
            return 2;
        }
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
    // The processes of a parallel RTL run (runInProcesses).
    cmd->add_option("--shard", options->shard)->group("");
    cmd->add_option("--results-json", options->resultsPath)->group("");
    cmd->callback([options] { gExitStatus = runCts(*options); });
}

}  // namespace nncosim::cli
