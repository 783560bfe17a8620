// Tests of model/FixedPoint.h: corner cases at every edge, randomized comparisons with exact
// long-double references, and (when gemmlowp's header is installed) bit-exact comparisons with
// gemmlowp itself.
#include "model/FixedPoint.h"

#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <vector>

namespace nncosim::fixedpoint {
namespace {

constexpr int64_t kTwo31 = int64_t{1} << 31;

// ---- Straightforward references: exact in long double (64-bit mantissa or more).

int32_t refDoublingHighMul(int32_t a, int32_t b) {
    if (a == kInt32Min && b == kInt32Min) {
        return kInt32Max;
    }
    const long double exact = static_cast<long double>(a) * b / static_cast<long double>(kTwo31);
    return static_cast<int32_t>(std::floor(exact + 0.5L));  // ties towards +infinity
}

int32_t refRoundingDivideByPOT(int32_t x, int exponent) {
    return static_cast<int32_t>(std::round(std::ldexp(static_cast<long double>(x), -exponent)));
}

int32_t refWrap(int64_t x) {
    return static_cast<int32_t>(static_cast<uint32_t>(static_cast<uint64_t>(x)));
}

int32_t refMultiply(int32_t x, int32_t multiplier, int shift) {
    const int32_t shifted =
        shift > 0 ? refWrap(static_cast<int64_t>(x) * (int64_t{1} << shift)) : x;
    return refRoundingDivideByPOT(refDoublingHighMul(shifted, multiplier), shift > 0 ? 0 : -shift);
}

int32_t refRequantize(int32_t acc, int32_t bias, QuantizedMultiplier m, int32_t zeroPoint,
                      ActivationRange range) {
    const int32_t scaled = refMultiply(refWrap(int64_t{acc} + bias), m.multiplier, m.shift);
    const int32_t shifted = refWrap(int64_t{scaled} + zeroPoint);
    return shifted < range.min ? range.min : shifted > range.max ? range.max : shifted;
}

// QuantizeMultiplier computed another way: exponent from ilogb, mantissa by ldexp.
QuantizedMultiplier refQuantizeMultiplier(double real) {
    int exponent = std::ilogb(real) + 1;  // real = mantissa * 2^exponent, mantissa in [0.5, 1)
    int64_t fixed = std::llround(std::ldexp(real, 31 - exponent));
    if (fixed == kTwo31) {
        fixed = kTwo31 / 2;
        ++exponent;
    }
    if (exponent < -31) {
        return {};
    }
    return {static_cast<int32_t>(fixed), exponent};
}

// ---- Input generators biased towards edges.

class Generator {
  public:
    explicit Generator(uint64_t seed) : mRng(seed) {}

    int32_t uniform() { return static_cast<int32_t>(static_cast<uint32_t>(mRng())); }
    int range(int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(mRng); }

    // Uniform values, powers of two and their neighbours, small values and the extremes.
    int32_t interesting() {
        switch (range(0, 5)) {
            case 0: {
                const int64_t power = int64_t{1} << range(0, 31);
                const int64_t value = (range(0, 1) ? power : -power) + range(-2, 2);
                return refWrap(value);
            }
            case 1:
                return range(-1000, 1000);
            case 2:
                return range(0, 1) ? kInt32Min + range(0, 3) : kInt32Max - range(0, 3);
            default:
                return uniform();
        }
    }

    // Multipliers as QuantizeMultiplier produces them, plus the edges of that range.
    int32_t multiplier() {
        switch (range(0, 9)) {
            case 0:
                return kInt32Max;
            case 1:
                return 1 << 30;
            case 2:
                return range(0, 3);
            default:
                return (1 << 30) + static_cast<int32_t>(mRng() % (uint64_t{1} << 30));
        }
    }

