#include "driver/Calibration.h"

namespace nncosim::driver {

// nncosim_calibrate /tmp/mobilenet_q8.json /tmp/mnv1f.json /tmp/mnv1r.json, the files written by
// `nncosim zoo mobilenet_v1 --quant8 -o /tmp/mobilenet_q8.json`, `nncosim zoo mobilenet_v1 -o
// /tmp/mnv1f.json` and `nncosim zoo mobilenet_v1 --relaxed -o /tmp/mnv1r.json`, 16x16 NPU, default
// platform (1 GHz, DRAM 16 B/cycle, 100 cycles latency), golden times on the 2-vCPU VM:
// - quant8: 30 of 31 operations (all but the 1001-way SOFTMAX) on the Verilated NPU, 2,378,323
//   cycles = 2.38 ms; the golden took 0.1921 s for the whole model. execTime 0.0124; NPU energy
//   1023.4 uJ (MACs 170.6, scratchpad 119.9, DRAM 633.0, clock and leakage 99.9), 430 mW; CPU
//   reference 34,124 uJ; powerUsage 0.0300.
// - float32: all 31 operations (the SOFTMAX too) on the Verilated NPU, 5,358,827 cycles =
//   5.36 ms (41.5 % of the array: DRAM-bound, docs/npu.md); the golden took 0.0616 s. execTime
//   0.0870; NPU energy 6518.9 uJ (MACs 2616.2, scratchpad 454.2, DRAM 3223.4, clock and leakage
//   225.1), 1217 mW; CPU reference 68,249 uJ; powerUsage 0.0955.
// - relaxed: all 31 operations on the Verilated NPU in binary16 (the model's float16 form),
//   3,455,350 cycles = 3.46 ms (64.3 % of the array); the golden (binary32) took 0.0611 s.
//   execTime 0.0565; NPU energy 4775.8 uJ (MACs 2616.2, scratchpad 228.7, DRAM 1785.7, clock
//   and leakage 145.1), 1382 mW; CPU reference 68,249 uJ; powerUsage 0.0700.
// Compiler 12 (RESIZE_BILINEAR on the array) compiles the three models to the same programs:
// re-run, each took the cycles above again. The golden times are kept: the golden did not change,
// and on this VM its time varies by a third between runs (0.132, 0.052 and 0.052 s then).
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
