// Helpers of the driver tests: a device on the NPU's functional model (sim/FunctionalNpu.h, the
// product's model, without SystemC) or on the RTL platform, small models, requests in shared
// memory.
#pragma once

#include <doctest/doctest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstring>
#include <functional>
#include <memory>
#include <optional>
#include <thread>
#include <vector>

#include "driver/Callbacks.h"
#include "driver/IBuffer.h"
#include "driver/IBurst.h"
#include "driver/IDevice.h"
#include "driver/IExecution.h"
#include "driver/IPreparedModel.h"
#include "driver/NpuDevice.h"
#include "driver/NpuRegisters.h"
#include "golden/Executor.h"
#include "model/Builder.h"
#include "sim/FunctionalNpu.h"
#include "sim/Platform.h"

namespace nncosim::driver::testing {

struct TestDevice {
    std::shared_ptr<sim::FunctionalNpu> npu;
    SharedDevice device;
};

/// The driver on a functional model of its own (64 MB of DRAM).
inline TestDevice makeTestDevice(DeviceOptions options = {}) {
    sim::FunctionalNpuConfig config;
    config.dramBytes = 64ull << 20;
    auto npu = std::make_shared<sim::FunctionalNpu>(config);
    auto device = makeNpuDevice(npu, options);
    REQUIRE(device.ok());
    return {npu, *device};
}

/// The functional model behind hooks a test sets: host time added to the driver's side
/// (memory writes) or to the device's (waits for the interrupt, as a slow simulator takes), a
/// call made at every wait, and the device cycles of every job as the driver counts them (from
/// the doorbell to the interrupt).
class HookedNpu : public HardwareAccess {
  public:
    explicit HookedNpu(std::shared_ptr<sim::FunctionalNpu> npu) : mNpu(std::move(npu)) {}

    std::atomic<int> writeMemoryDelayMs{0};
    std::atomic<int> waitDelayMs{0};
    std::atomic<uint64_t> writeMemoryCalls{0}, waitCalls{0};
    std::atomic<uint64_t> jobCycles{0};  ///< summed over the jobs since created
    std::function<void()> onWait;        ///< set before the device is used

    uint32_t readRegister(uint32_t offset) override { return mNpu->readRegister(offset); }
    void writeRegister(uint32_t offset, uint32_t value) override {
        if (offset == npu::reg::kDoorbell) mDoorbellCycle = mNpu->cycleCount();
        mNpu->writeRegister(offset, value);
    }
    Status writeMemory(uint64_t address, const void* data, size_t size) override {
        ++writeMemoryCalls;
        if (const int ms = writeMemoryDelayMs)
            std::this_thread::sleep_for(std::chrono::milliseconds(ms));
        return mNpu->writeMemory(address, data, size);
    }
    Status readMemory(uint64_t address, void* data, size_t size) override {
        return mNpu->readMemory(address, data, size);
    }
    uint64_t memorySize() const override { return mNpu->memorySize(); }
    bool waitForInterrupt(uint64_t timeoutCycles) override {
        ++waitCalls;
        if (onWait) onWait();
        if (const int ms = waitDelayMs) std::this_thread::sleep_for(std::chrono::milliseconds(ms));
        const bool raised = mNpu->waitForInterrupt(timeoutCycles);
        if (raised && mDoorbellCycle) {
            jobCycles += mNpu->cycleCount() - *mDoorbellCycle;
            mDoorbellCycle.reset();
        }
        return raised;
    }
    bool interruptPending() override { return mNpu->interruptPending(); }
    void advance(uint64_t cycles) override { mNpu->advance(cycles); }
    uint64_t cycleCount() override { return mNpu->cycleCount(); }
    uint64_t clockPeriodPs() const override { return mNpu->clockPeriodPs(); }
    PerformanceCounters performanceCounters() override { return mNpu->performanceCounters(); }

