// Child processes of the waveform tools: no shell, a time limit that kills the whole process
// group, and every child ended when this process is.
#include <doctest/doctest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <sstream>
#include <thread>

#include "sim/ChildProcess.h"

using namespace nncosim::sim;

namespace {

std::string readFile(const std::string& path) {
    std::ifstream in(path);
    std::ostringstream text;
    text << in.rdbuf();
    return text.str();
}

std::string tempPath(const std::string& name) {
    return (std::filesystem::temp_directory_path() / ("nncosim_child_" + name)).string();
}

}  // namespace

TEST_CASE("child_process_runs_without_a_shell") {
    const std::string log = tempPath("echo.log");
    // Shell syntax in an argument is just text.
    const ChildExit e = runChild({"echo", "$(touch nope); `x`"}, log, 10);
    CHECK(e.ok());
    CHECK(readFile(log) == "$(touch nope); `x`\n");
    CHECK_FALSE(std::filesystem::exists("nope"));

    CHECK(runChild({"false"}, log, 10).status == 1);
    CHECK_FALSE(runChild({"/no/such/program"}, log, 10).ok());
    std::filesystem::remove(log);
}

TEST_CASE("child_process_time_limit_kills_the_group") {
    const std::string log = tempPath("sleep.log");
    const std::string marker = tempPath("grandchild_survived");
    std::filesystem::remove(marker);
    const auto start = std::chrono::steady_clock::now();
    // A grandchild that would outlive a killed parent (as Xvfb outlives xvfb-run).
    const ChildExit e =
        runChild({"sh", "-c", "(sleep 2; touch " + marker + ") & sleep 30"}, log, 0.5);
    const double seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    CHECK(e.started);
    CHECK(e.timedOut);
    CHECK_FALSE(e.ok());
    CHECK(seconds < 5);
    std::this_thread::sleep_for(std::chrono::milliseconds(2500));
    CHECK_FALSE(std::filesystem::exists(marker));
    std::filesystem::remove(log);
}

namespace {

/// Whether process `pid` has ended (gone, or a zombie nobody reaped yet).
bool ended(pid_t pid) {
    if (::kill(pid, 0) != 0) return true;
    std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
    std::string text((std::istreambuf_iterator<char>(stat)), std::istreambuf_iterator<char>());
    const size_t close = text.rfind(')');
    return close == std::string::npos || text.compare(close + 2, 1, "Z") == 0;
}

}  // namespace

TEST_CASE("child_process_ends_with_a_terminated_parent") {
    // A parent ended by SIGTERM (a CI job's time limit) or SIGINT takes the group of every child
    // it started with it: here a child whose own child (as Xvfb behind xvfb-run) would linger.
    for (const int signal : {SIGTERM, SIGINT}) {
        CAPTURE(signal);
        const std::string pidFile = tempPath("grandchild.pid");
        std::filesystem::remove(pidFile);
        const pid_t parent = ::fork();
        REQUIRE(parent >= 0);
        if (parent == 0) {
            endChildrenOnTermination();
            runChild({"sh", "-c", "sleep 300 & echo $! > " + pidFile + "; wait"},
                     tempPath("parent.log"), 600);
            ::_exit(0);
        }
        pid_t grandchild = 0;
        for (int i = 0; i < 500 && grandchild == 0; ++i) {
            std::this_thread::sleep_for(std::chrono::milliseconds(10));
            std::ifstream in(pidFile);
            in >> grandchild;
        }
        REQUIRE(grandchild > 0);
        ::kill(parent, signal);
        int status = 0;
        ::waitpid(parent, &status, 0);
        CHECK(WIFSIGNALED(status));
        CHECK(WTERMSIG(status) == signal);
        bool gone = false;
        for (int i = 0; i < 200 && !gone; ++i) {
            gone = ended(grandchild);
            if (!gone) std::this_thread::sleep_for(std::chrono::milliseconds(10));
        }
        CHECK(gone);
        if (!gone) ::kill(grandchild, SIGKILL);
        std::filesystem::remove(pidFile);
    }
}
