// VTS-equivalent compilation caching: save and retrieve, non-zero file offsets, wrong numbers of
// cache files, a tampered model cache (many single-bit flips, appended bytes), a wrong token,
// another device's key, a corrupted data cache (never a crash), unwritable files.
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#include <algorithm>
#include <random>

#include "driver/Cache.h"
#include "driver/NpuPreparedModel.h"
#include "driver/tests/TestUtil.h"

using namespace nncosim;
using namespace nncosim::driver;
using namespace nncosim::driver::testing;

namespace {

struct CacheFiles {
    CacheFiles() {
        for (int i = 0; i < 2; ++i) fds.push_back(memfd_create("nncosim-cache", MFD_CLOEXEC));
    }
    ~CacheFiles() {
        for (int fd : fds) close(fd);
    }
    std::vector<SharedHandle> model() const { return {*makeSharedHandle(fds[0])}; }
    std::vector<SharedHandle> data() const { return {*makeSharedHandle(fds[1])}; }
    std::vector<uint8_t> read(int i) const {
        std::vector<uint8_t> bytes(static_cast<size_t>(lseek(fds[i], 0, SEEK_END)));
        if (!bytes.empty())
            REQUIRE(pread(fds[i], bytes.data(), bytes.size(), 0) ==
                    static_cast<ssize_t>(bytes.size()));
        return bytes;
    }
    void write(int i, const std::vector<uint8_t>& bytes) const {
        REQUIRE(ftruncate(fds[i], 0) == 0);
        REQUIRE(pwrite(fds[i], bytes.data(), bytes.size(), 0) ==
                static_cast<ssize_t>(bytes.size()));
    }
    std::vector<int> fds;
};

CacheToken tokenOf(uint8_t seed) {
    CacheToken t{};
    for (size_t i = 0; i < t.size(); ++i) t[i] = static_cast<uint8_t>(seed * 31 + i);
    return t;
}

std::vector<uint8_t> run(const SharedPreparedModel& prepared) {
    auto r = convRequest();
    auto result = prepared->execute(r.request, MeasureTiming::NO, {}, {});
    REQUIRE_MESSAGE(result.ok(), result.status.message);
    return std::vector<uint8_t>(r.output(0), r.output(0) + 32);
}

Status fromCache(const IDevice& device, const CacheFiles& files, const CacheToken& token) {
    return prepareModelFromCacheBlocking(device, {}, files.model(), files.data(), token).status();
}

}  // namespace

TEST_CASE("driver_caching_save_and_retrieve") {
    auto t = makeTestDevice();
    CacheFiles files;
    // Stale content and non-zero offsets: the driver truncates and writes at absolute offsets.
    files.write(0, std::vector<uint8_t>(10000, 7));
    files.write(1, std::vector<uint8_t>(20000, 9));
    lseek(files.fds[0], 1234, SEEK_SET);
    lseek(files.fds[1], 77, SEEK_SET);
    auto prepared =
        prepareModelBlocking(*t.device, convModel(), kDefaultExecutionPreference, kDefaultPriority,
                             {}, files.model(), files.data(), tokenOf(1));
    REQUIRE(prepared.ok());
    const auto expected = run(*prepared);
    CHECK(std::any_of(expected.begin(), expected.end(), [](uint8_t v) { return v != 0; }));
    CHECK(files.read(0).size() < 10000);
    CHECK(files.read(1).size() < 20000);
    CHECK_FALSE(files.read(1).empty());  // the packed weight stream
    lseek(files.fds[0], 999, SEEK_SET);
    auto cached =
        prepareModelFromCacheBlocking(*t.device, {}, files.model(), files.data(), tokenOf(1));
    REQUIRE_MESSAGE(cached.ok(), cached.status().message);
    CHECK(run(*cached) == expected);
}

TEST_CASE("driver_caching_key_is_per_device") {
    DeviceOptions options;
    options.cacheKey = randomCacheKey();
    auto a = makeTestDevice(options);
    auto b = makeTestDevice(options);
    auto other = makeTestDevice();
    CacheFiles files;
    REQUIRE(prepareModelBlocking(*a.device, convModel(), kDefaultExecutionPreference,
                                 kDefaultPriority, {}, files.model(), files.data(), tokenOf(2))
                .ok());
    CHECK(fromCache(*b.device, files, tokenOf(2)).ok());
    CHECK(fromCache(*other.device, files, tokenOf(2)).code == ErrorStatus::GENERAL_FAILURE);
}

