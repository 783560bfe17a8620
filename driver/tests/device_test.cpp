// The device end to end on the behavioral NPU: every execution path, timing, the DMA window,
// memory clearing, faults and recovery.
#include <algorithm>
#include <atomic>
#include <thread>

#include "driver/Runtime.h"
#include "driver/tests/TestUtil.h"
#include "model/Validation.h"

using namespace nncosim;
using namespace nncosim::driver;
using namespace nncosim::driver::testing;

TEST_CASE("driver_device_identity") {
    auto t = makeTestDevice();
    CHECK(t.device->getType() == DeviceType::ACCELERATOR);
    CHECK_FALSE(t.device->getVersionString().empty());
    const auto [model, data] = t.device->getNumberOfCacheFilesNeeded();
    CHECK(model > 0);
    CHECK(data > 0);
    REQUIRE(t.device->getSupportedExtensions().size() == 1);
    CHECK(t.device->getSupportedExtensions()[0].name == "com.nncosim.npu");
    CHECK(validateExtension(t.device->getSupportedExtensions()[0]).ok());
    CHECK(t.device->wait().ok());
}

TEST_CASE("driver_device_execute_all_paths") {
    auto t = makeTestDevice();
    auto prepared = prepare(*t.device, addModel());

    SUBCASE("sync") {
        auto r = addRequest();
        auto result = prepared->execute(r.request, MeasureTiming::NO, {}, {});
        REQUIRE_MESSAGE(result.ok(), result.status.message);
        checkAddOutput(r);
        REQUIRE(result.outputShapes.size() == 1);
        CHECK(result.outputShapes[0].dimensions == std::vector<uint32_t>{2, 3});
        CHECK_FALSE(result.timing.timeOnDevice.has_value());
        CHECK_FALSE(result.timing.timeInDriver.has_value());
    }
    SUBCASE("async") {
        auto r = addRequest();
        auto callback = std::make_shared<ExecutionCallback>();
        REQUIRE(
            prepared->executeAsynchronously(r.request, MeasureTiming::YES, {}, {}, callback).ok());
        auto result = callback->result();
        REQUIRE_MESSAGE(result.ok(), result.status.message);
        checkAddOutput(r);
        CHECK(result.timing.timeOnDevice.has_value());
        CHECK(callback->notifications() == 1);
    }
    SUBCASE("fenced") {
        auto r = addRequest();
        auto gate = createSyncFence();
        REQUIRE(gate.ok());
        auto launched =
            prepared->executeFenced(r.request, {gate->first}, MeasureTiming::YES, {}, {}, {});
        REQUIRE_MESSAGE(launched.ok(), launched.status().message);
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
        CHECK(launched->fence.state() == SyncFence::State::ACTIVE);  // still waiting for the gate
        CHECK(r.output(0)[0] == 0);
        gate->second.signal(true);
        CHECK(launched->fence.wait(std::chrono::seconds(10)) == SyncFence::State::SIGNALED);
        auto info = launched->callback->getExecutionInfo();
        CHECK(info.status.ok());
        CHECK(info.timingLaunched.timeOnDevice.has_value());
        CHECK(info.timingFenced.timeInDriver.has_value());
        CHECK(*info.timingLaunched.timeInDriver >= *info.timingFenced.timeInDriver);
        checkAddOutput(r);
    }
    SUBCASE("fenced_error_propagates") {
        auto r = addRequest();
        auto gate = createSyncFence();
        REQUIRE(gate.ok());
        auto launched =
            prepared->executeFenced(r.request, {gate->first}, MeasureTiming::NO, {}, {}, {});
        REQUIRE(launched.ok());
        gate->second.signal(false);
        CHECK(launched->fence.wait(std::chrono::seconds(10)) == SyncFence::State::ERROR);
        CHECK(launched->callback->getExecutionInfo().status.code == ErrorStatus::GENERAL_FAILURE);
        CHECK(r.output(0)[0] == 0);
    }
    SUBCASE("burst") {
        auto burst = prepared->configureExecutionBurst();
        REQUIRE(burst.ok());
        auto r = addRequest();
        auto hold = (*burst)->cacheMemory(r.pool);
        for (int i = 0; i < 3; ++i) {
            std::memset(r.output(0), 0, 6);
            auto result = (*burst)->execute(r.request, MeasureTiming::NO, {}, {});
            REQUIRE(result.ok());
            checkAddOutput(r);
        }
    }
    SUBCASE("reusable") {
        auto r = addRequest();
        auto execution = prepared->createReusableExecution(r.request, MeasureTiming::YES, {});
        REQUIRE(execution.ok());
        for (int i = 0; i < 3; ++i) {
            std::memset(r.output(0), 0, 6);
            auto result = (*execution)->compute({});
            REQUIRE(result.ok());
            CHECK(result.timing.timeOnDevice.has_value());
            checkAddOutput(r);
        }
        std::memset(r.output(0), 0, 6);
        auto fenced = (*execution)->computeFenced({}, {}, {});
        REQUIRE(fenced.ok());
        CHECK(fenced->fence.wait(std::chrono::seconds(10)) == SyncFence::State::SIGNALED);
        checkAddOutput(r);
    }
}

