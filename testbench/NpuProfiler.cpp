#include "testbench/NpuProfiler.h"

#include <algorithm>

#include "driver/NpuRegisters.h"

namespace nncosim {
namespace {

// Longest chain the profiler decodes (a larger one is profiled as a whole).
constexpr size_t kMaxDescriptors = size_t{1} << 20;

NpuCounters difference(const driver::PerformanceCounters& before,
                       const driver::PerformanceCounters& after, uint64_t cycles) {
    NpuCounters c;
    c.cycles = cycles;
    c.macs = after.macs - before.macs;
    c.dmaBytesRead = after.dmaBytesRead - before.dmaBytesRead;
    c.dmaBytesWritten = after.dmaBytesWritten - before.dmaBytesWritten;
    c.arrayActiveCycles = after.arrayActiveCycles - before.arrayActiveCycles;
    c.stallInputCycles = after.stallInputCycles - before.stallInputCycles;
    c.stallWeightCycles = after.stallWeightCycles - before.stallWeightCycles;
    c.stallOutputCycles = after.stallOutputCycles - before.stallOutputCycles;
    c.stallFetchCycles = after.stallFetchCycles - before.stallFetchCycles;
    return c;
}

}  // namespace

void NpuCounters::add(const NpuCounters& other) {
    cycles += other.cycles;
    macs += other.macs;
    dmaBytesRead += other.dmaBytesRead;
    dmaBytesWritten += other.dmaBytesWritten;
    arrayActiveCycles += other.arrayActiveCycles;
    stallInputCycles += other.stallInputCycles;
    stallWeightCycles += other.stallWeightCycles;
    stallOutputCycles += other.stallOutputCycles;
    stallFetchCycles += other.stallFetchCycles;
    scratchpadReads += other.scratchpadReads;
    scratchpadWrites += other.scratchpadWrites;
    floatMacs += other.floatMacs;
}

driver::EnergyCounters NpuCounters::energyCounters() const {
    driver::EnergyCounters e;
    e.cycles = cycles;
    e.macs = macs;
    e.floatMacs = floatMacs;
    e.dmaBytesRead = dmaBytesRead;
    e.dmaBytesWritten = dmaBytesWritten;
    e.scratchpadReads = scratchpadReads;
    e.scratchpadWrites = scratchpadWrites;
    return e;
}

driver::Energy NpuCounters::energy(uint64_t clockPeriodPs) const {
    return driver::estimateEnergy(energyCounters(), clockPeriodPs);
}

double NpuCounters::utilization() const {
    if (cycles == 0) return 0.0;
    return static_cast<double>(macs) /
           (static_cast<double>(cycles) * npu::kArrayRows * npu::kArrayCols);
}

double NpuCounters::dramUtilization(uint32_t bytesPerCycle) const {
    if (cycles == 0) return 0.0;
    return static_cast<double>(dmaBytesRead + dmaBytesWritten) /
           (static_cast<double>(cycles) * bytesPerCycle);
}

NpuProfiler::NpuProfiler(std::shared_ptr<driver::HardwareAccess> inner)
    : mInner(std::move(inner)) {}

void NpuProfiler::setSampleCycles(uint64_t cycles) {
    std::lock_guard<std::mutex> lock(mMutex);
    mSampleCycles = cycles;
}

std::optional<NpuJobProfile> NpuProfiler::takeJobs() {
    std::lock_guard<std::mutex> lock(mMutex);
    if (mState == JobState::kEnded) finishJob(true);
    return std::exchange(mFinished, std::nullopt);
}

uint32_t NpuProfiler::readRegister(uint32_t offset) {
    std::lock_guard<std::mutex> lock(mMutex);
    return mInner->readRegister(offset);
}

void NpuProfiler::writeRegister(uint32_t offset, uint32_t value) {
    std::lock_guard<std::mutex> lock(mMutex);
    // A soft reset or a counter clear loses the counters: take the job's figures first.
    if (offset == npu::reg::kControl && mState != JobState::kIdle)
        finishJob(mState == JobState::kEnded);
    if (offset == npu::reg::kDoorbell && mState != JobState::kRunning) {
        if (mState == JobState::kEnded) finishJob(true);
        startJob();
        mInner->writeRegister(offset, value);
        return;
    }
    mInner->writeRegister(offset, value);
    if (offset == npu::reg::kQueueBase) {
        mQueueBase = value;
        if (mState == JobState::kEnded) finishJob(true);
        // The counters do not move while the device is idle: reading them now keeps the
        // register reads out of the next job's cycles.
        mIdleCounters = mInner->performanceCounters();
    }
}

void NpuProfiler::startJob() {
    driver::PerformanceCounters start =
        mIdleCounters ? *mIdleCounters : mInner->performanceCounters();
    mIdleCounters.reset();
    mJob = {};
    mJob.startCycle = mInner->cycleCount();
    mStartCounters = start;
    mLastCounters = start;
    mLastCycle = mJob.startCycle;
    mTags.clear();
    mScratchpad.clear();
    // The chain is in DRAM already; reading it takes no device time.
    uint32_t words[npu::kDescriptorWords];
    bool chained = false;  // the previous descriptor has CHAIN_OUT
    uint32_t chainedTag = 0;
    for (uint64_t address = mQueueBase; mScratchpad.size() < kMaxDescriptors;
         address += sizeof(words)) {
        if (!mInner->readMemory(address, words, sizeof(words)).ok()) break;
        npu::DescriptorWords w;
        std::copy(std::begin(words), std::end(words), w.begin());
        const npu::Descriptor d = npu::Descriptor::decode(w);
        // A CHAIN_OUT descriptor counts as the one it feeds (they overlap on the array).
        if (chained) {
            if (chainedTag != d.tag) mJob.fusedInto[chainedTag] = d.tag;
            mScratchpad.back().tag = d.tag;
        }
        chained = (d.flags & static_cast<uint32_t>(npu::DescFlag::CHAIN_OUT)) != 0;
        chainedTag = d.tag;
        mScratchpad.push_back({d.tag, driver::scratchpadAccesses(d), driver::floatMacs(d)});
        if (d.flags & static_cast<uint32_t>(npu::DescFlag::LAST)) break;
    }
    if (mSampleCycles > 0) {
        for (const DescriptorCounts& c : mScratchpad) mTags.push_back(c.tag);
    } else {
        mJob.fusedInto.clear();  // documented as filled when sampling
    }
    mCurrentTag = mTags.empty() ? 0 : mTags.front();
    mState = JobState::kRunning;
}

void NpuProfiler::attribute(const driver::PerformanceCounters& now, uint64_t cycle) {
    if (!mTags.empty())
        mJob.byTag[mCurrentTag].add(difference(mLastCounters, now, cycle - mLastCycle));
    mLastCounters = now;
    mLastCycle = cycle;
}

void NpuProfiler::sample() {
    const uint32_t done = mInner->readRegister(npu::reg::kDescDone);
    const uint32_t tag = mTags[std::min<size_t>(done, mTags.size() - 1)];
    if (tag == mCurrentTag) return;
    attribute(mInner->performanceCounters(), mInner->cycleCount());
    mCurrentTag = tag;
}

void NpuProfiler::finishJob(bool completed) {
    const uint64_t end = completed ? mEndCycle : mInner->cycleCount();
    const driver::PerformanceCounters now = mInner->performanceCounters();
    attribute(now, end);
    mJob.total = difference(mStartCounters, now, end - mJob.startCycle);
    // Scratchpad accesses and float MACs of the descriptors retired (all of them when the job
    // completed).
    const size_t retired =
        completed ? mScratchpad.size()
                  : std::min<size_t>(mInner->readRegister(npu::reg::kDescDone), mScratchpad.size());
    for (size_t i = 0; i < retired; ++i) {
        const DescriptorCounts& c = mScratchpad[i];
        for (NpuCounters* counters : {&mJob.total, mTags.empty() ? nullptr : &mJob.byTag[c.tag]}) {
            if (!counters) continue;
            counters->scratchpadReads += c.accesses.reads;
            counters->scratchpadWrites += c.accesses.writes;
            counters->floatMacs += c.floatMacs;
        }
    }
    mJob.completed = completed;
    if (mFinished) {  // a later job of the same execution
        mFinished->total.add(mJob.total);
        mFinished->jobs += mJob.jobs;
        mFinished->completed = mFinished->completed && completed;
        mFinished->byTag.clear();
        mFinished->fusedInto.clear();
    } else {
        mFinished = std::move(mJob);
    }
    mJob = {};
    mState = JobState::kIdle;
}

Status NpuProfiler::writeMemory(uint64_t address, const void* data, size_t size) {
    std::lock_guard<std::mutex> lock(mMutex);
    return mInner->writeMemory(address, data, size);
}

Status NpuProfiler::readMemory(uint64_t address, void* data, size_t size) {
    std::lock_guard<std::mutex> lock(mMutex);
    return mInner->readMemory(address, data, size);
}

uint64_t NpuProfiler::memorySize() const {
    return mInner->memorySize();
}

bool NpuProfiler::waitForInterrupt(uint64_t timeoutCycles) {
    std::lock_guard<std::mutex> lock(mMutex);
    if (mState != JobState::kRunning) return mInner->waitForInterrupt(timeoutCycles);
    const uint64_t start = mInner->cycleCount();
    bool interrupted = false;
    if (mSampleCycles == 0 || mTags.empty()) {
        interrupted = mInner->waitForInterrupt(timeoutCycles);
    } else {
        for (uint64_t waited = 0; waited < timeoutCycles; waited = mInner->cycleCount() - start) {
            if ((interrupted =
                     mInner->waitForInterrupt(std::min(mSampleCycles, timeoutCycles - waited))))
                break;
            sample();
        }
    }
    if (interrupted) {
        mEndCycle = mInner->cycleCount();
        mState = JobState::kEnded;
    }
    return interrupted;
}

bool NpuProfiler::interruptPending() {
    std::lock_guard<std::mutex> lock(mMutex);
    return mInner->interruptPending();
}

void NpuProfiler::advance(uint64_t cycles) {
    std::lock_guard<std::mutex> lock(mMutex);
    mInner->advance(cycles);
}

uint64_t NpuProfiler::cycleCount() {
    std::lock_guard<std::mutex> lock(mMutex);
    return mInner->cycleCount();
}

uint64_t NpuProfiler::clockPeriodPs() const {
    return mInner->clockPeriodPs();
}

driver::PerformanceCounters NpuProfiler::performanceCounters() {
    std::lock_guard<std::mutex> lock(mMutex);
    return mInner->performanceCounters();
}

}  // namespace nncosim
