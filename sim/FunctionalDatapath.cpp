#include "sim/FunctionalDatapath.h"

#include <Eigen/Core>
#include <climits>
#include <cmath>
#include <cstring>

#include "driver/NpuRegisters.h"

#if defined(__SSE2__)
#include <emmintrin.h>
#endif
#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>
#define NNCOSIM_HAVE_AVX2_KERNELS 1
#endif

namespace nncosim::sim::datapath {

namespace {

float asFloat(uint32_t bits) {
    return Eigen::numext::bit_cast<float>(bits);
}

uint32_t canonical(float value) {
    return std::isnan(value) ? kFp32QNaN : Eigen::numext::bit_cast<uint32_t>(value);
}

// The order of non-NaN values as unsigned integers, -0 below +0 (rtl fp32_order).
uint32_t order(uint32_t bits) {
    return bits >> 31 ? ~bits : bits | 0x80000000u;
}

bool isNan(uint32_t bits) {
    return (bits & 0x7fffffffu) > 0x7f800000u;
}

}  // namespace

uint32_t fp32Add(uint32_t a, uint32_t b) {
    return canonical(asFloat(a) + asFloat(b));
}

uint32_t fp32Mul(uint32_t a, uint32_t b) {
    return canonical(asFloat(a) * asFloat(b));
}

uint32_t fp32DivCount(uint32_t x, uint32_t n) {
    return canonical(asFloat(x) / static_cast<float>(n));
}

uint32_t fp32Max(uint32_t a, uint32_t b) {
    if (isNan(a) || isNan(b)) return kFp32QNaN;
    return order(a) >= order(b) ? a : b;
}

uint32_t fp32Clamp(uint32_t x, uint32_t lo, uint32_t hi) {
    if (isNan(hi)) return kFp32QNaN;
    const uint32_t atLeast = fp32Max(x, lo);
    if (isNan(atLeast)) return kFp32QNaN;
    return order(atLeast) <= order(hi) ? atLeast : hi;
}

uint32_t fp16ToFp32(uint16_t h) {
    return canonical(static_cast<float>(Eigen::numext::bit_cast<Eigen::half>(h)));
}

uint16_t fp32ToFp16(uint32_t f) {
    if (isNan(f)) return kFp16QNaN;
    return Eigen::numext::bit_cast<uint16_t>(Eigen::half(asFloat(f)));
}

uint32_t fp32Div(uint32_t a, uint32_t b) {
    return canonical(asFloat(a) / asFloat(b));
}

uint32_t fp32Sqrt(uint32_t x) {
    return canonical(std::sqrt(asFloat(x)));
}

uint32_t fp32Trunc(uint32_t x) {
    return canonical(std::trunc(asFloat(x)));
}

namespace {

// The integer steps of rtl fp32_exp and fp32_log, written as the RTL writes them.

int leadingZeros(uint64_t x) {
    return x == 0 ? 64 : __builtin_clzll(x);
}

uint64_t shiftRight(uint64_t x, int sh) {
    return sh >= 64 ? 0 : x >> sh;
}

uint64_t shiftRightJam(uint64_t x, int sh) {
    if (sh == 0) return x;
    if (sh >= 64) return x != 0;
    return (x >> sh) | ((x & ((uint64_t{1} << sh) - 1)) != 0);
}

// rtl fp32_round: sign * m / 2^63 * 2^(exp - 127), m's bit 63 set, to nearest even.
uint32_t roundToFp32(bool sign, int exp, uint64_t m) {
    const uint32_t signBit = sign ? 0x80000000u : 0u;
    if (exp >= 255) return signBit | 0x7f800000u;
    uint64_t r = m;
    int e = exp;
    if (e <= 0) {
        r = shiftRightJam(m, 1 - e);
        e = 0;
    }
    const bool roundUp = ((r >> 39) & 1) && ((r & ((uint64_t{1} << 39) - 1)) || ((r >> 40) & 1));
    return signBit | ((((static_cast<uint32_t>(e) & 0xffu) << 23) |
                       static_cast<uint32_t>((r >> 40) & 0x7fffffu)) +
                      (roundUp ? 1u : 0u));
}

// A finite operand is significand * 2^(exponent - 150) (rtl fp32_sig, fp32_exp).
uint64_t significand(uint32_t x) {
    return (x & 0x7fffffu) | ((x & 0x7f800000u) ? 0x800000u : 0u);
}

int exponent(uint32_t x) {
    const int field = static_cast<int>((x >> 23) & 0xffu);
    return field ? field : 1;
}

constexpr uint64_t kLog2e38 = 0x5c551d94aeull;   // log2(e) * 2^38
constexpr uint64_t kLn2Q32 = 0xb17217f8ull;      // ln(2) * 2^32
constexpr int64_t kLn2Q56 = 0xb17217f7d1cf7aLL;  // ln(2) * 2^56
constexpr uint32_t kExp2Table[64] = {            // 2^(i / 64) * 2^31
    0x80000000, 0x8164d1f4, 0x82cd8699, 0x843a28c4, 0x85aac368, 0x871f6197, 0x88980e81, 0x8a14d575,
    0x8b95c1e4, 0x8d1adf5b, 0x8ea4398b, 0x9031dc43, 0x91c3d374, 0x935a2b2f, 0x94f4efa9, 0x96942d37,
    0x9837f052, 0x99e04593, 0x9b8d39ba, 0x9d3ed9a7, 0x9ef53261, 0xa0b05110, 0xa2704303, 0xa43515ae,
    0xa5fed6aa, 0xa7cd93b5, 0xa9a15ab5, 0xab7a39b6, 0xad583eea, 0xaf3b78ad, 0xb123f582, 0xb311c413,
    0xb504f334, 0xb6fd91e3, 0xb8fbaf47, 0xbaff5ab2, 0xbd08a39f, 0xbf1799b6, 0xc12c4cca, 0xc346ccda,
    0xc5672a11, 0xc78d74c9, 0xc9b9bd86, 0xcbec14ff, 0xce248c15, 0xd06333db, 0xd2a81d92, 0xd4f35aac,
    0xd744fccb, 0xd99d15c2, 0xdbfbb798, 0xde60f482, 0xe0ccdeec, 0xe33f8973, 0xe5b906e7, 0xe8396a50,
    0xeac0c6e8, 0xed4f301f, 0xefe4b99c, 0xf281773c, 0xf5257d15, 0xf7d0df73, 0xfa83b2db, 0xfd3e0c0d};

}  // namespace

uint32_t fp32Exp(uint32_t x) {
    if (isNan(x)) return kFp32QNaN;
    const bool negative = (x >> 31) != 0;
    const int ex = exponent(x);
    if (ex >= 134) return negative ? 0u : 0x7f800000u;  // |x| >= 128, infinities included
    if (ex < 87) return 0x3f800000u;                    // |x| < 2^-40 rounds to 1
    // t = x * log2(e) in Q.32, its magnitude truncated; n = floor(t), f = t - n.
    const uint64_t magnitude = shiftRight(significand(x) * kLog2e38, 156 - ex);
    const int64_t t = negative ? -static_cast<int64_t>(magnitude) : static_cast<int64_t>(magnitude);
    const int n = static_cast<int>(t >> 32);
    const auto f = static_cast<uint32_t>(t);
    // 2^f = 2^(i / 64) * e^u, u = r * ln(2) < 2^-6, e^u by its cubic Taylor polynomial in Q1.32.
    const uint64_t u = ((f & 0x3ffffffu) * kLn2Q32) >> 32;
    const uint64_t u2 = (u * u) >> 32;
    const uint64_t u3 = (u2 * u) >> 32;
    const uint64_t poly = (uint64_t{1} << 32) + u + (u2 >> 1) + u3 / 6;
    const uint64_t m = uint64_t{kExp2Table[f >> 26]} * (poly >> 1);  // Q2.62
    const int lz = leadingZeros(m);
    return roundToFp32(false, 128 + n - lz, m << lz);
}

uint32_t fp32Log(uint32_t x) {
    if (isNan(x)) return kFp32QNaN;
    if ((x & 0x7fffffffu) == 0) return 0xff800000u;  // log(+-0) = -inf
    if (x >> 31) return kFp32QNaN;
    if (x == 0x7f800000u) return x;
    // x = m' * 2^k, m' in [sqrt(2) / 2, sqrt(2)); d = m' - 1 exactly, in Q.24.
    const int la = leadingZeros(significand(x) << 40);
    const uint64_t m = significand(x) << la;
    int k = exponent(x) - la - 127;
    int64_t d;
    if (m >= 0xb504f3u) {
        k += 1;
        d = static_cast<int64_t>(m) - (int64_t{1} << 24);
    } else {
        d = static_cast<int64_t>(m << 1) - (int64_t{1} << 24);
    }
    // ln(m') = 2 atanh(s), s = d / (2 + d): |s| = s32 * 2^-e, s32 of 32 bits.
    const bool below = d < 0;
    uint64_t p = 0;
    int e = 64;
    if (d != 0) {
        const uint64_t ad = below ? static_cast<uint64_t>(-d) : static_cast<uint64_t>(d);
        const int sh = leadingZeros(ad) - 1;
        const uint64_t q = (ad << sh) / static_cast<uint64_t>((int64_t{1} << 25) + d);
        const int lq = leadingZeros(q);
        const uint64_t s = (q << lq) >> 32;
        e = sh + lq - 32;
        // atanh(s) / s = 1 + z / 3 + z^2 / 5 + ... + z^5 / 11, z = s^2, in Q1.32.
        const uint64_t z = shiftRight(s * s, 2 * e - 32);
        const uint64_t z2 = (z * z) >> 32, z3 = (z2 * z) >> 32, z4 = (z3 * z) >> 32,
                       z5 = (z4 * z) >> 32;
        const uint64_t series = (uint64_t{1} << 32) + z / 3 + z2 / 5 + z3 / 7 + z4 / 9 + z5 / 11;
        p = s * (series >> 1);  // |ln(m')| = p * 2^(-30 - e)
    }
    if (k == 0) {
        if (p == 0) return 0;  // log(1) = +0
        const int lp = leadingZeros(p);
        return roundToFp32(below, 160 - lp - e, p << lp);
    }
    // k * ln(2) + ln(m') in Q.56.
    const uint64_t lnM = shiftRight(p, e - 26);
    const int64_t total =
        k * kLn2Q56 + (below ? -static_cast<int64_t>(lnM) : static_cast<int64_t>(lnM));
    const uint64_t mag =
        total < 0 ? 0 - static_cast<uint64_t>(total) : static_cast<uint64_t>(total);
    const int lt = leadingZeros(mag);
    return roundToFp32(total < 0, 134 - lt, mag << lt);
}

int32_t averageFinish(uint32_t sum, uint32_t count, bool truncate) {
    constexpr int kQuotientBits = 10;
    const bool negative = (sum >> 31) != 0;
    const uint32_t magnitude = negative ? 0u - sum : sum;
    const uint32_t den = count & 0xffffu;
    uint64_t num = uint32_t{magnitude + (truncate ? 0 : den >> 1)};
    uint32_t quotient = 0;
    if (den != 0 && num / den < (1u << kQuotientBits)) {
        quotient = static_cast<uint32_t>(num / den);
    } else {
        for (int bit = kQuotientBits - 1; bit >= 0; --bit) {
            const uint64_t step = uint64_t{den} << bit;
            if (num >= step) {
                num -= step;
                quotient |= 1u << bit;
            }
        }
    }
    return negative ? -static_cast<int32_t>(quotient) : static_cast<int32_t>(quotient);
}

void packPairs(const int16_t* w, size_t k, int16_t* packed) {
    constexpr size_t kCols = npu::kArrayCols;
    for (size_t j = 0; j < k / 2; ++j) {
        for (size_t c = 0; c < kCols; ++c) {
            packed[(j * kCols + c) * 2] = w[(2 * j) * kCols + c];
            packed[(j * kCols + c) * 2 + 1] = w[(2 * j + 1) * kCols + c];
        }
    }
}

namespace {

bool gPortable = false;

bool avx2() {
#if defined(NNCOSIM_HAVE_AVX2_KERNELS)
    static const bool has = __builtin_cpu_supports("avx2");
    return has && !gPortable;
#else
    return false;
#endif
}

void requantizeRowsPortable(const int32_t* acc, size_t rows, size_t lanes, const LaneQuant& q,
                            int32_t zeroPoint, int32_t actMin, int32_t actMax, uint8_t* out,
                            size_t outStride) {
    for (size_t r = 0; r < rows; ++r) {
        for (size_t l = 0; l < lanes; ++l) {
            out[r * outStride + l] =
                requantize(static_cast<uint32_t>(acc[r * lanes + l]), q.bias[l], q.multiplier[l],
                           {q.left[l], q.right[l]}, zeroPoint, actMin, actMax);
        }
    }
}

void gemmPortable(const int16_t* a, size_t rows, size_t k, size_t stride, const int16_t* w,
                  int32_t* acc);

#if defined(NNCOSIM_HAVE_AVX2_KERNELS)
// The AVX2 helpers are inlined into AVX2 functions only: no vector crosses a call boundary.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wpsabi"

/// Eight lanes of npu_requant.sv at once.
__attribute__((target("avx2"), always_inline)) inline __m256i requant8(__m256i acc,
                                                                       const LaneQuant& q, size_t l,
                                                                       __m256i zeroPoint,
                                                                       __m256i lo, __m256i hi) {
    const __m256i bias = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(q.bias + l));
    const __m256i mult = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(q.multiplier + l));
    const __m256i left = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(q.left + l));
    const __m256i right = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(q.right + l));
    const __m256i shifted = _mm256_sllv_epi32(_mm256_add_epi32(acc, bias), left);
    // 64-bit products of the even and the odd lanes; bits 62..31 of product + 2^30.
    const __m256i nudge = _mm256_set1_epi64x(int64_t{1} << 30);
    const __m256i even =
        _mm256_srli_epi64(_mm256_add_epi64(_mm256_mul_epi32(shifted, mult), nudge), 31);
    const __m256i odd = _mm256_srli_epi64(
        _mm256_add_epi64(
            _mm256_mul_epi32(_mm256_srli_epi64(shifted, 32), _mm256_srli_epi64(mult, 32)), nudge),
        31);
    __m256i high = _mm256_blend_epi32(even, _mm256_slli_epi64(odd, 32), 0xaa);
    const __m256i minimum = _mm256_set1_epi32(INT32_MIN);
    const __m256i saturate =
        _mm256_and_si256(_mm256_cmpeq_epi32(shifted, minimum), _mm256_cmpeq_epi32(mult, minimum));
    high = _mm256_blendv_epi8(high, _mm256_set1_epi32(INT32_MAX), saturate);
    const __m256i one = _mm256_set1_epi32(1);
    const __m256i mask = _mm256_sub_epi32(_mm256_sllv_epi32(one, right), one);
    const __m256i remainder = _mm256_and_si256(high, mask);
    // threshold = mask / 2 + (high < 0); remainder and threshold are below 2^31.
    const __m256i threshold =
        _mm256_sub_epi32(_mm256_srli_epi32(mask, 1), _mm256_srai_epi32(high, 31));
    const __m256i rounded =
        _mm256_sub_epi32(_mm256_srav_epi32(high, right), _mm256_cmpgt_epi32(remainder, threshold));
    const __m256i offset = _mm256_add_epi32(rounded, zeroPoint);
    return _mm256_min_epi32(_mm256_max_epi32(offset, lo), hi);
}

