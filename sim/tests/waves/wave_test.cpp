// Waveforms on request, in their own process (SystemC elaborates one platform per process): a
// dump that starts at the doorbell and stops a fixed number of cycles later, the PE grid left
// out, and a GTKWave save file whose signals all exist in the dump. Built a second time with
// NNCOSIM_WAVE_SCOPED: a VCD dump limited to two scopes holds those and nothing else.
#include <doctest/doctest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>
#include <string>

#include "driver/ChainBuilder.h"
#include "sim/Platform.h"

namespace nncosim::sim {
namespace {

constexpr uint64_t kWindow = 600;

#ifdef NNCOSIM_WAVE_SCOPED
constexpr bool kScoped = true;
#else
constexpr bool kScoped = false;
#endif

std::string dumpPath() {
    return (std::filesystem::temp_directory_path() /
            (kScoped ? "nncosim_wave_scoped_test/npu.vcd" : "nncosim_wave_test/npu.fst"))
        .string();
}

driver::HardwareAccess& tracedPlatform() {
    static std::shared_ptr<driver::HardwareAccess> hw = [] {
        PlatformConfig config;
        config.trace.enabled = true;
        config.trace.path = dumpPath();
        config.trace.startEvent = "doorbell";
        config.trace.startCycle = 0;
        config.trace.stopCycle = kWindow;
        if (kScoped) {
            config.trace.scopes = {"npu_top.u_cmd", "npu_top.u_compute.u_requant"};
            config.trace.format = TraceOptions::Format::kVcd;
        }
        auto platform = createSystemCPlatform(config);
        REQUIRE(platform.ok());
        return *platform;
    }();
    return *hw;
}

// Full names of the variables a VCD declares, and its first and last timestamps.
struct VcdSummary {
    std::set<std::string> names;
    uint64_t first = 0, last = 0;
};

VcdSummary readVcd(const std::string& path) {
    VcdSummary s;
    std::ifstream in(path);
    std::string line;
    std::vector<std::string> scope;
    bool body = false, sawTime = false;
    while (std::getline(in, line)) {
        std::istringstream words(line);
        std::string w;
        words >> w;
        if (!body) {
            if (w == "$scope") {
                std::string kind, name;
                words >> kind >> name;
                scope.push_back(name);
            } else if (w == "$upscope") {
                scope.pop_back();
            } else if (w == "$var") {
                std::string type, size, code, name, range;
                words >> type >> size >> code >> name >> range;
                std::string full;
                for (const std::string& part : scope) {
                    full += part + ".";
                }
                full += name;
                if (!range.empty() && range[0] == '[') {
                    full += range;
                }
                s.names.insert(full);
            } else if (w == "$enddefinitions") {
                body = true;
            }
        } else if (!w.empty() && w[0] == '#') {
            const uint64_t t = std::stoull(w.substr(1));
            if (!sawTime) {
                s.first = t;
                sawTime = true;
            }
            s.last = t;
        }
    }
    return s;
}

#ifdef NNCOSIM_WAVE_SCOPED
TEST_CASE("sim_waves_scoped") {
#else
TEST_CASE("sim_waves_window_and_save_file") {
#endif
    driver::HardwareAccess& hw = tracedPlatform();
    hw.advance(1000);  // before the doorbell: not dumped
    npu::ChainBuilder program;
    program.append(npu::Descriptor{});  // a NOP
    const uint64_t doorbellCycle = hw.cycleCount();
    auto job = npu::runJob(hw, program, {0x10000, 0x11000, 0, 0x20000}, 1, 100000);
    REQUIRE(job.ok());
    REQUIRE(job->interrupted);
    hw.advance(2 * kWindow);  // past the window's end: the dump is closed

    const std::string fst = dumpPath();
    REQUIRE(std::filesystem::exists(fst));
    REQUIRE(std::filesystem::exists(fst + ".gtkw"));
    // The VCD variant is already text; the FST one is converted to read its declarations.
    const std::string vcd = kScoped ? fst : fst + ".vcd";
    if (!kScoped) {
        const std::string command = "fst2vcd -f '" + fst + "' -o '" + vcd + "' > /dev/null 2>&1";
        REQUIRE(std::system(command.c_str()) == 0);
    }
    const VcdSummary dump = readVcd(vcd);

    // The window: from the doorbell's cycle for kWindow cycles (1 ns per cycle, times in ps).
    const uint64_t periodPs = hw.clockPeriodPs();
    CHECK(dump.first >= doorbellCycle * periodPs);
    CHECK(dump.first <= (doorbellCycle + 8) * periodPs);
    CHECK(dump.last - dump.first <= (kWindow + 1) * periodPs);

    if (kScoped) {
        bool outside = false, cmd = false, requant = false;
        for (const std::string& name : dump.names) {
            const bool inCmd = name.rfind("TOP.npu_top.u_cmd.", 0) == 0;
            const bool inRequant = name.rfind("TOP.npu_top.u_compute.u_requant.", 0) == 0;
            cmd |= inCmd;
            requant |= inRequant;
            outside |= !inCmd && !inRequant;
            CAPTURE(name);
        }
        CHECK(cmd);
        CHECK(requant);
        CHECK_FALSE(outside);
        return;
    }

    // The PE grid is excluded; its edges are there.
    bool anyGrid = false;
    for (const std::string& name : dump.names) {
        anyGrid |= name.find("u_array.psum_q") != std::string::npos ||
                   name.find("u_array.w0_q") != std::string::npos;
    }
    CHECK_FALSE(anyGrid);
    CHECK(dump.names.count("TOP.npu_top.u_compute.psum[511:0]") +
              dump.names.count("TOP.npu_top.u_compute.psum[255:0]") ==
          1);

    // Every signal of the save file exists in the dump.
    std::ifstream save(fst + ".gtkw");
    std::string line;
    int signals = 0, groups = 0;
    while (std::getline(save, line)) {
        if (line.rfind("TOP.", 0) == 0) {
            ++signals;
            CAPTURE(line);
            CHECK(dump.names.count(line) == 1);
        } else if (line.rfind("-", 0) == 0) {
            ++groups;
        }
    }
    CHECK(signals > 20);
    CHECK(groups == 10);  // five groups, each opened and closed
    std::filesystem::remove(vcd);
}

}  // namespace
}  // namespace nncosim::sim
