// The factory choosing the NPU's implementation (sim/Platform.h).
#include "sim/Cosim.h"
#include "sim/FunctionalNpu.h"
#include "sim/NpuPlatform.h"
#include "sim/Platform.h"

namespace nncosim::sim {

const char* nameOf(NpuImplementation npu) {
    return npu == NpuImplementation::kFunctional ? "func" : "rtl";
}

std::optional<NpuImplementation> npuImplementationFromName(std::string_view name) {
    if (name == "rtl") return NpuImplementation::kRtl;
    if (name == "func") return NpuImplementation::kFunctional;
    return std::nullopt;
}

Result<std::shared_ptr<driver::HardwareAccess>> createPlatform(const PlatformConfig& config) {
    if (config.npu == NpuImplementation::kRtl && config.cosim.enabled) {
        auto cosim = CosimPlatform::create(config, config.cosim.lockstep);
        if (!cosim) return cosim.status();
        return std::shared_ptr<driver::HardwareAccess>(*cosim);
    }
    if (!faultKindExists(config.npu, config.fault.kind))
        return invalidArgument("this fault kind exists on the functional model only (--npu func)");
    if (config.npu == NpuImplementation::kRtl) return createSystemCPlatform(config);
    if (config.cosim.enabled)
        return invalidArgument(
            "co-simulation runs the RTL beside the functional model: it needs "
            "the RTL (--npu rtl)");
    if (config.trace.enabled)
        return invalidArgument("waveforms need the RTL: the functional model has no signals");
    if (config.clockPeriodPs == 0 || config.dramBytes == 0)
        return invalidArgument("createPlatform: clock period and DRAM size must be positive");
    FunctionalNpuConfig functional;
    functional.dramBytes = config.dramBytes;
    functional.clockPeriodPs = config.clockPeriodPs;
    auto model = std::make_shared<FunctionalNpu>(functional);
    model->setFault(config.fault);
    return std::shared_ptr<driver::HardwareAccess>(model);
}

bool faultKindExists(NpuImplementation npu, FaultOptions::Kind kind) {
    using Kind = FaultOptions::Kind;
    return npu == NpuImplementation::kFunctional || kind == Kind::kNone ||
           kind == Kind::kStuckWriteBit || kind == Kind::kDropWriteBeat ||
           kind == Kind::kStuckRequantBit;
}

Status setFault(driver::HardwareAccess& platform, const FaultOptions& fault) {
    if (auto* model = dynamic_cast<FunctionalNpu*>(&platform)) {
        model->setFault(fault);
        return okStatus();
    }
    if (!faultKindExists(NpuImplementation::kRtl, fault.kind))
        return invalidArgument("this fault kind exists on the functional model only (--npu func)");
    if (!setSystemCFault(platform, fault))
        return invalidArgument("setFault: not a platform createPlatform made");
    return okStatus();
}

}  // namespace nncosim::sim
