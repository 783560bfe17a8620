// Verilated headers come before <systemc> (pulled in by NpuPlatform.h).
#include "Vnpu_top.h"
#include "Vnpu_top___024root.h"
#include "verilated.h"
#include "verilated_fst_c.h"
#if NNCOSIM_COVERAGE
#include "verilated_cov.h"
#endif

#include "sim/NpuPlatform.h"

#include "model/OutputFile.h"

#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <set>
#include <sstream>

#include "model/OutputFile.h"
#include "sim/ChildProcess.h"
#include "sim/DramModel.h"
#include "sim/Mutation.h"
#include "sim/VerilatedPorts.h"

namespace nncosim::sim {
namespace {

constexpr uint32_t kVec = npu::kDramBusBytes;
static_assert(sizeof(Vnpu_top::mem_rsp_data_i) == kMemClients * kVec,
              "the NPU's memory clients do not match kMemClients");
// fst2vcd converts a dump of a few GB in minutes; beyond this it is stuck.
constexpr double kFst2VcdTimeoutSeconds = 1800;

uint64_t toCycles(const sc_core::sc_time& time, const sc_core::sc_time& period) {
    return static_cast<uint64_t>(time / period + 0.5);
}

}  // namespace

// The model's FST writer (Verilator builds the model for one trace format).
class NpuTrace {
  public:
    explicit NpuTrace(Vnpu_top& model) { model.trace(&mFst, 99); }
    VerilatedFstC mFst;
};

#if NNCOSIM_COVERAGE
// The coverage build: each platform's counts go to $NNCOSIM_COVERAGE_DIR, one file per platform,
// when the platform is destroyed or, for one that lives as long as the process (the process's
// NPU), when the process exits.
class CoverageFiles {
  public:
    static void add(VerilatedContext* context) {
        std::lock_guard<std::mutex> lock(mutex());
        static const bool registered = std::atexit(writeAll) == 0;
        (void)registered;
        live().insert(context);
    }
    static void remove(VerilatedContext* context) {
        std::lock_guard<std::mutex> lock(mutex());
        if (live().erase(context) != 0) write(context);
    }

