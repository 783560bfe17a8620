// Operations that change a tensor's shape or rearrange its elements without arithmetic: SQUEEZE,
// EXPAND_DIMS, RANK, FILL, TRANSPOSE, TILE, REVERSE, PACK, SPLIT, CHANNEL_SHUFFLE, MIRROR_PAD.
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

// MIRROR_PAD modes.
constexpr int32_t kMirrorReflect = 0;
constexpr int32_t kMirrorSymmetric = 1;

/// Output 0 as a byte copy of input 0 under a new shape.
Status copyWithShape(ExecutionContext& ctx, std::vector<uint32_t> dims) {
    NN_RETURN_IF_ERROR(ctx.setOutputShape(0, std::move(dims)));
    const size_t bytes = ctx.inputCount(0) * elementSize(ctx.inputType(0));
    if (bytes > 0) std::memcpy(ctx.outputBytes(0), ctx.inputBytes(0), bytes);
    return okStatus();
}

/// The elements of a 1-D TENSOR_INT32 input, checked to number `count`.
Result<std::vector<int32_t>> intVector(const ExecutionContext& ctx, uint32_t i, size_t count,
                                       const char* what) {
    if (ctx.inputRank(i) != 1 || ctx.inputCount(i) != count) {
        return ctx.fail(what, " must be a 1-D tensor of ", count, " values, got shape ",
                        toString(ctx.inputShape(i)));
    }
    const int32_t* data = ctx.inputData<int32_t>(i);
    return std::vector<int32_t>(data, data + count);
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

Status executeTranspose(ExecutionContext& ctx) {
    const std::vector<uint32_t>& in = ctx.inputShape(0);
    const auto rank = static_cast<uint32_t>(in.size());
    std::vector<int32_t> perm;
    if (ctx.isOmitted(1)) {
        // No permutation: the transpose of a matrix.
        if (rank != 2) return ctx.fail("an omitted permutation needs a 2-D input, got rank ", rank);
        perm = {1, 0};
    } else {
        if (rank > 4) return ctx.fail("input rank ", rank, " exceeds 4");
        auto values = intVector(ctx, 1, rank, "the permutation");
        if (!values) return values.status();
        perm = std::move(*values);
    }
    std::vector<bool> seen(rank, false);
    for (int32_t p : perm) {
        if (p < 0 || static_cast<uint32_t>(p) >= rank || seen[p]) {
            return ctx.fail("permutation entry ", p, " is out of range or repeated (rank ", rank,
                            ")");
        }
        seen[p] = true;
    }
    const auto strides = rowMajorStrides(in);
    std::vector<uint32_t> out;
    std::vector<AxisOffsets> axes;
    for (int32_t p : perm) {
        out.push_back(in[p]);
        axes.push_back(stridedAxis(in[p], strides[p]));
    }
    NN_RETURN_IF_ERROR(ctx.setOutputShape(0, std::move(out)));
    copyMapped(ctx, 0, 0, axes);
    return okStatus();
}

Status executeTile(ExecutionContext& ctx) {
    const std::vector<uint32_t>& in = ctx.inputShape(0);
    auto multiples = intVector(ctx, 1, in.size(), "the multiples");
    if (!multiples) return multiples.status();
    const auto strides = rowMajorStrides(in);
    std::vector<uint32_t> out;
    std::vector<AxisOffsets> axes;
    for (size_t d = 0; d < in.size(); ++d) {
        if ((*multiples)[d] < 0) return ctx.fail("negative multiple ", (*multiples)[d]);
        out.push_back(in[d] * static_cast<uint32_t>((*multiples)[d]));
        AxisOffsets axis(out.back());
        for (uint32_t i = 0; i < out.back(); ++i) axis[i] = (i % in[d]) * strides[d];
        axes.push_back(std::move(axis));
    }
    NN_RETURN_IF_ERROR(ctx.setOutputShape(0, std::move(out)));
    copyMapped(ctx, 0, 0, axes);
    return okStatus();
}

Status executeReverse(ExecutionContext& ctx) {
    const std::vector<uint32_t>& in = ctx.inputShape(0);
    auto axisValues = intVector(ctx, 1, 1, "the axis");
    if (!axisValues) return axisValues.status();
    const int32_t axis = (*axisValues)[0];
    if (axis < 0 || static_cast<size_t>(axis) >= in.size()) {
        return ctx.fail("axis ", axis, " out of range for rank ", in.size());
    }
    const auto strides = rowMajorStrides(in);
    std::vector<AxisOffsets> axes = identityAxes(in);
    if (in[axis] > 0) {
        axes[axis] = stridedAxis(in[axis], -strides[axis], (in[axis] - 1) * strides[axis]);
    }
    NN_RETURN_IF_ERROR(ctx.setOutputShape(0, in));
    copyMapped(ctx, 0, 0, axes);
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

Status executeSplit(ExecutionContext& ctx) {
    const std::vector<uint32_t>& in = ctx.inputShape(0);
    const int32_t axisValue = ctx.scalar<int32_t>(1);
    const int32_t numOutputs = ctx.scalar<int32_t>(2);
    const auto axis = resolveAxis(axisValue, static_cast<uint32_t>(in.size()));
    if (!axis) return ctx.fail("axis ", axisValue, " out of range for rank ", in.size());
    if (numOutputs <= 0 || static_cast<uint32_t>(numOutputs) != ctx.numOutputs() ||
        in[*axis] % numOutputs != 0) {
        return ctx.fail("cannot split dimension ", in[*axis], " into ", numOutputs, " parts");
    }
    const uint32_t slice = in[*axis] / numOutputs;
    std::vector<int64_t> begin(in.size(), 0), steps(in.size(), 1);
    std::vector<uint32_t> sizes = in;
    sizes[*axis] = slice;
    for (uint32_t j = 0; j < ctx.numOutputs(); ++j) {
        begin[*axis] = int64_t{j} * slice;
        NN_RETURN_IF_ERROR(ctx.setOutputShape(j, sizes));
        copyMapped(ctx, 0, j, boxAxes(in, begin, sizes, steps));
    }
    return okStatus();
}

Status executeChannelShuffle(ExecutionContext& ctx) {
    const std::vector<uint32_t>& in = ctx.inputShape(0);
    const int32_t groups = ctx.scalar<int32_t>(1);
    const int32_t axisValue = ctx.scalar<int32_t>(2);
    const auto axis = resolveAxis(axisValue, static_cast<uint32_t>(in.size()));
    if (!axis) return ctx.fail("axis ", axisValue, " out of range for rank ", in.size());
    if (groups <= 0 || in[*axis] % groups != 0) {
        return ctx.fail("cannot shuffle ", in[*axis], " channels in ", groups, " groups");
    }
    // Channel c = g * groupSize + i moves to i * groups + g: the axis read as [groupSize, groups].
    const AxisSizes s = axisSizes(in, *axis);
    const uint32_t groupSize = in[*axis] / groups;
    const std::vector<AxisOffsets> axes = {
        stridedAxis(s.outer, s.axis * s.inner), stridedAxis(groupSize, s.inner),
        stridedAxis(groups, int64_t{groupSize} * s.inner), stridedAxis(s.inner, 1)};
    NN_RETURN_IF_ERROR(ctx.setOutputShape(0, in));
    copyMapped(ctx, 0, 0, axes);
    return okStatus();
}

Status executeMirrorPad(ExecutionContext& ctx) {
    const std::vector<uint32_t>& in = ctx.inputShape(0);
    const int32_t mode = ctx.scalar<int32_t>(2);
    if (in.empty()) return ctx.fail("the input must have a positive rank");
    if (mode != kMirrorReflect && mode != kMirrorSymmetric) return ctx.fail("unknown mode ", mode);
    if (ctx.inputShape(1) != std::vector<uint32_t>{static_cast<uint32_t>(in.size()), 2}) {
        return ctx.fail("the paddings must have shape [", in.size(), ", 2]");
    }
    const int32_t* paddings = ctx.inputData<int32_t>(1);
    // REFLECT mirrors around the edge element, SYMMETRIC repeats it.
    const int64_t skip = mode == kMirrorReflect ? 1 : 0;
    const auto strides = rowMajorStrides(in);
    std::vector<uint32_t> out;
    std::vector<AxisOffsets> axes;
    for (size_t d = 0; d < in.size(); ++d) {
        const int32_t before = paddings[2 * d];
        const int32_t after = paddings[2 * d + 1];
        const int64_t n = in[d];
        if (before < 0 || after < 0 || before > n - skip || after > n - skip) {
            return ctx.fail("paddings ", before, ", ", after, " do not fit dimension ", d,
                            " of size ", n);
        }
        out.push_back(static_cast<uint32_t>(before + n + after));
        AxisOffsets axis(out.back());
        for (int64_t p = 0; p < out.back(); ++p) {
            const int64_t i = p - before;
            const int64_t source = i < 0 ? skip - 1 - i : i >= n ? 2 * n - 1 - skip - i : i;
            axis[p] = source * strides[d];
        }
        axes.push_back(std::move(axis));
    }
    NN_RETURN_IF_ERROR(ctx.setOutputShape(0, std::move(out)));
    copyMapped(ctx, 0, 0, axes);
    return okStatus();
}

}  // namespace nncosim::golden
