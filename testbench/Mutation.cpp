#include "testbench/Mutation.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iomanip>
#include <iostream>
#include <mutex>
#include <random>
#include <regex>
#include <sstream>
#include <thread>

#include "sim/ChildProcess.h"
#include "sim/Mutation.h"

namespace nncosim::mutation {
namespace {

namespace fs = std::filesystem;
using json = nlohmann::json;
using Clock = std::chrono::steady_clock;

double secondsSince(Clock::time_point start) {
    return std::chrono::duration<double>(Clock::now() - start).count();
}

std::string readText(const fs::path& path) {
    std::ifstream in(path, std::ios::binary);
    std::ostringstream text;
    text << in.rdbuf();
    return text.str();
}

std::string tail(const std::string& text, size_t length) {
    return text.size() <= length ? text : "..." + text.substr(text.size() - length);
}

std::vector<std::string> lines(const std::string& text) {
    std::vector<std::string> out;
    std::istringstream in(text);
    for (std::string line; std::getline(in, line);) out.push_back(line);
    return out;
}

/// Runs fn(0..count-1) on `jobs` threads.
void parallelFor(size_t count, unsigned jobs, const std::function<void(size_t)>& fn) {
    std::atomic<size_t> next{0};
    auto worker = [&] {
        for (size_t i; (i = next++) < count;) fn(i);
    };
    std::vector<std::thread> threads;
    const unsigned n = std::max(1u, std::min<unsigned>(jobs, static_cast<unsigned>(count)));
    for (unsigned t = 1; t < n; ++t) threads.emplace_back(worker);
    worker();
    for (std::thread& t : threads) t.join();
}

// ---------------------------------------------------------------------------------------------
// Checks

/// The test cases of a doctest executable (`--list-test-cases`).
Result<std::vector<std::string>> doctestCases(const std::string& exe, const fs::path& log) {
    const sim::ChildExit exit = sim::runChild({exe, "--list-test-cases"}, log.string(), 120);
    if (!exit.ok()) return fail(ErrorStatus::GENERAL_FAILURE, exe, " --list-test-cases failed");
    std::vector<std::string> cases;
    int separators = 0;
    for (const std::string& line : lines(readText(log))) {
        if (line.rfind("=====", 0) == 0) {
            ++separators;
            continue;
        }
        if (separators == 1 && !line.empty()) cases.push_back(line);
    }
    return cases;
}

/// doctest's -tc filter: commas separate filters and wildcards match, so both are escaped.
std::string doctestFilter(const std::string& name) {
    std::string out;
    for (char c : name) {
        if (c == ',' || c == '*' || c == '?' || c == '[' || c == ']' || c == '\\') out += '\\';
        out += c;
    }
    return out;
}

Check regressCheck(const std::string& name, Stage stage, const std::string& backend,
                   std::vector<std::string> suite, std::vector<std::string> extra = {}) {
    Check c;
    c.name = name;
    c.stage = stage;
    c.argv = {"nncosim",   "regress", "--backend",        backend, "--npu", "rtl", "-j", "1",
              "--timeout", "0",       "--profile-cycles", "0"};
    c.argv.insert(c.argv.end(), extra.begin(), extra.end());
    c.argv.insert(c.argv.end(), suite.begin(), suite.end());
    c.format = CheckFormat::kRegress;
    c.detector = "comparison";
    return c;
}

/// A name safe as a file name.
std::string fileSafe(const std::string& name) {
    std::string out;
    for (char c : name) out += std::isalnum(static_cast<unsigned char>(c)) || c == '-' ? c : '_';
    return out;
}

}  // namespace

const char* stageName(Stage stage) {
    switch (stage) {
        case Stage::kSmoke:
            return "smoke";
        case Stage::kCi:
            return "ci";
        case Stage::kNightly:
            return "nightly";
    }
    return "?";
}

std::optional<Stage> stageFromName(const std::string& name) {
    for (Stage s : {Stage::kSmoke, Stage::kCi, Stage::kNightly}) {
        if (name == stageName(s)) return s;
    }
    return std::nullopt;
}

const char* verdictName(Verdict verdict) {
    switch (verdict) {
        case Verdict::kKilled:
            return "killed";
        case Verdict::kSurvived:
            return "survived";
        case Verdict::kNotReached:
            return "not_reached";
        case Verdict::kEquivalent:
            return "equivalent";
    }
    return "?";
}

Result<std::vector<MutantInfo>> loadManifest(const std::string& path) {
    std::ifstream in(path);
    if (!in) return invalidArgument("cannot read the mutant manifest ", path);
    const json j = json::parse(in, nullptr, false);
    if (j.is_discarded() || !j.contains("mutants") || !j["mutants"].is_array())
        return invalidArgument(path, ": not a mutant manifest (mutants.json)");
    std::vector<MutantInfo> out;
    for (const json& m : j["mutants"]) {
        MutantInfo info;
        try {
            info.id = m.at("id").get<uint32_t>();
            info.key = m.at("key").get<std::string>();
            info.file = m.at("file").get<std::string>();
            info.line = m.at("line").get<uint32_t>();
            info.column = m.at("column").get<uint32_t>();
            info.kind = m.at("kind").get<std::string>();
            info.unit = m.value("unit", "");
            info.original = m.value("original", "");
            info.mutated = m.value("mutated", "");
            info.change = m.value("change", "");
        } catch (const json::exception& e) {
            return invalidArgument(path, ": malformed mutant: ", e.what());
        }
        if (info.id != out.size() + 1)
            return invalidArgument(path, ": mutant ids must run 1, 2, ... (", info.id, ")");
        out.push_back(std::move(info));
    }
    return out;
}

Result<std::vector<Waiver>> loadWaivers(const std::string& path) {
    std::ifstream in(path);
    if (!in) return invalidArgument("cannot read the waiver file ", path);
    const json j = json::parse(in, nullptr, false, true);  // comments allowed
    if (j.is_discarded() || !j.contains("waivers") || !j["waivers"].is_array())
        return invalidArgument(path, ": expected {\"waivers\": [{\"key\", \"reason\"}, ...]}");
    std::vector<Waiver> out;
    for (const json& w : j["waivers"]) {
        if (!w.is_object() || !w.contains("key") || !w.contains("reason") ||
            !w["key"].is_string() || !w["reason"].is_string() ||
            w["reason"].get<std::string>().empty())
            return invalidArgument(path, ": every waiver needs a key and a reason: ", w.dump());
        out.push_back({w["key"].get<std::string>(), w["reason"].get<std::string>()});
    }
    return out;
}

Result<std::vector<Check>> campaignChecks(const CheckContext& context, Stage upTo,
                                          std::ostream& progress) {
    std::vector<Check> checks;
    const fs::path cts = context.ctsDir;
    auto ctsFile = [&](const char* version, const char* name) {
        return (cts / version / name).string();
    };
    // Smoke: a few tests of every unit, through the driver into the RTL, judged by the CTS
    // expected values or the golden. Seconds each.
    checks.push_back(regressCheck(
        "smoke-conv", Stage::kSmoke, "npu",
        {ctsFile("V1_0", "conv_quant8.json"), ctsFile("V1_0", "conv_quant8_channels.json"),
         ctsFile("V1_0", "depthwise_conv2d_quant8.json"),
         ctsFile("V1_0", "fully_connected_quant8.json")}));
    checks.push_back(regressCheck(
        "smoke-pool-eltwise", Stage::kSmoke, "npu",
        {ctsFile("V1_0", "avg_pool_quant8_1.json"), ctsFile("V1_0", "max_pool_quant8_1.json"),
         ctsFile("V1_0", "add_quant8.json"), ctsFile("V1_0", "add_broadcast_quant8.json"),
         ctsFile("V1_0", "mul_quant8.json"), ctsFile("V1_0", "logistic_quant8_1.json")}));
    checks.push_back(regressCheck(
        "smoke-float", Stage::kSmoke, "npu",
        {ctsFile("V1_0", "conv_float.json"), ctsFile("V1_0", "depthwise_conv2d_float.json"),
         ctsFile("V1_0", "avg_pool_float_1.json"), ctsFile("V1_0", "add.json")}));
    checks.push_back(
        regressCheck("smoke-random", Stage::kSmoke, "npu", {"random:12"}, {"--seed", "1"}));
    for (const Check& c : checks) {
        for (size_t i = 1; i < c.argv.size(); ++i) {
            if (c.argv[i].find(".json") != std::string::npos && !fs::exists(c.argv[i]))
                return invalidArgument("smoke check ", c.name, ": no ", c.argv[i], " (--cts-dir)");
        }
    }
    if (upTo == Stage::kSmoke) return checks;

    // CI: every test case of the build's doctest executables (the probe leaves out those that
    // never reach the NPU's RTL), the CLI checks of ctest that run the RTL.
    const fs::path bin = context.binDir;
    const fs::path listDir = fs::path(context.workDir) / "lists";
    fs::create_directories(listDir);
    for (const char* exe : {"sim_tests", "driver_tests", "testbench_tests", "sim_wave_tests",
                            "sim_dram_4_tests", "sim_dram_64_tests"}) {
        if (!fs::exists(bin / exe))
            return invalidArgument("the CI stage needs ", (bin / exe).string(),
                                   ": cmake --build BUILD --target ", exe);
        auto cases = doctestCases((bin / exe).string(), listDir / (std::string(exe) + ".txt"));
        if (!cases) return cases.status();
        for (const std::string& name : *cases) {
            Check c;
            c.name = std::string(exe) + ":" + name;
            c.stage = Stage::kCi;
            c.argv = {exe, "-tc=" + doctestFilter(name)};
            c.format = CheckFormat::kDoctest;
            c.detector =
                name.find("funcsim") != std::string::npos || name.find("cosim") != std::string::npos
                    ? "lockstep"
                    : "directed";
            checks.push_back(std::move(c));
        }
    }
    {
        Check c;
        c.name = "cts_npu_every_execution_path";
        c.stage = Stage::kCi;
        c.argv = {"nncosim",
                  "cts",
                  "--backend",
                  "npu",
                  "--execution",
                  "all",
                  "--memory",
                  "all",
                  "-j1",
                  ctsFile("V1_0", "add_quant8.json"),
                  ctsFile("V1_0", "conv_quant8.json"),
                  ctsFile("V1_0", "add_broadcast_quant8.json")};
        c.format = CheckFormat::kExitStatus;
        checks.push_back(std::move(c));
    }
    const fs::path samples = fs::path(context.sourceDir) / "testbench" / "samples";
    {
        Check c;
        c.name = "faults_cli_rtl_sample";
        c.stage = Stage::kCi;
        c.argv = {"nncosim", "faults", (samples / "conv_quant8.json").string(),
                  "--count", "12",     "--seed",
                  "2",       "--npu",  "rtl",
                  "-v"};
        c.format = CheckFormat::kSameOutput;
        c.detector = "fault-campaign";
        checks.push_back(std::move(c));
    }
    if (upTo == Stage::kCi) return checks;

    // Nightly: the RTL CTS (NPU where the driver claims, golden elsewhere), zoo networks, random
    // constrained tests, long random descriptor chains against the functional model, fault
    // campaigns.
    for (const char* version : {"V1_0", "V1_1", "V1_2", "V1_3"}) {
        std::vector<std::string> files;
        for (const auto& entry : fs::directory_iterator(cts / version)) {
            if (entry.path().extension() == ".json") files.push_back(entry.path().string());
        }
        std::sort(files.begin(), files.end());
        constexpr size_t kPerCheck = 8;
        for (size_t i = 0; i < files.size(); i += kPerCheck) {
            std::vector<std::string> chunk(files.begin() + i,
                                           files.begin() + std::min(files.size(), i + kPerCheck));
            checks.push_back(regressCheck(
                "nightly-cts-" + std::string(version) + "-" + std::to_string(i / kPerCheck),
                Stage::kNightly, "auto", chunk));
        }
    }
    const fs::path zoo = fs::path(context.workDir) / "zoo";
    fs::create_directories(zoo);
    struct ZooModel {
        const char* name;
        std::vector<std::string> args;
    };
    const std::vector<ZooModel> models = {
        {"mobilenet_v1_quant8", {"mobilenet_v1", "--quant8"}},
        {"mobilenet_v2_per_channel_converter",
         {"mobilenet_v2", "--per-channel", "--converter-style", "--input-size", "128"}},
        {"resnet18_quant8_112", {"resnet18", "--quant8", "--input-size", "112"}},
        {"deeplab_head_quant8", {"deeplab_head", "--quant8"}},
        {"ssd_head_quant8", {"ssd_head", "--quant8"}},
        {"mobilenet_v1_float_96", {"mobilenet_v1", "--float32", "--input-size", "96"}},
    };
    for (const ZooModel& m : models) {
        const fs::path file = zoo / (std::string(m.name) + ".json");
        if (!fs::exists(file)) {
            progress << "mutate: writing the zoo network " << file.string() << "\n" << std::flush;
            std::vector<std::string> argv = {(bin / "nncosim").string(), "zoo"};
            argv.insert(argv.end(), m.args.begin(), m.args.end());
            argv.insert(argv.end(), {"-o", file.string()});
            const sim::ChildExit exit =
                sim::runChild(argv, (zoo / (std::string(m.name) + ".log")).string(), 600);
            if (!exit.ok())
                return fail(ErrorStatus::GENERAL_FAILURE, "nncosim zoo ", m.name,
                            " failed: ", readText(zoo / (std::string(m.name) + ".log")));
        }
        checks.push_back(regressCheck(std::string("nightly-zoo-") + m.name, Stage::kNightly, "auto",
                                      {"model:" + file.string()}));
    }
    for (uint32_t i = 0; i < 10; ++i) {
        checks.push_back(regressCheck("nightly-random-" + std::to_string(i), Stage::kNightly, "npu",
                                      {"random:20"}, {"--seed", std::to_string(1000 + i)}));
    }
    {
        Check c;
        c.name = "nightly-descriptor-chains";
        c.stage = Stage::kNightly;
        c.argv = {"sim_tests", "-tc=sim_funcsim_matches_rtl_random_descriptors"};
        c.env = {"NNCOSIM_FUNCSIM_CHAINS=400", "NNCOSIM_FUNCSIM_SEED=1001"};
        c.format = CheckFormat::kDoctest;
        c.detector = "lockstep";
        checks.push_back(std::move(c));
    }
    for (const char* sample : {"conv_quant8.json", "depthwise_conv2d_quant8.json", "add.json"}) {
        Check c;
        c.name = std::string("nightly-faults-") + sample;
        c.stage = Stage::kNightly;
        c.argv = {"nncosim", "faults", (samples / sample).string(),
                  "--count", "40",     "--seed",
                  "7",       "--npu",  "rtl",
                  "-v"};
        c.format = CheckFormat::kSameOutput;
        c.detector = "fault-campaign";
        checks.push_back(std::move(c));
    }
    return checks;
}

std::vector<uint32_t> sampleMutants(const std::vector<MutantInfo>& mutants, uint32_t count,
                                    uint32_t seed, uint32_t minimumPerFile) {
    std::vector<uint32_t> all;
    for (const MutantInfo& m : mutants) all.push_back(m.id);
    if (count == 0 || count >= mutants.size()) return all;
    std::map<std::string, std::vector<uint32_t>> byFile;
    for (const MutantInfo& m : mutants) byFile[m.file].push_back(m.id);
    // Quotas in proportion to each file's mutants (largest remainders), at least the minimum.
    std::map<std::string, uint32_t> quota;
    std::vector<std::pair<double, std::string>> remainders;
    uint32_t given = 0;
    for (const auto& [file, ids] : byFile) {
        const double exact = static_cast<double>(count) * ids.size() / mutants.size();
        quota[file] = std::min<uint32_t>(static_cast<uint32_t>(ids.size()),
                                         std::max<uint32_t>(minimumPerFile, exact));
        given += quota[file];
        remainders.push_back({exact - std::floor(exact), file});
    }
    std::sort(remainders.begin(), remainders.end(), [](const auto& a, const auto& b) {
        return a.first > b.first || (a.first == b.first && a.second < b.second);
    });
    for (size_t i = 0; given < count && i < remainders.size() * 4; ++i) {
        const std::string& file = remainders[i % remainders.size()].second;
        if (quota[file] < byFile[file].size()) {
            ++quota[file];
            ++given;
        }
    }
    std::mt19937_64 rng(seed);
    std::vector<uint32_t> chosen;
    for (auto& [file, ids] : byFile) {
        // Fisher-Yates with the engine's own output, the same on every standard library.
        for (size_t i = ids.size(); i > 1; --i) std::swap(ids[i - 1], ids[rng() % i]);
        chosen.insert(chosen.end(), ids.begin(), ids.begin() + quota[file]);
    }
    std::sort(chosen.begin(), chosen.end());
    return chosen;
}

// ---------------------------------------------------------------------------------------------
// Running checks

namespace {

struct CheckOutcome {
    bool started = false;
    bool passed = false;
    bool timedOut = false;
    int signal = 0;
    int status = -1;
    double seconds = 0.0;
    std::string output;
    fs::path reportDir;  ///< regress checks: the report folder (results.json with item logs)
};

std::string normalizedOutput(const std::string& text) {
    static const std::regex seconds(R"(\d+(\.\d+)?\s*s\b)");
    std::string out;
    for (const std::string& line : lines(text)) {
        if (line.rfind("JSON:", 0) == 0) continue;
        out += std::regex_replace(line, seconds, "_ s") + "\n";
    }
    return out;
}

/// A fingerprint of what a probe result depends on: the check, the binaries, the manifest.
std::string fingerprint(const Check& check, const CheckContext& context) {
    std::ostringstream f;
    for (const std::string& a : check.argv) f << a << '\x1f';
    for (const std::string& e : check.env) f << e << '\x1f';
    std::error_code ec;
    for (const fs::path& p :
         {fs::path(context.binDir) / check.argv[0], fs::path(context.binDir) / "nncosim",
          fs::path(sim::mutation::manifestPath())}) {
        const auto size = fs::file_size(p, ec);
        const auto time = fs::last_write_time(p, ec);
        f << p.string() << ':' << (ec ? 0 : size) << ':'
          << (ec ? 0 : time.time_since_epoch().count()) << '\x1f';
    }
    return std::to_string(std::hash<std::string>{}(f.str()));
}

CheckOutcome runCheck(const Check& check, const CheckContext& context, const std::string& select,
                      const fs::path& scratch, double timeoutSeconds,
                      const std::string& probeOut = {}, uint64_t cycleLimit = 0) {
    CheckOutcome o;
    std::vector<std::string> argv = check.argv;
    argv[0] = (fs::path(context.binDir) / argv[0]).string();
    if (check.format == CheckFormat::kRegress) {
        o.reportDir = scratch / "report";
        argv.insert(argv.begin() + 2, {"--report", o.reportDir.string()});
    }
    std::vector<std::string> env = check.env;
    env.push_back(std::string(sim::mutation::kSelectVariable) + "=" + select);
    env.push_back("SYSTEMC_DISABLE_COPYRIGHT_MESSAGE=1");
    if (!probeOut.empty())
        env.push_back(std::string(sim::mutation::kProbeOutVariable) + "=" + probeOut);
    if (cycleLimit != 0)
        env.push_back(std::string(sim::mutation::kCycleLimitVariable) + "=" +
                      std::to_string(cycleLimit));
    const fs::path log = scratch / "output.log";
    const auto start = Clock::now();
    const sim::ChildExit exit = sim::runChild(argv, log.string(), timeoutSeconds, {}, env);
    o.seconds = secondsSince(start);
    o.started = exit.started;
    o.timedOut = exit.timedOut;
    o.signal = exit.signal;
    o.status = exit.status;
    o.output = readText(log);
    o.passed = exit.ok();
    return o;
}

/// Why a check failed: the detector and the failing test with its message.
std::pair<std::string, std::string> explainFailure(const Check& check, const CheckOutcome& o,
                                                   const std::string& reference) {
    std::string text = o.output;
    // Regress workers keep their output in the report: an assertion's message is there.
    if (check.format == CheckFormat::kRegress) {
        const json results = json::parse(readText(o.reportDir / "results.json"), nullptr, false);
        if (!results.is_discarded() && results.contains("items")) {
            for (const json& item : results["items"]) text += "\n" + item.value("log", "");
        }
    }
    std::string assertion, verilatorError;
    for (const std::string& line : lines(text)) {
        if (assertion.empty() && line.find("Assertion failed") != std::string::npos)
            assertion = line;
        if (verilatorError.empty() && line.find("%Error") != std::string::npos)
            verilatorError = line;
    }
    if (!assertion.empty()) return {"sv-assertion", assertion};
    if (text.find(sim::mutation::kHangMessage) != std::string::npos)
        return {"hang", "the NPU ran past the check's simulated-cycle limit (a hang)"};
    if (o.timedOut) return {"timeout", "no result within the check's time limit"};
    if (o.signal != 0)
        return {"crash", "signal " + std::to_string(o.signal) +
                             (verilatorError.empty() ? "" : ": " + verilatorError)};
    const std::vector<std::string> out = lines(o.output);
    switch (check.format) {
        case CheckFormat::kRegress:
            for (const std::string& line : out) {
                if (line.rfind("FAILED ", 0) != 0) continue;
                std::string detector = check.detector;
                if (line.find("NPU error WATCHDOG") != std::string::npos)
                    detector = "watchdog";
                else if (line.find("NPU error ") != std::string::npos)
                    detector = "npu-error";
                else if (line.find("timed out") != std::string::npos)
                    detector = "timeout";
                else if (line.find("worker crashed") != std::string::npos)
                    detector = verilatorError.empty() ? "crash" : "crash";
                return {detector, line.substr(7)};
            }
            break;
        case CheckFormat::kDoctest: {
            std::string testCase, error;
            for (size_t i = 0; i < out.size(); ++i) {
                if (testCase.empty() && out[i].rfind("TEST CASE:", 0) == 0)
                    testCase = out[i].substr(10);
                if (error.empty() && out[i].find("ERROR:") != std::string::npos) {
                    error = out[i];
                    if (i + 1 < out.size() && !out[i + 1].empty()) error += " " + out[i + 1];
                    if (i + 2 < out.size() && !out[i + 2].empty()) error += " " + out[i + 2];
                }
            }
            std::string detector = check.detector;
            if (error.find("NPU error WATCHDOG") != std::string::npos ||
                error.find("WATCHDOG") != std::string::npos)
                detector = "watchdog";
            else if (error.find("NPU error") != std::string::npos)
                detector = "npu-error";
            const auto trim = [](std::string s) {
                s.erase(0, s.find_first_not_of(" \t"));
                return s;
            };
            if (!error.empty()) return {detector, trim(testCase) + ": " + trim(error)};
            break;
        }
        case CheckFormat::kSameOutput: {
            const std::vector<std::string> got = lines(normalizedOutput(o.output));
            const std::vector<std::string> want = lines(reference);
            for (size_t i = 0; i < std::max(got.size(), want.size()); ++i) {
                const std::string g = i < got.size() ? got[i] : "(nothing)";
                const std::string w = i < want.size() ? want[i] : "(nothing)";
                if (g != w) return {check.detector, "expected \"" + w + "\", got \"" + g + "\""};
            }
            break;
        }
        case CheckFormat::kExitStatus:
            break;
    }
    if (!verilatorError.empty()) return {"crash", verilatorError};
    return {check.detector, "exit status " + std::to_string(o.status) + ": " + tail(o.output, 300)};
}

bool checkPassed(const Check& check, const CheckOutcome& o, const std::string& reference) {
    if (!o.passed) return false;
    if (check.format == CheckFormat::kSameOutput) return normalizedOutput(o.output) == reference;
    return true;
}

/// The activated mutants of every process of a probe run, and the most cycles one simulated.
std::set<uint32_t> readActivations(const fs::path& dir, const std::string& prefix,
                                   uint64_t& cycles) {
    std::set<uint32_t> ids;
    cycles = 0;
    for (const auto& entry : fs::directory_iterator(dir)) {
        const std::string name = entry.path().filename().string();
        if (name.rfind(prefix, 0) != 0) continue;
        std::ifstream in(entry.path());
        for (std::string line; std::getline(in, line);) {
            if (line.rfind("# cycles ", 0) == 0)
                cycles = std::max<uint64_t>(cycles, std::stoull(line.substr(9)));
            else if (!line.empty())
                ids.insert(static_cast<uint32_t>(std::stoul(line)));
        }
    }
    return ids;
}

/// The probe run of one check, or its cached result when the binaries and the check are the
/// same as when it ran.
ProbeResult probeCheck(const Check& check, const CheckContext& context, const fs::path& probeDir) {
    const std::string name = fileSafe(check.name);
    const fs::path cache = probeDir / (name + ".json");
    const std::string print = fingerprint(check, context);
    {
        const json cached = json::parse(readText(cache), nullptr, false);
        if (!cached.is_discarded() && cached.value("fingerprint", "") == print) {
            ProbeResult r;
            r.passed = cached.value("passed", false);
            r.seconds = cached.value("seconds", 0.0);
            r.cycles = cached.value("cycles", uint64_t{0});
            r.output = cached.value("output", "");
            r.failure = cached.value("failure", "");
            for (uint32_t id : cached.value("activated", std::vector<uint32_t>{}))
                r.activated.insert(id);
            if (r.passed) return r;
        }
    }
    const fs::path scratch = probeDir / (name + ".run");
    std::error_code ec;
    fs::remove_all(scratch, ec);
    fs::create_directories(scratch);
    const CheckOutcome o =
        runCheck(check, context, "probe", scratch, 3600, (scratch / "activated").string());
    ProbeResult r;
    r.seconds = o.seconds;
    r.passed = o.passed;
    if (check.format == CheckFormat::kSameOutput) r.output = normalizedOutput(o.output);
    r.activated = readActivations(scratch, "activated.", r.cycles);
    if (!r.passed) {
        const auto [detector, detail] = explainFailure(check, o, r.output);
        r.failure = detector + ": " + detail + "\n" + tail(o.output, 2000);
    }
    json j = {{"check", check.name},
              {"fingerprint", print},
              {"passed", r.passed},
              {"seconds", r.seconds},
              {"cycles", r.cycles},
              {"output", r.output},
              {"failure", r.failure},
              {"activated", std::vector<uint32_t>(r.activated.begin(), r.activated.end())}};
    std::ofstream(cache) << j.dump() << "\n";
    if (r.passed) fs::remove_all(scratch, ec);
    return r;
}

}  // namespace

double Tally::score() const {
    const uint32_t counted = mutants - equivalent - notReached;
    return counted == 0 ? 1.0 : static_cast<double>(killed) / counted;
}

Tally tally(const std::vector<MutantResult>& results) {
    Tally t;
    for (const MutantResult& r : results) {
        ++t.mutants;
        switch (r.verdict) {
            case Verdict::kKilled:
                ++t.killed;
                if (r.timedOut) ++t.timedOut;
                break;
            case Verdict::kSurvived:
                ++t.survived;
                break;
            case Verdict::kNotReached:
                ++t.notReached;
                break;
            case Verdict::kEquivalent:
                ++t.equivalent;
                break;
        }
    }
    return t;
}

Result<Campaign> runCampaign(const std::vector<MutantInfo>& mutants,
                             const std::vector<Waiver>& waivers, const std::vector<Check>& checks,
                             const CheckContext& context, const CampaignOptions& options,
                             std::ostream& out) {
    const auto start = Clock::now();
    Campaign campaign;
    campaign.stage = options.stage;
    campaign.seed = options.seed;
    campaign.sample = options.sample;
    campaign.total = static_cast<uint32_t>(mutants.size());
    if (options.shardCount > 1)
        campaign.shard =
            std::to_string(options.shardIndex) + "/" + std::to_string(options.shardCount);

    std::map<std::string, std::string> waived;
    for (const Waiver& w : waivers) waived[w.key] = w.reason;
    std::set<std::string> keys;
    for (const MutantInfo& m : mutants) keys.insert(m.key);
    for (const Waiver& w : waivers) {
        if (!keys.count(w.key)) campaign.staleWaivers.push_back(w.key);
    }

    // The mutants of this run.
    std::vector<uint32_t> ids = options.only;
    if (ids.empty()) ids = sampleMutants(mutants, options.sample, options.seed);
    for (uint32_t id : ids) {
        if (id == 0 || id > mutants.size())
            return invalidArgument("no mutant ", id, " (this build has 1 to ", mutants.size(), ")");
    }
    if (options.shardCount > 1) {
        std::vector<uint32_t> shard;
        for (size_t i = options.shardIndex; i < ids.size(); i += options.shardCount)
            shard.push_back(ids[i]);
        ids = std::move(shard);
    }

    // The probe: every check once on the design as written.
    const fs::path probeDir = fs::path(context.workDir) / "probe";
    fs::create_directories(probeDir);
    std::vector<ProbeResult> probes(checks.size());
    std::mutex outMutex;
    std::atomic<size_t> probed{0};
    const auto probeStart = Clock::now();
    auto lastNote = Clock::now();
    parallelFor(checks.size(), options.jobs, [&](size_t i) {
        probes[i] = probeCheck(checks[i], context, probeDir);
        const size_t done = ++probed;
        std::lock_guard<std::mutex> lock(outMutex);
        if (secondsSince(lastNote) > 30 || done == checks.size()) {
            out << "mutate: probe " << done << "/" << checks.size() << " checks, " << std::fixed
                << std::setprecision(0) << secondsSince(probeStart) << " s\n"
                << std::defaultfloat << std::flush;
            lastNote = Clock::now();
        }
    });
    campaign.probeSeconds = secondsSince(probeStart);
    std::string failures;
    for (size_t i = 0; i < checks.size(); ++i) {
        if (!probes[i].passed)
            failures += "\n  " + checks[i].name + ": " + tail(probes[i].failure, 1500);
    }
    if (!failures.empty())
        return fail(ErrorStatus::GENERAL_FAILURE,
                    "checks fail on the design as written (mutant 0), so they cannot judge "
                    "mutants:",
                    failures);

    if (options.probeOnly) {
        campaign.seconds = secondsSince(start);
        return campaign;
    }

    // The mutants. Each runs the checks stage by stage, the quickest of a stage first: most
    // mutants die in the first check that activates them, and a survivor runs them all anyway.
    std::vector<size_t> order(checks.size());
    for (size_t c = 0; c < order.size(); ++c) order[c] = c;
    std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
        if (checks[a].stage != checks[b].stage) return checks[a].stage < checks[b].stage;
        return probes[a].seconds < probes[b].seconds;
    });
    campaign.results.resize(ids.size());
    std::atomic<size_t> done{0};
    std::atomic<size_t> killedSoFar{0};
    const auto runStart = Clock::now();
    lastNote = Clock::now();
    const fs::path runDir = fs::path(context.workDir) / "runs";
    parallelFor(ids.size(), options.jobs, [&](size_t index) {
        const uint32_t id = ids[index];
        const MutantInfo& info = mutants[id - 1];
        MutantResult r;
        r.id = id;
        const auto mutantStart = Clock::now();
        if (auto w = waived.find(info.key); w != waived.end()) {
            r.waived = true;
            r.waiver = w->second;
        }
        const fs::path scratch = runDir / std::to_string(id);
        bool killed = false;
        for (size_t c : order) {
            if (killed) break;
            if (!probes[c].activated.count(id)) continue;
            ++r.checksActivating;
            if (!r.reachedAt) r.reachedAt = checks[c].stage;
            std::error_code ec;
            fs::remove_all(scratch, ec);
            fs::create_directories(scratch);
            // Wall-clock and simulated-cycle limits, both well above the clean run's (the probe
            // run is itself slower than a mutant's).
            const double limit = options.timeoutFactor * probes[c].seconds + 10;
            const uint64_t cycleLimit = 4 * probes[c].cycles + 200000;
            const CheckOutcome o =
                runCheck(checks[c], context, std::to_string(id), scratch, limit, {}, cycleLimit);
            ++r.checksRun;
            if (checkPassed(checks[c], o, probes[c].output)) continue;
            killed = true;
            r.verdict = Verdict::kKilled;
            r.check = checks[c].name;
            r.stage = checks[c].stage;
            const auto [detector, detail] = explainFailure(checks[c], o, probes[c].output);
            r.detector = detector;
            r.detail = detail;
            r.timedOut = o.timedOut || detector == "hang";
            r.log = tail(o.output, 3000);
            fs::remove_all(scratch, ec);
        }
        if (!killed) {
            r.verdict = r.waived                  ? Verdict::kEquivalent
                        : r.checksActivating == 0 ? Verdict::kNotReached
                                                  : Verdict::kSurvived;
            std::error_code ec;
            fs::remove_all(scratch, ec);
        }
        r.seconds = secondsSince(mutantStart);
        if (killed) ++killedSoFar;
        const size_t finished = ++done;
        std::lock_guard<std::mutex> lock(outMutex);
        if (options.verbose || r.verdict == Verdict::kSurvived || (killed && r.waived)) {
            out << "mutant " << id << " " << info.key << ": " << verdictName(r.verdict);
            if (killed)
                out << " by " << r.check << " (" << r.detector << "): " << tail(r.detail, 300);
            if (r.verdict == Verdict::kSurvived)
                out << " (" << r.checksRun << " checks activate it): " << info.change;
            if (killed && r.waived) out << " [WAIVED as equivalent: the waiver is wrong]";
            out << "\n";
        }
        if (secondsSince(lastNote) > 30 || finished == ids.size()) {
            const double elapsed = secondsSince(runStart);
            out << "mutate: " << finished << "/" << ids.size() << " mutants, " << killedSoFar
                << " killed, " << std::fixed << std::setprecision(0) << elapsed << " s";
            if (finished < ids.size())
                out << ", ETA " << elapsed / finished * (ids.size() - finished) << " s";
            out << "\n" << std::defaultfloat << std::flush;
            lastNote = Clock::now();
        }
        campaign.results[index] = std::move(r);
    });
    campaign.seconds = secondsSince(start);
    return campaign;
}

