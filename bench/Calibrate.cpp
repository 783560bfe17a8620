// nncosim_calibrate MODEL.json...: the calibration benchmark behind the driver's Capabilities.
// For each model it runs the longest prefix of operations the NPU supports on the Verilated NPU
// (device time = cycles x clock period; energy by driver/EnergyModel.h over the job's counters)
// and the whole model on the golden reference on the CPU (wall time), and prints NNAPI's
// figures, both relative to the CPU (lower is better): execTime, the device's time over the
// CPU's, and powerUsage, the NPU's energy over the CPU reference's for the same MACs. It also
// prints the run as a driver::CalibrationRun, the record driver/Calibration.cpp keeps and
// computes the capabilities from. Android's driver guide recommends MobileNet float and quantized
// as the reference workloads; `nncosim zoo mobilenet_v1 [--quant8] -o m.json` writes them.
#include <chrono>
#include <iomanip>
#include <iostream>

#include "driver/Calibration.h"
#include "driver/Compiler.h"
#include "driver/Runtime.h"
#include "golden/Executor.h"
#include "model/CtsReader.h"
#include "sim/Platform.h"

using namespace nncosim;

int main(int argc, char** argv) {
    if (argc < 2) {
        std::cerr << "usage: nncosim_calibrate MODEL.json...\n";
        return 2;
    }
    auto platform = sim::createSystemCPlatform();
    if (!platform) {
        std::cerr << platform.status().message << "\n";
        return 1;
    }
    driver::Runtime runtime(*platform);
    if (Status st = runtime.initialize(); !st.ok()) {
        std::cerr << st.message << "\n";
        return 1;
    }
    for (int a = 1; a < argc; ++a) {
        auto file = readCtsFile(argv[a]);
        if (!file || file->tests.empty()) {
            std::cerr << argv[a] << ": " << (file ? "no model" : file.status().message) << "\n";
            return 1;
        }
        const CtsTest& test = file->tests.front();
        // CPU: the whole model on the golden, best of three.
        double cpuSeconds = 1e30;
        for (int i = 0; i < 3; ++i) {
            const auto start = std::chrono::steady_clock::now();
            auto outputs = golden::execute(test.model, test.inputs);
            if (!outputs) {
                std::cerr << outputs.status().message << "\n";
                return 1;
            }
            cpuSeconds = std::min(
                cpuSeconds,
                std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
        }
        // NPU: the supported prefix, its last output as the model output.
        Model prefix = test.model;
        uint32_t n = 0;
        while (n < prefix.main.operations.size() && driver::checkOperationSupported(prefix, n).ok())
            ++n;
        std::cout << test.name << ": " << n << " of " << prefix.main.operations.size()
                  << " operations on the NPU; CPU (golden, whole model) " << std::fixed
                  << std::setprecision(6) << cpuSeconds << " s\n";
        if (n == 0) continue;
        prefix.main.operations.resize(n);
        const uint32_t last = prefix.main.operations.back().outputs[0];
        prefix.main.operands[last].lifetime = OperandLifeTime::SUBGRAPH_OUTPUT;
        prefix.main.outputIndexes = {last};
        auto program = driver::compileModel(prefix, {});
        if (!program) {
            std::cerr << program.status().message << "\n";
            return 1;
        }
        const driver::PerformanceCounters before = (*platform)->performanceCounters();
        auto outcome = runtime.run(*program, test.inputs, {});
        if (!outcome.status.ok()) {
            std::cerr << outcome.status.message << "\n";
            return 1;
        }
        const driver::PerformanceCounters after = (*platform)->performanceCounters();
        driver::CalibrationRun run;
        run.workload = test.name.c_str();
        run.target = driver::kCompilerTarget;
        run.clockPeriodPs = (*platform)->clockPeriodPs();
        run.cpuSeconds = cpuSeconds;
        run.npu.cycles = outcome.cycles;
        run.npu.macs = after.macs - before.macs;
        run.npu.dmaBytesRead = after.dmaBytesRead - before.dmaBytesRead;
        run.npu.dmaBytesWritten = after.dmaBytesWritten - before.dmaBytesWritten;
        for (const npu::Descriptor& d : program->descriptors) {
            const driver::ScratchpadAccesses s = driver::scratchpadAccesses(d);
            run.npu.scratchpadReads += s.reads;
            run.npu.scratchpadWrites += s.writes;
            run.npu.floatMacs += driver::floatMacs(d);
        }
        const double npuSeconds = runtime.deviceTime(outcome.cycles).count() * 1e-9;
        const driver::Energy energy = driver::estimateEnergy(run.npu, run.clockPeriodPs);
        const double cpuMicrojoules = driver::cpuPicojoules(run.npu.macs, run.npu.floatMacs) * 1e-6;
        const PerformanceInfo info = driver::performanceFromCalibration(run);
        std::cout << "  NPU " << outcome.cycles << " cycles = " << npuSeconds
                  << " s of device time (" << program->estimatedCycles
                  << " estimated); execTime = NPU / CPU = " << std::setprecision(4) << info.execTime
                  << "\n";
        std::cout << std::setprecision(1) << "  NPU energy " << energy.microjoules() << " uJ (MACs "
                  << energy.macs * 1e-6 << ", scratchpad " << energy.scratchpad * 1e-6 << ", DRAM "
                  << energy.dram * 1e-6 << ", clock and leakage " << energy.clockAndLeakage * 1e-6
                  << "), " << driver::averageMilliwatts(energy, run.npu.cycles, run.clockPeriodPs)
                  << " mW; CPU reference " << cpuMicrojoules
                  << " uJ; powerUsage = NPU / CPU = " << std::setprecision(4) << info.powerUsage
                  << "\n";
        const driver::CompilerTarget& t = run.target;
        std::cout << "  as recorded in driver/Calibration.cpp:\n    {\"" << test.name << "\",\n"
                  << "     {/*compilerVersion=*/" << t.compilerVersion << ", /*arrayRows=*/"
                  << t.arrayRows << ", /*arrayCols=*/" << t.arrayCols << ", /*dramBusBytes=*/"
                  << t.dramBusBytes << ",\n      /*spadWords=*/" << t.spadWords << ", /*accDepth=*/"
                  << t.accDepth << "},\n     " << run.clockPeriodPs << ",\n     {/*cycles=*/"
                  << run.npu.cycles << ", /*macs=*/" << run.npu.macs << ", /*floatMacs=*/"
                  << run.npu.floatMacs << ", /*dmaBytesRead=*/" << run.npu.dmaBytesRead
                  << ", /*dmaBytesWritten=*/" << run.npu.dmaBytesWritten
                  << ",\n      /*scratchpadReads=*/" << run.npu.scratchpadReads
                  << ", /*scratchpadWrites=*/" << run.npu.scratchpadWrites
                  << "},\n     /*cpuSeconds=*/" << std::setprecision(6) << cpuSeconds << "}\n";
    }
    return 0;
}
