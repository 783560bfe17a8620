// VTS-equivalent validation: invalid models, preferences and priorities at preparation; request
// mutations (removed inputs/outputs, bad pools, bad lengths, bad dimensions, bad tokens) and bad
// execution arguments on every execution path. Each must fail with INVALID_ARGUMENT before the
// device is touched and leave the outputs untouched.
#include <functional>

#include "driver/tests/TestUtil.h"
#include "model/Validation.h"

using namespace nncosim;
using namespace nncosim::driver;
using namespace nncosim::driver::testing;

namespace {

struct Mutation {
    std::string name;
    std::function<void(Request&)> apply;
};

std::vector<Mutation> requestMutations() {
    std::vector<Mutation> m;
    for (size_t i = 0; i < 2; ++i)
        m.push_back({"remove input " + std::to_string(i),
                     [i](Request& r) { r.inputs.erase(r.inputs.begin() + i); }});
    m.push_back({"remove output", [](Request& r) { r.outputs.clear(); }});
    m.push_back({"add input", [](Request& r) { r.inputs.push_back(r.inputs[0]); }});
    m.push_back({"add output", [](Request& r) { r.outputs.push_back(r.outputs[0]); }});
    m.push_back(
        {"input pool index out of range", [](Request& r) { r.inputs[0].location.poolIndex = 1; }});
    m.push_back({"output pool index out of range",
                 [](Request& r) { r.outputs[0].location.poolIndex = 7; }});
    m.push_back({"no pools", [](Request& r) { r.pools.clear(); }});
    m.push_back({"null pool", [](Request& r) { r.pools[0] = SharedMemory(); }});
    m.push_back({"token 0", [](Request& r) { r.pools[0] = MemoryDomainToken{0}; }});
    m.push_back({"unknown token", [](Request& r) { r.pools[0] = MemoryDomainToken{0x7fffffff}; }});
    m.push_back(
        {"input outside its pool", [](Request& r) { r.inputs[1].location.offset = 1u << 20; }});
    m.push_back({"output outside its pool", [](Request& r) { r.outputs[0].location.offset = 15; }});
    m.push_back({"input length + 1", [](Request& r) { r.inputs[0].location.length += 1; }});
    m.push_back({"input length - 1", [](Request& r) { r.inputs[0].location.length -= 1; }});
    m.push_back({"input length 0", [](Request& r) { r.inputs[0].location.length = 0; }});
    m.push_back({"output length + 1", [](Request& r) { r.outputs[0].location.length += 1; }});
    m.push_back({"input rank", [](Request& r) { r.inputs[0].dimensions = {6}; }});
    m.push_back({"input dimension", [](Request& r) { r.inputs[0].dimensions = {3, 2}; }});
    m.push_back({"input dimension 0", [](Request& r) { r.inputs[0].dimensions = {2, 0}; }});
    m.push_back({"output dimension", [](Request& r) { r.outputs[0].dimensions = {2, 4}; }});
    m.push_back({"output rank", [](Request& r) { r.outputs[0].dimensions = {2, 3, 1}; }});
    m.push_back({"invalid lifetime", [](Request& r) {
                     r.inputs[0].lifetime = static_cast<Request::Argument::LifeTime>(9);
                 }});
    m.push_back({"null pointer argument", [](Request& r) {
                     r.inputs[0].lifetime = Request::Argument::LifeTime::POINTER;
                     r.inputs[0].location = {};
                     r.inputs[0].location.length = 6;
                 }});
    m.push_back({"read-only output pointer", [](Request& r) {
                     static const uint8_t bytes[6] = {};
                     r.outputs[0].lifetime = Request::Argument::LifeTime::POINTER;
                     r.outputs[0].location = {};
                     r.outputs[0].location.pointer = static_cast<const void*>(bytes);
                     r.outputs[0].location.length = 6;
                 }});
    m.push_back({"NO_VALUE with a location",
                 [](Request& r) { r.inputs[0].lifetime = Request::Argument::LifeTime::NO_VALUE; }});
    return m;
}

// Runs `request` on every execution path and checks each fails with INVALID_ARGUMENT without
// writing the output (whose bytes are 0xEE before).
void expectInvalidEverywhere(const SharedPreparedModel& prepared, const Request& request,
                             TestRequest& r, MeasureTiming measure = MeasureTiming::NO,
                             OptionalTimePoint deadline = {}, OptionalDuration loopTimeout = {}) {
    // Reusable executions take no deadline: a bad deadline is checked at compute time.
    const bool deadlineOnly = deadline && measure == MeasureTiming::NO && !loopTimeout;
    auto untouched = [&] {
        for (int i = 0; i < 6; ++i) CHECK(r.pool->data()[12 + i] == 0xEE);
    };
    std::memset(r.pool->data() + 12, 0xEE, 6);
    CHECK(prepared->execute(request, measure, deadline, loopTimeout).status.code ==
          ErrorStatus::INVALID_ARGUMENT);

    auto callback = std::make_shared<ExecutionCallback>();
    const Status launch =
        prepared->executeAsynchronously(request, measure, deadline, loopTimeout, callback);
    CHECK(launch.code == ErrorStatus::INVALID_ARGUMENT);
    CHECK(callback->result().status.code == launch.code);
    CHECK(callback->notifications() == 1);

    CHECK(prepared->executeFenced(request, {}, measure, deadline, loopTimeout, {}).status().code ==
          ErrorStatus::INVALID_ARGUMENT);

    auto burst = prepared->configureExecutionBurst();
    REQUIRE(burst.ok());
    CHECK((*burst)->execute(request, measure, deadline, loopTimeout).status.code ==
          ErrorStatus::INVALID_ARGUMENT);
    if (deadlineOnly) {
        auto execution = prepared->createReusableExecution(request, measure, loopTimeout);
        REQUIRE(execution.ok());
        CHECK((*execution)->compute(deadline).status.code == ErrorStatus::INVALID_ARGUMENT);
        CHECK((*execution)->computeFenced({}, deadline, {}).status().code ==
              ErrorStatus::INVALID_ARGUMENT);
    } else {
        CHECK((*burst)->createReusableExecution(request, measure, loopTimeout).status().code ==
              ErrorStatus::INVALID_ARGUMENT);
        CHECK(prepared->createReusableExecution(request, measure, loopTimeout).status().code ==
              ErrorStatus::INVALID_ARGUMENT);
    }
    untouched();
}

}  // namespace