// ---------------------------------------------------------------------------------------------
// Reports

namespace {

json tallyJson(const Tally& t) {
    return {{"mutants", t.mutants},
            {"killed", t.killed},
            {"survived", t.survived},
            {"equivalent", t.equivalent},
            {"not_reached", t.notReached},
            {"timed_out", t.timedOut},
            {"score", std::round(t.score() * 10000.0) / 10000.0}};
}

/// The results as they stood after `stage`: killed later means surviving then, and reached
/// only later means not reached then.
std::vector<MutantResult> atStage(const std::vector<MutantResult>& results, Stage stage) {
    std::vector<MutantResult> out = results;
    for (MutantResult& r : out) {
        const bool reached = r.reachedAt && *r.reachedAt <= stage;
        if (r.verdict == Verdict::kKilled && r.stage > stage)
            r.verdict = r.waived  ? Verdict::kEquivalent
                        : reached ? Verdict::kSurvived
                                  : Verdict::kNotReached;
        else if (r.verdict == Verdict::kSurvived && !reached)
            r.verdict = Verdict::kNotReached;
    }
    return out;
}

std::string percent(double x) {
    std::ostringstream s;
    s << std::fixed << std::setprecision(1) << 100.0 * x << " %";
    return s.str();
}

}  // namespace