TEST_CASE("driver_device_timing_from_cycles") {
    auto t = makeTestDevice();
    auto prepared = prepare(*t.device, addModel());
    auto r = addRequest();
    const uint64_t before = t.npu->cycleCount();
    auto result = prepared->execute(r.request, MeasureTiming::YES, {}, {});
    const uint64_t after = t.npu->cycleCount();
    REQUIRE(result.ok());
    REQUIRE(result.timing.timeOnDevice.has_value());
    // 1 GHz: one cycle is one nanosecond; the job ran inside the calls the driver made.
    CHECK(result.timing.timeOnDevice->count() > 0);
    CHECK(static_cast<uint64_t>(result.timing.timeOnDevice->count()) <= after - before);
    CHECK(*result.timing.timeInDriver >= Duration::zero());
}

namespace {

Duration since(TimePoint start) {
    return std::chrono::duration_cast<Duration>(Clock::now() - start);
}

}  // namespace

// Time on the device and time in the driver are measured independently (IPreparedModel.h): the
// device's is its cycles at its clock, the driver's is its own host time plus the device's. A
// driver that reported wall time as either, clamped one to the other, or counted the host's
// simulation of the device as driver time would fail one of these relations.
TEST_CASE("driver_device_timing_measured_independently") {
    SUBCASE("a device slower than the host, a driver with host time of its own") {
        // 10 ms per cycle: the job's device time is far longer than the host takes to run it.
        sim::FunctionalNpuConfig config;
        config.clockPeriodPs = 10'000'000'000;
        auto t = makeHookedDevice(config);
        auto prepared = prepare(*t.device, addModel());
        t.npu->writeMemoryDelayMs = 5;  // the driver's staging takes host time
        auto r = addRequest();
        const uint64_t writesBefore = t.npu->writeMemoryCalls, cyclesBefore = t.npu->jobCycles;
        const auto start = Clock::now();
        auto result = prepared->execute(r.request, MeasureTiming::YES, {}, {});
        const Duration wall = since(start);
        REQUIRE_MESSAGE(result.ok(), result.status.message);
        checkAddOutput(r);
        const Duration staging = std::chrono::milliseconds(5) *
                                 static_cast<int64_t>(t.npu->writeMemoryCalls - writesBefore);
        const uint64_t cycles = t.npu->jobCycles - cyclesBefore;
        REQUIRE(cycles > 0);
        REQUIRE(result.timing.timeOnDevice.has_value());
        REQUIRE(result.timing.timeInDriver.has_value());
        const Duration device = *result.timing.timeOnDevice, driver = *result.timing.timeInDriver;
        MESSAGE("10 ms cycles: " << cycles << " cycles; on device " << device.count()
                                 << " ns, in driver " << driver.count() << " ns, staging "
                                 << staging.count() << " ns, wall " << wall.count() << " ns");
        CHECK(device == std::chrono::milliseconds(10 * static_cast<int64_t>(cycles)));
        CHECK(device > wall);               // simulated time, not the host's
        CHECK(driver - device >= staging);  // the driver's own time is in it
        CHECK(driver - device <= wall);     // and no more than the host spent in the call

        // Fenced: launched = fenced + the wait for the fence.
        auto gate = createSyncFence();
        REQUIRE(gate.ok());
        const auto launch = Clock::now();
        auto fenced =
            prepared->executeFenced(r.request, {gate->first}, MeasureTiming::YES, {}, {}, {});
        REQUIRE(fenced.ok());
        std::this_thread::sleep_for(std::chrono::milliseconds(30));
        gate->second.signal(true);
        const auto info = fenced->callback->getExecutionInfo();
        const Duration fencedWall = since(launch);
        REQUIRE_MESSAGE(info.status.ok(), info.status.message);
        CHECK(info.timingLaunched.timeOnDevice == info.timingFenced.timeOnDevice);
        CHECK(*info.timingFenced.timeOnDevice == device);
        const Duration waited = *info.timingLaunched.timeInDriver - *info.timingFenced.timeInDriver;
        CHECK(waited >= std::chrono::milliseconds(30));
        CHECK(*info.timingLaunched.timeInDriver - device <= fencedWall);
        CHECK(*info.timingFenced.timeInDriver - device >= staging);
    }
    SUBCASE("a host slower than the device: simulation time is not driver time") {
        auto t = makeHookedDevice();  // 1 GHz
        auto prepared = prepare(*t.device, addModel());
        t.npu->waitDelayMs = 40;  // each wait for the interrupt takes 40 ms of host time
        auto r = addRequest();
        const uint64_t waitsBefore = t.npu->waitCalls, cyclesBefore = t.npu->jobCycles;
        const auto start = Clock::now();
        auto result = prepared->execute(r.request, MeasureTiming::YES, {}, {});
        const Duration wall = since(start);
        REQUIRE_MESSAGE(result.ok(), result.status.message);
        const Duration simulation =
            std::chrono::milliseconds(40) * static_cast<int64_t>(t.npu->waitCalls - waitsBefore);
        REQUIRE(simulation > Duration::zero());
        const Duration device = *result.timing.timeOnDevice, driver = *result.timing.timeInDriver;
        MESSAGE("slow simulation: on device "
                << device.count() << " ns, in driver " << driver.count() << " ns, simulation "
                << simulation.count() << " ns, wall " << wall.count() << " ns");
        CHECK(device == std::chrono::nanoseconds(t.npu->jobCycles - cyclesBefore));
        CHECK(device < std::chrono::milliseconds(1));
        CHECK(driver >= device);
        CHECK(driver - device <= wall - simulation);
    }
}

