// Simulation speed: simulated cycles per second of the whole SystemC platform on a convolution
// workload, and of the same Verilated RTL driven by a bare C++ loop (same memory timing, no
// SystemC, no TLM), in one run. Prints figures; asserts nothing.
//
// Wall-clock rates depend on what else runs on the machine, so CPU-time rates (this process's
// CPU seconds) are printed too; they are the fairer comparison on a shared machine.
#include "Vnpu_top.h"
#include "verilated.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <deque>
#include <memory>
#include <random>
#include <vector>

#include "bench/BenchUtil.h"
#include "driver/ChainBuilder.h"
#include "driver/NpuRegisters.h"
#include "sim/Platform.h"
#include "sim/VerilatedPorts.h"

namespace nncosim::bench {
namespace {

constexpr uint32_t kVec = npu::kDramBusBytes;

// The NPU with a plain memory: 100-cycle reads, one beat per cycle, in-order responses.
class BareNpu {
  public:
    BareNpu(std::vector<uint8_t> memory, uint32_t latency)
        : mContext(std::make_unique<VerilatedContext>()),
          mModel(std::make_unique<Vnpu_top>(mContext.get(), "npu_top")),
          mMemory(std::move(memory)),
          mLatency(latency) {
        std::memset(&mModel->fault_rq_mask_i, 0, sizeof(mModel->fault_rq_mask_i));  // no faults
        std::memset(&mModel->fault_rq_value_i, 0, sizeof(mModel->fault_rq_value_i));
        mModel->mem_lanes_i = 1;  // one memory lane: 16 B/cycle
        mModel->rst_ni = 0;
        for (int i = 0; i < 4; ++i) {
            cycle();
        }
        mModel->rst_ni = 1;
    }

    uint32_t csr(bool write, uint32_t offset, uint32_t value) {
        mCsrPending = true;
        mCsrWrite = write;
        mCsrOffset = offset;
        mCsrValue = value;
        cycle();
        return mCsrResult;
    }

    void runUntilIrq(uint64_t limit) {
        for (uint64_t i = 0; i < limit && !mModel->irq_o; ++i) {
            cycle();
        }
    }

    uint64_t cycles() const { return mCycle; }
    const std::vector<uint8_t>& memory() const { return mMemory; }

  private:
    void cycle() {
        Vnpu_top& m = *mModel;
        m.csr_req_i = mCsrPending;
        m.csr_we_i = mCsrPending && mCsrWrite;
        m.csr_addr_i = mCsrOffset;
        m.csr_wdata_i = mCsrValue;
        // One lane, a fixed latency: responses fall due in order, one a cycle at most.
        const bool respond = !mResponses.empty() && mResponses.front().due <= mCycle;
        m.mem_rsp_valid_i = respond ? 1u << mResponses.front().client : 0;
        if (respond) {
            sim::writePortBytes(m.mem_rsp_data_i, mResponses.front().data,
                                mResponses.front().client);
            mResponses.pop_front();
        }
        m.mem_req_ready_i = 1;
        m.clk_i = 0;
        m.eval();
        if (mCsrPending) {
            mCsrResult = m.csr_rdata_o;
            mCsrPending = false;
        }
        if (m.mem_req_valid_o & 1) {
            // Lane 0 names the client; the request's fields are on the client's port.
            const uint32_t client = m.mem_req_id_o & (sim::kMemClients - 1);
            const uint32_t addr = sim::portElement(m.mem_req_addr_o, client, 32);
            uint8_t* at = mMemory.data() + (addr < mMemory.size() ? addr : 0);
            if ((m.mem_req_write_o >> client) & 1) {
                uint8_t data[kVec];
                sim::readPortBytes(m.mem_req_wdata_o, data, client);
                const uint32_t strobes = sim::portElement(m.mem_req_wstrb_o, client, kVec);
                for (uint32_t b = 0; b < kVec; ++b) {
                    if ((strobes >> b) & 1) {
                        at[b] = data[b];
                    }
                }
            } else {
                Response r;
                r.due = mCycle + mLatency;
                r.client = client;
                std::memcpy(r.data, at, kVec);
                mResponses.push_back(r);
            }
        }
        m.clk_i = 1;
        m.eval();
        ++mCycle;
    }

