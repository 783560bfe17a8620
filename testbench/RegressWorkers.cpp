// The parent side of the regression: a pool of worker processes (the nncosim binary's hidden
// worker subcommand, spawned with posix_spawn) fed one item at a time, so that a crash or a
// hang costs one item and a replacement worker, and the progress shown meanwhile.
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstring>
#include <functional>
#include <iomanip>
#include <optional>
#include <ostream>
#include <sstream>
#include <utility>

#include "sim/ChildProcess.h"
#include "testbench/Regress.h"
#include "testbench/RegressProtocol.h"
#include "testbench/RegressRandom.h"

extern char** environ;

namespace nncosim {
namespace {

using WallClock = std::chrono::steady_clock;

constexpr size_t kLogKeep = 64 * 1024;  // output kept per item in flight
constexpr size_t kLogTail = 4000;       // of which a failed item reports the end

double secondsSince(WallClock::time_point start) {
    return std::chrono::duration<double>(WallClock::now() - start).count();
}

/// A copy of `fd` numbered 10 or above (close-on-exec), so that the child's dup2 onto 0..3
/// never meets one of its own sources.
int moveHigh(int fd) {
    const int moved = fcntl(fd, F_DUPFD_CLOEXEC, 10);
    ::close(fd);
    return moved;
}

void closeFd(int& fd) {
    if (fd >= 0) ::close(fd);
    fd = -1;
}

/// Appends what `fd` (non-blocking) has to `into`; true at end of file.
bool readAvailable(int fd, std::string& into) {
    char buffer[16384];
    for (;;) {
        const ssize_t n = ::read(fd, buffer, sizeof(buffer));
        if (n > 0) {
            into.append(buffer, static_cast<size_t>(n));
            continue;
        }
        if (n < 0 && errno == EINTR) continue;
        return n == 0 || (errno != EAGAIN && errno != EWOULDBLOCK);
    }
}

bool writeAll(int fd, const std::string& text) {
    for (size_t written = 0; written < text.size();) {
        const ssize_t n = ::write(fd, text.data() + written, text.size() - written);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) return false;
        written += static_cast<size_t>(n);
    }
    return true;
}

std::string tail(const std::string& text, size_t length) {
    return text.size() <= length ? text : "..." + text.substr(text.size() - length);
}

std::string describeExit(int status) {
    if (WIFSIGNALED(status)) {
        const int sig = WTERMSIG(status);
        return "worker crashed: signal " + std::to_string(sig) + " (" + strsignal(sig) + ")";
    }
    if (WIFEXITED(status))
        return "worker exited with status " + std::to_string(WEXITSTATUS(status));
    return "worker ended (wait status " + std::to_string(status) + ")";
}

/// Ignores SIGPIPE while alive: a worker that dies must fail a write, not kill the parent.
class IgnoreSigpipe {
  public:
    IgnoreSigpipe() { mPrevious = ::signal(SIGPIPE, SIG_IGN); }
    ~IgnoreSigpipe() { ::signal(SIGPIPE, mPrevious); }

  private:
    sighandler_t mPrevious;
};

/// How an item ended in the pool: a result line from its worker, or why the worker failed it.
struct Outcome {
    size_t item = 0;
    std::string resultLine;  ///< empty when the worker crashed or timed out
    std::string failure;
    std::string log;
    double seconds = 0.0;
};

class WorkerPool {
  public:
    WorkerPool(std::vector<std::string> argv, unsigned jobs, double timeoutSeconds)
        : mArgv(std::move(argv)), mJobs(std::max(1u, jobs)), mTimeout(timeoutSeconds) {
        // Workers must not print SystemC's banner into every item's log.
        for (char** e = environ; *e; ++e) {
            if (std::strncmp(*e, "SYSTEMC_DISABLE_COPYRIGHT_MESSAGE=", 34) != 0)
                mEnvironment.push_back(*e);
        }
        mEnvironment.push_back("SYSTEMC_DISABLE_COPYRIGHT_MESSAGE=1");
    }

    /// The item that has run longest among those in flight, with its seconds so far.
    std::optional<std::pair<size_t, double>> longestRunning() const {
        std::optional<std::pair<size_t, double>> longest;
        for (const Worker& w : mWorkers) {
            if (!w.item) continue;
            const double seconds = secondsSince(w.started);
            if (!longest || seconds > longest->second) longest = std::make_pair(*w.item, seconds);
        }
        return longest;
    }

