// Block test of the NPU's floating-point units (rtl/npu_fp_pkg.sv, Verilated alone through
// npu_fp_harness.sv) against the host: SSE binary32 arithmetic (round to nearest even, exact
// subnormals; the average's division by a count: a / (float)(b & 0xffff)), sqrt, trunc and
// Eigen::half conversions. Every result must be bit-identical, and NaN results must be the
// canonical quiet NaN the units document. e^x and ln(x) are not correctly rounded: they must be
// bit-identical with the functional model's port of their algorithm (sim/FunctionalDatapath.cpp)
// and within kTranscendentalUlps of the exact value (the host's double-precision exp and log).
//
// Operand sets: every pair of corner values (zeros, subnormals, extremes, infinities, NaNs), every
// binary16 bit pattern, then --operands random sets mixing uniform bit patterns with exponents
// biased to the edges (underflow, overflow, cancellation, rounding ties).
//
//   npu_fp_check [--operands N] [--seed S]      exit status 0 when there is no difference
#include "Vnpu_fp_harness.h"
#include "sim/FunctionalDatapath.h"
#include "verilated.h"

#include <Eigen/Core>
#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <memory>
#include <random>
#include <string>
#include <type_traits>
#include <vector>

namespace {

using nncosim::sim::datapath::kFp16QNaN;
using nncosim::sim::datapath::kFp32QNaN;

// The accuracy fp32_exp and fp32_log promise (docs/npu.md, "Floating point").
constexpr double kTranscendentalUlps = 0.53;

float fromBits(uint32_t bits) {
    return Eigen::numext::bit_cast<float>(bits);
}

uint32_t toBits(float value) {
    return Eigen::numext::bit_cast<uint32_t>(value);
}

// IEEE 754-2019 maximum and minimum, as the units define them: NaN wins, -0 < +0.
float hostMax(float a, float b) {
    if (std::isnan(a) || std::isnan(b)) {
        return std::numeric_limits<float>::quiet_NaN();
    }
    if (a != b) {
        return a > b ? a : b;
    }
    return std::signbit(a) ? b : a;
}

float hostMin(float a, float b) {
    if (std::isnan(a) || std::isnan(b)) {
        return std::numeric_limits<float>::quiet_NaN();
    }
    if (a != b) {
        return a < b ? a : b;
    }
    return std::signbit(a) ? a : b;
}

struct Operands {
    uint32_t a, b, c;
};

// What one unit returned for one operand set and what the host computed.
struct Expected {
    const char* unit;
    uint32_t rtl;
    uint32_t host;
    bool hostIsNaN;
    uint32_t canonicalNaN;
};

class Checker {
  public:
    Checker()
        : mContext(std::make_unique<VerilatedContext>()),
          mModel(std::make_unique<Vnpu_fp_harness>(mContext.get(), "npu_fp_harness")) {}

    ~Checker() { mModel->final(); }

    void add(const Operands& operands) {
        mPending.push_back(operands);
        if (mPending.size() == kLanes) {
            flush();
        }
    }

    void flush() {
        Vnpu_fp_harness& m = *mModel;
        for (size_t i = 0; i < mPending.size(); ++i) {
            m.a_i[i] = mPending[i].a;
            m.b_i[i] = mPending[i].b;
            m.c_i[i] = mPending[i].c;
        }
        m.eval();
        for (size_t i = 0; i < mPending.size(); ++i) {
            check(mPending[i], i);
        }
        mOperandSets += mPending.size();
        mPending.clear();
    }

    uint64_t operandSets() const { return mOperandSets; }
    uint64_t results() const { return mResults; }
    uint64_t differences() const { return mDifferences; }

  private:
    // The harness's Lanes (its ports are arrays of that length).
    static constexpr size_t kLanes =
        std::extent_v<std::remove_reference_t<decltype(Vnpu_fp_harness::a_i)>>;

