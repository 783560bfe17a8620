// RTL coverage tooling (testbench/Coverage.h) on coverage files written here in Verilator's
// format: the summary per kind, waivers, and a hole that a second run's data closes once merged
// by verilator_coverage.
#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>

#include "testbench/Coverage.h"

using namespace nncosim;

namespace {

struct Point {
    const char* page;  // v_line/..., v_toggle/..., v_user/...
    const char* hierarchy;
    const char* comment;
    int line;
    uint64_t count;
};

/// A coverage file in Verilator's format, its points in a source file of 700 lines beside it
/// (verilator_coverage annotates it).
std::string writeData(const std::filesystem::path& path, const std::vector<Point>& points) {
    const auto source = path.parent_path() / "npu_cmd.sv";
    std::ofstream text(source);
    for (int line = 1; line <= 700; ++line) text << "// line " << line << "\n";
    std::ofstream out(path);
    out << "# SystemC::Coverage-3\n";
    for (const Point& p : points) {
        out << "C '\001t\002" << (std::string(p.page).substr(2, 4)) << "\001page\002" << p.page
            << "\001f\002" << source.string() << "\001l\002" << p.line << "\001n\0020\001o\002"
            << p.comment << "\001h\002" << p.hierarchy << "' " << p.count << "\n";
    }
    return path.string();
}

const std::vector<Point> kRun = {
    {"v_user/npu_cmd", "TOP.npu_top.u_cmd.g_opcode[1]", "accepted", 600, 12},
    {"v_user/npu_cmd", "TOP.npu_top.u_cmd", "watchdog_fired", 640, 0},
    {"v_user/npu_cmd", "TOP.npu_top.u_cmd.g_opcode[0]", "signed_input", 610, 0},
    {"v_line/npu_cmd", "TOP.npu_top.u_cmd", "block", 100, 7},
    {"v_line/npu_cmd", "TOP.npu_top.u_cmd", "if", 120, 0},
    {"v_toggle/npu_cmd", "TOP.npu_top.u_cmd", "busy_o", 30, 2},
    {"v_toggle/npu_cmd", "TOP.npu_top.u_cmd", "error_o", 31, 0},
};

}  // namespace

TEST_CASE("coverage_summary_counts_holes_and_waivers") {
    const auto dir = std::filesystem::temp_directory_path() / "nncosim_coverage_summary";
    std::filesystem::create_directories(dir);
    auto points = readCoverageFile(writeData(dir / "run.dat", kRun));
    REQUIRE_MESSAGE(points.ok(), points.status().message);
    REQUIRE(points->size() == 7);
    CHECK((*points)[0].kind == CoverageKind::kFunctional);
    CHECK((*points)[0].name == "npu_top.u_cmd.g_opcode[1].accepted");

    const std::vector<CoverageWaiver> waivers = {
        {"*g_opcode[0].signed_input", "NOP has no input tensor"}};
    const CoverageSummary s = summarizeCoverage(*points, waivers);
    CHECK(s.functional.points == 3);
    CHECK(s.functional.hit == 1);
    CHECK(s.functional.waived == 1);
    CHECK(s.line.points == 2);
    CHECK(s.line.hit == 1);
    CHECK(s.toggle.hit == 1);
    // Holes: the functional one first; the waived one apart, with its reason, never covered.
    REQUIRE(s.holes.size() == 3);
    CHECK(s.holes[0].name == "npu_top.u_cmd.watchdog_fired");
    REQUIRE(s.waived.size() == 1);
    CHECK(s.waived[0].second == "NOP has no input tensor");
    CHECK(*s.functional.percent() == doctest::Approx(100.0 / 3));
    const std::string md = coverageMarkdown(s);
    CHECK(md.find("watchdog_fired") != std::string::npos);
    CHECK(md.find("Waived holes (1)") != std::string::npos);
    CHECK(toJson(s)["functional"]["waived"] == 1);
    std::filesystem::remove_all(dir);
}

