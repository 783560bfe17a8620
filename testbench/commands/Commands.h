// Subcommands of the nncosim CLI; each registers its options and callback on the app.
#pragma once

#include <CLI/CLI.hpp>

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

void addValidateCommand(CLI::App& app);
void addCtsCommand(CLI::App& app);
void addRunCommand(CLI::App& app);
void addCompileCommand(CLI::App& app);
void addZooCommand(CLI::App& app);
void addBenchCommand(CLI::App& app);
void addRegressCommand(CLI::App& app);
void addConvertCommand(CLI::App& app);

}  // namespace nncosim::cli
