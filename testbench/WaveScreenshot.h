// A PNG of a waveform dump as GTKWave draws it (headless, under xvfb-run), for reports.
#pragma once

#include <string>

namespace nncosim {

/// Renders `fst` through the view `gtkw` into `png`; `tclSetup` (zoom, marker: numbers this
/// program generated, never user text) runs before the grab. GTKWave sees no path of the user's:
/// it runs in a private temporary folder on fixed names linked to the user's files, and the
/// picture is moved to `png` afterwards. `logPath` keeps GTKWave's output. Returns false when
/// GTKWave or xvfb-run is missing, fails, or draws nothing within `timeoutSeconds`.
bool grabWaveScreenshot(const std::string& fst, const std::string& gtkw,
                        const std::string& tclSetup, const std::string& png,
                        const std::string& logPath, double timeoutSeconds);

}  // namespace nncosim