TEST_CASE("driver_caching_wrong_number_of_files") {
    auto t = makeTestDevice();
    CacheFiles files, extra;
    std::vector<SharedHandle> two = {files.model()[0], extra.model()[0]};
    // Preparation with the wrong counts still succeeds; nothing usable is saved.
    for (const auto& [modelCache, dataCache] :
         std::vector<std::pair<std::vector<SharedHandle>, std::vector<SharedHandle>>>{
             {{}, files.data()}, {two, files.data()}, {files.model(), {}}, {files.model(), two}}) {
        auto prepared =
            prepareModelBlocking(*t.device, convModel(), kDefaultExecutionPreference,
                                 kDefaultPriority, {}, modelCache, dataCache, tokenOf(3));
        REQUIRE(prepared.ok());
        CHECK(fromCache(*t.device, files, tokenOf(3)).code == ErrorStatus::GENERAL_FAILURE);
        auto callback = std::make_shared<PreparedModelCallback>();
        const Status launch =
            t.device->prepareModelFromCache({}, modelCache, dataCache, tokenOf(3), callback);
        CHECK(launch.code == ErrorStatus::INVALID_ARGUMENT);
        CHECK(callback->status().code == ErrorStatus::INVALID_ARGUMENT);
    }
}

TEST_CASE("driver_caching_tampered_model_cache") {
    auto t = makeTestDevice();
    CacheFiles files;
    REQUIRE(prepareModelBlocking(*t.device, convModel(), kDefaultExecutionPreference,
                                 kDefaultPriority, {}, files.model(), files.data(), tokenOf(4))
                .ok());
    const auto good = files.read(0);
    std::mt19937 rng(11);
    for (int trial = 0; trial < 128; ++trial) {
        auto bad = good;
        const size_t bit = rng() % (bad.size() * 8);
        bad[bit / 8] ^= static_cast<uint8_t>(1u << (bit % 8));
        files.write(0, bad);
        CHECK(fromCache(*t.device, files, tokenOf(4)).code == ErrorStatus::GENERAL_FAILURE);
    }
    auto appended = good;
    appended.insert(appended.end(), {1, 2, 3});
    files.write(0, appended);
    CHECK(fromCache(*t.device, files, tokenOf(4)).code == ErrorStatus::GENERAL_FAILURE);
    files.write(0, good);
    CHECK(fromCache(*t.device, files, tokenOf(5)).code ==
          ErrorStatus::GENERAL_FAILURE);  // wrong token
    CHECK(fromCache(*t.device, files, tokenOf(4)).ok());
}

TEST_CASE("driver_caching_corrupted_data_cache_never_crashes") {
    auto t = makeTestDevice();
    CacheFiles files;
    REQUIRE(prepareModelBlocking(*t.device, convModel(), kDefaultExecutionPreference,
                                 kDefaultPriority, {}, files.model(), files.data(), tokenOf(6))
                .ok());
    const auto good = files.read(1);
    std::mt19937 rng(3);
    for (int trial = 0; trial < 64; ++trial) {
        auto bad = good;
        for (int flips = 0; flips < 1 + trial % 8; ++flips)
            bad[rng() % bad.size()] ^= static_cast<uint8_t>(1 + rng() % 255);
        if (trial % 5 == 0) bad.resize(rng() % bad.size());
        if (trial % 7 == 0) bad.resize(bad.size() + 1 + rng() % 100, 0x5A);
        files.write(1, bad);
        auto result =
            prepareModelFromCacheBlocking(*t.device, {}, files.model(), files.data(), tokenOf(6));
        if (result.ok()) {
            run(*result);  // whatever it computes, it must not crash
        } else {
            CHECK(result.status().code == ErrorStatus::GENERAL_FAILURE);
        }
    }
}

TEST_CASE("driver_caching_save_failure_never_fails_preparation") {
    auto t = makeTestDevice();
    char path[] = "/tmp/nncosim-cache-XXXXXX";
    const int fd = mkstemp(path);
    REQUIRE(fd >= 0);
    const int readOnly = open(path, O_RDONLY | O_CLOEXEC);
    unlink(path);
    REQUIRE(readOnly >= 0);
    auto handle = *makeSharedHandle(readOnly);
    auto prepared = prepareModelBlocking(*t.device, convModel(), kDefaultExecutionPreference,
                                         kDefaultPriority, {}, {handle}, {handle}, tokenOf(7));
    CHECK(prepared.ok());
    close(fd);
    close(readOnly);
}