TEST_CASE("driver_validation_request_mutations_on_every_path") {
    auto t = makeTestDevice();
    auto prepared = prepare(*t.device, addModel());
    const uint64_t jobsBefore = t.npu->jobCount();
    for (const Mutation& mutation : requestMutations()) {
        CAPTURE(mutation.name);
        auto r = addRequest();
        Request bad = r.request;
        mutation.apply(bad);
        expectInvalidEverywhere(prepared, bad, r);
    }
    CHECK(t.npu->jobCount() == jobsBefore);  // nothing reached the device
    // The unmutated request still works on every path.
    auto r = addRequest();
    REQUIRE(prepared->execute(r.request, MeasureTiming::NO, {}, {}).ok());
    checkAddOutput(r);
}

TEST_CASE("driver_validation_execution_arguments") {
    auto t = makeTestDevice();
    auto prepared = prepare(*t.device, addModel());
    auto r = addRequest();
    expectInvalidEverywhere(prepared, r.request, r, static_cast<MeasureTiming>(3));
    expectInvalidEverywhere(prepared, r.request, r, MeasureTiming::NO, {}, Duration(-1));
    expectInvalidEverywhere(prepared, r.request, r, MeasureTiming::NO, {},
                            kMaxLoopTimeoutDuration + Duration(1));
    expectInvalidEverywhere(prepared, r.request, r, MeasureTiming::NO, TimePoint(Duration(-5)));
    CHECK(prepared->executeFenced(r.request, {}, MeasureTiming::NO, {}, {}, Duration(-1))
              .status()
              .code == ErrorStatus::INVALID_ARGUMENT);
    CHECK(prepared->executeFenced(r.request, {SyncFence()}, MeasureTiming::NO, {}, {}, {})
              .status()
              .code == ErrorStatus::INVALID_ARGUMENT);
    CHECK(prepared->executeAsynchronously(r.request, MeasureTiming::NO, {}, {}, nullptr).code ==
          ErrorStatus::INVALID_ARGUMENT);
}

