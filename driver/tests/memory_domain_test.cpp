// VTS-equivalent memory domain: allocate with bad roles, the copy rules, uninitialized use,
// buffers chained between executions, tokens of other devices.
#include <functional>

#include "driver/tests/TestUtil.h"
#include "model/NpuExtension.h"
#include "model/Validation.h"

using namespace nncosim;
using namespace nncosim::driver;
using namespace nncosim::driver::testing;

namespace {

SharedMemory memoryOf(size_t size, uint8_t fill = 0) {
    auto m = Memory::create(size);
    REQUIRE(m.ok());
    std::memset((*m)->data(), fill, size);
    return *m;
}

// out = a + b like addModel(), with every shape unknown until execution.
Model dynamicAddModel() {
    ModelBuilder b;
    const uint32_t a = b.addInput(OperandType::TENSOR_QUANT8_ASYMM, {0, 0}, 1.0f, 0);
    const uint32_t c = b.addInput(OperandType::TENSOR_QUANT8_ASYMM, {0, 0}, 1.0f, 0);
    const uint32_t act = b.addInt32(0);
    const uint32_t out = b.addOutput(OperandType::TENSOR_QUANT8_ASYMM, {0, 0}, 1.0f, 0);
    b.addOperation(OperationType::ADD, {a, c, act}, {out});
    return b.build();
}

// out0 = a + b and out1 = out0 + b on [2, 3] uint8 tensors.
Model twoOutputAddModel() {
    ModelBuilder b;
    const auto type = OperandType::TENSOR_QUANT8_ASYMM;
    const uint32_t a = b.addInput(type, {2, 3}, 1.0f, 0);
    const uint32_t c = b.addInput(type, {2, 3}, 1.0f, 0);
    const uint32_t out0 = b.addOutput(type, {2, 3}, 1.0f, 0);
    const uint32_t out1 = b.addOutput(type, {2, 3}, 1.0f, 0);
    b.addOperation(OperationType::ADD, {a, c, b.addInt32(0)}, {out0});
    b.addOperation(OperationType::ADD, {out0, c, b.addInt32(0)}, {out1});
    return b.build();
}

}  // namespace

TEST_CASE("driver_memory_domain_allocate_roles") {
    auto t = makeTestDevice();
    auto other = makeTestDevice();
    auto prepared = prepare(*t.device, addModel());
    auto foreign = prepare(*other.device, addModel());
    auto signedModel = prepare(*t.device, addModel(OperandType::TENSOR_QUANT8_ASYMM_SIGNED));
    const BufferRole in0{0, 0, 1.0f}, in1{0, 1, 1.0f}, out0{0, 0, 1.0f};
    auto code = [&](const BufferDesc& desc, std::vector<SharedPreparedModel> models,
                    std::vector<BufferRole> inputs, std::vector<BufferRole> outputs) {
        return t.device->allocate(desc, models, inputs, outputs).status().code;
    };
    CHECK(code({}, {prepared}, {in0, in1}, {out0}) == ErrorStatus::NONE);
    CHECK(code({}, {}, {in0}, {}) == ErrorStatus::INVALID_ARGUMENT);
    CHECK(code({}, {prepared}, {}, {}) == ErrorStatus::INVALID_ARGUMENT);
    CHECK(code({}, {prepared}, {{1, 0, 1.0f}}, {}) == ErrorStatus::INVALID_ARGUMENT);
    CHECK(code({}, {prepared}, {{0, 2, 1.0f}}, {}) == ErrorStatus::INVALID_ARGUMENT);
    CHECK(code({}, {prepared}, {}, {{0, 1, 1.0f}}) == ErrorStatus::INVALID_ARGUMENT);
    CHECK(code({}, {prepared}, {{0, 0, 0.0f}}, {}) == ErrorStatus::INVALID_ARGUMENT);
    CHECK(code({}, {prepared}, {{0, 0, 1.5f}}, {}) == ErrorStatus::INVALID_ARGUMENT);
    CHECK(code({}, {prepared}, {in0, in0}, {}) == ErrorStatus::INVALID_ARGUMENT);
    CHECK(code({}, {foreign}, {in0}, {}) == ErrorStatus::INVALID_ARGUMENT);
    CHECK(code({}, {nullptr}, {in0}, {}) == ErrorStatus::INVALID_ARGUMENT);
    CHECK(code({}, {prepared, signedModel}, {in0, {1, 0, 1.0f}}, {}) ==
          ErrorStatus::INVALID_ARGUMENT);
    CHECK(code({{2, 4}}, {prepared}, {in0}, {}) == ErrorStatus::INVALID_ARGUMENT);
    CHECK(code({{2, 3, 1}}, {prepared}, {in0}, {}) == ErrorStatus::INVALID_ARGUMENT);
    CHECK(code({{2, 3}}, {prepared}, {in0}, {}) == ErrorStatus::NONE);
    auto dynamic = prepare(*t.device, addModel(OperandType::TENSOR_QUANT8_ASYMM, {0, 0}));
    CHECK(code({}, {dynamic}, {}, {out0}) == ErrorStatus::NONE);  // shape set by the first write
    CHECK(code({{2, 3}}, {dynamic}, {}, {out0}) == ErrorStatus::NONE);
}

