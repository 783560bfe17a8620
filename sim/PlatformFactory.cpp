// The factory choosing the NPU's implementation (sim/Platform.h).
#include "sim/FunctionalNpu.h"
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
    if (config.npu == NpuImplementation::kRtl) return createSystemCPlatform(config);
    if (config.trace.enabled)
        return invalidArgument("waveforms need the RTL: the functional model has no signals");
    if (config.fault.kind != FaultOptions::Kind::kNone)
        return invalidArgument("injected faults act on the RTL: the functional model has none");
    if (config.clockPeriodPs == 0 || config.dramBytes == 0)
        return invalidArgument("createPlatform: clock period and DRAM size must be positive");
    FunctionalNpuConfig functional;
    functional.dramBytes = config.dramBytes;
    functional.clockPeriodPs = config.clockPeriodPs;
    return std::shared_ptr<driver::HardwareAccess>(std::make_shared<FunctionalNpu>(functional));
}

}  // namespace nncosim::sim
