// JUnit XML, the test report format CI systems read.
#pragma once

#include <string>
#include <vector>

#include "model/Status.h"

namespace nncosim {

struct JUnitCase {
    std::string suite;  ///< becomes the classname, e.g. "V1_0.conv_quant8"
    std::string name;
    double seconds = 0.0;
    bool failed = false;
    bool skipped = false;
    std::string message;  ///< failure or skip reason
    std::string details =
        {};  ///< failure body text (e.g. the output of a crashed run); may be empty
};

/// Writes one <testsuite> named `suiteName` holding every case (see writeOutputFile).
Status writeJUnit(const std::string& path, const std::string& suiteName,
                  const std::vector<JUnitCase>& cases);

}  // namespace nncosim
