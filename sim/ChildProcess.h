// Child processes of the waveform tools (fst2vcd, GTKWave under xvfb-run, nncosim re-runs):
// started without a shell, so no user text is ever parsed as a command, and never waited on
// for longer than a limit.
#pragma once

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
/// into `logPath`. The child leads a process group of its own; after `timeoutSeconds` the whole
/// group is killed. `environment` ("NAME=VALUE" entries) is added to this process's
/// environment for the child, replacing variables of the same names.
ChildExit runChild(const std::vector<std::string>& argv, const std::string& logPath,
                   double timeoutSeconds, const std::vector<std::string>& environment = {});

/// `text` as one Tcl word: in double quotes with Tcl's substitution characters escaped, so a
/// path like `a[exec rm x]` or `a"b` reaches Tcl as the literal text.
std::string tclQuoted(const std::string& text);

}  // namespace nncosim::sim