TEST_CASE("driver_device_dma_window_and_clearing") {
    auto t = makeTestDevice();
    auto prepared = prepare(*t.device, addModel());
    auto r = addRequest();
    REQUIRE(prepared->execute(r.request, MeasureTiming::NO, {}, {}).ok());
    const auto job = t.npu->lastJob();
    REQUIRE(job.has_value());
    const uint32_t base = job->windowBase, limit = job->windowLimit;
    CHECK(base == Runtime::kArenaBase);
    CHECK(limit > base);
    CHECK(limit - base < 4096);        // only this job's arena
    CHECK(nonZeroBytes(*t.npu) == 0);  // nothing of the job stays in device memory
}

TEST_CASE("driver_device_fault_recovery") {
    auto t = makeTestDevice();
    auto prepared = prepare(*t.device, addModel());
    auto r = addRequest();
    t.npu->hangNextJob();
    auto failed = prepared->execute(r.request, MeasureTiming::YES, {}, {});
    CHECK(failed.status.code == ErrorStatus::GENERAL_FAILURE);
    CHECK(failed.status.message.find("WATCHDOG") != std::string::npos);
    CHECK_FALSE(failed.timing.timeOnDevice.has_value());
    CHECK(failed.outputShapes.empty());
    // The device was reset: the next execution succeeds.
    auto ok = prepared->execute(r.request, MeasureTiming::NO, {}, {});
    REQUIRE_MESSAGE(ok.ok(), ok.status.message);
    checkAddOutput(r);
}

