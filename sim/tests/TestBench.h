// The one elaborated SystemC design shared by every sim test.
//
// SystemC elaborates once per process: modules cannot be created after the first sc_start().
// All sim tests therefore share these modules, created together on first use; a test submits
// work to its module and calls sc_start(), which returns when the design is idle again.
#pragma once

#include <memory>

#include "sim/Platform.h"
#include "sim/tests/ArrayBlock.h"
#include "sim/tests/RequantBlock.h"

namespace nncosim::sim::testing {

struct TestBench {
    TestBench();

    RequantBlock requant;
    ArrayBlock array;
    /// The NPU platform with the default configuration (1 GHz, 100-cycle DRAM at 16 B/cycle).
    std::shared_ptr<driver::HardwareAccess> npu;
};

/// The bench, elaborated on the first call (before any sc_start).
TestBench& testBench();

}  // namespace nncosim::sim::testing
