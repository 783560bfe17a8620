// Verilated headers before <systemc> (NpuPlatform.h pulls it in).
#include "sim/NpuPlatform.h"

#include "sim/Cosim.h"

#include <algorithm>
#include <cstring>

#include "sim/DramModel.h"

namespace nncosim::sim {
namespace {

constexpr uint32_t kBeat = npu::kDramBusBytes;
constexpr uint32_t kDescriptorBytes = npu::kDescriptorWords * 4;
// The longest chain whose descriptors are listed for a report.
constexpr size_t kMaxListed = size_t{1} << 20;

uint32_t flag(npu::DescFlag f) {
    return static_cast<uint32_t>(f);
}

/// Descriptor `index` of the chain at `queue` in `dram`, if it lies inside.
std::optional<npu::Descriptor> descriptorAt(const uint8_t* dram, uint64_t size, uint32_t queue,
                                            uint32_t index) {
    const uint64_t addr = uint64_t{queue} + uint64_t{index} * kDescriptorBytes;
    if (addr + kDescriptorBytes > size) return std::nullopt;
    npu::DescriptorWords words;
    std::memcpy(words.data(), dram + addr, kDescriptorBytes);
    return npu::Descriptor::decode(words);
}

}  // namespace

/// Follows the RTL from inside the simulation and steps the model with it.
class CosimPlatform::Watcher : public PlatformObserver {
  public:
    Watcher(FunctionalNpu& model, NpuPlatform& rtl) : mModel(model), mRtl(rtl) {}

    void startJob(uint64_t job, uint32_t label, uint32_t offset, uint32_t queue) {
        mActive = true;
        mJob = job;
        mLabel = label;
        mOffset = offset;
        mQueue = queue;
        mFetchCycles.clear();
        mBeats.clear();
        mListed.clear();
        mDoorbellCycle = mRtl.cycles();
    }
    void stop() { mActive = false; }
    bool active() const { return mActive; }
    const std::optional<CosimDivergence>& divergence() const { return mDivergence; }
    uint64_t descriptors() const { return mDescriptors; }
    uint64_t bytes() const { return mBytes; }

    /// The RTL ended the job (its interrupt): the model must end it the same way.
    void endJob(uint32_t completionAddr) {
        if (!mActive) return;
        mActive = false;
        if (mDivergence) return;
        const uint8_t* dram = mRtl.dram().data();
        uint32_t record[npu::kCompletionWords] = {};
        if (uint64_t{completionAddr} + sizeof(record) <= mRtl.dram().size())
            std::memcpy(record, dram + completionAddr, sizeof(record));
        const auto rtlCode = static_cast<npu::ErrorCode>(record[npu::completion::kStatusWord]);
        const uint32_t rtlRetired = record[npu::completion::kDescDoneWord] + mOffset;
        const bool running = mModel.jobRunning();
        const uint32_t next = mModel.nextDescriptor();
        mModel.finishJob();
        const auto job = mModel.lastJob();
        if (!job) return;
        if (job->error == rtlCode && (rtlCode != npu::ErrorCode::NONE || !running)) return;
        CosimDivergence d = base(running ? next : job->retired);
        d.kind = "job end";
        d.retireCycle = mRtl.cycles();
        d.note = std::string("the RTL ended the job with ") + npu::errorName(rtlCode) + " after " +
                 std::to_string(rtlRetired) + " descriptors, the model with " +
                 npu::errorName(job->error) + " (error descriptor " +
                 std::to_string(job->errorDesc) + ") after " + std::to_string(job->retired);
        mDivergence = std::move(d);
    }

    void doorbell(uint64_t cycle) override {
        if (mActive) mDoorbellCycle = cycle;
    }

    void fetchStarted(uint32_t index, uint64_t cycle) override {
        if (!mActive || index == 0) return;
        const size_t i = size_t{index} + mOffset;
        if (mFetchCycles.size() <= i) mFetchCycles.resize(i + 1, 0);
        mFetchCycles[i] = cycle;
    }

