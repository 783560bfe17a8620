#include "driver/Calibration.h"

namespace nncosim::driver {

// nncosim_calibrate /tmp/mobilenet_q8.json /tmp/mnv1f.json, the files written by `nncosim zoo
// mobilenet_v1 --quant8 -o /tmp/mobilenet_q8.json` and `nncosim zoo mobilenet_v1 -o
// /tmp/mnv1f.json`, 16x16 NPU, default platform (1 GHz, DRAM 16 B/cycle, 100 cycles latency),
// golden times on the 2-vCPU VM (best of three):
// - quant8: 30 of 31 operations (all but the 1001-way SOFTMAX) on the Verilated NPU, 2,581,892
//   cycles = 2.58 ms; the golden took 0.1351 s for the whole model. execTime 0.0191; NPU energy
//   1033.0 uJ (MACs 173.2, scratchpad 117.1, DRAM 639.4, clock and leakage 103.3), 400 mW; CPU
//   reference 34,630 uJ; powerUsage 0.0298.
// - float32: all 31 operations (the SOFTMAX too) on the Verilated NPU, 7,687,683 cycles =
//   7.69 ms (29 % of the array: DRAM-bound, docs/npu.md); the golden took 0.0830 s. execTime
//   0.0926; NPU energy 8205.7 uJ (MACs 2616.2, scratchpad 496.2, DRAM 4785.8, clock and leakage
//   307.5), 1067 mW; CPU reference 68,249 uJ; powerUsage 0.1202.
const CalibrationRun kQuant8Calibration = {
    "mobilenet_v1_1.0_224_quant8",
    {/*compilerVersion=*/5, /*arrayRows=*/16, /*arrayCols=*/16, /*dramBusBytes=*/16,
     /*spadWords=*/4096, /*accDepth=*/1024},
    1000,
    {/*cycles=*/2581848, /*macs=*/577169920, /*floatMacs=*/0, /*dmaBytesRead=*/12175536,
     /*dmaBytesWritten=*/3767952, /*scratchpadReads=*/2711913, /*scratchpadWrites=*/390478},
    /*cpuSeconds=*/0.173907,
};

const CalibrationRun kFloat32Calibration = {
    "mobilenet_v1_1.0_224_float32",
    {/*compilerVersion=*/5, /*arrayRows=*/16, /*arrayCols=*/16, /*dramBusBytes=*/16,
     /*spadWords=*/4096, /*accDepth=*/1024},
    1000,
    {/*cycles=*/7671068, /*macs=*/568741352, /*floatMacs=*/568741352,
     /*dmaBytesRead=*/98986304, /*dmaBytesWritten=*/20214896, /*scratchpadReads=*/13717154,
     /*scratchpadWrites=*/1360042},
    /*cpuSeconds=*/0.065540,
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
