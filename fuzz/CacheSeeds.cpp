// fuzz_cache_seeds OUT_DIR CTS.json...: writes the device_cache target's seeds. Each file's first
// test is prepared with caching on the fuzz targets' device, the cache read back, and its
// contents written to OUT_DIR/<file stem>.bin in the target's input format (cacheInputOf).
// Built on demand only: cmake --build build --target fuzz_cache_seeds.
#include <filesystem>
#include <fstream>
#include <iostream>

#include "fuzz/FuzzDevice.h"
#include "model/CtsReader.h"

using namespace nncosim;

int main(int argc, char** argv) {
    if (argc < 3) {
        std::cerr << "usage: fuzz_cache_seeds OUT_DIR CTS.json...\n";
        return 2;
    }
    for (int a = 2; a < argc; ++a) {
        auto file = readCtsFile(argv[a]);
        if (!file || file->tests.empty()) {
            std::cerr << argv[a] << ": " << (file ? "no test" : file.status().message) << "\n";
            return 1;
        }
        fuzz::CacheFiles files;
        auto prepared = driver::prepareModelBlocking(
            fuzz::functionalDevice(), file->tests.front().model, kDefaultExecutionPreference,
            kDefaultPriority, {}, files.model(), files.data(), fuzz::fuzzCacheToken());
        auto contents = prepared
                            ? driver::loadFromCache(fuzz::fuzzCacheKey(), fuzz::fuzzCacheToken(),
                                                    files.modelFd(), files.dataFd())
                            : Result<driver::CacheContents>(prepared.status());
        if (!contents) {
            std::cerr << argv[a] << ": " << contents.status().message << "\n";
            return 1;
        }
        const auto path = std::filesystem::path(argv[1]) /
                          (std::filesystem::path(argv[a]).stem().string() + ".bin");
        const auto bytes = fuzz::cacheInputOf(*contents);
        std::ofstream(path, std::ios::binary)
            .write(reinterpret_cast<const char*>(bytes.data()), static_cast<long>(bytes.size()));
        std::cout << path.string() << ": " << bytes.size() << " bytes\n";
    }
    return 0;
}
