#include "testbench/WaveScreenshot.h"

#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "model/OutputFile.h"
#include "sim/ChildProcess.h"

namespace nncosim {
namespace {

bool onPath(const std::string& program) {
    const char* path = std::getenv("PATH");
    std::istringstream dirs(path ? path : "");
    for (std::string dir; std::getline(dirs, dir, ':');) {
        if (!dir.empty() && access((dir + "/" + program).c_str(), X_OK) == 0) return true;
    }
    return false;
}

/// A folder only this run uses, removed with everything in it when the object goes.
class PrivateFolder {
  public:
    PrivateFolder() {
        std::string pattern =
            (std::filesystem::temp_directory_path() / "nncosim-grab-XXXXXX").string();
        if (::mkdtemp(pattern.data())) mPath = pattern;
    }
    ~PrivateFolder() {
        std::error_code ec;
        if (!mPath.empty()) std::filesystem::remove_all(mPath, ec);
    }
    const std::string& path() const { return mPath; }

  private:
    std::string mPath;
};

}  // namespace

bool grabWaveScreenshot(const std::string& fst, const std::string& gtkw,
                        const std::string& tclSetup, const std::string& png,
                        const std::string& logPath, double timeoutSeconds) {
    if (!onPath("xvfb-run") || !onPath("gtkwave")) return false;
    PrivateFolder folder;
    if (folder.path().empty()) return false;
    namespace fs = std::filesystem;
    const fs::path here(folder.path());
    std::error_code ec;
    fs::create_symlink(fs::absolute(fst, ec), here / "dump.fst", ec);
    if (ec) return false;
    fs::create_symlink(fs::absolute(gtkw, ec), here / "view.gtkw", ec);
    if (ec) return false;
    // Relative names only: GTKWave runs in the folder.
    const std::string script =
        tclSetup + "gtkwave::/File/Grab_To_File grab.png\ngtkwave::/File/Quit\n";
    if (!writeOutputFile((here / "grab.tcl").string(), script).ok()) return false;
    const std::string log = fs::absolute(logPath, ec).string();
    sim::runChild({"xvfb-run", "-a", "gtkwave", "-a", "view.gtkw", "-S", "grab.tcl", "dump.fst"},
                  log, timeoutSeconds, folder.path());
    if (!fs::exists(here / "grab.png") || fs::file_size(here / "grab.png", ec) == 0) return false;
    std::ifstream in(here / "grab.png", std::ios::binary);
    std::ostringstream picture;
    picture << in.rdbuf();
    return in && writeOutputFile(png, picture.str()).ok();
}

}  // namespace nncosim