__attribute__((target("avx2"))) void requantizeRowsAvx2(const int32_t* acc, size_t rows,
                                                        size_t lanes, const LaneQuant& q,
                                                        int32_t zeroPoint, int32_t actMin,
                                                        int32_t actMax, uint8_t* out,
                                                        size_t outStride) {
    const __m256i zp = _mm256_set1_epi32(zeroPoint), lo = _mm256_set1_epi32(actMin),
                  hi = _mm256_set1_epi32(actMax);
    // The low byte of every int32 lane, packed into the low 8 bytes of each 128-bit half.
    const __m256i bytes =
        _mm256_setr_epi8(0, 4, 8, 12, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, 0, 4, 8, 12,
                         -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1);
    for (size_t r = 0; r < rows; ++r) {
        const int32_t* a = acc + r * lanes;
        uint8_t* o = out + r * outStride;
        size_t l = 0;
        for (; l + 8 <= lanes; l += 8) {
            const __m256i v = requant8(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(a + l)),
                                       q, l, zp, lo, hi);
            const __m256i packed = _mm256_shuffle_epi8(v, bytes);
            const uint32_t low = static_cast<uint32_t>(_mm256_extract_epi32(packed, 0));
            const uint32_t high = static_cast<uint32_t>(_mm256_extract_epi32(packed, 4));
            std::memcpy(o + l, &low, 4);
            std::memcpy(o + l + 4, &high, 4);
        }
        for (; l < lanes; ++l) {
            o[l] = requantize(static_cast<uint32_t>(a[l]), q.bias[l], q.multiplier[l],
                              {q.left[l], q.right[l]}, zeroPoint, actMin, actMax);
        }
    }
}

