// Focused tests of the detection, ROI and DENSIFY reference implementations: the places where
// Android's CPU reference has observable quirks (NMS ordering and its hard kernel, quantized
// ROI_ALIGN weights, zero-sized results, CSR expansion with a zero-point fill).
#include <doctest/doctest.h>

#include <cstring>

#include "golden/Executor.h"
#include "golden/tests/TestTensors.h"
#include "model/Builder.h"

namespace nncosim::golden {
namespace {

// BOX_WITH_NMS_LIMIT over float inputs scores [n, 2] and rois [n, 8] of batch 0, hard kernel
// with IoU threshold 0.5 and score threshold 0.5.
Model nmsModel(float nmsScoreThreshold) {
    ModelBuilder b;
    const uint32_t scores = b.addInput(OperandType::TENSOR_FLOAT32, {0, 2});
    const uint32_t rois = b.addInput(OperandType::TENSOR_FLOAT32, {0, 8});
    const uint32_t batches = b.addInput(OperandType::TENSOR_INT32, {0});
    const uint32_t outScores = b.addOutput(OperandType::TENSOR_FLOAT32, {0});
    const uint32_t outRois = b.addOutput(OperandType::TENSOR_FLOAT32, {0, 4});
    const uint32_t outClasses = b.addOutput(OperandType::TENSOR_INT32, {0});
    const uint32_t outBatches = b.addOutput(OperandType::TENSOR_INT32, {0});
    b.addOperation(OperationType::BOX_WITH_NMS_LIMIT,
                   {scores, rois, batches, b.addFloat32(0.5f), b.addInt32(-1), b.addInt32(0),
                    b.addFloat32(0.5f), b.addFloat32(1.0f), b.addFloat32(nmsScoreThreshold)},
                   {outScores, outRois, outClasses, outBatches});
    return b.build();
}

// Three class-1 candidates (the class-0 boxes are zeros): box 1 overlaps box 0 (IoU 81/119), box 2
// is apart.
std::vector<TensorData> nmsInputs() {
    const std::vector<float> scores = {0.0f, 0.9f, 0.0f, 0.8f, 0.0f, 0.7f};
    const std::vector<float> rois = {0, 0, 0,  0,  0, 0, 10, 10, 0,  0,  0,  0,
                                     1, 1, 11, 11, 0, 0, 0,  0,  20, 20, 30, 30};
    return {tensor<float>({3, 2}, scores), tensor<float>({3, 8}, rois),
            tensor<int32_t>({3}, {0, 0, 0})};
}

TEST_CASE("golden_box_with_nms_limit_hard_kernel_keeps_zeroed_scores") {
    // Android's hard kernel multiplies an overlapping score by 0 and drops it only when the
    // result is below the NMS score threshold: with threshold 0 the zeroed box survives, last.
    auto kept = execute(nmsModel(0.0f), nmsInputs());
    REQUIRE_MESSAGE(kept.ok(), kept.status().message);
    CHECK(valuesOf<float>(kept->at(0)) == std::vector<float>{0.9f, 0.7f, 0.0f});
    CHECK(valuesOf<float>(kept->at(1)) ==
          std::vector<float>{0, 0, 10, 10, 20, 20, 30, 30, 1, 1, 11, 11});
    CHECK(valuesOf<int32_t>(kept->at(2)) == std::vector<int32_t>{1, 1, 1});
    CHECK(valuesOf<int32_t>(kept->at(3)) == std::vector<int32_t>{0, 0, 0});

    auto dropped = execute(nmsModel(0.1f), nmsInputs());
    REQUIRE_MESSAGE(dropped.ok(), dropped.status().message);
    CHECK(dropped->at(0).dimensions == std::vector<uint32_t>{2});
    CHECK(valuesOf<float>(dropped->at(0)) == std::vector<float>{0.9f, 0.7f});
}

TEST_CASE("golden_zero_sized_rois_flow_through_nms_and_roi_align") {
    // No score passes the threshold: BOX_WITH_NMS_LIMIT yields zero boxes, and ROI_ALIGN over
    // them yields a zero-sized batch instead of failing (as in the CTS zero_sized specs).
    ModelBuilder b;
    const uint32_t scores = b.addInput(OperandType::TENSOR_FLOAT32, {1, 2});
    const uint32_t rois = b.addInput(OperandType::TENSOR_FLOAT32, {1, 8});
    const uint32_t batches = b.addInput(OperandType::TENSOR_INT32, {1});
    const uint32_t image = b.addInput(OperandType::TENSOR_FLOAT32, {1, 2, 2, 1});
    const uint32_t outScores = b.addOutput(OperandType::TENSOR_FLOAT32, {0});
    const uint32_t outRois = b.addOperand(OperandType::TENSOR_FLOAT32, {0, 4});
    const uint32_t outClasses = b.addOutput(OperandType::TENSOR_INT32, {0});
    const uint32_t outBatches = b.addOperand(OperandType::TENSOR_INT32, {0});
    b.addOperation(OperationType::BOX_WITH_NMS_LIMIT,
                   {scores, rois, batches, b.addFloat32(0.95f), b.addInt32(-1), b.addInt32(0),
                    b.addFloat32(0.5f), b.addFloat32(1.0f), b.addFloat32(0.0f)},
                   {outScores, outRois, outClasses, outBatches});
    const uint32_t aligned = b.addOutput(OperandType::TENSOR_FLOAT32, {0, 2, 2, 1});
    b.addOperation(OperationType::ROI_ALIGN,
                   {image, outRois, outBatches, b.addInt32(2), b.addInt32(2), b.addFloat32(1.0f),
                    b.addFloat32(1.0f), b.addInt32(0), b.addInt32(0), b.addBool(false)},
                   {aligned});
    auto result =
        execute(b.build(), {tensor<float>({1, 2}, {0.0f, 0.9f}),
                            tensor<float>({1, 8}, {0, 0, 0, 0, 0, 0, 1, 1}),
                            tensor<int32_t>({1}, {0}), tensor<float>({1, 2, 2, 1}, {1, 2, 3, 4})});
    REQUIRE_MESSAGE(result.ok(), result.status().message);
    CHECK(result->at(0).dimensions == std::vector<uint32_t>{0});
    CHECK(result->at(1).dimensions == std::vector<uint32_t>{0});
    CHECK(result->at(2).dimensions == std::vector<uint32_t>{0, 2, 2, 1});
    CHECK(result->at(2).bytes.empty());
}

TEST_CASE("golden_roi_align_quant8_quantizes_bilinear_weights") {
    // A 1x2 image (0, 255) and one sample halfway between the pixels. Android quantizes the
    // bilinear weights to steps of 1/255 in float: 0.5 / float(1/255) is just below 127.5, so
    // each weight is 127 and the result 127 * 255 / 255 = 127, where exact weights give 127.5.
    ModelBuilder b;
    const uint32_t in = b.addInput(OperandType::TENSOR_QUANT8_ASYMM, {1, 1, 2, 1}, 1.0f, 0);
    const uint32_t rois = b.addConstant(OperandType::TENSOR_QUANT16_ASYMM, {1, 4},
                                        std::vector<uint16_t>{0, 0, 8, 8}, 0.125f, 0);
    const uint32_t batches = b.addConstant(OperandType::TENSOR_INT32, {1}, std::vector<int32_t>{0});
    const uint32_t out = b.addOutput(OperandType::TENSOR_QUANT8_ASYMM, {1, 1, 1, 1}, 1.0f, 0);
    b.addOperation(OperationType::ROI_ALIGN,
                   {in, rois, batches, b.addInt32(1), b.addInt32(1), b.addFloat32(1.0f),
                    b.addFloat32(1.0f), b.addInt32(1), b.addInt32(1), b.addBool(false)},
                   {out});
    auto result = execute(b.build(), {tensor<uint8_t>({1, 1, 2, 1}, {0, 255})});
    REQUIRE_MESSAGE(result.ok(), result.status().message);
    CHECK(int{valuesOf<uint8_t>(result->at(0)).at(0)} == 127);
}

TEST_CASE("golden_roi_align_rejects_box_outside_feature_map") {
    ModelBuilder b;
    const uint32_t in = b.addInput(OperandType::TENSOR_FLOAT32, {1, 2, 2, 1});
    const uint32_t rois =
        b.addConstant(OperandType::TENSOR_FLOAT32, {1, 4}, std::vector<float>{0, 0, 3, 2});
    const uint32_t batches = b.addConstant(OperandType::TENSOR_INT32, {1}, std::vector<int32_t>{0});
    const uint32_t out = b.addOutput(OperandType::TENSOR_FLOAT32, {1, 1, 1, 1});
    b.addOperation(OperationType::ROI_ALIGN,
                   {in, rois, batches, b.addInt32(1), b.addInt32(1), b.addFloat32(1.0f),
                    b.addFloat32(1.0f), b.addInt32(0), b.addInt32(0), b.addBool(false)},
                   {out});
    auto result = execute(b.build(), {tensor<float>({1, 2, 2, 1}, {1, 2, 3, 4})});
    CHECK_FALSE(result.ok());
}

TEST_CASE("golden_densify_csr_fills_zero_point") {
    // Dense [3, 4] quant8 (zero point 3): row 0 stores columns 1 and 3, row 1 nothing, row 2
    // column 0; dimension 0 is dense (no metadata), dimension 1 CSR.
    ModelBuilder b;
    const uint32_t values = b.addInput(OperandType::TENSOR_QUANT8_ASYMM, {3}, 0.5f, 3);
    const auto ints = [&b](std::vector<int32_t> v) {
        const auto n = static_cast<uint32_t>(v.size());
        return b.addConstant(OperandType::TENSOR_INT32, {n}, v);
    };
    const uint32_t noValue = b.addNoValue(OperandType::TENSOR_INT32);
    const uint32_t out = b.addOutput(OperandType::TENSOR_QUANT8_ASYMM, {3, 4}, 0.5f, 3);
    const uint32_t traversal = ints({0, 1});
    const uint32_t format = ints({0, 1});
    const uint32_t dims = ints({3, 4});
    const uint32_t segments = ints({0, 2, 2, 3});
    const uint32_t indices = ints({1, 3, 0});
    b.addOperation(OperationType::DENSIFY,
                   {values, traversal, noValue, format, dims, noValue, noValue, segments, indices},
                   {out});
    auto result = execute(b.build(), {tensor<uint8_t>({3}, {10, 20, 30})});
    REQUIRE_MESSAGE(result.ok(), result.status().message);
    CHECK(valuesOf<uint8_t>(result->at(0)) ==
          std::vector<uint8_t>{3, 10, 3, 20, 3, 3, 3, 3, 30, 3, 3, 3});
}

TEST_CASE("golden_densify_rejects_out_of_range_index") {
    ModelBuilder b;
    const uint32_t values = b.addInput(OperandType::TENSOR_FLOAT32, {1});
    const auto ints = [&b](std::vector<int32_t> v) {
        const auto n = static_cast<uint32_t>(v.size());
        return b.addConstant(OperandType::TENSOR_INT32, {n}, v);
    };
    const uint32_t noValue = b.addNoValue(OperandType::TENSOR_INT32);
    const uint32_t out = b.addOutput(OperandType::TENSOR_FLOAT32, {1, 2});
    b.addOperation(OperationType::DENSIFY,
                   {values, ints({0, 1}), noValue, ints({0, 1}), ints({1, 2}), noValue, noValue,
                    ints({0, 1}), ints({5})},
                   {out});
    auto result = execute(b.build(), {tensor<float>({1}, {1.0f})});
    CHECK_FALSE(result.ok());
}

}  // namespace
}  // namespace nncosim::golden
