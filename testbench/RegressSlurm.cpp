#include "testbench/RegressSlurm.h"

#include <chrono>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <sstream>
#include <thread>

#include "sim/ChildProcess.h"
#include "testbench/Regress.h"

namespace nncosim {
namespace {

namespace fs = std::filesystem;

// sbatch, squeue and scancel answer in seconds; a controller that does not is down.
constexpr double kSlurmCommandSeconds = 120;

std::string readText(const fs::path& path) {
    std::ifstream in(path);
    std::ostringstream text;
    text << in.rdbuf();
    return text.str();
}

std::string lastLines(const std::string& text, size_t count) {
    size_t at = text.size();
    for (size_t n = 0; n <= count && at != std::string::npos && at > 0;) {
        at = text.rfind('\n', at - 1);
        if (at != std::string::npos) ++n;
    }
    return at == std::string::npos ? text : text.substr(at + 1);
}

/// Runs a Slurm client command; its output, or the failure with what it printed.
Result<std::string> slurmCommand(const std::vector<std::string>& argv, const fs::path& log) {
    const sim::ChildExit exit = sim::runChild(argv, log.string(), kSlurmCommandSeconds);
    const std::string output = readText(log);
    if (!exit.started) return fail(ErrorStatus::GENERAL_FAILURE, argv[0], ": cannot run it");
    if (exit.timedOut)
        return fail(ErrorStatus::GENERAL_FAILURE, argv[0], ": no answer in ", kSlurmCommandSeconds,
                    " s");
    if (exit.status != 0)
        return fail(ErrorStatus::GENERAL_FAILURE, argv[0], " failed (status ", exit.status,
                    "): ", lastLines(output, 5));
    return output;
}

}  // namespace

Result<std::vector<std::string>> runRegressOnSlurm(const std::vector<std::string>& regressArgs,
                                                   const SlurmOptions& options, std::ostream& out) {
    return runArrayOnSlurm(regressArgs, options, SlurmArrayJob{}, out);
}

Result<std::vector<std::string>> runArrayOnSlurm(const std::vector<std::string>& regressArgs,
                                                 const SlurmOptions& options,
                                                 const SlurmArrayJob& job, std::ostream& out) {
    if (options.tasks == 0) return invalidArgument("--slurm needs at least one array task");
    std::error_code ec;
    const fs::path dir = fs::absolute(options.dir, ec);
    fs::create_directories(dir, ec);
    if (ec) return invalidArgument("cannot create ", options.dir, ": ", ec.message());
    const fs::path cwd = fs::current_path(ec);
    if (ec) return fail(ErrorStatus::GENERAL_FAILURE, "no current directory: ", ec.message());

    // Results of an earlier run in the same directory must not be merged into this one.
    std::vector<std::string> shardDirs;
    for (uint32_t i = 0; i < options.tasks; ++i) {
        const fs::path shard = dir / ("shard-" + std::to_string(i));
        fs::remove_all(shard, ec);
        fs::remove(dir / ("shard-" + std::to_string(i) + ".log"), ec);
        shardDirs.push_back(shard.string());
    }

    // The task's command, every argument one shell word.
    std::string command = "exec";
    for (const std::string& arg : regressArgs) command += " " + shellQuote(arg);
    command += " --shard \"$SLURM_ARRAY_TASK_ID\"/" + std::to_string(options.tasks) + " " +
               job.outputOption + " " + shellQuote((dir / "shard-").string()) +
               "\"$SLURM_ARRAY_TASK_ID\"";
    const fs::path script = dir / job.script;
    {
        std::ofstream s(script);
        s << "#!/bin/sh\n# " << job.jobName << " --slurm: array task I runs shard I of "
          << options.tasks << ".\n"
          << command << "\n";
        if (!s) return fail(ErrorStatus::GENERAL_FAILURE, "cannot write ", script.string());
    }

    std::vector<std::string> sbatch = {"sbatch",
                                       "--parsable",
                                       "--array=0-" + std::to_string(options.tasks - 1),
                                       "--job-name=" + job.jobName,
                                       "--output=" + (dir / "shard-%a.log").string(),
                                       "--chdir=" + cwd.string()};
    if (!options.partition.empty()) sbatch.push_back("--partition=" + options.partition);
    if (!options.time.empty()) sbatch.push_back("--time=" + options.time);
    sbatch.insert(sbatch.end(), options.sbatchArgs.begin(), options.sbatchArgs.end());
    sbatch.push_back(script.string());
    auto submitted = slurmCommand(sbatch, dir / "sbatch.log");
    if (!submitted) return submitted.status();
    // --parsable prints "JOBID" or "JOBID;CLUSTER".
    const std::string jobId = submitted->substr(0, submitted->find_first_of(";\n"));
    if (jobId.empty() || jobId.find_first_not_of("0123456789") != std::string::npos)
        return fail(ErrorStatus::GENERAL_FAILURE, "sbatch printed no job id: ", *submitted);
    out << "slurm: job " << jobId << ", " << options.tasks << " array tasks, results in "
        << dir.string() << "\n"
        << std::flush;

    // Wait until no task of the array is queued or running (-r: one line per task).
    const auto start = std::chrono::steady_clock::now();
    std::string lastState;
    while (true) {
        auto queued =
            slurmCommand({"squeue", "-h", "-r", "-j", jobId, "-o", "%T"}, dir / "squeue.log");
        if (!queued) {
            // A job that ended long ago is no longer known: it is not queued either.
            if (queued.status().message.find("Invalid job id") == std::string::npos)
                return queued.status();
            break;
        }
        if (queued->find_first_not_of(" \n") == std::string::npos) break;
        std::map<std::string, int> states;
        std::istringstream lines(*queued);
        for (std::string state; lines >> state;) ++states[state];
        std::string state;
        for (const auto& [name, n] : states)
            state += (state.empty() ? "" : ", ") + std::to_string(n) + " " + name;
        if (state != lastState)
            out << "slurm: job " << jobId << ": " << state << "\n" << std::flush;
        lastState = state;
        const double waited =
            std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
        if (waited > options.waitSeconds) {
            (void)slurmCommand({"scancel", jobId}, dir / "scancel.log");
            return fail(ErrorStatus::MISSED_DEADLINE_TRANSIENT, "slurm job ", jobId,
                        " still queued or running after ", options.waitSeconds, " s: cancelled");
        }
        std::this_thread::sleep_for(std::chrono::duration<double>(options.pollSeconds));
    }

    for (uint32_t i = 0; i < options.tasks; ++i) {
        if (fs::exists(fs::path(shardDirs[i]) / job.resultFile)) continue;
        const fs::path log = dir / ("shard-" + std::to_string(i) + ".log");
        return fail(ErrorStatus::GENERAL_FAILURE, "slurm job ", jobId, " task ", i,
                    " left no results (", (dir / ("shard-" + std::to_string(i))).string(),
                    "); the end of ", log.string(), ":\n", lastLines(readText(log), 20));
    }
    return shardDirs;
}

}  // namespace nncosim
