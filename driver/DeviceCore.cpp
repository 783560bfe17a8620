#include "driver/DeviceCore.h"

#include <future>

#include "driver/Calibration.h"
#include "model/NpuExtension.h"

namespace nncosim::driver::detail {
namespace {

// The performance of the operand types the NPU executes comes from the calibration run
// (driver/Calibration.h): execTime from its device time against the CPU's, powerUsage from the
// energy model over its counters against the CPU reference's energy, with this device's energy
// parameters. Float, relaxed float, IF and WHILE keep "no information" (the maximum): the
// calibration workload is quantized (the NPU's float support is element-wise only, with no
// float calibration run yet) and the NPU has no control flow. So does everything when the run
// was measured on another compiler or NPU (a stale record).
Capabilities makeCapabilities(const CalibrationRun& calibration, const EnergyParameters& energy) {
    Capabilities caps;
    const PerformanceInfo unknown;
    const PerformanceInfo quant8 = checkCalibration(calibration).ok()
                                       ? performanceFromCalibration(calibration, energy)
                                       : unknown;
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
      capabilities(makeCapabilities(options.calibration, options.energy)),
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
