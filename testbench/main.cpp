// nncosim: NNAPI driver + NPU RTL co-verification. See README.md and docs/.
#include <CLI/CLI.hpp>
#include <iostream>
#include <new>

#include "sim/ChildProcess.h"
#include "testbench/commands/Commands.h"

namespace {

/// CLI11 reads "-3" into an unsigned 64-bit option as 2^64 - 3 (and "010" as octal 8): every
/// unsigned option takes plain decimal digits only.
void requireDecimalDigits(CLI::App& app) {
    static const CLI::Validator kDigits(
        [](std::string& text) -> std::string {
            const bool digits = !text.empty() && text.size() <= 20 &&
                                text.find_first_not_of("0123456789") == std::string::npos;
            return digits ? "" : "'" + text + "' is not a whole number from 0 up";
        },
        "UINT");
    for (CLI::Option* option : app.get_options()) {
        if (option->get_type_name() == "UINT") option->check(kDigits);
    }
    for (CLI::App* sub : app.get_subcommands([](CLI::App*) { return true; }))
        requireDecimalDigits(*sub);
}

}  // namespace

int main(int argc, char** argv) {
    // Interrupted or timed out (Ctrl-C, a CI job's limit): no worker, GTKWave or Xvfb outlives us.
    nncosim::sim::endChildrenOnTermination();
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
    requireDecimalDigits(app);
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
