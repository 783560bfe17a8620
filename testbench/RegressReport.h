// What a regression run leaves behind for CI and people: JUnit XML, and a report directory with
// a Markdown summary, the same as one self-contained HTML page, per-layer SVG charts of the NPU
// runs and every item's result as JSON.
#pragma once

#include <string>
#include <vector>

#include "model/Status.h"
#include "testbench/Regress.h"

namespace nncosim {

/// One <testcase> per item; failures carry their seed and re-run command in the message and the
/// end of the worker's output as the failure text. Creates the file's folder when missing.
Status writeRegressJUnit(const std::string& path, const RegressRun& run);

/// Writes DIR/summary.md, DIR/index.html, DIR/results.json and DIR/layers-N.svg (one chart of
/// per-layer cycles and utilization per item whose NPU run reported two or more layers),
/// creating DIR. `commandLine` is shown as the command that produced the run.
Status writeRegressReport(const std::string& dir, const RegressRun& run,
                          const std::string& commandLine);

/// One run from the results.json files of report directories (the shards of one regression,
/// e.g. each written by `regress --shard I/N --report DIR`): items in id order, counts summed,
/// the duration of the slowest. Fails naming a directory without a readable results.json, one
/// of another backend or seed, or an item in two directories.
Result<RegressRun> mergeRegressReports(const std::vector<std::string>& dirs);

}  // namespace nncosim
