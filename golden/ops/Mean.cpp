// MEAN over a set of axes. As in Android (TFLite's reference Mean), elements are summed in
// row-major input order in float32 (float16 widened) or int32 (quantized, without rescaling:
// the output shares the input's quantization) and divided by the element count, the integer
// division truncating.
#include "golden/ops/DataMovement.h"
#include "golden/ops/OpUtils.h"
#include "golden/ops/Operations.h"

namespace nncosim::golden {
namespace {

// Sums every input element into its output element; `outStride` maps each input axis to the
// output (0 for reduced axes).
template <typename In, typename Acc>
void sumInto(const In* in, const std::vector<uint32_t>& dims, const std::vector<int64_t>& outStride,
             Acc* sums) {
    const size_t rank = dims.size();
    size_t total = 1;
    for (uint32_t d : dims) total *= d;
    std::vector<uint32_t> index(rank, 0);
    int64_t outOffset = 0;
    for (size_t i = 0; i < total; ++i) {
        sums[outOffset] += static_cast<Acc>(in[i]);
        for (size_t d = rank; d-- > 0;) {  // next row-major index
            outOffset += outStride[d];
            if (++index[d] < dims[d]) break;
            outOffset -= outStride[d] * dims[d];
            index[d] = 0;
        }
    }
}

}  // namespace

Status executeMean(ExecutionContext& ctx) {
    const std::vector<uint32_t>& in = ctx.inputShape(0);
    const auto rank = static_cast<uint32_t>(in.size());
    if (ctx.inputRank(1) != 1) return ctx.fail("the axes must be a 1-D tensor");
    std::vector<bool> reduced(rank, false);
    const int32_t* axes = ctx.inputData<int32_t>(1);
    for (size_t k = 0; k < ctx.inputCount(1); ++k) {
        const auto axis = resolveAxis(axes[k], rank);
        if (!axis) return ctx.fail("axis ", axes[k], " out of range for rank ", rank);
        reduced[*axis] = true;
    }
    const bool keepDims = ctx.scalar<int32_t>(2) > 0;
    std::vector<uint32_t> out, kept;
    size_t count = 1;
    for (uint32_t d = 0; d < rank; ++d) {
        if (reduced[d]) {
            count *= in[d];
            if (keepDims) out.push_back(1);
            kept.push_back(1);
        } else {
            out.push_back(in[d]);
            kept.push_back(in[d]);
        }
    }
    if (out.empty()) out.push_back(1);  // every axis reduced without keepDims: one element
    // Output strides in the input's axes: those of the kept shape, 0 along reduced axes.
    std::vector<int64_t> outStride = rowMajorStrides(kept);
    for (uint32_t d = 0; d < rank; ++d) {
        if (reduced[d]) outStride[d] = 0;
    }
    NN_RETURN_IF_ERROR(ctx.setOutputShape(0, std::move(out)));
    const size_t outCount = ctx.outputCount(0);
    if (outCount == 0 || count == 0) return okStatus();

    switch (ctx.inputType(0)) {
        case OperandType::TENSOR_FLOAT32:
        case OperandType::TENSOR_FLOAT16: {
            const FloatInput input(ctx, 0);
            FloatOutput output(ctx, 0);
            float* sums = output.data();
            std::fill(sums, sums + outCount, 0.0f);
            sumInto(input.data(), in, outStride, sums);
            Eigen::Map<ArrayX<float>>(sums, outCount) /= static_cast<float>(count);
            output.commit();
            return okStatus();
        }
        case OperandType::TENSOR_QUANT8_ASYMM:
        case OperandType::TENSOR_QUANT8_ASYMM_SIGNED: {
            std::vector<int32_t> sums(outCount, 0);
            if (ctx.inputType(0) == OperandType::TENSOR_QUANT8_ASYMM) {
                sumInto(ctx.inputData<uint8_t>(0), in, outStride, sums.data());
            } else {
                sumInto(ctx.inputData<int8_t>(0), in, outStride, sums.data());
            }
            const auto divisor = static_cast<int32_t>(count);
            for (size_t i = 0; i < outCount; ++i) {
                const int32_t mean = sums[i] / divisor;
                ctx.outputBytes(0)[i] = static_cast<uint8_t>(mean);
            }
            return okStatus();
        }
        default:
            return ctx.fail("unsupported input type ", nameOf(ctx.inputType(0)));
    }
}

}  // namespace nncosim::golden