    void wrote(uint64_t cycle, uint32_t address, const uint8_t* data, uint32_t intended,
               uint32_t strobes) override {
        if (!mActive || mDivergence) return;
        Beat b;
        b.cycle = cycle;
        b.address = address;
        std::memcpy(b.data, data, kBeat);
        b.intended = intended;
        b.strobes = strobes;
        mBeats.push_back(b);
    }

    void retired(uint32_t retired, uint64_t cycle) override {
        if (!mActive || mDivergence) return;
        const uint32_t index = retired - 1 + mOffset;
        compare(index, cycle);
        mBeats.clear();
    }

  private:
    struct Beat {
        uint64_t cycle = 0;
        uint32_t address = 0;
        uint8_t data[kBeat];
        uint32_t intended = 0, strobes = 0;
    };

    CosimDivergence base(uint32_t index) {
        CosimDivergence d;
        d.job = mJob;
        d.label = mLabel;
        d.descriptor = index;
        d.doorbellCycle = mDoorbellCycle;
        d.firstCycle = index > mOffset && index < mFetchCycles.size() && mFetchCycles[index]
                           ? mFetchCycles[index]
                           : mDoorbellCycle;
        const uint8_t* dram = mModel.dram();
        if (auto desc = descriptorAt(dram, mModel.memorySize(), mQueue, index)) {
            d.desc = *desc;
            // Where the operation's output starts: the lowest OUT address of its descriptors.
            d.operationBase = desc->out.addr;
            for (uint32_t i = 0; i < kMaxListed; ++i) {
                auto other = descriptorAt(dram, mModel.memorySize(), mQueue, i);
                if (!other) break;
                if (other->tag == desc->tag && other->opcode == desc->opcode &&
                    !(other->flags & flag(npu::DescFlag::CHAIN_OUT)))
                    d.operationBase = std::min(d.operationBase, other->out.addr);
                if (other->flags & flag(npu::DescFlag::LAST)) break;
            }
        }
        d.jobDescriptors = mListed;
        return d;
    }

    void compare(uint32_t index, uint64_t cycle) {
        auto trace = mModel.step();
        if (!trace) {
            CosimDivergence d = base(index);
            d.kind = "missing retirement";
            d.retireCycle = cycle;
            d.note = "the RTL retired descriptor " + std::to_string(index) +
                     ", the model had ended the job";
            mDivergence = std::move(d);
            return;
        }
        if (trace->index != index || trace->error != npu::ErrorCode::NONE) {
            CosimDivergence d = base(index);
            d.kind = "job end";
            d.retireCycle = cycle;
            d.note = "the RTL retired descriptor " + std::to_string(index) + ", the model " +
                     (trace->error != npu::ErrorCode::NONE
                          ? std::string("stopped with ") + npu::errorName(trace->error) +
                                " at descriptor " + std::to_string(trace->errorDesc)
                          : "executed descriptor " + std::to_string(trace->index));
            mDivergence = std::move(d);
            return;
        }
        ++mDescriptors;
        // Listed before the comparison: a divergence lists its own descriptor last.
        mListed.push_back({index, trace->descriptor.opcode, trace->descriptor.flags,
                           trace->descriptor.tag, trace->dmaBytesWritten / kBeat});
        const uint8_t* rtl = mRtl.dram().data();
        const uint64_t rtlSize = mRtl.dram().size();
        const uint8_t* model = mModel.dram();
        std::vector<std::pair<uint64_t, uint64_t>> ranges;
        ranges.reserve(trace->writes.size());
        for (const WrittenRow& w : trace->writes) {
            const uint64_t end = uint64_t{w.addr} + w.size;
            if (end <= rtlSize && end <= mModel.memorySize()) ranges.push_back({w.addr, end});
        }
        std::sort(ranges.begin(), ranges.end());
        const auto inside = [&](uint64_t a) {
            auto it = std::upper_bound(ranges.begin(), ranges.end(), std::make_pair(a, UINT64_MAX));
            return it != ranges.begin() && a < std::prev(it)->second;
        };
        // The rows the model stored, in store order: the first byte that differs.
        for (const WrittenRow& w : trace->writes) {
            const uint64_t end = uint64_t{w.addr} + w.size;
            if (end > rtlSize || end > mModel.memorySize()) continue;
            mBytes += w.size;
            if (std::memcmp(rtl + w.addr, model + w.addr, w.size) == 0) continue;
            uint32_t b = 0;
            while (rtl[w.addr + b] == model[w.addr + b]) ++b;
            CosimDivergence d = base(index);
            d.kind = "output";
            d.address = w.addr + b;
            d.rtlValue = rtl[d.address];
            d.modelValue = model[d.address];
            d.row = w;
            d.byteInRow = b;
            d.retireCycle = cycle;
            wrongWrite(d, inside, model);
            mDivergence = std::move(d);
            return;
        }
        // Every byte the RTL wrote for this descriptor must be one the model stored.
        for (const Beat& beat : mBeats) {
            for (uint32_t l = 0; l < kBeat; ++l) {
                if (!((beat.strobes >> l) & 1)) continue;
                const uint64_t a = uint64_t{beat.address} + l;
                if (inside(a)) continue;
                CosimDivergence d = base(index);
                d.kind = "stray write";
                d.address = static_cast<uint32_t>(a);
                d.rtlValue = beat.data[l];
                d.modelValue = a < mModel.memorySize() ? model[a] : 0;
                d.retireCycle = cycle;
                d.wrongWriteCycle = beat.cycle;
                d.wrongWriteAddress = beat.address;
                d.note = "the RTL wrote a byte this descriptor does not store";
                mDivergence = std::move(d);
                return;
            }
        }
    }

