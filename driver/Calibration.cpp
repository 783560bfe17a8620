#include "driver/Calibration.h"

namespace nncosim::driver {

// nncosim_calibrate /tmp/mobilenet_q8.json, the file written by `nncosim zoo mobilenet_v1
// --quant8 -o /tmp/mobilenet_q8.json`, 16x16 NPU, default platform (1 GHz, DRAM 16 B/cycle,
// 100 cycles latency): 30 of 31 operations (all but SOFTMAX) on the Verilated NPU, 2,622,162
// cycles = 2.62 ms; the golden took 0.1116 s for the whole model on the 2-vCPU VM (best of
// three). The tool printed: execTime 0.0235; NPU energy 1004.8 uJ (MACs 170.6, scratchpad 119.6,
// DRAM 609.7, clock and leakage 104.9), 383 mW; CPU reference 34,124 uJ; powerUsage 0.0294.
const CalibrationRun kQuant8Calibration = {
    "mobilenet_v1_1.0_224_quant8",
    {/*compilerVersion=*/2, /*arrayRows=*/16, /*arrayCols=*/16, /*dramBusBytes=*/16,
     /*spadWords=*/4096, /*accDepth=*/1024},
    1000,
    {/*cycles=*/2622162, /*macs=*/568740352, /*dmaBytesRead=*/12129744,
     /*dmaBytesWritten=*/3112960,
     /*scratchpadReads=*/2801344, /*scratchpadWrites=*/397440},
    /*cpuSeconds=*/0.111580,
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
    const double cpu = cpuQuant8Picojoules(run.npu.macs, parameters);
    if (cpu > 0) {
        const Energy npu = estimateEnergy(run.npu, run.clockPeriodPs, parameters);
        info.powerUsage = static_cast<float>(npu.totalPicojoules() / cpu);
    }
    return info;
}

}  // namespace nncosim::driver