  private:
    std::mt19937_64 mRng;
};

std::vector<int32_t> edgeValues() {
    std::vector<int32_t> values = {
        0, 1, -1, 2, -2, kInt32Min, kInt32Min + 1, kInt32Max, kInt32Max - 1};
    for (int bit = 0; bit < 31; ++bit) {
        for (int64_t delta = -1; delta <= 1; ++delta) {
            values.push_back(refWrap((int64_t{1} << bit) + delta));
            values.push_back(refWrap(-(int64_t{1} << bit) + delta));
        }
    }
    return values;
}

TEST_CASE("fixed_point_doubling_high_mul_edges") {
    CHECK(saturatingRoundingDoublingHighMul(kInt32Min, kInt32Min) == kInt32Max);
    CHECK(saturatingRoundingDoublingHighMul(kInt32Min, kInt32Max) == -kInt32Max);
    CHECK(saturatingRoundingDoublingHighMul(kInt32Max, kInt32Max) == kInt32Max - 1);
    CHECK(saturatingRoundingDoublingHighMul(kInt32Min, 1) == -1);
    CHECK(saturatingRoundingDoublingHighMul(kInt32Min, -1) == 1);
    CHECK(saturatingRoundingDoublingHighMul(0, kInt32Min) == 0);
    // Ties (exact .5 results) round towards +infinity for both signs.
    CHECK(saturatingRoundingDoublingHighMul(1 << 15, 1 << 15) == 1);          // +0.5
    CHECK(saturatingRoundingDoublingHighMul(-(1 << 15), 1 << 15) == 0);       // -0.5
    CHECK(saturatingRoundingDoublingHighMul(3 << 15, 1 << 15) == 2);          // +1.5
    CHECK(saturatingRoundingDoublingHighMul(-(3 << 15), 1 << 15) == -1);      // -1.5
    CHECK(saturatingRoundingDoublingHighMul(-(3 << 15) - 1, 1 << 15) == -2);  // just below -1.5
    // Multiplying by "one" (the largest Q0.31 value) loses at most one unit.
    CHECK(saturatingRoundingDoublingHighMul(123456789, kInt32Max) == 123456789);
    CHECK(saturatingRoundingDoublingHighMul(-123456789, kInt32Max) == -123456789);

    CHECK(saturatingRoundingDoublingHighMul(int16_t{-32768}, int16_t{-32768}) == 32767);
    CHECK(saturatingRoundingDoublingHighMul(int16_t{1 << 7}, int16_t{1 << 7}) == 1);
    CHECK(saturatingRoundingDoublingHighMul(int16_t{-(1 << 7)}, int16_t{1 << 7}) == 0);

    const auto edges = edgeValues();
    for (int32_t a : edges) {
        for (int32_t b : edges) {
            CAPTURE(a);
            CAPTURE(b);
            REQUIRE(saturatingRoundingDoublingHighMul(a, b) == refDoublingHighMul(a, b));
        }
    }
}

TEST_CASE("fixed_point_doubling_high_mul_random") {
    Generator gen(0x5eed0001);
    for (int i = 0; i < 1000000; ++i) {
        const int32_t a = gen.interesting();
        const int32_t b = i % 2 ? gen.interesting() : gen.multiplier();
        CAPTURE(a);
        CAPTURE(b);
        REQUIRE(saturatingRoundingDoublingHighMul(a, b) == refDoublingHighMul(a, b));
    }
}

TEST_CASE("fixed_point_rounding_divide_by_pot") {
    for (int32_t x : edgeValues()) {
        CHECK(roundingDivideByPOT(x, 0) == x);
    }
    // Ties round away from zero.
    CHECK(roundingDivideByPOT(1, 1) == 1);
    CHECK(roundingDivideByPOT(-1, 1) == -1);
    CHECK(roundingDivideByPOT(3, 1) == 2);
    CHECK(roundingDivideByPOT(-3, 1) == -2);
    CHECK(roundingDivideByPOT(-5, 2) == -1);  // -1.25
    CHECK(roundingDivideByPOT(-6, 2) == -2);  // -1.5
    CHECK(roundingDivideByPOT(-7, 2) == -2);  // -1.75
    // Exponent 31 reaches the extremes.
    CHECK(roundingDivideByPOT(kInt32Min, 31) == -1);
    CHECK(roundingDivideByPOT(kInt32Max, 31) == 1);
    CHECK(roundingDivideByPOT(1 << 30, 31) == 1);
    CHECK(roundingDivideByPOT((1 << 30) - 1, 31) == 0);
    CHECK(roundingDivideByPOT(-(1 << 30), 31) == -1);
    CHECK(roundingDivideByPOT(-(1 << 30) + 1, 31) == 0);
    CHECK(roundingDivideByPOT(int16_t{-32768}, 15) == -1);
    CHECK(roundingDivideByPOT(int16_t{-16384}, 15) == -1);
    CHECK(roundingDivideByPOT(int16_t{16384}, 15) == 1);
    CHECK(roundingDivideByPOT(int16_t{16383}, 15) == 0);

    const auto edges = edgeValues();
    for (int exponent = 0; exponent <= 31; ++exponent) {
        for (int32_t x : edges) {
            CAPTURE(x);
            CAPTURE(exponent);
            REQUIRE(roundingDivideByPOT(x, exponent) == refRoundingDivideByPOT(x, exponent));
        }
    }
    Generator gen(0x5eed0002);
    for (int i = 0; i < 1000000; ++i) {
        const int32_t x = gen.interesting();
        const int exponent = gen.range(0, 31);
        CAPTURE(x);
        CAPTURE(exponent);
        REQUIRE(roundingDivideByPOT(x, exponent) == refRoundingDivideByPOT(x, exponent));
    }
    for (int exponent = 0; exponent <= 15; ++exponent) {
        for (int32_t x = -32768; x <= 32767; ++x) {
            const auto got = roundingDivideByPOT(static_cast<int16_t>(x), exponent);
            REQUIRE(got == refRoundingDivideByPOT(x, exponent));
        }
    }
}

TEST_CASE("fixed_point_saturating_multiply_by_pot") {
    CHECK(saturatingRoundingMultiplyByPOT(1 << 29, 1) == 1 << 30);
    CHECK(saturatingRoundingMultiplyByPOT((1 << 30) - 1, 1) == kInt32Max - 1);
    CHECK(saturatingRoundingMultiplyByPOT(1 << 30, 1) == kInt32Max);
    CHECK(saturatingRoundingMultiplyByPOT(-(1 << 30) + 1, 1) == kInt32Min + 2);
    CHECK(saturatingRoundingMultiplyByPOT(-(1 << 30), 1) == kInt32Min);
    CHECK(saturatingRoundingMultiplyByPOT(1, 31) == kInt32Max);
    CHECK(saturatingRoundingMultiplyByPOT(-1, 31) == kInt32Min);
    CHECK(saturatingRoundingMultiplyByPOT(0, 31) == 0);
    CHECK(saturatingRoundingMultiplyByPOT(12345, 0) == 12345);
    CHECK(saturatingRoundingMultiplyByPOT(-3, -1) == -2);
    CHECK(saturatingRoundingMultiplyByPOT(int16_t{16384}, 1) == 32767);
    CHECK(saturatingRoundingMultiplyByPOT(int16_t{-16384}, 1) == -32768);
    CHECK(saturatingRoundingMultiplyByPOT(int16_t{100}, 2) == 400);

    Generator gen(0x5eed0003);
    for (int i = 0; i < 200000; ++i) {
        const int32_t x = gen.interesting();
        const int exponent = gen.range(1, 31);
        const int64_t exact = static_cast<int64_t>(x) * (int64_t{1} << exponent);
        const int32_t want = static_cast<int32_t>(std::clamp<int64_t>(exact, kInt32Min, kInt32Max));
        CAPTURE(x);
        CAPTURE(exponent);
        REQUIRE(saturatingRoundingMultiplyByPOT(x, exponent) == want);
    }
}

TEST_CASE("fixed_point_small_helpers") {
    CHECK(wrappingAdd(kInt32Max, 1) == kInt32Min);
    CHECK(wrappingSub(kInt32Min, 1) == kInt32Max);
    CHECK(wrappingNeg(kInt32Min) == kInt32Min);
    CHECK(wrappingAdd(int16_t{32767}, int16_t{1}) == int16_t{-32768});
    CHECK(wrappingShiftLeft(1, 31) == kInt32Min);
    CHECK(wrappingShiftLeft(3, 31) == kInt32Min);
    CHECK(wrappingShiftLeft(-1, 31) == kInt32Min);
    CHECK(wrappingShiftLeft(0x12345678, 8) == 0x34567800);
    CHECK(countLeadingZeros(0u) == 32);
    CHECK(countLeadingZeros(1u) == 31);
    CHECK(countLeadingZeros(0x80000000u) == 0);
    CHECK(roundingHalfSum(1, 2) == 2);
    CHECK(roundingHalfSum(-1, -2) == -2);
    CHECK(roundingHalfSum(kInt32Max, kInt32Max) == kInt32Max);
    CHECK(roundingHalfSum(kInt32Min, kInt32Min) == kInt32Min);
    CHECK(roundingHalfSum(int16_t{-32768}, int16_t{32767}) == int16_t{-1});
    CHECK(saturatingAdd(int16_t{30000}, int16_t{30000}) == int16_t{32767});
    CHECK(saturatingAdd(int16_t{-30000}, int16_t{-30000}) == int16_t{-32768});
}

TEST_CASE("fixed_point_multiply_by_quantized_multiplier") {
    // Multiplier 0.5 * 2^shift.
    constexpr int32_t kHalf = 1 << 30;
    CHECK(multiplyByQuantizedMultiplier(1000, kHalf, 1) == 1000);
    CHECK(multiplyByQuantizedMultiplier(1000, kHalf, 0) == 500);
    CHECK(multiplyByQuantizedMultiplier(-1001, kHalf, 0) == -500);  // -500.5 by round-half-up
    CHECK(multiplyByQuantizedMultiplier(1001, kHalf, 0) == 501);
    CHECK(multiplyByQuantizedMultiplier(kInt32Max, kInt32Max, 0) == kInt32Max - 1);
    CHECK(multiplyByQuantizedMultiplier(kInt32Min, kInt32Max, 0) == -kInt32Max);
    CHECK(multiplyByQuantizedMultiplier(kInt32Min, kInt32Min, 0) == kInt32Max);
    // Shift 31 and -31.
    CHECK(multiplyByQuantizedMultiplier(1, kHalf, 31) == -(1 << 30));  // 1 << 31 wraps to min
    CHECK(multiplyByQuantizedMultiplier(kInt32Max, kInt32Max, -31) == 1);
    CHECK(multiplyByQuantizedMultiplier(kInt32Min, kInt32Max, -31) == -1);
    CHECK(multiplyByQuantizedMultiplier(1 << 30, kInt32Max, -31) == 1);  // two ties rounded up
    CHECK(multiplyByQuantizedMultiplier((1 << 30) - 1, kInt32Max, -31) == 0);
    // Tiny multipliers.
    CHECK(multiplyByQuantizedMultiplier(kInt32Max, 1, 0) == 1);
    CHECK(multiplyByQuantizedMultiplier(kInt32Max, 1, -1) == 1);   // 0.5 rounds away from 0
    CHECK(multiplyByQuantizedMultiplier(kInt32Min, 1, -1) == -1);  // -0.5 too
    CHECK(multiplyByQuantizedMultiplier(kInt32Max, 1, -2) == 0);
    // The scheme rounds twice: 1 * 0.25 is 0 exactly rounded, 1 here; and it is not symmetric,
    // since the high-mul rounds its -0.5 up to 0.
    CHECK(multiplyByQuantizedMultiplier(1, kHalf, -1) == 1);
    CHECK(multiplyByQuantizedMultiplier(-1, kHalf, -1) == 0);

    for (int shift = -31; shift <= 0; ++shift) {
        for (int32_t x : edgeValues()) {
            CHECK(multiplyByQuantizedMultiplierSmallerThanOneExp(x, 1518500250, shift) ==
                  multiplyByQuantizedMultiplier(x, 1518500250, shift));
        }
    }
    for (int shift = 0; shift <= 31; ++shift) {
        for (int32_t x : edgeValues()) {
            CHECK(multiplyByQuantizedMultiplierGreaterThanOne(x, 1518500250, shift) ==
                  multiplyByQuantizedMultiplier(x, 1518500250, shift));
        }
    }
}

TEST_CASE("fixed_point_multiply_by_quantized_multiplier_random") {
    Generator gen(0x5eed0004);
    for (int i = 0; i < 1000000; ++i) {
        const int32_t x = gen.interesting();
        const int32_t multiplier = gen.multiplier();
        const int shift = gen.range(-31, 31);
        CAPTURE(x);
        CAPTURE(multiplier);
        CAPTURE(shift);
        const int32_t got = multiplyByQuantizedMultiplier(x, multiplier, shift);
        REQUIRE(got == refMultiply(x, multiplier, shift));
        // Without wrapping or saturation, double rounding stays within one of the exact product.
        const int64_t shifted = static_cast<int64_t>(x) * (int64_t{1} << std::max(shift, 0));
        if (shifted >= kInt32Min && shifted <= kInt32Max &&
            !(shifted == kInt32Min && multiplier == kInt32Min)) {
            const long double exact =
                std::ldexp(static_cast<long double>(x) * multiplier, shift - 31);
            REQUIRE(std::fabs(static_cast<long double>(got) - exact) <= 1.0L);
        }
    }
}

TEST_CASE("fixed_point_quantize_multiplier") {
    using QM = QuantizedMultiplier;
    CHECK(*quantizeMultiplier(0.0) == QM{0, 0});
    CHECK(*quantizeMultiplier(1.0) == QM{1 << 30, 1});
    CHECK(*quantizeMultiplier(0.5) == QM{1 << 30, 0});
    CHECK(*quantizeMultiplier(0.75) == QM{1610612736, 0});
    CHECK(*quantizeMultiplier(-0.75) == QM{-1610612736, 0});
    CHECK(*quantizeMultiplier(3.0) == QM{1610612736, 2});
    // A mantissa that rounds up to 1.0 renormalizes.
    CHECK(*quantizeMultiplier(1.0 - std::ldexp(1.0, -40)) == QM{1 << 30, 1});
    CHECK(*quantizeMultiplier(0.5 - std::ldexp(1.0, -40)) == QM{1 << 30, 0});
    CHECK(*quantizeMultiplier(1.0 - std::ldexp(1.0, -31)) == QM{kInt32Max, 0});
    // Tiny multipliers: exponent -31 is the last one kept.
    CHECK(*quantizeMultiplier(std::ldexp(1.0, -31)) == QM{1 << 30, -30});
    CHECK(*quantizeMultiplier(std::ldexp(1.0, -32)) == QM{1 << 30, -31});
    CHECK(*quantizeMultiplier(std::ldexp(1.0, -33)) == QM{0, 0});
    CHECK(*quantizeMultiplier(std::ldexp(0.75, -100)) == QM{0, 0});
    CHECK_FALSE(quantizeMultiplier(std::nan("")).has_value());
    CHECK_FALSE(quantizeMultiplier(std::numeric_limits<double>::infinity()).has_value());

    CHECK(*quantizeMultiplierSmallerThanOneExp(0.75) == QM{1610612736, 0});
    CHECK(*quantizeMultiplierSmallerThanOneExp(0.1) == *quantizeMultiplier(0.1));
    CHECK_FALSE(quantizeMultiplierSmallerThanOneExp(0.0).has_value());
    CHECK_FALSE(quantizeMultiplierSmallerThanOneExp(1.0).has_value());
    CHECK_FALSE(quantizeMultiplierSmallerThanOneExp(-0.5).has_value());
    // Below one, but it rounds up to exactly one: the shift would be positive.
    CHECK_FALSE(quantizeMultiplierSmallerThanOneExp(1.0 - std::ldexp(1.0, -40)).has_value());
    CHECK(*quantizeMultiplierGreaterThanOne(1.5) == QM{1610612736, 1});
    CHECK(*quantizeMultiplierGreaterThanOne(std::ldexp(1.0, 20)) == QM{1 << 30, 21});
    CHECK_FALSE(quantizeMultiplierGreaterThanOne(1.0).has_value());
    CHECK_FALSE(quantizeMultiplierGreaterThanOne(0.5).has_value());

    Generator gen(0x5eed0005);
    std::mt19937_64 rng(0x5eed0006);
    std::uniform_real_distribution<double> logUniform(-40.0, 30.0);
    for (int i = 0; i < 200000; ++i) {
        const double real = std::exp2(logUniform(rng));
        CAPTURE(real);
        const auto got = quantizeMultiplier(real);
        REQUIRE(got.has_value());
        REQUIRE(*got == refQuantizeMultiplier(real));
        if (got->multiplier != 0) {
            REQUIRE(got->multiplier >= (1 << 30));
            // The round trip is exact to half a unit of the 31-bit mantissa.
            const double back = std::ldexp(static_cast<double>(got->multiplier), got->shift - 31);
            REQUIRE(std::fabs(back - real) <= std::ldexp(1.0, got->shift - 32) * (1 + 1e-12));
        } else {
            REQUIRE(real < std::ldexp(1.0, -32));
        }
    }
}

TEST_CASE("fixed_point_convolution_multiplier") {
    const float inputScale = 0.1f;
    const float filterScale = 0.3f;
    const float outputScale = 0.7f;
    const float biasScale = inputScale * filterScale;
    const auto multiplier =
        getQuantizedConvolutionMultiplier(inputScale, filterScale, biasScale, outputScale);
    REQUIRE(multiplier.has_value());
    // The product is rounded to float before the division, as in Android.
    CHECK(*multiplier == static_cast<double>(biasScale) / static_cast<double>(outputScale));
    const double doubleProduct = static_cast<double>(inputScale) * filterScale / outputScale;
    REQUIRE(doubleProduct != *multiplier);
    // A bias scale off by more than 1e-6 relative is rejected; within it, accepted.
    CHECK_FALSE(getQuantizedConvolutionMultiplier(inputScale, filterScale, biasScale * 1.00001f,
                                                  outputScale)
                    .has_value());
    CHECK(getQuantizedConvolutionMultiplier(inputScale, filterScale,
                                            std::nextafter(biasScale, 1.0f), outputScale)
              .has_value());
}

TEST_CASE("fixed_point_activation_range_uint8") {
    using A = FusedActivation;
    using R = ActivationRange;
    CHECK(*calculateActivationRangeUint8(A::NONE, 0.5f, 128) == R{0, 255});
    CHECK(*calculateActivationRangeUint8(A::RELU, 0.5f, 128) == R{128, 255});
    CHECK(*calculateActivationRangeUint8(A::RELU1, 0.5f, 128) == R{126, 130});
    CHECK(*calculateActivationRangeUint8(A::RELU6, 0.5f, 128) == R{128, 140});
    CHECK(*calculateActivationRangeUint8(A::RELU6, 0.01f, 0) == R{0, 255});
    CHECK(*calculateActivationRangeUint8(A::RELU1, 0.001f, 100) == R{0, 255});
    CHECK(*calculateActivationRangeUint8(A::RELU, 1.0f, 255) == R{255, 255});
    CHECK(*calculateActivationRangeUint8(A::RELU6, 1e-30f, 7) == R{7, 255});
    // Ties round away from zero: +-1 / 2 = +-0.5.
    CHECK(*calculateActivationRangeUint8(A::RELU1, 2.0f, 10) == R{9, 11});
    CHECK(*calculateActivationRangeUint8(A::RELU6, 4.0f, 10) == R{10, 12});  // 1.5 -> 2
    // The division is in float: 6 / 0.8f is 7.4999999 in double but 7.5f in float.
    CHECK(*calculateActivationRangeUint8(A::RELU6, 0.8f, 0) == R{0, 8});
    CHECK(*calculateActivationRangeUint8(A::RELU1, 0.4f, 100) == R{97, 103});
    CHECK_FALSE(calculateActivationRangeUint8(static_cast<A>(4), 0.5f, 0).has_value());
    CHECK_FALSE(calculateActivationRangeUint8(A::RELU, 0.0f, 0).has_value());
}

TEST_CASE("fixed_point_activation_range_int8") {
    using A = FusedActivation;
    using R = ActivationRange;
    CHECK(*calculateActivationRangeInt8(A::NONE, 0.5f, 0) == R{-128, 127});
    CHECK(*calculateActivationRangeInt8(A::RELU, 0.5f, 0) == R{0, 127});
    CHECK(*calculateActivationRangeInt8(A::RELU1, 0.5f, 0) == R{-2, 2});
    CHECK(*calculateActivationRangeInt8(A::RELU6, 0.5f, 0) == R{0, 12});
    CHECK(*calculateActivationRangeInt8(A::RELU, 0.5f, -128) == R{-128, 127});
    CHECK(*calculateActivationRangeInt8(A::RELU1, 1.0f / 32, -128) == R{-128, -96});
    CHECK(*calculateActivationRangeInt8(A::RELU6, 1.0f / 64, 10) == R{10, 127});
    CHECK(*calculateActivationRangeInt8(A::RELU, 0.1f, 127) == R{127, 127});
    CHECK(*calculateActivationRangeInt8(A::RELU1, 2.0f, -5) == R{-6, -4});
    CHECK(*calculateActivationRangeInt8(A::RELU6, 0.8f, -20) == R{-20, -12});
    CHECK(*calculateActivationRangeInt8(A::RELU1, 0.4f, 0) == R{-3, 3});
    CHECK_FALSE(calculateActivationRangeInt8(static_cast<A>(-1), 0.5f, 0).has_value());
}

TEST_CASE("fixed_point_requantize") {
    const QuantizedMultiplier half{1 << 30, 0};
    const ActivationRange uint8Range{0, 255};
    const ActivationRange int8Range{-128, 127};
    CHECK(requantize(100, 20, half, 10, uint8Range) == 70);
    CHECK(requantize(-100, 0, half, 10, uint8Range) == 0);
    CHECK(requantize(1000, 0, half, 0, uint8Range) == 255);
    CHECK(requantize(-1000, 0, half, 0, int8Range) == -128);
    CHECK(requantize(-3, 0, half, 0, int8Range) == -1);  // -1.5 rounds up in the high-mul
    CHECK(requantize(-5, 0, QuantizedMultiplier{1 << 30, -1}, 0, int8Range) == -1);
    // The accumulator and bias sum wraps like int32 arithmetic: max + 1 is min.
    CHECK(requantize(kInt32Max, 1, QuantizedMultiplier{1 << 30, -20}, 0, int8Range) == -128);
    CHECK(requantize(kInt32Max, 1, QuantizedMultiplier{kInt32Max, -31}, 0, int8Range) == -1);
    CHECK(requantize(0, 0, QuantizedMultiplier{}, -7, int8Range) == -7);

    Generator gen(0x5eed0007);
    for (int i = 0; i < 1000000; ++i) {
        const int32_t acc = gen.interesting();
        const int32_t bias = i % 4 == 0 ? gen.interesting() : gen.range(-100000, 100000);
        const QuantizedMultiplier m{gen.multiplier(), gen.range(-31, i % 8 == 0 ? 31 : 4)};
        const bool isSigned = gen.range(0, 1);
        const int32_t zeroPoint = isSigned ? gen.range(-128, 127) : gen.range(0, 255);
        const int32_t low = isSigned ? -128 : 0;
        const int32_t a = gen.range(low, low + 255);
        const int32_t b = gen.range(low, low + 255);
        const ActivationRange range{std::min(a, b), std::max(a, b)};
        CAPTURE(acc);
        CAPTURE(bias);
        CAPTURE(m.multiplier);
        CAPTURE(m.shift);
        CAPTURE(zeroPoint);
        REQUIRE(requantize(acc, bias, m, zeroPoint, range) ==
                refRequantize(acc, bias, m, zeroPoint, range));
    }
}

TEST_CASE("fixed_point_add_sub_params") {
    const QuantInfo half{0.5f, 0};
    const QuantInfo one{1.0f, 0};
    const auto add = computeAddSubParams(half, half, one, {0, 255}, false);
    REQUIRE(add.has_value());
    CHECK(add->input1 == QuantizedMultiplier{1 << 30, 0});  // 0.5 / (2 * 0.5)
    CHECK(add->input2 == QuantizedMultiplier{1 << 30, 0});
    CHECK(add->output == QuantizedMultiplier{1 << 30, -19});  // 1 / 2^20
    CHECK(addSubElement(10, 20, *add) == 15);
    CHECK(addSubElement(255, 255, *add) == 255);
    const auto sub = computeAddSubParams(half, half, one, {0, 255}, true);
    REQUIRE(sub.has_value());
    CHECK(sub->input2 == QuantizedMultiplier{-(1 << 30), 0});
    CHECK(addSubElement(30, 10, *sub) == 10);
    CHECK(addSubElement(10, 30, *sub) == 0);  // clamped
    // The output multiplier must stay below one.
    CHECK_FALSE(computeAddSubParams(half, half, QuantInfo{1e-7f, 0}, {0, 255}, false).has_value());

    // Against real arithmetic: within one step of the exactly rounded result.
    Generator gen(0x5eed0008);
    std::mt19937 rng(0x5eed0009);
    std::uniform_real_distribution<float> logScale(-8.0f, 0.0f);
    for (int trial = 0; trial < 200; ++trial) {
        const QuantInfo in1{std::exp2(logScale(rng)), gen.range(0, 255)};
        const QuantInfo in2{std::exp2(logScale(rng)), gen.range(0, 255)};
        const QuantInfo out{std::exp2(logScale(rng)) * 2, gen.range(0, 255)};
        const bool subtract = trial % 2;
        const auto params = computeAddSubParams(in1, in2, out, {0, 255}, subtract);
        REQUIRE(params.has_value());
        for (int i = 0; i < 200; ++i) {
            const int32_t q1 = gen.range(0, 255);
            const int32_t q2 = gen.range(0, 255);
            const double real1 = in1.scale * double(q1 - in1.zeroPoint);
            const double real2 = in2.scale * double(q2 - in2.zeroPoint);
            const double real = subtract ? real1 - real2 : real1 + real2;
            const double want =
                std::clamp(std::round(real / out.scale) + out.zeroPoint, 0.0, 255.0);
            CAPTURE(q1);
            CAPTURE(q2);
            REQUIRE(std::abs(addSubElement(q1, q2, *params) - want) <= 1.0);
        }
    }
}

TEST_CASE("fixed_point_mul_params") {
    const auto params = computeMulParams(QuantInfo{0.5f, 128}, QuantInfo{0.25f, 0},
                                         QuantInfo{1.0f, 10}, ActivationRange{0, 255});
    REQUIRE(params.has_value());
    CHECK(params->output == QuantizedMultiplier{1 << 30, -2});  // 0.125
    CHECK(mulElement(136, 8, *params) == 18);                   // (8 * 0.5) * (8 * 0.25) = 8, + 10
    CHECK(mulElement(0, 255, *params) == 0);                    // -64 * 63.75, clamped
    CHECK_FALSE(computeMulParams(QuantInfo{1.0f, 0}, QuantInfo{1.0f, 0}, QuantInfo{1.0f, 0},
                                 ActivationRange{0, 255})
                    .has_value());
}

TEST_CASE("fixed_point_softmax_sigmoid_params") {
    CHECK(calculateInputRadius(4, 0) == 15 * (1 << 27));
    for (int integerBits = 1; integerBits <= 8; ++integerBits) {
        for (int leftShift = 0; leftShift <= 31; ++leftShift) {
            const int64_t want =
                (((int64_t{1} << integerBits) - 1) << (31 - integerBits)) >> leftShift;
            CHECK(calculateInputRadius(integerBits, leftShift) == want);
        }
    }
    const auto softmax = computeSoftmaxParams(1.0f, 1.0f / 256);
    REQUIRE(softmax.has_value());
    CHECK(softmax->input == QuantizedMultiplier{1 << 30, 19});  // 2^26 / 2^8 = 2^18
    CHECK(softmax->diffMin == -31 * 128);
    // A huge beta is capped below 2^31.
    const auto capped = computeSoftmaxParams(1e10f, 1.0f);
    REQUIRE(capped.has_value());
    CHECK(capped->input == QuantizedMultiplier{kInt32Max, 31});
    CHECK_FALSE(computeSoftmaxParams(1e-10f, 1.0f / 256).has_value());

    const auto sigmoid = computeSigmoidParams(1.0f / 16);
    REQUIRE(sigmoid.has_value());
    CHECK(sigmoid->input == QuantizedMultiplier{1 << 30, 24});  // 2^27 / 16 = 2^23
    CHECK(sigmoid->inputRangeRadius == 120);
    CHECK_FALSE(computeSigmoidParams(1e-9f).has_value());
}

TEST_CASE("fixed_point_format") {
    using F0 = FixedPoint<int32_t, 0>;
    using F4 = FixedPoint<int32_t, 4>;
    using H3 = FixedPoint<int16_t, 3>;
    CHECK(F0::kFractionalBits == 31);
    CHECK(F0::one().raw() == kInt32Max);
    CHECK(F4::one().raw() == 1 << 27);
    CHECK(H3::one().raw() == 1 << 12);
    CHECK(F4::constantPOT<-2>().raw() == 1 << 25);
    CHECK(F0::fromInt32Constant(1 << 30).raw() == 1 << 30);
    CHECK(FixedPoint<int16_t, 0>::fromInt32Constant(1 << 30).raw() == 1 << 14);
    CHECK(FixedPoint<int16_t, 0>::fromInt32Constant(1895147668).raw() == 28918);
    CHECK(F4::fromDouble(1.5).raw() == 3 << 26);
    CHECK(F4::fromDouble(100.0).raw() == kInt32Max);
    CHECK(F4::fromDouble(-1.25).toDouble() == -1.25);
    // Products add integer bits; rescale moves the binary point with rounding or saturation.
    const auto product = F4::fromDouble(1.5) * F4::fromDouble(-2.0);
    static_assert(decltype(product)::kIntegerBits == 8);
    CHECK(product.toDouble() == -3.0);
    CHECK(rescale<0>(F4::fromDouble(0.5)).raw() == 1 << 30);
    CHECK(rescale<0>(F4::fromDouble(1.5)).raw() == kInt32Max);
    CHECK(rescale<0>(F4::fromDouble(-3.0)).raw() == kInt32Min);
    CHECK(rescale<8>(F4::fromRaw(24)).raw() == 2);  // 24 / 16 = 1.5 rounds to 2
    CHECK(exactMulByPOT<1>(F4::fromRaw(77)).raw() == 77);
    CHECK(saturatingRoundingMultiplyByPOT<-2>(F4::fromRaw(-10)).raw() == -3);
}

// Largest error over a sweep of inputs (of a fixed-point function against its real counterpart).
template <typename In, typename Fixed, typename Real>
double maxError(double from, double to, int steps, Fixed fixed, Real real) {
    double worst = 0.0;
    for (int i = 0; i <= steps; ++i) {
        const In x = In::fromDouble(from + (to - from) * i / steps);
        worst = std::max(worst, std::fabs(fixed(x).toDouble() - real(x.toDouble())));
    }
    return worst;
}

TEST_CASE("fixed_point_exp_logistic_tanh_accuracy") {
    using F5 = FixedPoint<int32_t, 5>;
    using F4 = FixedPoint<int32_t, 4>;
    using F0 = FixedPoint<int32_t, 0>;
    using H3 = FixedPoint<int16_t, 3>;
    using H0 = FixedPoint<int16_t, 0>;
    const auto expFixed = [](auto x) { return expOnNegativeValues(x); };
    const auto logisticFixed = [](auto x) { return logistic(x); };
    const auto tanhFixed = [](auto x) { return tanh(x); };
    const auto expReal = [](double x) { return std::exp(x); };
    const auto logisticReal = [](double x) { return 1.0 / (1.0 + std::exp(-x)); };
    const auto tanhReal = [](double x) { return std::tanh(x); };
    CHECK(maxError<F5>(-31.9, 0.0, 100000, expFixed, expReal) < 3e-7);
    CHECK(maxError<F0>(-1.0, 0.0, 100000, expFixed, expReal) < 3e-7);
    CHECK(maxError<F4>(-15.9, 15.9, 100000, logisticFixed, logisticReal) < 1e-7);
    CHECK(maxError<F4>(-15.9, 15.9, 100000, tanhFixed, tanhReal) < 2e-7);
    CHECK(maxError<F0>(
              0.0, 0.9999, 100000, [](auto x) { return oneOverOnePlusXForXIn01(x); },
              [](double x) { return 1.0 / (1.0 + x); }) < 2e-8);
    CHECK(maxError<H3>(-7.99, 7.99, 20000, logisticFixed, logisticReal) < 4e-4);
    CHECK(maxError<H3>(-7.99, 7.99, 20000, tanhFixed, tanhReal) < 4e-4);
    CHECK(maxError<H0>(-1.0, 0.0, 20000, expFixed, expReal) < 4e-4);

    CHECK(expOnNegativeValues(F5::zero()) == F0::one());
    CHECK(expOnNegativeValues(FixedPoint<int32_t, 6>::fromDouble(-32.5)) == F0::zero());
    CHECK(expOnNegativeValues(FixedPoint<int32_t, 6>::fromDouble(-20.0)).raw() > 0);
    CHECK(logistic(F4::zero()).raw() == 1 << 30);
    CHECK(tanh(F4::zero()).raw() == 0);
    CHECK(tanh(F4::fromRaw(kInt32Min)).raw() < -2147483000);
    CHECK(logistic(F4::fromRaw(kInt32Max)).raw() > 2147483000);
}

TEST_CASE("fixed_point_int16_hard_swish_primitives") {
    // SQDMULH truncates towards zero; only min * min saturates.
    CHECK(saturatingDoublingHighMul(int16_t{-32768}, int16_t{-32768}) == 32767);
    CHECK(saturatingDoublingHighMul(int16_t{-32768}, int16_t{32767}) == -32767);
    CHECK(saturatingDoublingHighMul(int16_t{3}, int16_t{-16384}) == -1);  // -1.5 truncates
    std::mt19937 rng(11);
    for (int i = 0; i < 200000; ++i) {
        const auto a = static_cast<int16_t>(rng());
        const auto b = static_cast<int16_t>(rng());
        if (a == -32768 && b == -32768) continue;
        REQUIRE(saturatingDoublingHighMul(a, b) ==
                static_cast<int16_t>(std::trunc(static_cast<double>(a) * b / 32768.0)));
    }
    CHECK(saturatingLeftShift(int16_t{5}, 0) == 5);
    CHECK(saturatingLeftShift(int16_t{16383}, 1) == 32766);
    CHECK(saturatingLeftShift(int16_t{16384}, 1) == 32767);
    CHECK(saturatingLeftShift(int16_t{-16384}, 1) == -32768);
    CHECK(saturatingLeftShift(int16_t{-16385}, 1) == -32768);
    CHECK(saturatingLeftShift(int16_t{1}, 15) == 32767);
    CHECK(saturatingLeftShift(int16_t{-1}, 15) == -32768);

    // Q0.31 to Q0.15 rounds half up and saturates near 2^31.
    CHECK(downscaleMultiplierToInt16(0) == 0);
    CHECK(downscaleMultiplierToInt16(1 << 30) == 16384);
    CHECK(downscaleMultiplierToInt16((1 << 30) + (1 << 15) - 1) == 16384);
    CHECK(downscaleMultiplierToInt16((1 << 30) + (1 << 15)) == 16385);
    CHECK(downscaleMultiplierToInt16(kInt32Max - (1 << 15) - 1) == 32767);
    CHECK(downscaleMultiplierToInt16(kInt32Max) == 32767);
}

TEST_CASE("fixed_point_hard_swish_element") {
    // Within one output step of x * relu6(x + 3) / 6 computed exactly, over every uint8 input.
    for (const float inScale : {0.01f, 0.05f, 0.5f}) {
        for (const float outScale : {0.01f, 0.03f, 0.2f}) {
            for (const int32_t inZero : {0, 100, 255}) {
                const int32_t outZero = 20;
                const auto params = computeHardSwishParams({inScale, inZero}, {outScale, outZero});
                REQUIRE(params.has_value());
                CHECK(params->outputShift <= 0);
                for (int32_t v = 0; v <= 255; ++v) {
                    const double x = (v - inZero) * static_cast<double>(inScale);
                    const double real = x * std::min(6.0, std::max(0.0, x + 3.0)) / 6.0;
                    const long expected =
                        std::clamp<long>(std::lround(real / outScale) + outZero, 0, 255);
                    REQUIRE(std::abs(hardSwishElement(v, *params, 0, 255) - expected) <= 1);
                }
            }
        }
    }
    // Outputs finer than the hires input scale (input / 128) need a multiplier above one.
    CHECK_FALSE(computeHardSwishParams({1.0f, 0}, {0.001f, 0}).has_value());
    // Clamping to the signed range.
    const auto params = computeHardSwishParams({0.5f, 0}, {0.01f, 0});
    REQUIRE(params.has_value());
    CHECK(hardSwishElement(127, *params, -128, 127) == 127);
    CHECK(hardSwishElement(-128, *params, -128, 127) == 0);
}

TEST_CASE("fixed_point_inverse_sqrt_multiplier") {
    // 0 and 1 are both treated as 1.
    CHECK(inverseSqrtMultiplier(0) == QuantizedMultiplier{kInt32Max, 0});
    CHECK(inverseSqrtMultiplier(1) == QuantizedMultiplier{kInt32Max, 0});
    std::mt19937 rng(5);
    std::vector<int32_t> inputs = {2,       3,
                                   4,       5,
                                   15,      16,
                                   17,      (1 << 27) - 1,
                                   1 << 27, (1 << 29) - 1,
                                   1 << 29, (1 << 29) + 1,
                                   1 << 30, kInt32Max};
    for (int32_t x = 6; x < 70000; ++x) inputs.push_back(x);
    for (int i = 0; i < 200000; ++i)
        inputs.push_back(2 + static_cast<int32_t>(rng() % 2147483645u));
    double worst = 0.0;
    for (const int32_t x : inputs) {
        const QuantizedMultiplier m = inverseSqrtMultiplier(x);
        REQUIRE(m.shift <= 0);
        REQUIRE(m.multiplier > 0);
        const double real = std::ldexp(static_cast<double>(m.multiplier), m.shift - 31);
        worst = std::max(worst, std::abs(real * std::sqrt(static_cast<double>(x)) - 1.0));
    }
    CHECK(worst < 2e-6);
}

TEST_CASE("fixed_point_checked_log2") {
    CHECK(checkedLog2(1.0f) == 0);
    CHECK(checkedLog2(0.00048828125f) == -11);
    CHECK(checkedLog2(3.05176e-05f) == -15);  // a rounded 2^-15, as CTS models give it
    CHECK(checkedLog2(4096.0f) == 12);
    CHECK_FALSE(checkedLog2(3.0f).has_value());
    CHECK_FALSE(checkedLog2(0.0078f).has_value());
}

}  // namespace
}  // namespace nncosim::fixedpoint