json campaignJson(const Campaign& campaign, const std::vector<MutantInfo>& mutants) {
    json j = tallyJson(tally(campaign.results));
    j["command"] = campaign.command;
    j["stage"] = stageName(campaign.stage);
    j["seed"] = campaign.seed;
    j["sample"] = campaign.sample;
    j["mutants_in_build"] = campaign.total;
    j["shard"] = campaign.shard;
    j["seconds"] = campaign.seconds;
    j["probe_seconds"] = campaign.probeSeconds;
    std::map<std::string, std::vector<MutantResult>> byFile, byKind;
    std::map<std::string, uint32_t> byDetector;
    for (const MutantResult& r : campaign.results) {
        const MutantInfo& m = mutants.at(r.id - 1);
        byFile[m.file].push_back(r);
        byKind[m.kind].push_back(r);
        if (r.verdict == Verdict::kKilled) ++byDetector[r.detector];
    }
    j["by_file"] = json::object();
    for (const auto& [file, rs] : byFile) j["by_file"][file] = tallyJson(tally(rs));
    j["by_kind"] = json::object();
    for (const auto& [kind, rs] : byKind) j["by_kind"][kind] = tallyJson(tally(rs));
    j["by_detector"] = byDetector;
    j["stage_scores"] = json::object();
    for (Stage s : {Stage::kSmoke, Stage::kCi, Stage::kNightly}) {
        if (s > campaign.stage) break;
        j["stage_scores"][stageName(s)] = tallyJson(tally(atStage(campaign.results, s)));
    }
    j["stale_waivers"] = campaign.staleWaivers;
    j["results"] = json::array();
    for (const MutantResult& r : campaign.results) {
        const MutantInfo& m = mutants.at(r.id - 1);
        json e = {{"id", r.id},
                  {"key", m.key},
                  {"verdict", verdictName(r.verdict)},
                  {"checks_activating", r.checksActivating},
                  {"checks_run", r.checksRun},
                  {"seconds", r.seconds}};
        if (r.reachedAt) e["reached_at"] = stageName(*r.reachedAt);
        if (r.verdict == Verdict::kKilled) {
            e["check"] = r.check;
            e["stage"] = stageName(r.stage);
            e["detector"] = r.detector;
            e["detail"] = r.detail;
            e["timed_out"] = r.timedOut;
        }
        if (r.waived) e["waiver"] = r.waiver;
        j["results"].push_back(std::move(e));
    }
    return j;
}

