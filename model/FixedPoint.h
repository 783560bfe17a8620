// Bit-exact NNAPI quantized arithmetic: the gemmlowp/TFLite fixed-point scheme that Android's CPU
// reference kernels use, in one place.
//
// This header is also the specification of the NPU's requantization: rtl/npu_requant.sv computes
// requantize() bit for bit and its testbench compares against this file.
//
// Conventions followed throughout:
//  - int32 additions and left shifts wrap modulo 2^32. Android's kernels rely on the same
//    two's-complement behaviour; here it is written without undefined behaviour.
//  - A "shift" is a left-shift exponent (negative means a right shift), the form TFLite's
//    QuantizeMultiplier returns: real = multiplier * 2^(shift - 31).
//  - Names follow this project's style; the TFLite/gemmlowp name is given where it differs in
//    more than case, so the kernels can be compared with Android's.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <optional>
#include <type_traits>

#include "model/Types.h"

namespace nncosim::fixedpoint {

inline constexpr int32_t kInt32Min = std::numeric_limits<int32_t>::min();
inline constexpr int32_t kInt32Max = std::numeric_limits<int32_t>::max();

// ---------------------------------------------------------------------------------------------
// Part 1: integer primitives (int32, and int16 where gemmlowp's FixedPoint<int16_t> needs them).
// ---------------------------------------------------------------------------------------------

template <typename T>
inline constexpr bool kIsRawType = std::is_same_v<T, int32_t> || std::is_same_v<T, int16_t>;

/// a + b modulo 2^bits.
template <typename T>
constexpr T wrappingAdd(T a, T b) {
    using U = std::make_unsigned_t<T>;
    return static_cast<T>(static_cast<U>(static_cast<U>(a) + static_cast<U>(b)));
}

/// a - b modulo 2^bits.
template <typename T>
constexpr T wrappingSub(T a, T b) {
    using U = std::make_unsigned_t<T>;
    return static_cast<T>(static_cast<U>(static_cast<U>(a) - static_cast<U>(b)));
}

/// -a modulo 2^bits (the minimum stays the minimum).
template <typename T>
constexpr T wrappingNeg(T a) {
    return wrappingSub(T{0}, a);
}

/// x * 2^shift modulo 2^32; shift must be in [0, 31].
constexpr int32_t wrappingShiftLeft(int32_t x, int shift) {
    return static_cast<int32_t>(static_cast<uint32_t>(x) << shift);
}

/// Number of leading zero bits; 32 for zero.
constexpr int countLeadingZeros(uint32_t x) {
    return x == 0 ? 32 : __builtin_clz(x);
}

/// round(a * b / 2^(bits-1)) with ties towards +infinity, saturating the single overflow case
/// min * min to max. This is ARM's VQRDMULH; gemmlowp's SaturatingRoundingDoublingHighMul.
constexpr int32_t saturatingRoundingDoublingHighMul(int32_t a, int32_t b) {
    if (a == kInt32Min && b == kInt32Min) {
        return kInt32Max;
    }
    const int64_t product = static_cast<int64_t>(a) * static_cast<int64_t>(b);
    const int64_t nudge = product >= 0 ? (int64_t{1} << 30) : (1 - (int64_t{1} << 30));
    // Division truncates towards zero; with the nudge above that rounds ties upwards.
    return static_cast<int32_t>((product + nudge) / (int64_t{1} << 31));
}

constexpr int16_t saturatingRoundingDoublingHighMul(int16_t a, int16_t b) {
    constexpr int16_t kMin = std::numeric_limits<int16_t>::min();
    if (a == kMin && b == kMin) {
        return std::numeric_limits<int16_t>::max();
    }
    const int32_t product = static_cast<int32_t>(a) * static_cast<int32_t>(b);
    const int32_t nudge = product >= 0 ? (1 << 14) : (1 - (1 << 14));
    return static_cast<int16_t>((product + nudge) / (1 << 15));
}

/// x / 2^exponent rounded to nearest, ties away from zero (a rounding arithmetic right shift);
/// exponent must be in [0, bits - 1].
template <typename T>
constexpr T roundingDivideByPOT(T x, int exponent) {
    static_assert(kIsRawType<T>);
    const T mask = static_cast<T>((int64_t{1} << exponent) - 1);
    const T remainder = static_cast<T>(x & mask);
    const T threshold = static_cast<T>((mask >> 1) + (x < 0 ? 1 : 0));
    return static_cast<T>((x >> exponent) + (remainder > threshold ? 1 : 0));
}

/// x * 2^exponent: saturating for exponent > 0, rounding (roundingDivideByPOT) for exponent < 0.
/// exponent must be in [-(bits - 1), bits - 1]. gemmlowp's SaturatingRoundingMultiplyByPOT and
/// TFLite's SaturatingRoundingMultiplyByPOTParam.
template <typename T>
constexpr T saturatingRoundingMultiplyByPOT(T x, int exponent) {
    static_assert(kIsRawType<T>);
    if (exponent < 0) {
        return roundingDivideByPOT(x, -exponent);
    }
    if (exponent == 0) {
        return x;
    }
    constexpr int kBits = 8 * sizeof(T);
    const int32_t threshold = (int32_t{1} << (kBits - 1 - exponent)) - 1;
    if (x > threshold) {
        return std::numeric_limits<T>::max();
    }
    if (x < -threshold) {
        return std::numeric_limits<T>::min();
    }
    using U = std::make_unsigned_t<T>;
    return static_cast<T>(static_cast<U>(static_cast<U>(x) << exponent));
}

/// (a + b) / 2 rounded to nearest, ties away from zero (ARM's VRHADD).
template <typename T>
constexpr T roundingHalfSum(T a, T b) {
    static_assert(kIsRawType<T>);
    const int64_t sum = static_cast<int64_t>(a) + static_cast<int64_t>(b);
    const int64_t sign = sum >= 0 ? 1 : -1;
    return static_cast<T>((sum + sign) / 2);
}

/// a + b clamped to the range of T.
template <typename T>
constexpr T saturatingAdd(T a, T b) {
    static_assert(kIsRawType<T>);
    const int64_t sum = static_cast<int64_t>(a) + static_cast<int64_t>(b);
    return static_cast<T>(
        std::clamp<int64_t>(sum, std::numeric_limits<T>::min(), std::numeric_limits<T>::max()));
}

/// x * multiplier * 2^(shift - 31) with TFLite's double rounding: a wrapping left shift by
/// max(shift, 0), saturatingRoundingDoublingHighMul, then a rounding right shift by
/// max(-shift, 0). shift must be in [-31, 31].
constexpr int32_t multiplyByQuantizedMultiplier(int32_t x, int32_t multiplier, int shift) {
    const int leftShift = shift > 0 ? shift : 0;
    const int rightShift = shift > 0 ? 0 : -shift;
    return roundingDivideByPOT(
        saturatingRoundingDoublingHighMul(wrappingShiftLeft(x, leftShift), multiplier), rightShift);
}

/// The form for multipliers below one: leftShift in [-31, 0].
constexpr int32_t multiplyByQuantizedMultiplierSmallerThanOneExp(int32_t x, int32_t multiplier,
                                                                 int leftShift) {
    return roundingDivideByPOT(saturatingRoundingDoublingHighMul(x, multiplier), -leftShift);
}

/// The form for multipliers above one: leftShift in [0, 31].
constexpr int32_t multiplyByQuantizedMultiplierGreaterThanOne(int32_t x, int32_t multiplier,
                                                              int leftShift) {
    return saturatingRoundingDoublingHighMul(wrappingShiftLeft(x, leftShift), multiplier);
}

// ---------------------------------------------------------------------------------------------
// Part 2: quantized multipliers, activation ranges and the requantization stage.
// ---------------------------------------------------------------------------------------------

/// A real multiplier as multiplier * 2^(shift - 31); for a positive real, multiplier is 0 or in
/// [2^30, 2^31).
struct QuantizedMultiplier {
    int32_t multiplier = 0;
    int32_t shift = 0;