TEST_CASE("driver_validation_prepare_arguments") {
    auto t = makeTestDevice();
    auto check = [&](const Model& model, ExecutionPreference preference, Priority priority) {
        auto callback = std::make_shared<PreparedModelCallback>();
        const Status launch =
            t.device->prepareModel(model, preference, priority, {}, {}, {}, {}, callback);
        CHECK(launch.code == ErrorStatus::INVALID_ARGUMENT);
        CHECK(callback->status().code == launch.code);
        CHECK(callback->preparedModel() == nullptr);
        CHECK(callback->notifications() == 1);
    };
    check(addModel(), static_cast<ExecutionPreference>(5), Priority::LOW);
    check(addModel(), ExecutionPreference::LOW_POWER, static_cast<Priority>(9));
    Model bad = addModel();
    bad.main.operands[0].type = static_cast<OperandType>(123);
    check(bad, ExecutionPreference::LOW_POWER, Priority::LOW);
    CHECK(t.device->getSupportedOperations(bad).status().code == ErrorStatus::INVALID_ARGUMENT);
    bad = addModel();
    bad.main.operations[0].inputs.pop_back();
    check(bad, ExecutionPreference::LOW_POWER, Priority::LOW);
    CHECK(t.device->getSupportedOperations(bad).status().code == ErrorStatus::INVALID_ARGUMENT);
    bad = addModel();
    bad.main.inputIndexes.push_back(42);
    check(bad, ExecutionPreference::SUSTAINED_SPEED, Priority::HIGH);
    // A declared output shape the operation contradicts: valid NNAPI (it is claimed), but
    // preparation rejects it with validateDeclaredShapes' message.
    bad = addModel(OperandType::TENSOR_QUANT8_ASYMM, {3, 2});
    REQUIRE(t.device->getSupportedOperations(bad).ok());
    check(bad, ExecutionPreference::FAST_SINGLE_ANSWER, Priority::MEDIUM);
    auto callback = std::make_shared<PreparedModelCallback>();
    t.device->prepareModel(bad, ExecutionPreference::FAST_SINGLE_ANSWER, Priority::MEDIUM, {}, {},
                           {}, {}, callback);
    CHECK(callback->status().message == validateDeclaredShapes(bad).message);
    CHECK(t.device
              ->prepareModel(addModel(), ExecutionPreference::LOW_POWER, Priority::LOW, {}, {}, {},
                             {}, nullptr)
              .code == ErrorStatus::INVALID_ARGUMENT);
}

TEST_CASE("driver_validation_unsupported_models_fail_preparation") {
    auto t = makeTestDevice();
    ModelBuilder b;  // float SIN: valid NNAPI, but not an NPU operation
    const uint32_t a = b.addInput(OperandType::TENSOR_FLOAT32, {2});
    const uint32_t out = b.addOutput(OperandType::TENSOR_FLOAT32, {2});
    b.addOperation(OperationType::SIN, {a}, {out});
    const Model model = b.build();
    auto supported = t.device->getSupportedOperations(model);
    REQUIRE(supported.ok());
    CHECK(*supported == std::vector<bool>{false});
    auto prepared = prepareModelBlocking(*t.device, model);
    CHECK(prepared.status().code == ErrorStatus::GENERAL_FAILURE);
}