Result<Campaign> campaignFromJson(const json& j) {
    Campaign c;
    try {
        c.command = j.value("command", "");
        c.stage = stageFromName(j.at("stage").get<std::string>()).value_or(Stage::kCi);
        c.seed = j.value("seed", 1u);
        c.sample = j.value("sample", 0u);
        c.total = j.value("mutants_in_build", 0u);
        c.shard = j.value("shard", "");
        c.seconds = j.value("seconds", 0.0);
        c.probeSeconds = j.value("probe_seconds", 0.0);
        c.staleWaivers = j.value("stale_waivers", std::vector<std::string>{});
        for (const json& e : j.at("results")) {
            MutantResult r;
            r.id = e.at("id").get<uint32_t>();
            const std::string v = e.at("verdict").get<std::string>();
            r.verdict = v == "killed"        ? Verdict::kKilled
                        : v == "survived"    ? Verdict::kSurvived
                        : v == "not_reached" ? Verdict::kNotReached
                                             : Verdict::kEquivalent;
            r.checksActivating = e.value("checks_activating", 0u);
            r.checksRun = e.value("checks_run", 0u);
            r.seconds = e.value("seconds", 0.0);
            if (e.contains("reached_at"))
                r.reachedAt = stageFromName(e["reached_at"].get<std::string>());
            if (r.verdict == Verdict::kKilled) {
                r.check = e.value("check", "");
                r.stage = stageFromName(e.value("stage", "smoke")).value_or(Stage::kSmoke);
                r.detector = e.value("detector", "");
                r.detail = e.value("detail", "");
                r.timedOut = e.value("timed_out", false);
            }
            if (e.contains("waiver")) {
                r.waived = true;
                r.waiver = e["waiver"].get<std::string>();
            }
            c.results.push_back(std::move(r));
        }
    } catch (const json::exception& e) {
        return invalidArgument("not a mutation campaign's JSON: ", e.what());
    }
    return c;
}