    void check(const Operands& op, size_t lane) {
        const Vnpu_fp_harness& m = *mModel;
        const float a = fromBits(op.a), b = fromBits(op.b), c = fromBits(op.c);
        const float mul = a * b, add = a + b, max = hostMax(a, b), min = hostMin(a, b);
        const float clamp = hostMin(hostMax(a, b), c);
        const Eigen::half half(a);
        const float widened =
            static_cast<float>(Eigen::numext::bit_cast<Eigen::half>(static_cast<uint16_t>(op.a)));
        const float quotient = a / static_cast<float>(op.b & 0xffffu);
        const float ratio = a / b, root = std::sqrt(a), whole = std::trunc(a);
        const std::array<Expected, 13> expected = {{
            {"fp32_mul", m.mul_o[lane], toBits(mul), std::isnan(mul), kFp32QNaN},
            {"fp32_add", m.add_o[lane], toBits(add), std::isnan(add), kFp32QNaN},
            {"fp32_max", m.max_o[lane], toBits(max), std::isnan(max), kFp32QNaN},
            {"fp32_min", m.min_o[lane], toBits(min), std::isnan(min), kFp32QNaN},
            {"fp32_clamp", m.clamp_o[lane], toBits(clamp), std::isnan(clamp), kFp32QNaN},
            {"fp32_to_fp16", m.to_fp16_o[lane], Eigen::numext::bit_cast<uint16_t>(half),
             Eigen::numext::isnan(half), kFp16QNaN},
            {"fp16_to_fp32", m.to_fp32_o[lane], toBits(widened), std::isnan(widened), kFp32QNaN},
            {"fp32_div_count", m.div_o[lane], toBits(quotient), std::isnan(quotient), kFp32QNaN},
            {"fp32_div", m.quot_o[lane], toBits(ratio), std::isnan(ratio), kFp32QNaN},
            {"fp32_sqrt", m.sqrt_o[lane], toBits(root), std::isnan(root), kFp32QNaN},
            {"fp32_trunc", m.trunc_o[lane], toBits(whole), std::isnan(whole), kFp32QNaN},
            {"fp32_exp", m.exp_o[lane], nncosim::sim::datapath::fp32Exp(op.a), false, 0},
            {"fp32_log", m.log_o[lane], nncosim::sim::datapath::fp32Log(op.a), false, 0},
        }};
        checkAccuracy("fp32_exp", op.a, m.exp_o[lane], std::exp(static_cast<double>(a)));
        checkAccuracy("fp32_log", op.a, m.log_o[lane], std::log(static_cast<double>(a)));
        for (const Expected& e : expected) {
            ++mResults;
            const uint32_t want = e.hostIsNaN ? e.canonicalNaN : e.host;
            if (e.rtl != want) {
                if (++mDifferences <= 20) {
                    std::printf("DIFF %-12s a=%08x b=%08x c=%08x rtl=%08x host=%08x\n", e.unit,
                                op.a, op.b, op.c, e.rtl, e.host);
                }
            }
        }
    }

    // |result - exact| in ULPs of the exact value rounded to binary32 (the smallest subnormal
    // below 2^-126); results that must be NaN, infinite or zero must be exactly that.
    void checkAccuracy(const char* unit, uint32_t operand, uint32_t result, double exact) {
        const float rounded = static_cast<float>(exact);
        const float got = fromBits(result);
        double error = 0;
        if (std::isnan(exact) || std::isinf(rounded) || rounded == 0) {
            const bool same = std::isnan(exact) ? std::isnan(got) : got == rounded;
            error = same ? 0 : std::numeric_limits<double>::infinity();
        } else {
            int e = 0;
            std::frexp(exact, &e);
            const double ulp = std::ldexp(1.0, std::max(e - 24, -149));
            error = std::fabs(static_cast<double>(got) - exact) / ulp;
        }
        mWorstUlps = std::max(mWorstUlps, error);
        if (error > kTranscendentalUlps && ++mDifferences <= 20) {
            std::printf("INACCURATE %-8s x=%08x rtl=%08x error %.3f ULP\n", unit, operand, result,
                        error);
        }
    }

  public:
    double worstUlps() const { return mWorstUlps; }