TEST_CASE("driver_caching_client_may_close_fds_after_the_call") {
    auto t = makeTestDevice();
    CacheFiles files;
    auto callback = std::make_shared<PreparedModelCallback>();
    {
        auto modelCache = files.model();
        auto dataCache = files.data();
        REQUIRE(t.device
                    ->prepareModel(convModel(), kDefaultExecutionPreference, kDefaultPriority, {},
                                   modelCache, dataCache, tokenOf(8), callback)
                    .ok());
    }  // the client's handles are gone; the driver kept duplicates
    REQUIRE(callback->status().ok());
    CHECK(fromCache(*t.device, files, tokenOf(8)).ok());
}

TEST_CASE("driver_caching_tampered_cache_is_the_calls_status") {
    auto t = makeTestDevice();
    CacheFiles files;
    REQUIRE(prepareModelBlocking(*t.device, convModel(), kDefaultExecutionPreference,
                                 kDefaultPriority, {}, files.model(), files.data(), tokenOf(9))
                .ok());
    auto bad = files.read(0);
    bad[bad.size() / 2] ^= 1;
    files.write(0, bad);
    auto callback = std::make_shared<PreparedModelCallback>();
    const Status st =
        t.device->prepareModelFromCache({}, files.model(), files.data(), tokenOf(9), callback);
    CHECK(st.code == ErrorStatus::GENERAL_FAILURE);  // at once, not only through the callback
    CHECK(callback->status().code == ErrorStatus::GENERAL_FAILURE);
}

TEST_CASE("driver_caching_keeps_the_priority") {
    auto t = makeTestDevice();
    CacheFiles files;
    REQUIRE(prepareModelBlocking(*t.device, convModel(), kDefaultExecutionPreference,
                                 Priority::HIGH, {}, files.model(), files.data(), tokenOf(10))
                .ok());
    auto cached =
        prepareModelFromCacheBlocking(*t.device, {}, files.model(), files.data(), tokenOf(10));
    REQUIRE(cached.ok());
    const auto* model = dynamic_cast<const detail::NpuPreparedModel*>(cached->get());
    REQUIRE(model != nullptr);
    CHECK(model->priority() == Priority::HIGH);
}

TEST_CASE("driver_caching_key_file_survives_a_restart") {
    char dir[] = "/tmp/nncosim-key-XXXXXX";
    REQUIRE(mkdtemp(dir) != nullptr);
    const std::string path = std::string(dir) + "/cache.key";
    DeviceOptions options;
    options.cacheKeyFile = path;
    CacheFiles files;
    {
        auto first = makeTestDevice(options);  // creates the key file
        REQUIRE(prepareModelBlocking(*first.device, convModel(), kDefaultExecutionPreference,
                                     kDefaultPriority, {}, files.model(), files.data(), tokenOf(11))
                    .ok());
    }
    struct stat st {};
    REQUIRE(stat(path.c_str(), &st) == 0);
    CHECK((st.st_mode & 0777) == 0600);
    auto restarted = makeTestDevice(options);  // reads it back
    CHECK(fromCache(*restarted.device, files, tokenOf(11)).ok());
    CHECK(fromCache(*makeTestDevice().device, files, tokenOf(11)).code ==
          ErrorStatus::GENERAL_FAILURE);  // a device without the file has another key

    // A key file others can read, or of the wrong size, is refused, naming the file.
    REQUIRE(chmod(path.c_str(), 0644) == 0);
    auto exposed = makeNpuDevice(std::make_shared<sim::FunctionalNpu>(), options);
    REQUIRE_FALSE(exposed.ok());
    CHECK(exposed.status().message.find(path) != std::string::npos);
    REQUIRE(chmod(path.c_str(), 0600) == 0);
    REQUIRE(truncate(path.c_str(), 5) == 0);
    CHECK(makeNpuDevice(std::make_shared<sim::FunctionalNpu>(), options).status().code ==
          ErrorStatus::GENERAL_FAILURE);
    unlink(path.c_str());
    rmdir(dir);
}

