// Fuzz target: the driver's compilation-cache reader and program deserializer.
//
// Input: byte 0 is n; the last min(n, size - 1) bytes are the constants (data cache) and the
// bytes between are the program (model cache payload). Each input is
//  1. given to deserializeProgram as it is;
//  2. written as raw cache files and read with loadFromCache (fails at the MAC: a fixed key);
//  3. saved with saveToCache under that key and token, loaded back (must succeed and give the
//     same bytes) and deserialized, as prepareModelFromCache does once the MAC checks out.
#include <sys/mman.h>
#include <unistd.h>

#include <cstdlib>
#include <vector>

#include "driver/Cache.h"
#include "driver/Program.h"
#include "fuzz/FuzzCommon.h"

using namespace nncosim;
using namespace nncosim::driver;

namespace {

/// An anonymous file holding `bytes` (closed by the caller).
int fileWith(const std::vector<uint8_t>& bytes) {
    const int fd = memfd_create("fuzz-cache", MFD_CLOEXEC);
    if (fd < 0) std::abort();
    size_t done = 0;
    while (done < bytes.size()) {
        const ssize_t n = write(fd, bytes.data() + done, bytes.size() - done);
        if (n <= 0) std::abort();
        done += static_cast<size_t>(n);
    }
    return fd;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    if (size == 0) return 0;
    const size_t constantsSize = std::min<size_t>(data[0], size - 1);
    const std::vector<uint8_t> program(data + 1, data + size - constantsSize);
    const std::vector<uint8_t> constants(data + size - constantsSize, data + size);

    (void)deserializeProgram(program, constants);

    CacheKey key{};
    CacheToken token{};
    for (size_t i = 0; i < key.size(); ++i) key[i] = static_cast<uint8_t>(i);
    for (size_t i = 0; i < token.size(); ++i) token[i] = static_cast<uint8_t>(0xa0 + i);
    {
        const int modelFd = fileWith(program), dataFd = fileWith(constants);
        (void)loadFromCache(key, token, modelFd, dataFd);
        close(modelFd);
        close(dataFd);
    }
    const int modelFd = fileWith({}), dataFd = fileWith({});
    if (!saveToCache(key, token, CacheContents{program, constants}, modelFd, dataFd).ok())
        std::abort();
    Result<CacheContents> loaded = loadFromCache(key, token, modelFd, dataFd);
    close(modelFd);
    close(dataFd);
    if (!loaded.ok() || loaded.value().program != program || loaded.value().constants != constants)
        std::abort();
    (void)deserializeProgram(loaded.value().program, loaded.value().constants);
    return 0;
}