/// Four rows at a time against the interleaved column pairs, 8 columns per register.
__attribute__((target("avx2"))) void gemmAvx2(const int16_t* a, size_t rows, size_t k,
                                              size_t stride, const int16_t* w, int32_t* acc) {
    constexpr size_t kCols = npu::kArrayCols;
    constexpr size_t kVectors = kCols / 8;
    const size_t pairs = k / 2;
    const auto* wv = reinterpret_cast<const __m256i*>(w);
    size_t r = 0;
    for (; r + 4 <= rows; r += 4) {
        __m256i s[4][kVectors];
        for (auto& row : s)
            for (auto& v : row) v = _mm256_setzero_si256();
        for (size_t j = 0; j < pairs; ++j) {
            __m256i x[4];
            for (size_t i = 0; i < 4; ++i) {
                int32_t pair;
                std::memcpy(&pair, a + (r + i) * stride + 2 * j, sizeof(pair));
                x[i] = _mm256_set1_epi32(pair);
            }
            for (size_t v = 0; v < kVectors; ++v) {
                const __m256i col = _mm256_loadu_si256(wv + kVectors * j + v);
                for (size_t i = 0; i < 4; ++i)
                    s[i][v] = _mm256_add_epi32(s[i][v], _mm256_madd_epi16(x[i], col));
            }
        }
        for (size_t i = 0; i < 4; ++i)
            for (size_t v = 0; v < kVectors; ++v)
                _mm256_storeu_si256(reinterpret_cast<__m256i*>(acc + kCols * (r + i)) + v, s[i][v]);
    }
    if (r < rows) gemmPortable(a + r * stride, rows - r, k, stride, w, acc + kCols * r);
}
#pragma GCC diagnostic pop
#endif

}  // namespace

