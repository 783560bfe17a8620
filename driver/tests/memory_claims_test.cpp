// What the driver claims and prepares fits the device's memory: an operation whose operands
// alone exceed it is unsupported (the runtime falls back), a model that needs more than the
// device has fails preparation, and what prepares launches.
#include <doctest/doctest.h>

#include "driver/tests/TestUtil.h"

namespace nncosim::driver::testing {
namespace {

// `adds` chained ADDs over uint8 tensors of `elements`: t1 = in0 + in1, t2 = t1 + in1, ...
Model addChain(uint32_t elements, int adds) {
    ModelBuilder b;
    const auto type = OperandType::TENSOR_QUANT8_ASYMM;
    uint32_t a = b.addInput(type, {elements}, 1.0f, 0);
    const uint32_t c = b.addInput(type, {elements}, 1.0f, 0);
    for (int i = 0; i < adds; ++i) {
        const uint32_t act = b.addInt32(0);
        const uint32_t out = i + 1 == adds ? b.addOutput(type, {elements}, 1.0f, 0)
                                           : b.addOperand(type, {elements}, 1.0f, 0);
        b.addOperation(OperationType::ADD, {a, c, act}, {out});
        a = out;
    }
    return b.build();
}

}  // namespace

TEST_CASE("driver_claims_respect_device_memory") {
    auto t = makeTestDevice();  // 64 MiB of device memory
    const SharedDevice* device = &t.device;

    // Three 25 MB tensors cannot be on a 64 MiB device together: not claimed.
    auto big = (*device)->getSupportedOperations(addChain(25'000'000, 1));
    REQUIRE(big.ok());
    CHECK(*big == std::vector<bool>{false});

    // Each ADD of 14 MB tensors fits, the chain of three (five tensors) does not: claimed, but
    // preparation fails cleanly instead of every execution failing later.
    const Model chain = addChain(14'000'000, 3);
    auto claimed = (*device)->getSupportedOperations(chain);
    REQUIRE(claimed.ok());
    CHECK(*claimed == std::vector<bool>{true, true, true});
    auto prepared = prepareModelBlocking(**device, chain);
    CHECK(prepared.status().code == ErrorStatus::RESOURCE_EXHAUSTED_PERSISTENT);

    // One such ADD prepares and launches.
    auto one = prepareModelBlocking(**device, addChain(14'000'000, 1));
    REQUIRE_MESSAGE(one.ok(), one.status().message);
    TestRequest r = makeRequest({14'000'000, 14'000'000}, {14'000'000});
    std::fill(r.input(0), r.input(0) + 14'000'000, uint8_t{3});
    std::fill(r.input(1), r.input(1) + 14'000'000, uint8_t{4});
    const ExecutionResult result = (*one)->execute(r.request, MeasureTiming::NO, {}, {});
    REQUIRE_MESSAGE(result.ok(), result.status.message);
    CHECK(r.output(0)[0] == 7);
    CHECK(r.output(0)[13'999'999] == 7);
}

}  // namespace nncosim::driver::testing
