// IF and WHILE on the NPU (driver/ControlFlow.h): the driver runs each straight stretch of a
// graph as a job and reads conditions back, so the jobs the device sees follow the control flow;
// a loop past its timeout fails as NNAPI says; an IF or WHILE is claimed only when the NPU runs
// every operation of its subgraphs. (The CTS tests of both run in driver_cts_*_matches_golden.)
#include <string>

#include "driver/tests/TestUtil.h"
#include "model/CtsReader.h"

using namespace nncosim;
using namespace nncosim::driver;
using namespace nncosim::driver::testing;

namespace {

CtsTest ctsTest(const std::string& file, const std::string& name) {
    auto cts = readCtsFile(std::string(NNCOSIM_CTS_DIR) + "/" + file);
    REQUIRE_MESSAGE(cts.ok(), cts.status().message);
    for (CtsTest& t : cts->tests)
        if (t.name == name) return std::move(t);
    FAIL("no CTS test " << name);
    return {};
}

// Executes `test` on the device; on success its outputs must be the expected ones, bit for bit
// (the tests used here are quantized or integer).
ExecutionResult execute(const IDevice& device, const CtsTest& test,
                        OptionalDuration loopTimeout = {}) {
    auto prepared = prepare(device, test.model);
    std::vector<uint32_t> inSizes, outSizes;
    for (const auto& t : test.inputs) inSizes.push_back(static_cast<uint32_t>(t.bytes.size()));
    for (const auto& t : test.expectedOutputs)
        outSizes.push_back(static_cast<uint32_t>(std::max<size_t>(t.bytes.size(), 1)));
    TestRequest r = makeRequest(inSizes, outSizes);
    for (size_t i = 0; i < test.inputs.size(); ++i)
        std::memcpy(r.input(i), test.inputs[i].bytes.data(), test.inputs[i].bytes.size());
    ExecutionResult result = prepared->execute(r.request, MeasureTiming::YES, {}, loopTimeout);
    if (!result.ok()) return result;
    for (size_t i = 0; i < test.expectedOutputs.size(); ++i) {
        const auto& want = test.expectedOutputs[i].bytes;
        CHECK(std::vector<uint8_t>(r.output(i), r.output(i) + want.size()) == want);
        CHECK(result.outputShapes[i].dimensions == test.expectedOutputs[i].dimensions);
    }
    return result;
}

}  // namespace

TEST_CASE("driver_while_runs_its_condition_and_body_as_jobs") {
    auto t = makeTestDevice();
    // Fibonacci: the condition (i < n) is one job, the body (i + 1 and the FULLY_CONNECTED step)
    // another; i starts at 1, so n = 5 takes 4 iterations: 5 conditions and 4 bodies.
    for (const char* name : {"while_fib_n_5_quant8", "while_fib_n_1_unused_output_quant8"}) {
        CAPTURE(name);
        const CtsTest test = ctsTest("V1_3/while_fib.json", name);
        auto supported = t.device->getSupportedOperations(test.model);
        REQUIRE(supported.ok());
        CHECK(*supported == std::vector<bool>{true});
        const uint64_t before = t.npu->jobCount();
        ExecutionResult result = execute(*t.device, test);
        REQUIRE_MESSAGE(result.ok(), result.status.message);
        const int n = test.inputs[0].bytes[0];
        CHECK(t.npu->jobCount() - before == static_cast<uint64_t>(n + n - 1));
        REQUIRE(result.timing.timeOnDevice.has_value());
        CHECK(result.timing.timeOnDevice->count() > 0);
    }
}

TEST_CASE("driver_if_runs_only_the_chosen_branch") {
    auto t = makeTestDevice();
    for (const char* name : {"if_simple_true_quant8", "if_simple_false_quant8",
                             "if_simple_true_int32", "if_simple_false_int32"}) {
        CAPTURE(name);
        const CtsTest test = ctsTest("V1_3/if_simple.json", name);
        const uint64_t before = t.npu->jobCount();
        ExecutionResult result = execute(*t.device, test);
        REQUIRE_MESSAGE(result.ok(), result.status.message);
        CHECK(t.npu->jobCount() - before == 1);
    }
}

TEST_CASE("driver_while_past_its_loop_timeout_misses_the_deadline") {
    auto t = makeTestDevice();
    const CtsTest test = ctsTest("V1_3/while_infinite_loop.json", "while_infinite_loop_quant8");
    ExecutionResult result = execute(*t.device, test, std::chrono::milliseconds(50));
    CHECK(result.status.code == ErrorStatus::MISSED_DEADLINE_TRANSIENT);
    CHECK(result.status.message.find("WHILE") != std::string::npos);
    // The device is usable afterwards.
    auto prepared = prepare(*t.device, addModel());
    TestRequest r = addRequest();
    REQUIRE(prepared->execute(r.request, MeasureTiming::NO, {}, {}).ok());
    checkAddOutput(r);
}

TEST_CASE("driver_control_flow_is_claimed_only_with_every_subgraph_operation") {
    auto t = makeTestDevice();
    CtsTest test = ctsTest("V1_3/if_simple.json", "if_simple_true_int32");
    auto supported = t.device->getSupportedOperations(test.model);
    REQUIRE(supported.ok());
    CHECK(*supported == std::vector<bool>{true});
    // The then-branch's ADD becomes an int32 DIV, which the NPU does not run: the IF is not
    // claimed.
    for (Subgraph& g : test.model.referenced)
        for (Operation& op : g.operations)
            if (op.type == OperationType::ADD) op.type = OperationType::DIV;
    supported = t.device->getSupportedOperations(test.model);
    REQUIRE_MESSAGE(supported.ok(), supported.status().message);
    CHECK(*supported == std::vector<bool>{false});
}