namespace {

// out0 = a + b and out1 = out0 + b: two outputs of fully specified shape [2, 3].
Model twoOutputModel() {
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

// IPreparedModel 1.3: OUTPUT_INSUFFICIENT_SIZE "if at least one output operand buffer is not
// large enough", also for outputs whose shape the model fixes (VTS's mutation: length - 1,
// padding + 1), with every output's shape and isSufficient, on every execution path. The
// fenced path, which reports no shapes, fails the call with the status. An input one byte short
// stays INVALID_ARGUMENT.
TEST_CASE("driver_validation_output_insufficient_size_on_every_path") {
    auto t = makeTestDevice();
    auto prepared = prepare(*t.device, twoOutputModel());
    TestRequest r = makeRequest({6, 6}, {6, 6});
    for (int i = 0; i < 6; ++i) {
        r.input(0)[i] = static_cast<uint8_t>(i + 1);
        r.input(1)[i] = static_cast<uint8_t>(10 * (i + 1));
    }
    Request shortOutput = r.request;
    shortOutput.outputs[1].location.length -= 1;
    shortOutput.outputs[1].location.padding += 1;
    const uint64_t jobsBefore = t.npu->jobCount();
    std::memset(r.output(0), 0xEE, 12);
    auto checkShapes = [](const ExecutionResult& result) {
        CHECK(result.status.code == ErrorStatus::OUTPUT_INSUFFICIENT_SIZE);
        REQUIRE(result.outputShapes.size() == 2);
        CHECK(result.outputShapes[0].isSufficient);
        CHECK_FALSE(result.outputShapes[1].isSufficient);
        for (const OutputShape& shape : result.outputShapes)
            CHECK(shape.dimensions == std::vector<uint32_t>{2, 3});
        CHECK_FALSE(result.timing.timeOnDevice.has_value());
    };
    SUBCASE("sync") {
        checkShapes(prepared->execute(shortOutput, MeasureTiming::YES, {}, {}));
    }
    SUBCASE("async") {
        auto callback = std::make_shared<ExecutionCallback>();
        REQUIRE(prepared->executeAsynchronously(shortOutput, MeasureTiming::YES, {}, {}, callback)
                    .ok());
        checkShapes(callback->result());
    }
    SUBCASE("fenced") {
        CHECK(
            prepared->executeFenced(shortOutput, {}, MeasureTiming::NO, {}, {}, {}).status().code ==
            ErrorStatus::OUTPUT_INSUFFICIENT_SIZE);
    }
    SUBCASE("burst") {
        auto burst = prepared->configureExecutionBurst();
        REQUIRE(burst.ok());
        checkShapes((*burst)->execute(shortOutput, MeasureTiming::YES, {}, {}));
        auto execution = (*burst)->createReusableExecution(shortOutput, MeasureTiming::NO, {});
        REQUIRE_MESSAGE(execution.ok(), execution.status().message);
        checkShapes((*execution)->compute({}));
    }
    SUBCASE("reusable") {
        auto execution = prepared->createReusableExecution(shortOutput, MeasureTiming::NO, {});
        REQUIRE_MESSAGE(execution.ok(), execution.status().message);
        checkShapes((*execution)->compute({}));
        checkShapes((*execution)->compute({}));
        CHECK((*execution)->computeFenced({}, {}, {}).status().code ==
              ErrorStatus::OUTPUT_INSUFFICIENT_SIZE);
    }
    // Nothing ran and nothing was written.
    CHECK(t.npu->jobCount() == jobsBefore);
    for (int i = 0; i < 12; ++i) CHECK(r.output(0)[i] == 0xEE);
    // An input one byte short is still invalid.
    Request shortInput = r.request;
    shortInput.inputs[0].location.length -= 1;
    shortInput.inputs[0].location.padding += 1;
    CHECK(prepared->execute(shortInput, MeasureTiming::NO, {}, {}).status.code ==
          ErrorStatus::INVALID_ARGUMENT);
    // The full request runs.
    auto result = prepared->execute(r.request, MeasureTiming::NO, {}, {});
    REQUIRE_MESSAGE(result.ok(), result.status.message);
    for (int i = 0; i < 6; ++i) CHECK(r.output(1)[i] == 21 * (i + 1));
}

// IDevice.aidl: "If an operation may not be supported for any reason, getSupportedOperations
// must return false." An operation whose declared output shape contradicts its inputs is
// rejected by prepareModel (validateDeclaredShapes), so it is not claimed; the operations the
// contradiction does not involve still are.
TEST_CASE("driver_validation_contradicted_shape_is_not_claimed") {
    auto t = makeTestDevice();
    ModelBuilder b;
    const auto type = OperandType::TENSOR_QUANT8_ASYMM;
    const uint32_t a = b.addInput(type, {2, 3}, 1.0f, 0);
    const uint32_t c = b.addInput(type, {2, 3}, 1.0f, 0);
    const uint32_t sum = b.addOperand(type, {3, 2}, 1.0f, 0);  // ADD computes [2, 3]
    const uint32_t out0 = b.addOutput(type, {3, 2}, 1.0f, 0);
    const uint32_t out1 = b.addOutput(type, {2, 3}, 1.0f, 0);
    b.addOperation(OperationType::ADD, {a, c, b.addInt32(0)}, {sum});
    b.addOperation(OperationType::RELU, {sum}, {out0});
    b.addOperation(OperationType::ADD, {a, c, b.addInt32(0)}, {out1});
    const Model model = b.build();
    REQUIRE(validateModel(model).ok());
    auto supported = t.device->getSupportedOperations(model);
    REQUIRE(supported.ok());
    CHECK(*supported == std::vector<bool>{false, true, true});
    CHECK(prepareModelBlocking(*t.device, model).status().code == ErrorStatus::INVALID_ARGUMENT);
    // Each claimed operation, alone with its declared shapes, prepares.
    auto contradicted = t.device->getSupportedOperations(addModel(type, {3, 2}));
    REQUIRE(contradicted.ok());
    CHECK(*contradicted == std::vector<bool>{false});
    auto fine = t.device->getSupportedOperations(addModel());
    REQUIRE(fine.ok());
    CHECK(*fine == std::vector<bool>{true});
    CHECK(prepareModelBlocking(*t.device, addModel()).ok());
}
