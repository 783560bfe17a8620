#include "driver/DeviceCore.h"

#include <future>

#include "driver/Calibration.h"
#include "model/NpuExtension.h"

namespace nncosim::driver::detail {
namespace {

// The performance of the operand types the NPU executes comes from the calibration runs
// (driver/Calibration.h): execTime from the device time against the CPU's, powerUsage from the
// energy model over the counters against the CPU reference's energy, with this device's energy
// parameters; the quantized run for 8-bit tensors, int32 biases and scalars, the float32 run for
// float32 tensors and scalars, the relaxed run for relaxed models and float16 tensors and
// scalars (both binary16 on the device: a relaxed model runs as its float16 form). IF
// and WHILE keep "no information" (the maximum): the driver sequences them job by job
// (ControlFlow.h), and that overhead has no calibration run yet. So do a run's types when it was
// measured on another compiler or NPU (a stale record).
Capabilities makeCapabilities(const CalibrationRun& quant8Run, const CalibrationRun& floatRun,
                              const CalibrationRun& relaxedRun, const EnergyParameters& energy) {
    Capabilities caps;
    const PerformanceInfo unknown;
    const auto figures = [&](const CalibrationRun& run) {
        return checkCalibration(run).ok() ? performanceFromCalibration(run, energy) : unknown;
    };
    const PerformanceInfo quant8 = figures(quant8Run), float32 = figures(floatRun),
                          binary16 = figures(relaxedRun);
    caps.relaxedFloat32toFloat16PerformanceScalar = binary16;
    caps.relaxedFloat32toFloat16PerformanceTensor = binary16;
    caps.ifPerformance = unknown;
    caps.whilePerformance = unknown;
    for (int t = 0; t <= static_cast<int>(OperandType::TENSOR_QUANT8_ASYMM_SIGNED); ++t) {
        const auto type = static_cast<OperandType>(t);
        const bool quantized = type == OperandType::TENSOR_QUANT8_ASYMM ||
                               type == OperandType::TENSOR_QUANT8_ASYMM_SIGNED ||
                               type == OperandType::TENSOR_QUANT8_SYMM_PER_CHANNEL ||
                               type == OperandType::TENSOR_INT32 || type == OperandType::INT32 ||
                               type == OperandType::BOOL;
        const bool isFloat32 = type == OperandType::TENSOR_FLOAT32 || type == OperandType::FLOAT32;
        const bool isFloat16 = type == OperandType::TENSOR_FLOAT16 || type == OperandType::FLOAT16;
        caps.operandPerformance.push_back({type, quantized   ? quant8
                                                 : isFloat32 ? float32
                                                 : isFloat16 ? binary16
                                                             : unknown});
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
      capabilities(makeCapabilities(options.calibration, options.floatCalibration,
                                    options.relaxedCalibration, options.energy)),
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