TEST_CASE("driver_memory_domain_copy_rules") {
    auto t = makeTestDevice();
    auto prepared = prepare(*t.device, addModel());
    auto buffer = t.device->allocate({}, {prepared}, {{0, 0, 1.0f}}, {});
    REQUIRE(buffer.ok());
    CHECK((*buffer)->getToken() != 0);
    CHECK((*buffer)->copyTo(memoryOf(6)).code == ErrorStatus::GENERAL_FAILURE);  // uninitialized
    CHECK((*buffer)->copyFrom(memoryOf(5), {}).code == ErrorStatus::INVALID_ARGUMENT);
    CHECK((*buffer)->copyFrom(memoryOf(6), {3, 2}).code == ErrorStatus::INVALID_ARGUMENT);
    CHECK((*buffer)->copyFrom(memoryOf(6), {2, 0}).code == ErrorStatus::INVALID_ARGUMENT);
    CHECK((*buffer)->copyFrom(nullptr, {}).code == ErrorStatus::INVALID_ARGUMENT);
    REQUIRE((*buffer)->copyFrom(memoryOf(6, 42), {2, 3}).ok());
    auto dst = memoryOf(6);
    REQUIRE((*buffer)->copyTo(dst).ok());
    CHECK(dst->data()[5] == 42);
    CHECK((*buffer)->copyTo(memoryOf(7)).code == ErrorStatus::INVALID_ARGUMENT);
    // A failed copyFrom leaves the buffer uninitialized.
    CHECK((*buffer)->copyFrom(memoryOf(4), {}).code == ErrorStatus::INVALID_ARGUMENT);
    CHECK((*buffer)->copyTo(dst).code == ErrorStatus::GENERAL_FAILURE);
}

