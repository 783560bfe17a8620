// FarmHash's Fingerprint64 (the "na" variant of Hash64, a CityHash descendant), which
// LSH_PROJECTION hashes its inputs with. Fingerprints are fixed forever by FarmHash, so any correct
// implementation gives Android's bits. Little-endian byte order is assumed, as on every platform
// NNAPI runs on.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <utility>

namespace nncosim::golden::farmhash {

namespace detail {

inline constexpr uint64_t kK0 = 0xc3a5c85c97cb3127ULL;
inline constexpr uint64_t kK1 = 0xb492b66fbe98f273ULL;
inline constexpr uint64_t kK2 = 0x9ae16a3b2f90404fULL;

inline uint64_t load64(const uint8_t* p) {
    uint64_t v;
    std::memcpy(&v, p, sizeof(v));
    return v;
}

inline uint64_t load32(const uint8_t* p) {
    uint32_t v;
    std::memcpy(&v, p, sizeof(v));
    return v;
}

inline uint64_t rotr(uint64_t v, int shift) {
    return shift == 0 ? v : (v >> shift) | (v << (64 - shift));
}

inline uint64_t shiftMix(uint64_t v) {
    return v ^ (v >> 47);
}

/// Murmur-style mix of two words.
inline uint64_t mix16(uint64_t u, uint64_t v, uint64_t mul) {
    uint64_t a = (u ^ v) * mul;
    a ^= a >> 47;
    uint64_t b = (v ^ a) * mul;
    b ^= b >> 47;
    return b * mul;
}

inline uint64_t upTo16(const uint8_t* s, size_t len) {
    if (len >= 8) {
        const uint64_t mul = kK2 + len * 2;
        const uint64_t a = load64(s) + kK2;
        const uint64_t b = load64(s + len - 8);
        return mix16(rotr(b, 37) * mul + a, (rotr(a, 25) + b) * mul, mul);
    }
    if (len >= 4) {
        const uint64_t mul = kK2 + len * 2;
        return mix16(len + (load32(s) << 3), load32(s + len - 4), mul);
    }
    if (len > 0) {
        const uint32_t y = uint32_t{s[0]} + (uint32_t{s[len >> 1]} << 8);
        const uint32_t z = static_cast<uint32_t>(len) + (uint32_t{s[len - 1]} << 2);
        return shiftMix(y * kK2 ^ z * kK0) * kK2;
    }
    return kK2;
}

inline uint64_t upTo32(const uint8_t* s, size_t len) {
    const uint64_t mul = kK2 + len * 2;
    const uint64_t a = load64(s) * kK1;
    const uint64_t b = load64(s + 8);
    const uint64_t c = load64(s + len - 8) * mul;
    const uint64_t d = load64(s + len - 16) * kK2;
    return mix16(rotr(a + b, 43) + rotr(c, 30) + d, a + rotr(b + kK2, 18) + c, mul);
}

inline uint64_t upTo64(const uint8_t* s, size_t len) {
    const uint64_t mul = kK2 + len * 2;
    const uint64_t a = load64(s) * kK2;
    const uint64_t b = load64(s + 8);
    const uint64_t c = load64(s + len - 8) * mul;
    const uint64_t d = load64(s + len - 16) * kK2;
    const uint64_t y = rotr(a + b, 43) + rotr(c, 30) + d;
    const uint64_t z = mix16(y, a + rotr(b + kK2, 18) + c, mul);
    const uint64_t e = load64(s + 16) * mul;
    const uint64_t f = load64(s + 24);
    const uint64_t g = (y + load64(s + len - 32)) * mul;
    const uint64_t h = (z + load64(s + len - 24)) * mul;
    return mix16(rotr(e + f, 43) + rotr(g, 30) + h, e + rotr(f + a, 18) + g, mul);
}

/// A quick 16-byte hash of 32 bytes of input with two seeds.
inline std::pair<uint64_t, uint64_t> weak32(const uint8_t* s, uint64_t a, uint64_t b) {
    const uint64_t w = load64(s), x = load64(s + 8), y = load64(s + 16), z = load64(s + 24);
    a += w;
    b = rotr(b + a + z, 21);
    const uint64_t c = a;
    a += x;
    a += y;
    b += rotr(a, 44);
    return {a + z, b + c};
}

}  // namespace detail

/// FarmHash Fingerprint64 of `len` bytes at `data`.
inline uint64_t fingerprint64(const void* data, size_t len) {
    using namespace detail;
    const auto* s = static_cast<const uint8_t*>(data);
    if (len <= 16) return upTo16(s, len);
    if (len <= 32) return upTo32(s, len);
    if (len <= 64) return upTo64(s, len);

    // 64-byte blocks through a 56-byte state, then the last 64 bytes (which may overlap).
    constexpr uint64_t kSeed = 81;
    uint64_t x = kSeed * kK2 + load64(s);
    uint64_t y = kSeed * kK1 + 113;
    uint64_t z = shiftMix(y * kK2 + 113) * kK2;
    std::pair<uint64_t, uint64_t> v{0, 0}, w{0, 0};
    const uint8_t* end = s + ((len - 1) / 64) * 64;
    const uint8_t* last64 = s + len - 64;
    do {
        x = rotr(x + y + v.first + load64(s + 8), 37) * kK1;
        y = rotr(y + v.second + load64(s + 48), 42) * kK1;
        x ^= w.second;
        y += v.first + load64(s + 40);
        z = rotr(z + w.first, 33) * kK1;
        v = weak32(s, v.second * kK1, x + w.first);
        w = weak32(s + 32, z + w.second, y + load64(s + 16));
        std::swap(z, x);
        s += 64;
    } while (s != end);
    const uint64_t mul = kK1 + ((z & 0xff) << 1);
    s = last64;
    w.first += (len - 1) & 63;
    v.first += w.first;
    w.first += v.first;
    x = rotr(x + y + v.first + load64(s + 8), 37) * mul;
    y = rotr(y + v.second + load64(s + 48), 42) * mul;
    x ^= w.second * 9;
    y += v.first * 9 + load64(s + 40);
    z = rotr(z + w.first, 33) * mul;
    v = weak32(s, v.second * mul, x + w.first);
    w = weak32(s + 32, z + w.second, y + load64(s + 16));
    std::swap(z, x);
    return mix16(mix16(v.first, w.first, mul) + shiftMix(y) * kK0 + z,
                 mix16(v.second, w.second, mul) + x, mul);
}

}  // namespace nncosim::golden::farmhash
