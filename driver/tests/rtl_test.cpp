// The driver on the Verilated RTL (the SystemC platform): every execution path with device
// timing, and recovery from a real device fault.
#include "driver/Compiler.h"
#include "driver/Runtime.h"
#include "driver/tests/TestUtil.h"

using namespace nncosim;
using namespace nncosim::driver;
using namespace nncosim::driver::testing;

TEST_CASE("driver_rtl_execution_paths_and_timing") {
    auto device = rtlDevice();
    REQUIRE_MESSAGE(device.ok(), device.status().message);
    auto prepared = prepare(**device, convModel());
    auto reference = convRequest();
    auto first = prepared->execute(reference.request, MeasureTiming::YES, {}, {});
    REQUIRE_MESSAGE(first.ok(), first.status.message);
    REQUIRE(first.timing.timeOnDevice.has_value());
    CHECK(first.timing.timeOnDevice->count() > 0);
    REQUIRE(first.timing.timeInDriver.has_value());
    CHECK(*first.timing.timeInDriver >= *first.timing.timeOnDevice);
    const std::vector<uint8_t> expected(reference.output(0), reference.output(0) + 32);

    auto r = convRequest();
    auto callback = std::make_shared<ExecutionCallback>();
    REQUIRE(prepared->executeAsynchronously(r.request, MeasureTiming::NO, {}, {}, callback).ok());
    REQUIRE(callback->result().ok());
    CHECK(std::vector<uint8_t>(r.output(0), r.output(0) + 32) == expected);

    r = convRequest();
    auto fenced = prepared->executeFenced(r.request, {}, MeasureTiming::YES, {}, {}, {});
    REQUIRE(fenced.ok());
    CHECK(fenced->fence.wait(std::chrono::seconds(60)) == SyncFence::State::SIGNALED);
    CHECK(fenced->callback->getExecutionInfo().timingFenced.timeOnDevice.has_value());
    CHECK(std::vector<uint8_t>(r.output(0), r.output(0) + 32) == expected);

    r = convRequest();
    auto burst = prepared->configureExecutionBurst();
    REQUIRE(burst.ok());
    REQUIRE((*burst)->execute(r.request, MeasureTiming::NO, {}, {}).ok());
    CHECK(std::vector<uint8_t>(r.output(0), r.output(0) + 32) == expected);
}

TEST_CASE("driver_rtl_fault_recovery") {
    auto platform = sim::createSystemCPlatform();
    REQUIRE_MESSAGE(platform.ok(), platform.status().message);
    Runtime runtime(*platform);
    REQUIRE(runtime.initialize().ok());
    auto program = compileModel(addModel(), {});
    REQUIRE(program.ok());
    const std::vector<TensorData> inputs = {{{2, 3}, {1, 2, 3, 4, 5, 6}},
                                            {{2, 3}, {10, 20, 30, 40, 50, 60}}};
    // A descriptor reading past the job's arena: the DMA window stops it.
    Program bad = *program;
    bad.descriptors[0].a.addr = bad.arenaSize + 4096;
    JobOutcome failed = runtime.run(bad, inputs, {});
    CHECK(failed.status.code == ErrorStatus::GENERAL_FAILURE);
    CHECK(failed.status.message.find("DMA_WINDOW") != std::string::npos);
    // An unknown opcode.
    bad = *program;
    bad.descriptors[0].opcode = static_cast<npu::Opcode>(0x5a);
    failed = runtime.run(bad, inputs, {});
    CHECK(failed.status.code == ErrorStatus::GENERAL_FAILURE);
    CHECK(failed.status.message.find("BAD_OPCODE") != std::string::npos);
    // The device was soft-reset: the good program runs.
    JobOutcome ok = runtime.run(*program, inputs, {});
    REQUIRE_MESSAGE(ok.status.ok(), ok.status.message);
    REQUIRE(ok.outputs.size() == 1);
    CHECK(ok.outputs[0].bytes == std::vector<uint8_t>{11, 22, 33, 44, 55, 66});
    CHECK(ok.cycles > 0);
}
