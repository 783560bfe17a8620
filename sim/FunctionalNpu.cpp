// The functional model of the NPU as a device: its registers, doorbell, descriptor fetch and
// decode (driver/Descriptor.h), jobs, interrupt and counters; each descriptor's datapath is
// FunctionalExecutor.cpp's.
#include "sim/FunctionalNpu.h"

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <optional>
#include <thread>

#include "driver/CostModel.h"
#include "sim/FunctionalDma.h"

namespace nncosim::sim {
namespace {

using namespace funcsim;

void* allocateDram(uint64_t bytes) {
    // Zeroed lazily by the OS: a 256 MB DRAM costs only the pages jobs touch.
    void* p = std::calloc(static_cast<size_t>(bytes), 1);
    if (p == nullptr) throw std::bad_alloc();
    return p;
}

}  // namespace

struct FunctionalNpu::Event {
    uint64_t cycle = 0;
    bool end = false;
    Counts counts;
};

struct FunctionalNpu::Job {
    FunctionalJob info;
    DmaPort port{};
    uint32_t next = 0;      // index of the next descriptor to execute
    bool haveNext = false;  // descriptor `next` is fetched and validated
    Descriptor nextDesc;
    npu::ChainContext chain;         // of the last validated descriptor
    std::vector<uint8_t> chainData;  // a CHAIN_OUT result: pixels x words-per-pixel words
    bool hanging = false;
    uint64_t elapsed = 0;   // estimated cycles from the doorbell to the last retirement
    FaultOptions injected;  // the fault injected (FunctionalNpu::setFault)
    DmaPort dataPort{};     // the port of loads, streams and stores (a stuck address bit acts here)
    uint64_t writeBeats = 0;  // data write beats so far (kDropWriteBeat)

