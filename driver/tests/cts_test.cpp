// NPU vs golden on the NNAPI CTS: every test whose operations the driver claims (all true in
// getSupportedOperations) is prepared and executed through the driver and must produce outputs
// byte-identical to the golden reference (float outputs: within the CTS tolerance of it) and
// within the CTS tolerance of the expected values.
// Prints the claimed/passed counts per operation.
#include <cstdlib>
#include <iomanip>
#include <iostream>
#include <map>
#include <set>
#include <sstream>

#include "driver/Compiler.h"
#include "driver/tests/TestUtil.h"
#include "golden/Executor.h"
#include "model/Accuracy.h"
#include "model/CtsReader.h"
#include "model/Validation.h"

using namespace nncosim;
using namespace nncosim::driver;
using namespace nncosim::driver::testing;

namespace {

struct Tally {
    int tests = 0, claimed = 0, passed = 0;
};

// Set when the golden has no implementation of an operation yet: the test is then judged by the
// CTS expected values alone.
thread_local bool gWithoutGolden = false;

// Runs one CTS test through the driver; returns an empty string when it passes.
std::string runClaimed(const IDevice& device, const CtsTest& test) {
    auto prepared = prepareModelBlocking(device, test.model);
    if (!prepared) return "prepare: " + prepared.status().message;
    const auto& g = test.model.main;
    std::vector<uint32_t> inSizes, outSizes;
    for (const auto& t : test.inputs) inSizes.push_back(static_cast<uint32_t>(t.bytes.size()));
    for (size_t i = 0; i < g.outputIndexes.size(); ++i) {
        const uint64_t size =
            byteSize(g.operands[g.outputIndexes[i]].type, test.expectedOutputs[i].dimensions);
        outSizes.push_back(static_cast<uint32_t>(std::max<uint64_t>(size, 1)));
    }
    TestRequest r = makeRequest(inSizes, outSizes);
    for (size_t i = 0; i < test.inputs.size(); ++i) {
        if (test.inputs[i].bytes.empty()) {
            r.request.inputs[i] = {};
            r.request.inputs[i].lifetime = Request::Argument::LifeTime::NO_VALUE;
            continue;
        }
        std::memcpy(r.input(i), test.inputs[i].bytes.data(), test.inputs[i].bytes.size());
        r.request.inputs[i].dimensions = test.inputs[i].dimensions;
    }
    auto result = (*prepared)->execute(r.request, MeasureTiming::YES, {}, {});
    if (test.expectFailure) return result.ok() ? "expected a failure" : "";
    if (!result.ok()) return "execute: " + result.status.message;
    auto golden = golden::execute(test.model, test.inputs);
    gWithoutGolden =
        !golden && golden.status().message.find("no reference implementation") != std::string::npos;
    if (!golden && !gWithoutGolden) return "golden: " + golden.status().message;
    for (size_t i = 0; i < g.outputIndexes.size(); ++i) {
        const auto& expected = test.expectedOutputs[i];
        const TensorData& ref = gWithoutGolden ? expected : (*golden)[i];
        if (result.outputShapes[i].dimensions != ref.dimensions)
            return "output " + std::to_string(i) + " shape " +
                   toString(result.outputShapes[i].dimensions) + " vs golden " +
                   toString(ref.dimensions);
        const uint8_t* out = r.output(i);
        const OperandType type = g.operands[g.outputIndexes[i]].type;
        if (type == OperandType::TENSOR_FLOAT32 || type == OperandType::TENSOR_FLOAT16) {
            // Float: within the CTS tolerance of the golden and of the expected values.
            const Tolerance tolerance = ctsTolerance(type, isRelaxed(test.model));
            const uint64_t count = expected.bytes.size() / elementSize(type);
            for (const auto* want : {&ref, &expected}) {
                if (want == &expected && test.outputIgnored[i]) continue;
                const Comparison c =
                    compareTensors(type, want->bytes.data(), out, count, tolerance);
                if (!c.ok())
                    return "output " + std::to_string(i) + " against the " +
                           (want == &ref ? "golden: " : "CTS: ") + c.describe();
            }
            continue;
        }
        for (size_t b = 0; !gWithoutGolden && b < ref.bytes.size(); ++b) {
            if (out[b] != ref.bytes[b])
                return "output " + std::to_string(i) + " byte " + std::to_string(b) + ": NPU " +
                       std::to_string(out[b]) + ", golden " + std::to_string(ref.bytes[b]);
        }
        if (test.outputIgnored[i]) continue;
        const bool sgn =
            g.operands[g.outputIndexes[i]].type == OperandType::TENSOR_QUANT8_ASYMM_SIGNED;
        for (size_t b = 0; b < expected.bytes.size() && b < ref.bytes.size(); ++b) {
            const int actual = sgn ? int8_t(out[b]) : out[b];
            const int want = sgn ? int8_t(expected.bytes[b]) : expected.bytes[b];
            if (std::abs(actual - want) > 1)
                return "output " + std::to_string(i) + " byte " + std::to_string(b) +
                       " differs from the CTS";
        }
    }
    return "";
}

// Runs every claimed CTS test under `paths` on `device`; `label` names the device in the report.
// `stride` > 1 runs only every stride-th claimed test (the RTL simulates slowly).
void runCts(const IDevice& device, const std::string& label, const std::vector<std::string>& paths,
            int stride = 1) {
    auto files = findJsonFiles(paths);
    REQUIRE(files.ok());
    std::map<std::string, Tally> byOperation;
    Tally total;
    int withoutGolden = 0;
    int claimedSeen = 0;
    std::vector<std::string> failures;
    std::map<std::string, int> unclaimedReasons;
    for (const auto& path : *files) {
        auto file = readCtsFile(path);
        if (!file) continue;  // the model layer's tests cover the reader
        for (const CtsTest& test : file->tests) {
            if (!validateModel(test.model)) continue;
            auto supported = device.getSupportedOperations(test.model);
            REQUIRE_MESSAGE(supported.ok(), test.name);
            std::set<std::string> ops;
            for (const auto& op : test.model.main.operations) ops.insert(nameOf(op.type));
            bool claimed =
                std::all_of(supported->begin(), supported->end(), [](bool b) { return b; });
            if (claimed && claimedSeen++ % stride != 0) continue;
            // The per-operation table counts the 8-bit quantized tests (outputs all QUANT8).
            const auto& g = test.model.main;
            const bool quant8 =
                std::all_of(g.outputIndexes.begin(), g.outputIndexes.end(), [&](uint32_t k) {
                    return g.operands[k].type == OperandType::TENSOR_QUANT8_ASYMM ||
                           g.operands[k].type == OperandType::TENSOR_QUANT8_ASYMM_SIGNED;
                });
            if (quant8 && !claimed) {
                for (uint32_t i = 0; i < supported->size(); ++i) {
                    if ((*supported)[i]) continue;
                    ++unclaimedReasons[checkOperationSupported(test.model, i).message];
                    break;
                }
            }
            std::string failure;
            gWithoutGolden = false;
            if (claimed) failure = runClaimed(device, test);
            withoutGolden += claimed && gWithoutGolden;
            ++total.tests;
            total.claimed += claimed;
            total.passed += claimed && failure.empty();
            for (const auto& op : quant8 ? ops : std::set<std::string>{}) {
                auto& tally = byOperation[op];
                ++tally.tests;
                tally.claimed += claimed;
                tally.passed += claimed && failure.empty();
            }
            if (!failure.empty()) failures.push_back(path + " " + test.name + ": " + failure);
        }
    }
    std::ostringstream report;
    report << "NPU CTS (" << label
           << (stride > 1 ? ", every " + std::to_string(stride) + "th claimed test" : "")
           << "): " << total.claimed << " claimed of " << total.tests << ", " << total.passed
           << " passed (" << withoutGolden
           << " judged by the CTS values alone: no golden implementation yet)\n";
    for (const auto& [op, tally] : byOperation) {
        if (tally.claimed == 0) continue;
        report << "  " << std::left << std::setw(20) << op << " claimed " << std::setw(5)
               << tally.claimed << " passed " << std::setw(5) << tally.passed << " unclaimed "
               << tally.tests - tally.claimed << "\n";
    }
    report << "Why 8-bit tests are unclaimed (first unsupported operation):\n";
    for (const auto& [reason, count] : unclaimedReasons)
        report << "  " << std::setw(5) << count << "  " << reason << "\n";
    MESSAGE(report.str());
    for (size_t i = 0; i < failures.size() && i < 30; ++i) MESSAGE(failures[i]);
    CHECK(failures.empty());
    CHECK(total.claimed > 0);
}

}  // namespace

TEST_CASE("driver_cts_npu_matches_golden") {
    auto t = makeTestDevice();
    runCts(*t.device, "behavioral NPU", {NNCOSIM_CTS_DIR});
}

// The same through the Verilated RTL. Simulation is slow, so by default every fifth claimed test
// runs; NNCOSIM_RTL_CTS_FULL=1 runs them all.
TEST_CASE("driver_cts_rtl_matches_golden") {
    auto device = rtlDevice();
    REQUIRE_MESSAGE(device.ok(), device.status().message);
    const char* full = std::getenv("NNCOSIM_RTL_CTS_FULL");
    runCts(**device, "RTL", {NNCOSIM_CTS_DIR}, full && std::string(full) == "1" ? 1 : 5);
}
