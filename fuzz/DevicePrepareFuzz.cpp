// Fuzz target: the device's model path. CTS JSON bytes -> parseCtsJson -> for every readable
// test, through the driver on the NPU's functional model: getSupportedOperations, prepareModel
// (validation, declared shapes, support, compilation, device memory) and, when it prepares and
// its tensors are small, one execution with the test's inputs.
#include <string>

#include "fuzz/FuzzDevice.h"
#include "model/CtsReader.h"

using namespace nncosim;

namespace {

// Output buffers: the expected output's size, else the declared one, at most the fuzz limit.
std::vector<uint32_t> outputSizes(const CtsTest& test) {
    std::vector<uint32_t> sizes;
    for (size_t i = 0; i < test.model.main.outputIndexes.size(); ++i) {
        const Operand& o = test.model.main.operands[test.model.main.outputIndexes[i]];
        uint64_t size = i < test.expectedOutputs.size() ? test.expectedOutputs[i].bytes.size() : 0;
        if (size == 0) size = byteSize(o.type, o.dimensions);
        sizes.push_back(static_cast<uint32_t>(std::min<uint64_t>(size, fuzz::kExecuteLimitBytes)));
    }
    return sizes;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    const std::string text(reinterpret_cast<const char*>(data), size);
    Result<CtsFile> file = parseCtsJson(text, "fuzz.json");
    if (!file.ok()) return 0;
    const driver::IDevice& device = fuzz::functionalDevice();
    for (const CtsTest& test : file.value().tests) {
        if (!test.readError.empty()) continue;
        auto supported = device.getSupportedOperations(test.model);
        auto prepared = driver::prepareModelBlocking(device, test.model);
        if (!prepared.ok()) continue;
        if (!supported.ok()) std::abort();  // an invalid model must never prepare
        if (!checkMemoryLimit(test.model, fuzz::kExecuteLimitBytes).ok()) continue;
        auto request = fuzz::requestInSharedMemory(test.inputs, outputSizes(test));
        if (!request.ok()) continue;
        (void)(*prepared)->execute(*request, MeasureTiming::YES, {}, fuzz::kLoopTimeout);
    }
    return 0;
}
