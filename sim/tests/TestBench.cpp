#include "sim/tests/TestBench.h"

#include <cstdlib>
#include <stdexcept>

namespace nncosim::sim::testing {
namespace {

const sc_core::sc_time& clockPeriod() {
    // 1 GHz; the resolution must be set (once) before the first non-zero time exists.
    static const sc_core::sc_time kPeriod = [] {
        sc_core::sc_set_time_resolution(1, sc_core::SC_PS);
        return sc_core::sc_time(1, sc_core::SC_NS);
    }();
    return kPeriod;
}

}  // namespace

TestBench::TestBench() : requant("requant", clockPeriod()), array("array", clockPeriod()) {
    // NNCOSIM_SIM_TRACE=<file.fst> dumps the whole run (for debugging a failing test).
    PlatformConfig config;
    if (const char* trace = std::getenv("NNCOSIM_SIM_TRACE")) {
        config.trace.enabled = true;
        config.trace.path = trace;
        if (const char* stop = std::getenv("NNCOSIM_SIM_TRACE_STOP")) {
            config.trace.stopCycle = std::strtoull(stop, nullptr, 10);
        }
    }
    auto platform = createSystemCPlatform(config);
    if (!platform.ok()) {
        throw std::runtime_error(platform.status().message);
    }
    npu = *platform;
}

TestBench& testBench() {
    // Never destroyed: SystemC objects must outlive the simulation kernel's own teardown.
    static TestBench* bench = new TestBench();
    return *bench;
}

}  // namespace nncosim::sim::testing
