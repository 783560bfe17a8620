#include "driver/DeviceCore.h"

#include <future>

#include "model/NpuExtension.h"

namespace nncosim::driver::detail {
namespace {

// Measured with driver/bench/Calibrate.cpp (nncosim_calibrate) on MobileNet-v1 1.0 224, the
// reference workload of Android's driver guide, written by `nncosim zoo mobilenet_v1 [--quant8]`:
// quant8, 30 of 31 operations (all but SOFTMAX) took 3,613,248 cycles = 3.61 ms at 1 GHz on the
// Verilated NPU against 0.2265 s for the whole model on the golden on the CPU: execTime 0.016.
// The float model has no operation the NPU executes, so float, relaxed float, IF and WHILE keep
// "no information" (the maximum), as does powerUsage (the platform has no power model).
constexpr float kQuant8ExecTime = 0.016f;

Capabilities makeCapabilities() {
    Capabilities caps;
    const PerformanceInfo unknown;
    const PerformanceInfo quant8{kQuant8ExecTime, PerformanceInfo{}.powerUsage};
    caps.relaxedFloat32toFloat16PerformanceScalar = unknown;
    caps.relaxedFloat32toFloat16PerformanceTensor = unknown;
    caps.ifPerformance = unknown;
    caps.whilePerformance = unknown;
    for (int t = 0; t <= static_cast<int>(OperandType::TENSOR_QUANT8_ASYMM_SIGNED); ++t) {
        const auto type = static_cast<OperandType>(t);
        // The types of the operations the NPU executes: 8-bit tensors, int32 biases, scalars.
        const bool npu = type == OperandType::TENSOR_QUANT8_ASYMM ||
                         type == OperandType::TENSOR_QUANT8_ASYMM_SIGNED ||
                         type == OperandType::TENSOR_QUANT8_SYMM_PER_CHANNEL ||
                         type == OperandType::TENSOR_INT32 || type == OperandType::INT32 ||
                         type == OperandType::BOOL;
        caps.operandPerformance.push_back({type, npu ? quant8 : unknown});
    }
    return caps;
}

}  // namespace

bool deadlinePassed(const OptionalTimePoint& deadline) {
    return deadline && Clock::now() >= *deadline;
}

DeviceCore::DeviceCore(std::shared_ptr<HardwareAccess> hardware, const DeviceOptions& options)
    : name(options.name),
      key(options.cacheKey ? *options.cacheKey : randomCacheKey()),
      capabilities(makeCapabilities()),
      extensions{npu_extension::description()},
      runtime(std::move(hardware)),
      queue(options.agingQuantum) {}

JobOutcome DeviceCore::runJob(Priority priority, const Program& program,
                              const std::vector<TensorData>& inputs,
                              const OptionalTimePoint& deadline) {
    std::promise<JobOutcome> done;
    auto future = done.get_future();
    queue.submit(priority, [&](bool cancelled) {
        JobOutcome outcome;
        if (cancelled) {
            outcome.status = fail(ErrorStatus::DEVICE_UNAVAILABLE, "the device is shutting down");
        } else if (deadlinePassed(deadline)) {
            outcome.status =
                fail(ErrorStatus::MISSED_DEADLINE_TRANSIENT, "the deadline passed while queued");
        } else {
            outcome = runtime.run(program, inputs, deadline);
        }
        done.set_value(std::move(outcome));
    });
    return future.get();
}

}  // namespace nncosim::driver::detail