    /// Runs items 0..count-1; `onDone` is called once per item, `onTick` about once a second.
    Status run(size_t count, const std::function<std::string(size_t)>& idOf,
               const std::function<void(Outcome&&)>& onDone, const std::function<void()>& onTick) {
        IgnoreSigpipe ignore;
        mWorkers.assign(std::min<size_t>(mJobs, count), Worker{});
        size_t next = 0, done = 0;
        auto finish = [&](Worker& w, std::string line, std::string failure) {
            Outcome o;
            o.item = *w.item;
            o.resultLine = std::move(line);
            o.failure = std::move(failure);
            o.log = tail(w.log, kLogTail);
            o.seconds = secondsSince(w.started);
            w.item.reset();
            w.log.clear();
            ++done;
            onDone(std::move(o));
        };
        Status status = okStatus();
        while (done < count) {
            for (Worker& w : mWorkers) {
                if (w.item || next >= count) continue;
                if (w.pid <= 0) {
                    status = spawn(w);
                    if (!status.ok()) continue;
                }
                if (!writeAll(w.commandFd, encodeItemCommand(idOf(next)))) {
                    reap(w, true);  // it died before taking the item: try a new worker
                    continue;
                }
                w.item = next++;
                w.started = WallClock::now();
            }
            const bool anyAlive = std::any_of(mWorkers.begin(), mWorkers.end(),
                                              [](const Worker& w) { return w.pid > 0; });
            if (!anyAlive) {
                stopAll();
                return status.ok()
                           ? fail(ErrorStatus::GENERAL_FAILURE, "no worker process could run")
                           : status;
            }
            waitForActivity();
            for (Worker& w : mWorkers) {
                if (w.pid <= 0) continue;
                readAvailable(w.logFd, w.log);
                if (w.log.size() > 2 * kLogKeep) w.log.erase(0, w.log.size() - kLogKeep);
                const bool resultEnd = readAvailable(w.resultFd, w.results);
                for (size_t newline; (newline = w.results.find('\n')) != std::string::npos;) {
                    std::string line = w.results.substr(0, newline);
                    w.results.erase(0, newline + 1);
                    if (w.item) {
                        finish(w, std::move(line), {});
                    } else {
                        // A result nobody asked for: the protocol broke, and a failure could
                        // hide behind it.
                        mUnexpectedResults.push_back(std::move(line));
                    }
                }
                if (resultEnd) {
                    const int exitStatus = reap(w, true);
                    if (w.item) finish(w, {}, describeExit(exitStatus));
                } else if (w.item && mTimeout > 0 && secondsSince(w.started) > mTimeout) {
                    reap(w, true);
                    std::ostringstream why;
                    why << "timed out after " << mTimeout << " s (worker killed)";
                    finish(w, {}, why.str());
                }
            }
            onTick();
        }
        stopAll();
        if (!mUnexpectedResults.empty())
            return fail(ErrorStatus::GENERAL_FAILURE, mUnexpectedResults.size(),
                        " worker result(s) for no scheduled item, the first: ",
                        tail(mUnexpectedResults.front(), 200));
        return okStatus();
    }

  private:
    struct Worker {
        pid_t pid = -1;
        int commandFd = -1;
        int resultFd = -1;
        int logFd = -1;
        std::string results;
        std::string log;
        std::optional<size_t> item;
        WallClock::time_point started;
    };

