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

namespace nncosim::driver::testing {
namespace {

// The main graph of `m` as a subgraph of the model `b` builds (its constants moved into b's).
Subgraph embed(ModelBuilder& b, Model m) {
    auto& values = b.model().operandValues;
    for (Operand& o : m.main.operands) {
        if (o.lifetime != OperandLifeTime::CONSTANT_COPY) continue;
        values.resize((values.size() + 3) & ~size_t{3});
        const auto* data = m.operandValues.data() + o.location.offset;
        o.location.offset = static_cast<uint32_t>(values.size());
        values.insert(values.end(), data, data + o.location.length);
    }
    return std::move(m.main);
}

// IF (cond, then, else, a, c) over uint8 tensors of `elements`: the then-branch is `thenAdds`
// chained ADDs (addChain), the else-branch one ADD.
Model ifChainModel(uint32_t elements, int thenAdds) {
    const auto type = OperandType::TENSOR_QUANT8_ASYMM;
    ModelBuilder b;
    const uint32_t cond = b.addInput(OperandType::TENSOR_BOOL8, {1});
    const uint32_t a = b.addInput(type, {elements}, 1.0f, 0);
    const uint32_t c = b.addInput(type, {elements}, 1.0f, 0);
    const uint32_t thenGraph = b.addSubgraph(embed(b, addChain(elements, thenAdds)));
    const uint32_t elseGraph = b.addSubgraph(embed(b, addChain(elements, 1)));
    const uint32_t out = b.addOutput(type, {elements}, 1.0f, 0);
    b.addOperation(OperationType::IF, {cond, thenGraph, elseGraph, a, c}, {out});
    return b.build();
}

// out[j] = max_i (a[j] + c[i]) for a [1, n] and c [n, 1]: a broadcast ADD to [n, n], then
// REDUCE_MAX over axis 0; small inputs and output, an n x n intermediate.
Model broadcastMax(uint32_t n) {
    const auto type = OperandType::TENSOR_QUANT8_ASYMM;
    ModelBuilder b;
    const uint32_t a = b.addInput(type, {1, n}, 1.0f, 0);
    const uint32_t c = b.addInput(type, {n, 1}, 1.0f, 0);
    const uint32_t sum = b.addOperand(type, {n, n}, 1.0f, 0);
    b.addOperation(OperationType::ADD, {a, c, b.addInt32(0)}, {sum});
    const uint32_t axes = b.addConstant(OperandType::TENSOR_INT32, {1}, std::vector<int32_t>{0});
    const uint32_t out = b.addOutput(type, {n}, 1.0f, 0);
    b.addOperation(OperationType::REDUCE_MAX, {sum, axes, b.addBool(false)}, {out});
    return b.build();
}

// IF (cond, then, else, a, c) with broadcastMax(n) in both branches.
Model ifBroadcastModel(uint32_t n) {
    const auto type = OperandType::TENSOR_QUANT8_ASYMM;
    ModelBuilder b;
    const uint32_t cond = b.addInput(OperandType::TENSOR_BOOL8, {1});
    const uint32_t a = b.addInput(type, {1, n}, 1.0f, 0);
    const uint32_t c = b.addInput(type, {n, 1}, 1.0f, 0);
    const uint32_t thenGraph = b.addSubgraph(embed(b, broadcastMax(n)));
    const uint32_t elseGraph = b.addSubgraph(embed(b, broadcastMax(n)));
    const uint32_t out = b.addOutput(type, {n}, 1.0f, 0);
    b.addOperation(OperationType::IF, {cond, thenGraph, elseGraph, a, c}, {out});
    return b.build();
}

}  // namespace

// "What prepares, launches" with control flow: an IF whose branch needs more device memory than
// the device has. An operation of the branch whose operands exceed the device (the IF's own
// operands are small): the IF is not claimed. Each operation fits but the branch's job does not:
// claimed, and preparation fails with RESOURCE_EXHAUSTED_PERSISTENT instead of every execution
// that takes the branch. Branches that fit are claimed, prepare and run.
TEST_CASE("driver_claims_count_control_flow_subgraphs") {
    auto t = makeTestDevice();  // 64 MiB of device memory
    // 8500 x 8500 bytes (72 MB) inside a branch whose inputs and output take 25 KB.
    auto big = t.device->getSupportedOperations(ifBroadcastModel(8500));
    REQUIRE_MESSAGE(big.ok(), big.status().message);
    CHECK(*big == std::vector<bool>{false});
    auto small = t.device->getSupportedOperations(ifBroadcastModel(100));
    REQUIRE_MESSAGE(small.ok(), small.status().message);
    CHECK(*small == std::vector<bool>{true});
    {
        auto prepared = prepareModelBlocking(*t.device, ifBroadcastModel(100));
        REQUIRE_MESSAGE(prepared.ok(), prepared.status().message);
        TestRequest r = makeRequest({1, 100, 100}, {100});
        r.input(0)[0] = 1;
        for (int i = 0; i < 100; ++i) {
            r.input(1)[i] = static_cast<uint8_t>(i % 7);
            r.input(2)[i] = static_cast<uint8_t>(i % 5);
        }
        const ExecutionResult result = (*prepared)->execute(r.request, MeasureTiming::NO, {}, {});
        REQUIRE_MESSAGE(result.ok(), result.status.message);
        for (int j = 0; j < 100; ++j) CHECK(r.output(0)[j] == j % 7 + 4);
    }

    const Model chain = ifChainModel(14'000'000, 3);
    auto claimed = t.device->getSupportedOperations(chain);
    REQUIRE_MESSAGE(claimed.ok(), claimed.status().message);
    CHECK(*claimed == std::vector<bool>{true});
    auto refused = prepareModelBlocking(*t.device, chain);
    CHECK(refused.status().code == ErrorStatus::RESOURCE_EXHAUSTED_PERSISTENT);

    const Model fits = ifChainModel(1000, 3);
    auto prepared = prepareModelBlocking(*t.device, fits);
    REQUIRE_MESSAGE(prepared.ok(), prepared.status().message);
    TestRequest r = makeRequest({1, 1000, 1000}, {1000});
    r.input(0)[0] = 1;  // then: ((a + c) + c) + c
    std::fill(r.input(1), r.input(1) + 1000, uint8_t{3});
    std::fill(r.input(2), r.input(2) + 1000, uint8_t{4});
    const ExecutionResult result = (*prepared)->execute(r.request, MeasureTiming::NO, {}, {});
    REQUIRE_MESSAGE(result.ok(), result.status.message);
    CHECK(r.output(0)[0] == 15);
    CHECK(r.output(0)[999] == 15);
}

}  // namespace nncosim::driver::testing