TEST_CASE("coverage_merge_closes_a_hole_another_run_hits") {
    const auto dir = std::filesystem::temp_directory_path() / "nncosim_coverage_merge";
    std::filesystem::remove_all(dir);
    std::filesystem::create_directories(dir / "data");
    writeData(dir / "data" / "first.dat", kRun);
    auto alone = mergeCoverage({(dir / "data").string()}, (dir / "out1").string(), "");
    REQUIRE_MESSAGE(alone.ok(), alone.status().message);
    CHECK(alone->dataFiles == 1);
    const auto isWatchdog = [](const CoveragePoint& p) {
        return p.name == "npu_top.u_cmd.watchdog_fired";
    };
    CHECK(std::any_of(alone->holes.begin(), alone->holes.end(), isWatchdog));

    // A second run (a test aimed at the hole) fires the watchdog: merged, the hole is gone.
    std::vector<Point> aimed = kRun;
    for (Point& p : aimed) p.count = std::string(p.comment) == "watchdog_fired" ? 1 : 0;
    writeData(dir / "data" / "second.dat", aimed);
    auto merged = mergeCoverage({(dir / "data").string()}, (dir / "out2").string(), "");
    REQUIRE_MESSAGE(merged.ok(), merged.status().message);
    CHECK(merged->dataFiles == 2);
    CHECK(merged->functional.hit == 2);
    CHECK_FALSE(std::any_of(merged->holes.begin(), merged->holes.end(), isWatchdog));
    CHECK(std::filesystem::exists(dir / "out2" / "merged.dat"));
    CHECK(std::filesystem::exists(dir / "out2" / "summary.json"));
    CHECK(std::filesystem::exists(dir / "out2" / "annotated"));
    // Over the whole tree the two runs count once: out1/ and out2/ hold merges (merged.dat) of
    // the same files, skipped.
    auto again = mergeCoverage({dir.string()}, (dir / "out3").string(), "");
    REQUIRE_MESSAGE(again.ok(), again.status().message);
    CHECK(again->dataFiles == 2);
    // What `regress --coverage-from` aims random tests at: the first run's functional holes.
    auto holes = readFunctionalHoles((dir / "out1" / "summary.json").string());
    REQUIRE_MESSAGE(holes.ok(), holes.status().message);
    CHECK(*holes == std::vector<std::string>{"npu_top.u_cmd.g_opcode[0].signed_input",
                                             "npu_top.u_cmd.watchdog_fired"});
    std::filesystem::remove_all(dir);
}

TEST_CASE("coverage_bad_inputs_are_named") {
    const auto dir = std::filesystem::temp_directory_path() / "nncosim_coverage_bad";
    std::filesystem::remove_all(dir);
    std::filesystem::create_directories(dir);
    auto empty = mergeCoverage({dir.string()}, (dir / "out").string(), "");
    REQUIRE_FALSE(empty.ok());
    CHECK(empty.status().message.find("NNCOSIM_COVERAGE") != std::string::npos);
    std::ofstream(dir / "waivers.txt") << "# comment\n*.accepted\n";
    auto waivers = readCoverageWaivers((dir / "waivers.txt").string());
    REQUIRE_FALSE(waivers.ok());
    CHECK(waivers.status().message.find(":2:") != std::string::npos);
    std::ofstream(dir / "bad.dat") << "# SystemC::Coverage-3\nnot a point\n";
    auto bad = readCoverageFile((dir / "bad.dat").string());
    REQUIRE_FALSE(bad.ok());
    CHECK(bad.status().message.find("bad.dat:2") != std::string::npos);
    std::ofstream(dir / "summary.json") << R"({"holes": [{"kind": "functional"}]})";
    auto holes = readFunctionalHoles((dir / "summary.json").string());
    REQUIRE_FALSE(holes.ok());
    CHECK(holes.status().message.find("without a kind and a name") != std::string::npos);
    CHECK_FALSE(readFunctionalHoles((dir / "bad.dat").string()).ok());
    std::filesystem::remove_all(dir);
}

TEST_CASE("coverage_hostile_waivers_and_data") {
    // Waiver patterns are matched without recursion: 26 stars against a long name, and 300,000
    // stars, end at once (a recursive matcher took minutes on the first, overflowed the stack on
    // the second).
    CoveragePoint p;
    p.kind = CoverageKind::kFunctional;
    p.name = std::string(60, 'a');
    std::vector<CoveragePoint> points(1, p);
    CHECK(summarizeCoverage(points, {{std::string(26, '*') + "b", "never"}}).holes.size() == 1);
    CHECK(summarizeCoverage(points, {{std::string(300000, '*'), "all"}}).functional.waived == 1);
    CHECK(summarizeCoverage(points, {{"a*a?a*", "glob"}}).functional.waived == 1);
    CHECK(summarizeCoverage(points, {{"a*b*", "glob"}}).holes.size() == 1);

    // Random bytes or an empty file are not coverage data, and no data is never 100 %.
    const auto dir = std::filesystem::temp_directory_path() / "nncosim_coverage_hostile";
    std::filesystem::remove_all(dir);
    std::filesystem::create_directories(dir / "in");
    std::ofstream(dir / "in" / "random.dat", std::ios::binary) << std::string("\x07\xc8\nC '", 6);
    auto random = mergeCoverage({(dir / "in").string()}, (dir / "out").string(), "");
    REQUIRE_FALSE(random.ok());
    CHECK(random.status().message.find("random.dat: not a Verilator coverage file") !=
          std::string::npos);
    std::filesystem::remove(dir / "in" / "random.dat");
    std::ofstream(dir / "in" / "empty.dat").close();
    CHECK_FALSE(mergeCoverage({(dir / "in").string()}, (dir / "out").string(), "").ok());
    std::filesystem::remove(dir / "in" / "empty.dat");
    std::ofstream(dir / "in" / "header.dat") << "# SystemC::Coverage-3\n";
    auto none = mergeCoverage({(dir / "in").string()}, (dir / "out").string(), "");
    REQUIRE_FALSE(none.ok());
    CHECK(none.status().message.find("no coverage data") != std::string::npos);
    CHECK_FALSE(CoverageTotals{}.percent().has_value());
    CHECK(formatPercent(CoverageTotals{}) == "n/a");
    std::filesystem::remove_all(dir);
}