    Status spawn(Worker& w) {
        int command[2], result[2], log[2];
        if (pipe2(command, O_CLOEXEC) != 0)
            return fail(ErrorStatus::GENERAL_FAILURE, "pipe: ", strerror(errno));
        if (pipe2(result, O_CLOEXEC) != 0) {
            ::close(command[0]);
            ::close(command[1]);
            return fail(ErrorStatus::GENERAL_FAILURE, "pipe: ", strerror(errno));
        }
        if (pipe2(log, O_CLOEXEC) != 0) {
            for (int fd : {command[0], command[1], result[0], result[1]}) ::close(fd);
            return fail(ErrorStatus::GENERAL_FAILURE, "pipe: ", strerror(errno));
        }
        for (int* fd : {&command[0], &command[1], &result[0], &result[1], &log[0], &log[1]})
            *fd = moveHigh(*fd);

        posix_spawn_file_actions_t actions;
        posix_spawn_file_actions_init(&actions);
        posix_spawn_file_actions_adddup2(&actions, command[0], STDIN_FILENO);
        posix_spawn_file_actions_adddup2(&actions, log[1], STDOUT_FILENO);
        posix_spawn_file_actions_adddup2(&actions, log[1], STDERR_FILENO);
        posix_spawn_file_actions_adddup2(&actions, result[1], kRegressResultFd);
        posix_spawnattr_t attributes;
        posix_spawnattr_init(&attributes);
        sigset_t defaults;
        sigemptyset(&defaults);
        sigaddset(&defaults, SIGPIPE);
        posix_spawnattr_setsigdefault(&attributes, &defaults);
        posix_spawnattr_setflags(&attributes, POSIX_SPAWN_SETSIGDEF);
        std::vector<char*> argv;
        for (const std::string& a : mArgv) argv.push_back(const_cast<char*>(a.c_str()));
        argv.push_back(nullptr);
        std::vector<char*> envp;
        for (const std::string& e : mEnvironment) envp.push_back(const_cast<char*>(e.c_str()));
        envp.push_back(nullptr);
        pid_t pid = -1;
        const int rc = posix_spawn(&pid, argv[0], &actions, &attributes, argv.data(), envp.data());
        posix_spawn_file_actions_destroy(&actions);
        posix_spawnattr_destroy(&attributes);
        for (int fd : {command[0], result[1], log[1]}) ::close(fd);
        if (rc != 0) {
            for (int fd : {command[1], result[0], log[0]}) ::close(fd);
            return fail(ErrorStatus::GENERAL_FAILURE, "cannot start ", mArgv[0], ": ",
                        strerror(rc));
        }
        fcntl(result[0], F_SETFL, O_NONBLOCK);
        fcntl(log[0], F_SETFL, O_NONBLOCK);
        sim::trackChild(pid);  // ended with this process (sim::endChildrenOnTermination)
        w.pid = pid;
        w.commandFd = command[1];
        w.resultFd = result[0];
        w.logFd = log[0];
        w.results.clear();
        return okStatus();
    }

    /// Ends worker `w` (killing it when `kill`) and returns its wait status; keeps the rest of
    /// its output in w.log.
    int reap(Worker& w, bool kill) {
        if (kill) ::kill(w.pid, SIGKILL);
        int status = 0;
        while (waitpid(w.pid, &status, 0) < 0 && errno == EINTR) {
        }
        sim::untrackChild(w.pid);
        readAvailable(w.logFd, w.log);
        closeFd(w.commandFd);
        closeFd(w.resultFd);
        closeFd(w.logFd);
        w.pid = -1;
        return status;
    }

    /// Waits until a worker writes something, or the nearest timeout, or a second passes.
    void waitForActivity() {
        std::vector<pollfd> fds;
        int timeoutMs = 1000;
        for (const Worker& w : mWorkers) {
            if (w.pid <= 0) continue;
            fds.push_back({w.resultFd, POLLIN, 0});
            fds.push_back({w.logFd, POLLIN, 0});
            if (w.item && mTimeout > 0) {
                const double left = mTimeout - secondsSince(w.started);
                timeoutMs =
                    std::min(timeoutMs, std::max(0, static_cast<int>(std::ceil(left * 1000.0))));
            }
        }
        ::poll(fds.data(), fds.size(), timeoutMs);
    }

    /// Closes every worker's input: idle workers exit at end of input.
    void stopAll() {
        for (Worker& w : mWorkers) {
            if (w.pid <= 0) continue;
            closeFd(w.commandFd);
            reap(w, w.item.has_value());
        }
    }

    const std::vector<std::string> mArgv;
    const unsigned mJobs;
    const double mTimeout;
    std::vector<std::string> mEnvironment;
    std::vector<Worker> mWorkers;
    std::vector<std::string> mUnexpectedResults;
};

std::string formatDuration(double seconds) {
    const auto s = static_cast<long>(std::lround(seconds));
    std::ostringstream out;
    if (s >= 3600)
        out << s / 3600 << ":" << std::setw(2) << std::setfill('0') << (s / 60) % 60;
    else
        out << s / 60;
    out << ":" << std::setw(2) << std::setfill('0') << s % 60;
    return out.str();
}

/// A redrawn bar on a terminal; otherwise a plain line every 10 s or 10 %.
class Progress {
  public:
    Progress(std::ostream& out, bool bar, size_t total) : mOut(out), mBar(bar), mTotal(total) {}

