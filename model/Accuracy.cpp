#include "model/Accuracy.h"

#include <Eigen/Core>
#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <sstream>

namespace nncosim {
namespace {

template <typename T>
double load(const uint8_t* data, uint64_t i) {
    T v;
    std::memcpy(&v, data + i * sizeof(T), sizeof(T));
    return static_cast<double>(v);
}

/// A float's bits mapped to integers that order like the floats: adjacent floats differ by 1.
int64_t orderedBits(OperandType type, const uint8_t* data, uint64_t i) {
    if (type == OperandType::TENSOR_FLOAT16 || type == OperandType::FLOAT16) {
        int16_t b;
        std::memcpy(&b, data + i * 2, 2);
        return b < 0 ? int64_t{INT16_MIN} - b : int64_t{b};
    }
    int32_t b;
    std::memcpy(&b, data + i * 4, 4);
    return b < 0 ? int64_t{INT32_MIN} - b : int64_t{b};
}

}  // namespace

bool isRelaxed(const Model& model) {
    auto has16 = [](const Subgraph& g) {
        return std::any_of(g.operands.begin(), g.operands.end(), [](const Operand& o) {
            return o.type == OperandType::TENSOR_FLOAT16 || o.type == OperandType::FLOAT16;
        });
    };
    return model.relaxComputationFloat32toFloat16 || has16(model.main) ||
           std::any_of(model.referenced.begin(), model.referenced.end(), has16);
}

Tolerance ctsTolerance(OperandType type, bool relaxed) {
    constexpr double kFloat32Epsilon = 1.1920928955078125e-7;
    constexpr double kFloat16Epsilon = 0.0009765625;
    switch (type) {
        case OperandType::TENSOR_FLOAT32:
        case OperandType::FLOAT32:
            return relaxed ? Tolerance{5 * kFloat16Epsilon, 5 * kFloat16Epsilon, true}
                           : Tolerance{1e-5, 5 * kFloat32Epsilon};
        case OperandType::TENSOR_FLOAT16:
        case OperandType::FLOAT16:
            return {5 * kFloat16Epsilon, 5 * kFloat16Epsilon, true};
        case OperandType::TENSOR_BOOL8:
        case OperandType::BOOL:
            return {0.0, 0.0};
        default:  // integer and quantized types
            return {1.0, 0.0};
    }
}

double elementAsDouble(OperandType type, const uint8_t* data, uint64_t i) {
    switch (type) {
        case OperandType::TENSOR_FLOAT32:
        case OperandType::FLOAT32:
            return load<float>(data, i);
        case OperandType::TENSOR_FLOAT16:
        case OperandType::FLOAT16: {
            Eigen::half h;
            std::memcpy(&h, data + i * 2, 2);
            return static_cast<double>(static_cast<float>(h));
        }
        case OperandType::TENSOR_INT32:
        case OperandType::INT32:
            return load<int32_t>(data, i);
        case OperandType::UINT32:
            return load<uint32_t>(data, i);
        case OperandType::TENSOR_QUANT8_ASYMM_SIGNED:
        case OperandType::TENSOR_QUANT8_SYMM:
        case OperandType::TENSOR_QUANT8_SYMM_PER_CHANNEL:
            return load<int8_t>(data, i);
        case OperandType::TENSOR_QUANT16_SYMM:
            return load<int16_t>(data, i);
        case OperandType::TENSOR_QUANT16_ASYMM:
            return load<uint16_t>(data, i);
        case OperandType::TENSOR_BOOL8:
        case OperandType::BOOL:
            return data[i] != 0 ? 1.0 : 0.0;
        default:
            return load<uint8_t>(data, i);
    }
}

Comparison compareTensors(OperandType type, const uint8_t* expected, const uint8_t* actual,
                          uint64_t count, Tolerance tol) {
    Comparison c;
    c.elements = count;
    c.tolerance = tol;
    const bool floats = isFloatType(type);
    for (uint64_t i = 0; i < count; ++i) {
        const double e = elementAsDouble(type, expected, i);
        const double a = elementAsDouble(type, actual, i);
        bool match;
        double err = 0.0;
        constexpr double kBinary16Max = 65504.0;
        if (std::isnan(e) || std::isnan(a)) {
            match = std::isnan(e) && std::isnan(a);
        } else if (tol.binary16Range && std::fabs(e) > kBinary16Max) {
            match = std::fabs(a) >= kBinary16Max && std::signbit(a) == std::signbit(e);
        } else if (std::isinf(e) || std::isinf(a)) {
            match = e == a;
        } else {
            err = std::fabs(a - e);
            const double allowed = tol.atol + tol.rtol * std::fabs(e);
            match = err <= allowed;
            c.maxAbsError = std::max(c.maxAbsError, err);
            if (e != 0.0) c.maxRelError = std::max(c.maxRelError, err / std::fabs(e));
            if (floats) {
                const int64_t d = orderedBits(type, actual, i) - orderedBits(type, expected, i);
                c.maxUlpError = std::max(c.maxUlpError, static_cast<uint64_t>(d < 0 ? -d : d));
            }
            const double fraction = allowed > 0.0 ? err / allowed
                                    : err > 0.0   ? std::numeric_limits<double>::infinity()
                                                  : 0.0;
            if (fraction > c.worstToleranceFraction) {
                c.worstToleranceFraction = fraction;
                c.worstElement = i;
            }
        }
        if (!match) {
            if (c.mismatches == 0) {
                c.firstMismatch = i;
                c.firstExpected = e;
                c.firstActual = a;
            }
            ++c.mismatches;
        }
    }
    return c;
}

std::string Comparison::describe() const {
    std::ostringstream s;
    if (ok()) {
        s << "all " << elements << " elements match; max abs error " << maxAbsError;
    } else {
        s << mismatches << " of " << elements << " elements differ; first at [" << firstMismatch
          << "]: expected " << firstExpected << ", got " << firstActual << "; max abs error "
          << maxAbsError;
    }
    return s.str();
}

}  // namespace nncosim
