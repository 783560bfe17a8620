#include "driver/Cache.h"

#include <fcntl.h>
#include <openssl/crypto.h>
#include <openssl/hmac.h>
#include <openssl/rand.h>
#include <openssl/sha.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

namespace nncosim::driver {
namespace {

constexpr char kMagic[8] = {'N', 'N', 'C', 'O', 'S', 'I', 'M', 'C'};
constexpr uint32_t kFormatVersion = 3;
constexpr size_t kDigestSize = 32;
constexpr size_t kTargetSize = 6 * 4;  // CompilerTarget's fields
// Header: magic, format version, compiler target, program size, constants size, constants digest.
constexpr size_t kTargetOffset = sizeof(kMagic) + 4;
constexpr size_t kSizesOffset = kTargetOffset + kTargetSize;
constexpr size_t kDigestOffset = kSizesOffset + 8 + 8;
constexpr size_t kHeaderSize = kDigestOffset + kDigestSize;
// Cache files larger than this are rejected before anything is allocated for them.
constexpr uint64_t kMaxCacheFileSize = uint64_t{1} << 31;

void putU32(std::vector<uint8_t>& out, uint32_t v) {
    for (int i = 0; i < 4; ++i) out.push_back(static_cast<uint8_t>(v >> (8 * i)));
}
void putU64(std::vector<uint8_t>& out, uint64_t v) {
    for (int i = 0; i < 8; ++i) out.push_back(static_cast<uint8_t>(v >> (8 * i)));
}
uint64_t getLe(const uint8_t* p, int bytes) {
    uint64_t v = 0;
    for (int i = 0; i < bytes; ++i) v |= uint64_t{p[i]} << (8 * i);
    return v;
}

void putTarget(std::vector<uint8_t>& out, const CompilerTarget& t) {
    for (uint32_t v :
         {t.compilerVersion, t.arrayRows, t.arrayCols, t.dramBusBytes, t.spadWords, t.accDepth})
        putU32(out, v);
}
CompilerTarget getTarget(const uint8_t* p) {
    auto field = [&](int i) { return static_cast<uint32_t>(getLe(p + 4 * i, 4)); };
    return {field(0), field(1), field(2), field(3), field(4), field(5)};
}

std::array<uint8_t, kDigestSize> sha256(const std::vector<uint8_t>& data) {
    std::array<uint8_t, kDigestSize> out{};
    SHA256(data.data(), data.size(), out.data());
    return out;
}

std::array<uint8_t, kDigestSize> mac(const CacheKey& key, const CacheToken& token,
                                     const uint8_t* data, size_t size) {
    std::vector<uint8_t> message(token.begin(), token.end());
    message.insert(message.end(), data, data + size);
    std::array<uint8_t, kDigestSize> out{};
    unsigned int length = 0;
    HMAC(EVP_sha256(), key.data(), static_cast<int>(key.size()), message.data(), message.size(),
         out.data(), &length);
    return out;
}

Status writeFile(int fd, const std::vector<uint8_t>& bytes) {
    if (ftruncate(fd, 0) != 0)
        return fail(ErrorStatus::GENERAL_FAILURE, "cache: ftruncate: ", std::strerror(errno));
    size_t done = 0;
    while (done < bytes.size()) {
        const ssize_t n =
            pwrite(fd, bytes.data() + done, bytes.size() - done, static_cast<off_t>(done));
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0)
            return fail(ErrorStatus::GENERAL_FAILURE, "cache: write: ", std::strerror(errno));
        done += static_cast<size_t>(n);
    }
    return okStatus();
}

Result<std::vector<uint8_t>> readFile(int fd) {
    struct stat st {};
    if (fstat(fd, &st) != 0)
        return fail(ErrorStatus::GENERAL_FAILURE, "cache: fstat: ", std::strerror(errno));
    if (st.st_size < 0 || static_cast<uint64_t>(st.st_size) > kMaxCacheFileSize)
        return fail(ErrorStatus::GENERAL_FAILURE, "cache: file of ", st.st_size,
                    " bytes is out of range");
    std::vector<uint8_t> bytes(static_cast<size_t>(st.st_size));
    size_t done = 0;
    while (done < bytes.size()) {
        const ssize_t n =
            pread(fd, bytes.data() + done, bytes.size() - done, static_cast<off_t>(done));
        if (n < 0 && errno == EINTR) continue;
        if (n < 0) return fail(ErrorStatus::GENERAL_FAILURE, "cache: read: ", std::strerror(errno));
        if (n == 0) break;  // shrunk while reading: the size check below fails
        done += static_cast<size_t>(n);
    }
    // Bytes appended after fstat are detected as well: the file must end where we stopped.
    uint8_t extra;
    if (done != bytes.size() || pread(fd, &extra, 1, static_cast<off_t>(done)) != 0)
        return fail(ErrorStatus::GENERAL_FAILURE, "cache: the file changed while being read");
    return bytes;
}

}  // namespace