TEST_CASE("driver_device_output_insufficient_and_dynamic_shape") {
    auto t = makeTestDevice();
    auto prepared = prepare(*t.device, addModel(OperandType::TENSOR_QUANT8_ASYMM, {0, 0}));
    SUBCASE("dynamic") {
        auto r = addRequest();
        auto result = prepared->execute(r.request, MeasureTiming::NO, {}, {});
        REQUIRE(result.ok());
        CHECK(result.outputShapes[0].dimensions == std::vector<uint32_t>{2, 3});
        checkAddOutput(r);
    }
    SUBCASE("insufficient") {
        auto r = addRequest();
        r.request.outputs[0].location.length = 5;
        auto result = prepared->execute(r.request, MeasureTiming::YES, {}, {});
        CHECK(result.status.code == ErrorStatus::OUTPUT_INSUFFICIENT_SIZE);
        REQUIRE(result.outputShapes.size() == 1);
        CHECK_FALSE(result.outputShapes[0].isSufficient);
        CHECK(result.outputShapes[0].dimensions == std::vector<uint32_t>{2, 3});
        CHECK_FALSE(result.timing.timeOnDevice.has_value());
    }
    SUBCASE("fenced_rejects_unknown_shape") {
        auto r = addRequest();
        CHECK(prepared->executeFenced(r.request, {}, MeasureTiming::NO, {}, {}, {}).status().code ==
              ErrorStatus::INVALID_ARGUMENT);
    }
}

TEST_CASE("driver_device_signed_types") {
    auto t = makeTestDevice();
    auto prepared = prepare(*t.device, addModel(OperandType::TENSOR_QUANT8_ASYMM_SIGNED));
    auto r = makeRequest({6, 6}, {6});
    for (int i = 0; i < 6; ++i) {
        r.input(0)[i] = static_cast<uint8_t>(int8_t(-50 + i));
        r.input(1)[i] = static_cast<uint8_t>(int8_t(-100));
    }
    REQUIRE(prepared->execute(r.request, MeasureTiming::NO, {}, {}).ok());
    for (int i = 0; i < 6; ++i) CHECK(int8_t(r.output(0)[i]) == -128);  // saturated
}

TEST_CASE("driver_device_unknown_input_shape_compiles_per_shape") {
    auto t = makeTestDevice();
    ModelBuilder b;
    const uint32_t a = b.addInput(OperandType::TENSOR_QUANT8_ASYMM, {0, 3}, 1.0f, 0);
    const uint32_t c = b.addInput(OperandType::TENSOR_QUANT8_ASYMM, {0, 3}, 1.0f, 0);
    const uint32_t out = b.addOutput(OperandType::TENSOR_QUANT8_ASYMM, {0, 3}, 1.0f, 0);
    b.addOperation(OperationType::ADD, {a, c, b.addInt32(0)}, {out});
    auto prepared = prepare(*t.device, b.build());
    for (uint32_t rows : {2u, 5u, 2u}) {
        const uint32_t n = rows * 3;
        auto r = makeRequest({n, n}, {n});
        for (auto* arg : {&r.request.inputs[0], &r.request.inputs[1]}) arg->dimensions = {rows, 3};
        for (uint32_t i = 0; i < n; ++i) {
            r.input(0)[i] = static_cast<uint8_t>(i);
            r.input(1)[i] = 100;
        }
        auto result = prepared->execute(r.request, MeasureTiming::NO, {}, {});
        REQUIRE_MESSAGE(result.ok(), result.status.message);
        CHECK(result.outputShapes[0].dimensions == std::vector<uint32_t>{rows, 3});
        for (uint32_t i = 0; i < n; ++i) CHECK(r.output(0)[i] == 100 + i);
    }
}

