// Fuzz target: Verilator coverage data and waiver patterns. The input's first line is a waiver
// pattern, the rest a coverage file: parsing must refuse or read it, and matching any pattern
// against any point name must end quickly (a recursive matcher once took minutes on 26 stars and
// overflowed the stack on 300,000).
#include <sstream>
#include <string>

#include "fuzz/FuzzCommon.h"
#include "testbench/Coverage.h"

using namespace nncosim;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    const std::string bytes(reinterpret_cast<const char*>(data), size);
    const size_t newline = bytes.find('\n');
    const std::string pattern = bytes.substr(0, newline);
    std::istringstream coverage(newline == std::string::npos ? "" : bytes.substr(newline + 1));
    auto points = parseCoverage(coverage, "fuzz.dat");
    std::vector<CoveragePoint> named = points ? *points : std::vector<CoveragePoint>{};
    CoveragePoint p;
    p.kind = CoverageKind::kFunctional;
    p.name = bytes;  // the whole input as a name too
    named.push_back(p);
    (void)summarizeCoverage(named, {{pattern, "fuzz"}});
    return 0;
}