    void update(size_t done, size_t failed) {
        mDone = done;
        mFailed = failed;
        show(false);
    }
    /// `longest`: the item in flight for the longest time, named when it is slow.
    void tick(const std::string& longest, double seconds) {
        mLongest = seconds >= kSlowSeconds ? longest : std::string();
        mLongestSeconds = seconds;
        show(false);
    }
    /// Removes the bar before other output.
    void clear() {
        if (mBar && mDrawn) mOut << "\r\x1b[K" << std::flush;
        mDrawn = false;
    }
    void finish() {
        mLongest.clear();
        show(true);
        if (mBar && mDrawn) mOut << "\n" << std::flush;
        mDrawn = false;
    }

  private:
    void show(bool force) {
        const double elapsed = secondsSince(mStart);
        const double eta =
            mDone > 0 ? elapsed / static_cast<double>(mDone) * static_cast<double>(mTotal - mDone)
                      : 0;
        const size_t percent = mTotal ? mDone * 100 / mTotal : 100;
        std::ostringstream status;
        status << mDone << "/" << mTotal << " " << percent << "%, " << mFailed << " failed, "
               << formatDuration(elapsed) << " elapsed";
        if (mDone > 0 && mDone < mTotal) status << ", ETA " << formatDuration(eta);
        if (!mLongest.empty() && !mBar)
            status << "; running for " << formatDuration(mLongestSeconds) << ": " << mLongest;
        if (mBar) {
            if (!force && secondsSince(mLastDraw) < 0.1) return;
            constexpr size_t kWidth = 30;
            const size_t filled = mTotal ? mDone * kWidth / mTotal : kWidth;
            mOut << "\r[" << std::string(filled, '#') << std::string(kWidth - filled, '.') << "] "
                 << status.str() << "\x1b[K" << std::flush;
            mDrawn = true;
        } else {
            const size_t step = mTotal ? mDone * 10 / mTotal : 10;
            if (!force && step == mLastStep && secondsSince(mLastDraw) < kQuietSeconds) return;
            if (force && mDone == mPrintedDone) return;
            mOut << "regress: " << status.str() << "\n" << std::flush;
            mLastStep = step;
            mPrintedDone = mDone;
        }
        mLastDraw = WallClock::now();
    }

    // Plain lines: one per tenth of the run, or after this long without one (so that CI
    // sees the run alive), naming an item that has run for kSlowSeconds.
    static constexpr double kQuietSeconds = 30.0;
    static constexpr double kSlowSeconds = 60.0;

    std::ostream& mOut;
    const bool mBar;
    std::string mLongest;
    double mLongestSeconds = 0.0;
    const size_t mTotal;
    size_t mDone = 0, mFailed = 0;
    size_t mLastStep = 0;
    size_t mPrintedDone = 0;
    bool mDrawn = false;
    const WallClock::time_point mStart = WallClock::now();
    WallClock::time_point mLastDraw = WallClock::now();
};

std::string formatNumber(double value) {
    std::ostringstream out;
    out << value;
    return out.str();
}

}  // namespace

std::string shellQuote(const std::string& s) {
    const bool safe = !s.empty() && std::all_of(s.begin(), s.end(), [](char c) {
        return std::isalnum(static_cast<unsigned char>(c)) ||
               std::strchr("_@%+=:,./-", c) != nullptr;
    });
    if (safe) return s;
    std::string quoted = "'";
    for (char c : s) quoted += c == '\'' ? std::string("'\\''") : std::string(1, c);
    return quoted + "'";
}

std::string rerunCommand(const RegressOptions& options, const std::string& id) {
    std::string command = shellQuote(options.program) + " regress --backend " +
                          options.worker.backend + " --seed " + std::to_string(options.worker.seed);
    if (options.timeoutSeconds != RegressOptions{}.timeoutSeconds)
        command += " --timeout " + formatNumber(options.timeoutSeconds);
    if (options.worker.npu != WorkerOptions{}.npu) command += " --npu " + options.worker.npu;
    if (!options.worker.fault.empty()) command += " --fault " + shellQuote(options.worker.fault);
    return command + " " + shellQuote(id);
}