  private:
    std::unique_ptr<VerilatedContext> mContext;
    std::unique_ptr<Vnpu_fp_harness> mModel;
    std::vector<Operands> mPending;
    uint64_t mOperandSets = 0;
    uint64_t mResults = 0;
    uint64_t mDifferences = 0;
    double mWorstUlps = 0;
};

// Zeros, subnormals, the normal extremes, values around 1, infinities, quiet and signalling NaNs,
// each with both signs.
std::vector<uint32_t> cornerValues() {
    const uint32_t magnitudes[] = {
        0x00000000, 0x00000001, 0x00000002, 0x00000003, 0x003fffff, 0x00400000, 0x007fffff,
        0x00800000, 0x00800001, 0x00ffffff, 0x01000000, 0x33800000, 0x33800001, 0x337fffff,
        0x34000000, 0x3effffff, 0x3f000000, 0x3f7fffff, 0x3f800000, 0x3f800001, 0x3fc00000,
        0x3fffffff, 0x40000000, 0x477fe000, 0x477ff000, 0x477fefff, 0x47800000, 0x38800000,
        0x387fc000, 0x33000000, 0x33000001, 0x7effffff, 0x7f000000, 0x7f7fffff, 0x7f800000,
        0x7f800001, 0x7fc00000, 0x7fffffff};
    std::vector<uint32_t> values;
    for (uint32_t magnitude : magnitudes) {
        values.push_back(magnitude);
        values.push_back(magnitude | 0x80000000u);
    }
    return values;
}

// Random operands: uniform bit patterns and, more often, values whose exponents sit where the
// units have their edge cases.
class OperandSource {
  public:
    explicit OperandSource(uint64_t seed) : mRandom(seed) {}

    Operands next() {
        switch (mRandom() % 7) {
            case 0:  // any bit pattern
                return {bits(), bits(), bits()};
            case 1: {  // edge exponents, edge or random fractions
                return {edgeValue(), edgeValue(), edgeValue()};
            }
            case 2: {  // close exponents: cancellation, and ties when fractions are short
                const uint32_t a = withExponent(bits(), 64 + mRandom() % 128);
                const int delta = static_cast<int>(mRandom() % 61) - 30;
                const uint32_t b = withExponent(bits(), exponentOf(a) + delta);
                return {shortFraction(a), shortFraction(b), bits()};
            }
            case 3: {  // products and sums near underflow and overflow
                const uint32_t ea = mRandom() % 254 + 1;
                const int target = mRandom() % 2 ? static_cast<int>(mRandom() % 60) - 40
                                                 : static_cast<int>(mRandom() % 20) + 240;
                const uint32_t a = shortFraction(withExponent(bits(), ea));
                const uint32_t b =
                    shortFraction(withExponent(bits(), target + 127 - static_cast<int>(ea)));
                return {a, b, bits()};
            }
            case 4: {  // binary16 range: its subnormals, overflow and rounding ties
                const uint32_t e = 127 - 30 + mRandom() % 48;
                const uint32_t low[] = {0x1000, 0x0fff, 0x1001, 0x0000, 0x2000, 0x3000};
                uint32_t a = withExponent(bits(), e);
                if (mRandom() % 2) {
                    a = (a & ~0x1fffu) | low[mRandom() % std::size(low)];
                }
                return {a, bits(), bits()};
            }
            case 5: {  // where e^x is neither 1 nor saturated, or ln(x) near 0
                const uint32_t nearOne = mRandom() % 2 ? 0x3f800000u + (bits() & 0xfffff)
                                                       : 0x3f800000u - (bits() & 0xfffff);
                const uint32_t a =
                    mRandom() % 2 ? withExponent(bits(), 87 + mRandom() % 47) : nearOne;
                return {a, bits(), bits()};
            }
            default: {  // both subnormal or tiny
                const uint32_t a = (bits() & 0x80ffffffu) >> (mRandom() % 2);
                const uint32_t b = (bits() & 0x80ffffffu) >> (mRandom() % 2);
                return {a, b, bits()};
            }
        }
    }

