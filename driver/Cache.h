// Compilation cache files: the compiled program in the model cache (security-sensitive) and the
// constants in the data cache, authenticated together with a keyed MAC.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "driver/HalTypes.h"
#include "driver/Program.h"

namespace nncosim::driver {

/// The device's secret key of the cache MAC (HMAC-SHA256).
using CacheKey = std::array<uint8_t, 32>;

/// A fresh random key (from the kernel's CSPRNG).
CacheKey randomCacheKey();

/// The key kept in `path`: read when the file exists (it must hold exactly the key and be
/// readable by its owner only), else created there with a fresh key and mode 0600. So caches
/// survive a restart of the driver. Fails with GENERAL_FAILURE naming the file and the problem.
Result<CacheKey> loadOrCreateCacheKey(const std::string& path);

/// Exactly one model-cache file and one data-cache file per prepared model.
inline constexpr uint32_t kNumModelCacheFiles = 1;
inline constexpr uint32_t kNumDataCacheFiles = 1;

struct CacheContents {
    std::vector<uint8_t> program;    ///< model cache payload
    std::vector<uint8_t> constants;  ///< data cache payload
};

/// Writes `contents`, compiled for `target`, to the two files (each truncated first, written at
/// offset 0 whatever the descriptors' offsets). The model cache holds a header (with `target`),
/// the program, the SHA-256 of the constants and HMAC-SHA256(key, token ‖ everything before the
/// MAC).
Status saveToCache(const CacheKey& key, const CacheToken& token, const CacheContents& contents,
                   int modelCacheFd, int dataCacheFd,
                   const CompilerTarget& target = kCompilerTarget);

/// Reads back what saveToCache wrote. Contents compiled for another target than this driver's
/// (kCompilerTarget: another compiler version or NPU geometry, e.g. a cache written before an
/// upgrade with the same key file) fail with GENERAL_FAILURE naming both, so the framework
/// compiles the model again. Any difference — a flipped bit, appended or
/// missing bytes in either file, another token or key — fails with GENERAL_FAILURE; nothing is
/// trusted before the MAC and the constants' digest check out.
Result<CacheContents> loadFromCache(const CacheKey& key, const CacheToken& token, int modelCacheFd,
                                    int dataCacheFd);

}  // namespace nncosim::driver
