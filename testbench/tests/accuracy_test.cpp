// The float comparison figures of `run`'s report (model/Accuracy.h): max absolute and
// relative error, max ULP distance, and how much of the CTS tolerance the worst element used.
#include <doctest/doctest.h>

#include <Eigen/Core>
#include <cmath>
#include <cstring>
#include <limits>

#include "model/Accuracy.h"
#include "testbench/ModelRun.h"

using namespace nncosim;

namespace {

std::vector<uint8_t> floatBytes(const std::vector<float>& v) {
    std::vector<uint8_t> b(v.size() * 4);
    std::memcpy(b.data(), v.data(), b.size());
    return b;
}

std::vector<uint8_t> halfBytes(const std::vector<float>& v) {
    std::vector<uint8_t> b(v.size() * 2);
    for (size_t i = 0; i < v.size(); ++i) {
        const Eigen::half h(v[i]);
        std::memcpy(b.data() + 2 * i, &h, 2);
    }
    return b;
}

}  // namespace

TEST_CASE("accuracy_float_figures") {
    const Tolerance f32 = ctsTolerance(OperandType::TENSOR_FLOAT32, false);
    const float up1 = std::nextafter(2.0f, 3.0f);  // 1 ULP above 2
    const float down3 = std::nextafter(std::nextafter(std::nextafter(-8.0f, 0.0f), 0.0f), 0.0f);
    const auto expected = floatBytes({2.0f, -8.0f, 0.0f, 1.0f});
    const auto actual = floatBytes({up1, down3, 4e-6f, 1.0f});
    const Comparison c =
        compareTensors(OperandType::TENSOR_FLOAT32, expected.data(), actual.data(), 4, f32);
    CHECK(c.ok());
    CHECK(c.maxAbsError == doctest::Approx(4e-6).epsilon(1e-3));  // the expected 0
    // Relative error ignores the expected 0.
    const double rel8 = (double(down3) + 8.0) / 8.0;
    const double rel2 = (double(up1) - 2.0) / 2.0;
    CHECK(c.maxRelError == doctest::Approx(std::max(rel8, rel2)));
    CHECK(c.maxUlpError >= 3);  // the 4e-6 next to 0 is many ULP; -8 is 3
    // The worst element against atol 1e-5 + 5 eps x |expected| is the 4e-6 next to 0: 40%.
    CHECK(c.worstElement == 2);
    CHECK(c.worstToleranceFraction == doctest::Approx(double(4e-6f) / 1e-5).epsilon(1e-6));
    CHECK(c.tolerance.atol == f32.atol);

    // Beyond the tolerance: fraction above 1.
    const auto far = floatBytes({2.0f, -8.0f, 3e-5f, 1.0f});
    const Comparison bad =
        compareTensors(OperandType::TENSOR_FLOAT32, expected.data(), far.data(), 4, f32);
    CHECK_FALSE(bad.ok());
    CHECK(bad.worstToleranceFraction > 1.0);

    // float16 counts ULP of float16.
    const Tolerance f16 = ctsTolerance(OperandType::TENSOR_FLOAT16, true);
    const auto he = halfBytes({1.0f, 2.0f});
    const auto ha = halfBytes({1.0f + 0.0009765625f * 2, 2.0f});  // 2 float16 ULP above 1
    const Comparison h = compareTensors(OperandType::TENSOR_FLOAT16, he.data(), ha.data(), 2, f16);
    CHECK(h.ok());
    CHECK(h.maxUlpError == 2);
    CHECK(h.worstElement == 0);

    // Relaxed float32 may be computed in binary16's range: beyond 65504 the largest binary16
    // or an infinity of the same sign matches; float32 keeps its own range.
    const float inf = std::numeric_limits<float>::infinity();
    const auto big = floatBytes({3.4028235e38f, 1e5f, -inf, 1e5f});
    const auto saturated = floatBytes({inf, 65504.0f, -65504.0f, 65504.0f});
    const Tolerance relaxed = ctsTolerance(OperandType::TENSOR_FLOAT32, true);
    CHECK(
        compareTensors(OperandType::TENSOR_FLOAT32, big.data(), saturated.data(), 4, relaxed).ok());
    const auto wrongSign = floatBytes({inf, 65504.0f, -65504.0f, -inf});
    CHECK(compareTensors(OperandType::TENSOR_FLOAT32, big.data(), wrongSign.data(), 4, relaxed)
              .mismatches == 1);
    const auto belowRange = floatBytes({inf, 65504.0f, -65504.0f, 65000.0f});
    CHECK_FALSE(
        compareTensors(OperandType::TENSOR_FLOAT32, big.data(), belowRange.data(), 4, relaxed)
            .ok());
    CHECK(compareTensors(OperandType::TENSOR_FLOAT32, big.data(), saturated.data(), 4, f32)
              .mismatches == 4);

    // Exact types: no ULP, fraction 0 when identical, infinite when not.
    const std::vector<uint8_t> q{1, 2, 3}, q2{1, 2, 4};
    const Comparison exact =
        compareTensors(OperandType::TENSOR_QUANT8_ASYMM, q.data(), q.data(), 3, {0.0, 0.0});
    CHECK(exact.maxUlpError == 0);
    CHECK(exact.worstToleranceFraction == 0.0);
    CHECK(std::isinf(
        compareTensors(OperandType::TENSOR_QUANT8_ASYMM, q.data(), q2.data(), 3, {0.0, 0.0})
            .worstToleranceFraction));
}

TEST_CASE("accuracy_figures_in_the_run_report") {
    Operand out;
    out.type = OperandType::TENSOR_FLOAT32;
    const TensorData golden{{1, 2}, floatBytes({1.0f, 100.0f})};
    const TensorData device{{1, 2}, floatBytes({1.0f + 2e-6f, 100.0f})};
    RunReport report;
    report.modelName = "m";
    report.backend = "golden";
    report.compared = true;
    report.outputs.push_back(checkTensor("output 0", 3, out, false, device, &golden));
    const std::string text = formatReport(report);
    CHECK(text.find("max rel error 2") != std::string::npos);
    CHECK(text.find(" ULP\n") != std::string::npos);
    CHECK(text.find("tolerance 1e-05 + 5.96046e-07 x |golden|: worst element 0 [0,0] used ") !=
          std::string::npos);
    CHECK(text.find("(margin 8") != std::string::npos);  // ~19% used: ~81% left
    const nlohmann::json j = reportJson(report);
    const auto& t = j["outputs"][0]["tolerance"];
    CHECK(t["worst_element"] == 0);
    CHECK(t["worst_coordinates"] == "[0,0]");
    // |error| ~2.03e-6 of an allowed 1e-5 + 5 x 1.19e-7 x 1.
    CHECK(t["worst_fraction_used"].get<double>() == doctest::Approx(0.1913).epsilon(0.01));
    CHECK(t["margin"].get<double>() ==
          doctest::Approx(1.0 - t["worst_fraction_used"].get<double>()));
    CHECK(j["outputs"][0]["max_rel_error"].get<double>() > 1e-6);
    CHECK(j["outputs"][0]["max_ulp_error"].get<uint64_t>() > 10);

    // Identical floats: every element exact.
    report.outputs[0] = checkTensor("output 0", 3, out, false, golden, &golden);
    CHECK(formatReport(report).find("every element exact") != std::string::npos);
}
