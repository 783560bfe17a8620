// Focused tests of the data-movement, indexing, reduction and BATCH_MATMUL operations: the offset
// engine (copyMapped) and the places where Android has a particular rule (tie orders, float16
// accumulation, zero-point padding, double rounding of the requantization).
#include <doctest/doctest.h>

#include <cstring>
#include <functional>
#include <limits>
#include <vector>

#include "golden/Executor.h"
#include "golden/ops/DataMovement.h"
#include "golden/tests/TestTensors.h"
#include "model/Builder.h"

namespace nncosim::golden {
namespace {

struct Spec {
    OperandType type;
    std::vector<uint32_t> dims;
    float scale = 0.0f;
    int32_t zeroPoint = 0;
};

using AddParams = std::function<void(ModelBuilder&, std::vector<uint32_t>&)>;

/// Runs `type` on one model input fed `values`, the parameters `params` appends, and outputs of
/// the given descriptions (dimensions may be 0 = unknown).
template <typename T>
Result<std::vector<TensorData>> run(OperationType type, Spec in, const std::vector<T>& values,
                                    const AddParams& params, std::vector<Spec> outs) {
    ModelBuilder b;
    std::vector<uint32_t> inputs = {b.addInput(in.type, in.dims, in.scale, in.zeroPoint)};
    params(b, inputs);
    std::vector<uint32_t> outputs;
    for (const Spec& out : outs) {
        outputs.push_back(b.addOutput(out.type, out.dims, out.scale, out.zeroPoint));
    }
    b.addOperation(type, inputs, outputs);
    return execute(b.build(), {tensor<T>(in.dims, values)});
}

/// run() of a single-output operation that must succeed; also checks the output shape.
template <typename T, typename Out = T>
std::vector<Out> runOk(OperationType type, Spec in, const std::vector<T>& values,
                       const AddParams& params, Spec out, std::vector<uint32_t> expectedDims) {
    auto result = run(type, in, values, params, {out});
    REQUIRE_MESSAGE(result.ok(), result.status().message);
    CHECK(result->at(0).dimensions == expectedDims);
    return valuesOf<Out>(result->at(0));
}

constexpr OperandType kFloat = OperandType::TENSOR_FLOAT32;
constexpr OperandType kHalf = OperandType::TENSOR_FLOAT16;
constexpr OperandType kInt32 = OperandType::TENSOR_INT32;
constexpr OperandType kUint8 = OperandType::TENSOR_QUANT8_ASYMM;
constexpr OperandType kInt8 = OperandType::TENSOR_QUANT8_ASYMM_SIGNED;

TEST_CASE("golden_shape_copy_mapped_permutes_and_pads") {
    // A 2x3 matrix of uint16 read transposed, then with one padded row in front and the columns
    // reversed.
    const std::vector<uint16_t> in = {1, 2, 3, 4, 5, 6};
    std::vector<uint16_t> out(6);
    copyMapped(reinterpret_cast<const uint8_t*>(in.data()), reinterpret_cast<uint8_t*>(out.data()),
               2, {stridedAxis(3, 1), stridedAxis(2, 3)});
    CHECK(out == std::vector<uint16_t>{1, 4, 2, 5, 3, 6});
    out.assign(9, 0);
    copyMapped(reinterpret_cast<const uint8_t*>(in.data()), reinterpret_cast<uint8_t*>(out.data()),
               2, {{kPadOffset, 0, 3}, stridedAxis(3, -1, 2)}, 99);
    CHECK(out == std::vector<uint16_t>{99, 99, 99, 3, 2, 1, 6, 5, 4});
    // A padded entry on the innermost axis, and no axes at all (a scalar copy).
    uint32_t scalar = 0;
    const uint32_t source = 7;
    copyMapped(reinterpret_cast<const uint8_t*>(&source), reinterpret_cast<uint8_t*>(&scalar), 4,
               {});
    CHECK(scalar == 7);
    std::vector<uint8_t> bytes(4);
    const std::vector<uint8_t> two = {10, 20};
    copyMapped(two.data(), bytes.data(), 1, {{1, kPadOffset, 0, 1}}, 0xAB);
    CHECK(bytes == std::vector<uint8_t>{20, 0xAB, 10, 20});
}

TEST_CASE("golden_shape_topk_orders_ties_by_descending_index") {
    auto result =
        run<float>(OperationType::TOPK_V2, {kFloat, {2, 4}}, {1, 3, 3, 2, 5, 5, 5, 5},
                   [](ModelBuilder& b, std::vector<uint32_t>& in) { in.push_back(b.addInt32(3)); },
                   {{kFloat, {0, 0}}, {kInt32, {0, 0}}});
    REQUIRE_MESSAGE(result.ok(), result.status().message);
    CHECK(result->at(0).dimensions == std::vector<uint32_t>{2, 3});
    CHECK(valuesOf<float>(result->at(0)) == std::vector<float>{3, 3, 2, 5, 5, 5});
    CHECK(valuesOf<int32_t>(result->at(1)) == std::vector<int32_t>{2, 1, 3, 3, 2, 1});
}

TEST_CASE("golden_shape_argmax_argmin_keep_the_first_extremum") {
    const auto axis1 = [](ModelBuilder& b, std::vector<uint32_t>& in) {
        in.push_back(b.addInt32(-1));
    };
    const std::vector<uint8_t> values = {4, 9, 9, 1, 1, 7};
    CHECK(runOk<uint8_t, int32_t>(OperationType::ARGMAX, {kUint8, {2, 3}, 1.0f, 0}, values, axis1,
                                  {kInt32, {0}}, {2}) == std::vector<int32_t>{1, 2});
    CHECK(runOk<uint8_t, int32_t>(OperationType::ARGMIN, {kUint8, {2, 3}, 1.0f, 0}, values, axis1,
                                  {kInt32, {0}}, {2}) == std::vector<int32_t>{0, 0});
}

TEST_CASE("golden_shape_reduce_sum_float16_rounds_every_step") {
    // In float16, 2048 + 1 rounds back to 2048 (ties to even), so the sum stays 2048; a float32
    // accumulation would give 2050.
    const std::vector<half> values = {half(2048.0f), half(1.0f), half(1.0f)};
    const auto axes = [](ModelBuilder& b, std::vector<uint32_t>& in) {
        in.push_back(b.addConstant(kInt32, {1}, std::vector<int32_t>{0}));
        in.push_back(b.addBool(false));
    };
    const auto sum =
        runOk<half>(OperationType::REDUCE_SUM, {kHalf, {3}}, values, axes, {kHalf, {0}}, {1});
    CHECK(static_cast<float>(sum[0]) == 2048.0f);
}

TEST_CASE("golden_shape_reduce_prod_zero_absorbs_infinity") {
    const float inf = std::numeric_limits<float>::infinity();
    const auto axes = [](ModelBuilder& b, std::vector<uint32_t>& in) {
        in.push_back(b.addConstant(kInt32, {2}, std::vector<int32_t>{1, 1}));  // repeated axis
        in.push_back(b.addBool(true));
    };
    CHECK(runOk<float>(OperationType::REDUCE_PROD, {kFloat, {2, 2}}, {0.0f, inf, 2.0f, -3.0f}, axes,
                       {kFloat, {0, 0}}, {2, 1}) == std::vector<float>{0.0f, -6.0f});
}

TEST_CASE("golden_shape_space_to_batch_pads_with_the_zero_point") {
    // One 2x2 image, block 2x2, one column of padding on the left and one on the right: four
    // batches of 1x2 pixels; the padding reads as the output zero point 5.
    const auto params = [](ModelBuilder& b, std::vector<uint32_t>& in) {
        in.push_back(b.addConstant(kInt32, {2}, std::vector<int32_t>{2, 2}));
        in.push_back(b.addConstant(kInt32, {2, 2}, std::vector<int32_t>{0, 0, 1, 1}));
    };
    CHECK(runOk<uint8_t>(OperationType::SPACE_TO_BATCH_ND, {kUint8, {1, 2, 2, 1}, 0.5f, 5},
                         {1, 2, 3, 4}, params, {kUint8, {0, 0, 0, 0}, 0.5f, 5},
                         {4, 1, 2, 1}) == std::vector<uint8_t>{5, 2, 1, 5, 5, 4, 3, 5});
}

TEST_CASE("golden_shape_depth_to_space_layouts_agree") {
    // One pixel of four channels becomes a 2x2 image of one channel, in NHWC and in NCHW.
    const auto params = [](bool nchw) {
        return [nchw](ModelBuilder& b, std::vector<uint32_t>& in) {
            in.push_back(b.addInt32(2));
            in.push_back(b.addBool(nchw));
        };
    };
    const std::vector<float> values = {1, 2, 3, 4};
    CHECK(runOk<float>(OperationType::DEPTH_TO_SPACE, {kFloat, {1, 1, 1, 4}}, values, params(false),
                       {kFloat, {0, 0, 0, 0}}, {1, 2, 2, 1}) == values);
    CHECK(runOk<float>(OperationType::DEPTH_TO_SPACE, {kFloat, {1, 4, 1, 1}}, values, params(true),
                       {kFloat, {0, 0, 0, 0}}, {1, 1, 2, 2}) == values);
    // Two channels per output pixel in NCHW: channel k of pixel (i, j) is input channel
    // (2i + j) * 2 + k.
    const std::vector<float> eight = {0, 1, 2, 3, 4, 5, 6, 7};
    CHECK(runOk<float>(OperationType::DEPTH_TO_SPACE, {kFloat, {1, 8, 1, 1}}, eight, params(true),
                       {kFloat, {0, 0, 0, 0}},
                       {1, 2, 2, 2}) == std::vector<float>{0, 2, 4, 6, 1, 3, 5, 7});
}

TEST_CASE("golden_shape_strided_slice_negative_stride_and_shrink") {
    const auto params = [](std::vector<int32_t> begin, std::vector<int32_t> end,
                           std::vector<int32_t> strides, int32_t beginMask, int32_t endMask,
                           int32_t shrinkMask) {
        return [=](ModelBuilder& b, std::vector<uint32_t>& in) {
            in.push_back(b.addConstant(kInt32, {2}, begin));
            in.push_back(b.addConstant(kInt32, {2}, end));
            in.push_back(b.addConstant(kInt32, {2}, strides));
            in.push_back(b.addInt32(beginMask));
            in.push_back(b.addInt32(endMask));
            in.push_back(b.addInt32(shrinkMask));
        };
    };
    const std::vector<float> m = {1, 2, 3, 4, 5, 6};  // 2x3
    // Row 1 (shrunk), columns reversed from the end mask.
    CHECK(runOk<float>(OperationType::STRIDED_SLICE, {kFloat, {2, 3}}, m,
                       params({1, -1}, {2, 0}, {1, -1}, 0, 2, 1), {kFloat, {0}},
                       {3}) == std::vector<float>{6, 5, 4});
    // A shrunk axis with a negative stride is an execution failure.
    CHECK_FALSE(run<float>(OperationType::STRIDED_SLICE, {kFloat, {2, 3}}, m,
                           params({1, 0}, {0, 3}, {-1, 1}, 0, 0, 1), {{kFloat, {0}}})
                    .ok());
}

TEST_CASE("golden_shape_mirror_pad_reflect_and_symmetric") {
    const auto params = [](int32_t mode) {
        return [mode](ModelBuilder& b, std::vector<uint32_t>& in) {
            in.push_back(b.addConstant(kInt32, {1, 2}, std::vector<int32_t>{2, 2}));
            in.push_back(b.addInt32(mode));
        };
    };
    const std::vector<int32_t> v = {1, 2, 3};
    CHECK(runOk<int32_t>(OperationType::MIRROR_PAD, {kInt32, {3}}, v, params(0), {kInt32, {0}},
                         {7}) == std::vector<int32_t>{3, 2, 1, 2, 3, 2, 1});
    CHECK(runOk<int32_t>(OperationType::MIRROR_PAD, {kInt32, {3}}, v, params(1), {kInt32, {0}},
                         {7}) == std::vector<int32_t>{2, 1, 1, 2, 3, 3, 2});
    // REFLECT cannot pad by the whole dimension.
    const auto tooMuch = [](ModelBuilder& b, std::vector<uint32_t>& in) {
        in.push_back(b.addConstant(kInt32, {1, 2}, std::vector<int32_t>{3, 0}));
        in.push_back(b.addInt32(0));
    };
    CHECK_FALSE(
        run<int32_t>(OperationType::MIRROR_PAD, {kInt32, {3}}, v, tooMuch, {{kInt32, {0}}}).ok());
}

TEST_CASE("golden_shape_gather_rejects_out_of_range_indices") {
    const auto indices = [](std::vector<int32_t> values) {
        return [values](ModelBuilder& b, std::vector<uint32_t>& in) {
            in.push_back(b.addInt32(1));
            in.push_back(b.addConstant(kInt32, {2, 1}, values));
        };
    };
    const std::vector<float> m = {1, 2, 3, 4, 5, 6};  // 2x3
    CHECK(runOk<float>(OperationType::GATHER, {kFloat, {2, 3}}, m, indices({2, 0}),
                       {kFloat, {0, 0, 0}}, {2, 2, 1}) == std::vector<float>{3, 1, 6, 4});
    auto bad = run<float>(OperationType::GATHER, {kFloat, {2, 3}}, m, indices({3, 0}),
                          {{kFloat, {0, 0, 0}}});
    REQUIRE_FALSE(bad.ok());
    CHECK(bad.status().code == ErrorStatus::GENERAL_FAILURE);
}

TEST_CASE("golden_shape_batch_matmul_quant_double_rounding") {
    // LHS scale 0.25, RHS scale 0.5, output scale 1: the multiplier 0.125 is 2^30 * 2^(-2 - 31),
    // applied as a rounding doubling high multiply by one half, then a rounding shift by 2. An
    // accumulator of 3 (0.375 steps) becomes 2, then 0.5, rounded away from zero to 1, where a
    // single rounding would give 0. Accumulators 12 and -12 (+-1.5 steps) give 2 and -2.
    const auto params = [](ModelBuilder& b, std::vector<uint32_t>& in) {
        // RHS 3x3 with zero point -64: columns (1,1,1), (4,4,4), (-4,-4,-4) after centring.
        in.push_back(b.addConstant(kInt8, {3, 3},
                                   std::vector<int8_t>{-63, -60, -68, -63, -60, -68, -63, -60, -68},
                                   0.5f, -64));
        in.push_back(b.addBool(false));
        in.push_back(b.addBool(false));
    };
    const auto out = runOk<int8_t>(OperationType::BATCH_MATMUL, {kInt8, {1, 3}, 0.25f, 0},
                                   {1, 1, 1}, params, {kInt8, {0, 0}, 1.0f, 10}, {1, 3});
    CHECK(out == std::vector<int8_t>{11, 12, 8});
}

TEST_CASE("golden_shape_batch_matmul_adjoint_and_rhs_broadcast") {
    // Two LHS batches of 2x2 against one RHS matrix, the LHS transposed.
    const auto params = [](ModelBuilder& b, std::vector<uint32_t>& in) {
        in.push_back(b.addConstant(kFloat, {1, 2, 2}, std::vector<float>{1, 2, 3, 4}));
        in.push_back(b.addBool(true));
        in.push_back(b.addBool(false));
    };
    CHECK(runOk<float>(OperationType::BATCH_MATMUL, {kFloat, {2, 2, 2}}, {1, 0, 0, 1, 0, 1, 1, 0},
                       params, {kFloat, {0, 0, 0}},
                       {2, 2, 2}) == std::vector<float>{1, 2, 3, 4, 3, 4, 1, 2});
}

}  // namespace
}  // namespace nncosim::golden
