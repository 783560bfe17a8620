#include "sim/ChildProcess.h"

#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <chrono>
#include <string_view>
#include <thread>

extern char** environ;

namespace nncosim::sim {
namespace {

// What a terminating signal must end, in slots a signal handler can read without locks:
// -pgid for a process group (killed), pid for a single process (asked to terminate).
std::array<std::atomic<pid_t>, 256> gTracked{};

void track(pid_t target) {
    for (auto& slot : gTracked) {
        pid_t empty = 0;
        if (slot.compare_exchange_strong(empty, target)) return;
    }
}

void untrack(pid_t target) {
    for (auto& slot : gTracked) {
        pid_t expected = target;
        if (slot.compare_exchange_strong(expected, 0)) return;
    }
}

void endTrackedAndDie(int signal) {
    for (auto& slot : gTracked) {
        const pid_t target = slot.load();
        if (target < 0) ::kill(target, SIGKILL);
        if (target > 0) ::kill(target, SIGTERM);
    }
    ::signal(signal, SIG_DFL);
    ::raise(signal);
}

constexpr std::array<int, 3> kTerminatingSignals = {SIGINT, SIGTERM, SIGHUP};

/// Holds the terminating signals off while a child is started and tracked, so that none is
/// left untracked between the two.
class BlockTermination {
  public:
    BlockTermination() {
        sigset_t set;
        sigemptyset(&set);
        for (int s : kTerminatingSignals) sigaddset(&set, s);
        pthread_sigmask(SIG_BLOCK, &set, &mPrevious);
    }
    ~BlockTermination() { pthread_sigmask(SIG_SETMASK, &mPrevious, nullptr); }

  private:
    sigset_t mPrevious;
};

}  // namespace

void endChildrenOnTermination() {
    struct sigaction action {};
    action.sa_handler = endTrackedAndDie;
    sigemptyset(&action.sa_mask);
    for (int s : kTerminatingSignals) sigaction(s, &action, nullptr);
}

void trackChild(pid_t pid) {
    track(pid);
}
void untrackChild(pid_t pid) {
    untrack(pid);
}

ChildExit runChild(const std::vector<std::string>& argv, const std::string& logPath,
                   double timeoutSeconds, const std::string& workingDirectory,
                   const std::vector<std::string>& environment) {
    ChildExit exit;
    if (argv.empty()) return exit;
    std::vector<char*> args;
    for (const std::string& a : argv) args.push_back(const_cast<char*>(a.c_str()));
    args.push_back(nullptr);
    std::vector<char*> envp;
    for (char** e = environ; *e; ++e) {
        const std::string_view entry(*e);
        const bool replaced =
            std::any_of(environment.begin(), environment.end(), [&](const std::string& n) {
                const size_t eq = n.find('=');
                return eq != std::string::npos && entry.substr(0, eq + 1) == n.substr(0, eq + 1);
            });
        if (!replaced) envp.push_back(*e);
    }
    for (const std::string& e : environment) envp.push_back(const_cast<char*>(e.c_str()));
    envp.push_back(nullptr);
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_addopen(&actions, STDIN_FILENO, "/dev/null", O_RDONLY, 0);
    posix_spawn_file_actions_addopen(&actions, STDOUT_FILENO, logPath.c_str(),
                                     O_WRONLY | O_CREAT | O_TRUNC, 0644);
    posix_spawn_file_actions_adddup2(&actions, STDOUT_FILENO, STDERR_FILENO);
    if (!workingDirectory.empty())
        posix_spawn_file_actions_addchdir_np(&actions, workingDirectory.c_str());
    posix_spawnattr_t attributes;
    posix_spawnattr_init(&attributes);
    posix_spawnattr_setpgroup(&attributes, 0);
    // The child starts with the default dispositions and no blocked signals.
    sigset_t none, defaults;
    sigemptyset(&none);
    sigemptyset(&defaults);
    for (int s : kTerminatingSignals) sigaddset(&defaults, s);
    posix_spawnattr_setsigmask(&attributes, &none);
    posix_spawnattr_setsigdefault(&attributes, &defaults);
    posix_spawnattr_setflags(
        &attributes, POSIX_SPAWN_SETPGROUP | POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF);
    pid_t pid = 0;
    int spawned = 0;
    {
        BlockTermination block;
        spawned = posix_spawnp(&pid, args[0], &actions, &attributes, args.data(), envp.data());
        if (spawned == 0) track(-pid);
    }
    posix_spawn_file_actions_destroy(&actions);
    posix_spawnattr_destroy(&attributes);
    if (spawned != 0) return exit;
    exit.started = true;

    const auto deadline =
        std::chrono::steady_clock::now() + std::chrono::duration<double>(timeoutSeconds);
    int status = 0;
    for (;;) {
        const pid_t done = waitpid(pid, &status, WNOHANG);
        if (done == pid) break;
        if (done < 0) {
            untrack(-pid);
            return exit;
        }
        if (std::chrono::steady_clock::now() >= deadline) {
            kill(-pid, SIGKILL);
            waitpid(pid, &status, 0);
            untrack(-pid);
            exit.timedOut = true;
            return exit;
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    // What the child left running in its group (Xvfb behind xvfb-run, say) ends with it.
    kill(-pid, SIGKILL);
    untrack(-pid);
    if (WIFEXITED(status)) exit.status = WEXITSTATUS(status);
    if (WIFSIGNALED(status)) exit.signal = WTERMSIG(status);
    return exit;
}

}  // namespace nncosim::sim
