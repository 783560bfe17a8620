// Operations that select elements by position or by value: SLICE, STRIDED_SLICE, GATHER, ARGMAX,
// ARGMIN, TOPK_V2. Selections by position copy elements of the input's size whatever their type;
// selections by value compare in the input's own type (float16 as float16, quantized values as
// stored), with Android's tie rules: ARGMAX/ARGMIN keep the first extremum, TOPK_V2 orders equal
// values by descending index.
#include <algorithm>
#include <cmath>
#include <functional>
#include <utility>

#include "golden/ops/DataMovement.h"
#include "golden/ops/OpUtils.h"
#include "golden/ops/Operations.h"

namespace nncosim::golden {
namespace {

/// Calls f(T{}) with T the C++ element type of an ordered tensor type, or fails.
template <typename F>
Status dispatchOrdered(const ExecutionContext& ctx, OperandType type, F f) {
    switch (type) {
        case OperandType::TENSOR_FLOAT32:
            return f(float{});
        case OperandType::TENSOR_FLOAT16:
            return f(half{});
        case OperandType::TENSOR_INT32:
            return f(int32_t{});
        case OperandType::TENSOR_QUANT8_ASYMM:
            return f(uint8_t{});
        case OperandType::TENSOR_QUANT8_ASYMM_SIGNED:
            return f(int8_t{});
        default:
            return ctx.fail("unsupported input type ", nameOf(type));
    }
}

/// Android's index clamping for STRIDED_SLICE bounds: negative indices count from the end, and the
/// result lies in [0, dim] for a positive stride and [-1, dim - 1] for a negative one.
int32_t clampedSliceIndex(int32_t index, int32_t dim, bool positiveStride) {
    if (dim == 0) return 0;
    const auto positiveRemainder = [dim](int32_t v) { return (dim + v % dim) % dim; };
    if (positiveStride) {
        return index >= dim ? dim : positiveRemainder(std::clamp(index, -dim, dim));
    }
    return index < -dim ? -1 : positiveRemainder(std::clamp(index, -dim, dim - 1));
}

Status argMinMax(ExecutionContext& ctx, bool isMin) {
    const std::vector<uint32_t>& in = ctx.inputShape(0);
    const int32_t axisValue = ctx.scalar<int32_t>(1);
    const auto axis = resolveAxis(axisValue, static_cast<uint32_t>(in.size()));
    if (!axis) return ctx.fail("axis ", axisValue, " out of range for rank ", in.size());
    std::vector<uint32_t> out = in;
    out.erase(out.begin() + *axis);
    if (out.empty()) out.push_back(1);
    NN_RETURN_IF_ERROR(ctx.setOutputShape(0, std::move(out)));
    const AxisSizes s = axisSizes(in, *axis);
    int32_t* result = ctx.outputData<int32_t>(0);
    return dispatchOrdered(ctx, ctx.inputType(0), [&](auto tag) {
        using T = decltype(tag);
        const T* data = ctx.inputData<T>(0);
        for (size_t o = 0; o < s.outer; ++o) {
            for (size_t k = 0; k < s.inner; ++k) {
                const T* line = data + o * s.axis * s.inner + k;
                T best = line[0];
                int32_t bestIndex = 0;
                for (size_t i = 1; i < s.axis; ++i) {
                    const T v = line[i * s.inner];
                    if (isMin ? v < best : best < v) {
                        best = v;
                        bestIndex = static_cast<int32_t>(i);
                    }
                }
                result[o * s.inner + k] = bestIndex;
            }
        }
        return okStatus();
    });
}

}  // namespace

Status executeSlice(ExecutionContext& ctx) {
    const std::vector<uint32_t>& in = ctx.inputShape(0);
    const size_t rank = in.size();
    if (rank == 0) return ctx.fail("the input must have a positive rank");
    if (ctx.inputShape(1) != std::vector<uint32_t>{static_cast<uint32_t>(rank)} ||
        ctx.inputShape(2) != std::vector<uint32_t>{static_cast<uint32_t>(rank)}) {
        return ctx.fail("begin and size must be 1-D tensors of ", rank, " values");
    }
    const int32_t* beginData = ctx.inputData<int32_t>(1);
    const int32_t* sizeData = ctx.inputData<int32_t>(2);
    std::vector<int64_t> begin(rank), steps(rank, 1);
    std::vector<uint32_t> sizes(rank);
    for (size_t d = 0; d < rank; ++d) {
        const int64_t dim = in[d];
        begin[d] = beginData[d];
        const int64_t size = sizeData[d] == -1 ? dim - begin[d] : sizeData[d];
        if (begin[d] < 0 || begin[d] > dim || size < 0 || begin[d] + size > dim) {
            return ctx.fail("slice of begin ", begin[d], " and size ", sizeData[d],
                            " does not fit dimension ", d, " of size ", dim);
        }
        sizes[d] = static_cast<uint32_t>(size);
    }
    NN_RETURN_IF_ERROR(ctx.setOutputShape(0, sizes));
    copyMapped(ctx, 0, 0, boxAxes(in, begin, sizes, steps));
    return okStatus();
}

Status executeStridedSlice(ExecutionContext& ctx) {
    const std::vector<uint32_t>& in = ctx.inputShape(0);
    const size_t rank = in.size();
    if (rank > 4) return ctx.fail("input rank ", rank, " exceeds 4");
    for (uint32_t i = 1; i <= 3; ++i) {
        if (ctx.inputShape(i) != std::vector<uint32_t>{static_cast<uint32_t>(rank)}) {
            return ctx.fail("begin, end and strides must be 1-D tensors of ", rank, " values");
        }
    }
    const int32_t* beginData = ctx.inputData<int32_t>(1);
    const int32_t* endData = ctx.inputData<int32_t>(2);
    const int32_t* strideData = ctx.inputData<int32_t>(3);
    const int32_t beginMask = ctx.scalar<int32_t>(4);
    const int32_t endMask = ctx.scalar<int32_t>(5);
    const int32_t shrinkMask = ctx.scalar<int32_t>(6);

    std::vector<int64_t> begin(rank), steps(rank);
    std::vector<uint32_t> sizes(rank), outDims;
    for (size_t d = 0; d < rank; ++d) {
        const auto dim = static_cast<int32_t>(in[d]);
        const int32_t stride = strideData[d];
        if (stride == 0) return ctx.fail("stride of dimension ", d, " is zero");
        const bool positive = stride > 0;
        const int32_t first = (beginMask >> d) & 1 ? (positive ? 0 : dim - 1)
                                                   : clampedSliceIndex(beginData[d], dim, positive);
        const int32_t last = (endMask >> d) & 1 ? (positive ? dim : -1)
                                                : clampedSliceIndex(endData[d], dim, positive);
        // Android computes the count in float; it is exact for tensor-sized values.
        const auto count = static_cast<int32_t>(
            std::ceil(static_cast<float>(last - first) / static_cast<float>(stride)));
        sizes[d] = static_cast<uint32_t>(std::max(count, 0));
        begin[d] = first;
        steps[d] = stride;
        if ((shrinkMask >> d) & 1) {
            if (!positive || sizes[d] != 1) {
                return ctx.fail("shrunk dimension ", d, " must take one element, stride > 0");
            }
        } else {
            outDims.push_back(sizes[d]);
        }
    }
    if (outDims.empty()) outDims.push_back(1);
    NN_RETURN_IF_ERROR(ctx.setOutputShape(0, std::move(outDims)));
    copyMapped(ctx, 0, 0, boxAxes(in, begin, sizes, steps));
    return okStatus();
}

Status executeGather(ExecutionContext& ctx) {
    constexpr uint32_t kInput = 0, kAxis = 1, kIndices = 2;
    const std::vector<uint32_t>& in = ctx.inputShape(kInput);
    const int32_t axisValue = ctx.scalar<int32_t>(kAxis);
    const auto axis = resolveAxis(axisValue, static_cast<uint32_t>(in.size()));
    if (!axis) return ctx.fail("axis ", axisValue, " out of range for rank ", in.size());
    const std::vector<uint32_t>& indexDims = ctx.inputShape(kIndices);
    std::vector<uint32_t> out(in.begin(), in.begin() + *axis);
    out.insert(out.end(), indexDims.begin(), indexDims.end());
    out.insert(out.end(), in.begin() + *axis + 1, in.end());

    const AxisSizes s = axisSizes(in, *axis);
    const int32_t* indices = ctx.inputData<int32_t>(kIndices);
    AxisOffsets picked(ctx.inputCount(kIndices));
    for (size_t i = 0; i < picked.size(); ++i) {
        if (indices[i] < 0 || static_cast<size_t>(indices[i]) >= s.axis) {
            return ctx.fail("index ", indices[i], " outside [0, ", s.axis, ")");
        }
        picked[i] = int64_t{indices[i]} * static_cast<int64_t>(s.inner);
    }
    NN_RETURN_IF_ERROR(ctx.setOutputShape(0, std::move(out)));
    const std::vector<AxisOffsets> axes = {stridedAxis(s.outer, s.axis * s.inner),
                                           std::move(picked), stridedAxis(s.inner, 1)};
    copyMapped(ctx, kInput, 0, axes);
    return okStatus();
}

Status executeArgmax(ExecutionContext& ctx) {
    return argMinMax(ctx, /*isMin=*/false);
}

Status executeArgmin(ExecutionContext& ctx) {
    return argMinMax(ctx, /*isMin=*/true);
}

Status executeTopkV2(ExecutionContext& ctx) {
    const std::vector<uint32_t>& in = ctx.inputShape(0);
    const int32_t k = ctx.scalar<int32_t>(1);
    if (in.empty()) return ctx.fail("the input must have a positive rank");
    const uint32_t rowSize = in.back();
    if (k <= 0 || static_cast<uint32_t>(k) > rowSize) {
        return ctx.fail("k = ", k, " outside [1, ", rowSize, "]");
    }
    std::vector<uint32_t> out = in;
    out.back() = static_cast<uint32_t>(k);
    NN_RETURN_IF_ERROR(ctx.setOutputShape(0, out));
    NN_RETURN_IF_ERROR(ctx.setOutputShape(1, out));
    const size_t rows = ctx.inputCount(0) / rowSize;
    int32_t* indices = ctx.outputData<int32_t>(1);
    return dispatchOrdered(ctx, ctx.inputType(0), [&](auto tag) {
        using T = decltype(tag);
        const T* data = ctx.inputData<T>(0);
        T* values = ctx.outputData<T>(0);
        // Largest first; among equal values the larger index first, as Android's ordering of
        // (value, index) pairs gives.
        std::vector<std::pair<T, int32_t>> row(rowSize);
        for (size_t r = 0; r < rows; ++r) {
            for (uint32_t i = 0; i < rowSize; ++i) row[i] = {data[r * rowSize + i], int32_t(i)};
            std::partial_sort(row.begin(), row.begin() + k, row.end(),
                              [](const auto& a, const auto& b) { return b < a; });
            for (int32_t i = 0; i < k; ++i) {
                values[r * k + i] = row[i].first;
                indices[r * k + i] = row[i].second;
            }
        }
        return okStatus();
    });
}

}  // namespace nncosim::golden