  private:
    const std::shared_ptr<sim::FunctionalNpu> mNpu;
    std::optional<uint64_t> mDoorbellCycle;  // the driver's calls come from one thread
};

/// The driver on a functional model of `config` behind hooks.
struct HookedDevice {
    std::shared_ptr<HookedNpu> npu;
    SharedDevice device;
};
inline HookedDevice makeHookedDevice(sim::FunctionalNpuConfig config = {}) {
    config.dramBytes = 64ull << 20;
    auto npu = std::make_shared<HookedNpu>(std::make_shared<sim::FunctionalNpu>(config));
    auto device = makeNpuDevice(npu, {});
    REQUIRE(device.ok());
    return {npu, *device};
}

/// Bytes of the model's DRAM that are not zero (the driver clears what a job used).
inline size_t nonZeroBytes(const sim::FunctionalNpu& npu) {
    const uint8_t* dram = npu.dram();
    return static_cast<size_t>(
        std::count_if(dram, dram + npu.memorySize(), [](uint8_t b) { return b != 0; }));
}

/// The device on the process's SystemC platform (the Verilated NPU), created on first use.
inline Result<SharedDevice> rtlDevice() {
    static Result<SharedDevice> device = []() -> Result<SharedDevice> {
        auto platform = sim::createSystemCPlatform();
        if (!platform) return platform.status();
        return makeNpuDevice(*platform);
    }();
    return device;
}

/// out = a + b on uint8 [2, 3] tensors with scale 1 and zero point 0 (so values simply add).
inline Model addModel(OperandType type = OperandType::TENSOR_QUANT8_ASYMM,
                      std::vector<uint32_t> outDims = {2, 3}) {
    ModelBuilder b;
    const uint32_t a = b.addInput(type, {2, 3}, 1.0f, 0);
    const uint32_t c = b.addInput(type, {2, 3}, 1.0f, 0);
    const uint32_t act = b.addInt32(0);
    const uint32_t out = b.addOutput(type, std::move(outDims), 1.0f, 0);
    b.addOperation(OperationType::ADD, {a, c, act}, {out});
    return b.build();
}

/// A 3x3 uint8 convolution [1,4,4,3] -> [1,4,4,2] with padding 1 and RELU: weights and bias
/// are constants, so its program carries a weight stream.
inline Model convModel() {
    ModelBuilder b;
    const uint32_t in = b.addInput(OperandType::TENSOR_QUANT8_ASYMM, {1, 4, 4, 3}, 0.5f, 10);
    std::vector<uint8_t> weights(2 * 3 * 3 * 3);
    for (size_t i = 0; i < weights.size(); ++i)
        weights[i] = static_cast<uint8_t>((i * 37 + 11) % 256);
    const uint32_t filter =
        b.addConstant(OperandType::TENSOR_QUANT8_ASYMM, {2, 3, 3, 3}, weights, 0.25f, 5);
    const uint32_t bias =
        b.addConstant(OperandType::TENSOR_INT32, {2}, std::vector<int32_t>{100, -300}, 0.125f, 0);
    std::vector<uint32_t> inputs{in, filter, bias};
    for (int32_t v : {1, 1, 1, 1, 1, 1}) inputs.push_back(b.addInt32(v));
    inputs.push_back(b.addInt32(1));  // RELU
    const uint32_t out = b.addOutput(OperandType::TENSOR_QUANT8_ASYMM, {1, 4, 4, 2}, 8.0f, 3);
    b.addOperation(OperationType::CONV_2D, inputs, {out});
    return b.build();
}

/// A request over one shared-memory pool: inputs first, then outputs, each `sizes[i]` bytes.
struct TestRequest {
    Request request;
    SharedMemory pool;
    uint8_t* input(size_t i) { return pool->data() + request.inputs[i].location.offset; }
    uint8_t* output(size_t i) { return pool->data() + request.outputs[i].location.offset; }
};

inline TestRequest makeRequest(const std::vector<uint32_t>& inputSizes,
                               const std::vector<uint32_t>& outputSizes) {
    TestRequest r;
    uint32_t total = 0;
    for (uint32_t s : inputSizes) total += s;
    for (uint32_t s : outputSizes) total += s;
    auto pool = Memory::create(std::max(total, 1u));
    REQUIRE(pool.ok());
    r.pool = *pool;
    r.request.pools.push_back(r.pool);
    uint32_t offset = 0;
    for (const auto* sizes : {&inputSizes, &outputSizes}) {
        for (uint32_t s : *sizes) {
            Request::Argument arg;
            arg.location.poolIndex = 0;
            arg.location.offset = offset;
            arg.location.length = s;
            offset += s;
            (sizes == &inputSizes ? r.request.inputs : r.request.outputs).push_back(arg);
        }
    }
    return r;
}

/// A request for addModel() with a = 1..6, b = 10, 20, ... 60.
inline TestRequest addRequest() {
    TestRequest r = makeRequest({6, 6}, {6});
    for (int i = 0; i < 6; ++i) {
        r.input(0)[i] = static_cast<uint8_t>(i + 1);
        r.input(1)[i] = static_cast<uint8_t>(10 * (i + 1));
    }
    return r;
}

/// A request for convModel() with a fixed input pattern.
inline TestRequest convRequest() {
    TestRequest r = makeRequest({48}, {32});
    for (int i = 0; i < 48; ++i) r.input(0)[i] = static_cast<uint8_t>((i * 29 + 3) % 256);
    return r;
}

inline void checkAddOutput(TestRequest& r) {
    for (int i = 0; i < 6; ++i) CHECK(r.output(0)[i] == 11 * (i + 1));
}

inline SharedPreparedModel prepare(const IDevice& device, const Model& model) {
    auto prepared = prepareModelBlocking(device, model);
    REQUIRE_MESSAGE(prepared.ok(), prepared.status().message);
    return *prepared;
}

/// A model's outputs from the driver and from the golden, for the same inputs.
struct DeviceAndGolden {
    std::vector<std::vector<uint8_t>> device;
    std::vector<TensorData> golden;
};

/// Runs `model` with `inputs` on the golden, then through the driver on `device` (outputs sized
/// as the golden's); the failing step's error otherwise.
inline Result<DeviceAndGolden> runWithGolden(const IDevice& device, const Model& model,
                                             const std::vector<TensorData>& inputs) {
    auto golden = golden::execute(model, inputs);
    if (!golden) return invalidArgument("golden: " + golden.status().message);
    std::vector<uint32_t> inSizes, outSizes;
    for (const auto& t : inputs) inSizes.push_back(static_cast<uint32_t>(t.bytes.size()));
    for (const auto& t : *golden) outSizes.push_back(static_cast<uint32_t>(t.bytes.size()));
    auto prepared = prepareModelBlocking(device, model);
    if (!prepared) return invalidArgument("prepare: " + prepared.status().message);
    TestRequest r = makeRequest(inSizes, outSizes);
    for (size_t i = 0; i < inputs.size(); ++i)
        std::memcpy(r.input(i), inputs[i].bytes.data(), inputs[i].bytes.size());
    auto result = (*prepared)->execute(r.request, MeasureTiming::NO, {}, {});
    if (!result.ok()) return invalidArgument("execute: " + result.status.message);
    DeviceAndGolden out{{}, std::move(*golden)};
    for (size_t i = 0; i < outSizes.size(); ++i)
        out.device.emplace_back(r.output(i), r.output(i) + outSizes[i]);
    return out;
}

}  // namespace nncosim::driver::testing