TEST_CASE("driver_caching_rejects_another_compiler_target") {
    // A cache written under the same key (a key file kept across an upgrade) by a driver with
    // another compiler version or NPU geometry: refused at once, naming both targets, so the
    // framework compiles again. The cache is rewritten as that driver would have written it.
    DeviceOptions options;
    options.cacheKey = randomCacheKey();
    auto t = makeTestDevice(options);
    CacheFiles files;
    REQUIRE(prepareModelBlocking(*t.device, convModel(), kDefaultExecutionPreference,
                                 kDefaultPriority, {}, files.model(), files.data(), tokenOf(12))
                .ok());
    auto contents = loadFromCache(*options.cacheKey, tokenOf(12), files.fds[0], files.fds[1]);
    REQUIRE(contents.ok());
    CompilerTarget newer = kCompilerTarget;
    newer.compilerVersion += 1;
    CompilerTarget larger = kCompilerTarget;
    larger.arrayRows *= 2;
    larger.arrayCols *= 2;
    for (const CompilerTarget& other : {newer, larger}) {
        REQUIRE(saveToCache(*options.cacheKey, tokenOf(12), *contents, files.fds[0], files.fds[1],
                            other)
                    .ok());
        auto callback = std::make_shared<PreparedModelCallback>();
        const Status st =
            t.device->prepareModelFromCache({}, files.model(), files.data(), tokenOf(12), callback);
        CHECK(st.code == ErrorStatus::GENERAL_FAILURE);
        CHECK(callback->status().code == ErrorStatus::GENERAL_FAILURE);
        CHECK(st.message.find(compilerTargetText(other)) != std::string::npos);
        CHECK(st.message.find(compilerTargetText(kCompilerTarget)) != std::string::npos);
    }
    // Written again for this driver's target, the same contents load.
    REQUIRE(
        saveToCache(*options.cacheKey, tokenOf(12), *contents, files.fds[0], files.fds[1]).ok());
    CHECK(fromCache(*t.device, files, tokenOf(12)).ok());
}

// IDevice.aidl's prepareModelFromCache: invoke the callback with the status, then return the
// same status, also when the deadline passes during the call (MISSED_DEADLINE_TRANSIENT). The
// model's 8 MB of constants make reading and authenticating the cache take long enough for a
// deadline to fall inside the call.
TEST_CASE("driver_caching_deadline_during_prepare_from_cache_is_the_calls_status") {
    auto t = makeTestDevice();
    constexpr uint32_t kElements = 8'000'000;
    ModelBuilder b;
    const auto type = OperandType::TENSOR_QUANT8_ASYMM;
    const uint32_t in = b.addInput(type, {kElements}, 1.0f, 0);
    const uint32_t k =
        b.addConstant(type, {kElements}, std::vector<uint8_t>(kElements, 3), 1.0f, 0);
    const uint32_t out = b.addOutput(type, {kElements}, 1.0f, 0);
    b.addOperation(OperationType::ADD, {in, k, b.addInt32(0)}, {out});
    CacheFiles files;
    REQUIRE(prepareModelBlocking(*t.device, b.build(), kDefaultExecutionPreference,
                                 kDefaultPriority, {}, files.model(), files.data(), tokenOf(11))
                .ok());
    REQUIRE(files.read(1).size() >= kElements);
    // How long the call takes without a deadline (the shortest of three).
    auto took = Clock::duration::max();
    for (int i = 0; i < 3; ++i) {
        auto callback = std::make_shared<PreparedModelCallback>();
        const auto before = Clock::now();
        REQUIRE(
            t.device->prepareModelFromCache({}, files.model(), files.data(), tokenOf(11), callback)
                .ok());
        took = std::min(took, Clock::now() - before);
        REQUIRE(callback->status().ok());
    }
    MESSAGE("prepareModelFromCache of an 8 MB data cache: "
            << std::chrono::duration_cast<std::chrono::microseconds>(took).count() << " us");
    int missedInside = 0;
    for (int attempt = 0; attempt < 5; ++attempt) {
        auto callback = std::make_shared<PreparedModelCallback>();
        const Status st = t.device->prepareModelFromCache(Clock::now() + took / 3, files.model(),
                                                          files.data(), tokenOf(11), callback);
        const Status notified = callback->status();
        CAPTURE(st.message);
        CHECK(st.code == notified.code);
        CHECK(callback->notifications() == 1);
        CHECK((notified.ok() == (callback->preparedModel() != nullptr)));
        missedInside += notified.code == ErrorStatus::MISSED_DEADLINE_TRANSIENT;
    }
    CHECK(missedInside > 0);  // the deadline did fall inside the call
}
