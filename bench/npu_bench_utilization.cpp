// PE utilization per layer of MobileNet-v1 and ResNet-18 (224x224 input, int8): each layer runs
// on the SystemC platform with the DRAM model at 16 bytes/cycle and 100-cycle latency, and the
// table gives MACs / (rows x columns x cycles). Layers that repeat in the network run once and
// count `repeat` times in the network totals. A second MobileNet-v1 table runs each depthwise
// layer fused with the pointwise layer after it (CHAIN_OUT / CHAIN_IN). A last table runs whole
// zoo networks in the form converters write them (the converter-style MobileNet-v2 and the
// DeepLab- and SSD-like heads) through the driver and the host runtime, as an application would:
// NPU cycles of all its jobs, utilization over them, partitions. Prints figures; asserts nothing.
#include <CLI/CLI.hpp>
#include <cstdio>
#include <random>
#include <string>
#include <vector>

#include "bench/BenchUtil.h"
#include "driver/ChainBuilder.h"
#include "driver/NpuRegisters.h"
#include "sim/Platform.h"
#include "testbench/Zoo.h"
#include "testbench/runtime/HostRuntime.h"

namespace nncosim::bench {
namespace {

using Kind = LayerShape::Kind;

std::vector<LayerShape> mobilenetV1() {
    std::vector<LayerShape> l = {
        {"conv1 3x3/2", Kind::kConv, 224, 224, 3, 32, 3, 2},
        {"dw1 3x3", Kind::kDepthwise, 112, 112, 32, 32, 3, 1},
        {"pw1 1x1", Kind::kConv, 112, 112, 32, 64, 1, 1},
        {"dw2 3x3/2", Kind::kDepthwise, 112, 112, 64, 64, 3, 2},
        {"pw2 1x1", Kind::kConv, 56, 56, 64, 128, 1, 1},
        {"dw3 3x3", Kind::kDepthwise, 56, 56, 128, 128, 3, 1},
        {"pw3 1x1", Kind::kConv, 56, 56, 128, 128, 1, 1},
        {"dw4 3x3/2", Kind::kDepthwise, 56, 56, 128, 128, 3, 2},
        {"pw4 1x1", Kind::kConv, 28, 28, 128, 256, 1, 1},
        {"dw5 3x3", Kind::kDepthwise, 28, 28, 256, 256, 3, 1},
        {"pw5 1x1", Kind::kConv, 28, 28, 256, 256, 1, 1},
        {"dw6 3x3/2", Kind::kDepthwise, 28, 28, 256, 256, 3, 2},
        {"pw6 1x1", Kind::kConv, 14, 14, 256, 512, 1, 1},
        {"dw7-11 3x3", Kind::kDepthwise, 14, 14, 512, 512, 3, 1, 5},
        {"pw7-11 1x1", Kind::kConv, 14, 14, 512, 512, 1, 1, 5},
        {"dw12 3x3/2", Kind::kDepthwise, 14, 14, 512, 512, 3, 2},
        {"pw12 1x1", Kind::kConv, 7, 7, 512, 1024, 1, 1},
        {"dw13 3x3", Kind::kDepthwise, 7, 7, 1024, 1024, 3, 1},
        {"pw13 1x1", Kind::kConv, 7, 7, 1024, 1024, 1, 1},
        {"fc 1024->1000", Kind::kConv, 1, 1, 1024, 1000, 1, 1},
    };
    return l;
}

std::vector<LayerShape> resnet18() {
    std::vector<LayerShape> l = {
        {"conv1 7x7/2", Kind::kConv, 224, 224, 3, 64, 7, 2},
        {"layer1 3x3 (x4)", Kind::kConv, 56, 56, 64, 64, 3, 1, 4},
        {"layer2.0 3x3/2", Kind::kConv, 56, 56, 64, 128, 3, 2},
        {"layer2 3x3 (x3)", Kind::kConv, 28, 28, 128, 128, 3, 1, 3},
        {"layer2.ds 1x1/2", Kind::kConv, 56, 56, 64, 128, 1, 2},
        {"layer3.0 3x3/2", Kind::kConv, 28, 28, 128, 256, 3, 2},
        {"layer3 3x3 (x3)", Kind::kConv, 14, 14, 256, 256, 3, 1, 3},
        {"layer3.ds 1x1/2", Kind::kConv, 28, 28, 128, 256, 1, 2},
        {"layer4.0 3x3/2", Kind::kConv, 14, 14, 256, 512, 3, 2},
        {"layer4 3x3 (x3)", Kind::kConv, 7, 7, 512, 512, 3, 1, 3},
        {"layer4.ds 1x1/2", Kind::kConv, 14, 14, 256, 512, 1, 2},
        {"fc 512->1000", Kind::kConv, 1, 1, 512, 1000, 1, 1},
    };
    return l;
}

struct Totals {
    double macs = 0, cycles = 0;
    void add(double m, double c) {
        macs += m;
        cycles += c;
    }
    double utilization() const {
        return cycles == 0 ? 0 : macs / (double(npu::kArrayRows) * npu::kArrayCols * cycles);
    }
};

struct Summary {
    Totals oneByOne, threeByThree, depthwise, depthwiseStride1, depthwiseStride2;
};

struct Measured {
    bool ok = false;
    double cycles = 0;
    driver::PerformanceCounters counters;
};

// Runs a program built from `end` (the first free DRAM address) on; cycles from doorbell to
// interrupt.
Measured runProgram(driver::HardwareAccess& hw, const npu::ChainBuilder& program, uint32_t end) {
    Measured m;
    if (program.empty()) {
        return m;
    }
    const uint32_t queue = (end + 15) / 16 * 16;
    const uint32_t record = queue + static_cast<uint32_t>(program.descriptors().size()) * 128;
    hw.writeRegister(npu::reg::kControl, npu::field::kControlPerfClear);
    auto job = npu::runJob(hw, program, {queue, record, 0, record + 16}, 1, 2'000'000'000);
    m.ok = job.ok() && job->interrupted && job->errorCode == 0;
    if (!m.ok) {
        std::fprintf(stderr, "job failed: %s, error code %u at descriptor %u, address 0x%x\n",
                     job.ok() ? (job->interrupted ? "interrupted" : "timeout")
                              : job.status().message.c_str(),
                     job.ok() ? job->errorCode : 0, job.ok() ? job->errorDesc : 0,
                     job.ok() ? job->errorAddr : 0);
    }
    m.cycles = m.ok ? static_cast<double>(job->cycles) : 0;
    m.counters = hw.performanceCounters();
    return m;
}

constexpr double kPes = double(npu::kArrayRows) * npu::kArrayCols;

int runNetwork(driver::HardwareAccess& hw, uint32_t dramBytesPerCycle, const char* name,
               const std::vector<LayerShape>& layers, Summary& summary,
               std::vector<double>& layerCycles) {
    std::printf("\n%s\n", name);
    std::printf("%-18s %-22s %9s %10s %7s %7s %7s %7s %7s %7s %7s %5s\n", "layer", "shape", "MMAC",
                "cycles", "util%", "ctr%", "dram%", "wait_w", "wait_o", "wait_i", "fetch", "tiles");
    Totals network;
    std::string unbound;  // layers below 50 % that are not at their DRAM bound either
    std::mt19937 rng(3);
    for (const LayerShape& l : layers) {
        uint32_t end = 0;
        const npu::ChainBuilder program = buildLayer(hw, l, 0x100000, end, rng);
        const Measured m = runProgram(hw, program, end);
        if (!m.ok) {
            std::fprintf(stderr, "%s failed\n", l.name.c_str());
            return 1;
        }
        const driver::PerformanceCounters& c = m.counters;
        const double cycles = m.cycles;
        const double pe = kPes;
        layerCycles.push_back(cycles);
        const double macs = static_cast<double>(l.macs());
        const double busy = static_cast<double>(c.busyCycles);
        char shape[64];
        std::snprintf(shape, sizeof(shape), "%ux%ux%u->%ux%ux%u", l.h, l.w, l.inC, l.outH(),
                      l.outW(), l.outC);
        const double dramBytes = static_cast<double>(c.dmaBytesRead + c.dmaBytesWritten);
        const double util = macs / (pe * cycles), dram = dramBytes / (dramBytesPerCycle * cycles);
        if (util < 0.5 && dram < 0.9) unbound += (unbound.empty() ? "" : ", ") + l.name;
        std::printf("%-18s %-22s %9.2f %10.0f %7.1f %7.1f %7.1f %7.1f %7.1f %7.1f %7.1f %5zu\n",
                    l.name.c_str(), shape, macs / 1e6, cycles, 100 * util,
                    100 * c.macs / (pe * cycles), 100 * dram, 100 * c.stallWeightCycles / busy,
                    100 * c.stallOutputCycles / busy, 100 * c.stallInputCycles / busy,
                    100 * c.stallFetchCycles / busy, program.descriptors().size());
        network.add(macs * l.repeat, cycles * l.repeat);
        if (l.kind == Kind::kDepthwise) {
            summary.depthwise.add(macs * l.repeat, cycles * l.repeat);
            (l.stride == 1 ? summary.depthwiseStride1 : summary.depthwiseStride2)
                .add(macs * l.repeat, cycles * l.repeat);
        } else if (l.kernel == 1 && l.inC >= 64 && l.outC >= 64 && l.h > 1) {
            summary.oneByOne.add(macs * l.repeat, cycles * l.repeat);
        } else if (l.kernel == 3) {
            summary.threeByThree.add(macs * l.repeat, cycles * l.repeat);
        }
    }
    std::printf(
        "%-18s %-22s %9.2f %10.0f %7.1f   (whole network, repeats counted, %.2f ms at 1 GHz)\n",
        "total", "", network.macs / 1e6, network.cycles, 100 * network.utilization(),
        network.cycles / 1e6);
    std::printf("below 50%% utilization and below 90%% DRAM (at neither bound): %s\n",
                unbound.empty() ? "none" : unbound.c_str());
    return 0;
}

// MobileNet-v1 with every depthwise layer fused with the pointwise layer after it. A block's
// depthwise cycles are what it adds to the pointwise layer run alone (`layerCycles`, from the
// unfused table): the array time the depthwise layer costs.
int runFusedMobilenet(driver::HardwareAccess& hw, const std::vector<LayerShape>& layers,
                      const std::vector<double>& layerCycles, Totals& depthwise,
                      Totals& depthwiseStride1) {
    std::printf("\nMobileNet-v1, depthwise fused with the next pointwise layer\n");
    std::printf("%-24s %9s %9s %10s %7s %10s %7s\n", "block", "dw MMAC", "pw MMAC", "cycles",
                "util%", "dw cycles", "dw%");
    Totals network;
    std::mt19937 rng(3);
    for (size_t i = 0; i < layers.size(); ++i) {
        const LayerShape& l = layers[i];
        if (l.kind != Kind::kDepthwise || i + 1 == layers.size()) {
            network.add(double(l.macs()) * l.repeat, layerCycles[i] * l.repeat);
            continue;
        }
        const LayerShape& pw = layers[++i];
        const npu::DeviceTensor input{0, 1, l.h, l.w, l.inC, 0, true, 0};
        if (!npu::depthwisePointwisePays(input, geometryOf(l), outputOf(l, 0), outputOf(pw, 0),
                                         static_cast<uint32_t>(npu::Format::INT8))) {
            std::printf("%-24s %9.2f %9.2f %10.0f %7s  (not fused: see depthwisePointwisePays)\n",
                        (l.name + " + " + pw.name.substr(0, pw.name.find(' '))).c_str(),
                        l.macs() / 1e6, pw.macs() / 1e6, layerCycles[i - 1] + layerCycles[i], "");
            network.add(double(l.macs() + pw.macs()) * l.repeat,
                        (layerCycles[i - 1] + layerCycles[i]) * l.repeat);
            continue;
        }
        uint32_t end = 0;
        const npu::ChainBuilder program = buildDepthwisePointwise(hw, l, pw, 0x100000, end, rng);
        const Measured m = runProgram(hw, program, end);
        if (!m.ok) {
            std::fprintf(stderr, "%s + %s failed\n", l.name.c_str(), pw.name.c_str());
            return 1;
        }
        const double dwMacs = double(l.macs()), pwMacs = double(pw.macs());
        const double dwCycles = m.cycles - layerCycles[i];
        std::printf("%-24s %9.2f %9.2f %10.0f %7.1f %10.0f %7.1f\n",
                    (l.name + " + " + pw.name.substr(0, pw.name.find(' '))).c_str(), dwMacs / 1e6,
                    pwMacs / 1e6, m.cycles, 100 * (dwMacs + pwMacs) / (kPes * m.cycles), dwCycles,
                    100 * dwMacs / (kPes * dwCycles));
        network.add((dwMacs + pwMacs) * l.repeat, m.cycles * l.repeat);
        depthwise.add(dwMacs * l.repeat, dwCycles * l.repeat);
        if (l.stride == 1) {
            depthwiseStride1.add(dwMacs * l.repeat, dwCycles * l.repeat);
        }
    }
    std::printf("%-24s %9.2f %20.0f %7.1f   (whole network, fused, %.2f ms at 1 GHz)\n", "total",
                network.macs / 1e6, network.cycles, 100 * network.utilization(),
                network.cycles / 1e6);
    return 0;
}

// Whole 224x224 quant8 zoo networks (as the zoo writes them, and in converter style) through the
// driver, partitioned by the host runtime (Android's rules); CPU partitions run on the golden and
// cost no NPU cycles.
int runZooNetworks(const std::shared_ptr<NpuContext>& npu) {
    std::printf(
        "\nWhole networks, 224x224 quant8, through the driver's compiler and the host runtime "
        "(the zoo's, then converter style: NCHW input + TRANSPOSE, explicit PADs, MEAN)\n");
    std::printf("%-38s %9s %10s %7s %7s %7s %6s %6s %6s %11s %5s %s\n", "network", "MMAC",
                "NPU cycles", "util%", "dram%", "active", "wait_w", "wait_o", "wait_i",
                "partitions", "NPU", "on the CPU");
    const std::pair<zoo::Network, bool> networks[] = {{zoo::Network::kMobileNetV1, false},
                                                      {zoo::Network::kResNet18, false},
                                                      {zoo::Network::kMobileNetV2, true},
                                                      {zoo::Network::kDeepLabHead, true},
                                                      {zoo::Network::kSsdHead, true}};
    for (const auto& [network, converterStyle] : networks) {
        zoo::ZooConfig config;
        config.network = network;
        config.precision = zoo::Precision::kQuant8;
        config.converterStyle = converterStyle;
        auto model = zoo::buildZooModel(config);
        if (!model) {
            std::fprintf(stderr, "%s\n", model.status().message.c_str());
            return 1;
        }
        RuntimeOptions options;
        options.npu = npu;
        auto runtime = HostRuntime::create(*model, options);
        auto inputs = zoo::randomInputs(*model, 7);
        if (!runtime || !inputs) {
            std::fprintf(stderr, "%s: %s\n", zoo::modelName(config).c_str(),
                         (runtime ? inputs.status() : runtime.status()).message.c_str());
            return 1;
        }
        ExecutionRecord record;
        auto outputs = (*runtime)->execute(*inputs, &record);
        if (!outputs) {
            std::fprintf(stderr, "%s: %s\n", zoo::modelName(config).c_str(),
                         outputs.status().message.c_str());
            return 1;
        }
        size_t npuPartitions = 0;
        for (const Partition& p : (*runtime)->partitions()) npuPartitions += p.npu;
        std::string cpu;
        for (const OperationRecord& op : record.operations) {
            if (!op.npu) cpu += (cpu.empty() ? "" : " ") + nameOf(op.type);
        }
        // Every multiply-accumulating layer runs on the NPU.
        const double macs = static_cast<double>(zoo::countMacs(*model));
        const double cycles = static_cast<double>(record.npuCycles);
        const NpuCounters total = record.npuTotal();
        const auto share = [cycles](uint64_t c) { return 100 * static_cast<double>(c) / cycles; };
        std::printf("%-38s %9.2f %10.0f %7.1f %7.1f %7.1f %6.1f %6.1f %6.1f %11zu %5zu %s\n",
                    zoo::modelName(config).c_str(), macs / 1e6, cycles,
                    100 * macs / (kPes * cycles),
                    100 * total.dramUtilization(npu->dramBytesPerCycle),
                    share(total.arrayActiveCycles), share(total.stallWeightCycles),
                    share(total.stallOutputCycles), share(total.stallInputCycles),
                    (*runtime)->partitions().size(), npuPartitions, cpu.c_str());
    }
    return 0;
}

int run(uint32_t dramBytesPerCycle) {
    sim::PlatformConfig config;
    config.dramBytesPerCycle = dramBytesPerCycle;
    config.dramLatencyCycles = 100;
    // One platform (SystemC elaborates once) with the driver on it, for the whole networks; the
    // layer tables program it directly (the profiler passes everything through).
    auto npu = makeNpuContext(config);
    if (!npu) {
        std::fprintf(stderr, "%s\n", npu.status().message.c_str());
        return 1;
    }
    driver::HardwareAccess& hw = *(*npu)->hardware;
    std::printf(
        "PE utilization = layer MACs / (%ux%u PEs x cycles from doorbell to interrupt); "
        "ctr%% uses the PERF_MACS counter.\nDRAM: %u B/cycle, %u-cycle latency. wait_*: "
        "%% of busy cycles the array waited for weights, output banks, input tiles; "
        "fetch: waiting for descriptors; active: %% of cycles a vector entered the array.\n",
        npu::kArrayRows, npu::kArrayCols, config.dramBytesPerCycle, config.dramLatencyCycles);
    Summary s;
    std::vector<double> mobilenetCycles, resnetCycles;
    Totals fusedDepthwise, fusedDepthwiseStride1;
    if (runNetwork(hw, dramBytesPerCycle, "MobileNet-v1", mobilenetV1(), s, mobilenetCycles) != 0 ||
        runNetwork(hw, dramBytesPerCycle, "ResNet-18", resnet18(), s, resnetCycles) != 0 ||
        runFusedMobilenet(hw, mobilenetV1(), mobilenetCycles, fusedDepthwise,
                          fusedDepthwiseStride1) != 0) {
        return 1;
    }
    const npu::ConvGeometry dw3x3{3, 3, 1, 1, 1, 1, 1, 1};
    std::printf("\nsummary (MAC-weighted over layers, repeats counted)\n");
    std::printf("  1x1 convolutions with >= 64 channels: %5.1f%%  (target >= 90%%)\n",
                100 * s.oneByOne.utilization());
    std::printf("  3x3 convolutions:                     %5.1f%%  (target >= 80%%)\n",
                100 * s.threeByThree.utilization());
    std::printf("  depthwise 3x3, all:                   %5.1f%%  (%s mode)\n",
                100 * s.depthwise.utilization(),
                npu::depthwiseUsesTaps(dw3x3) ? "TAPS" : "diagonal-block");
    std::printf("  depthwise 3x3, stride 1:              %5.1f%%\n",
                100 * s.depthwiseStride1.utilization());
    std::printf("  depthwise 3x3, stride 2:              %5.1f%%\n",
                100 * s.depthwiseStride2.utilization());
    if (fusedDepthwise.cycles > 0) {
        std::printf(
            "  depthwise 3x3 fused with pointwise:   %5.1f%%  (stride 1: %.1f%%; the cycles "
            "each adds to its pointwise layer)\n",
            100 * fusedDepthwise.utilization(), 100 * fusedDepthwiseStride1.utilization());
    }
    return runZooNetworks(*npu);
}

}  // namespace
}  // namespace nncosim::bench

int main(int argc, char** argv) {
    CLI::App app("Array utilization of the NPU on layer tables and whole networks (RTL)");
    uint32_t dramBytesPerCycle = 16;
    app.add_option("--dram-bytes-per-cycle", dramBytesPerCycle,
                   "Bandwidth of the platform's DRAM (16, 32, 48 or 64: 1 to 4 memory lanes)")
        ->check(CLI::IsMember({16u, 32u, 48u, 64u}))
        ->capture_default_str();
    CLI11_PARSE(app, argc, argv);
    return nncosim::bench::run(dramBytesPerCycle);
}