  private:
    static std::mutex& mutex() {
        static std::mutex m;
        return m;
    }
    static std::set<VerilatedContext*>& live() {
        static auto* contexts = new std::set<VerilatedContext*>;  // outlives every platform
        return *contexts;
    }
    static void writeAll() {
        std::lock_guard<std::mutex> lock(mutex());
        for (VerilatedContext* context : live()) write(context);
        live().clear();
    }
    static void write(VerilatedContext* context) {
        const char* dir = std::getenv("NNCOSIM_COVERAGE_DIR");
        if (!dir) return;
        static unsigned written = 0;
        const std::string file = std::string(dir) + "/" + std::to_string(getpid()) + "-" +
                                 std::to_string(written++) + ".dat";
        context->coveragep()->write(file.c_str());
    }
};
#endif

NpuPlatform::NpuPlatform(const sc_core::sc_module_name& name, const PlatformConfig& config)
    : sc_core::sc_module(name),
      socket("socket"),
      mConfig(config),
      mPeriod(static_cast<double>(config.clockPeriodPs), sc_core::SC_PS),
      mDram(std::make_unique<DramModel>("dram", config.dramBytes, mPeriod, config.dramLatencyCycles,
                                        config.dramBytesPerCycle)),
      mContext(std::make_unique<VerilatedContext>()),
      mLanes(config.dramBytesPerCycle > kVec ? config.dramBytesPerCycle / kVec : 1),
      mBeat(kVec),
      mStrobes(kVec) {
    socket.bind(mDram->socket);
    // Tracing must be allowed before the model exists; when off, the model records nothing.
    if (mConfig.trace.enabled) {
        mContext->traceEverOn(true);
    }
    mModel = std::make_unique<Vnpu_top>(mContext.get(), "TOP");  // scopes read TOP.npu_top.*
#if NNCOSIM_COVERAGE
    CoverageFiles::add(mContext.get());
#endif
    setFault(mConfig.fault);
    mModel->mem_lanes_i = mLanes;  // a strap: the DRAM's lanes, fixed for the platform's life
    if (mConfig.trace.enabled) {
        mTrace = std::make_unique<NpuTrace>(*mModel);
        // Depth 0 means every level below the scope (Verilator counts levels literally).
        const int depth = mConfig.trace.depth > 0 ? mConfig.trace.depth : 1 << 20;
        for (const std::string& scope : mConfig.trace.scopes) {
            mTrace->mFst.dumpvars(depth, scope.rfind("TOP.", 0) == 0 ? scope : "TOP." + scope);
        }
    }
    mPayload.set_streaming_width(kVec);
    SC_THREAD(clockThread);
}

NpuPlatform::~NpuPlatform() {
    if (mTraceOpen) {
        stopTrace();
    }
    mModel->final();
#if NNCOSIM_COVERAGE
    CoverageFiles::remove(mContext.get());
#endif
}

void NpuPlatform::finishTrace() {
    if (mTraceOpen) {
        stopTrace();
    }
}

void NpuPlatform::setFault(const FaultOptions& fault) {
    mConfig.fault = fault;
    // The fault-injection port: a requantization output bit stuck, or nothing.
    std::vector<uint8_t> mask(kVec, 0), value(kVec, 0);
    if (fault.kind == FaultOptions::Kind::kStuckRequantBit) {
        const uint32_t bit = fault.bit % (8 * kVec);
        mask[bit / 8] = static_cast<uint8_t>(1u << (bit % 8));
        value[bit / 8] = fault.value ? mask[bit / 8] : 0;
    }
    writePortBytes(mModel->fault_rq_mask_i, mask.data());
    writePortBytes(mModel->fault_rq_value_i, value.data());
}

void NpuPlatform::hardReset() {
    mInReset = true;
    run(4, false);
    mInReset = false;
    for (auto& responses : mResponses) {
        responses.clear();
    }
    mChannelFreeCycle = mCycle;
    mDram->resetTiming();
    run(1, false);
}

uint32_t NpuPlatform::csrAccess(bool write, uint32_t offset, uint32_t value) {
    mCsr = {true, write, offset, value, 0};
    run(1, false);
    return mCsr.result;
}

void NpuPlatform::run(uint64_t cycles, bool stopOnIrq) {
    mRunUntil = mCycle + cycles;
    mStopOnIrq = stopOnIrq;
    mWork.notify(sc_core::SC_ZERO_TIME);
    sc_core::sc_start();  // returns when the clock thread waits for work again
}

bool NpuPlatform::hasWork() const {
    return mCycle < mRunUntil && !(mStopOnIrq && mIrq);
}

void NpuPlatform::clockThread() {
    while (true) {
        if (!hasWork()) {
            wait(mWork);
            continue;
        }
        mBatchStart = mCycle;
        uint64_t ran = 0;
        while (ran < kBatchCycles && hasWork()) {
            runCycle();
            ++ran;
        }
        mutation::countCycles(ran);
        wait(mPeriod * static_cast<double>(ran));
    }
}

void NpuPlatform::runCycle() {
    Vnpu_top& m = *mModel;
    m.rst_ni = !mInReset;

    // Inputs of this cycle: register request, due read response, request channel readiness.
    const bool csr = mCsr.pending;
    m.csr_req_i = csr;
    m.csr_we_i = csr && mCsr.write;
    m.csr_addr_i = mCsr.offset;
    m.csr_wdata_i = mCsr.value;
    // Each client gets at most one due read response a cycle, its oldest.
    uint32_t responding = 0;
    for (uint32_t c = 0; c < kMemClients; ++c) {
        std::deque<ReadResponse>& responses = mResponses[c];
        if (!responses.empty() && responses.front().dueCycle <= mCycle) {
            writePortBytes(m.mem_rsp_data_i, responses.front().data.data(), c);
            responses.pop_front();
            responding |= 1u << c;
        }
    }
    m.mem_rsp_valid_i = responding;
    // A beat per lane and cycle at most; none when the channel is backed up (bandwidth below a
    // beat per cycle).
    m.mem_req_ready_i = mChannelFreeCycle <= mCycle + 1 ? (1u << mLanes) - 1 : 0;

    m.clk_i = 0;
    m.eval();
    if (csr) {
        mCsr.result = m.csr_rdata_o;
        mCsr.pending = false;
    }
    const uint32_t accepted = m.mem_req_valid_o & m.mem_req_ready_i;
    for (uint32_t lane = 0; lane < mLanes && !mInReset; ++lane) {
        if ((accepted >> lane) & 1) {
            issueMemoryRequest(lane);
        }
    }
    const bool doorbell = csr && mCsr.write && mCsr.offset == npu::reg::kDoorbell;
    if (doorbell) {
        mWriteBeatsInJob = 0;
        if (mObserver) {
            mObserver->doorbell(mCycle);
        }
    }
    if (csr && mCsr.write && mCsr.offset == npu::reg::kCompletionAddr) {
        mCompletionAddr = mCsr.value;
    }
    if (mTrace) {
        // The cycle's inputs and combinational outputs, then the state after the edge.
        if (mTraceOpen) {
            mTrace->mFst.dump(mCycle * mConfig.clockPeriodPs);
        }
    }
    m.clk_i = 1;
    m.eval();
    ++mCycle;

    if (mObserver) {
        // The command processor's fetch index and retirement count (public read-only signals).
        const uint32_t fetchIndex = m.rootp->npu_top__DOT__u_cmd__DOT__fetch_index_q;
        const uint32_t descDone = m.rootp->npu_top__DOT__u_cmd__DOT__desc_done_q;
        if (fetchIndex != mSeenFetchIndex) {
            mSeenFetchIndex = fetchIndex;
            mObserver->fetchStarted(fetchIndex, mCycle);
        }
        while (descDone > mSeenDescDone) {
            mObserver->retired(++mSeenDescDone, mCycle);
        }
        mSeenDescDone = descDone;
    }
    const bool irqNow = m.irq_o;
    const bool errorNow = m.error_o;
    const bool irqRose = irqNow && !mIrq;
    const bool errorRose = errorNow && !mError;
    mIrq = irqNow;
    mError = errorNow;
    if (mTrace) {
        traceCycle(doorbell, irqRose, errorRose);
    }
}

void NpuPlatform::issueMemoryRequest(uint32_t lane) {
    Vnpu_top& m = *mModel;
    // The lane names the client; the request's fields are on the client's port.
    const uint32_t client = portElement(m.mem_req_id_o, lane, kMemClientIdBits);
    const bool write = (m.mem_req_write_o >> client) & 1;
    const uint32_t address = portElement(m.mem_req_addr_o, client, 32);
    const uint32_t wstrb = portElement(m.mem_req_wstrb_o, client, kVec);
    mPayload.set_command(write ? tlm::TLM_WRITE_COMMAND : tlm::TLM_READ_COMMAND);
    mPayload.set_address(address);
    mPayload.set_data_ptr(mBeat.data());
    mPayload.set_data_length(kVec);
    mPayload.set_byte_enable_ptr(nullptr);
    mPayload.set_byte_enable_length(0);
    mPayload.set_response_status(tlm::TLM_INCOMPLETE_RESPONSE);
    if (write) {
        readPortBytes(m.mem_req_wdata_o, mBeat.data(), client);
        // Fault injection (FaultOptions): a dropped beat keeps its timing but writes nothing.
        const FaultOptions& fault = mConfig.fault;
        const bool dropped =
            fault.kind == FaultOptions::Kind::kDropWriteBeat && mWriteBeatsInJob == fault.beat;
        ++mWriteBeatsInJob;
        if (fault.kind == FaultOptions::Kind::kStuckWriteBit && address != mCompletionAddr) {
            const uint8_t mask = static_cast<uint8_t>(1u << (fault.bit % 8));
            uint8_t& byte = mBeat[(fault.bit / 8) % kVec];
            byte = fault.value ? byte | mask : byte & static_cast<uint8_t>(~mask);
        }
        const uint32_t strobes = dropped ? 0 : wstrb;
        if (mObserver) {
            mObserver->wrote(mCycle, address, mBeat.data(), wstrb, strobes);
        }
        for (uint32_t b = 0; b < kVec; ++b) {
            mStrobes[b] = (strobes >> b) & 1 ? TLM_BYTE_ENABLED : TLM_BYTE_DISABLED;
        }
        mPayload.set_byte_enable_ptr(mStrobes.data());
        mPayload.set_byte_enable_length(kVec);
    }
    sc_core::sc_time delay = mPeriod * static_cast<double>(mCycle - mBatchStart);
    socket->b_transport(mPayload, delay);
    if (mPayload.get_response_status() != tlm::TLM_OK_RESPONSE) {
        // Outside the DRAM: reads return zeros, writes vanish (the NPU's window registers are
        // what keeps a job inside its memory).
        std::memset(mBeat.data(), 0, kVec);
        delay = mPeriod * static_cast<double>(mCycle - mBatchStart + mConfig.dramLatencyCycles);
    }
    const uint64_t done = mBatchStart + toCycles(delay, mPeriod);
    if (write) {
        mChannelFreeCycle = done;
    } else {
        mChannelFreeCycle = done - mConfig.dramLatencyCycles +
                            (kVec + mConfig.dramBytesPerCycle - 1) / mConfig.dramBytesPerCycle;
        ReadResponse& response = mResponses[client].emplace_back();
        response.dueCycle = done;
        std::memcpy(response.data.data(), mBeat.data(), kVec);
    }
}

// ---------------------------------------------------------------------------------------------
// Waveforms.

void NpuPlatform::startTrace() {
    const std::filesystem::path path(mConfig.trace.path);
    std::error_code ec;  // an unwritable folder shows as no dump (the CLI checks beforehand)
    if (path.has_parent_path()) std::filesystem::create_directories(path.parent_path(), ec);
    const std::string fstPath =
        mConfig.trace.format == TraceOptions::Format::kVcd ? path.string() + ".fst" : path.string();
    mTrace->mFst.open(fstPath.c_str());
    mTraceOpen = true;
    writeGtkwSave(mConfig.trace.path, kVec);
}

void NpuPlatform::stopTrace() {
    mTrace->mFst.close();
    mTraceOpen = false;
    mTraceDone = true;
    if (mConfig.trace.format == TraceOptions::Format::kVcd) {
        // Verilator writes one format per build; VCD comes from GTKWave's converter.
        const std::string fstPath = mConfig.trace.path + ".fst";
        if (runChild({"fst2vcd", "-f", fstPath, "-o", mConfig.trace.path},
                     mConfig.trace.path + ".log", kFst2VcdTimeoutSeconds)
                .ok()) {
            std::filesystem::remove(fstPath);
        } else {
            std::fprintf(stderr, "nncosim: fst2vcd failed (see %s.log); the dump stays in %s\n",
                         mConfig.trace.path.c_str(), fstPath.c_str());
        }
    }
}

void NpuPlatform::traceCycle(bool doorbell, bool irqRose, bool errorRose) {
    const TraceOptions& t = mConfig.trace;
    if (!mTraceOpen && !mTraceDone) {
        bool start = false;
        if (t.startEvent.empty()) {
            start = mCycle >= t.startCycle;
        } else {
            start = (t.startEvent == "doorbell" && doorbell) ||
                    (t.startEvent == "irq" && irqRose) || (t.startEvent == "error" && errorRose);
        }
        if (start) {
            mTraceStop = 0;
            if (t.stopCycle != 0) {
                mTraceStop =
                    t.startEvent.empty() ? t.stopCycle : mCycle + (t.stopCycle - t.startCycle);
            }
            startTrace();
        }
    }
    if (mTraceOpen) {
        mTrace->mFst.dump(mCycle * mConfig.clockPeriodPs - mConfig.clockPeriodPs / 2);
        if (mTraceStop != 0 && mCycle >= mTraceStop) {
            stopTrace();
        }
    }
}

void NpuPlatform::writeGtkwSave(const std::string& dumpPath, uint32_t vecBytes) {
    const uint32_t vecBits = vecBytes * 8;
    const auto bitsFor = [](uint32_t values) {
        uint32_t bits = 0;
        while ((1u << bits) < values) {
            ++bits;
        }
        return bits;
    };
    const uint32_t spadAddrBits = bitsFor(2 * npu::kSpadWords);
    const uint32_t fifoCountBits = bitsFor(npu::kWeightFifoWords + 1);
    const uint32_t lanes = npu::kMemLanes;
    const auto range = [](uint32_t bits) {
        return bits == 1 ? std::string() : "[" + std::to_string(bits - 1) + ":0]";
    };
    struct Group {
        const char* name;
        std::vector<std::string> signals;
    };
    const std::string top = "TOP.npu_top.";
    const std::vector<Group> groups = {
        {"Command processor",
         {"u_cmd.state_q" + range(3), "u_cmd.fetch_index_q" + range(32), "u_cmd.next_valid_q",
          "u_cmd.load_state_q" + range(2), "u_cmd.desc_done_q" + range(32),
          "u_cmd.error_code_q" + range(8), "u_cmd.flush_o", "irq_o"}},
        {"DMA",
         {"mem_req_valid_o" + range(lanes), "mem_req_ready_i" + range(lanes),
          "mem_req_id_o" + range(kMemClientIdBits * lanes), "mem_req_write_o" + range(kMemClients),
          "mem_req_addr_o" + range(32 * kMemClients),
          "mem_req_wstrb_o" + range(vecBytes * kMemClients), "mem_rsp_valid_i" + range(kMemClients),
          "mem_rsp_data_i" + range(vecBits * kMemClients), "u_dma_load.busy_o",
          "u_dma_load.spad_we_o", "u_dma_load.spad_waddr_o" + range(spadAddrBits),
          "u_weight_stream.count_o" + range(fifoCountBits), "u_dma_store.busy_o",
          "u_mem_arb.fault_o"}},
        {"Array edges",
         {"u_compute.seq_state_q" + range(2), "u_compute.u_feeder.state_q" + range(2),
          "u_compute.issue", "u_compute.u_weight_loader.state_q" + range(2),
          "u_compute.wload_valid", "u_compute.act" + range(vecBytes * 9),
          "u_compute.psum" + range(vecBytes * 32), "u_compute.acc_from_array",
          "u_compute.u_drain.state_q" + range(3)}},
        {"Requantization",
         {"u_compute.u_requant.in_valid_i", "u_compute.u_requant.in_ready_o",
          "u_compute.u_requant.out_valid_o", "u_compute.u_requant.out_ready_i",
          "u_compute.u_requant.data_o" + range(vecBits), "u_compute.chain_we_o",
          "u_compute.chain_waddr_o" + range(spadAddrBits),
          "u_compute.u_drain.chain_written_q" + range(64)}},  // per buffer
        {"Registers",
         {"csr_req_i", "csr_we_i", "csr_addr_i" + range(12), "csr_wdata_i" + range(32),
          "csr_rdata_o" + range(32), "u_csr.irq_status_q" + range(2)}},
    };
    std::ostringstream out;
    out << "[*] nncosim NPU waveform view (generated)\n";
    out << "[dumpfile] \"" << std::filesystem::path(dumpPath).filename().string() << "\"\n";
    for (const Group& group : groups) {
        out << "@800200\n-" << group.name << "\n";
        for (const std::string& signal : group.signals) {
            // Vectors in hex, single bits as bits.
            out << (signal.back() == ']' ? "@22\n" : "@28\n") << top << signal << "\n";
        }
        out << "@1000200\n-" << group.name << "\n";
    }
    // A missing view costs a convenience, not the dump: say so and go on.
    if (Status written = writeOutputFile(dumpPath + ".gtkw", out.str()); !written.ok())
        std::fprintf(stderr, "nncosim: %s\n", written.message.c_str());
}

}  // namespace nncosim::sim
