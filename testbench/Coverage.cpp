#include "testbench/Coverage.h"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>

#include "model/OutputFile.h"
#include "sim/ChildProcess.h"

namespace nncosim {
namespace {

// verilator_coverage on the whole regression's data: generous, but never unbounded.
constexpr double kToolTimeoutSeconds = 1800;
constexpr const char* kCoverageHeader = "# SystemC::Coverage-3";

/// The key/value pairs of a point: "\001key\002value" repeated.
std::map<std::string, std::string> pointKeys(const std::string& text) {
    std::map<std::string, std::string> keys;
    size_t i = 0;
    while ((i = text.find('\001', i)) != std::string::npos) {
        const size_t sep = text.find('\002', i + 1);
        if (sep == std::string::npos) break;
        const size_t end = text.find('\001', sep + 1);
        keys[text.substr(i + 1, sep - i - 1)] =
            text.substr(sep + 1, end == std::string::npos ? std::string::npos : end - sep - 1);
        i = sep + 1;
    }
    return keys;
}

/// The hierarchy without Verilator's top wrapper ("TOP.").
std::string scope(const std::string& hierarchy) {
    return hierarchy.rfind("TOP.", 0) == 0 ? hierarchy.substr(4) : hierarchy;
}

/// `*` (any run) and `?` (any character) over `text`; every other character literal, so the
/// brackets of generate blocks (g_opcode[1]) need no escaping. Iterative: a star only ever
/// resumes at the last star seen, so no pattern takes more than |pattern| x |text| steps or any
/// stack.
bool globMatch(const std::string& pattern, const std::string& text) {
    size_t p = 0, t = 0;
    size_t star = std::string::npos, resume = 0;
    while (t < text.size()) {
        if (p < pattern.size() && (pattern[p] == '?' || pattern[p] == text[t])) {
            ++p, ++t;
        } else if (p < pattern.size() && pattern[p] == '*') {
            star = p++;
            resume = t;
        } else if (star != std::string::npos) {
            p = star + 1;
            t = ++resume;
        } else {
            return false;
        }
    }
    while (p < pattern.size() && pattern[p] == '*') ++p;
    return p == pattern.size();
}

int kindOrder(CoverageKind k) {
    return k == CoverageKind::kFunctional ? 0 : k == CoverageKind::kLine ? 1 : 2;
}

}  // namespace

const char* coverageKindName(CoverageKind kind) {
    switch (kind) {
        case CoverageKind::kLine:
            return "line";
        case CoverageKind::kToggle:
            return "toggle";
        default:
            return "functional";
    }
}

std::string formatPercent(const CoverageTotals& t) {
    const auto percent = t.percent();
    if (!percent) return "n/a";
    std::ostringstream s;
    s.setf(std::ios::fixed);
    s.precision(1);
    s << *percent;
    return s.str();
}

Result<std::vector<CoveragePoint>> readCoverageFile(const std::string& path) {
    std::error_code ec;
    if (std::filesystem::is_directory(path, ec))
        return invalidArgument("coverage file ", path, " is a folder");
    std::ifstream in(path, std::ios::binary);
    if (!in) return invalidArgument("cannot read coverage file ", path);
    return parseCoverage(in, path);
}

Result<std::vector<CoveragePoint>> parseCoverage(std::istream& in, const std::string& path) {
    std::vector<CoveragePoint> points;
    std::string line;
    size_t number = 0;
    bool header = false;
    while (std::getline(in, line)) {
        ++number;
        if (number == 1) {
            // Anything else (random bytes, an empty file) is not coverage data, and must not
            // read as "nothing missed".
            header = line.rfind(kCoverageHeader, 0) == 0;
            if (!header) break;
            continue;
        }
        if (line.empty() || line[0] == '#') continue;
        const size_t open = line.find('\''), close = line.rfind('\'');
        if (line.rfind("C ", 0) != 0 || open == std::string::npos || close <= open)
            return invalidArgument(path, ":", number, ": not a coverage point line");
        auto keys = pointKeys(line.substr(open + 1, close - open - 1));
        CoveragePoint p;
        try {
            p.count = std::stoull(line.substr(close + 1));
        } catch (const std::exception&) {
            return invalidArgument(path, ":", number, ": bad count");
        }
        const std::string page = keys["page"];
        if (page.rfind("v_toggle", 0) == 0) {
            p.kind = CoverageKind::kToggle;
            p.name = scope(keys["h"]) + "." + keys["o"];
        } else if (page.rfind("v_user", 0) == 0) {
            // A cover point's hierarchy ends with its label.
            p.kind = CoverageKind::kFunctional;
            const std::string h = scope(keys["h"]), label = "." + keys["o"];
            const bool labelled = h.size() >= label.size() &&
                                  h.compare(h.size() - label.size(), label.size(), label) == 0;
            p.name = labelled ? h : h + label;
        } else {  // v_line, v_branch: blocks of statements
            p.kind = CoverageKind::kLine;
            const std::string file = std::filesystem::path(keys["f"]).filename().string();
            p.name = file + ":" + keys["l"] + " " + keys["o"];
        }
        points.push_back(std::move(p));
    }
    if (!header)
        return invalidArgument(path, ": not a Verilator coverage file (its first line must be `",
                               kCoverageHeader, "`)");
    return points;
}

Result<std::vector<CoverageWaiver>> readCoverageWaivers(const std::string& path) {
    std::ifstream in(path);
    if (!in) return invalidArgument("cannot read waiver file ", path);
    std::vector<CoverageWaiver> waivers;
    std::string line;
    size_t number = 0;
    while (std::getline(in, line)) {
        ++number;
        const size_t hash = line.find('#');
        const std::string text = line.substr(0, hash);
        if (text.find_first_not_of(" \t") == std::string::npos) continue;
        const size_t sep = text.find(" -- ");
        const auto trim = [](std::string s) {
            s.erase(0, s.find_first_not_of(" \t"));
            s.erase(s.find_last_not_of(" \t") + 1);
            return s;
        };
        if (sep == std::string::npos || trim(text.substr(sep + 4)).empty())
            return invalidArgument(path, ":", number, ": a waiver needs `PATTERN -- REASON`");
        waivers.push_back({trim(text.substr(0, sep)), trim(text.substr(sep + 4))});
    }
    return waivers;
}

CoverageSummary summarizeCoverage(const std::vector<CoveragePoint>& points,
                                  const std::vector<CoverageWaiver>& waivers) {
    CoverageSummary s;
    for (const CoveragePoint& p : points) {
        CoverageTotals& t = p.kind == CoverageKind::kLine     ? s.line
                            : p.kind == CoverageKind::kToggle ? s.toggle
                                                              : s.functional;
        ++t.points;
        if (p.count > 0) {
            ++t.hit;
            continue;
        }
        const auto waiver = std::find_if(waivers.begin(), waivers.end(), [&](const auto& w) {
            return globMatch(w.pattern, p.name);
        });
        if (waiver != waivers.end()) {
            ++t.waived;
            s.waived.emplace_back(p, waiver->reason);
        } else {
            s.holes.push_back(p);
        }
    }
    std::stable_sort(s.holes.begin(), s.holes.end(), [](const auto& a, const auto& b) {
        return kindOrder(a.kind) < kindOrder(b.kind);
    });
    return s;
}

Result<CoverageSummary> mergeCoverage(const std::vector<std::string>& inputs,
                                      const std::string& outDir, const std::string& waiversPath) {
    namespace fs = std::filesystem;
    std::vector<std::string> files;
    for (const std::string& input : inputs) {
        std::error_code ec;
        if (fs::is_directory(input, ec)) {
            for (const auto& e : fs::recursive_directory_iterator(input, ec))
                // merged.dat is an earlier merge of the files beside it: counted once.
                if (e.is_regular_file() && e.path().extension() == ".dat" &&
                    e.path().filename() != "merged.dat")
                    files.push_back(e.path().string());
        } else if (fs::is_regular_file(input, ec)) {
            files.push_back(input);
        } else {
            return invalidArgument("no coverage file or directory ", input);
        }
    }
    std::sort(files.begin(), files.end());
    for (const std::string& file : files) {
        auto read = readCoverageFile(file);
        if (!read) return read.status();
    }
    if (files.empty())
        return invalidArgument(
            "no coverage data (*.dat) in the inputs: runs write it only from a "
            "coverage build (cmake -B build-cov -DNNCOSIM_COVERAGE=ON)");
    std::vector<CoverageWaiver> waivers;
    if (!waiversPath.empty()) {
        auto w = readCoverageWaivers(waiversPath);
        if (!w) return w.status();
        waivers = std::move(*w);
    }
    std::error_code ec;
    fs::create_directories(outDir, ec);
    if (ec) return fail(ErrorStatus::GENERAL_FAILURE, "cannot create ", outDir, ": ", ec.message());
    const std::string merged = (fs::path(outDir) / "merged.dat").string();
    const std::string log = (fs::path(outDir) / "verilator_coverage.log").string();
    std::vector<std::string> mergeArgs{"verilator_coverage", "--write", merged};
    mergeArgs.insert(mergeArgs.end(), files.begin(), files.end());
    if (!sim::runChild(mergeArgs, log, kToolTimeoutSeconds).ok())
        return fail(ErrorStatus::GENERAL_FAILURE, "verilator_coverage could not merge ",
                    files.size(), " files (see ", log, ")");
    const std::string annotated = (fs::path(outDir) / "annotated").string();
    if (!sim::runChild({"verilator_coverage", "--annotate", annotated, merged},
                       (fs::path(outDir) / "annotate.log").string(), kToolTimeoutSeconds)
             .ok())
        return fail(ErrorStatus::GENERAL_FAILURE, "verilator_coverage could not annotate ", merged);
    auto points = readCoverageFile(merged);
    if (!points) return points.status();
    if (points->empty())
        return invalidArgument("no coverage data: the ", files.size(),
                               " coverage files hold no points");
    CoverageSummary s = summarizeCoverage(*points, waivers);
    s.dataFiles = files.size();
    NN_RETURN_IF_ERROR(
        writeOutputFile((fs::path(outDir) / "summary.json").string(), toJson(s).dump(1) + "\n"));
    NN_RETURN_IF_ERROR(
        writeOutputFile((fs::path(outDir) / "summary.md").string(), coverageMarkdown(s)));
    return s;
}

nlohmann::json toJson(const CoverageSummary& s) {
    const auto totals = [](const CoverageTotals& t) {
        return nlohmann::json{
            {"points", t.points},
            {"hit", t.hit},
            {"waived", t.waived},
            {"percent", t.percent() ? nlohmann::json(*t.percent()) : nlohmann::json()}};
    };
    nlohmann::json holes = nlohmann::json::array(), waived = nlohmann::json::array();
    for (const CoveragePoint& p : s.holes)
        holes.push_back({{"kind", coverageKindName(p.kind)}, {"name", p.name}});
    for (const auto& [p, reason] : s.waived)
        waived.push_back(
            {{"kind", coverageKindName(p.kind)}, {"name", p.name}, {"reason", reason}});
    return {{"data_files", s.dataFiles},  {"line", totals(s.line)},
            {"toggle", totals(s.toggle)}, {"functional", totals(s.functional)},
            {"holes", std::move(holes)},  {"waived", std::move(waived)}};
}

Result<std::vector<std::string>> readFunctionalHoles(const std::string& path) {
    std::ifstream in(path);
    if (!in) return invalidArgument("cannot read coverage summary ", path);
    const nlohmann::json j = nlohmann::json::parse(in, nullptr, false);
    if (j.is_discarded() || !j.is_object() || !j.contains("holes") || !j["holes"].is_array())
        return invalidArgument(path, " is not a coverage summary.json (no \"holes\" list)");
    std::vector<std::string> holes;
    for (const nlohmann::json& hole : j["holes"]) {
        if (!hole.is_object() || !hole.value("name", nlohmann::json()).is_string() ||
            !hole.value("kind", nlohmann::json()).is_string())
            return invalidArgument(path, ": a hole without a kind and a name: ", hole.dump());
        if (hole["kind"] == coverageKindName(CoverageKind::kFunctional))
            holes.push_back(hole["name"].get<std::string>());
    }
    return holes;
}

std::string coverageMarkdown(const CoverageSummary& s, size_t maxHoles) {
    std::ostringstream md;
    md.setf(std::ios::fixed);
    md.precision(1);
    md << "## RTL coverage\n\n" << s.dataFiles << " coverage files merged.\n\n";
    md << "| kind | points | hit | % | waived holes | open holes "
          "|\n|---|---:|---:|---:|---:|---:|\n";
    for (const auto& [name, t] : {std::pair<const char*, const CoverageTotals*>{"line", &s.line},
                                  {"toggle", &s.toggle},
                                  {"functional", &s.functional}}) {
        md << "| " << name << " | " << t->points << " | " << t->hit << " | " << formatPercent(*t)
           << " | " << t->waived << " | " << t->points - t->hit - t->waived << " |\n";
    }
    md << "\n### Open holes (" << s.holes.size() << ")\n\n";
    for (size_t i = 0; i < s.holes.size() && i < maxHoles; ++i)
        md << "- " << coverageKindName(s.holes[i].kind) << ": `" << s.holes[i].name << "`\n";
    if (s.holes.size() > maxHoles) md << "- ... " << s.holes.size() - maxHoles << " more\n";
    if (!s.waived.empty()) {
        md << "\n### Waived holes (" << s.waived.size() << ")\n\n";
        for (const auto& [p, reason] : s.waived)
            md << "- " << coverageKindName(p.kind) << ": `" << p.name << "`: " << reason << "\n";
    }
    return md.str();
}

}  // namespace nncosim