    friend constexpr bool operator==(QuantizedMultiplier a, QuantizedMultiplier b) {
        return a.multiplier == b.multiplier && a.shift == b.shift;
    }
    friend constexpr bool operator!=(QuantizedMultiplier a, QuantizedMultiplier b) {
        return !(a == b);
    }
};

/// The scale and zero point of a quantized operand.
struct QuantInfo {
    float scale = 0.0f;
    int32_t zeroPoint = 0;
};

/// Android's quantization of a real value (QUANTIZE, and the float-computed quantized
/// operations): zeroPoint + round(value / scale) in float, clamped to T's range; NaN gives the
/// maximum, as std::min/std::max order it.
template <typename T>
T quantizeValue(float value, float scale, int32_t zeroPoint) {
    constexpr float kMin = std::numeric_limits<T>::min();
    constexpr float kMax = std::numeric_limits<T>::max();
    const float q = static_cast<float>(zeroPoint) + std::round(value / scale);
    const float upper = q < kMax ? q : kMax;  // std::min<float>(kMax, q)
    return static_cast<T>(kMin < upper ? upper : kMin);
}

/// Android's dequantization: scale * (value - zeroPoint) in float.
inline float dequantizeValue(int32_t value, float scale, int32_t zeroPoint) {
    return scale * static_cast<float>(value - zeroPoint);
}

/// Quantized RSQRT's real function, as Android computes it between dequantization and
/// quantization.
inline float reciprocalSqrt(float x) {
    return 1.0f / std::sqrt(x);
}

/// TFLite's QuantizeMultiplier: frexp, then the mantissa rounded to 31 fractional bits. A mantissa
/// that rounds up to 1.0 becomes 0.5 with the exponent raised; multipliers below about 2^-31
/// flush to zero. Fails only for values that are not finite.
inline std::optional<QuantizedMultiplier> quantizeMultiplier(double realMultiplier) {
    if (!std::isfinite(realMultiplier)) {
        return std::nullopt;
    }
    if (realMultiplier == 0.0) {
        return QuantizedMultiplier{};
    }
    int exponent = 0;
    const double mantissa = std::frexp(realMultiplier, &exponent);
    int64_t fixed = static_cast<int64_t>(std::round(mantissa * static_cast<double>(1LL << 31)));
    if (fixed == (int64_t{1} << 31)) {
        fixed /= 2;
        ++exponent;
    }
    if (exponent < -31) {
        // Every bit would be shifted out: represent it as an exact zero instead.
        return QuantizedMultiplier{};
    }
    return QuantizedMultiplier{static_cast<int32_t>(fixed), exponent};
}

/// Android's QuantizeMultiplierSmallerThanOneExp: requires 0 < realMultiplier < 1 and yields a
/// shift <= 0.
inline std::optional<QuantizedMultiplier> quantizeMultiplierSmallerThanOneExp(
    double realMultiplier) {
    if (!(realMultiplier > 0.0 && realMultiplier < 1.0)) {
        return std::nullopt;
    }
    const auto result = quantizeMultiplier(realMultiplier);
    if (!result || result->shift > 0) {
        return std::nullopt;
    }
    return result;
}

/// Android's QuantizeMultiplierGreaterThanOne: requires realMultiplier > 1 and yields a shift >= 0.
inline std::optional<QuantizedMultiplier> quantizeMultiplierGreaterThanOne(double realMultiplier) {
    if (!(realMultiplier > 1.0)) {
        return std::nullopt;
    }
    const auto result = quantizeMultiplier(realMultiplier);
    if (!result || result->shift < 0) {
        return std::nullopt;
    }
    return result;
}

/// Android's GetQuantizedConvolutionMultipler: inputScale * filterScale / outputScale, after
/// checking that the bias scale matches the input product scale (relative 1e-6). The product is
/// rounded to float first, as Android computes it; bit-exact multipliers depend on that.
inline std::optional<double> getQuantizedConvolutionMultiplier(float inputScale, float filterScale,
                                                               float biasScale, float outputScale) {
    const float productScaleFloat = inputScale * filterScale;
    const double productScale = productScaleFloat;
    const double bias = biasScale;
    if (!(std::abs(productScale - bias) <= 1e-6 * std::min(productScale, bias))) {
        return std::nullopt;
    }
    if (!(productScale >= 0.0)) {
        return std::nullopt;
    }
    return productScale / outputScale;
}

/// Inclusive range of quantized output values after the fused activation.
struct ActivationRange {
    int32_t min = 0;
    int32_t max = 0;

