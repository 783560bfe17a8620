// Coverage of the RTL measured by the coverage build (sim/CMakeLists.txt, NNCOSIM_COVERAGE): every
// platform writes Verilator's counts to $NNCOSIM_COVERAGE_DIR; this merges them with Verilator's
// own tool (verilator_coverage), annotates the sources, and summarizes per kind: line, toggle and
// functional (the RTL's `cover property` points), each hole listed, the waived ones (a reviewed
// file of patterns with reasons) counted apart, never as covered.
#pragma once

#include <cstdint>
#include <iosfwd>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "model/Status.h"

namespace nncosim {

enum class CoverageKind { kLine, kToggle, kFunctional };

const char* coverageKindName(CoverageKind kind);

/// One coverage point of a Verilator coverage file.
struct CoveragePoint {
    CoverageKind kind = CoverageKind::kLine;
    /// Functional: the point's hierarchical name (npu_top.u_cmd.g_opcode[1].accepted); line:
    /// file:line and the block's comment; toggle: the signal's hierarchical name and bit.
    std::string name;
    uint64_t count = 0;
};

/// A waived hole: a pattern over point names (`*` any run, `?` any character, all else literal)
/// and why it cannot be hit by design.
struct CoverageWaiver {
    std::string pattern;
    std::string reason;
};

struct CoverageTotals {
    size_t points = 0;  ///< every point of the kind
    size_t hit = 0;     ///< count > 0
    size_t waived = 0;  ///< not hit, waived
    /// Hit points in per cent; none without points (no data is never 100 %).
    std::optional<double> percent() const {
        if (points == 0) return std::nullopt;
        return 100.0 * double(hit) / double(points);
    }
};

/// percent() with one decimal, or "n/a" without points.
std::string formatPercent(const CoverageTotals& t);

struct CoverageSummary {
    size_t dataFiles = 0;  ///< coverage files merged
    CoverageTotals line, toggle, functional;
    std::vector<CoveragePoint> holes;  ///< not hit and not waived, functional first
    std::vector<std::pair<CoveragePoint, std::string>> waived;  ///< with the waiver's reason
};

/// The points of a Verilator coverage file (`# SystemC::Coverage-3`, one `C '<keys>' count` line
/// per point).
Result<std::vector<CoveragePoint>> readCoverageFile(const std::string& path);

/// The same from a stream; `origin` names it in errors.
Result<std::vector<CoveragePoint>> parseCoverage(std::istream& in, const std::string& origin);

/// A waiver file: per line `PATTERN -- REASON` (CoverageWaiver; `#` starts a comment).
/// Fails on a line without a reason.
Result<std::vector<CoverageWaiver>> readCoverageWaivers(const std::string& path);

CoverageSummary summarizeCoverage(const std::vector<CoveragePoint>& points,
                                  const std::vector<CoverageWaiver>& waivers);

/// Merges the coverage files in `inputs` (files, or directories searched recursively for *.dat
/// other than an earlier merge's merged.dat) into OUT/merged.dat, annotates the RTL into
/// OUT/annotated/, summarizes with the waivers (when a file is given) and writes OUT/summary.json
/// and OUT/summary.md. Fails when there is no data.
Result<CoverageSummary> mergeCoverage(const std::vector<std::string>& inputs,
                                      const std::string& outDir, const std::string& waiversPath);

nlohmann::json toJson(const CoverageSummary& summary);
/// The open functional holes of a summary.json that toJson wrote (`nncosim coverage`,
/// `regress --coverage`), by hierarchical name.
Result<std::vector<std::string>> readFunctionalHoles(const std::string& summaryPath);
/// The summary as Markdown: a table of the kinds, then the holes (at most `maxHoles`).
std::string coverageMarkdown(const CoverageSummary& summary, size_t maxHoles = 200);

}  // namespace nncosim
