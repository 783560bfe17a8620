// Child processes of the waveform tools: no shell, a time limit that kills the whole process
// group, and Tcl quoting that keeps a hostile path literal.
#include <doctest/doctest.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
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

TEST_CASE("child_process_tcl_quoting_keeps_paths_literal") {
    CHECK(tclQuoted("plain/path.png") == "\"plain/path.png\"");
    CHECK(tclQuoted("tw[exec touch X]") == "\"tw\\[exec touch X\\]\"");
    // Through a real Tcl interpreter (GTKWave's scripting language): every hostile path comes
    // back unchanged and runs nothing.
    const std::string dir = tempPath("tcl");
    std::filesystem::create_directories(dir);
    const std::string injected = dir + "/INJECTED";
    const std::vector<std::string> paths = {"a b/c.png",   "tw[exec touch " + injected + "]",
                                            "q\"uote",     "$env(HOME)",
                                            "back\\slash", "{brace",
                                            "semi;colon",  "new\nline"};
    const std::string script = dir + "/check.tcl";
    {
        std::ofstream out(script);
        for (const std::string& p : paths)
            out << "puts -nonewline [string length " << tclQuoted(p) << "]\nputs \"\"\n";
    }
    const ChildExit e = runChild({"tclsh", script}, dir + "/tcl.log", 10);
    REQUIRE_MESSAGE(e.ok(), readFile(dir + "/tcl.log"));
    std::istringstream lines(readFile(dir + "/tcl.log"));
    for (const std::string& p : paths) {
        std::string line;
        std::getline(lines, line);
        CHECK_MESSAGE(line == std::to_string(p.size()), p);
    }
    CHECK_FALSE(std::filesystem::exists(injected));
    std::filesystem::remove_all(dir);
}