  private:
    uint32_t bits() { return static_cast<uint32_t>(mRandom()); }

    static uint32_t exponentOf(uint32_t value) { return (value >> 23) & 0xff; }

    // value with its exponent field set to e, clamped to the field's range.
    static uint32_t withExponent(uint32_t value, int e) {
        const uint32_t field = static_cast<uint32_t>(std::clamp(e, 0, 255));
        return (value & 0x807fffffu) | (field << 23);
    }

    // Keeps only the top few fraction bits, so that exact results and ties are common.
    uint32_t shortFraction(uint32_t value) {
        if (mRandom() % 2) {
            return value;
        }
        const uint32_t keep = mRandom() % 24;
        return value & ~((1u << (23 - keep)) - 1);
    }

    uint32_t edgeValue() {
        const uint32_t exponents[] = {0,   1,   2,   3,   24,  25,  103, 104, 112, 113,
                                      126, 127, 128, 142, 143, 230, 252, 253, 254, 255};
        const uint32_t fractions[] = {0, 1, 0x400000, 0x7fffff, 0x7ffffe, 0x000fff, 0x001000};
        const uint32_t e = exponents[mRandom() % std::size(exponents)];
        const uint32_t f =
            mRandom() % 2 ? fractions[mRandom() % std::size(fractions)] : bits() & 0x7fffff;
        return (bits() & 0x80000000u) | (e << 23) | f;
    }

    std::mt19937_64 mRandom;
};

uint64_t parseCount(const char* flag, const char* text) {
    char* end = nullptr;
    const unsigned long long value = std::strtoull(text, &end, 10);
    if (text[0] == '\0' || text[0] == '-' || *end != '\0') {
        std::fprintf(stderr, "npu_fp_check: %s needs a non-negative integer, got '%s'\n", flag,
                     text);
        std::exit(2);
    }
    return value;
}

}  // namespace

int main(int argc, char** argv) {
    uint64_t randomSets = 200000;
    uint64_t seed = 1;
    for (int i = 1; i < argc; ++i) {
        const std::string arg = argv[i];
        if ((arg == "--operands" || arg == "--seed") && i + 1 < argc) {
            (arg == "--operands" ? randomSets : seed) = parseCount(argv[i], argv[i + 1]);
            ++i;
        } else {
            std::fprintf(stderr,
                         "npu_fp_check: unknown argument '%s'\n"
                         "usage: npu_fp_check [--operands N] [--seed S]\n",
                         argv[i]);
            return 2;
        }
    }

    Checker checker;
    const std::vector<uint32_t> corners = cornerValues();
    for (size_t i = 0; i < corners.size(); ++i) {
        for (size_t j = 0; j < corners.size(); ++j) {
            checker.add({corners[i], corners[j], corners[(i + j) % corners.size()]});
        }
    }
    const uint64_t cornerSets = corners.size() * corners.size();
    // Every binary16 pattern in the low half of a (the high half makes it a random binary32).
    std::mt19937_64 random(seed);
    for (uint32_t h = 0; h <= 0xffff; ++h) {
        checker.add({static_cast<uint32_t>(random()) << 16 | h, static_cast<uint32_t>(random()),
                     static_cast<uint32_t>(random())});
    }
    OperandSource source(seed);
    for (uint64_t i = 0; i < randomSets; ++i) {
        checker.add(source.next());
    }
    checker.flush();

    std::printf(
        "npu_fp_check: %llu operand sets (%llu corner pairs, 65536 binary16 patterns, "
        "%llu random, seed %llu), %llu results of 13 units, %llu differences; e^x and ln(x) "
        "within %.3f ULP\n",
        static_cast<unsigned long long>(checker.operandSets()),
        static_cast<unsigned long long>(cornerSets), static_cast<unsigned long long>(randomSets),
        static_cast<unsigned long long>(seed), static_cast<unsigned long long>(checker.results()),
        static_cast<unsigned long long>(checker.differences()), checker.worstUlps());
    return checker.differences() == 0 ? 0 : 1;
}
