// REDUCE_ALL, REDUCE_ANY, REDUCE_MAX, REDUCE_MIN, REDUCE_PROD, REDUCE_SUM over a set of axes.
//
// Android folds every input element, in row-major input order, into its output element starting
// from the operation's identity, in the input's own type: float16 sums and products round to
// float16 at each step. The same order is kept here (the reduced axes are moved innermost without
// changing their relative order, then each run is folded from the front), so float results match
// Android's bit for bit. PROD treats a zero factor as absorbing, so 0 * inf gives 0 as in Android.
#include <limits>
#include <numeric>

#include "golden/ops/DataMovement.h"
#include "golden/ops/OpUtils.h"
#include "golden/ops/Operations.h"
#include "model/operations/Shapes.h"

namespace nncosim::golden {
namespace {

enum class Reduction { kAll, kAny, kMax, kMin, kProd, kSum };

/// The binary step of a reduction and its identity for element type T.
template <typename T>
struct Reducer {
    static T identity(Reduction r) {
        switch (r) {
            case Reduction::kAll:
            case Reduction::kProd:
                return T(1);
            case Reduction::kMax:
                return std::numeric_limits<T>::lowest();
            case Reduction::kMin:
                return std::numeric_limits<T>::max();
            default:
                return T(0);
        }
    }
    static T step(Reduction r, T a, T b) {
        switch (r) {
            case Reduction::kAll:
                return T(a && b);
            case Reduction::kAny:
                return T(a || b);
            case Reduction::kMax:
                return std::max(a, b);
            case Reduction::kMin:
                return std::min(a, b);
            case Reduction::kProd:
                return a == T(0) || b == T(0) ? T(0) : T(a * b);
            case Reduction::kSum:
                return T(a + b);
        }
        return a;
    }
};

template <typename T>
void foldRuns(const T* data, size_t runs, size_t runLength, Reduction r, T* out) {
    for (size_t i = 0; i < runs; ++i) {
        out[i] = std::accumulate(data + i * runLength, data + (i + 1) * runLength,
                                 Reducer<T>::identity(r),
                                 [r](T a, T b) { return Reducer<T>::step(r, a, b); });
    }
}

Status reduce(ExecutionContext& ctx, Reduction r) {
    constexpr uint32_t kInput = 0, kAxes = 1, kKeepDims = 2;
    const std::vector<uint32_t>& in = ctx.inputShape(kInput);
    const auto rank = static_cast<uint32_t>(in.size());
    if (rank > 4) return ctx.fail("input rank ", rank, " exceeds 4");
    if (ctx.inputRank(kAxes) != 1) return ctx.fail("the axes must be a 1-D tensor");
    const int32_t* axesData = ctx.inputData<int32_t>(kAxes);
    auto axes = reducedAxes(rank, std::vector<int32_t>(axesData, axesData + ctx.inputCount(kAxes)));
    if (!axes) return ctx.fail(axes.status().message);
    const std::vector<bool>& reduced = *axes;
    std::vector<uint32_t> out = reductionShape(in, reduced, ctx.scalar<bool>(kKeepDims));
    NN_RETURN_IF_ERROR(ctx.setOutputShape(0, std::move(out)));

    // Kept axes outermost, reduced axes innermost, each group in its original order.
    const auto strides = rowMajorStrides(in);
    std::vector<AxisOffsets> ordered;
    size_t runLength = 1;
    for (int pass = 0; pass < 2; ++pass) {
        for (uint32_t d = 0; d < rank; ++d) {
            if (reduced[d] != (pass == 1)) continue;
            ordered.push_back(stridedAxis(in[d], strides[d]));
            if (pass == 1) runLength *= in[d];
        }
    }
    const size_t count = ctx.inputCount(kInput);
    const uint32_t bytes = elementSize(ctx.inputType(kInput));
    std::vector<uint8_t> elements(count * bytes);
    if (count > 0) copyMapped(ctx.inputBytes(kInput), elements.data(), bytes, ordered);
    const size_t runs = ctx.outputCount(0);

    switch (ctx.inputType(kInput)) {
        case OperandType::TENSOR_FLOAT32:
            foldRuns(reinterpret_cast<const float*>(elements.data()), runs, runLength, r,
                     ctx.outputData<float>(0));
            break;
        case OperandType::TENSOR_FLOAT16:
            foldRuns(reinterpret_cast<const half*>(elements.data()), runs, runLength, r,
                     ctx.outputData<half>(0));
            break;
        case OperandType::TENSOR_QUANT8_ASYMM:
        case OperandType::TENSOR_BOOL8:
            foldRuns(elements.data(), runs, runLength, r, ctx.outputData<uint8_t>(0));
            break;
        case OperandType::TENSOR_QUANT8_ASYMM_SIGNED:
            foldRuns(reinterpret_cast<const int8_t*>(elements.data()), runs, runLength, r,
                     ctx.outputData<int8_t>(0));
            break;
        default:
            return ctx.fail("unsupported input type ", nameOf(ctx.inputType(kInput)));
    }
    return okStatus();
}

}  // namespace

Status executeReduceAll(ExecutionContext& ctx) {
    return reduce(ctx, Reduction::kAll);
}

Status executeReduceAny(ExecutionContext& ctx) {
    return reduce(ctx, Reduction::kAny);
}

Status executeReduceMax(ExecutionContext& ctx) {
    return reduce(ctx, Reduction::kMax);
}

Status executeReduceMin(ExecutionContext& ctx) {
    return reduce(ctx, Reduction::kMin);
}

Status executeReduceProd(ExecutionContext& ctx) {
    return reduce(ctx, Reduction::kProd);
}

Status executeReduceSum(ExecutionContext& ctx) {
    return reduce(ctx, Reduction::kSum);
}

}  // namespace nncosim::golden