TEST_CASE("driver_device_priority_orders_the_queue") {
    auto t = makeTestDevice();
    auto low =
        prepareModelBlocking(*t.device, addModel(), kDefaultExecutionPreference, Priority::LOW);
    auto high =
        prepareModelBlocking(*t.device, addModel(), kDefaultExecutionPreference, Priority::HIGH);
    REQUIRE(low.ok());
    REQUIRE(high.ok());
    // A hung job (about 240 ms until the watchdog) holds the device while the others queue up.
    // Each queued request is marked by its first input byte, read by an observer of the model
    // when a job's first descriptor has run.
    std::vector<uint8_t> order;
    t.npu->setDescriptorObserver([&order](const sim::DescriptorTrace& trace, const uint8_t* dram) {
        if (trace.index == 0) order.push_back(dram[trace.descriptor.a.addr]);
    });
    t.npu->hangNextJob();
    auto r0 = addRequest(), r1 = addRequest(), r2 = addRequest(), r3 = addRequest();
    r1.input(0)[0] = 101;
    r2.input(0)[0] = 102;
    r3.input(0)[0] = 103;
    std::vector<std::shared_ptr<ExecutionCallback>> done(4);
    for (auto& d : done) d = std::make_shared<ExecutionCallback>();
    REQUIRE((*low)->executeAsynchronously(r0.request, MeasureTiming::NO, {}, {}, done[0]).ok());
    std::this_thread::sleep_for(std::chrono::milliseconds(30));
    REQUIRE((*low)->executeAsynchronously(r1.request, MeasureTiming::NO, {}, {}, done[1]).ok());
    REQUIRE((*low)->executeAsynchronously(r2.request, MeasureTiming::NO, {}, {}, done[2]).ok());
    std::this_thread::sleep_for(std::chrono::milliseconds(30));
    REQUIRE((*high)->executeAsynchronously(r3.request, MeasureTiming::NO, {}, {}, done[3]).ok());
    CHECK(done[0]->result().status.code == ErrorStatus::GENERAL_FAILURE);  // the watchdog
    for (int i = 1; i < 4; ++i) CHECK(done[i]->result().ok());
    // Submitted last, the high-priority execution ran first once the device was free (the two
    // low-priority ones were launched from separate threads, so their own order is not fixed).
    REQUIRE(order.size() == 3);
    CHECK(order[0] == 103);
}

TEST_CASE("driver_device_capabilities") {
    auto t = makeTestDevice();
    const Capabilities& caps = t.device->getCapabilities();
    const PerformanceInfo unknown;
    REQUIRE(std::is_sorted(caps.operandPerformance.begin(), caps.operandPerformance.end(),
                           [](const auto& a, const auto& b) { return a.type < b.type; }));
    for (const auto& entry : caps.operandPerformance) {
        CAPTURE(nameOf(entry.type));
        const bool measured = entry.type == OperandType::TENSOR_QUANT8_ASYMM ||
                              entry.type == OperandType::TENSOR_QUANT8_ASYMM_SIGNED ||
                              entry.type == OperandType::TENSOR_FLOAT32 ||
                              entry.type == OperandType::TENSOR_FLOAT16;
        if (measured) CHECK(entry.info.execTime < 1.0f);  // faster than the CPU
        if (measured) CHECK(entry.info.powerUsage < 1.0f);
    }
    // Relaxed models run in binary16: faster than float32 ones (half the DRAM traffic).
    const auto float32 =
        std::find_if(caps.operandPerformance.begin(), caps.operandPerformance.end(),
                     [](const auto& e) { return e.type == OperandType::TENSOR_FLOAT32; });
    REQUIRE(float32 != caps.operandPerformance.end());
    CHECK(caps.relaxedFloat32toFloat16PerformanceTensor.execTime < float32->info.execTime);
    CHECK(caps.whilePerformance.execTime == unknown.execTime);
}
