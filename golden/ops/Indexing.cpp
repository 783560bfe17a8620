// Operations that select elements by value: ARGMAX, ARGMIN, TOPK_V2 (selections by position,
// SLICE, STRIDED_SLICE and GATHER, are element maps: DataMovement.cpp). Selections by value compare
// in the input's own type (float16 as float16, quantized values as stored), with Android's tie
// rules: ARGMAX/ARGMIN keep the first extremum, TOPK_V2 orders equal values by descending index.
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