#if __has_include(<gemmlowp/fixedpoint/fixedpoint.h>)
#include <gemmlowp/fixedpoint/fixedpoint.h>

namespace nncosim::fixedpoint {
namespace {

// gemmlowp (Debian's libgemmlowp-dev) is the code Android's kernels call: bit-exact agreement
// with it over edges, random values and whole int16 ranges.
template <typename Raw, int I>
gemmlowp::FixedPoint<Raw, I> toGemmlowp(FixedPoint<Raw, I> x) {
    return gemmlowp::FixedPoint<Raw, I>::FromRaw(x.raw());
}

template <int Exponent>
void checkMultiplyByPOT(const std::vector<int32_t>& values) {
    for (int32_t x : values) {
        CAPTURE(x);
        REQUIRE(saturatingRoundingMultiplyByPOT(x, Exponent) ==
                gemmlowp::SaturatingRoundingMultiplyByPOT<Exponent>(x));
    }
}

template <typename Raw, int I>
void checkFunctions(const std::vector<Raw>& raws) {
    using F = FixedPoint<Raw, I>;
    using G = gemmlowp::FixedPoint<Raw, I>;
    for (Raw raw : raws) {
        if (raw == std::numeric_limits<Raw>::min()) {
            continue;  // gemmlowp negates it, which is undefined
        }
        CAPTURE(raw);
        const F x = F::fromRaw(raw);
        const G g = G::FromRaw(raw);
        REQUIRE(logistic(x).raw() == gemmlowp::logistic(g).raw());
        REQUIRE(tanh(x).raw() == gemmlowp::tanh(g).raw());
        if (raw <= 0) {
            REQUIRE(expOnNegativeValues(x).raw() == gemmlowp::exp_on_negative_values(g).raw());
        }
    }
}

template <typename Raw>
void checkDivisions(const std::vector<Raw>& raws) {
    using F = FixedPoint<Raw, 0>;
    using G = gemmlowp::FixedPoint<Raw, 0>;
    for (Raw raw : raws) {
        if (raw < 0) {
            continue;
        }
        CAPTURE(raw);
        REQUIRE(oneOverOnePlusXForXIn01(F::fromRaw(raw)).raw() ==
                gemmlowp::one_over_one_plus_x_for_x_in_0_1(G::FromRaw(raw)).raw());
        REQUIRE(oneMinusXOverOnePlusXForXIn01(F::fromRaw(raw)).raw() ==
                gemmlowp::one_minus_x_over_one_plus_x_for_x_in_0_1(G::FromRaw(raw)).raw());
    }
}

TEST_CASE("fixed_point_matches_gemmlowp") {
    std::vector<int32_t> values = edgeValues();
    Generator gen(0x5eed000a);
    for (int i = 0; i < 300000; ++i) {
        values.push_back(i % 3 ? gen.uniform() : gen.interesting());
    }
    for (size_t i = 0; i + 1 < values.size(); ++i) {
        const int32_t a = values[i];
        const int32_t b = values[i + 1];
        REQUIRE(saturatingRoundingDoublingHighMul(a, b) ==
                gemmlowp::SaturatingRoundingDoublingHighMul(a, b));
        REQUIRE(roundingHalfSum(a, b) == gemmlowp::RoundingHalfSum(a, b));
        const int exponent = static_cast<int>(static_cast<uint32_t>(b) % 32);
        REQUIRE(roundingDivideByPOT(a, exponent) == gemmlowp::RoundingDivideByPOT(a, exponent));
    }
    checkMultiplyByPOT<-31>(values);
    checkMultiplyByPOT<-7>(values);
    checkMultiplyByPOT<-1>(values);
    checkMultiplyByPOT<1>(values);
    checkMultiplyByPOT<7>(values);
    checkMultiplyByPOT<30>(values);

    std::vector<int32_t> sample(values.begin(), values.begin() + 60000);
    checkFunctions<int32_t, 0>(sample);
    checkFunctions<int32_t, 1>(sample);
    checkFunctions<int32_t, 4>(sample);
    checkFunctions<int32_t, 5>(sample);
    checkFunctions<int32_t, 6>(sample);
    checkFunctions<int32_t, 12>(sample);
    checkDivisions<int32_t>(sample);

    std::vector<int16_t> all16;
    for (int32_t x = -32768; x <= 32767; ++x) {
        all16.push_back(static_cast<int16_t>(x));
    }
    for (size_t i = 0; i + 1 < all16.size(); i += 7) {
        const int16_t a = all16[i];
        const int16_t b = all16[all16.size() - 1 - i];
        REQUIRE(saturatingRoundingDoublingHighMul(a, b) ==
                gemmlowp::SaturatingRoundingDoublingHighMul(a, b));
    }
    checkFunctions<int16_t, 0>(all16);
    checkFunctions<int16_t, 3>(all16);
    checkFunctions<int16_t, 5>(all16);
    checkDivisions<int16_t>(all16);
}

}  // namespace
}  // namespace nncosim::fixedpoint
#endif
