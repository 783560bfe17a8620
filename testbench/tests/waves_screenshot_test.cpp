// GTKWave screenshots of waves in folders a user named: no path reaches Tcl, so no name can run
// a command or stall GTKWave, and the picture still lands where it was asked for.
#include <doctest/doctest.h>

#include <filesystem>
#include <string>
#include <vector>

#include "testbench/WaveScreenshot.h"
#include "testbench/tests/TestModels.h"

using namespace nncosim;
using namespace nncosim::testing;
namespace fs = std::filesystem;

TEST_CASE("waves_screenshot_names_reach_no_tcl") {
    const std::string dir = makeTempDir("nncosim-grab-test-");
    // A small dump and its view from a real run.
    const CliResult dump = cli(dir, "run " + std::string(NNCOSIM_SOURCE_DIR) +
                                        "/testbench/samples/conv_quant8.json --backend npu "
                                        "--trace base.fst --trace-cycles 200");
    INFO(dump.output);
    REQUIRE(dump.status == 0);
    REQUIRE(fs::exists(dir + "/base.fst.gtkw"));
    // One folder per character class Tcl gives meaning to, and the reported injection; a
    // command that ran would leave INJECTED in the test's folder.
    const std::string marker = dir + "/INJECTED";
    const std::vector<std::string> names = {
        "open{brace",  "close}brace",      "bracket[exec touch " + marker + "]",
        "end]bracket", "dollar$env(HOME)", "quote\"q",
        "back\\slash", "a space",          "w/a} [exec touch " + marker + "] {"};
    for (const std::string& name : names) {
        CAPTURE(name);
        const fs::path folder = fs::path(dir) / name;
        fs::create_directories(folder);
        fs::copy_file(dir + "/base.fst", folder / "op.fst");
        fs::copy_file(dir + "/base.fst.gtkw", folder / "op.fst.gtkw");
        const fs::path png = folder / "op.png";
        CHECK(grabWaveScreenshot((folder / "op.fst").string(), (folder / "op.fst.gtkw").string(),
                                 "gtkwave::/Time/Zoom/Zoom_Full\n", png.string(),
                                 (folder / "op.png.log").string(), 60));
        CHECK(fs::exists(png));
        CHECK((fs::exists(png) && fs::file_size(png) > 0));
    }
    CHECK_FALSE(fs::exists(marker));
    fs::remove_all(dir);
}
