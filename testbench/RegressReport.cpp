#include "testbench/RegressReport.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iomanip>
#include <map>
#include <set>
#include <sstream>

#include "model/OutputFile.h"
#include "testbench/JUnit.h"
#include "testbench/NpuProfiler.h"

namespace nncosim {
namespace {

struct Tally {
    size_t passed = 0, failed = 0, unsupported = 0;
    void add(Verdict v) {
        ++(v == Verdict::PASSED ? passed : v == Verdict::FAILED ? failed : unsupported);
    }
};

/// NPU figures of one operation type over every layer reported.
struct OperationFigures {
    size_t layers = 0;
    uint64_t cycles = 0;
    uint64_t macs = 0;
};

struct Summary {
    std::map<std::string, Tally> byOperation;
    std::map<std::string, Tally> byKind;
    std::map<std::string, OperationFigures> npuByOperation;
    std::vector<size_t> failures;  // result indexes
    std::vector<size_t> charted;   // results with a per-layer chart
    uint64_t npuCycles = 0;
};

Summary summarize(const RegressRun& run) {
    Summary s;
    for (size_t i = 0; i < run.results.size(); ++i) {
        const ItemResult& r = run.results[i];
        s.byKind[kindName(r.kind)].add(r.verdict);
        for (const std::string& op : r.operations) s.byOperation[op].add(r.verdict);
        if (r.verdict == Verdict::FAILED) s.failures.push_back(i);
        if (r.layers.size() >= 2) s.charted.push_back(i);
        s.npuCycles += r.npuCycles;
        for (const LayerFigures& l : r.layers) {
            OperationFigures& f = s.npuByOperation[l.type];
            ++f.layers;
            f.cycles += l.cycles;
            f.macs += l.macs;
        }
    }
    return s;
}

/// The array utilization of `macs` over `cycles`, as the profiler computes it per layer.
double utilizationOf(uint64_t macs, uint64_t cycles) {
    NpuCounters counters;
    counters.cycles = cycles;
    counters.macs = macs;
    return counters.utilization();
}

std::string percent(double fraction) {
    std::ostringstream out;
    out << std::fixed << std::setprecision(1) << 100.0 * fraction << "%";
    return out.str();
}

std::string fixed(double value, int digits) {
    std::ostringstream out;
    out << std::fixed << std::setprecision(digits) << value;
    return out.str();
}

std::string xmlEscape(const std::string& s) {
    std::string out;
    for (char c : s) {
        switch (c) {
            case '&':
                out += "&amp;";
                break;
            case '<':
                out += "&lt;";
                break;
            case '>':
                out += "&gt;";
                break;
            case '"':
                out += "&quot;";
                break;
            default:
                out += c;
        }
    }
    return out;
}

/// Text as literal Markdown on one line: what could start markup (emphasis, links, code, raw
/// HTML, table cells) is escaped, so a test's name or message cannot change the page.
std::string mdText(const std::string& s) {
    std::string out;
    for (char c : s) {
        if (c == '\n' || c == '\r') {
            out += ' ';
        } else if (c == '<') {
            out += "&lt;";
        } else if (c == '&') {
            out += "&amp;";
        } else {
            if (std::strchr("\\`*_[]()#|!>~", c)) out += '\\';
            out += c;
        }
    }
    return out;
}

/// The longest run of backticks in `s`.
size_t longestBacktickRun(const std::string& s) {
    size_t longest = 0, run = 0;
    for (char c : s) {
        run = c == '`' ? run + 1 : 0;
        longest = std::max(longest, run);
    }
    return longest;
}

/// Text as one inline code span (CommonMark): fenced by more backticks than any run inside it,
/// so its content stays literal, raw HTML included.
std::string mdCode(const std::string& s) {
    std::string text = s;
    std::replace(text.begin(), text.end(), '\n', ' ');
    const std::string fence(longestBacktickRun(text) + 1, '`');
    const bool pad = !text.empty() && (text.front() == '`' || text.back() == '`');
    return fence + (pad ? " " : "") + text + (pad ? " " : "") + fence;
}

/// A path as a Markdown link destination: in angle brackets when it holds what would end it.
std::string mdLink(const std::string& path) {
    if (path.find_first_of(" ()<>\\\n") == std::string::npos) return path;
    std::string out = "<";
    for (char c : path) {
        if (c == '<' || c == '>' || c == '\\') out += '\\';
        out += c == '\n' ? ' ' : c;
    }
    return out + ">";
}

/// The item's name in the charts and JUnit: a model's test name, a random test's draw, or the id.
std::string titleOf(const ItemResult& r) {
    if (r.kind == RegressKind::kModel && !r.name.empty()) return r.name;
    if (r.kind == RegressKind::kRandom) return r.id + ": " + r.description;
    return r.id;
}

const char* colorOf(const std::string& type) {
    static const std::map<std::string, const char*> kColors = {{"CONV_2D", "#4e79a7"},
                                                               {"DEPTHWISE_CONV_2D", "#59a14f"},
                                                               {"FULLY_CONNECTED", "#b07aa1"},
                                                               {"AVERAGE_POOL_2D", "#edc948"},
                                                               {"MAX_POOL_2D", "#f28e2b"},
                                                               {"ADD", "#76b7b2"},
                                                               {"MUL", "#ff9da7"}};
    auto it = kColors.find(type);
    return it == kColors.end() ? "#9c755f" : it->second;
}

/// Bars of cycles per layer (left axis) with the array utilization as a line (right axis).
std::string layerChartSvg(const ItemResult& r) {
    const size_t n = r.layers.size();
    const double barWidth = std::clamp(900.0 / static_cast<double>(n), 4.0, 24.0);
    const double left = 80, right = 60, top = 46, plotHeight = 220, bottom = 44;
    const double plotWidth = barWidth * static_cast<double>(n);
    const double width = left + plotWidth + right, height = top + plotHeight + bottom;
    uint64_t maxCycles = 1;
    for (const LayerFigures& l : r.layers) maxCycles = std::max(maxCycles, l.cycles);
    std::ostringstream svg;
    svg << "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" << width << "\" height=\"" << height
        << "\" font-family=\"sans-serif\" font-size=\"11\">\n"
        << "<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n"
        << "<text x=\"" << left << "\" y=\"16\" font-size=\"13\" font-weight=\"bold\">"
        << xmlEscape(titleOf(r)) << ": NPU cycles and utilization per layer</text>\n";
    // Legend: operation types in order of appearance, then the utilization line.
    std::vector<std::string> types;
    for (const LayerFigures& l : r.layers) {
        if (std::find(types.begin(), types.end(), l.type) == types.end()) types.push_back(l.type);
    }
    double x = left;
    for (const std::string& type : types) {
        svg << "<rect x=\"" << x << "\" y=\"24\" width=\"10\" height=\"10\" fill=\""
            << colorOf(type) << "\"/>"
            << "<text x=\"" << x + 14 << "\" y=\"33\">" << type << "</text>\n";
        x += 24 + 7 * static_cast<double>(type.size());
    }
    svg << "<line x1=\"" << x << "\" y1=\"29\" x2=\"" << x + 16
        << "\" y2=\"29\" stroke=\"#e15759\" stroke-width=\"2\"/>"
        << "<text x=\"" << x + 20 << "\" y=\"33\">utilization</text>\n";
    // Axes with gridlines at quarters of the maximum.
    for (int q = 0; q <= 4; ++q) {
        const double y = top + plotHeight * (1.0 - q / 4.0);
        svg << "<line x1=\"" << left << "\" y1=\"" << y << "\" x2=\"" << left + plotWidth
            << "\" y2=\"" << y << "\" stroke=\"#ddd\"/>"
            << "<text x=\"" << left - 6 << "\" y=\"" << y + 4 << "\" text-anchor=\"end\">"
            << static_cast<uint64_t>(std::llround(static_cast<double>(maxCycles) * q / 4.0))
            << "</text>"
            << "<text x=\"" << left + plotWidth + 6 << "\" y=\"" << y + 4 << "\">" << q * 25
            << "%</text>\n";
    }
    svg << "<text x=\"14\" y=\"" << top + plotHeight / 2 << "\" transform=\"rotate(-90 14 "
        << top + plotHeight / 2 << ")\" text-anchor=\"middle\">cycles</text>\n"
        << "<text x=\"" << left + plotWidth / 2 << "\" y=\"" << height - 6
        << "\" text-anchor=\"middle\">operation (main-graph index)</text>\n";
    const size_t labelEvery = (n + 19) / 20;
    std::ostringstream line;
    for (size_t i = 0; i < n; ++i) {
        const LayerFigures& l = r.layers[i];
        const double barHeight =
            plotHeight * static_cast<double>(l.cycles) / static_cast<double>(maxCycles);
        const double bx = left + barWidth * static_cast<double>(i);
        svg << "<rect x=\"" << bx + 1 << "\" y=\"" << top + plotHeight - barHeight << "\" width=\""
            << barWidth - 2 << "\" height=\"" << barHeight << "\" fill=\"" << colorOf(l.type)
            << "\"><title>operation " << l.operation << " " << l.type << ": " << l.cycles
            << " cycles, " << l.macs << " MACs, " << percent(l.utilization) << " utilization, "
            << l.dmaBytes << " DMA bytes</title></rect>\n";
        if (i % labelEvery == 0) {
            svg << "<text x=\"" << bx + barWidth / 2 << "\" y=\"" << top + plotHeight + 14
                << "\" text-anchor=\"middle\">" << l.operation << "</text>\n";
        }
        line << (i ? " " : "") << bx + barWidth / 2 << ","
             << top + plotHeight * (1.0 - std::min(l.utilization, 1.0));
    }
    svg << "<polyline points=\"" << line.str()
        << "\" fill=\"none\" stroke=\"#e15759\" stroke-width=\"2\"/>\n"
        << "</svg>\n";
    return svg.str();
}

std::string fileName(const std::string& path) {
    return std::filesystem::path(path).filename().string();
}

/// Links from the report's pages to files elsewhere: relative, so the report and the waves can
/// move together (e.g. as one CI artifact).
struct Links {
    std::filesystem::path dir;
    std::string to(const std::string& path) const {
        std::error_code ec;
        const std::filesystem::path relative = std::filesystem::proximate(
            std::filesystem::absolute(path, ec), std::filesystem::absolute(dir, ec), ec);
        return ec ? path : relative.generic_string();
    }
};

/// "re-run", naming the shard that ran the item when the run was sharded (the command names the
/// seed).
std::string rerunLabel(const ItemResult& r) {
    return r.shard.empty() ? "re-run" : "re-run (shard " + r.shard + ")";
}

std::string headline(const RegressRun& run) {
    std::ostringstream out;
    out << run.results.size() << " items: " << run.passed << " passed, " << run.failed
        << " failed, " << run.unsupported << " unsupported in " << fixed(run.seconds, 1)
        << " s (backend " << run.options.worker.backend << ", " << run.workers
        << (run.workers == 1 ? " worker" : " workers") << ", shard " << run.options.shardIndex
        << "/" << run.options.shardCount << ", seed " << run.options.worker.seed << ")";
    return out.str();
}

std::string npuNote(const RegressRun& run, const Summary& s) {
    if (!s.npuByOperation.empty()) return {};
    if (run.options.worker.backend == "golden")
        return "No NPU figures: the golden backend runs everything on the CPU.";
    return "No NPU figures: no item ran on the NPU.";
}

void writeMarkdown(std::ostream& md, const RegressRun& run, const Summary& s,
                   const std::string& commandLine, const Links& links) {
    auto link = [&](const std::string& path) { return links.to(path); };
    md << "# nncosim regression\n\n"
       << mdCode(commandLine) << "\n\n"
       << "**" << (run.ok() ? "PASSED" : "FAILED") << "**: " << headline(run) << ".\n\n"
       << "| kind | passed | failed | unsupported |\n|---|---:|---:|---:|\n";
    for (const auto& [kind, t] : s.byKind)
        md << "| " << kind << " | " << t.passed << " | " << t.failed << " | " << t.unsupported
           << " |\n";

    md << "\n## Failures\n\n";
    if (s.failures.empty()) md << "None.\n";
    for (size_t i : s.failures) {
        const ItemResult& r = run.results[i];
        md << "### " << mdCode(r.id) << "\n\n" << mdText(r.message) << "\n\n";
        if (!r.description.empty()) md << "- drawn: " << mdText(r.description) << "\n";
        if (r.seed) md << "- seed: " << *r.seed << "\n";
        if (!r.divergence.empty()) md << "- first divergence: " << mdText(r.divergence) << "\n";
        if (!r.waves.empty()) {
            md << "- waves: [" << mdText(fileName(r.waves)) << "](" << mdLink(link(r.waves))
               << "), GTKWave save file [" << mdText(fileName(r.wavesSave)) << "]("
               << mdLink(link(r.wavesSave)) << "), the operation alone: ["
               << mdText(fileName(r.reproducer)) << "](" << mdLink(link(r.reproducer)) << ")\n";
        }
        md << "- " << rerunLabel(r) << ": " << mdCode(rerunCommand(run.options, r.id)) << "\n";
        if (!r.wavesPicture.empty())
            md << "\n![waves of " << mdText(r.divergence) << "](" << mdLink(link(r.wavesPicture))
               << ")\n";
        if (!r.log.empty()) {
            // A fence longer than any run of backticks in the log keeps it one block.
            const std::string fence(std::max<size_t>(3, longestBacktickRun(r.log) + 1), '`');
            md << "\n"
               << fence << "\n"
               << r.log << (r.log.back() == '\n' ? "" : "\n") << fence << "\n";
        }
        md << "\n";
    }

    md << "\n## Per operation\n\n| operation | passed | failed | unsupported "
          "|\n|---|---:|---:|---:|\n";
    for (const auto& [op, t] : s.byOperation)
        md << "| " << op << " | " << t.passed << " | " << t.failed << " | " << t.unsupported
           << " |\n";

    md << "\n## NPU\n\n";
    if (const std::string note = npuNote(run, s); !note.empty()) {
        md << note << "\n";
        return;
    }
    md << "Total " << s.npuCycles << " NPU cycles.\n\n"
       << "| operation | layers | cycles | MACs | utilization |\n|---|---:|---:|---:|---:|\n";
    for (const auto& [op, f] : s.npuByOperation) {
        md << "| " << op << " | " << f.layers << " | " << f.cycles << " | " << f.macs << " | "
           << percent(utilizationOf(f.macs, f.cycles)) << " |\n";
    }
    for (size_t c = 0; c < s.charted.size(); ++c) {
        const ItemResult& r = run.results[s.charted[c]];
        md << "\n### " << mdText(titleOf(r)) << "\n\n"
           << r.npuCycles << " NPU cycles over " << r.layers.size()
           << " layers on the NPU.\n\n![per-layer cycles and utilization](layers-" << c
           << ".svg)\n";
    }
}

void writeHtml(std::ostream& html, const RegressRun& run, const Summary& s,
               const std::string& commandLine, const std::vector<std::string>& charts,
               const Links& links) {
    auto link = [&](const std::string& path) { return links.to(path); };
    html << "<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\"><title>nncosim "
            "regression</title>\n<style>"
            "body{font-family:sans-serif;margin:2em;max-width:1200px}table{border-collapse:"
            "collapse;margin:1em 0}"
            "td,th{border:1px solid #ccc;padding:3px 8px}td.n{text-align:right}.failed{color:#c00}"
            ".passed{color:#070}pre{background:#f4f4f4;padding:8px;overflow-x:auto}code{background:"
            "#f4f4f4}"
            "</style></head><body>\n<h1>nncosim regression</h1>\n<p><code>"
         << xmlEscape(commandLine) << "</code></p>\n<p><b class=\""
         << (run.ok() ? "passed\">PASSED" : "failed\">FAILED")
         << "</b>: " << xmlEscape(headline(run)) << ".</p>\n"
         << "<table><tr><th>kind</th><th>passed</th><th>failed</th><th>unsupported</th></tr>\n";
    for (const auto& [kind, t] : s.byKind) {
        html << "<tr><td>" << kind << "</td><td class=n>" << t.passed << "</td><td class=n>"
             << t.failed << "</td><td class=n>" << t.unsupported << "</td></tr>\n";
    }
    html << "</table>\n<h2>Failures</h2>\n";
    if (s.failures.empty()) html << "<p>None.</p>\n";
    for (size_t i : s.failures) {
        const ItemResult& r = run.results[i];
        html << "<h3 class=failed><code>" << xmlEscape(r.id) << "</code></h3>\n<p>"
             << xmlEscape(r.message) << "</p>\n<ul>";
        if (!r.description.empty()) html << "<li>drawn: " << xmlEscape(r.description) << "</li>";
        if (r.seed) html << "<li>seed: " << *r.seed << "</li>";
        if (!r.divergence.empty())
            html << "<li>first divergence: " << xmlEscape(r.divergence) << "</li>";
        if (!r.waves.empty()) {
            html << "<li>waves: <a href=\"" << xmlEscape(link(r.waves)) << "\">"
                 << xmlEscape(fileName(r.waves)) << "</a>, GTKWave save file <a href=\""
                 << xmlEscape(link(r.wavesSave)) << "\">" << xmlEscape(fileName(r.wavesSave))
                 << "</a>, the operation alone: <a href=\"" << xmlEscape(link(r.reproducer))
                 << "\">" << xmlEscape(fileName(r.reproducer)) << "</a></li>";
        }
        html << "<li>" << rerunLabel(r) << ": <code>" << xmlEscape(rerunCommand(run.options, r.id))
             << "</code></li></ul>\n";
        if (!r.wavesPicture.empty()) {
            html << "<p><img alt=\"waves\" style=\"max-width:100%\" src=\""
                 << xmlEscape(link(r.wavesPicture)) << "\"></p>\n";
        }
        if (!r.log.empty())
            html << "<details><summary>worker output</summary><pre>" << xmlEscape(r.log)
                 << "</pre></details>\n";
    }
    html << "<h2>Per operation</h2>\n<table><tr><th>operation</th><th>passed</th><th>failed</th>"
            "<th>unsupported</th></tr>\n";
    for (const auto& [op, t] : s.byOperation) {
        html << "<tr><td>" << op << "</td><td class=n>" << t.passed << "</td><td class=\"n"
             << (t.failed ? " failed" : "") << "\">" << t.failed << "</td><td class=n>"
             << t.unsupported << "</td></tr>\n";
    }
    html << "</table>\n<h2>NPU</h2>\n";
    if (const std::string note = npuNote(run, s); !note.empty()) {
        html << "<p>" << xmlEscape(note) << "</p>\n";
    } else {
        html << "<p>Total " << s.npuCycles
             << " NPU cycles.</p>\n<table><tr><th>operation</th><th>layers</th>"
                "<th>cycles</th><th>MACs</th><th>utilization</th></tr>\n";
        for (const auto& [op, f] : s.npuByOperation) {
            html << "<tr><td>" << op << "</td><td class=n>" << f.layers << "</td><td class=n>"
                 << f.cycles << "</td><td class=n>" << f.macs << "</td><td class=n>"
                 << percent(utilizationOf(f.macs, f.cycles)) << "</td></tr>\n";
        }
        html << "</table>\n";
        for (const std::string& chart : charts) html << "<div>" << chart << "</div>\n";
    }
    html << "</body></html>\n";
}

}  // namespace

Status writeRegressJUnit(const std::string& path, const RegressRun& run) {
    std::vector<JUnitCase> cases;
    for (const ItemResult& r : run.results) {
        JUnitCase c;
        if (r.kind == RegressKind::kRandom) {
            c.suite =
                "random." + (r.operations.empty() ? std::string("unknown") : r.operations.front());
            c.name = r.id;
        } else if (auto item = parseItemId(r.id)) {
            const std::filesystem::path file(item->file);
            c.suite = r.kind == RegressKind::kModel
                          ? "model." + file.stem().string()
                          : file.parent_path().filename().string() + "." + file.stem().string();
            c.name = item->test;
        } else {
            c.suite = kindName(r.kind);
            c.name = r.id;
        }
        c.seconds = r.seconds;
        c.failed = r.verdict == Verdict::FAILED;
        c.skipped = r.verdict == Verdict::UNSUPPORTED;
        c.message = r.message;
        if (c.failed) {
            if (r.seed) c.message += "; seed " + std::to_string(*r.seed);
            c.message += "; " + rerunLabel(r) + ": " + rerunCommand(run.options, r.id);
            c.details = r.log;
        }
        cases.push_back(std::move(c));
    }
    // CI often points this into a fresh artifacts folder.
    const std::filesystem::path parent = std::filesystem::path(path).parent_path();
    std::error_code ec;
    if (!parent.empty()) std::filesystem::create_directories(parent, ec);
    return writeJUnit(path, "nncosim.regress." + run.options.worker.backend, cases);
}

Status writeRegressReport(const std::string& dir, const RegressRun& run,
                          const std::string& commandLine) {
    namespace fs = std::filesystem;
    std::error_code ec;
    fs::create_directories(dir, ec);
    if (ec) return fail(ErrorStatus::GENERAL_FAILURE, "cannot create ", dir, ": ", ec.message());
    const Summary s = summarize(run);

    std::vector<std::string> charts;
    for (size_t c = 0; c < s.charted.size(); ++c) {
        charts.push_back(layerChartSvg(run.results[s.charted[c]]));
        NN_RETURN_IF_ERROR(writeOutputFile(
            (fs::path(dir) / ("layers-" + std::to_string(c) + ".svg")).string(), charts.back()));
    }
    std::ostringstream md, html;
    const Links links{dir};
    writeMarkdown(md, run, s, commandLine, links);
    writeHtml(html, run, s, commandLine, charts, links);
    if (run.coverage) {
        const std::string coverage = coverageMarkdown(*run.coverage);
        md << "\n" << coverage;
        // Before </body>: the same text, preformatted.
        std::string page = html.str();
        page.insert(page.rfind("</body>"),
                    "<h2>RTL coverage</h2>\n<pre>" + xmlEscape(coverage) + "</pre>\n");
        html.str(page);
    }
    NN_RETURN_IF_ERROR(writeOutputFile((fs::path(dir) / "summary.md").string(), md.str()));
    NN_RETURN_IF_ERROR(writeOutputFile((fs::path(dir) / "index.html").string(), html.str()));

    nlohmann::json items = nlohmann::json::array();
    for (const ItemResult& r : run.results) {
        nlohmann::json j = toJson(r);
        if (r.verdict == Verdict::FAILED) j["rerun"] = rerunCommand(run.options, r.id);
        items.push_back(std::move(j));
    }
    nlohmann::json results = {{"command", commandLine},
                              {"backend", run.options.worker.backend},
                              {"seed", run.options.worker.seed},
                              {"shard", std::to_string(run.options.shardIndex) + "/" +
                                            std::to_string(run.options.shardCount)},
                              {"jobs", run.options.jobs},
                              {"workers", run.workers},
                              {"npu", run.options.worker.npu},
                              {"timeout", run.options.timeoutSeconds},
                              {"fault", run.options.worker.fault},
                              {"program", run.options.program},
                              {"seconds", run.seconds},
                              {"total", run.results.size()},
                              {"passed", run.passed},
                              {"failed", run.failed},
                              {"unsupported", run.unsupported},
                              {"items", items}};
    if (run.coverage) results["coverage"] = toJson(*run.coverage);
    return writeOutputFile((fs::path(dir) / "results.json").string(), results.dump(1) + "\n");
}

Result<RegressRun> mergeRegressReports(const std::vector<std::string>& dirs) {
    if (dirs.empty()) return invalidArgument("nothing to merge: give report directories");
    RegressRun merged;
    std::set<std::string> seen;
    for (size_t d = 0; d < dirs.size(); ++d) {
        const std::string path = (std::filesystem::path(dirs[d]) / "results.json").string();
        std::ifstream in(path);
        if (!in) return invalidArgument(dirs[d], ": no results.json (not a regress report?)");
        const nlohmann::json j = nlohmann::json::parse(in, nullptr, false);
        if (j.is_discarded() || !j.is_object() || !j.contains("items"))
            return invalidArgument(path, ": not a regress results file");
        try {
            const std::string backend = j.at("backend").get<std::string>();
            const auto seed = j.at("seed").get<uint32_t>();
            if (d == 0) {
                merged.options.worker.backend = backend;
                merged.options.worker.seed = seed;
                merged.options.worker.npu = j.value("npu", merged.options.worker.npu);
                merged.options.worker.fault = j.value("fault", std::string());
                merged.options.timeoutSeconds = j.value("timeout", merged.options.timeoutSeconds);
                merged.options.program = j.value("program", merged.options.program);
                merged.options.jobs = 0;
            } else if (backend != merged.options.worker.backend ||
                       seed != merged.options.worker.seed) {
                return invalidArgument(path, ": backend ", backend, " seed ", seed,
                                       " differs from the first directory's (backend ",
                                       merged.options.worker.backend, " seed ",
                                       merged.options.worker.seed, "): not one regression");
            }
            merged.options.jobs += j.at("jobs").get<unsigned>();
            merged.workers += j.value("workers", j.at("jobs").get<unsigned>());
            // Shards run side by side: the merged run took as long as the slowest.
            merged.seconds = std::max(merged.seconds, j.at("seconds").get<double>());
            for (const nlohmann::json& item : j.at("items")) {
                auto r = itemResultFromJson(item);
                if (!r) return invalidArgument(path, ": ", r.status().message);
                if (!seen.insert(r->id).second)
                    return invalidArgument(path, ": item ", r->id,
                                           " is in another directory too: not disjoint shards");
                merged.results.push_back(std::move(*r));
            }
        } catch (const nlohmann::json::exception& e) {
            return invalidArgument(path, ": ", e.what());
        }
    }
    std::sort(merged.results.begin(), merged.results.end(),
              [](const ItemResult& a, const ItemResult& b) { return a.id < b.id; });
    for (const ItemResult& r : merged.results) {
        ++(r.verdict == Verdict::PASSED   ? merged.passed
           : r.verdict == Verdict::FAILED ? merged.failed
                                          : merged.unsupported);
    }
    return merged;
}

}  // namespace nncosim
