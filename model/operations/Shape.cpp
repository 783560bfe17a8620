// Validators of the operations that build or reshape tensors: EXPAND_DIMS, FILL, RANK, PACK.
#include <optional>

#include "model/operations/OperationUtils.h"
#include "model/operations/Validators.h"

namespace nncosim {

Status validateExpandDims(OperationContext& ctx) {
    NN_RETURN_IF_ERROR(ctx.expectInputCount({2}));
    NN_RETURN_IF_ERROR(ctx.expectOutputCount({1}));
    NN_RETURN_IF_ERROR(
        expectTypeSince(ctx, 0,
                        {{OperandType::TENSOR_FLOAT16, FeatureLevel::kV1_2},
                         {OperandType::TENSOR_FLOAT32, FeatureLevel::kV1_2},
                         {OperandType::TENSOR_INT32, FeatureLevel::kV1_2},
                         {OperandType::TENSOR_QUANT8_ASYMM, FeatureLevel::kV1_2},
                         {OperandType::TENSOR_QUANT8_ASYMM_SIGNED, FeatureLevel::kV1_3}}));
    const OperandType type = ctx.inputType(0);
    NN_RETURN_IF_ERROR(ctx.expectInputTypes({type, OperandType::INT32}));
    NN_RETURN_IF_ERROR(ctx.expectOutputTypes({type}));
    NN_RETURN_IF_ERROR(expectRequiredInputs(ctx, {}));
    // The new dimension may go anywhere among the n + 1 positions of the output.
    auto axis = constantInt32(ctx, 1);
    if (auto rank = ctx.inputRank(0); axis && rank) {
        const int32_t n = static_cast<int32_t>(*rank) + 1;
        if (*axis < -n || *axis >= n)
            return ctx.fail("input 1 (axis) must be in [", -n, ", ", n, ") for input 0 of rank ",
                            *rank, ", got ", *axis);
    }
    return expectSameQuant8(ctx, 0, 0);
}

Status validateFill(OperationContext& ctx) {
    NN_RETURN_IF_ERROR(ctx.expectInputCount({2}));
    NN_RETURN_IF_ERROR(ctx.expectOutputCount({1}));
    // The output type decides the type of the fill value.
    OperandType valueType;
    switch (ctx.outputType(0)) {
        case OperandType::TENSOR_FLOAT16:
            valueType = OperandType::FLOAT16;
            break;
        case OperandType::TENSOR_FLOAT32:
            valueType = OperandType::FLOAT32;
            break;
        case OperandType::TENSOR_INT32:
            valueType = OperandType::INT32;
            break;
        default:
            return ctx.fail("output 0 has unsupported type ", nameOf(ctx.outputType(0)),
                            ", expected one of TENSOR_FLOAT16, TENSOR_FLOAT32, TENSOR_INT32");
    }
    NN_RETURN_IF_ERROR(ctx.expectInputTypes({OperandType::TENSOR_INT32, valueType}));
    NN_RETURN_IF_ERROR(expectRequiredInputs(ctx, {}));
    NN_RETURN_IF_ERROR(expectTensorRank(ctx, 0, 1, "output dimensions"));
    ctx.requireFeatureLevel(FeatureLevel::kV1_3);
    return okStatus();
}

Status validateRank(OperationContext& ctx) {
    NN_RETURN_IF_ERROR(ctx.expectInputCount({1}));
    NN_RETURN_IF_ERROR(ctx.expectOutputCount({1}));
    constexpr FeatureLevel kV1_3 = FeatureLevel::kV1_3;
    NN_RETURN_IF_ERROR(expectTypeSince(ctx, 0,
                                       {{OperandType::TENSOR_FLOAT16, kV1_3},
                                        {OperandType::TENSOR_FLOAT32, kV1_3},
                                        {OperandType::TENSOR_INT32, kV1_3},
                                        {OperandType::TENSOR_QUANT8_ASYMM, kV1_3},
                                        {OperandType::TENSOR_QUANT16_SYMM, kV1_3},
                                        {OperandType::TENSOR_BOOL8, kV1_3},
                                        {OperandType::TENSOR_QUANT8_SYMM_PER_CHANNEL, kV1_3},
                                        {OperandType::TENSOR_QUANT16_ASYMM, kV1_3},
                                        {OperandType::TENSOR_QUANT8_SYMM, kV1_3},
                                        {OperandType::TENSOR_QUANT8_ASYMM_SIGNED, kV1_3}}));
    NN_RETURN_IF_ERROR(ctx.expectOutputTypes({OperandType::INT32}));
    return expectRequiredInputs(ctx, {});
}

Status validatePack(OperationContext& ctx) {
    if (ctx.numInputs() < 2)
        return ctx.fail("expected an axis and at least 1 input tensor, got ", ctx.numInputs(),
                        " inputs");
    NN_RETURN_IF_ERROR(ctx.expectOutputCount({1}));
    NN_RETURN_IF_ERROR(ctx.expectInputType(0, OperandType::INT32));
    const OperandType type = ctx.outputType(0);
    switch (type) {
        case OperandType::TENSOR_FLOAT16:
        case OperandType::TENSOR_FLOAT32:
        case OperandType::TENSOR_INT32:
        case OperandType::TENSOR_QUANT8_ASYMM:
        case OperandType::TENSOR_QUANT8_ASYMM_SIGNED:
            break;
        default:
            return ctx.fail("output 0 has unsupported type ", nameOf(type),
                            ", expected one of TENSOR_FLOAT16, TENSOR_FLOAT32, TENSOR_INT32, "
                            "TENSOR_QUANT8_ASYMM, TENSOR_QUANT8_ASYMM_SIGNED");
    }
    NN_RETURN_IF_ERROR(expectRequiredInputs(ctx, {}));
    // Every input tensor has the output's type and quantization, and one common rank R;
    // the output has rank R + 1.
    const auto& outDims = ctx.output(0).dimensions;
    std::optional<uint32_t> rank;
    if (!outDims.empty()) rank = static_cast<uint32_t>(outDims.size() - 1);
    for (uint32_t i = 1; i < ctx.numInputs(); ++i) {
        NN_RETURN_IF_ERROR(ctx.expectInputType(i, type));
        NN_RETURN_IF_ERROR(expectSameQuant8(ctx, i, 0));
        if (auto r = ctx.inputRank(i)) {
            if (rank && *r != *rank)
                return ctx.fail("input ", i, " has rank ", *r, ", expected ", *rank,
                                " (one less than the output's rank, as the other inputs)");
            rank = r;
        }
    }
    auto axis = constantInt32(ctx, 0);
    if (axis && rank && (*axis < 0 || *axis > static_cast<int32_t>(*rank)))
        return ctx.fail("input 0 (axis) must be in [0, ", *rank + 1, "), got ", *axis);
    // The packed dimension counts the input tensors.
    const uint32_t packed = ctx.numInputs() - 1;
    if (axis && *axis >= 0 && static_cast<size_t>(*axis) < outDims.size() && outDims[*axis] != 0 &&
        outDims[*axis] != packed)
        return ctx.fail("output 0 dimension ", *axis, " is ", outDims[*axis], " but ", packed,
                        " tensors are packed");
    ctx.requireFeatureLevel(FeatureLevel::kAidlV2);
    return okStatus();
}

}  // namespace nncosim
