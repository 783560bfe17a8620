// The SystemC platform: the Verilated NPU (rtl/npu_top.sv), its clock, its register bus, its
// interrupt line and a TLM-2.0 initiator port to the DRAM model.
//
// The platform owns the Verilated model (built with --cc) and one SC_THREAD clocks it: cycles
// run in plain C++ and SystemC time advances once per batch, since nothing outside the platform
// reacts to single cycles. Memory beats go to the DRAM target through b_transport with the
// cycle's offset in the batch as the annotated delay (temporal decoupling); read data returns
// when the target's annotated completion time is reached.
//
// Software does not use this class directly: it goes through driver::HardwareAccess
// (createSystemCPlatform), which serializes calls and runs the simulation on demand.
#pragma once

// Verilated headers before <systemc>.
#include "verilated.h"

#include <array>
#include <cstdint>
#include <deque>
#include <memory>
#include <string>
#include <vector>

#include <tlm_utils/simple_initiator_socket.h>
#include <systemc>
#include <tlm>

#include "driver/NpuRegisters.h"
#include "sim/Platform.h"
#include "sim/VerilatedPorts.h"

class Vnpu_top;

namespace nncosim::sim {

class DramModel;
class NpuTrace;

/// What lockstep co-simulation (sim/Cosim.h) watches, called from inside the simulation: the
/// callbacks must not call back into the platform.
class PlatformObserver {
  public:
    virtual ~PlatformObserver() = default;
    /// A doorbell was written in this cycle.
    virtual void doorbell(uint64_t cycle) = 0;
    /// The command processor started fetching descriptor `index` (of the running job).
    virtual void fetchStarted(uint32_t index, uint64_t cycle) = 0;
    /// DESC_DONE became `retired`: descriptor retired - 1 retired in this cycle.
    virtual void retired(uint32_t retired, uint64_t cycle) = 0;
    /// A DRAM write beat: the data as written (after any injected fault), the byte strobes the
    /// NPU drove and the ones that reached the DRAM (none for a dropped beat).
    virtual void wrote(uint64_t cycle, uint32_t address, const uint8_t* data,
                       uint32_t intendedStrobes, uint32_t strobes) = 0;
};

class NpuPlatform : public sc_core::sc_module {
  public:
    SC_HAS_PROCESS(NpuPlatform);

    tlm_utils::simple_initiator_socket<NpuPlatform> socket;

    NpuPlatform(const sc_core::sc_module_name& name, const PlatformConfig& config);
    ~NpuPlatform() override;

    const PlatformConfig& config() const { return mConfig; }
    DramModel& dram() { return *mDram; }

    // The calls below run the simulation (sc_start) and must come from outside it.

    /// Holds the NPU in reset for a few cycles and drops in-flight memory traffic.
    void hardReset();
    /// One register access; takes one cycle.
    uint32_t csrAccess(bool write, uint32_t offset, uint32_t value);
    /// Runs `cycles` cycles, or fewer when `stopOnIrq` and the interrupt is high.
    void run(uint64_t cycles, bool stopOnIrq);

    /// Closes an open waveform dump (the platform lives until the process ends).
    void finishTrace();

    /// Injects `fault` from now on instead of the configured one (a kind the RTL has:
    /// faultKindExists).
    void setFault(const FaultOptions& fault);

    /// Watches fetches, retirements and write beats (nullptr: none). Costs nothing when unset.
    void setObserver(PlatformObserver* observer) { mObserver = observer; }

    bool irq() const { return mIrq; }
    uint64_t cycles() const { return mCycle; }

    /// Writes the dump's GTKWave save file (signals grouped by unit) next to `dumpPath`.
    static void writeGtkwSave(const std::string& dumpPath, uint32_t vecBytes);

  private:
    struct ReadResponse {
        uint64_t dueCycle;
        std::array<uint8_t, npu::kDramBusBytes> data;  // no allocation per beat
    };
    struct CsrOp {
        bool pending = false;
        bool write = false;
        uint32_t offset = 0;
        uint32_t value = 0;
        uint32_t result = 0;
    };

    void clockThread();
    void runCycle();
    bool hasWork() const;
    void issueMemoryRequest(uint32_t lane);
    void startTrace();
    void stopTrace();
    void traceCycle(bool doorbell, bool irqRose, bool errorRose);

    static constexpr uint64_t kBatchCycles = 4096;

    PlatformConfig mConfig;
    sc_core::sc_time mPeriod;
    std::unique_ptr<DramModel> mDram;
    std::unique_ptr<VerilatedContext> mContext;
    std::unique_ptr<Vnpu_top> mModel;
    std::unique_ptr<NpuTrace> mTrace;
    bool mTraceOpen = false;
    bool mTraceDone = false;
    uint64_t mTraceStop = 0;  // 0: no end

    sc_core::sc_event mWork;
    uint64_t mCycle = 0;
    uint64_t mBatchStart = 0;  // cycle at the current sc_time_stamp()
    uint64_t mRunUntil = 0;
    bool mStopOnIrq = false;
    bool mIrq = false;
    bool mError = false;
    bool mInReset = false;

    PlatformObserver* mObserver = nullptr;
    uint32_t mSeenFetchIndex = 0;
    uint32_t mSeenDescDone = 0;

    CsrOp mCsr;
    uint32_t mLanes = 1;  // request lanes the DRAM serves a cycle (bytes per cycle / beat)
    std::array<std::deque<ReadResponse>, kMemClients> mResponses;  // per client, in order
    uint64_t mChannelFreeCycle = 0;
    // Fault injection (PlatformConfig::fault).
    uint64_t mWriteBeatsInJob = 0;
    uint32_t mCompletionAddr = 0;
    tlm::tlm_generic_payload mPayload;
    std::vector<uint8_t> mBeat;
    std::vector<uint8_t> mStrobes;
};

/// The process's SystemC platform once createSystemCPlatform has built it, else nullptr.
NpuPlatform* systemCPlatformInstance();

/// NpuPlatform::setFault on `platform` when createSystemCPlatform made it; false otherwise.
bool setSystemCFault(driver::HardwareAccess& platform, const FaultOptions& fault);

}  // namespace nncosim::sim