TEST_CASE("driver_memory_domain_buffers_in_requests") {
    auto t = makeTestDevice();
    auto prepared = prepare(*t.device, addModel());
    // out = a + b; feed the output back as input a through one buffer.
    auto buffer = t.device->allocate({}, {prepared}, {{0, 0, 1.0f}}, {{0, 0, 1.0f}});
    REQUIRE(buffer.ok());
    const MemoryDomainToken token = (*buffer)->getToken();
    auto r = addRequest();
    Request request = r.request;
    request.pools.push_back(token);
    Request::Argument bufferArg;
    bufferArg.location.poolIndex = 1;

    SUBCASE("uninitialized input") {
        Request q = request;
        q.inputs[0] = bufferArg;
        CHECK(prepared->execute(q, MeasureTiming::NO, {}, {}).status.code ==
              ErrorStatus::GENERAL_FAILURE);
    }
    SUBCASE("chained") {
        Request first = request;
        first.outputs[0] = bufferArg;  // buffer = a + b = 11, 22, ...
        auto result = prepared->execute(first, MeasureTiming::NO, {}, {});
        REQUIRE_MESSAGE(result.ok(), result.status.message);
        Request second = request;
        second.inputs[0] = bufferArg;  // out = buffer + b = 21, 42, ...
        std::memset(r.output(0), 0, 6);
        REQUIRE(prepared->execute(second, MeasureTiming::NO, {}, {}).ok());
        for (int i = 0; i < 6; ++i) CHECK(r.output(0)[i] == 21 * (i + 1));
        auto dst = memoryOf(6);
        REQUIRE((*buffer)->copyTo(dst).ok());
        CHECK(dst->data()[0] == 11);
        // A failed execution writing the buffer leaves it uninitialized.
        t.npu->hangNextJob();
        CHECK(prepared->execute(first, MeasureTiming::NO, {}, {}).status.code ==
              ErrorStatus::GENERAL_FAILURE);
        CHECK((*buffer)->copyTo(dst).code == ErrorStatus::GENERAL_FAILURE);
    }
    SUBCASE("invalid uses") {
        Request q = request;
        q.inputs[0] = bufferArg;
        q.outputs[0] = bufferArg;  // the same buffer as input and output
        REQUIRE((*buffer)->copyFrom(memoryOf(6, 1), {}).ok());
        CHECK(prepared->execute(q, MeasureTiming::NO, {}, {}).status.code ==
              ErrorStatus::INVALID_ARGUMENT);
        q = request;
        q.inputs[1] = bufferArg;  // input 1 is not a role of the buffer
        CHECK(prepared->execute(q, MeasureTiming::NO, {}, {}).status.code ==
              ErrorStatus::INVALID_ARGUMENT);
        q = request;
        q.inputs[0] = bufferArg;
        q.inputs[0].location.length = 6;  // buffer arguments have offset and length 0
        CHECK(prepared->execute(q, MeasureTiming::NO, {}, {}).status.code ==
              ErrorStatus::INVALID_ARGUMENT);
        q = request;
        q.inputs[0] = bufferArg;
        q.inputs[0].dimensions = {3, 2};
        CHECK(prepared->execute(q, MeasureTiming::NO, {}, {}).status.code ==
              ErrorStatus::INVALID_ARGUMENT);
        // Another prepared model of the same model has no role in the buffer.
        auto second = prepare(*t.device, addModel());
        q = request;
        q.inputs[0] = bufferArg;
        CHECK(second->execute(q, MeasureTiming::NO, {}, {}).status.code ==
              ErrorStatus::INVALID_ARGUMENT);
    }
    SUBCASE("tokens are valid only on their device and while the buffer lives") {
        auto other = makeTestDevice();
        auto foreign = prepare(*other.device, addModel());
        Request q = request;
        q.inputs[0] = bufferArg;
        REQUIRE((*buffer)->copyFrom(memoryOf(6, 1), {}).ok());
        CHECK(foreign->execute(q, MeasureTiming::NO, {}, {}).status.code ==
              ErrorStatus::INVALID_ARGUMENT);
        buffer = Result<SharedBuffer>(SharedBuffer());
        CHECK(prepared->execute(q, MeasureTiming::NO, {}, {}).status.code ==
              ErrorStatus::INVALID_ARGUMENT);
    }
}

TEST_CASE("driver_memory_domain_unknown_shape") {
    // Neither the descriptor nor the roles give the buffer's shape: copyFrom with dimensions or
    // the first execution writing it sets it, and a later write may change it.
    auto t = makeTestDevice();
    auto prepared = prepare(*t.device, dynamicAddModel());
    const BufferRole role{0, 0, 1.0f};
    auto buffer = t.device->allocate({}, {prepared}, {role}, {role});
    REQUIRE_MESSAGE(buffer.ok(), buffer.status().message);
    auto six = memoryOf(6), twelve = memoryOf(12);
    CHECK((*buffer)->copyTo(six).code == ErrorStatus::GENERAL_FAILURE);  // uninitialized

    // copyFrom needs fully specified dimensions and a source of their size.
    CHECK((*buffer)->copyFrom(memoryOf(6), {}).code == ErrorStatus::INVALID_ARGUMENT);
    CHECK((*buffer)->copyFrom(memoryOf(6), {2, 0}).code == ErrorStatus::INVALID_ARGUMENT);
    CHECK((*buffer)->copyFrom(memoryOf(5), {2, 3}).code == ErrorStatus::INVALID_ARGUMENT);
    CHECK((*buffer)->copyFrom(memoryOf(6), {2, 3, 1}).code == ErrorStatus::INVALID_ARGUMENT);
    REQUIRE((*buffer)->copyFrom(memoryOf(12, 7), {4, 3}).ok());
    REQUIRE((*buffer)->copyTo(twelve).ok());
    CHECK(twelve->data()[11] == 7);
    CHECK((*buffer)->copyTo(six).code == ErrorStatus::INVALID_ARGUMENT);

    // An execution writing it as its output sets the shape to the output's, [2, 3].
    auto r = addRequest();
    Request request = r.request;
    request.pools.push_back((*buffer)->getToken());
    Request::Argument bufferArg;
    bufferArg.location.poolIndex = 1;
    for (auto& arg : request.inputs) arg.dimensions = {2, 3};
    Request first = request;
    first.outputs[0] = bufferArg;
    auto result = prepared->execute(first, MeasureTiming::NO, {}, {});
    REQUIRE_MESSAGE(result.ok(), result.status.message);
    REQUIRE(result.outputShapes.size() == 1);
    CHECK(result.outputShapes[0].dimensions == std::vector<uint32_t>{2, 3});
    REQUIRE((*buffer)->copyTo(six).ok());
    for (int i = 0; i < 6; ++i) CHECK(six->data()[i] == 11 * (i + 1));
    CHECK((*buffer)->copyTo(twelve).code == ErrorStatus::INVALID_ARGUMENT);

    // Read as an input, it has the shape of that write (given by the request, as the runtime
    // gives every input's): out = buffer + b = 21, 42, ...
    Request second = request;
    second.inputs[0] = bufferArg;
    second.inputs[0].dimensions = {3, 2};
    CHECK(prepared->execute(second, MeasureTiming::NO, {}, {}).status.code ==
          ErrorStatus::INVALID_ARGUMENT);
    second.inputs[0].dimensions = {2, 3};
    std::memset(r.output(0), 0, 6);
    result = prepared->execute(second, MeasureTiming::NO, {}, {});
    REQUIRE_MESSAGE(result.ok(), result.status.message);
    for (int i = 0; i < 6; ++i) CHECK(r.output(0)[i] == 21 * (i + 1));

    // A failed execution writing it leaves it uninitialized.
    t.npu->hangNextJob();
    CHECK(prepared->execute(first, MeasureTiming::NO, {}, {}).status.code ==
          ErrorStatus::GENERAL_FAILURE);
    CHECK((*buffer)->copyTo(six).code == ErrorStatus::GENERAL_FAILURE);
    CHECK(prepared->execute(second, MeasureTiming::NO, {}, {}).status.code ==
          ErrorStatus::GENERAL_FAILURE);
}

