// driver::HardwareAccess on the SystemC platform, and the factory that elaborates the platform
// once.
#include "sim/NpuPlatform.h"

#include <cstdlib>
#include <mutex>

#include "sim/DramModel.h"

namespace nncosim::sim {
namespace {

class SystemCAccess : public driver::HardwareAccess {
  public:
    explicit SystemCAccess(NpuPlatform& platform) : mPlatform(platform) {}

    uint32_t readRegister(uint32_t offset) override {
        std::lock_guard<std::mutex> lock(mMutex);
        return mPlatform.csrAccess(false, offset, 0);
    }

    void writeRegister(uint32_t offset, uint32_t value) override {
        std::lock_guard<std::mutex> lock(mMutex);
        mPlatform.csrAccess(true, offset, value);
    }

    Status writeMemory(uint64_t address, const void* data, size_t size) override {
        std::lock_guard<std::mutex> lock(mMutex);
        return debugAccess(tlm::TLM_WRITE_COMMAND, address, const_cast<void*>(data), size);
    }

    Status readMemory(uint64_t address, void* data, size_t size) override {
        std::lock_guard<std::mutex> lock(mMutex);
        return debugAccess(tlm::TLM_READ_COMMAND, address, data, size);
    }

    uint64_t memorySize() const override { return mPlatform.dram().size(); }

    bool waitForInterrupt(uint64_t timeoutCycles) override {
        std::lock_guard<std::mutex> lock(mMutex);
        if (!mPlatform.irq()) {
            mPlatform.run(timeoutCycles, true);
        }
        return mPlatform.irq();
    }

    bool interruptPending() override {
        std::lock_guard<std::mutex> lock(mMutex);
        return mPlatform.irq();
    }

    void advance(uint64_t cycles) override {
        std::lock_guard<std::mutex> lock(mMutex);
        mPlatform.run(cycles, false);
    }

    uint64_t cycleCount() override {
        std::lock_guard<std::mutex> lock(mMutex);
        return mPlatform.cycles();
    }

    uint64_t clockPeriodPs() const override { return mPlatform.config().clockPeriodPs; }

    void setFault(const FaultOptions& fault) {
        std::lock_guard<std::mutex> lock(mMutex);
        mPlatform.setFault(fault);
    }

    driver::PerformanceCounters performanceCounters() override {
        std::lock_guard<std::mutex> lock(mMutex);
        const auto counter = [this](uint32_t lo) {
            const uint64_t low = mPlatform.csrAccess(false, lo, 0);  // latches the high word
            return low | uint64_t{mPlatform.csrAccess(false, lo + 4, 0)} << 32;
        };
        driver::PerformanceCounters c;
        c.busyCycles = counter(npu::reg::kPerfBusyLo);
        c.macs = counter(npu::reg::kPerfMacsLo);
        c.dmaBytesRead = counter(npu::reg::kPerfDmaRdLo);
        c.dmaBytesWritten = counter(npu::reg::kPerfDmaWrLo);
        c.stallInputCycles = counter(npu::reg::kPerfStallInputLo);
        c.stallWeightCycles = counter(npu::reg::kPerfStallWeightLo);
        c.stallOutputCycles = counter(npu::reg::kPerfStallOutputLo);
        c.stallFetchCycles = counter(npu::reg::kPerfStallFetchLo);
        c.arrayActiveCycles = counter(npu::reg::kPerfArrayActiveLo);
        return c;
    }

  private:
    Status debugAccess(tlm::tlm_command command, uint64_t address, void* data, size_t size) {
        const uint64_t limit = mPlatform.dram().size();
        if (address > limit || size > limit - address) {
            return invalidArgument("device memory access [", address, ", ", address + size,
                                   ") outside the DRAM of ", limit, " bytes");
        }
        // transport_dbg lengths are unsigned int: go in chunks.
        constexpr size_t kChunk = size_t{1} << 30;
        auto* bytes = static_cast<unsigned char*>(data);
        for (size_t done = 0; done < size; done += kChunk) {
            const size_t length = std::min(kChunk, size - done);
            tlm::tlm_generic_payload payload;
            payload.set_command(command);
            payload.set_address(address + done);
            payload.set_data_ptr(bytes + done);
            payload.set_data_length(static_cast<unsigned int>(length));
            if (mPlatform.socket->transport_dbg(payload) != length) {
                return fail(ErrorStatus::GENERAL_FAILURE, "DRAM debug access failed at ",
                            address + done);
            }
        }
        return okStatus();
    }