Result<RegressRun> runRegression(const RegressOptions& options, std::ostream& out,
                                 std::ostream& progress) {
    if (options.shardCount == 0 || options.shardIndex >= options.shardCount)
        return invalidArgument("shard ", options.shardIndex, "/", options.shardCount,
                               ": the index must be below the count");
    const auto start = WallClock::now();
    auto all =
        expandSuite(options.suite, options.worker.seed, options.random, options.randomTargets);
    if (!all) return all.status();
    const std::vector<std::string> ids =
        selectShard(std::move(*all), options.shardIndex, options.shardCount);

    std::vector<std::string> argv = {options.executable,
                                     kRegressWorkerCommand,
                                     "--backend",
                                     options.worker.backend,
                                     "--npu",
                                     options.worker.npu,
                                     "--seed",
                                     std::to_string(options.worker.seed),
                                     "--profile-cycles",
                                     std::to_string(options.worker.profileSampleCycles)};
    if (!options.worker.fault.empty()) argv.insert(argv.end(), {"--fault", options.worker.fault});
    if (!options.worker.wavesDir.empty())
        argv.insert(argv.end(), {"--waves", options.worker.wavesDir});
    if (!options.worker.crashOn.empty())
        argv.insert(argv.end(), {"--crash-on", options.worker.crashOn});
    if (!options.worker.hangOn.empty())
        argv.insert(argv.end(), {"--hang-on", options.worker.hangOn});

    RegressRun run;
    run.options = options;
    run.results.resize(ids.size());
    run.workers = static_cast<unsigned>(std::min<size_t>(std::max(1u, options.jobs), ids.size()));
    Progress bar(progress, options.progressBar, ids.size());
    size_t done = 0;
    auto onDone = [&](Outcome&& o) {
        ItemResult r;
        if (o.failure.empty()) {
            auto parsed = itemResultFromJson(nlohmann::json::parse(o.resultLine, nullptr, false));
            if (!parsed) {
                o.failure = "unreadable worker result: " + parsed.status().message;
            } else if (parsed->id != ids[o.item]) {
                o.failure = "the worker answered for '" + parsed->id + "' instead";
            } else {
                r = std::move(*parsed);
            }
        }
        if (!o.failure.empty()) {
            // The worker died with the item: say what the parent knows about it.
            r.id = ids[o.item];
            r.verdict = Verdict::FAILED;
            r.message = o.failure;
            r.seconds = o.seconds;
            if (auto item = parseItemId(r.id)) {
                r.kind = item->kind;
                if (item->kind == RegressKind::kRandom) {
                    const RandomTest test = makeRandomTest(item->seed, item->target);
                    r.seed = item->seed;
                    r.description = test.description;
                    for (OperationType op : test.operations) r.operations.push_back(nameOf(op));
                }
            }
        }
        if (options.shardCount > 1)
            r.shard = std::to_string(options.shardIndex) + "/" + std::to_string(options.shardCount);
        if (r.verdict == Verdict::FAILED) {
            r.log = o.log;
            ++run.failed;
            bar.clear();
            out << "FAILED " << r.id << ": " << r.message << "\n";
            if (r.seed) out << "  seed: " << *r.seed << "\n";
            out << "  re-run: " << rerunCommand(options, r.id) << "\n" << std::flush;
        } else {
            ++(r.verdict == Verdict::PASSED ? run.passed : run.unsupported);
        }
        run.results[o.item] = std::move(r);
        bar.update(++done, run.failed);
    };
    WorkerPool pool(argv, options.jobs, options.timeoutSeconds);
    auto onTick = [&] {
        const auto longest = pool.longestRunning();
        if (longest)
            bar.tick(ids[longest->first], longest->second);
        else
            bar.tick({}, 0.0);
    };
    Status status = pool.run(
        ids.size(), [&](size_t i) { return ids[i]; }, onDone, onTick);
    bar.finish();
    if (!status.ok()) return status;
    // Every scheduled item has exactly its own result, or the run is not to be believed.
    if (done != ids.size())
        return fail(ErrorStatus::GENERAL_FAILURE, "the regression scheduled ", ids.size(),
                    " items but has ", done, " results");
    run.seconds = secondsSince(start);
    return run;
}

}  // namespace nncosim
