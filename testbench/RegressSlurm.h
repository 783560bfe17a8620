// `nncosim regress ... --slurm`: the regression as a Slurm job array, one array task per shard
// (each `nncosim regress --shard I/N --report DIR/shard-I`), submitted with sbatch, waited for by
// polling squeue, and merged (RegressReport.h's mergeRegressReports) by the caller.
#pragma once

#include <iosfwd>
#include <string>
#include <vector>

#include "model/Status.h"

namespace nncosim {

struct SlurmOptions {
    uint32_t tasks = 4;     ///< array tasks, one shard each
    std::string partition;  ///< sbatch --partition (empty: the cluster's default)
    std::string time;       ///< sbatch --time per task (empty: the partition's default)
    std::vector<std::string> sbatchArgs;  ///< more sbatch options, passed as given
    /// Where the tasks write their shard reports and logs: must be the same path on every node
    /// (a shared filesystem). Created when missing.
    std::string dir;
    double waitSeconds = 24 * 3600;  ///< how long to wait for the array before cancelling it
    double pollSeconds = 2;          ///< squeue polling period
};

/// Submits `regressArgs` (the nncosim binary and `regress` arguments, without --shard, --report
/// or --junit) as a job array of `options.tasks` shards run from the current directory, waits
/// until it leaves the queue, and returns the shard report directories
/// (`options.dir`/shard-I). Fails naming the shard (and the end of its log) that left no
/// results, when sbatch or squeue fail, or after `options.waitSeconds` (the job is cancelled).
Result<std::vector<std::string>> runRegressOnSlurm(const std::vector<std::string>& regressArgs,
                                                   const SlurmOptions& options, std::ostream& out);

/// What an array task of another command writes: its shard directory is given with
/// `outputOption DIR/shard-I`, and `resultFile` in it marks a task that finished.
struct SlurmArrayJob {
    std::string jobName = "nncosim-regress";
    std::string outputOption = "--report";
    std::string resultFile = "results.json";
    std::string script = "regress.sbatch";  ///< the batch script, written in the Slurm folder
};

/// runRegressOnSlurm for any nncosim command that takes --shard I/N and `job.outputOption`.
Result<std::vector<std::string>> runArrayOnSlurm(const std::vector<std::string>& args,
                                                 const SlurmOptions& options,
                                                 const SlurmArrayJob& job, std::ostream& out);

}  // namespace nncosim