    friend constexpr bool operator==(ActivationRange a, ActivationRange b) {
        return a.min == b.min && a.max == b.max;
    }
};

/// Android's CalculateActivationRangeImpl: the real bounds 0, 6, -1, 1 are quantized with
/// zeroPoint + round(bound / scale) (float division, ties away from zero) and intersected with
/// [qmin, qmax]. Fails for an unknown activation or a scale that is not positive.
inline std::optional<ActivationRange> calculateActivationRange(FusedActivation activation,
                                                               float scale, int32_t zeroPoint,
                                                               int32_t qmin, int32_t qmax) {
    if (!(scale > 0.0f)) {
        return std::nullopt;
    }
    const auto quantize = [scale, zeroPoint](float bound) {
        const float steps = std::round(bound / scale);
        // Bounding before the conversion keeps it defined; the clamps below hide the difference.
        constexpr float kLimit = 1 << 30;
        return zeroPoint + static_cast<int32_t>(std::clamp(steps, -kLimit, kLimit));
    };
    switch (activation) {
        case FusedActivation::NONE:
            return ActivationRange{qmin, qmax};
        case FusedActivation::RELU:
            return ActivationRange{std::max(qmin, quantize(0.0f)), qmax};
        case FusedActivation::RELU1:
            return ActivationRange{std::max(qmin, quantize(-1.0f)), std::min(qmax, quantize(1.0f))};
        case FusedActivation::RELU6:
            return ActivationRange{std::max(qmin, quantize(0.0f)), std::min(qmax, quantize(6.0f))};
    }
    return std::nullopt;
}

/// The activation range of a TENSOR_QUANT8_ASYMM output, [0, 255] at most.
inline std::optional<ActivationRange> calculateActivationRangeUint8(FusedActivation activation,
                                                                    float scale,
                                                                    int32_t zeroPoint) {
    return calculateActivationRange(activation, scale, zeroPoint, 0, 255);
}

/// The activation range of a TENSOR_QUANT8_ASYMM_SIGNED output, [-128, 127] at most.
inline std::optional<ActivationRange> calculateActivationRangeInt8(FusedActivation activation,
                                                                   float scale, int32_t zeroPoint) {
    return calculateActivationRange(activation, scale, zeroPoint, -128, 127);
}

/// The output stage of every accumulating operation (CONV_2D, DEPTHWISE_CONV_2D,
/// FULLY_CONNECTED...; per tensor or per channel): (accumulator + bias) scaled by the quantized
/// multiplier, plus the output zero point, clamped to the activation range. Both additions wrap
/// as int32 arithmetic does. The NPU's requantization unit implements exactly this function.
constexpr int32_t requantize(int32_t accumulator, int32_t bias, QuantizedMultiplier scale,
                             int32_t zeroPoint, ActivationRange range) {
    const int32_t scaled = multiplyByQuantizedMultiplier(wrappingAdd(accumulator, bias),
                                                         scale.multiplier, scale.shift);
    return std::clamp(wrappingAdd(scaled, zeroPoint), range.min, range.max);
}

/// Parameters of quantized ADD and SUB as Android's addQuant8/subQuant8 derive them: both inputs
/// are moved to a common scale of twice the larger input scale with 20 bits of headroom, summed,
/// and rescaled to the output. SUB negates the second input's multiplier.
struct AddSubParams {
    static constexpr int kLeftShift = 20;
    int32_t input1Offset = 0;  // minus the zero point of input 1
    int32_t input2Offset = 0;
    int32_t outputOffset = 0;  // the output zero point
    QuantizedMultiplier input1;
    QuantizedMultiplier input2;
    QuantizedMultiplier output;
    ActivationRange range;
};

inline std::optional<AddSubParams> computeAddSubParams(QuantInfo input1, QuantInfo input2,
                                                       QuantInfo output, ActivationRange range,
                                                       bool subtract) {
    // Android computes these in float before widening to double; bit-exactness depends on it.
    const float twiceMaxInputScaleFloat = 2 * std::max(input1.scale, input2.scale);
    const float outputDenominator = (1 << AddSubParams::kLeftShift) * output.scale;
    const double twiceMaxInputScale = twiceMaxInputScaleFloat;
    const auto input1Multiplier =
        quantizeMultiplierSmallerThanOneExp(static_cast<double>(input1.scale) / twiceMaxInputScale);
    const auto input2Multiplier =
        quantizeMultiplierSmallerThanOneExp(static_cast<double>(input2.scale) / twiceMaxInputScale);
    const auto outputMultiplier = quantizeMultiplierSmallerThanOneExp(
        twiceMaxInputScale / static_cast<double>(outputDenominator));
    if (!input1Multiplier || !input2Multiplier || !outputMultiplier) {
        return std::nullopt;
    }
    AddSubParams params;
    params.input1Offset = -input1.zeroPoint;
    params.input2Offset = -input2.zeroPoint;
    params.outputOffset = output.zeroPoint;
    params.input1 = *input1Multiplier;
    params.input2 = *input2Multiplier;
    if (subtract) {
        params.input2.multiplier = -params.input2.multiplier;
    }
    params.output = *outputMultiplier;
    params.range = range;
    return params;
}

/// One element of quantized ADD/SUB (TFLite's AddElementwise): the stored values in, the stored
/// output value out.
constexpr int32_t addSubElement(int32_t value1, int32_t value2, const AddSubParams& params) {
    const int32_t shifted1 =
        wrappingShiftLeft(wrappingAdd(params.input1Offset, value1), AddSubParams::kLeftShift);
    const int32_t shifted2 =
        wrappingShiftLeft(wrappingAdd(params.input2Offset, value2), AddSubParams::kLeftShift);
    const int32_t scaled1 = multiplyByQuantizedMultiplierSmallerThanOneExp(
        shifted1, params.input1.multiplier, params.input1.shift);
    const int32_t scaled2 = multiplyByQuantizedMultiplierSmallerThanOneExp(
        shifted2, params.input2.multiplier, params.input2.shift);
    const int32_t sum = multiplyByQuantizedMultiplierSmallerThanOneExp(
        wrappingAdd(scaled1, scaled2), params.output.multiplier, params.output.shift);
    return std::clamp(wrappingAdd(sum, params.outputOffset), params.range.min, params.range.max);
}

/// Parameters of quantized MUL as Android's mulQuant8 derives them: the float product of the input
/// scales over the output scale, which must be below one.
struct MulParams {
    int32_t input1Offset = 0;
    int32_t input2Offset = 0;
    int32_t outputOffset = 0;
    QuantizedMultiplier output;
    ActivationRange range;
};

inline std::optional<MulParams> computeMulParams(QuantInfo input1, QuantInfo input2,
                                                 QuantInfo output, ActivationRange range) {
    const float productScale = input1.scale * input2.scale;
    const auto multiplier = quantizeMultiplierSmallerThanOneExp(static_cast<double>(productScale) /
                                                                static_cast<double>(output.scale));
    if (!multiplier) {
        return std::nullopt;
    }
    return MulParams{-input1.zeroPoint, -input2.zeroPoint, output.zeroPoint, *multiplier, range};
}

/// One element of quantized MUL (TFLite's MulElementwise).
constexpr int32_t mulElement(int32_t value1, int32_t value2, const MulParams& params) {
    const int32_t product =
        (params.input1Offset + value1) * (params.input2Offset + value2);  // |.| < 2^17
    const int32_t scaled = multiplyByQuantizedMultiplierSmallerThanOneExp(
        product, params.output.multiplier, params.output.shift);
    return std::clamp(wrappingAdd(scaled, params.outputOffset), params.range.min, params.range.max);
}

/// Android's CalculateInputRadius: the largest input difference (in quantized steps) whose
/// rescaled value still fits a FixedPoint with inputIntegerBits integer bits.
inline int32_t calculateInputRadius(int inputIntegerBits, int inputLeftShift) {
    const double maxInputRescaled = 1.0 * ((1 << inputIntegerBits) - 1) *
                                    static_cast<double>(1LL << (31 - inputIntegerBits)) /
                                    static_cast<double>(1LL << inputLeftShift);
    // floor keeps the magnitude strictly below the representable maximum.
    return static_cast<int32_t>(std::floor(maxInputRescaled));
}

/// Input scaling of quantized SOFTMAX (Android's softmaxQuant8): differences from the row maximum
/// are rescaled to FixedPoint<int32_t, kScaledDiffIntegerBits> by a multiplier above one; those
/// below diffMin contribute nothing. Exponentials accumulate in
/// FixedPoint<int32_t, kAccumulationIntegerBits>.
struct SoftmaxParams {
    static constexpr int kScaledDiffIntegerBits = 5;
    static constexpr int kAccumulationIntegerBits = 12;
    QuantizedMultiplier input;  // shift >= 0
    int32_t diffMin = 0;
};

inline std::optional<SoftmaxParams> computeSoftmaxParams(float beta, float inputScale) {
    const double realMultiplier =
        std::min(1.0 * beta * inputScale *
                     static_cast<double>(1 << (31 - SoftmaxParams::kScaledDiffIntegerBits)),
                 static_cast<double>(1LL << 31) - 1.0);
    const auto multiplier = quantizeMultiplierGreaterThanOne(realMultiplier);
    if (!multiplier) {
        return std::nullopt;
    }
    return SoftmaxParams{*multiplier, -calculateInputRadius(SoftmaxParams::kScaledDiffIntegerBits,
                                                            multiplier->shift)};
}

/// Input scaling of quantized LOGISTIC and TANH (Android's logisticQuant8/tanhQuant8): the
/// centred input is rescaled to FixedPoint<int32_t, kInputIntegerBits>; inputs at or beyond the
/// radius saturate the output.
struct SigmoidParams {
    static constexpr int kInputIntegerBits = 4;
    QuantizedMultiplier input;  // shift >= 0
    int32_t inputRangeRadius = 0;
};

inline std::optional<SigmoidParams> computeSigmoidParams(float inputScale) {
    const double realMultiplier =
        inputScale * static_cast<double>(1 << (31 - SigmoidParams::kInputIntegerBits));
    const auto multiplier = quantizeMultiplierGreaterThanOne(realMultiplier);
    if (!multiplier) {
        return std::nullopt;
    }
    return SigmoidParams{*multiplier,
                         calculateInputRadius(SigmoidParams::kInputIntegerBits, multiplier->shift)};
}

// ---------------------------------------------------------------------------------------------
// Part 3: gemmlowp's FixedPoint numbers and the exp / logistic / tanh built from them.
// ---------------------------------------------------------------------------------------------

/// A signed fixed-point number in Raw (int32_t or int16_t) with IntegerBits integer bits (sign bit
/// excluded): the range is [-2^IntegerBits, 2^IntegerBits), "Q IntegerBits . fractional bits".
template <typename Raw, int IntegerBits>
class FixedPoint {
    static_assert(kIsRawType<Raw>, "FixedPoint holds int32_t or int16_t");