CacheKey randomCacheKey() {
    CacheKey key{};
    if (RAND_bytes(key.data(), static_cast<int>(key.size())) != 1) {
        // OpenSSL's generator failed: take the kernel's directly.
        for (size_t done = 0; done < key.size();) {
            const ssize_t n = getrandom(key.data() + done, key.size() - done, 0);
            if (n > 0) done += static_cast<size_t>(n);
        }
    }
    return key;
}

Result<CacheKey> loadOrCreateCacheKey(const std::string& path) {
    auto bad = [&](const auto&... why) {
        return fail(ErrorStatus::GENERAL_FAILURE, "cache key file ", path, ": ", why...);
    };
    UniqueFd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW));
    if (!fd.ok() && errno == ENOENT) {
        const CacheKey key = randomCacheKey();
        UniqueFd created(
            ::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0600));
        if (!created.ok()) return bad("cannot create it: ", std::strerror(errno));
        const std::vector<uint8_t> bytes(key.begin(), key.end());
        NN_RETURN_IF_ERROR(writeFile(created.get(), bytes));
        return key;
    }
    if (!fd.ok()) return bad("cannot open it: ", std::strerror(errno));
    struct stat st {};
    if (::fstat(fd.get(), &st) != 0 || !S_ISREG(st.st_mode)) return bad("not a regular file");
    if (st.st_mode & (S_IRWXG | S_IRWXO))
        return bad("readable by others (mode 0", std::oct, st.st_mode & 0777, "); it must be 0600");
    auto bytes = readFile(fd.get());
    if (!bytes) return bytes.status();
    CacheKey key{};
    if (bytes->size() != key.size())
        return bad("holds ", bytes->size(), " bytes, a key has ", key.size());
    std::copy(bytes->begin(), bytes->end(), key.begin());
    return key;
}

Status saveToCache(const CacheKey& key, const CacheToken& token, const CacheContents& contents,
                   int modelCacheFd, int dataCacheFd, const CompilerTarget& target) {
    std::vector<uint8_t> model(kMagic, kMagic + sizeof(kMagic));
    putU32(model, kFormatVersion);
    putTarget(model, target);
    putU64(model, contents.program.size());
    putU64(model, contents.constants.size());
    const auto digest = sha256(contents.constants);
    model.insert(model.end(), digest.begin(), digest.end());
    model.insert(model.end(), contents.program.begin(), contents.program.end());
    const auto tag = mac(key, token, model.data(), model.size());
    model.insert(model.end(), tag.begin(), tag.end());
    NN_RETURN_IF_ERROR(writeFile(dataCacheFd, contents.constants));
    return writeFile(modelCacheFd, model);
}

Result<CacheContents> loadFromCache(const CacheKey& key, const CacheToken& token, int modelCacheFd,
                                    int dataCacheFd) {
    auto model = readFile(modelCacheFd);
    if (!model) return model.status();
    if (model->size() < kHeaderSize + kDigestSize)
        return fail(ErrorStatus::GENERAL_FAILURE, "cache: model cache of ", model->size(),
                    " bytes is too short");
    const size_t signedSize = model->size() - kDigestSize;
    const auto expected = mac(key, token, model->data(), signedSize);
    if (CRYPTO_memcmp(expected.data(), model->data() + signedSize, kDigestSize) != 0)
        return fail(ErrorStatus::GENERAL_FAILURE,
                    "cache: the model cache was modified, written by another device or saved with "
                    "another token");
    // Authenticated from here on; the checks below guard against a driver that wrote nonsense.
    const uint8_t* p = model->data();
    if (std::memcmp(p, kMagic, sizeof(kMagic)) != 0 || getLe(p + 8, 4) != kFormatVersion)
        return fail(ErrorStatus::GENERAL_FAILURE, "cache: unknown cache format");
    if (const CompilerTarget target = getTarget(p + kTargetOffset); target != kCompilerTarget)
        return fail(ErrorStatus::GENERAL_FAILURE, "cache: compiled for ",
                    compilerTargetText(target), "; this driver is ",
                    compilerTargetText(kCompilerTarget));
    const uint64_t programSize = getLe(p + kSizesOffset, 8);
    const uint64_t constantsSize = getLe(p + kSizesOffset + 8, 8);
    if (programSize != signedSize - kHeaderSize)
        return fail(ErrorStatus::GENERAL_FAILURE, "cache: inconsistent program size");
    auto data = readFile(dataCacheFd);
    if (!data) return data.status();
    if (data->size() != constantsSize)
        return fail(ErrorStatus::GENERAL_FAILURE, "cache: the data cache has ", data->size(),
                    " bytes, expected ", constantsSize);
    const auto digest = sha256(*data);
    if (CRYPTO_memcmp(digest.data(), p + kDigestOffset, kDigestSize) != 0)
        return fail(ErrorStatus::GENERAL_FAILURE, "cache: the data cache was modified");
    CacheContents contents;
    contents.program.assign(p + kHeaderSize, p + signedSize);
    contents.constants = std::move(*data);
    return contents;
}

}  // namespace nncosim::driver