void setPortableKernels(bool portable) {
    gPortable = portable;
}

bool usingAvx2() {
    return avx2();
}

void requantizeRows(const int32_t* acc, size_t rows, size_t lanes, const LaneQuant& q,
                    int32_t zeroPoint, int32_t actMin, int32_t actMax, uint8_t* out,
                    size_t outStride) {
#if defined(NNCOSIM_HAVE_AVX2_KERNELS)
    if (avx2()) {
        requantizeRowsAvx2(acc, rows, lanes, q, zeroPoint, actMin, actMax, out, outStride);
        return;
    }
#endif
    requantizeRowsPortable(acc, rows, lanes, q, zeroPoint, actMin, actMax, out, outStride);
}

void gemm(const int16_t* a, size_t rows, size_t k, size_t stride, const int16_t* w, int32_t* acc) {
#if defined(NNCOSIM_HAVE_AVX2_KERNELS)
    if constexpr (npu::kArrayCols % 8 == 0 && npu::kArrayCols <= 32) {
        if (avx2()) {
            gemmAvx2(a, rows, k, stride, w, acc);
            return;
        }
    }
#endif
    gemmPortable(a, rows, k, stride, w, acc);
}

namespace {

void gemmPortable(const int16_t* a, size_t rows, size_t k, size_t stride, const int16_t* w,
                  int32_t* acc) {
    constexpr size_t kCols = npu::kArrayCols;
    const size_t pairs = k / 2;
#if defined(__SSE2__)
    if constexpr (kCols % 4 == 0 && kCols <= 32) {
        // One pair of a's values against the interleaved column pairs: multiply-adds of eight
        // 16-bit products into four int32 lanes each. Products of 9-bit values never overflow
        // the pair sums; the accumulation wraps like the RTL's.
        constexpr size_t kVectors = kCols / 4;
        const auto* wv = reinterpret_cast<const __m128i*>(w);
        for (size_t r = 0; r < rows; ++r) {
            const int16_t* row = a + r * stride;
            __m128i s[kVectors];
            for (size_t v = 0; v < kVectors; ++v) s[v] = _mm_setzero_si128();
            for (size_t j = 0; j < pairs; ++j) {
                int32_t pair;
                std::memcpy(&pair, row + 2 * j, sizeof(pair));
                const __m128i x = _mm_set1_epi32(pair);
                const __m128i* col = wv + kVectors * j;
                for (size_t v = 0; v < kVectors; ++v)
                    s[v] = _mm_add_epi32(s[v], _mm_madd_epi16(x, _mm_loadu_si128(col + v)));
            }
            auto* out = reinterpret_cast<__m128i*>(acc + kCols * r);
            for (size_t v = 0; v < kVectors; ++v) _mm_storeu_si128(out + v, s[v]);
        }
        return;
    }
#endif
    for (size_t r = 0; r < rows; ++r) {
        const int16_t* row = a + r * stride;
        uint32_t sums[kCols] = {};
        for (size_t j = 0; j < pairs; ++j) {
            const int32_t x0 = row[2 * j], x1 = row[2 * j + 1];
            for (size_t c = 0; c < kCols; ++c) {
                sums[c] += static_cast<uint32_t>(x0 * w[(j * kCols + c) * 2] +
                                                 x1 * w[(j * kCols + c) * 2 + 1]);
            }
        }
        for (size_t c = 0; c < kCols; ++c) acc[kCols * r + c] = static_cast<int32_t>(sums[c]);
    }
}

}  // namespace

}  // namespace nncosim::sim::datapath