Result<Campaign> mergeCampaigns(const std::vector<Campaign>& shards) {
    if (shards.empty()) return invalidArgument("nothing to merge");
    Campaign merged = shards.front();
    merged.results.clear();
    merged.shard.clear();
    merged.seconds = 0;
    std::set<uint32_t> seen;
    for (const Campaign& s : shards) {
        if (s.stage != merged.stage || s.seed != merged.seed || s.sample != merged.sample)
            return invalidArgument("shards of different campaigns (stage, seed or sample)");
        merged.seconds = std::max(merged.seconds, s.seconds);
        for (const MutantResult& r : s.results) {
            if (!seen.insert(r.id).second)
                return invalidArgument("mutant ", r.id, " is in two shards");
            merged.results.push_back(r);
        }
    }
    std::sort(merged.results.begin(), merged.results.end(),
              [](const MutantResult& a, const MutantResult& b) { return a.id < b.id; });
    return merged;
}

std::string campaignMarkdown(const Campaign& campaign, const std::vector<MutantInfo>& mutants) {
    std::ostringstream md;
    const Tally t = tally(campaign.results);
    md << "# Mutation analysis of the NPU RTL\n\n";
    if (!campaign.command.empty()) md << "Command: `" << campaign.command << "`\n\n";
    md << "Stage " << stageName(campaign.stage) << ", " << t.mutants << " mutants";
    if (campaign.sample)
        md << " (sample of " << campaign.total << ", seed " << campaign.seed << ")";
    md << ", " << std::fixed << std::setprecision(0) << campaign.seconds << " s (probe "
       << campaign.probeSeconds << " s).\n\n"
       << std::defaultfloat;
    md << "| | mutants | killed | timed out (killed) | survived | equivalent | not reached | "
          "score |\n|---|---:|---:|---:|---:|---:|---:|---:|\n";
    auto row = [&](const std::string& name, const Tally& x) {
        md << "| " << name << " | " << x.mutants << " | " << x.killed << " | " << x.timedOut
           << " | " << x.survived << " | " << x.equivalent << " | " << x.notReached << " | "
           << percent(x.score()) << " |\n";
    };
    for (Stage s : {Stage::kSmoke, Stage::kCi, Stage::kNightly}) {
        if (s > campaign.stage) break;
        row(std::string("after ") + stageName(s), tally(atStage(campaign.results, s)));
    }
    md << "\nscore = killed / (mutants - equivalent - not reached). Not reached: no check "
          "changes a value at the mutation point (a stimulus hole, not a checking hole).\n\n";

    std::map<std::string, std::vector<MutantResult>> byFile, byKind;
    std::map<std::string, uint32_t> byDetector;
    for (const MutantResult& r : campaign.results) {
        byFile[mutants.at(r.id - 1).file].push_back(r);
        byKind[mutants.at(r.id - 1).kind].push_back(r);
        if (r.verdict == Verdict::kKilled) ++byDetector[r.detector];
    }
    md << "## Score per RTL file\n\n| file | mutants | killed | survived | equivalent | not "
          "reached | score |\n|---|---:|---:|---:|---:|---:|---:|\n";
    for (const auto& [file, rs] : byFile) {
        const Tally x = tally(rs);
        md << "| " << file << " | " << x.mutants << " | " << x.killed << " | " << x.survived
           << " | " << x.equivalent << " | " << x.notReached << " | " << percent(x.score())
           << " |\n";
    }
    md << "\n## Score per mutation kind\n\n| kind | mutants | killed | survived | equivalent | "
          "not reached | score |\n|---|---:|---:|---:|---:|---:|---:|\n";
    for (const auto& [kind, rs] : byKind) {
        const Tally x = tally(rs);
        md << "| " << kind << " | " << x.mutants << " | " << x.killed << " | " << x.survived
           << " | " << x.equivalent << " | " << x.notReached << " | " << percent(x.score())
           << " |\n";
    }
    md << "\n## Killed by\n\n| detector | mutants |\n|---|---:|\n";
    for (const auto& [d, n] : byDetector) md << "| " << d << " | " << n << " |\n";

    auto list = [&](Verdict v, const char* title) {
        md << "\n## " << title << "\n\n";
        bool any = false;
        for (const MutantResult& r : campaign.results) {
            if (r.verdict != v) continue;
            const MutantInfo& m = mutants.at(r.id - 1);
            md << "- mutant " << r.id << ", " << m.file << ":" << m.line << ":" << m.column << " ("
               << m.unit << ", " << m.kind << "): `" << m.change << "`";
            if (v == Verdict::kSurvived) md << "; " << r.checksRun << " checks activate it";
            if (r.waived) md << "; waived: " << r.waiver;
            md << "\n";
            any = true;
        }
        if (!any) md << "None.\n";
    };
    list(Verdict::kSurvived, "Survivors");
    list(Verdict::kEquivalent, "Equivalent (waived)");
    list(Verdict::kNotReached, "Not reached");
    md << "\n## Timed out (counted as killed)\n\n";
    bool any = false;
    for (const MutantResult& r : campaign.results) {
        if (!r.timedOut) continue;
        const MutantInfo& m = mutants.at(r.id - 1);
        md << "- mutant " << r.id << ", " << m.file << ":" << m.line << " (" << m.kind << "): `"
           << m.change << "` in " << r.check << "\n";
        any = true;
    }
    if (!any) md << "None.\n";
    md << "\n## Waivers contradicted (killed although waived as equivalent)\n\n";
    any = false;
    for (const MutantResult& r : campaign.results) {
        if (r.verdict != Verdict::kKilled || !r.waived) continue;
        md << "- mutant " << r.id << " `" << mutants.at(r.id - 1).key << "` by " << r.check << ": "
           << r.detail << "\n";
        any = true;
    }
    if (!any) md << "None.\n";
    if (!campaign.staleWaivers.empty()) {
        md << "\n## Stale waivers (no mutant has the key)\n\n";
        for (const std::string& k : campaign.staleWaivers) md << "- `" << k << "`\n";
    }
    return md.str();
}

}  // namespace nncosim::mutation
