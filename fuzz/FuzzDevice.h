// Shared by the fuzz targets that go through the driver: one device per process on the NPU's
// functional model (sim/FunctionalNpu.h), with a fixed cache key so a target can write caches
// the device accepts, cache files, and requests in shared memory.
#pragma once

#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>

#include "driver/Callbacks.h"
#include "driver/IPreparedModel.h"
#include "driver/NpuDevice.h"
#include "fuzz/FuzzCommon.h"
#include "model/RequestIo.h"
#include "sim/FunctionalNpu.h"

namespace nncosim::fuzz {

/// The key of functionalDevice()'s cache MAC.
inline driver::CacheKey fuzzCacheKey() {
    driver::CacheKey key{};
    for (size_t i = 0; i < key.size(); ++i) key[i] = static_cast<uint8_t>(i);
    return key;
}

/// The process's device on a functional NPU with 32 MB of DRAM (enough for every small model,
/// cheap under AddressSanitizer).
inline const driver::IDevice& functionalDevice() {
    static const driver::SharedDevice device = [] {
        sim::FunctionalNpuConfig config;
        config.dramBytes = 32ull << 20;
        driver::DeviceOptions options;
        options.cacheKey = fuzzCacheKey();
        auto made = driver::makeNpuDevice(std::make_shared<sim::FunctionalNpu>(config), options);
        if (!made) std::abort();
        return *made;
    }();
    return *device;
}

/// A request with one shared-memory pool per argument: each input holds `inputs[i]` with its
/// dimensions (NO_VALUE when it has neither dimensions nor bytes), each output `outputBytes[i]`
/// bytes.
inline Result<Request> requestInSharedMemory(const std::vector<TensorData>& inputs,
                                             const std::vector<uint32_t>& outputBytes) {
    Request request;
    auto addPool = [&](const std::vector<uint8_t>& bytes, size_t size) -> Result<uint32_t> {
        auto memory = Memory::create(std::max<size_t>(size, 1), "fuzz-request");
        if (!memory) return memory.status();
        if (!bytes.empty()) std::memcpy((*memory)->data(), bytes.data(), bytes.size());
        request.pools.push_back(*memory);
        return static_cast<uint32_t>(request.pools.size() - 1);
    };
    for (const TensorData& input : inputs) {
        Request::Argument arg;
        if (input.bytes.empty() && input.dimensions.empty()) {
            arg.lifetime = Request::Argument::LifeTime::NO_VALUE;
        } else {
            auto pool = addPool(input.bytes, input.bytes.size());
            if (!pool) return pool.status();
            arg.location.poolIndex = *pool;
            arg.location.length = static_cast<uint32_t>(input.bytes.size());
            arg.dimensions = input.dimensions;
        }
        request.inputs.push_back(arg);
    }
    for (uint32_t size : outputBytes) {
        auto pool = addPool({}, size);
        if (!pool) return pool.status();
        Request::Argument arg;
        arg.location.poolIndex = *pool;
        arg.location.length = size;
        request.outputs.push_back(arg);
    }
    return request;
}

/// The token functionalDevice()'s caches are written with.
inline driver::CacheToken fuzzCacheToken() {
    driver::CacheToken token{};
    for (size_t i = 0; i < token.size(); ++i) token[i] = static_cast<uint8_t>(0xa0 + i);
    return token;
}

/// A fuzz input of the device_cache target as the model-cache payload and the constants: a
/// 32-bit little-endian payload size, the payload, then the constants.
inline driver::CacheContents cacheContentsOf(const uint8_t* data, size_t size) {
    ByteReader in(data, size);
    driver::CacheContents contents;
    contents.program = in.bytes(in.u32());
    contents.constants = in.rest();
    return contents;
}
inline std::vector<uint8_t> cacheInputOf(const driver::CacheContents& contents) {
    std::vector<uint8_t> out;
    for (int i = 0; i < 4; ++i)
        out.push_back(static_cast<uint8_t>(contents.program.size() >> (8 * i)));
    out.insert(out.end(), contents.program.begin(), contents.program.end());
    out.insert(out.end(), contents.constants.begin(), contents.constants.end());
    return out;
}

/// Anonymous files (memfd) for the device's one model-cache and one data-cache file.
class CacheFiles {
  public:
    CacheFiles() {
        for (int& fd : mFds) {
            fd = memfd_create("fuzz-cache", MFD_CLOEXEC);
            if (fd < 0) std::abort();
        }
    }
    ~CacheFiles() {
        for (int fd : mFds) close(fd);
    }
    CacheFiles(const CacheFiles&) = delete;
    CacheFiles& operator=(const CacheFiles&) = delete;
    int modelFd() const { return mFds[0]; }
    int dataFd() const { return mFds[1]; }
    std::vector<driver::SharedHandle> model() const { return {handle(mFds[0])}; }
    std::vector<driver::SharedHandle> data() const { return {handle(mFds[1])}; }

  private:
    static driver::SharedHandle handle(int fd) {
        auto h = driver::makeSharedHandle(fd);
        if (!h) std::abort();
        return *h;
    }
    int mFds[2];
};

}  // namespace nncosim::fuzz