    NpuPlatform& mPlatform;
    std::mutex mMutex;
};

bool sameHardware(const PlatformConfig& a, const PlatformConfig& b) {
    return a.clockPeriodPs == b.clockPeriodPs && a.dramBytes == b.dramBytes &&
           a.dramLatencyCycles == b.dramLatencyCycles && a.dramBytesPerCycle == b.dramBytesPerCycle;
}

}  // namespace

namespace {
// Never destroyed: SystemC objects must outlive the simulation kernel's own teardown.
NpuPlatform* gPlatform = nullptr;
}  // namespace

NpuPlatform* systemCPlatformInstance() {
    return gPlatform;
}

bool setSystemCFault(driver::HardwareAccess& platform, const FaultOptions& fault) {
    auto* access = dynamic_cast<SystemCAccess*>(&platform);
    if (access) access->setFault(fault);
    return access != nullptr;
}

Result<std::shared_ptr<driver::HardwareAccess>> createSystemCPlatform(
    const PlatformConfig& config) {
    static std::mutex mutex;
    NpuPlatform*& platform = gPlatform;
    static std::shared_ptr<SystemCAccess> access;
    std::lock_guard<std::mutex> lock(mutex);

    if (platform == nullptr) {
        if (sc_core::sc_get_status() != sc_core::SC_ELABORATION) {
            return fail(ErrorStatus::GENERAL_FAILURE,
                        "createSystemCPlatform: the first call must come before the simulation "
                        "starts (SystemC elaborates once per process)");
        }
        if (config.clockPeriodPs == 0 || config.dramBytes == 0 || config.dramBytesPerCycle == 0) {
            return invalidArgument(
                "createSystemCPlatform: clock period, DRAM size and bandwidth "
                "must be positive");
        }
        if (config.dramBytesPerCycle > npu::kDramBusBytes &&
            (config.dramBytesPerCycle % npu::kDramBusBytes != 0 ||
             config.dramBytesPerCycle > npu::kDramBusBytes * npu::kMemLanes)) {
            return invalidArgument("createSystemCPlatform: DRAM bandwidth " +
                                   std::to_string(config.dramBytesPerCycle) +
                                   " B/cycle: above a beat (" + std::to_string(npu::kDramBusBytes) +
                                   " B) it must be a whole number of beats, at most " +
                                   std::to_string(npu::kMemLanes) + " (the NPU's memory lanes)");
        }
        // Cycle times are whole picoseconds; another SystemC user may have set this already.
        sc_core::sc_report_handler::set_actions(sc_core::SC_ID_SET_TIME_RESOLUTION_,
                                                sc_core::SC_DO_NOTHING);
        sc_core::sc_set_time_resolution(1, sc_core::SC_PS);
        if (sc_core::sc_get_time_resolution() > sc_core::sc_time(1, sc_core::SC_PS)) {
            return fail(ErrorStatus::GENERAL_FAILURE,
                        "createSystemCPlatform: SystemC's time resolution is coarser than 1 ps");
        }
        platform = new NpuPlatform("npu_platform", config);
        if (config.trace.enabled) {
            // The platform is never destroyed: close its dump when the process exits.
            std::atexit([] { platform->finishTrace(); });
        }
        access = std::make_shared<SystemCAccess>(*platform);
    } else if (!sameHardware(platform->config(), config)) {
        return fail(ErrorStatus::GENERAL_FAILURE,
                    "createSystemCPlatform: the platform exists with another configuration "
                    "(SystemC elaborates once per process)");
    }
    platform->hardReset();
    return std::shared_ptr<driver::HardwareAccess>(access);
}

}  // namespace nncosim::sim
