// `nncosim coverage INPUT... -o DIR [--waivers FILE]`: merges RTL coverage data written by a
// coverage build (directories of *.dat, e.g. the DIR/data of `regress --coverage DIR` runs or
// shards) into one database, an annotated source tree and a summary (testbench/Coverage.h).
#include <iomanip>
#include <iostream>
#include <memory>

#include "testbench/Coverage.h"
#include "testbench/commands/Commands.h"

namespace nncosim::cli {
namespace {

struct CoverageCliOptions {
    std::vector<std::string> inputs;
    std::string outDir;
    std::string waivers;
};

int runCoverage(const CoverageCliOptions& options) {
    auto summary = mergeCoverage(options.inputs, options.outDir, options.waivers);
    if (!summary) {
        std::cerr << "nncosim coverage: " << summary.status().message << "\n";
        return 2;
    }
    std::cout << coverageMarkdown(*summary, 50) << "\nwritten: " << options.outDir
              << "/{merged.dat,annotated/,summary.md,summary.json}\n";
    return 0;
}

}  // namespace

void addCoverageCommand(CLI::App& app) {
    auto options = std::make_shared<CoverageCliOptions>();
    CLI::App* cmd = app.add_subcommand(
        "coverage",
        "Merge RTL coverage data of a coverage build into one database, annotated sources and a "
        "summary (line, toggle, functional points, holes)");
    cmd->add_option("inputs", options->inputs, "Coverage files (*.dat) or directories of them")
        ->required();
    cmd->add_option("-o,--out", options->outDir, "Output directory")->required();
    cmd->add_option("--waivers", options->waivers,
                    "Holes unreachable by design: PATTERN -- REASON per line");
    cmd->callback([options] { gExitStatus = runCoverage(*options); });
}

}  // namespace nncosim::cli
