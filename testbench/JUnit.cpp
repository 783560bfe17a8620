#include "testbench/JUnit.h"

#include <sstream>

#include "model/OutputFile.h"

namespace nncosim {
namespace {

std::string escape(const std::string& s) {
    std::string out;
    out.reserve(s.size());
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
            case '\'':
                out += "&apos;";
                break;
            default:
                // XML 1.0 forbids most control characters.
                if (static_cast<unsigned char>(c) >= 0x20 || c == '\n' || c == '\t') out += c;
        }
    }
    return out;
}

}  // namespace

Status writeJUnit(const std::string& path, const std::string& suiteName,
                  const std::vector<JUnitCase>& cases) {
    size_t failures = 0, skipped = 0;
    double seconds = 0;
    for (const auto& c : cases) {
        failures += c.failed;
        skipped += c.skipped;
        seconds += c.seconds;
    }
    std::ostringstream out;
    out << "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<testsuites>\n"
        << "<testsuite name=\"" << escape(suiteName) << "\" tests=\"" << cases.size()
        << "\" failures=\"" << failures << "\" errors=\"0\" skipped=\"" << skipped << "\" time=\""
        << seconds << "\">\n";
    for (const auto& c : cases) {
        out << "  <testcase classname=\"" << escape(c.suite) << "\" name=\"" << escape(c.name)
            << "\" time=\"" << c.seconds << "\"";
        if (c.failed && !c.details.empty()) {
            out << ">\n    <failure message=\"" << escape(c.message) << "\">" << escape(c.details)
                << "</failure>\n  </testcase>\n";
        } else if (c.failed) {
            out << ">\n    <failure message=\"" << escape(c.message) << "\"/>\n  </testcase>\n";
        } else if (c.skipped) {
            out << ">\n    <skipped message=\"" << escape(c.message) << "\"/>\n  </testcase>\n";
        } else {
            out << "/>\n";
        }
    }
    out << "</testsuite>\n</testsuites>\n";
    return writeOutputFile(path, out.str());
}

}  // namespace nncosim
