// nncosim: NNAPI driver + NPU RTL co-verification. See README.md and docs/.
#include <CLI/CLI.hpp>
#include <iostream>
#include <new>

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
    nncosim::cli::addConvertCommand(app);
    nncosim::cli::addFaultsCommand(app);
    nncosim::cli::addCoverageCommand(app);
    nncosim::cli::addMutateCommand(app);
    // Commands report their own errors; what escapes them still ends as a message, not an abort.
    try {
        CLI11_PARSE(app, argc, argv);
    } catch (const std::bad_alloc&) {
        std::cerr << "nncosim: out of memory (see --memory-limit)\n";
        return 2;
    } catch (const std::exception& e) {
        std::cerr << "nncosim: internal error: " << e.what() << "\n";
        return 2;
    }
    return nncosim::cli::gExitStatus;
}
