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
