// Fuzz target: the model JSON writer. CTS JSON bytes -> parseCtsJson -> toCtsJson of every
// readable test -> parseCtsJson again, which must read back what the writer wrote.
#include <cstdlib>
#include <string>

#include "fuzz/FuzzCommon.h"
#include "model/CtsReader.h"
#include "model/ModelJson.h"

using namespace nncosim;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    const std::string text(reinterpret_cast<const char*>(data), size);
    Result<CtsFile> file = parseCtsJson(text, "fuzz.json");
    if (!file.ok()) return 0;
    for (const CtsTest& test : file.value().tests) {
        if (!test.readError.empty()) continue;
        Result<std::string> json = toCtsJson(test);
        if (!json.ok()) continue;
        // What the writer produced is a CTS file with exactly one readable test.
        Result<CtsFile> again = parseCtsJson(json.value(), "fuzz-roundtrip.json");
        if (!again.ok() || again.value().tests.size() != 1 ||
            !again.value().tests[0].readError.empty())
            std::abort();
    }
    return 0;
}
