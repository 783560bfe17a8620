#include "driver/Runtime.h"

#include <algorithm>
#include <cstring>

#include "driver/Descriptor.h"
#include "driver/NpuRegisters.h"

namespace nncosim::driver {
namespace {

// Cycles the runtime lets the device run between two looks at the wall-clock deadline.
constexpr uint64_t kWaitSliceCycles = 200000;
// Cycles a soft reset may take to drain in-flight DRAM reads.
constexpr uint64_t kResetCycles = 100000;
constexpr uint32_t kIrqAll = npu::field::kIrqStatusDone | npu::field::kIrqStatusError;

}  // namespace

uint64_t startJob(HardwareAccess& hw, const JobLayout& layout, uint32_t tag) {
    hw.writeRegister(npu::reg::kIrqStatus, kIrqAll);
    hw.writeRegister(npu::reg::kDmaWindowBase, layout.windowBase);
    hw.writeRegister(npu::reg::kDmaWindowLimit, layout.windowLimit);
    hw.writeRegister(npu::reg::kQueueBase, layout.queueAddr);
    hw.writeRegister(npu::reg::kCompletionAddr, layout.completionAddr);
    const uint64_t start = hw.cycleCount();
    hw.writeRegister(npu::reg::kDoorbell, tag);
    return start;
}

JobEnd readJobEnd(HardwareAccess& hw) {
    JobEnd end;
    end.irqStatus = hw.readRegister(npu::reg::kIrqStatus);
    end.errorCode = hw.readRegister(npu::reg::kErrorCode) & npu::field::kErrorCodeCode;
    end.errorDesc = hw.readRegister(npu::reg::kErrorDesc);
    end.errorAddr = hw.readRegister(npu::reg::kErrorAddr);
    end.descDone = hw.readRegister(npu::reg::kDescDone);
    return end;
}

Runtime::Runtime(std::shared_ptr<HardwareAccess> hardware) : mHardware(std::move(hardware)) {}

Status Runtime::initialize() {
    if (!mHardware) return fail(ErrorStatus::DEVICE_UNAVAILABLE, "no hardware");
    const uint32_t id = mHardware->readRegister(npu::reg::kId);
    const uint32_t version = mHardware->readRegister(npu::reg::kVersion);
    if (id != npu::kNpuId || ((version & npu::field::kVersionMajor) >> 8) != npu::kNpuVersionMajor)
        return fail(ErrorStatus::DEVICE_UNAVAILABLE, "unexpected NPU id 0x", std::hex, id,
                    " version 0x", version);
    const uint32_t config = mHardware->readRegister(npu::reg::kConfigArray);
    const uint32_t expected = npu::kArrayRows | (npu::kArrayCols << 8) | (npu::kDramBusBytes << 16);
    if (config != expected || mHardware->readRegister(npu::reg::kConfigSpad) != npu::kSpadWords ||
        mHardware->readRegister(npu::reg::kConfigAcc) != npu::kAccDepth)
        return fail(ErrorStatus::DEVICE_UNAVAILABLE, "the NPU's geometry (CONFIG_* 0x", std::hex,
                    config, ") differs from the driver's build");
    NN_RETURN_IF_ERROR(softReset());
    mHardware->writeRegister(npu::reg::kIrqEnable, kIrqAll);
    return okStatus();
}

Status Runtime::softReset() {
    mHardware->writeRegister(npu::reg::kControl, npu::field::kControlSoftReset);
    for (uint64_t waited = 0;
         mHardware->readRegister(npu::reg::kStatus) & npu::field::kStatusResetting; waited += 64) {
        if (waited > kResetCycles)
            return fail(ErrorStatus::DEVICE_UNAVAILABLE, "the NPU does not leave soft reset");
        mHardware->advance(64);
    }
    mHardware->writeRegister(npu::reg::kIrqStatus, kIrqAll);
    return okStatus();
}

Status Runtime::clearArena(uint32_t size) {
    static const std::vector<uint8_t> zeros(1 << 20, 0);
    for (uint64_t done = 0; done < size;) {
        const size_t n = static_cast<size_t>(std::min<uint64_t>(zeros.size(), size - done));
        NN_RETURN_IF_ERROR(mHardware->writeMemory(kArenaBase + done, zeros.data(), n));
        done += n;
    }
    return okStatus();
}

uint64_t Runtime::arenaCapacity() const {
    const uint64_t top = std::min<uint64_t>(mHardware->memorySize(), uint64_t{UINT32_MAX} + 1);
    return top > kArenaBase ? top - kArenaBase : 0;
}

Duration Runtime::deviceTime(uint64_t cycles) const {
    return Duration(static_cast<int64_t>(cycles * mHardware->clockPeriodPs() / 1000));
}

JobOutcome Runtime::run(const Program& program, const std::vector<TensorData>& inputs,
                        const OptionalTimePoint& deadline) {
    JobOutcome outcome;
    const uint64_t base = kArenaBase;
    if (program.arenaSize > arenaCapacity()) {
        outcome.status = fail(ErrorStatus::RESOURCE_EXHAUSTED_PERSISTENT, "the program needs ",
                              byteSizeText(program.arenaSize), " of device memory, the device has ",
                              byteSizeText(arenaCapacity()));
        return outcome;
    }
    if (inputs.size() != program.inputs.size()) {
        outcome.status = fail(ErrorStatus::GENERAL_FAILURE, "runtime: ", inputs.size(),
                              " inputs for ", program.inputs.size());
        return outcome;
    }
    auto fault = [&](Status st) {
        outcome.status = std::move(st);
        outcome.outputs.clear();
        return outcome;
    };
    // Stage: constants, inputs, then the chain relocated to the arena's base.
    Status st = mHardware->writeMemory(base + program.constantsOffset, program.constants.data(),
                                       program.constants.size());
    for (size_t i = 0; st.ok() && i < inputs.size(); ++i) {
        if (inputs[i].bytes.size() != program.inputs[i].size) {
            st = fail(ErrorStatus::GENERAL_FAILURE, "runtime: input ", i, " has ",
                      inputs[i].bytes.size(), " bytes, the program expects ",
                      program.inputs[i].size);
            break;
        }
        const std::vector<uint8_t> bytes =
            program.inputs[i].binary16OnDevice
                ? floatsToBinary16(inputs[i].bytes.data(), inputs[i].bytes.size() / 4)
                : inputs[i].bytes;
        st = mHardware->writeMemory(base + program.inputs[i].offset, bytes.data(), bytes.size());
    }
    std::vector<uint32_t> chain;
    chain.reserve(program.descriptors.size() * npu::kDescriptorWords);
    const auto b32 = static_cast<uint32_t>(base);
    for (npu::Descriptor d : program.descriptors) {
        if (d.opcode != npu::Opcode::NOP) {
            d.a.addr += b32;
            d.out.addr += b32;
            if (npu::readsB(d)) d.b.addr += b32;
            if (npu::op::usesW(d.opcode)) d.wAddr += b32;
        }
        const auto words = d.encode();
        chain.insert(chain.end(), words.begin(), words.end());
    }
    if (st.ok())
        st =
            mHardware->writeMemory(base + program.descriptorOffset, chain.data(), chain.size() * 4);
    if (!st.ok()) {
        clearArena(program.arenaSize);
        return fault(fail(ErrorStatus::GENERAL_FAILURE, "runtime: staging failed: ", st.message));
    }

    // Launch, confined to the arena.
    const uint32_t tag = ++mJobTag;
    const uint64_t start = startJob(*mHardware,
                                    {b32 + program.descriptorOffset, b32 + program.completionOffset,
                                     b32, b32 + program.arenaSize},
                                    tag);
    bool interrupted = false;
    const auto waitStart = Clock::now();
    while (!(interrupted = mHardware->waitForInterrupt(kWaitSliceCycles))) {
        if (deadline && Clock::now() >= *deadline) break;
    }
    outcome.hostTimeOnDevice = std::chrono::duration_cast<Duration>(Clock::now() - waitStart);
    outcome.cycles = mHardware->cycleCount() - start;
    if (!interrupted) {
        Status reset = softReset();
        clearArena(program.arenaSize);
        return fault(reset.ok() ? fail(ErrorStatus::MISSED_DEADLINE_TRANSIENT,
                                       "the deadline passed after ", outcome.cycles,
                                       " device cycles; the job was aborted")
                                : reset);
    }
    const JobEnd end = readJobEnd(*mHardware);
    uint32_t record[npu::kCompletionWords] = {};
    Status readRecord =
        mHardware->readMemory(base + program.completionOffset, record, sizeof(record));
    if ((end.irqStatus & npu::field::kIrqStatusError) || !readRecord.ok() ||
        record[npu::completion::kStatusWord] != static_cast<uint32_t>(npu::ErrorCode::NONE) ||
        record[npu::completion::kTagWord] != tag) {
        const uint32_t desc = end.errorDesc;
        Status reset = softReset();
        clearArena(program.arenaSize);
        return fault(fail(
            ErrorStatus::GENERAL_FAILURE, "NPU error ",
            npu::errorName(static_cast<npu::ErrorCode>(end.errorCode)), " at descriptor ", desc,
            " (operation ", desc < program.descriptors.size() ? program.descriptors[desc].tag : 0,
            "), address 0x", std::hex, end.errorAddr, std::dec,
            reset.ok() ? "; the device was reset" : "; reset failed: " + reset.message));
    }
    mHardware->writeRegister(npu::reg::kIrqStatus, kIrqAll);
    for (const ProgramIo& io : program.outputs) {
        TensorData t;
        t.dimensions = io.dimensions;
        t.bytes.resize(io.binary16OnDevice ? io.size / 2 : io.size);
        st = mHardware->readMemory(base + io.offset, t.bytes.data(), t.bytes.size());
        if (!st.ok()) {
            clearArena(program.arenaSize);
            return fault(
                fail(ErrorStatus::GENERAL_FAILURE, "runtime: reading outputs: ", st.message));
        }
        if (io.binary16OnDevice) t.bytes = binary16ToFloats(t.bytes);
        outcome.outputs.push_back(std::move(t));
    }
    // Nothing of this job may be visible to the next one.
    st = clearArena(program.arenaSize);
    if (!st.ok())
        return fault(
            fail(ErrorStatus::GENERAL_FAILURE, "runtime: clearing device memory: ", st.message));
    return outcome;
}

}  // namespace nncosim::driver