  public:
    using RawType = Raw;
    static constexpr int kTotalBits = 8 * sizeof(Raw);
    static constexpr int kIntegerBits = IntegerBits;
    static constexpr int kFractionalBits = kTotalBits - 1 - IntegerBits;
    static_assert(IntegerBits >= 0 && IntegerBits < kTotalBits, "bad IntegerBits");

    constexpr FixedPoint() = default;

    static constexpr FixedPoint fromRaw(Raw raw) {
        FixedPoint result;
        result.mRaw = raw;
        return result;
    }

    /// A constant given as a 32-bit raw value (gemmlowp's constants are written that way), rounded
    /// to the width of Raw.
    static constexpr FixedPoint fromInt32Constant(int32_t raw32) {
        return fromRaw(static_cast<Raw>(roundingDivideByPOT<int32_t>(raw32, 32 - kTotalBits)));
    }

    static constexpr FixedPoint zero() { return fromRaw(0); }

    /// 1.0, or the largest value below it when there are no integer bits.
    static constexpr FixedPoint one() {
        if constexpr (IntegerBits == 0) {
            return fromRaw(std::numeric_limits<Raw>::max());
        } else {
            return fromRaw(static_cast<Raw>(Raw{1} << kFractionalBits));
        }
    }

    /// 2^Exponent, which must be exactly representable.
    template <int Exponent>
    static constexpr FixedPoint constantPOT() {
        constexpr int kOffset = kFractionalBits + Exponent;
        static_assert(kOffset >= 0 && kOffset < kTotalBits - 1, "not representable");
        return fromRaw(static_cast<Raw>(Raw{1} << kOffset));
    }

