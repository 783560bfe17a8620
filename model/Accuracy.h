// The accuracy rule outputs are judged by (Android's test harness, ../shared/cts/FORMAT.md):
// per element |actual - expected| <= atol + rtol * |expected|, by operand type.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "model/Model.h"

namespace nncosim {

struct Tolerance {
    double atol = 0.0;
    double rtol = 0.0;
    /// Relaxed and float16 results may be computed in binary16's range: beyond its largest
    /// finite value (65504) an expected value matches any actual one of that magnitude or more
    /// and the same sign (the largest binary16, or infinity).
    bool binary16Range = false;
};

/// The CTS tolerance of an output of `type`; `relaxed` is true for relaxed-float32 models and
/// for any model with a float16 operand (isRelaxed).
Tolerance ctsTolerance(OperandType type, bool relaxed);

/// Whether `model`'s float outputs are judged by the relaxed tolerance: relaxed float32, or a
/// float16 operand in any subgraph.
bool isRelaxed(const Model& model);

/// How an actual output compares with its reference.
struct Comparison {
    uint64_t elements = 0;
    uint64_t mismatches = 0;
    double maxAbsError = 0.0;
    /// max |actual - expected| / |expected| over the finite elements whose expected value is
    /// not 0 (a relative error of an expected 0 is infinite whatever the error).
    double maxRelError = 0.0;
    /// Float types (float32, float16): the largest distance in units in the last place of the
    /// type between finite actual and expected values (0 for other types).
    uint64_t maxUlpError = 0;
    /// The tolerance the elements were judged by.
    Tolerance tolerance;
    /// How close the worst finite element came to failing: the largest |actual - expected| /
    /// (atol + rtol * |expected|). At most 1 when every finite element passes; with a zero
    /// tolerance (exact types) 0 when exact and infinity otherwise.
    double worstToleranceFraction = 0.0;
    uint64_t worstElement = 0;   ///< the element of worstToleranceFraction
    uint64_t firstMismatch = 0;  ///< element index, valid when mismatches > 0
    double firstExpected = 0.0;
    double firstActual = 0.0;
    bool ok() const { return mismatches == 0; }
    /// e.g. "3 of 120 elements differ; first at [17]: expected 4, got 5; max abs error 1"
    std::string describe() const;
};

/// Compares two buffers of `count` elements of `type` under `tol`. NaN matches NaN and
/// infinities must match exactly.
Comparison compareTensors(OperandType type, const uint8_t* expected, const uint8_t* actual,
                          uint64_t count, Tolerance tol);

/// Element `i` of a buffer of `type` as a double (for reports).
double elementAsDouble(OperandType type, const uint8_t* data, uint64_t i);

}  // namespace nncosim
