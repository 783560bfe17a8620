// Co-simulation of the RTL and the functional model behind one hardware-access interface:
//
// - lockstep: the RTL (the SystemC platform) and the functional model (FunctionalNpu) execute the
//   same jobs; each time the RTL retires a descriptor the model executes it too and the bytes it
//   stored are compared with the RTL's DRAM, and every byte the RTL wrote meanwhile must be one
//   the model wrote. The first difference is kept with what localizes it (descriptor, opcode,
//   tile, element, the RTL's cycles); from then on nothing is compared and later jobs run on the
//   model alone, which is fast.
// - fast-forward (JobPlan::Mode::kSplit): the descriptors of a job before the first one of a
//   chosen operation run on the model; the DRAM image (the job's window) is then copied into the
//   RTL, which runs the rest of the chain from there. Jobs can also run on the model alone.
//
// The driver sees one device: register writes and host memory writes go to both, reads come
// from the one running the job. No SystemC in this header.
#pragma once

#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "driver/HardwareAccess.h"
#include "driver/NpuRegisters.h"
#include "model/Status.h"
#include "sim/FunctionalNpu.h"
#include "sim/Platform.h"

namespace nncosim::sim {

/// Where the next jobs run (CosimPlatform::planJobs); it holds until the next plan.
struct JobPlan {
    enum class Mode {
        kRtl,    ///< on the RTL (in lockstep with the model when lockstep is on)
        kModel,  ///< on the functional model alone
        kSplit,  ///< on the model up to the first descriptor tagged fromTag, the rest on the RTL
    };
    Mode mode = Mode::kRtl;
    uint32_t fromTag = 0;  ///< kSplit: the operation (descriptor TAG) the RTL starts at
    uint32_t label = 0;    ///< the caller's name of the job (e.g. a partition), reported back
};

/// A descriptor of a compared job as the model saw it.
struct CosimDescriptor {
    uint32_t index = 0;
    npu::Opcode opcode = npu::Opcode::NOP;
    uint32_t flags = 0;
    uint32_t tag = 0;
    uint64_t writeBeats = 0;  ///< DRAM write beats of its stores
};

/// The first difference between the RTL and the model.
struct CosimDivergence {
    uint64_t job = 0;    ///< doorbells since the platform was created, from 0
    uint32_t label = 0;  ///< JobPlan::label of the job
    uint32_t descriptor = 0;
    npu::Descriptor desc;
    /// "output" (a byte the descriptor stored differs), "stray write" (the RTL wrote a byte the
    /// model's descriptor does not store), "missing retirement" or "job end" (the two ended the
    /// job differently; see note).
    std::string kind;
    uint32_t address = 0;  ///< the first differing byte
    uint8_t rtlValue = 0, modelValue = 0;
    WrittenRow row;          ///< the model's store row holding it
    uint32_t byteInRow = 0;  ///< its offset in the row (its channel is row.channel + byteInRow)
    /// Lowest OUT address of the job's descriptors with the same tag: where the operation's
    /// output starts, as far as this job shows.
    uint32_t operationBase = 0;
    uint64_t doorbellCycle = 0;
    uint64_t firstCycle = 0;         ///< RTL cycle its fetch started
    uint64_t retireCycle = 0;        ///< RTL cycle it retired
    uint64_t wrongWriteCycle = 0;    ///< RTL cycle of the first beat writing a wrong value there
    uint32_t wrongWriteAddress = 0;  ///< that beat's address
    std::string note;
    std::vector<CosimDescriptor> jobDescriptors;  ///< the job's descriptors up to this one
};

struct CosimStats {
    uint64_t jobs = 0;          ///< doorbells
    uint64_t comparedJobs = 0;  ///< jobs run in lockstep
    uint64_t descriptors = 0;   ///< descriptors compared
    uint64_t bytes = 0;         ///< bytes compared
    uint64_t modelJobs = 0;     ///< jobs run on the model alone
    uint64_t splitJobs = 0;     ///< jobs started on the model and finished on the RTL
    uint32_t lastSplitAt = 0;   ///< the descriptor the last split job's RTL part started at
};

class CosimPlatform : public driver::HardwareAccess {
  public:
    /// The process's SystemC platform (createSystemCPlatform(config)) with a functional model
    /// beside it; `lockstep` compares every retired descriptor.
    static Result<std::shared_ptr<CosimPlatform>> create(const PlatformConfig& config,
                                                         bool lockstep);
    ~CosimPlatform() override;

    uint32_t readRegister(uint32_t offset) override;
    void writeRegister(uint32_t offset, uint32_t value) override;
    Status writeMemory(uint64_t address, const void* data, size_t size) override;
    Status readMemory(uint64_t address, void* data, size_t size) override;
    uint64_t memorySize() const override;
    bool waitForInterrupt(uint64_t timeoutCycles) override;
    bool interruptPending() override;
    void advance(uint64_t cycles) override;
    uint64_t cycleCount() override;
    uint64_t clockPeriodPs() const override;
    driver::PerformanceCounters performanceCounters() override;

    /// Where the next jobs run.
    void planJobs(const JobPlan& plan);
    bool lockstep() const { return mLockstep; }
    std::optional<CosimDivergence> divergence() const;
    CosimStats stats() const;

  private:
    class Watcher;
    CosimPlatform(std::shared_ptr<driver::HardwareAccess> rtl, bool lockstep,
                  const PlatformConfig& config);
    void doorbell(uint32_t tag);
    void endLockstepJob();
    driver::HardwareAccess& active();

    const std::shared_ptr<driver::HardwareAccess> mRtl;
    const bool mLockstep;
    FunctionalNpu mModel;
    std::unique_ptr<Watcher> mWatcher;
    mutable std::mutex mMutex;
    JobPlan mPlan;
    bool mModelActive = false;  // the running or last job ran on the model alone
    bool mLockstepJob = false;  // the RTL job running is compared
    uint32_t mOffset = 0;       // the RTL part of a split job starts at this descriptor
    uint64_t mModelCycles = 0;  // device time that passed on the model alone
    // The model's counters of what ran on it alone (jobs and the model part of split jobs),
    // added to the RTL's so that differences across a job count the whole job.
    driver::PerformanceCounters mModelWork;
    driver::PerformanceCounters mModelStart;  // the model's counters when its current job began
    void takeModelWork();
    CosimStats mStats;
};

}  // namespace nncosim::sim
