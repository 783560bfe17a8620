// The cache file format: round trip, and every modification detected as GENERAL_FAILURE.
#include <doctest/doctest.h>

#include <sys/mman.h>
#include <unistd.h>
#include <random>

#include "driver/Cache.h"

using namespace nncosim;
using namespace nncosim::driver;

namespace {

struct TempFile {
    TempFile() : fd(memfd_create("cache_test", MFD_CLOEXEC)) {}
    ~TempFile() { close(fd); }
    std::vector<uint8_t> read() const {
        std::vector<uint8_t> bytes(static_cast<size_t>(lseek(fd, 0, SEEK_END)));
        CHECK(pread(fd, bytes.data(), bytes.size(), 0) == static_cast<ssize_t>(bytes.size()));
        return bytes;
    }
    void write(const std::vector<uint8_t>& bytes) const {
        REQUIRE(ftruncate(fd, 0) == 0);
        REQUIRE(pwrite(fd, bytes.data(), bytes.size(), 0) == static_cast<ssize_t>(bytes.size()));
    }
    int fd;
};

CacheContents sampleContents() {
    CacheContents c;
    for (int i = 0; i < 300; ++i) c.program.push_back(static_cast<uint8_t>(i * 7));
    for (int i = 0; i < 1000; ++i) c.constants.push_back(static_cast<uint8_t>(i * 13 + 1));
    return c;
}

CacheToken token(uint8_t seed) {
    CacheToken t{};
    for (size_t i = 0; i < t.size(); ++i) t[i] = static_cast<uint8_t>(seed + i);
    return t;
}

}  // namespace

TEST_CASE("driver_cache_round_trip_and_truncation") {
    const CacheKey key = randomCacheKey();
    TempFile model, data;
    // Old, longer content and a non-zero file offset must not matter.
    model.write(std::vector<uint8_t>(5000, 0xAB));
    data.write(std::vector<uint8_t>(7000, 0xCD));
    lseek(model.fd, 123, SEEK_SET);
    lseek(data.fd, 77, SEEK_SET);
    const CacheContents contents = sampleContents();
    REQUIRE(saveToCache(key, token(1), contents, model.fd, data.fd).ok());
    CHECK(data.read() == contents.constants);
    auto loaded = loadFromCache(key, token(1), model.fd, data.fd);
    REQUIRE(loaded.ok());
    CHECK(loaded->program == contents.program);
    CHECK(loaded->constants == contents.constants);
}

TEST_CASE("driver_cache_detects_wrong_token_and_key") {
    const CacheKey key = randomCacheKey();
    TempFile model, data;
    REQUIRE(saveToCache(key, token(1), sampleContents(), model.fd, data.fd).ok());
    CHECK(loadFromCache(key, token(2), model.fd, data.fd).status().code ==
          ErrorStatus::GENERAL_FAILURE);
    CHECK(loadFromCache(randomCacheKey(), token(1), model.fd, data.fd).status().code ==
          ErrorStatus::GENERAL_FAILURE);
}

TEST_CASE("driver_cache_detects_every_bit_flip_and_append") {
    const CacheKey key = randomCacheKey();
    TempFile model, data;
    REQUIRE(saveToCache(key, token(3), sampleContents(), model.fd, data.fd).ok());
    const auto goodModel = model.read();
    const auto goodData = data.read();
    std::mt19937 rng(5);
    for (int trial = 0; trial < 200; ++trial) {
        auto bad = goodModel;
        const size_t bit = rng() % (bad.size() * 8);
        bad[bit / 8] ^= static_cast<uint8_t>(1u << (bit % 8));
        model.write(bad);
        CHECK(loadFromCache(key, token(3), model.fd, data.fd).status().code ==
              ErrorStatus::GENERAL_FAILURE);
    }
    for (int trial = 0; trial < 100; ++trial) {
        model.write(goodModel);
        auto bad = goodData;
        const size_t bit = rng() % (bad.size() * 8);
        bad[bit / 8] ^= static_cast<uint8_t>(1u << (bit % 8));
        data.write(bad);
        CHECK(loadFromCache(key, token(3), model.fd, data.fd).status().code ==
              ErrorStatus::GENERAL_FAILURE);
    }
    auto appended = goodModel;
    appended.push_back(0);
    model.write(appended);
    data.write(goodData);
    CHECK(loadFromCache(key, token(3), model.fd, data.fd).status().code ==
          ErrorStatus::GENERAL_FAILURE);
    model.write(goodModel);
    auto longer = goodData;
    longer.push_back(0);
    data.write(longer);
    CHECK(loadFromCache(key, token(3), model.fd, data.fd).status().code ==
          ErrorStatus::GENERAL_FAILURE);
    // Empty and truncated files.
    data.write(goodData);
    model.write({});
    CHECK(loadFromCache(key, token(3), model.fd, data.fd).status().code ==
          ErrorStatus::GENERAL_FAILURE);
    model.write(std::vector<uint8_t>(goodModel.begin(), goodModel.begin() + 40));
    CHECK(loadFromCache(key, token(3), model.fd, data.fd).status().code ==
          ErrorStatus::GENERAL_FAILURE);
    model.write(goodModel);
    CHECK(loadFromCache(key, token(3), model.fd, data.fd).ok());
}