    /// Fetches and validates descriptor `index` (the RTL fetches one ahead).
    bool fetch(uint32_t index, Counts* counts, Fault* fault) {
        const uint32_t addr = info.queueBase + index * kDescriptorBytes;
        for (uint32_t b = 0; b < kDescriptorBytes / kBeat; ++b) {
            const uint32_t beat = addr + b * kBeat;
            if (!port.inWindow(beat)) {
                *fault = {ErrorCode::DMA_WINDOW, index, beat};
                return false;
            }
            counts->read += kBeat;
        }
        npu::DescriptorWords words;
        port.read(addr, kDescriptorBytes, reinterpret_cast<uint8_t*>(words.data()));
        if (injected.kind == FaultOptions::Kind::kDescriptorBitFlip && index == injected.beat) {
            const uint32_t bit = injected.bit % (32 * npu::kDescriptorWords);
            words[bit / 32] ^= 1u << (bit % 32);
        }
        nextDesc = Descriptor::decode(words);
        const ErrorCode code = npu::descriptorError(nextDesc, chain);
        if (code != ErrorCode::NONE) {
            *fault = {code, index, addr};
            return false;
        }
        chain = npu::ChainContext::after(nextDesc);
        haveNext = true;
        next = index;
        return true;
    }
};

// ---------------------------------------------------------------------------------------------
// The device.

FunctionalNpu::FunctionalNpu(const FunctionalNpuConfig& config)
    : mDramBytes(config.dramBytes),
      mClockPeriodPs(config.clockPeriodPs),
      mDram(static_cast<uint8_t*>(allocateDram(config.dramBytes)), &std::free) {}

FunctionalNpu::~FunctionalNpu() = default;

bool FunctionalNpu::irqLine() const {
    return (mIrqStatus & mIrqEnable) != 0;
}

uint32_t FunctionalNpu::readRegister(uint32_t offset) {
    std::lock_guard<std::mutex> lock(mMutex);
    syncTo(mCycle);
    const uint32_t value = readRegisterLocked(offset);
    syncTo(++mCycle);
    return value;
}

uint32_t FunctionalNpu::readRegisterLocked(uint32_t offset) {
    offset &= (1u << npu::kCsrAddrBits) - 1;
    if (offset >= npu::reg::kPerfBusyLo && offset < npu::reg::kPerfBusyLo + 8 * kCounters) {
        const uint32_t k = (offset - npu::reg::kPerfBusyLo) / 8;
        uint64_t value = mPerf[k];
        if (k == 0 && mBusy) value += mCycle - mBusySince;
        if ((offset - npu::reg::kPerfBusyLo) % 8 != 0) return mPerfHigh[k];
        mPerfHigh[k] = static_cast<uint32_t>(value >> 32);
        return static_cast<uint32_t>(value);
    }
    switch (offset) {
        case npu::reg::kId:
            return npu::reset::kId;
        case npu::reg::kVersion:
            return npu::reset::kVersion;
        case npu::reg::kConfigArray:
            return npu::reset::kConfigArray;
        case npu::reg::kConfigSpad:
            return npu::reset::kConfigSpad;
        case npu::reg::kConfigAcc:
            return npu::reset::kConfigAcc;
        case npu::reg::kStatus:
            return (mBusy ? npu::field::kStatusBusy : 0) |
                   (mHalted || mErrorCode != 0 ? npu::field::kStatusError : 0);
        case npu::reg::kQueueBase:
            return mQueueBase;
        case npu::reg::kCompletionAddr:
            return mCompletionAddr;
        case npu::reg::kJobTag:
            return mJobTag;
        case npu::reg::kDescDone:
            return mDescDone;
        case npu::reg::kErrorCode:
            return mErrorCode & npu::field::kErrorCodeCode;
        case npu::reg::kErrorDesc:
            return mErrorDesc;
        case npu::reg::kErrorAddr:
            return mErrorAddr;
        case npu::reg::kIrqStatus:
            return mIrqStatus;
        case npu::reg::kIrqEnable:
            return mIrqEnable;
        case npu::reg::kDmaWindowBase:
            return mWindowBase;
        case npu::reg::kDmaWindowLimit:
            return mWindowLimit;
        case npu::reg::kWatchdogLimit:
            return mWatchdogLimit;
        default:
            return 0;
    }
}

void FunctionalNpu::writeRegister(uint32_t offset, uint32_t value) {
    std::lock_guard<std::mutex> lock(mMutex);
    syncTo(mCycle);
    constexpr uint32_t kIrqMask = npu::field::kIrqStatusDone | npu::field::kIrqStatusError;
    switch (offset & ((1u << npu::kCsrAddrBits) - 1)) {
        case npu::reg::kQueueBase:
            mQueueBase = value;
            break;
        case npu::reg::kCompletionAddr:
            mCompletionAddr = value;
            break;
        case npu::reg::kDmaWindowBase:
            mWindowBase = value & npu::field::kDmaWindowBaseAddr;
            break;
        case npu::reg::kDmaWindowLimit:
            mWindowLimit = value & npu::field::kDmaWindowLimitAddr;
            break;
        case npu::reg::kWatchdogLimit:
            mWatchdogLimit = value;
            break;
        case npu::reg::kIrqEnable:
            mIrqEnable = value & kIrqMask;
            break;
        case npu::reg::kIrqStatus:
            mIrqStatus &= ~(value & kIrqMask);
            break;
        case npu::reg::kDoorbell:
            doorbell(value);
            break;
        case npu::reg::kControl:
            if (value & npu::field::kControlSoftReset) {
                softReset();
            } else if (value & npu::field::kControlPerfClear) {
                std::fill(std::begin(mPerf), std::end(mPerf), 0);
                mBusySince = mCycle;
            }
            break;
        default:
            break;
    }
    syncTo(++mCycle);
}

void FunctionalNpu::softReset() {
    // Everything in flight is dropped at once (the RTL waits for in-flight reads first).
    mJob.reset();
    mEvents.clear();
    mNextEvent = 0;
    mBusy = mHalted = false;
    mErrorCode = mErrorDesc = mErrorAddr = 0;
    mDescDone = 0;
    mIrqStatus = 0;
    std::fill(std::begin(mPerf), std::end(mPerf), 0);
    mBusySince = mCycle;
    if (mLastJob && !mLastJob->ended) mLastJob->ended = true;
}

void FunctionalNpu::doorbell(uint32_t tag) {
    if (mBusy || mHalted || mErrorCode != 0) return;  // ignored unless idle
    ++mJobCount;
    mJobTag = tag;
    mDescDone = 0;
    FunctionalJob info;
    info.tag = tag;
    info.queueBase = mQueueBase;
    info.completionAddr = mCompletionAddr;
    info.windowBase = mWindowBase;
    info.windowLimit = mWindowLimit;
    info.doorbellCycle = mCycle;
    if (mQueueBase % kBeat != 0 || mCompletionAddr % kBeat != 0) {
        // No record: its address is the bad one.
        info.error = ErrorCode::BAD_QUEUE;
        info.errorAddr = mQueueBase;
        info.ended = true;
        info.endCycle = mCycle;
        mLastJob = info;
        mErrorCode = static_cast<uint32_t>(ErrorCode::BAD_QUEUE);
        mErrorDesc = 0;
        mErrorAddr = mQueueBase;
        mHalted = true;
        mIrqStatus |= npu::field::kIrqStatusError;
        return;
    }
    mJob = std::make_unique<Job>();
    mJob->info = info;
    mJob->port = {mDram.get(), mDramBytes, mWindowBase, mWindowLimit};
    mJob->injected = mFault;
    mJob->dataPort = mJob->port;
    if (mFault.kind == FaultOptions::Kind::kStuckDmaAddressBit) {
        mJob->dataPort.stuckMask = 1u << (mFault.bit % 32);
        mJob->dataPort.stuckValue = mFault.value ? mJob->dataPort.stuckMask : 0;
    }
    mJob->hanging = std::exchange(mHangNext, false) || mFault.kind == FaultOptions::Kind::kStall;
    mLastJob = info;
    mBusy = true;
    mBusySince = mCycle;
    mEvents.clear();
    mNextEvent = 0;
    // syncTo() executes each descriptor when device time reaches its start; a hanging job only
    // ends, when its watchdog fires.
    if (!mStepping && mJob->hanging) {
        FunctionalJob& hung = mJob->info;
        hung.error = ErrorCode::WATCHDOG;
        hung.endCycle = hung.doorbellCycle + watchdogCycles();
        mEvents.push_back({hung.endCycle, true, {}});
    }
}

uint64_t FunctionalNpu::watchdogCycles() const {
    return mWatchdogLimit ? mWatchdogLimit : uint64_t{1} << 32;
}

void FunctionalNpu::runJobToEnd() {
    while (mJob && !mJob->info.ended) stepLocked();
}

DescriptorTrace FunctionalNpu::stepLocked() {
    Job& job = *mJob;
    DescriptorTrace trace;
    Counts counts;
    Fault fault;
    const uint64_t half = driver::kJobOverheadCycles / 2;
    // Ends the job; `tail` is what the job did since the last retirement.
    auto end = [&](const Fault& f, const Counts& tail) {
        job.info.error = f.code;
        job.info.errorDesc = f.desc;
        job.info.errorAddr = f.addr;
        job.info.ended = true;
        job.info.endCycle = job.info.doorbellCycle + half + job.elapsed + half;
        trace.error = f.code;
        trace.errorDesc = f.desc;
        trace.errorAddr = f.addr;
        if (mStepping) {
            mPerf[1] += tail.macs;
            mPerf[2] += tail.read;
            mPerf[3] += tail.written;
            mPerf[8] += tail.active;
            applyEndOfJob();
        } else {
            mEvents.push_back({job.info.endCycle, true, tail});
        }
    };
    const uint32_t index = job.next;
    trace.index = index;
    trace.address = job.info.queueBase + index * kDescriptorBytes;
    if (!job.haveNext && !job.fetch(index, &counts, &fault)) {
        trace.dmaBytesRead = counts.read;
        end(fault, counts);
        return trace;
    }
    const Descriptor d = job.nextDesc;
    job.haveNext = false;
    trace.descriptor = d;
    trace.estimatedCycles = driver::estimateDescriptorCycles(d);
    if (const uint64_t limit = watchdogCycles(); trace.estimatedCycles >= limit) {
        // The RTL's watchdog ends a descriptor that retires nothing for WATCHDOG_LIMIT cycles;
        // executing it here would only cost wall time (a corrupt window can take hours).
        job.elapsed += limit;
        end(Fault{ErrorCode::WATCHDOG, index, 0}, counts);
        if (mObserver) mObserver(trace, mDram.get());
        return trace;
    }
    std::vector<uint8_t> chainOut;
    const bool last = d.flags & flag(npu::DescFlag::LAST);
    // The RTL fetches and validates the next descriptor while this one loads.
    Counts fetchCounts;
    const bool ok = executeDescriptor(
        job.dataPort, d, index, mRecordWrites, &trace, &counts, job.injected, &job.writeBeats,
        &job.chainData, [&](Fault* f) { return last || job.fetch(index + 1, &fetchCounts, f); },
        &chainOut, &fault);
    counts.read += fetchCounts.read;
    trace.macs = counts.macs;
    trace.dmaBytesRead = counts.read;
    trace.dmaBytesWritten = counts.written;
    trace.arrayActiveCycles = counts.active;
    if (!ok) {
        job.next = fault.desc;
        end(fault, counts);
        if (mObserver) mObserver(trace, mDram.get());
        return trace;
    }
    job.chainData = std::move(chainOut);
    job.elapsed += trace.estimatedCycles;
    ++job.info.retired;
    job.next = index + 1;
    if (mStepping) {
        ++mDescDone;
        mPerf[1] += counts.macs;
        mPerf[2] += counts.read;
        mPerf[3] += counts.written;
        mPerf[8] += counts.active;
    } else {
        mEvents.push_back({job.info.doorbellCycle + half + job.elapsed, false, counts});
    }
    if (mObserver) mObserver(trace, mDram.get());
    if (last) end(Fault{}, Counts{});
    return trace;
}

void FunctionalNpu::applyEndOfJob() {
    Job& job = *mJob;
    const FunctionalJob& info = job.info;
    const uint32_t record[npu::kCompletionWords] = {
        info.tag, static_cast<uint32_t>(info.error), info.retired,
        static_cast<uint32_t>(info.endCycle - info.doorbellCycle)};
    // A record beat outside the window is skipped, not a second fault.
    const auto* bytes = reinterpret_cast<const uint8_t*>(record);
    for (uint32_t b = 0; b * kBeat < kRecordBytes; ++b) {
        const uint32_t beat = info.completionAddr + b * kBeat;
        if (!job.port.inWindow(beat)) break;
        job.port.write(beat, std::min(kBeat, kRecordBytes - b * kBeat), bytes + b * kBeat);
        mPerf[3] += kBeat;
    }
    mDescDone = info.retired;
    if (mBusy) mPerf[0] += mCycle - mBusySince;
    mBusy = false;
    if (info.error == ErrorCode::NONE) {
        mIrqStatus |= npu::field::kIrqStatusDone;
    } else {
        mErrorCode = static_cast<uint32_t>(info.error);
        mErrorDesc = info.errorDesc;
        mErrorAddr = info.errorAddr;
        mHalted = true;
        mIrqStatus |= npu::field::kIrqStatusError;
    }
    mLastJob = info;
    mJob.reset();
    mEvents.clear();
    mNextEvent = 0;
}

void FunctionalNpu::syncTo(uint64_t cycle) {
    while (mJob) {
        if (mNextEvent == mEvents.size()) {
            // Execute the next descriptor once time reaches its start, so a long job costs wall
            // time only as device time passes and a deadline or soft reset can stop it between
            // descriptors.
            const Job& job = *mJob;
            const uint64_t start =
                job.info.doorbellCycle + driver::kJobOverheadCycles / 2 + job.elapsed;
            if (mStepping || job.info.ended || start > cycle) return;
            stepLocked();
            continue;
        }
        if (mEvents[mNextEvent].cycle > cycle) return;
        const Event& e = mEvents[mNextEvent++];
        mPerf[1] += e.counts.macs;
        mPerf[2] += e.counts.read;
        mPerf[3] += e.counts.written;
        mPerf[8] += e.counts.active;
        if (!e.end) {
            ++mDescDone;
            continue;
        }
        // The interrupt rises at the event's cycle: account busy time up to it.
        const uint64_t now = mCycle;
        mCycle = e.cycle;
        applyEndOfJob();
        mCycle = now;
    }
}

Status FunctionalNpu::writeMemory(uint64_t address, const void* data, size_t size) {
    std::lock_guard<std::mutex> lock(mMutex);
    if (address > mDramBytes || size > mDramBytes - address)
        return invalidArgument("device memory access [", address, ", ", address + size,
                               ") outside the DRAM of ", mDramBytes, " bytes");
    if (size) std::memcpy(mDram.get() + address, data, size);
    return okStatus();
}

Status FunctionalNpu::readMemory(uint64_t address, void* data, size_t size) {
    std::lock_guard<std::mutex> lock(mMutex);
    if (address > mDramBytes || size > mDramBytes - address)
        return invalidArgument("device memory access [", address, ", ", address + size,
                               ") outside the DRAM of ", mDramBytes, " bytes");
    if (size) std::memcpy(data, mDram.get() + address, size);
    return okStatus();
}

bool FunctionalNpu::waitForInterrupt(uint64_t timeoutCycles) {
    bool hanging = false;
    {
        std::lock_guard<std::mutex> lock(mMutex);
        syncTo(mCycle);
        if (irqLine()) return true;
        const uint64_t deadline = mCycle + timeoutCycles;
        hanging = mJob && mJob->hanging;
        syncTo(deadline);
        // Only a job's end raises the interrupt: time stops there.
        if (irqLine()) {
            mCycle = std::max(mCycle, mLastJob->endCycle);
            return true;
        }
        mCycle = deadline;
    }
    // Simulating a hanging job's cycles takes wall time: deadlines can pass meanwhile.
    if (hanging) std::this_thread::sleep_for(std::chrono::milliseconds(3));
    return false;
}

bool FunctionalNpu::interruptPending() {
    std::lock_guard<std::mutex> lock(mMutex);
    syncTo(mCycle);
    return irqLine();
}

void FunctionalNpu::advance(uint64_t cycles) {
    std::lock_guard<std::mutex> lock(mMutex);
    mCycle += cycles;
    syncTo(mCycle);
}

uint64_t FunctionalNpu::cycleCount() {
    std::lock_guard<std::mutex> lock(mMutex);
    return mCycle;
}

driver::PerformanceCounters FunctionalNpu::performanceCounters() {
    std::lock_guard<std::mutex> lock(mMutex);
    syncTo(mCycle);
    driver::PerformanceCounters c;
    c.busyCycles = mPerf[0] + (mBusy ? mCycle - mBusySince : 0);
    c.macs = mPerf[1];
    c.dmaBytesRead = mPerf[2];
    c.dmaBytesWritten = mPerf[3];
    c.arrayActiveCycles = mPerf[8];
    // The platform reads the nine counters as 18 register accesses.
    mCycle += 2 * kCounters;
    syncTo(mCycle);
    return c;
}

uint64_t FunctionalNpu::jobCount() const {
    std::lock_guard<std::mutex> lock(mMutex);
    return mJobCount;
}

std::optional<FunctionalJob> FunctionalNpu::lastJob() const {
    std::lock_guard<std::mutex> lock(mMutex);
    return mLastJob;
}

void FunctionalNpu::setDescriptorObserver(DescriptorObserver observer) {
    std::lock_guard<std::mutex> lock(mMutex);
    mObserver = std::move(observer);
}

void FunctionalNpu::setRecordWrites(bool on) {
    std::lock_guard<std::mutex> lock(mMutex);
    mRecordWrites = on;
}

void FunctionalNpu::hangNextJob() {
    std::lock_guard<std::mutex> lock(mMutex);
    mHangNext = true;
}

void FunctionalNpu::setFault(const FaultOptions& fault) {
    std::lock_guard<std::mutex> lock(mMutex);
    mFault = fault;
}

void FunctionalNpu::setStepping(bool on) {
    std::lock_guard<std::mutex> lock(mMutex);
    mStepping = on;
}

bool FunctionalNpu::jobRunning() const {
    std::lock_guard<std::mutex> lock(mMutex);
    return mJob != nullptr;
}

std::optional<DescriptorTrace> FunctionalNpu::step() {
    std::lock_guard<std::mutex> lock(mMutex);
    if (!mJob || mJob->info.ended) return std::nullopt;
    return stepLocked();
}

void FunctionalNpu::finishJob() {
    std::lock_guard<std::mutex> lock(mMutex);
    if (!mJob) return;
    const bool stepping = mStepping;
    mStepping = true;  // apply everything now
    runJobToEnd();
    mStepping = stepping;
}

void FunctionalNpu::abandonJob() {
    std::lock_guard<std::mutex> lock(mMutex);
    if (!mJob) return;
    mJob.reset();
    mEvents.clear();
    mNextEvent = 0;
    mBusy = false;
    mDescDone = 0;
}

uint32_t FunctionalNpu::nextDescriptor() const {
    std::lock_guard<std::mutex> lock(mMutex);
    return mJob ? mJob->next : 0;
}

}  // namespace nncosim::sim