    struct Response {
        uint64_t due;
        uint32_t client;
        uint8_t data[kVec];
    };
    std::unique_ptr<VerilatedContext> mContext;
    std::unique_ptr<Vnpu_top> mModel;
    std::vector<uint8_t> mMemory;
    uint32_t mLatency;
    std::deque<Response> mResponses;
    uint64_t mCycle = 0;
    bool mCsrPending = false, mCsrWrite = false;
    uint32_t mCsrOffset = 0, mCsrValue = 0, mCsrResult = 0;
};

struct Timer {
    std::chrono::steady_clock::time_point wall = std::chrono::steady_clock::now();
    std::clock_t cpu = std::clock();
    double wallSeconds() const {
        return std::chrono::duration<double>(std::chrono::steady_clock::now() - wall).count();
    }
    double cpuSeconds() const { return double(std::clock() - cpu) / CLOCKS_PER_SEC; }
};

int run() {
    auto platform = sim::createSystemCPlatform();
    if (!platform.ok()) {
        std::fprintf(stderr, "%s\n", platform.status().message.c_str());
        return 1;
    }
    driver::HardwareAccess& hw = **platform;

    // ResNet-18's layer2 3x3 convolution: 28x28x128 -> 128, several tiles.
    LayerShape layer{"resnet18.layer2.conv3x3", LayerShape::Kind::kConv, 28, 28, 128, 128, 3, 1};
    std::mt19937 rng(1);
    uint32_t end = 0;
    const npu::ChainBuilder program = buildLayer(hw, layer, 0x100000, end, rng);
    const uint32_t queue = (end + 15) / 16 * 16;
    const uint32_t record = queue + static_cast<uint32_t>(program.descriptors().size()) * 128;
    const npu::JobLayout layout{queue, record, 0, record + 16};

    // The bare loop starts from the same memory image, taken before the platform runs.
    std::vector<uint8_t> image(record + 64);
    (void)hw.readMemory(0, image.data(), image.size());
    {
        // Descriptors as runJob writes them (LAST on the final one).
        std::vector<uint32_t> words;
        for (size_t i = 0; i < program.descriptors().size(); ++i) {
            npu::Descriptor d = program.descriptors()[i];
            if (i + 1 == program.descriptors().size()) {
                d.flags |= static_cast<uint32_t>(npu::DescFlag::LAST);
            }
            const auto w = d.encode();
            words.insert(words.end(), w.begin(), w.end());
        }
        std::memcpy(image.data() + queue, words.data(), words.size() * 4);
    }

    // Each side runs kRuns times, alternating, and reports its best and median rate: on a shared
    // or virtualized machine other tenants slow single runs by tens of percent.
    constexpr int kRuns = 5;
    struct Sample {
        double cycles, wall, cpu;
    };
    std::vector<Sample> platformRuns, bareRuns;
    std::vector<uint8_t> bareMemory;
    for (int r = 0; r < kRuns; ++r) {
        Timer platformTimer;
        auto job = npu::runJob(hw, program, layout, 1, 1'000'000'000);
        platformRuns.push_back({0, platformTimer.wallSeconds(), platformTimer.cpuSeconds()});
        if (!job.ok() || job->errorCode != 0 || !job->interrupted) {
            std::fprintf(stderr, "platform job failed\n");
            return 1;
        }
        platformRuns.back().cycles = static_cast<double>(job->cycles);

        BareNpu bare(image, 100);
        Timer bareTimer;
        const uint64_t bareStart = bare.cycles();
        bare.csr(true, npu::reg::kDmaWindowBase, layout.windowBase);
        bare.csr(true, npu::reg::kDmaWindowLimit, layout.windowLimit);
        bare.csr(true, npu::reg::kQueueBase, layout.queueAddr);
        bare.csr(true, npu::reg::kCompletionAddr, layout.completionAddr);
        bare.csr(true, npu::reg::kDoorbell, 1);
        bare.runUntilIrq(1'000'000'000);
        bareRuns.push_back({static_cast<double>(bare.cycles() - bareStart), bareTimer.wallSeconds(),
                            bareTimer.cpuSeconds()});
        bareMemory = bare.memory();
    }

    // Both ran the same job: the outputs must agree.
    const size_t outBytes = size_t{layer.outH()} * layer.outW() * layer.outC;
    const uint32_t outAddr = program.descriptors()[0].out.addr;
    std::vector<uint8_t> platformOut(outBytes);
    (void)hw.readMemory(outAddr, platformOut.data(), outBytes);
    const bool same = std::memcmp(platformOut.data(), bareMemory.data() + outAddr, outBytes) == 0;

    // Best and median seconds of a side, wall or CPU.
    const auto seconds = [](std::vector<Sample> runs, double Sample::*time) {
        std::sort(runs.begin(), runs.end(),
                  [time](const Sample& a, const Sample& b) { return a.*time < b.*time; });
        return std::pair<double, double>{runs.front().*time, runs[runs.size() / 2].*time};
    };
    std::printf("workload: %s (%ux%ux%u -> %u, %ux%u), %zu descriptors, %.1f MMAC\n",
                layer.name.c_str(), layer.h, layer.w, layer.inC, layer.outC, layer.kernel,
                layer.kernel, program.descriptors().size(), layer.macs() / 1e6);
    std::printf("array %ux%u, DRAM latency 100 cycles, %u B/cycle; %d runs of each, alternating\n",
                npu::kArrayRows, npu::kArrayCols, npu::kDramBusBytes, kRuns);
    std::printf("%-18s %10s %16s %16s %16s %16s\n", "", "cycles", "best cyc/s wall", "median wall",
                "best cyc/s CPU", "median CPU");
    const auto row = [&](const char* name, const std::vector<Sample>& runs) {
        const double cycles = runs.front().cycles;
        const auto [bestWall, medianWall] = seconds(runs, &Sample::wall);
        const auto [bestCpu, medianCpu] = seconds(runs, &Sample::cpu);
        std::printf("%-18s %10.0f %16.0f %16.0f %16.0f %16.0f\n", name, cycles, cycles / bestWall,
                    cycles / medianWall, cycles / bestCpu, cycles / medianCpu);
        return std::pair<double, double>{bestCpu / cycles, medianCpu / cycles};
    };
    const auto [platformBest, platformMedian] = row("SystemC platform", platformRuns);
    const auto [bareBest, bareMedian] = row("bare C++ loop", bareRuns);
    std::printf(
        "SystemC overhead (CPU time per cycle, platform vs bare): best %+.1f%%, median "
        "%+.1f%%\n",
        100.0 * (platformBest / bareBest - 1.0), 100.0 * (platformMedian / bareMedian - 1.0));
    std::printf("outputs of both runs identical: %s\n", same ? "yes" : "NO");
    return same ? 0 : 1;
}

}  // namespace
}  // namespace nncosim::bench

int main() {
    return nncosim::bench::run();
}
