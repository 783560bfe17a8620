// `nncosim regress SUITE... [-j N] [--shard I/N] [--backend golden|npu|auto] [--junit FILE]
// [--report DIR] [--seed S] [--random N [--coverage-from SUMMARY]] [--timeout SECONDS]
// [--coverage DIR] [--slurm [--tasks N] [--partition P] [--time T] [--sbatch-arg ARG]...]`: CTS
// files, model files and random constrained tests (aimed at the functional holes of a coverage
// summary) in worker processes, for CI and farms (testbench/Regress.h), or as a Slurm job array of
// shards (testbench/RegressSlurm.h); `regress merge DIR... [--coverage OUT]` merges shards' reports
// and coverage. Also the hidden worker subcommand those processes run.
#include <unistd.h>

#include <cstdlib>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <iomanip>
#include <iostream>
#include <map>
#include <sstream>
#include <thread>

#include "testbench/Coverage.h"
#include "testbench/Regress.h"
#include "testbench/RegressRandom.h"
#include "testbench/RegressReport.h"
#include "testbench/RegressSlurm.h"
#include "testbench/commands/Commands.h"

namespace nncosim::cli {
namespace {

struct RegressCliOptions {
    RegressOptions run;
    std::string shard;
    std::string junitPath;
    std::string reportDir;
    std::string coverageDir;      ///< --coverage: workers' data under DIR/data, merged into DIR
    std::string coverageWaivers;  ///< --coverage-waivers
    std::string coverageFrom;  ///< --coverage-from: a summary.json whose holes random tests aim at
    bool slurm = false;
    bool jobsGiven = false;
    SlurmOptions slurmOptions;
};

struct MergeCliOptions {
    std::vector<std::string> dirs;
    std::string junitPath;
    std::string reportDir;
    std::string coverageDir;  ///< --coverage: the coverage files under `dirs`, merged here
    std::string coverageWaivers;
};

/// This process's command line, as given (for the report and re-run commands).
std::vector<std::string> ownCommandLine() {
    std::ifstream in("/proc/self/cmdline", std::ios::binary);
    std::vector<std::string> args;
    for (std::string arg; std::getline(in, arg, '\0');) args.push_back(arg);
    return args;
}

/// --coverage-from: aims the random tests at the functional holes of a coverage summary that a
/// random test can reach (RegressRandom.h); the others are listed, since only other tests close
/// them.
bool aimRandomTests(const std::string& summaryPath, RegressOptions& o) {
    auto holes = readFunctionalHoles(summaryPath);
    if (!holes) {
        std::cerr << "nncosim regress: --coverage-from: " << holes.status().message << "\n";
        return false;
    }
    std::vector<std::string> unreachable;
    for (const std::string& hole : *holes) {
        const std::string point = hole.substr(hole.rfind('.') + 1);
        (isRandomTestTarget(point) ? o.randomTargets : unreachable).push_back(point);
    }
    std::cout << "coverage-from: " << holes->size() << " functional holes in " << summaryPath
              << "; random tests aim at " << o.randomTargets.size();
    if (!unreachable.empty()) {
        std::cout << "; beyond random models:";
        for (const std::string& point : unreachable) std::cout << " " << point;
    }
    std::cout << "\n";
    return true;
}

bool parseShard(const std::string& text, uint32_t* index, uint32_t* count) {
    unsigned long i = 0, n = 0;
    char slash = 0;
    std::istringstream in(text);
    if (!(in >> i >> slash >> n) || slash != '/' || !in.eof() || n == 0 || i >= n ||
        n > 0xffffffffu)
        return false;
    *index = static_cast<uint32_t>(i);
    *count = static_cast<uint32_t>(n);
    return true;
}

/// Where the workers (or Slurm tasks) of `regress --coverage DIR` write: DIR/data.
std::string workerCoverageData(const RegressCliOptions& options) {
    return (std::filesystem::path(options.coverageDir) / "data").string();
}

/// --coverage OUT: merges the coverage files under `inputs` into OUT and the run's report; false
/// (the reason printed) when that fails.
bool attachCoverage(const std::vector<std::string>& inputs, const std::string& outDir,
                    const std::string& waivers, RegressRun& run) {
    if (outDir.empty()) return true;
    auto coverage = mergeCoverage(inputs, outDir, waivers);
    if (!coverage) {
        std::cerr << "nncosim regress: --coverage: " << coverage.status().message << "\n";
        return false;
    }
    run.coverage = std::move(*coverage);
    return true;
}

/// Prints the run's summary line and writes its JUnit file and report (when asked): the end of
/// a local, Slurm or merged run alike.
int finishRegress(const RegressRun& run, const std::string& junitPath, const std::string& reportDir,
                  const std::string& commandLine) {
    const RegressOptions& o = run.options;
    if (run.coverage) {
        const CoverageSummary& c = *run.coverage;
        std::cout << "coverage: line " << formatPercent(c.line) << " %, toggle "
                  << formatPercent(c.toggle) << " %, functional " << c.functional.hit << " of "
                  << c.functional.points << " points hit (" << c.functional.waived
                  << " holes waived), " << c.holes.size() << " open holes\n";
    }
    std::map<std::string, size_t> byKind;
    for (const ItemResult& r : run.results) ++byKind[kindName(r.kind)];
    std::cout << "\nregress (" << o.worker.backend
              << (o.worker.backend != "golden" && o.worker.npu != "rtl" ? ", --npu " + o.worker.npu
                                                                        : "")
              << "): " << run.results.size() << (run.results.size() == 1 ? " item" : " items");
    if (!byKind.empty()) {
        std::cout << " (";
        for (auto it = byKind.begin(); it != byKind.end(); ++it)
            std::cout << (it == byKind.begin() ? "" : ", ") << it->second << " " << it->first;
        std::cout << ")";
    }
    std::cout << ", " << run.passed << " passed, " << run.failed << " failed, " << run.unsupported
              << " unsupported in " << std::fixed << std::setprecision(1) << run.seconds
              << " s with " << run.workers << (run.workers == 1 ? " worker" : " workers");
    if (o.shardCount > 1) std::cout << ", shard " << o.shardIndex << "/" << o.shardCount;
    std::cout << "\n";

    int status = run.ok() ? 0 : 1;
    if (!junitPath.empty()) {
        if (Status s = writeRegressJUnit(junitPath, run); !s.ok()) {
            std::cerr << "nncosim regress: " << s.message << "\n";
            status = 2;
        } else {
            std::cout << "JUnit: " << junitPath << "\n";
        }
    }
    if (!reportDir.empty()) {
        if (Status s = writeRegressReport(reportDir, run, commandLine); !s.ok()) {
            std::cerr << "nncosim regress: " << s.message << "\n";
            status = 2;
        } else {
            std::cout << "report: " << (std::filesystem::path(reportDir) / "index.html").string()
                      << "\n";
        }
    }
    return status;
}

/// --slurm: the shards as a job array, merged here.
int runRegressSlurm(const RegressCliOptions& options, const std::string& commandLine) {
    const RegressOptions& o = options.run;
    if (!options.shard.empty()) {
        std::cerr << "nncosim regress: --slurm makes the shards itself: drop --shard\n";
        return 2;
    }
    const auto start = std::chrono::steady_clock::now();
    // What each array task runs, before its --shard and --report. A task gets one CPU unless
    // --sbatch-arg asks for more: one worker, unless -j says otherwise.
    std::vector<std::string> args = {o.executable, "regress"};
    args.insert(args.end(), o.suite.begin(), o.suite.end());
    args.insert(args.end(),
                {"-j", std::to_string(options.jobsGiven ? o.jobs : 1u), "--backend",
                 o.worker.backend, "--npu", o.worker.npu, "--seed", std::to_string(o.worker.seed),
                 "--timeout", (std::ostringstream() << o.timeoutSeconds).str(), "--profile-cycles",
                 std::to_string(o.worker.profileSampleCycles)});
    if (o.random) args.insert(args.end(), {"--random", std::to_string(o.random)});
    if (!options.coverageFrom.empty())
        args.insert(args.end(),
                    {"--coverage-from", std::filesystem::absolute(options.coverageFrom).string()});
    if (!o.worker.fault.empty()) args.insert(args.end(), {"--fault", o.worker.fault});
    if (!o.worker.wavesDir.empty())
        args.insert(args.end(), {"--waves", std::filesystem::absolute(o.worker.wavesDir).string()});
    SlurmOptions slurm = options.slurmOptions;
    if (slurm.dir.empty())
        slurm.dir = options.reportDir.empty()
                        ? "nncosim-slurm"
                        : (std::filesystem::path(options.reportDir) / "shards").string();
    auto shards = runRegressOnSlurm(args, slurm, std::cout);
    if (!shards) {
        std::cerr << "nncosim regress: " << shards.status().message << "\n";
        return 2;
    }
    auto merged = mergeRegressReports(*shards);
    if (!merged) {
        std::cerr << "nncosim regress: merging the shards: " << merged.status().message << "\n";
        return 2;
    }
    const double slowest = merged->seconds;
    merged->options.program = o.program;
    merged->seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    std::cout << "slurm: " << shards->size() << " shards merged; slowest shard " << std::fixed
              << std::setprecision(1) << slowest << " s, submission to merge " << merged->seconds
              << " s\n";
    if (!attachCoverage({workerCoverageData(options)}, options.coverageDir, options.coverageWaivers,
                        *merged))
        return 2;
    return finishRegress(*merged, options.junitPath, options.reportDir, commandLine);
}

int runMerge(const MergeCliOptions& options) {
    auto merged = mergeRegressReports(options.dirs);
    if (!merged) {
        std::cerr << "nncosim regress merge: " << merged.status().message << "\n";
        return 2;
    }
    if (!attachCoverage(options.dirs, options.coverageDir, options.coverageWaivers, *merged))
        return 2;
    std::string commandLine;
    for (const std::string& arg : ownCommandLine())
        commandLine += (commandLine.empty() ? "" : " ") + shellQuote(arg);
    return finishRegress(*merged, options.junitPath, options.reportDir, commandLine);
}

int runRegress(RegressCliOptions options) {
    RegressOptions& o = options.run;
    if (!options.shard.empty() && !parseShard(options.shard, &o.shardIndex, &o.shardCount)) {
        std::cerr << "nncosim regress: --shard " << options.shard
                  << ": expected I/N with 0 <= I < N\n";
        return 2;
    }
    if (o.suite.empty() && o.random == 0) {
        std::cerr << "nncosim regress: nothing to run (give SUITE items or --random N)\n";
        return 2;
    }
    std::error_code ec;
    o.executable = std::filesystem::read_symlink("/proc/self/exe", ec).string();
    if (ec) {
        std::cerr << "nncosim regress: cannot find the nncosim binary: " << ec.message() << "\n";
        return 2;
    }
    const std::vector<std::string> argv = ownCommandLine();
    std::string commandLine;
    for (const std::string& arg : argv)
        commandLine += (commandLine.empty() ? "" : " ") + shellQuote(arg);
    if (!argv.empty()) o.program = argv.front();
    o.progressBar = isatty(STDERR_FILENO);

    if (!options.coverageDir.empty()) {
        // Workers (and Slurm tasks, which inherit the environment) write here.
        const auto data = std::filesystem::absolute(options.coverageDir) / "data";
        std::filesystem::create_directories(data, ec);
        if (ec) {
            std::cerr << "nncosim regress: --coverage: cannot create " << data.string() << "\n";
            return 2;
        }
        setenv("NNCOSIM_COVERAGE_DIR", data.c_str(), 1);
    }
    if (!options.coverageFrom.empty() && !aimRandomTests(options.coverageFrom, o)) return 2;
    if (options.slurm) return runRegressSlurm(options, commandLine);
    auto run = runRegression(o, std::cout, std::cerr);
    if (!run) {
        std::cerr << "nncosim regress: " << run.status().message << "\n";
        return 2;
    }
    if (!attachCoverage({workerCoverageData(options)}, options.coverageDir, options.coverageWaivers,
                        *run))
        return 2;
    return finishRegress(*run, options.junitPath, options.reportDir, commandLine);
}

void addWorkerCommand(CLI::App& app) {
    auto options = std::make_shared<WorkerOptions>();
    CLI::App* cmd =
        app.add_subcommand(kRegressWorkerCommand, "Internal: runs regression items for `regress`");
    cmd->group("");  // hidden: only `regress` starts it
    cmd->add_option("--backend", options->backend)->check(CLI::IsMember({"golden", "npu", "auto"}));
    cmd->add_option("--npu", options->npu)->check(CLI::IsMember({"rtl", "func"}));
    cmd->add_option("--seed", options->seed);
    cmd->add_option("--profile-cycles", options->profileSampleCycles);
    cmd->add_option("--fault", options->fault);
    cmd->add_option("--waves", options->wavesDir);
    cmd->add_option("--crash-on", options->crashOn);
    cmd->add_option("--hang-on", options->hangOn);
    cmd->callback(
        [options] { gExitStatus = runRegressWorker(*options, STDIN_FILENO, kRegressResultFd); });
}

}  // namespace

void addRegressCommand(CLI::App& app) {
    auto options = std::make_shared<RegressCliOptions>();
    options->run.jobs = std::max(1u, std::thread::hardware_concurrency());
    CLI::App* cmd = app.add_subcommand("regress",
                                       "Regression for CI and farms: CTS tests, model files and "
                                       "random constrained tests in worker processes");
    cmd->add_option(
        "suite", options->run.suite,
        "CTS JSON files or folders (judged by their expected outputs); model:PATH for "
        ".json/.tflite "
        "models compared with the golden (.tflite files always are); random:N for N random tests; "
        "or an item id printed by a failure (FILE#TEST, model:FILE#TEST, random@SEED[:POINT])");
    cmd->add_option("-j,--jobs", options->run.jobs, "Worker processes")
        ->check(CLI::Range(1u, 256u));
    cmd->add_option("--shard", options->shard,
                    "Run shard I of N (items sorted by id, every N-th from I)");
    cmd->add_option("--backend", options->run.worker.backend, "Where models run")
        ->check(CLI::IsMember({"golden", "npu", "auto"}));
    addNpuOption(*cmd, options->run.worker.npu);
    cmd->add_option("--junit", options->junitPath, "Write JUnit XML for CI");
    cmd->add_option(
        "--report", options->reportDir,
        "Write a report directory: summary.md, index.html, per-layer SVG charts, results.json");
    cmd->add_option("--seed", options->run.worker.seed,
                    "Seed of the random tests and of drawn model inputs");
    cmd->add_option("--random", options->run.random,
                    "Add N random constrained tests (as random:N)");
    cmd->add_option("--timeout", options->run.timeoutSeconds,
                    "Seconds an item may run before it fails (0: none)")
        ->check(CLI::NonNegativeNumber);
    cmd->add_option("--profile-cycles", options->run.worker.profileSampleCycles,
                    "NPU sampling period in cycles for per-layer figures (0: per NPU job only)");
    cmd->add_option(
        "--waves", options->run.worker.wavesDir,
        "Failures on the NPU: dump the waves of the first diverging operation under DIR");
    cmd->add_option("--coverage", options->coverageDir,
                    "RTL coverage (a coverage build: cmake -B build-cov -DNNCOSIM_COVERAGE=ON): "
                    "workers write under DIR/data, merged into DIR (merged.dat, annotated/, "
                    "summary.md, summary.json) and into the report");
    cmd->add_option("--coverage-waivers", options->coverageWaivers,
                    "--coverage: holes unreachable by design (PATTERN -- REASON per line)");
    cmd->add_option("--coverage-from", options->coverageFrom,
                    "Aim the random tests at the functional holes of a coverage summary.json "
                    "(of an earlier --coverage run or `nncosim coverage`), in turn");
    cmd->add_option("--fault", options->run.worker.fault,
                    "Make the NPU misbehave on purpose (write-bit:N[=0|1], requant-bit:N[=0|1] or "
                    "drop-write-beat:N), to prove that failures are caught");
    // Test hooks: make the worker die or hang on an item, to prove both are contained.
    cmd->add_option("--crash-on", options->run.worker.crashOn)->group("");
    cmd->add_option("--hang-on", options->run.worker.hangOn)->group("");
    SlurmOptions& slurm = options->slurmOptions;
    const char* slurmGroup = "Slurm (a job array of shards, merged)";
    cmd->add_flag("--slurm", options->slurm,
                  "Submit the run to Slurm as a job array, one task per shard; wait and merge "
                  "the shards into one JUnit file and report")
        ->group(slurmGroup);
    cmd->add_option("--tasks", slurm.tasks, "--slurm: array tasks (shards)")
        ->check(CLI::Range(1u, 10000u))
        ->capture_default_str()
        ->group(slurmGroup);
    cmd->add_option("--partition", slurm.partition, "--slurm: sbatch --partition")
        ->group(slurmGroup);
    cmd->add_option("--time", slurm.time, "--slurm: sbatch --time of each task (e.g. 1:00:00)")
        ->group(slurmGroup);
    cmd->add_option("--sbatch-arg", slurm.sbatchArgs,
                    "--slurm: one more sbatch option, as given (repeatable), e.g. "
                    "--sbatch-arg=--cpus-per-task=4 with -j 4")
        ->allow_extra_args(false)
        ->group(slurmGroup);
    cmd->add_option("--slurm-dir", slurm.dir,
                    "--slurm: where tasks write their shard reports and logs, on a filesystem "
                    "every node sees (default: REPORT/shards, else ./nncosim-slurm)")
        ->group(slurmGroup);
    cmd->add_option("--slurm-wait", slurm.waitSeconds,
                    "--slurm: seconds to wait for the job array before cancelling it")
        ->check(CLI::PositiveNumber)
        ->capture_default_str()
        ->group(slurmGroup);
    cmd->add_option("--slurm-poll", slurm.pollSeconds, "--slurm: squeue polling period, seconds")
        ->check(CLI::PositiveNumber)
        ->capture_default_str()
        ->group(slurmGroup);

    auto merge = std::make_shared<MergeCliOptions>();
    CLI::App* mergeCmd = cmd->add_subcommand(
        "merge",
        "Merge the report directories of a regression's shards (each written with --shard I/N "
        "--report DIR) into one JUnit file and report");
    mergeCmd->add_option("dirs", merge->dirs, "Shard report directories (with results.json)")
        ->required();
    mergeCmd->add_option("--junit", merge->junitPath, "Write the merged JUnit XML");
    mergeCmd->add_option("--report", merge->reportDir, "Write the merged report directory");
    mergeCmd->add_option("--coverage", merge->coverageDir,
                         "Merge the RTL coverage files found under the shard directories (each "
                         "shard run with --coverage inside its --report directory) into DIR");
    mergeCmd->add_option("--coverage-waivers", merge->coverageWaivers,
                         "--coverage: holes unreachable by design (PATTERN -- REASON per line)");
    mergeCmd->callback([merge] { gExitStatus = runMerge(*merge); });

    cmd->callback([options, cmd, mergeCmd] {
        if (mergeCmd->parsed()) return;
        options->jobsGiven = cmd->count("--jobs") > 0;
        gExitStatus = runRegress(*options);
    });
    addWorkerCommand(app);
}

}  // namespace nncosim::cli
