// Subcommands of the nncosim CLI; each registers its options and callback on the app.
#pragma once

#include <CLI/CLI.hpp>
#include <iostream>
#include <string>

#include "sim/Platform.h"

namespace nncosim::cli {

/// Exit status of the command that ran (set by its callback).
inline int gExitStatus = 0;

/// `--memory-limit SIZE` ("8GiB", "512MB", bytes): the most a model's tensors may take.
inline void addMemoryLimitOption(CLI::App& cmd, uint64_t& limitBytes) {
    cmd.add_option("--memory-limit", limitBytes,
                   "Refuse models whose tensors need more memory than this (e.g. 8GiB)")
        ->transform(CLI::AsSizeValue(false))
        ->capture_default_str();
}

/// `--npu rtl|func`: what implements the NPU behind backends npu and auto.
inline void addNpuOption(CLI::App& cmd, std::string& npu) {
    cmd.add_option("--npu", npu,
                   "What the driver drives for backends npu and auto: rtl (the RTL in SystemC) or "
                   "func (the functional model: identical results, estimated cycles)")
        ->check(CLI::IsMember({"rtl", "func"}))
        ->capture_default_str();
}

/// `--dram-bytes-per-cycle B`: the RTL platform's DRAM bandwidth (docs/npu.md, Memory lanes).
inline void addDramOption(CLI::App& cmd, uint32_t& bytesPerCycle) {
    cmd.add_option("--dram-bytes-per-cycle", bytesPerCycle,
                   "Bandwidth of the RTL platform's DRAM: below 16 one beat every few cycles; "
                   "16, 32, 48 or 64 give the NPU's memory port 1 to 4 lanes")
        ->check(CLI::Range(1u, 64u))
        ->capture_default_str();
}

/// Sets `config`'s DRAM bandwidth (addDramOption). False, with the reason on stderr after
/// `command`, for another bandwidth than 16 on the functional model: its cycle estimates assume
/// 16 B/cycle.
inline bool setDramBandwidth(sim::PlatformConfig& config, uint32_t bytesPerCycle,
                             const char* command) {
    if (config.npu == sim::NpuImplementation::kFunctional && bytesPerCycle != 16) {
        std::cerr << command
                  << ": --dram-bytes-per-cycle sets the RTL platform's DRAM: it needs --npu rtl "
                     "(the functional model estimates cycles at 16 B/cycle)\n";
        return false;
    }
    config.dramBytesPerCycle = bytesPerCycle;
    return true;
}

/// The platform configuration for an `--npu` value (checked by addNpuOption).
inline sim::PlatformConfig platformFor(const std::string& npu) {
    sim::PlatformConfig config;
    config.npu = sim::npuImplementationFromName(npu).value_or(sim::NpuImplementation::kRtl);
    return config;
}

void addValidateCommand(CLI::App& app);
void addCtsCommand(CLI::App& app);
void addRunCommand(CLI::App& app);
void addCompileCommand(CLI::App& app);
void addZooCommand(CLI::App& app);
void addBenchCommand(CLI::App& app);
void addRegressCommand(CLI::App& app);
void addConvertCommand(CLI::App& app);
void addFaultsCommand(CLI::App& app);
void addCoverageCommand(CLI::App& app);
void addMutateCommand(CLI::App& app);

}  // namespace nncosim::cli
