// nncosim: NNAPI driver + NPU RTL co-verification. See README.md and docs/.
#include <CLI/CLI.hpp>

#include "testbench/commands/Commands.h"

int main(int argc, char** argv) {
    CLI::App app{"nncosim: NNAPI HAL driver and NPU RTL co-verification against an Eigen golden"};
    app.require_subcommand(1);
    nncosim::cli::addValidateCommand(app);
    nncosim::cli::addCtsCommand(app);
    nncosim::cli::addRunCommand(app);
    nncosim::cli::addCompileCommand(app);
    nncosim::cli::addZooCommand(app);
    nncosim::cli::addBenchCommand(app);
    nncosim::cli::addRegressCommand(app);
    CLI11_PARSE(app, argc, argv);
    return nncosim::cli::gExitStatus;
}
