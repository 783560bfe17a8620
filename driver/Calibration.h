// The calibration behind the driver's Capabilities: what the calibration benchmark
// (bench/Calibrate.cpp, nncosim_calibrate) measured on the reference workload, and how
// NNAPI's PerformanceInfo follows from it. The measurement is recorded as counters, not as
// ratios, so execTime and powerUsage are computed from it (the energy by driver/EnergyModel.h):
// changing an energy parameter changes powerUsage, and no figure of the table is hand-typed.
#pragma once

#include <cstdint>

#include "driver/EnergyModel.h"
#include "driver/Program.h"
#include "model/Status.h"
#include "model/Types.h"

namespace nncosim::driver {

/// One calibration run: the reference workload's longest NPU-supported prefix on the Verilated
/// NPU, and the whole model on the golden reference on the CPU.
struct CalibrationRun {
    const char* workload = "";
    CompilerTarget target;          ///< the compiler and NPU geometry it was measured with
    uint64_t clockPeriodPs = 1000;  ///< the platform's clock during the run
    EnergyCounters npu;             ///< the NPU's counters over the prefix's job
    double cpuSeconds = 0.0;        ///< the golden's wall time on the CPU (best of three)
};

/// The reference workloads' runs (MobileNet-v1 1.0 224 in quant8 and in float32, the reference
/// workloads of Android's driver guide, and relaxed), behind the quantized, the float32 and the
/// binary16 figures (relaxed models and float16 tensors, which run the same binary16 programs).
/// Recorded from nncosim_calibrate's output, which prints them in this form.
extern const CalibrationRun kQuant8Calibration;
extern const CalibrationRun kFloat32Calibration;
extern const CalibrationRun kRelaxedCalibration;

/// Whether `run` was measured with this driver's compiler and NPU (kCompilerTarget). Otherwise
/// fails with GENERAL_FAILURE naming both targets and how to recalibrate: its figures describe
/// another device, and the driver reports "no information" instead of them.
Status checkCalibration(const CalibrationRun& run);

/// NNAPI's figures, both relative to the CPU (lower is better):
/// - execTime = NPU device time (cycles x clock period) / the CPU's time;
/// - powerUsage = the NPU's energy (estimateEnergy over the run's counters) / the CPU
///   reference's energy for the same multiply-accumulates (cpuPicojoules of its MACs).
/// A run without cycles or MACs gives "no information" (the maximum) for the figure it lacks.
PerformanceInfo performanceFromCalibration(const CalibrationRun& run,
                                           const EnergyParameters& parameters = {});

}  // namespace nncosim::driver