// IDevice.aidl's allocate: "A buffer will return to the uninitialized state if it is used as an
// output in a failed execution": also when a fenced execution fails before it runs (a waitFor
// fence signals an error, the deadline passes while waiting), on the prepared model and on a
// reusable execution, and when an output is too short (OUTPUT_INSUFFICIENT_SIZE).
TEST_CASE("driver_memory_domain_failed_fenced_execution_uninitializes") {
    auto t = makeTestDevice();
    auto prepared = prepare(*t.device, twoOutputAddModel());
    auto buffer = t.device->allocate({}, {prepared}, {}, {{0, 0, 1.0f}});
    REQUIRE(buffer.ok());
    auto r = makeRequest({6, 6}, {6, 6});
    for (int i = 0; i < 6; ++i) r.input(0)[i] = r.input(1)[i] = static_cast<uint8_t>(i);
    Request request = r.request;
    request.pools.push_back((*buffer)->getToken());
    request.outputs[0] = {};
    request.outputs[0].location.poolIndex = 1;
    auto dst = memoryOf(6);
    // A successful execution initializes the buffer.
    auto initialize = [&] {
        REQUIRE(prepared->execute(request, MeasureTiming::NO, {}, {}).ok());
        REQUIRE((*buffer)->copyTo(dst).ok());
        CHECK(dst->data()[5] == 10);
    };
    auto uninitialized = [&] {
        CHECK((*buffer)->copyTo(dst).code == ErrorStatus::GENERAL_FAILURE);
    };
    using Launch =
        std::function<Result<FencedExecution>(const std::vector<SyncFence>&, OptionalTimePoint)>;
    auto execution = prepared->createReusableExecution(request, MeasureTiming::NO, {});
    REQUIRE(execution.ok());
    const std::vector<std::pair<const char*, Launch>> launches = {
        {"executeFenced",
         [&](const std::vector<SyncFence>& waitFor, OptionalTimePoint deadline) {
             return prepared->executeFenced(request, waitFor, MeasureTiming::NO, deadline, {}, {});
         }},
        {"computeFenced",
         [&](const std::vector<SyncFence>& waitFor, OptionalTimePoint deadline) {
             return (*execution)->computeFenced(waitFor, deadline, {});
         }},
    };
    for (const auto& [name, launch] : launches) {
        CAPTURE(name);
        // A waitFor fence signals an error.
        initialize();
        auto gate = createSyncFence();
        REQUIRE(gate.ok());
        auto fenced = launch({gate->first}, {});
        REQUIRE(fenced.ok());
        gate->second.signal(false);
        CHECK(fenced->fence.wait(std::chrono::seconds(10)) == SyncFence::State::ERROR);
        CHECK(fenced->callback->getExecutionInfo().status.code == ErrorStatus::GENERAL_FAILURE);
        uninitialized();
        // The deadline passes while waiting for a fence.
        initialize();
        auto never = createSyncFence();
        REQUIRE(never.ok());
        fenced = launch({never->first}, Clock::now() + std::chrono::milliseconds(20));
        REQUIRE(fenced.ok());
        CHECK(fenced->fence.wait(std::chrono::seconds(10)) == SyncFence::State::ERROR);
        CHECK(fenced->callback->getExecutionInfo().status.code ==
              ErrorStatus::MISSED_DEADLINE_TRANSIENT);
        uninitialized();
    }
    // An execution refused because another output is too short failed too.
    initialize();
    Request shortOutput = request;
    shortOutput.outputs[1].location.length -= 1;
    CHECK(prepared->executeFenced(shortOutput, {}, MeasureTiming::NO, {}, {}, {}).status().code ==
          ErrorStatus::OUTPUT_INSUFFICIENT_SIZE);
    uninitialized();
    initialize();
    CHECK(prepared->execute(shortOutput, MeasureTiming::NO, {}, {}).status.code ==
          ErrorStatus::OUTPUT_INSUFFICIENT_SIZE);
    uninitialized();
}

