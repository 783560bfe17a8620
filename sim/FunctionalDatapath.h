// The NPU's arithmetic as the RTL computes it, for the functional model (FunctionalNpu.h): the
// same bit widths, wraps and rounding as rtl/npu_core_pkg.sv (widen, mul_by_quantized_multiplier),
// rtl/npu_requant.sv, the pooling finish and the array's int32 sums in rtl/npu_compute.sv, for
// every value a descriptor field can hold (not only the ones NNAPI produces). No SystemC, no RTL.
#pragma once

#include <climits>
#include <cstddef>
#include <cstdint>

namespace nncosim::sim::datapath {

/// A stored byte as the RTL's 9-bit signed operand: int8 sign-extends, uint8 zero-extends.
inline int32_t widen(uint8_t value, bool isSigned) {
    return isSigned ? int32_t{static_cast<int8_t>(value)} : int32_t{value};
}

/// v modulo 2^9 as a signed 9-bit number (the array's operands after zero-point subtraction).
inline int32_t wrap9(int32_t v) {
    return static_cast<int32_t>((static_cast<uint32_t>(v) & 0x1ffu) ^ 0x100u) - 0x100;
}

/// A descriptor's signed shift field as the RTL's 6-bit two's-complement value.
inline uint32_t shiftBits(int32_t shift) {
    return static_cast<uint32_t>(shift) & 0x3fu;
}

/// A 6-bit shift split as the RTL does: left = shift if non-negative, right = (-shift) & 31 if
/// negative (so -32 shifts by nothing).
struct SplitShift {
    uint32_t left = 0, right = 0;
};
inline SplitShift splitShift(uint32_t shift6) {
    const bool negative = (shift6 & 0x20u) != 0;
    return {negative ? 0 : shift6 & 31u, negative ? ((0u - shift6) & 0x3fu) & 31u : 0};
}

/// mul_by_quantized_multiplier of npu_core_pkg.sv with the shift split: x << left wrapping, times
/// the multiplier, the high half rounded half up (min * min saturating), then a rounding right
/// shift ties away from zero.
inline int32_t mulByQuantizedMultiplier(uint32_t x, int32_t multiplier, SplitShift shift) {
    const auto shifted = static_cast<int32_t>(x << shift.left);
    int32_t high;
    if (__builtin_expect(shifted == INT32_MIN && multiplier == INT32_MIN, 0)) {
        high = INT32_MAX;
    } else {
        // nudged[62:31]: the product plus 2^30, bits 62..31.
        const int64_t nudged = int64_t{shifted} * int64_t{multiplier} + (int64_t{1} << 30);
        high = static_cast<int32_t>(static_cast<uint32_t>(static_cast<uint64_t>(nudged >> 31)));
    }
    const uint32_t mask = (1u << shift.right) - 1u;
    const uint32_t remainder = static_cast<uint32_t>(high) & mask;
    const uint32_t threshold = (mask >> 1) + (high < 0 ? 1u : 0u);
    return static_cast<int32_t>(static_cast<uint32_t>(high >> shift.right) +
                                (remainder > threshold ? 1u : 0u));
}

/// mul_by_quantized_multiplier of npu_core_pkg.sv: x * multiplier * 2^(shift - 31) with a left
/// shift of max(shift, 0) wrapping, the high half rounded half up (min * min saturating), and a
/// rounding right shift of max(-shift, 0) & 31, ties away from zero. `shift6` is 6 bits.
inline int32_t mulByQuantizedMultiplier(uint32_t x, int32_t multiplier, uint32_t shift6) {
    return mulByQuantizedMultiplier(x, multiplier, splitShift(shift6));
}

/// clamp(value, lo, hi) as signed 32-bit numbers, low 8 bits of the result (clamp_byte and the
/// requantizer's last stage).
inline uint8_t clampByte(int32_t value, int32_t lo, int32_t hi) {
    const int32_t v = value < lo ? lo : value > hi ? hi : value;
    return static_cast<uint8_t>(v);
}

/// npu_requant.sv: clamp(mulByQuantizedMultiplier(acc + bias) + zeroPoint), additions wrapping.
inline uint8_t requantize(uint32_t acc, uint32_t bias, int32_t multiplier, SplitShift shift,
                          int32_t zeroPoint, int32_t actMin, int32_t actMax) {
    const int32_t rounded = mulByQuantizedMultiplier(acc + bias, multiplier, shift);
    const auto offset =
        static_cast<int32_t>(static_cast<uint32_t>(rounded) + static_cast<uint32_t>(zeroPoint));
    return clampByte(offset, actMin, actMax);
}

/// The average pooling finish of npu_pool.sv before the clamp: |sum| + count / 2 (|sum| when
/// `truncate`) divided by count by a 10-bit restoring division (one quotient bit per cycle; a
/// quotient that needs more bits, or a count of 0, gives what that divider gives), the sign of
/// sum restored.
int32_t averageFinish(uint32_t sum, uint32_t count, bool truncate);

// The float datapath (rtl/npu_fp_pkg.sv) on binary32 bit patterns: the host's IEEE arithmetic
// (round to nearest even, exact subnormals, signed zeros), every NaN result the canonical quiet
// NaN, as the RTL's units produce it.

inline constexpr uint32_t kFp32QNaN = 0x7fc00000;
inline constexpr uint16_t kFp16QNaN = 0x7e00;

uint32_t fp32Add(uint32_t a, uint32_t b);
uint32_t fp32Mul(uint32_t a, uint32_t b);
/// x / n for an integer count n, one rounding (rtl fp32_div_count).
uint32_t fp32DivCount(uint32_t x, uint32_t n);
/// a / b and sqrt(x), one rounding, and x rounded toward zero to an integer, exact (rtl
/// fp32_div, fp32_sqrt, fp32_trunc).
uint32_t fp32Div(uint32_t a, uint32_t b);
uint32_t fp32Sqrt(uint32_t x);
uint32_t fp32Trunc(uint32_t x);
/// e^x and ln(x) by the RTL's fixed-point algorithms (rtl fp32_exp, fp32_log): within about half
/// an ULP of the exact result, not correctly rounded, so computed here step by step as the RTL
/// computes them.
uint32_t fp32Exp(uint32_t x);
uint32_t fp32Log(uint32_t x);
/// IEEE 754-2019 maximum: NaN if either is NaN, -0 < +0.
uint32_t fp32Max(uint32_t a, uint32_t b);
/// x clamped to [lo, hi] by IEEE 754-2019 maximum then minimum: NaN if any is NaN, -0 < +0.
uint32_t fp32Clamp(uint32_t x, uint32_t lo, uint32_t hi);
/// binary16 -> binary32, exact.
uint32_t fp16ToFp32(uint16_t h);
/// binary32 -> binary16, nearest even.
uint16_t fp32ToFp16(uint32_t f);

/// Per-lane requantization parameters of an output-channel block (the weight stream's
/// quantization words), for requantizeRows.
struct LaneQuant {
    uint32_t bias[64];
    int32_t multiplier[64];
    uint32_t left[64], right[64];
};

/// requantize() of `rows` rows of `lanes` accumulators (rows `lanes` apart) with lane l's
/// parameters from `q`, into `out` (rows `outStride` bytes apart). `lanes` is at most 64.
void requantizeRows(const int32_t* acc, size_t rows, size_t lanes, const LaneQuant& q,
                    int32_t zeroPoint, int32_t actMin, int32_t actMax, uint8_t* out,
                    size_t outStride);

/// acc[r][c] = sum over k of a[r][k] * w[k][c] for the npu::kArrayCols columns c, int32
/// wrapping, for `rows` rows of `a` (int16, `k` values per row, k even, rows `stride` values
/// apart) and `w` packed by packPairs.
void gemm(const int16_t* a, size_t rows, size_t k, size_t stride, const int16_t* w, int32_t* acc);

/// The kernels above use AVX2 when the CPU has it; these force the portable code (for tests
/// that compare the two).
void setPortableKernels(bool portable);
bool usingAvx2();

/// Packs a k x npu::kArrayCols int16 matrix (row-major, k even) for gemm: for each pair of rows
/// (2j, 2j + 1) the columns interleaved as w[2j][c], w[2j + 1][c].
void packPairs(const int16_t* w, size_t k, int16_t* packed);

}  // namespace nncosim::sim::datapath
