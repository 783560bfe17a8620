#include "sim/FunctionalDatapath.h"

#include <climits>
#include <cstring>

#include "driver/NpuRegisters.h"

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

namespace nncosim::sim::datapath {

int32_t mulByQuantizedMultiplier(uint32_t x, int32_t multiplier, uint32_t shift6) {
    const bool negative = (shift6 & 0x20u) != 0;
    const uint32_t left = negative ? 0 : shift6 & 31u;
    const uint32_t right = negative ? ((0u - shift6) & 0x3fu) & 31u : 0;
    const auto shifted = static_cast<int32_t>(x << left);
    int32_t high;
    if (shifted == INT32_MIN && multiplier == INT32_MIN) {
        high = INT32_MAX;
    } else {
        // nudged[62:31]: the product plus 2^30, bits 62..31.
        const int64_t nudged = int64_t{shifted} * int64_t{multiplier} + (int64_t{1} << 30);
        high = static_cast<int32_t>(static_cast<uint32_t>(static_cast<uint64_t>(nudged >> 31)));
    }
    const uint32_t mask = (1u << right) - 1u;
    const uint32_t remainder = static_cast<uint32_t>(high) & mask;
    const uint32_t threshold = (mask >> 1) + (high < 0 ? 1u : 0u);
    return static_cast<int32_t>(static_cast<uint32_t>(high >> right) +
                                (remainder > threshold ? 1u : 0u));
}

int32_t averageFinish(uint32_t sum, uint32_t count) {
    constexpr int kQuotientBits = 10;
    const bool negative = (sum >> 31) != 0;
    const uint32_t magnitude = negative ? 0u - sum : sum;
    const uint32_t den = count & 0xffffu;
    uint64_t num = uint32_t{magnitude + (den >> 1)};
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

void gemm(const int16_t* a, size_t rows, size_t k, size_t stride, const int16_t* w, int32_t* acc) {
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

}  // namespace nncosim::sim::datapath
