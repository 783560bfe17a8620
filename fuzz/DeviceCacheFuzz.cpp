// Fuzz target: prepareModelFromCache through the device on the NPU's functional model. The
// input is a model-cache payload (priority, I/O signature, program) and its constants
// (cacheContentsOf); the target writes them as cache files sealed with the device's key, as a
// driver that had a bug, or a cache from the same key file, could have, so the device trusts the
// MAC and reads everything behind it: payload, program, constants. A model that prepares is run
// once on zero inputs of its signature's shapes, so a cached program reaches the runtime and the
// NPU model. (program_cache fuzzes the cache file format and the program reader on their own.)
#include <cstdlib>

#include "driver/NpuPreparedModel.h"
#include "fuzz/FuzzDevice.h"

using namespace nncosim;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    const driver::IDevice& device = fuzz::functionalDevice();
    fuzz::CacheFiles files;
    if (!driver::saveToCache(fuzz::fuzzCacheKey(), fuzz::fuzzCacheToken(),
                             fuzz::cacheContentsOf(data, size), files.modelFd(), files.dataFd())
             .ok())
        std::abort();
    auto prepared = driver::prepareModelFromCacheBlocking(device, {}, files.model(), files.data(),
                                                          fuzz::fuzzCacheToken());
    if (!prepared.ok()) return 0;
    const auto* npu = dynamic_cast<const driver::detail::NpuPreparedModel*>(prepared->get());
    if (!npu) std::abort();
    const Subgraph& signature = npu->model().main;
    std::vector<TensorData> inputs;
    std::vector<uint32_t> outputBytes;
    uint64_t total = 0;
    for (uint32_t k : signature.inputIndexes) {
        const Operand& o = signature.operands[k];
        const uint64_t bytes = byteSize(o.type, o.dimensions);
        if (bytes == 0 || bytes > fuzz::kExecuteLimitBytes - total) return 0;
        total += bytes;
        inputs.push_back({o.dimensions, std::vector<uint8_t>(bytes)});
    }
    for (uint32_t k : signature.outputIndexes) {
        const Operand& o = signature.operands[k];
        const uint64_t bytes = byteSize(o.type, o.dimensions);
        if (bytes > fuzz::kExecuteLimitBytes - total) return 0;
        total += bytes;
        outputBytes.push_back(static_cast<uint32_t>(bytes));
    }
    auto request = fuzz::requestInSharedMemory(inputs, outputBytes);
    if (!request.ok()) return 0;
    (void)(*prepared)->execute(*request, MeasureTiming::YES, Clock::now() + fuzz::kExecuteTimeout,
                               fuzz::kLoopTimeout);
    return 0;
}