// Status codes: a valid descriptor above the driver's buffer limit is a property the driver does
// not support (GENERAL_FAILURE, as the AIDL says, not INVALID_ARGUMENT); copyTo checks the
// destination's size before the buffer's state (IBuffer.h: INVALID_ARGUMENT); roles whose
// extension operands differ in their extra parameters are INVALID_ARGUMENT, like any other
// incompatible roles, before the extension type's GENERAL_FAILURE.
TEST_CASE("driver_memory_domain_status_codes") {
    auto t = makeTestDevice();
    auto dynamic = prepare(*t.device, addModel(OperandType::TENSOR_QUANT8_ASYMM, {0, 0}));
    const BufferRole out0{0, 0, 1.0f};
    // 65536 x 65536 uint8: 4 GiB, twice the limit.
    CHECK(t.device->allocate({{65536, 65536}}, {dynamic}, {}, {out0}).status().code ==
          ErrorStatus::GENERAL_FAILURE);
    CHECK(t.device->allocate({{2, 3}}, {dynamic}, {}, {out0}).ok());

    auto prepared = prepare(*t.device, addModel());
    auto buffer = t.device->allocate({}, {prepared}, {{0, 0, 1.0f}}, {});
    REQUIRE(buffer.ok());
    CHECK((*buffer)->copyTo(memoryOf(7)).code == ErrorStatus::INVALID_ARGUMENT);
    CHECK((*buffer)->copyTo(memoryOf(5)).code == ErrorStatus::INVALID_ARGUMENT);
    CHECK((*buffer)->copyTo(memoryOf(6)).code == ErrorStatus::GENERAL_FAILURE);

    // Two models with an (unused) input of the NPU extension's table type, whose extension
    // parameters differ.
    auto withTable = [](std::vector<uint8_t> params) {
        Model m = addModel();
        Operand table;
        table.type = static_cast<OperandType>(makeExtensionType(7, npu_extension::kLutTable));
        table.dimensions = {256};
        table.lifetime = OperandLifeTime::SUBGRAPH_INPUT;
        table.extraParams = std::move(params);
        m.main.inputIndexes.push_back(static_cast<uint32_t>(m.main.operands.size()));
        m.main.operands.push_back(table);
        m.extensionNameToPrefix.push_back({std::string(npu_extension::kName), 7});
        return m;
    };
    const Model m1 = withTable({1}), m2 = withTable({2});
    REQUIRE_MESSAGE(validateModel(m1).ok(), validateModel(m1).status().message);
    auto p1 = prepare(*t.device, m1);
    auto p2 = prepare(*t.device, m2);
    CHECK(t.device->allocate({}, {p1, p2}, {{0, 2, 1.0f}, {1, 2, 1.0f}}, {}).status().code ==
          ErrorStatus::INVALID_ARGUMENT);
    // The same parameters: compatible roles of a type this driver's buffers do not support.
    auto p3 = prepare(*t.device, withTable({1}));
    CHECK(t.device->allocate({}, {p1, p3}, {{0, 2, 1.0f}, {1, 2, 1.0f}}, {}).status().code ==
          ErrorStatus::GENERAL_FAILURE);
}
