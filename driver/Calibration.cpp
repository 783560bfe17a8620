#include "driver/Calibration.h"

namespace nncosim::driver {

// The calibration runs behind the device's Capabilities, as nncosim_calibrate (bench/Calibrate.cpp)
// printed them for MobileNet-v1 quant8, float32 and relaxed (`nncosim zoo mobilenet_v1
// [--quant8|--relaxed]`) on the Verilated 16x16 NPU; what each figure gives is in docs/npu.md
// ("powerUsage"). A record measured with another compiler or NPU geometry is stale
// (checkCalibration) and the test driver_calibration_record_is_current says which command renews
// it.
const CalibrationRun kQuant8Calibration = {
    "mobilenet_v1_1.0_224_quant8",
    {/*compilerVersion=*/12, /*arrayRows=*/16, /*arrayCols=*/16, /*dramBusBytes=*/16,
     /*spadWords=*/4096, /*accDepth=*/1024},
    1000,
    {/*cycles=*/2378323, /*macs=*/568740352, /*floatMacs=*/0, /*dmaBytesRead=*/12711728,
     /*dmaBytesWritten=*/3112960, /*scratchpadReads=*/2802688, /*scratchpadWrites=*/399256},
    /*cpuSeconds=*/0.192095,
};

const CalibrationRun kFloat32Calibration = {
    "mobilenet_v1_1.0_224_float32",
    {/*compilerVersion=*/12, /*arrayRows=*/16, /*arrayCols=*/16, /*dramBusBytes=*/16,
     /*spadWords=*/4096, /*accDepth=*/1024},
    1000,
    {/*cycles=*/5358827, /*macs=*/568740352, /*floatMacs=*/568740352,
     /*dmaBytesRead=*/63606416, /*dmaBytesWritten=*/16979648, /*scratchpadReads=*/11281516,
     /*scratchpadWrites=*/1428524},
    /*cpuSeconds=*/0.061612,
};

const CalibrationRun kRelaxedCalibration = {
    "mobilenet_v1_1.0_224_relaxed",
    {/*compilerVersion=*/12, /*arrayRows=*/16, /*arrayCols=*/16, /*dramBusBytes=*/16,
     /*spadWords=*/4096, /*accDepth=*/1024},
    1000,
    {/*cycles=*/3455350, /*macs=*/568740352, /*floatMacs=*/568740352,
     /*dmaBytesRead=*/36153632, /*dmaBytesWritten=*/8489856, /*scratchpadReads=*/5633007,
     /*scratchpadWrites=*/725343},
    /*cpuSeconds=*/0.061131,
};

Status checkCalibration(const CalibrationRun& run) {
    if (run.target == kCompilerTarget) return okStatus();
    return fail(ErrorStatus::GENERAL_FAILURE, "the calibration record (", run.workload,
                ") was measured with ", compilerTargetText(run.target), "; this driver is ",
                compilerTargetText(kCompilerTarget),
                ": its performance figures are not reported. Recalibrate: nncosim_calibrate "
                "MODEL.json, and record what it prints in driver/Calibration.cpp");
}

PerformanceInfo performanceFromCalibration(const CalibrationRun& run,
                                           const EnergyParameters& parameters) {
    PerformanceInfo info;
    if (run.npu.cycles > 0 && run.cpuSeconds > 0) {
        const double npuSeconds =
            static_cast<double>(run.npu.cycles) * static_cast<double>(run.clockPeriodPs) * 1e-12;
        info.execTime = static_cast<float>(npuSeconds / run.cpuSeconds);
    }
    const double cpu = cpuPicojoules(run.npu.macs, run.npu.floatMacs, parameters);
    if (cpu > 0) {
        const Energy npu = estimateEnergy(run.npu, run.clockPeriodPs, parameters);
        info.powerUsage = static_cast<float>(npu.totalPicojoules() / cpu);
    }
    return info;
}

}  // namespace nncosim::driver