    /// The first beat of the descriptor that wrote a wrong value (or was dropped) into what the
    /// model stored.
    template <typename Inside>
    void wrongWrite(CosimDivergence& d, const Inside& inside, const uint8_t* model) {
        for (const Beat& beat : mBeats) {
            for (uint32_t l = 0; l < kBeat; ++l) {
                const uint64_t a = uint64_t{beat.address} + l;
                if (!((beat.intended >> l) & 1) || !inside(a)) continue;
                const bool dropped = !((beat.strobes >> l) & 1);
                if (dropped || beat.data[l] != model[a]) {
                    d.wrongWriteCycle = beat.cycle;
                    d.wrongWriteAddress = beat.address;
                    if (dropped) d.note = "the RTL's write beat there never reached DRAM";
                    return;
                }
            }
        }
        d.note = "no write beat of this descriptor wrote the byte";
    }

    FunctionalNpu& mModel;
    NpuPlatform& mRtl;
    bool mActive = false;
    uint64_t mJob = 0;
    uint32_t mLabel = 0, mOffset = 0, mQueue = 0;
    uint64_t mDoorbellCycle = 0;
    std::vector<uint64_t> mFetchCycles;
    std::vector<Beat> mBeats;
    std::vector<CosimDescriptor> mListed;
    std::optional<CosimDivergence> mDivergence;
    uint64_t mDescriptors = 0, mBytes = 0;
};

Result<std::shared_ptr<CosimPlatform>> CosimPlatform::create(const PlatformConfig& config,
                                                             bool lockstep) {
    PlatformConfig rtlConfig = config;
    rtlConfig.npu = NpuImplementation::kRtl;
    auto rtl = createSystemCPlatform(rtlConfig);
    if (!rtl) return rtl.status();
    if (!systemCPlatformInstance())
        return fail(ErrorStatus::GENERAL_FAILURE, "co-simulation: no SystemC platform");
    return std::shared_ptr<CosimPlatform>(new CosimPlatform(*rtl, lockstep, config));
}

CosimPlatform::CosimPlatform(std::shared_ptr<driver::HardwareAccess> rtl, bool lockstep,
                             const PlatformConfig& config)
    : mRtl(std::move(rtl)),
      mLockstep(lockstep),
      mModel(FunctionalNpuConfig{config.dramBytes, config.clockPeriodPs}) {
    mModel.setRecordWrites(true);
    NpuPlatform& platform = *systemCPlatformInstance();
    mWatcher = std::make_unique<Watcher>(mModel, platform);
    platform.setObserver(mWatcher.get());
}

CosimPlatform::~CosimPlatform() {
    if (NpuPlatform* platform = systemCPlatformInstance()) platform->setObserver(nullptr);
}

driver::HardwareAccess& CosimPlatform::active() {
    return mModelActive ? static_cast<driver::HardwareAccess&>(mModel) : *mRtl;
}

uint32_t CosimPlatform::readRegister(uint32_t offset) {
    std::lock_guard<std::mutex> lock(mMutex);
    uint32_t value = active().readRegister(offset);
    // A split job's RTL part counts its descriptors from where it started.
    if (!mModelActive && (offset == npu::reg::kDescDone || offset == npu::reg::kErrorDesc))
        value += mOffset;
    return value;
}

void CosimPlatform::writeRegister(uint32_t offset, uint32_t value) {
    std::lock_guard<std::mutex> lock(mMutex);
    if (offset == npu::reg::kDoorbell) {
        doorbell(value);
        return;
    }
    mRtl->writeRegister(offset, value);
    mModel.writeRegister(offset, value);
    if (offset == npu::reg::kControl && (value & npu::field::kControlSoftReset)) {
        mWatcher->stop();
        mLockstepJob = false;
    }
    if (offset == npu::reg::kControl &&
        (value & (npu::field::kControlSoftReset | npu::field::kControlPerfClear))) {
        mModelWork = {};
        mModelStart = mModel.performanceCounters();
    }
}

namespace {

void addCounters(driver::PerformanceCounters& to, const driver::PerformanceCounters& after,
                 const driver::PerformanceCounters& before) {
    to.busyCycles += after.busyCycles - before.busyCycles;
    to.macs += after.macs - before.macs;
    to.dmaBytesRead += after.dmaBytesRead - before.dmaBytesRead;
    to.dmaBytesWritten += after.dmaBytesWritten - before.dmaBytesWritten;
    to.arrayActiveCycles += after.arrayActiveCycles - before.arrayActiveCycles;
}

}  // namespace

void CosimPlatform::takeModelWork() {
    const driver::PerformanceCounters now = mModel.performanceCounters();
    addCounters(mModelWork, now, mModelStart);
    mModelStart = now;
}

void CosimPlatform::doorbell(uint32_t tag) {
    const uint64_t job = mStats.jobs++;
    mModelStart = mModel.performanceCounters();
    JobPlan plan = mPlan;
    if (mWatcher->divergence()) plan.mode = JobPlan::Mode::kModel;  // stopped comparing
    mOffset = 0;
    mLockstepJob = false;
    const uint32_t queue = mModel.readRegister(npu::reg::kQueueBase);

    // kSplit: the descriptor the RTL starts at (a CHAIN_IN consumer starts with its producer).
    uint32_t cut = 0;
    if (plan.mode == JobPlan::Mode::kSplit) {
        bool found = false;
        for (uint32_t i = 0; i < kMaxListed; ++i) {
            auto d = descriptorAt(mModel.dram(), mModel.memorySize(), queue, i);
            if (!d) break;
            if (d->tag == plan.fromTag) {
                cut = i;
                found = true;
                if (cut > 0 && (d->flags & flag(npu::DescFlag::CHAIN_IN))) --cut;
                break;
            }
            if (d->flags & flag(npu::DescFlag::LAST)) break;
        }
        if (!found) plan.mode = JobPlan::Mode::kRtl;  // nothing of the operation here
    }

    if (plan.mode == JobPlan::Mode::kModel) {
        mModelActive = true;
        mModel.setStepping(false);
        mModel.writeRegister(npu::reg::kDoorbell, tag);
        ++mStats.modelJobs;
        return;
    }
    mModelActive = false;
    if (plan.mode == JobPlan::Mode::kSplit && cut > 0) {
        mModel.setStepping(true);
        mModel.writeRegister(npu::reg::kDoorbell, tag);
        // The model's part takes its estimated cycles of device time.
        for (uint32_t i = 0; i < cut && mModel.jobRunning(); ++i) {
            if (auto trace = mModel.step()) mModelCycles += trace->estimatedCycles;
        }
        if (!mModel.jobRunning()) {
            // The model ended the job (a fault) before the RTL's part: it is the model's job.
            mModelActive = true;
            ++mStats.modelJobs;
            return;
        }
        // State transfer: the DRAM image of the job's window.
        const uint64_t base = mModel.readRegister(npu::reg::kDmaWindowBase);
        const uint64_t limit =
            std::min<uint64_t>(mModel.readRegister(npu::reg::kDmaWindowLimit),
                               std::min(mModel.memorySize(), mRtl->memorySize()));
        if (limit > base) mRtl->writeMemory(base, mModel.dram() + base, limit - base);
        takeModelWork();
        if (!mLockstep) mModel.abandonJob();
        mOffset = cut;
        ++mStats.splitJobs;
        mStats.lastSplitAt = cut;
        mRtl->writeRegister(npu::reg::kQueueBase, queue + cut * kDescriptorBytes);
    } else if (mLockstep) {
        mModel.setStepping(true);
        mModel.writeRegister(npu::reg::kDoorbell, tag);
    }
    if (mLockstep) {
        mWatcher->startJob(job, plan.label, mOffset, queue);
        mLockstepJob = true;
        ++mStats.comparedJobs;
    }
    mRtl->writeRegister(npu::reg::kDoorbell, tag);
}

void CosimPlatform::endLockstepJob() {
    mLockstepJob = false;
    mWatcher->endJob(mModel.readRegister(npu::reg::kCompletionAddr));
}

Status CosimPlatform::writeMemory(uint64_t address, const void* data, size_t size) {
    std::lock_guard<std::mutex> lock(mMutex);
    NN_RETURN_IF_ERROR(mRtl->writeMemory(address, data, size));
    return mModel.writeMemory(address, data, size);
}

Status CosimPlatform::readMemory(uint64_t address, void* data, size_t size) {
    std::lock_guard<std::mutex> lock(mMutex);
    return active().readMemory(address, data, size);
}

uint64_t CosimPlatform::memorySize() const {
    return std::min(mRtl->memorySize(), mModel.memorySize());
}

bool CosimPlatform::waitForInterrupt(uint64_t timeoutCycles) {
    std::lock_guard<std::mutex> lock(mMutex);
    if (mModelActive) {
        const uint64_t before = mModel.cycleCount();
        const bool irq = mModel.waitForInterrupt(timeoutCycles);
        mModelCycles += mModel.cycleCount() - before;
        if (irq) takeModelWork();
        return irq;
    }
    const bool irq = mRtl->waitForInterrupt(timeoutCycles);
    if (irq && mLockstepJob) endLockstepJob();
    return irq;
}

bool CosimPlatform::interruptPending() {
    std::lock_guard<std::mutex> lock(mMutex);
    return active().interruptPending();
}

void CosimPlatform::advance(uint64_t cycles) {
    std::lock_guard<std::mutex> lock(mMutex);
    if (mModelActive) {
        mModel.advance(cycles);
        mModelCycles += cycles;
        return;
    }
    mRtl->advance(cycles);
}

uint64_t CosimPlatform::cycleCount() {
    std::lock_guard<std::mutex> lock(mMutex);
    return mRtl->cycleCount() + mModelCycles;
}

uint64_t CosimPlatform::clockPeriodPs() const {
    return mRtl->clockPeriodPs();
}

driver::PerformanceCounters CosimPlatform::performanceCounters() {
    std::lock_guard<std::mutex> lock(mMutex);
    // The RTL's counters plus what ran on the model alone: a job's difference is its own work
    // wherever it ran (in lockstep the model's copy of the RTL's work is not counted).
    driver::PerformanceCounters c = mRtl->performanceCounters();
    driver::PerformanceCounters zero;
    addCounters(c, mModelWork, zero);
    if (mModelActive) addCounters(c, mModel.performanceCounters(), mModelStart);
    return c;
}

void CosimPlatform::planJobs(const JobPlan& plan) {
    std::lock_guard<std::mutex> lock(mMutex);
    mPlan = plan;
}

std::optional<CosimDivergence> CosimPlatform::divergence() const {
    std::lock_guard<std::mutex> lock(mMutex);
    return mWatcher->divergence();
}

CosimStats CosimPlatform::stats() const {
    std::lock_guard<std::mutex> lock(mMutex);
    CosimStats s = mStats;
    s.descriptors = mWatcher->descriptors();
    s.bytes = mWatcher->bytes();
    return s;
}

}  // namespace nncosim::sim
