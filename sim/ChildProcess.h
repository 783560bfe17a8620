// Child processes of the waveform tools (fst2vcd, GTKWave under xvfb-run, nncosim re-runs) and
// of the regression: started without a shell, so no user text is ever parsed as a command, never
// waited on for longer than a limit, and never left running when this process is ended.
#pragma once

#include <sys/types.h>

#include <string>
#include <vector>

namespace nncosim::sim {

struct ChildExit {
    bool started = false;   ///< false: the program could not be started
    bool timedOut = false;  ///< killed (with everything it started) after the limit
    int status = -1;        ///< exit status; -1 when it did not exit normally
    int signal = 0;         ///< the signal that ended it, when one did (not the time limit's)
    bool ok() const { return started && !timedOut && status == 0; }
};

/// Runs `argv` (argv[0] looked up in PATH) with stdin from /dev/null and stdout and stderr
/// into `logPath`, in `workingDirectory` when one is given (`logPath` is opened before the
/// change). `environment` ("NAME=VALUE" entries) is added to this process's environment for the
/// child, replacing variables of the same names. The child leads a process group of its own;
/// after `timeoutSeconds`, or when this process is ended by a signal (see
/// endChildrenOnTermination), the whole group is killed.
ChildExit runChild(const std::vector<std::string>& argv, const std::string& logPath,
                   double timeoutSeconds, const std::string& workingDirectory = {},
                   const std::vector<std::string>& environment = {});

/// Makes SIGINT, SIGTERM and SIGHUP end every tracked child first: each runChild process group
/// is killed, each trackChild process is sent SIGTERM (so that it ends its own children), then
/// this process dies of the same signal. Call once, early in main().
void endChildrenOnTermination();

/// Tracks a child process started elsewhere (a regression worker) until untrackChild.
void trackChild(pid_t pid);
void untrackChild(pid_t pid);

}  // namespace nncosim::sim
