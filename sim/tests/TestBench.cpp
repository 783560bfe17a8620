#include "sim/tests/TestBench.h"

#include <stdexcept>

namespace nncosim::sim::testing {
namespace {

const sc_core::sc_time& clockPeriod() {
    // 1 GHz; the resolution must be set before the first non-zero time exists.
    sc_core::sc_set_time_resolution(1, sc_core::SC_PS);
    static const sc_core::sc_time kPeriod(1, sc_core::SC_NS);
    return kPeriod;
}

}  // namespace

TestBench::TestBench() : requant("requant", clockPeriod()) {
    auto platform = createSystemCPlatform();
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
