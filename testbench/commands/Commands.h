// Subcommands of the nncosim CLI; each registers its options and callback on the app.
#pragma once

#include <CLI/CLI.hpp>

namespace nncosim::cli {

/// Exit status of the command that ran (set by its callback).
inline int gExitStatus = 0;

void addValidateCommand(CLI::App& app);
void addCtsCommand(CLI::App& app);
void addRunCommand(CLI::App& app);
void addCompileCommand(CLI::App& app);
void addZooCommand(CLI::App& app);
void addBenchCommand(CLI::App& app);
void addRegressCommand(CLI::App& app);

}  // namespace nncosim::cli
