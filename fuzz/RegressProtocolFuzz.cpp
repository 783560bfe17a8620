// Fuzz target: the regression's worker protocol. Any bytes as an item id must travel as exactly
// one command line and come back unchanged (a newline in a test name once split one item into
// two and hid a failure); any bytes as a received line must decode or be refused, never throw.
#include <cstdlib>
#include <string>

#include "fuzz/FuzzCommon.h"
#include "testbench/RegressProtocol.h"

using namespace nncosim;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    const std::string bytes(reinterpret_cast<const char*>(data), size);
    const std::string line = encodeItemCommand(bytes);
    if (line.empty() || line.back() != '\n' || line.find('\n') != line.size() - 1) std::abort();
    const auto back = decodeItemCommand(line.substr(0, line.size() - 1));
    // Invalid UTF-8 is replaced on the way; valid text must arrive as it was sent.
    if (!back) std::abort();
    if (encodeItemCommand(*back) != line) std::abort();
    (void)decodeItemCommand(bytes);
    return 0;
}
