// Operations that change a tensor's shape without arithmetic: SQUEEZE, EXPAND_DIMS, RANK, FILL,
// PACK (the rearrangements are element maps: DataMovement.cpp).
// Element types do not matter to them (they copy elements of the input's size), so one
// implementation serves every operand type the validators admit; the result keeps the input's
// quantization, as NNAPI requires of these operations.
#include <cstring>
#include <numeric>

#include "golden/ops/DataMovement.h"
#include "golden/ops/OpUtils.h"
#include "golden/ops/Operations.h"
#include "model/operations/Shapes.h"

namespace nncosim::golden {
namespace {

/// Output 0 as a byte copy of input 0 under a new shape.
Status copyWithShape(ExecutionContext& ctx, std::vector<uint32_t> dims) {
    NN_RETURN_IF_ERROR(ctx.setOutputShape(0, std::move(dims)));
    const size_t bytes = ctx.inputCount(0) * elementSize(ctx.inputType(0));
    if (bytes > 0) std::memcpy(ctx.outputBytes(0), ctx.inputBytes(0), bytes);
    return okStatus();
}

}  // namespace

Status executeSqueeze(ExecutionContext& ctx) {
    std::optional<std::vector<int32_t>> axes;
    if (!ctx.isOmitted(1)) {
        if (ctx.inputRank(1) != 1) return ctx.fail("squeeze dimensions must be 1-D");
        const int32_t* dims = ctx.inputData<int32_t>(1);
        axes.emplace(dims, dims + ctx.inputCount(1));
    }
    auto out = squeezeShape(ctx.inputShape(0), axes);
    if (!out) return ctx.fail(out.status().message);
    return copyWithShape(ctx, std::move(*out));
}

Status executeExpandDims(ExecutionContext& ctx) {
    auto out = expandDimsShape(ctx.inputShape(0), ctx.scalar<int32_t>(1));
    if (!out) return ctx.fail(out.status().message);
    return copyWithShape(ctx, std::move(*out));
}

Status executeRank(ExecutionContext& ctx) {
    NN_RETURN_IF_ERROR(ctx.setOutputShape(0, {}));
    *ctx.outputData<int32_t>(0) = static_cast<int32_t>(ctx.inputRank(0));
    return okStatus();
}

Status executeFill(ExecutionContext& ctx) {
    if (ctx.inputRank(0) != 1) return ctx.fail("the dimensions must be a 1-D tensor");
    const int32_t* dimsData = ctx.inputData<int32_t>(0);
    std::vector<uint32_t> dims;
    for (size_t k = 0; k < ctx.inputCount(0); ++k) {
        if (dimsData[k] < 0) return ctx.fail("negative output dimension ", dimsData[k]);
        dims.push_back(static_cast<uint32_t>(dimsData[k]));
    }
    NN_RETURN_IF_ERROR(ctx.setOutputShape(0, std::move(dims)));
    const size_t n = ctx.outputCount(0);
    switch (ctx.outputType(0)) {
        case OperandType::TENSOR_FLOAT32:
            Eigen::Map<ArrayX<float>>(ctx.outputData<float>(0), n)
                .setConstant(ctx.scalar<float>(1));
            break;
        case OperandType::TENSOR_FLOAT16:
            Eigen::Map<ArrayX<half>>(ctx.outputData<half>(0), n)
                .setConstant(static_cast<half>(ctx.scalar<float>(1)));
            break;
        case OperandType::TENSOR_INT32:
            Eigen::Map<ArrayX<int32_t>>(ctx.outputData<int32_t>(0), n)
                .setConstant(ctx.scalar<int32_t>(1));
            break;
        default:
            return ctx.fail("unsupported output type ", nameOf(ctx.outputType(0)));
    }
    return okStatus();
}

Status executePack(ExecutionContext& ctx) {
    // Input 0 is the axis; inputs 1.. are the tensors, all of one shape.
    const uint32_t count = ctx.numInputs() - 1;
    const std::vector<uint32_t>& in = ctx.inputShape(1);
    const int32_t axis = ctx.scalar<int32_t>(0);
    if (axis < 0 || static_cast<size_t>(axis) > in.size()) {
        return ctx.fail("axis ", axis, " out of range for rank ", in.size() + 1);
    }
    for (uint32_t t = 2; t <= count; ++t) {
        if (ctx.inputShape(t) != in) {
            return ctx.fail("input ", t, " has shape ", toString(ctx.inputShape(t)),
                            ", input 1 has ", toString(in));
        }
    }
    std::vector<uint32_t> out = in;
    out.insert(out.begin() + axis, count);
    NN_RETURN_IF_ERROR(ctx.setOutputShape(0, std::move(out)));
    // Each tensor contributes one block of its trailing dimensions per outer index.
    const size_t outer =
        std::accumulate(in.begin(), in.begin() + axis, size_t{1}, std::multiplies<size_t>());
    const size_t blockBytes =
        std::accumulate(in.begin() + axis, in.end(), size_t{1}, std::multiplies<size_t>()) *
        elementSize(ctx.inputType(1));
    uint8_t* dst = ctx.outputBytes(0);
    for (size_t o = 0; o < outer; ++o) {
        for (uint32_t t = 1; t <= count; ++t, dst += blockBytes) {
            std::memcpy(dst, ctx.inputBytes(t) + o * blockBytes, blockBytes);
        }
    }
    return okStatus();
}

}  // namespace nncosim::golden
