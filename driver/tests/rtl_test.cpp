// The driver on the Verilated RTL (the SystemC platform): every execution path with device
// timing, and recovery from a real device fault.
#include "driver/Compiler.h"
#include "driver/Runtime.h"
#include "driver/tests/TestUtil.h"
#include "golden/Executor.h"

#include <random>
#include <set>

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

namespace {

// A 3x3 uint8 convolution [1,8,8,16] -> [1,8,8,16] whose outputs spread over the whole range
// (convModel's saturate): a result shifted by a word shows.
Model storeConvModel() {
    ModelBuilder b;
    const uint32_t in = b.addInput(OperandType::TENSOR_QUANT8_ASYMM, {1, 8, 8, 16}, 0.5f, 10);
    std::vector<uint8_t> weights(16 * 3 * 3 * 16);
    for (size_t i = 0; i < weights.size(); ++i)
        weights[i] = static_cast<uint8_t>((i * 97 + 13) % 256);
    const uint32_t filter =
        b.addConstant(OperandType::TENSOR_QUANT8_ASYMM, {16, 3, 3, 16}, weights, 0.01f, 128);
    std::vector<int32_t> bias(16);
    for (size_t i = 0; i < bias.size(); ++i) bias[i] = static_cast<int32_t>(i * 331 % 2000) - 1000;
    const uint32_t biasOp = b.addConstant(OperandType::TENSOR_INT32, {16}, bias, 0.005f, 0);
    std::vector<uint32_t> inputs{in, filter, biasOp};
    for (int32_t v : {1, 1, 1, 1, 1, 1}) inputs.push_back(b.addInt32(v));
    inputs.push_back(b.addInt32(0));
    const uint32_t out = b.addOutput(OperandType::TENSOR_QUANT8_ASYMM, {1, 8, 8, 16}, 1.0f, 128);
    b.addOperation(OperationType::CONV_2D, inputs, {out});
    return b.build();
}

TensorData storeConvInput(uint32_t seed) {
    TensorData t{{1, 8, 8, 16}, std::vector<uint8_t>(8 * 8 * 16)};
    std::mt19937 rng(seed);
    for (uint8_t& v : t.bytes) v = static_cast<uint8_t>(rng());
    return t;
}

}  // namespace

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

    // A convolution whose store leaves the arena faults with requantized words in flight; after
    // the soft reset none of them may reach the next convolution's output.
    auto conv = compileModel(storeConvModel(), {});
    REQUIRE(conv.ok());
    bad = *conv;
    int stores = 0;
    for (npu::Descriptor& d : bad.descriptors) {
        if (d.opcode == npu::Opcode::CONV) {
            d.out.addr = bad.arenaSize;
            ++stores;
        }
    }
    REQUIRE(stores > 0);
    failed = runtime.run(bad, {storeConvInput(1)}, {});
    CHECK(failed.status.code == ErrorStatus::GENERAL_FAILURE);
    CHECK(failed.status.message.find("DMA_WINDOW") != std::string::npos);
    for (uint32_t seed = 2; seed < 4; ++seed) {
        CAPTURE(seed);
        const std::vector<TensorData> convInputs = {storeConvInput(seed)};
        auto want = golden::execute(storeConvModel(), convInputs);
        REQUIRE(want.ok());
        // Outputs spread over the range (a word shifted in would show).
        const auto& bytes = want->at(0).bytes;
        CHECK(std::set<uint8_t>(bytes.begin(), bytes.end()).size() > 100);
        ok = runtime.run(*conv, convInputs, {});
        REQUIRE_MESSAGE(ok.status.ok(), ok.status.message);
        REQUIRE(ok.outputs.size() == 1);
        REQUIRE(ok.outputs[0].bytes.size() == bytes.size());
        size_t wrong = 0;
        for (size_t i = 0; i < bytes.size(); ++i) wrong += ok.outputs[0].bytes[i] != bytes[i];
        CHECK(wrong == 0);
    }
}