    /// The nearest value to x, saturating (for tests and constants, not for kernels).
    static FixedPoint fromDouble(double x) {
        const double scaled = std::round(x * static_cast<double>(int64_t{1} << kFractionalBits));
        return fromRaw(static_cast<Raw>(
            std::clamp(scaled, static_cast<double>(std::numeric_limits<Raw>::min()),
                       static_cast<double>(std::numeric_limits<Raw>::max()))));
    }

    double toDouble() const {
        return static_cast<double>(mRaw) / static_cast<double>(int64_t{1} << kFractionalBits);
    }

    constexpr Raw raw() const { return mRaw; }

  private:
    Raw mRaw = 0;
};

/// The product keeps all integer bits: Q(a) * Q(b) is Q(a + b).
template <typename Raw, int A, int B>
constexpr FixedPoint<Raw, A + B> operator*(FixedPoint<Raw, A> a, FixedPoint<Raw, B> b) {
    return FixedPoint<Raw, A + B>::fromRaw(saturatingRoundingDoublingHighMul(a.raw(), b.raw()));
}

template <typename Raw, int I>
constexpr FixedPoint<Raw, I> operator+(FixedPoint<Raw, I> a, FixedPoint<Raw, I> b) {
    return FixedPoint<Raw, I>::fromRaw(wrappingAdd(a.raw(), b.raw()));
}

template <typename Raw, int I>
constexpr FixedPoint<Raw, I> operator-(FixedPoint<Raw, I> a, FixedPoint<Raw, I> b) {
    return FixedPoint<Raw, I>::fromRaw(wrappingSub(a.raw(), b.raw()));
}

template <typename Raw, int I>
constexpr FixedPoint<Raw, I> operator-(FixedPoint<Raw, I> a) {
    return FixedPoint<Raw, I>::fromRaw(wrappingNeg(a.raw()));
}

template <typename Raw, int I>
constexpr FixedPoint<Raw, I> operator&(FixedPoint<Raw, I> a, FixedPoint<Raw, I> b) {
    return FixedPoint<Raw, I>::fromRaw(static_cast<Raw>(a.raw() & b.raw()));
}

template <typename Raw, int I>
constexpr bool operator==(FixedPoint<Raw, I> a, FixedPoint<Raw, I> b) {
    return a.raw() == b.raw();
}

template <typename Raw, int I>
constexpr bool operator!=(FixedPoint<Raw, I> a, FixedPoint<Raw, I> b) {
    return a.raw() != b.raw();
}

template <typename Raw, int I>
constexpr bool operator<(FixedPoint<Raw, I> a, FixedPoint<Raw, I> b) {
    return a.raw() < b.raw();
}

template <typename Raw, int I>
constexpr bool operator>(FixedPoint<Raw, I> a, FixedPoint<Raw, I> b) {
    return a.raw() > b.raw();
}

/// Exact multiplication by 2^Exponent: only the interpretation (integer bits) changes.
template <int Exponent, typename Raw, int I>
constexpr FixedPoint<Raw, I + Exponent> exactMulByPOT(FixedPoint<Raw, I> a) {
    return FixedPoint<Raw, I + Exponent>::fromRaw(a.raw());
}

/// Multiplication by 2^Exponent keeping the format: saturating up, rounding down.
template <int Exponent, typename Raw, int I>
constexpr FixedPoint<Raw, I> saturatingRoundingMultiplyByPOT(FixedPoint<Raw, I> a) {
    return FixedPoint<Raw, I>::fromRaw(saturatingRoundingMultiplyByPOT(a.raw(), Exponent));
}

/// The same value in a format with DstIntegerBits integer bits (saturating or rounding).
template <int DstIntegerBits, typename Raw, int SrcIntegerBits>
constexpr FixedPoint<Raw, DstIntegerBits> rescale(FixedPoint<Raw, SrcIntegerBits> a) {
    return FixedPoint<Raw, DstIntegerBits>::fromRaw(
        saturatingRoundingMultiplyByPOT(a.raw(), SrcIntegerBits - DstIntegerBits));
}

template <typename Raw, int I>
constexpr FixedPoint<Raw, I> roundingHalfSum(FixedPoint<Raw, I> a, FixedPoint<Raw, I> b) {
    return FixedPoint<Raw, I>::fromRaw(roundingHalfSum(a.raw(), b.raw()));
}

/// gemmlowp's AddSaturatingIf16Bit: plain (wrapping) for int32, saturating for int16.
template <typename Raw, int I>
constexpr FixedPoint<Raw, I> addSaturatingIf16Bit(FixedPoint<Raw, I> a, FixedPoint<Raw, I> b) {
    if constexpr (std::is_same_v<Raw, int16_t>) {
        return FixedPoint<Raw, I>::fromRaw(saturatingAdd(a.raw(), b.raw()));
    } else {
        return a + b;
    }
}

/// exp(a) for a in [-1/4, 0): a fourth-order Taylor expansion around -1/8.
template <typename Raw>
constexpr FixedPoint<Raw, 0> expOnIntervalBetweenNegativeOneQuarterAnd0Excl(FixedPoint<Raw, 0> a) {
    using F = FixedPoint<Raw, 0>;
    const F constantTerm = F::fromInt32Constant(1895147668);  // exp(-1/8)
    const F constantOneThird = F::fromInt32Constant(715827883);
    const F x = a + F::template constantPOT<-3>();
    const F x2 = x * x;
    const F x3 = x2 * x;
    const F x4 = x2 * x2;
    const F x4Over4 = saturatingRoundingMultiplyByPOT<-2>(x4);
    const F x4Over24PlusX3Over6PlusX2Over2 =
        saturatingRoundingMultiplyByPOT<-1>(((x4Over4 + x3) * constantOneThird) + x2);
    return addSaturatingIf16Bit(constantTerm, constantTerm * (x + x4Over24PlusX3Over6PlusX2Over2));
}

/// exp(a) for a <= 0 (gemmlowp's exp_on_negative_values): exp of a mod 1/4 on the interval
/// above, then one multiplication by exp(-2^k) for each bit k of the remainder, down to -32 below
/// which the result is zero.
template <typename Raw, int IntegerBits>
constexpr FixedPoint<Raw, 0> expOnNegativeValues(FixedPoint<Raw, IntegerBits> a) {
    using InputF = FixedPoint<Raw, IntegerBits>;
    using ResultF = FixedPoint<Raw, 0>;
    const InputF oneQuarter = InputF::template constantPOT<-2>();
    const InputF mask = oneQuarter - InputF::fromRaw(1);
    const InputF aModQuarterMinusOneQuarter = (a & mask) - oneQuarter;
    ResultF result =
        expOnIntervalBetweenNegativeOneQuarterAnd0Excl(rescale<0>(aModQuarterMinusOneQuarter));
    const int32_t remainder = (aModQuarterMinusOneQuarter - a).raw();

    // exp(-2^k) for k = -2..4 as Q0.31 constants, applied in this order.
    constexpr struct {
        int exponent;
        int32_t multiplier;
    } kBarrelShifter[] = {{-2, 1672461947}, {-1, 1302514674}, {0, 790015084}, {1, 290630308},
                          {2, 39332535},    {3, 720401},      {4, 242}};
    for (const auto& stage : kBarrelShifter) {
        if (IntegerBits > stage.exponent) {
            const int bit = InputF::kFractionalBits + stage.exponent;
            if (remainder & (int32_t{1} << bit)) {
                result = result * ResultF::fromInt32Constant(stage.multiplier);
            }
        }
    }

    if constexpr (IntegerBits > 5) {
        const InputF minusThirtyTwo = InputF::fromInt32Constant(-(1 << (36 - IntegerBits)));
        if (a < minusThirtyTwo) {
            result = ResultF::zero();
        }
    }
    if (a == InputF::zero()) {
        result = ResultF::one();
    }
    return result;
}

/// 2 / (1 + a) for a in [0, 1): Newton-Raphson division of 1 by (1 + a) / 2, three iterations
/// from 48/17 - 32/17 d.
template <typename Raw>
constexpr FixedPoint<Raw, 2> twoOverOnePlusXForXIn01(FixedPoint<Raw, 0> a) {
    using F0 = FixedPoint<Raw, 0>;
    using F2 = FixedPoint<Raw, 2>;
    const F0 halfDenominator = roundingHalfSum(a, F0::one());
    const F2 constant48Over17 = F2::fromInt32Constant(1515870810);
    const F2 constantMinus32Over17 = F2::fromInt32Constant(-1010580540);
    F2 x = constant48Over17 + halfDenominator * constantMinus32Over17;
    for (int i = 0; i < 3; i++) {
        const F2 halfDenominatorTimesX = halfDenominator * x;
        const F2 oneMinusHalfDenominatorTimesX = F2::one() - halfDenominatorTimesX;
        x = x + rescale<2>(x * oneMinusHalfDenominatorTimesX);
    }
    return x;
}

/// 1 / (1 + a) for a in [0, 1).
template <typename Raw>
constexpr FixedPoint<Raw, 0> oneOverOnePlusXForXIn01(FixedPoint<Raw, 0> a) {
    return rescale<0>(exactMulByPOT<-1>(twoOverOnePlusXForXIn01(a)));
}

/// (1 - a) / (1 + a) for a in [0, 1), by the same division.
template <typename Raw>
constexpr FixedPoint<Raw, 0> oneMinusXOverOnePlusXForXIn01(FixedPoint<Raw, 0> a) {
    return rescale<0>(twoOverOnePlusXForXIn01(a) - FixedPoint<Raw, 2>::one());
}

/// -tanh(a) for a <= 0, as (1 - exp(2a)) / (1 + exp(2a)).
template <typename Raw, int IntegerBits>
constexpr FixedPoint<Raw, 0> negTanhOnNegativeValues(FixedPoint<Raw, IntegerBits> a) {
    return oneMinusXOverOnePlusXForXIn01(expOnNegativeValues(exactMulByPOT<1>(a)));
}

/// tanh(a) for any a.
template <typename Raw, int IntegerBits>
constexpr FixedPoint<Raw, 0> tanh(FixedPoint<Raw, IntegerBits> a) {
    using InputF = FixedPoint<Raw, IntegerBits>;
    using ResultF = FixedPoint<Raw, 0>;
    if (a == InputF::zero()) {
        return ResultF::zero();
    }
    const bool negative = a < InputF::zero();
    const ResultF t = negTanhOnNegativeValues(negative ? a : -a);
    return negative ? -t : t;
}

/// 1 / (1 + exp(-a)) for a >= 0.
template <typename Raw, int IntegerBits>
constexpr FixedPoint<Raw, 0> logisticOnPositiveValues(FixedPoint<Raw, IntegerBits> a) {
    return oneOverOnePlusXForXIn01(expOnNegativeValues(-a));
}

/// 1 / (1 + exp(-a)) for any a.
template <typename Raw, int IntegerBits>
constexpr FixedPoint<Raw, 0> logistic(FixedPoint<Raw, IntegerBits> a) {
    using InputF = FixedPoint<Raw, IntegerBits>;
    using ResultF = FixedPoint<Raw, 0>;
    if (a == InputF::zero()) {
        return ResultF::fromInt32Constant(1 << 30);  // one half
    }
    const bool positive = a > InputF::zero();
    const ResultF resultIfPositive = logisticOnPositiveValues(positive ? a : -a);
    return positive ? resultIfPositive : ResultF::one() - resultIfPositive;
}

// ---------------------------------------------------------------------------------------------
// Part 4: the int16 arithmetic of quantized HARD_SWISH and the inverse square root of quantized
// L2_NORMALIZATION (TFLite's reference kernels, which Android calls).
// ---------------------------------------------------------------------------------------------

/// a * b / 2^15 truncated towards zero, saturating min * min to max (ARM's SQDMULH; TFLite's
/// SaturatingDoublingHighMul). Unlike the rounding form it biases towards zero.
constexpr int16_t saturatingDoublingHighMul(int16_t a, int16_t b) {
    constexpr int16_t kMin = std::numeric_limits<int16_t>::min();
    if (a == kMin && b == kMin) {
        return std::numeric_limits<int16_t>::max();
    }
    return static_cast<int16_t>((int32_t{a} * int32_t{b}) / (1 << 15));
}

/// value * 2^amount clamped to int16 (TFLite's SaturatingLeftShift); amount in [0, 15].
constexpr int16_t saturatingLeftShift(int16_t value, int amount) {
    const int64_t shifted = int64_t{value} * (int64_t{1} << amount);
    return static_cast<int16_t>(std::clamp<int64_t>(shifted, std::numeric_limits<int16_t>::min(),
                                                    std::numeric_limits<int16_t>::max()));
}

/// A Q0.31 multiplier rounded to Q0.15 (TFLite's DownScaleInt32ToInt16Multiplier); multipliers
/// within half a step of 2^31 saturate.
constexpr int16_t downscaleMultiplierToInt16(int32_t multiplier) {
    constexpr int32_t kRoundingOffset = 1 << 15;
    if (multiplier >= kInt32Max - kRoundingOffset) {
        return std::numeric_limits<int16_t>::max();
    }
    return static_cast<int16_t>((multiplier + kRoundingOffset) >> 16);
}

/// Android's requantize() of MAXIMUM, MINIMUM and SELECT inputs to the output's quantization:
/// dequantized in float, divided in double, clamped to T's range before rounding.
template <typename T>
T requantizeValue(T value, QuantInfo from, QuantInfo to) {
    const double real = dequantizeValue(value, from.scale, from.zeroPoint);
    const double rescaled = real / static_cast<double>(to.scale) + to.zeroPoint;
    if (rescaled < std::numeric_limits<T>::min()) return std::numeric_limits<T>::min();
    if (rescaled > std::numeric_limits<T>::max()) return std::numeric_limits<T>::max();
    return static_cast<T>(std::round(rescaled));
}

/// Parameters of quantized PRELU as Android derives them: positive inputs rescaled by
/// inputScale / outputScale (divided in float), negative ones, multiplied by alpha, by
/// inputScale * alphaScale / outputScale (divided in double).
struct PreluParams {
    int32_t inputZeroPoint = 0;
    int32_t alphaZeroPoint = 0;
    int32_t outputZeroPoint = 0;
    QuantizedMultiplier positive;
    QuantizedMultiplier negative;
};

inline std::optional<PreluParams> computePreluParams(QuantInfo input, QuantInfo alpha,
                                                     QuantInfo output) {
    const float inputOverOutput = input.scale / output.scale;
    const float productScale = input.scale * alpha.scale;
    const auto positive = quantizeMultiplier(inputOverOutput);
    const auto negative =
        quantizeMultiplier(static_cast<double>(productScale) / static_cast<double>(output.scale));
    if (!positive || !negative) return std::nullopt;
    return PreluParams{input.zeroPoint, alpha.zeroPoint, output.zeroPoint, *positive, *negative};
}

/// One element of quantized PRELU: stored input and alpha values in, the stored output value
/// (clamped to [qmin, qmax]) out.
constexpr int32_t preluElement(int32_t value, int32_t alphaValue, const PreluParams& params,
                               int32_t qmin, int32_t qmax) {
    const int32_t input = value - params.inputZeroPoint;
    const int32_t result =
        input >= 0
            ? multiplyByQuantizedMultiplier(input, params.positive.multiplier,
                                            params.positive.shift)
            : multiplyByQuantizedMultiplier(input * (alphaValue - params.alphaZeroPoint),
                                            params.negative.multiplier, params.negative.shift);
    return std::clamp<int32_t>(params.outputZeroPoint + result, qmin, qmax);
}

/// Parameters of quantized HARD_SWISH (TFLite's HardSwishParams as Android fills them): the input
/// moves to a "hires" scale of inputScale / 128; one multiplier takes it to the output scale,
/// another to the "reluish" scale where 3.0 is 2^15.
struct HardSwishParams {
    int32_t inputZeroPoint = 0;
    int32_t outputZeroPoint = 0;
    int16_t outputMultiplier = 0;   // Q0.15
    int outputShift = 0;            // <= 0
    int16_t reluishMultiplier = 0;  // Q0.15
    int reluishShift = 0;
};

inline std::optional<HardSwishParams> computeHardSwishParams(QuantInfo input, QuantInfo output) {
    // Android computes the real multipliers in float.
    const float hiresInputScale = (1.0f / 128.0f) * input.scale;
    const float reluishScale = 3.0f / 32768.0f;
    const auto outputMultiplier = quantizeMultiplier(hiresInputScale / output.scale);
    const auto reluishMultiplier = quantizeMultiplier(hiresInputScale / reluishScale);
    if (!outputMultiplier || !reluishMultiplier || outputMultiplier->shift > 0) {
        return std::nullopt;
    }
    HardSwishParams params;
    params.inputZeroPoint = input.zeroPoint;
    params.outputZeroPoint = output.zeroPoint;
    params.outputMultiplier = downscaleMultiplierToInt16(outputMultiplier->multiplier);
    params.outputShift = outputMultiplier->shift;
    params.reluishMultiplier = downscaleMultiplierToInt16(reluishMultiplier->multiplier);
    params.reluishShift = reluishMultiplier->shift;
    return params;
}

/// One element of quantized HARD_SWISH, x * relu6(x + 3) / 6, in TFLite's int16 fixed point:
/// the stored input value in, the stored output value (clamped to [qmin, qmax]) out.
constexpr int32_t hardSwishElement(int32_t value, const HardSwishParams& params, int32_t qmin,
                                   int32_t qmax) {
    const auto inputValue = static_cast<int16_t>(value - params.inputZeroPoint);
    const auto hires = static_cast<int16_t>(inputValue * (1 << 7));
    const int16_t preshiftOutput =
        saturatingRoundingDoublingHighMul(hires, params.outputMultiplier);
    // Rescale to the reluish scale ([-3, 3] -> [-1, 1] in Q0.15), saturating: a left shift is
    // split so that only its last bit can saturate.
    int16_t reluish = hires;
    if (params.reluishShift > 0) {
        reluish = saturatingLeftShift(reluish, params.reluishShift - 1);
    }
    reluish = saturatingRoundingDoublingHighMul(reluish, params.reluishMultiplier);
    if (params.reluishShift > 0) {
        reluish = saturatingLeftShift(reluish, 1);
    }
    if (params.reluishShift < 0) {
        reluish = roundingDivideByPOT(reluish, -params.reluishShift);
    }
    // [-1, 1] -> [0, 1].
    reluish = static_cast<int16_t>((int32_t{reluish} + (1 << 15)) >> 1);
    const int16_t preshiftResult = saturatingDoublingHighMul(reluish, preshiftOutput);
    auto result = static_cast<int16_t>(roundingDivideByPOT(preshiftResult, -params.outputShift) +
                                       params.outputZeroPoint);
    return std::clamp<int32_t>(result, qmin, qmax);
}

/// 1 / sqrt(input) as a multiplier and a left shift (TFLite's GetInvSqrtQuantizedMultiplierExp
/// with reverse_shift -1): the input is normalized to [2^27, 2^29) by pairs of bits, and five
/// Newton-Raphson steps run in Q3.28 from 1. Inputs 0 and 1 give (2^31 - 1, 0).
inline QuantizedMultiplier inverseSqrtMultiplier(int32_t input) {
    if (input <= 1) {
        return {kInt32Max, 0};
    }
    int shift = 11;  // a right shift until the end
    while (input >= (1 << 29)) {
        input /= 4;
        ++shift;
    }
    const int maxLeftShiftBitPairs = (countLeadingZeros(static_cast<uint32_t>(input)) - 1) / 2;
    const int leftShiftBitPairs = maxLeftShiftBitPairs - 1;
    shift -= leftShiftBitPairs;
    input <<= 2 * leftShiftBitPairs;

    using F3 = FixedPoint<int32_t, 3>;
    using F0 = FixedPoint<int32_t, 0>;
    const F3 fixedInput = F3::fromRaw(input >> 1);
    const F3 halfInput = saturatingRoundingMultiplyByPOT<-1>(fixedInput);
    const F3 threeHalves = F3::fromRaw((1 << 28) + (1 << 27));
    F3 x = F3::one();
    for (int i = 0; i < 5; i++) {
        const F3 x3 = rescale<3>(x * x * x);
        x = rescale<3>(threeHalves * x - halfInput * x3);
    }
    const F0 halfSqrt2 = F0::fromRaw(1518500250);  // sqrt(2) / 2
    x = x * halfSqrt2;
    int32_t multiplier = x.raw();
    if (shift < 0) {
        multiplier = wrappingShiftLeft(multiplier, -shift);
        shift = 0;
    }
    return {multiplier, -shift};
}

// ---------------------------------------------------------------------------------------------
// Part 5: helpers of the quantized LSTMs (Android's QuantUtils).
// ---------------------------------------------------------------------------------------------

/// log2(x) when x is a power of two within 1e-3 in the exponent (Android's CheckedLog2, computed in
/// float as it does); nullopt otherwise.
inline std::optional<int> checkedLog2(float x) {
    const float log2 = std::log(x) * (1.0f / std::log(2.0f));
    const float rounded = std::round(log2);
    if (!(std::abs(log2 - rounded) < 1e-3f)) {
        return std::nullopt;
    }
    return static_cast<int>(rounded);
}

}  // namespace nncosim::fixedpoint
