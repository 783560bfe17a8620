// Helpers shared by the recurrent layers (Lstm.cpp, Rnn.cpp): float32 views of float32/float16
// inputs, the activation codes of the recurrent layers, and time-major/batch-major sequences.
#pragma once

#include <algorithm>
#include <initializer_list>
#include <map>
#include <vector>

#include "golden/ops/OpUtils.h"

namespace nncosim::golden {

using ArrayRM = Eigen::Array<float, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
using ConstMatrixMap = Eigen::Map<const RowMajorMatrix<float>>;

/// Float32 views of the float32 or float16 inputs of one operation; omitted inputs are null.
class FloatTensors {
  public:
    explicit FloatTensors(const ExecutionContext& ctx) : mCtx(ctx) {}
    const float* get(uint32_t i) {
        if (mCtx.isOmitted(i)) return nullptr;
        return mInputs.try_emplace(i, mCtx, i).first->second.data();
    }

  private:
    const ExecutionContext& mCtx;
    std::map<uint32_t, FloatInput> mInputs;
};

/// TFLite's ApplyActivationToVector / Android's ActivationFunctor: 0 none, 1 relu, 2 relu1,
/// 3 relu6, 4 tanh, 6 sigmoid.
inline void applyActivation(ArrayRM& x, int32_t activation) {
    switch (activation) {
        case 1:
            x = x.max(0.0f);
            break;
        case 2:
            x = x.max(-1.0f).min(1.0f);
            break;
        case 3:
            x = x.max(0.0f).min(6.0f);
            break;
        case 4:
            x = x.tanh();
            break;
        case 6:
            x = 1.0f / (1.0f + (-x).exp());
            break;
        default:
            break;
    }
}

inline Eigen::Map<const Eigen::Array<float, 1, Eigen::Dynamic>> rowVector(const float* v,
                                                                          uint32_t n) {
    return Eigen::Map<const Eigen::Array<float, 1, Eigen::Dynamic>>(v, n);
}

/// Fails when one of `inputs` is omitted (these operations accept omitted optional inputs, so the
/// executor lets every omission through to them).
inline Status expectPresent(const ExecutionContext& ctx, std::initializer_list<uint32_t> inputs) {
    for (uint32_t i : inputs) {
        if (ctx.isOmitted(i)) return ctx.fail("required input ", i, " is omitted");
    }
    return okStatus();
}

inline Status expectShape(const ExecutionContext& ctx, uint32_t i,
                          const std::vector<uint32_t>& dims) {
    if (ctx.isOmitted(i) || ctx.inputShape(i) == dims) return okStatus();
    return ctx.fail("input ", i, " has shape ", toString(ctx.inputShape(i)), ", expected ",
                    toString(dims));
}

/// Copies [d0, d1, inner] to [d1, d0, inner] (time-major <-> batch-major).
inline std::vector<float> swapFirstTwoDims(const float* in, uint32_t d0, uint32_t d1,
                                           uint32_t inner) {
    std::vector<float> out(size_t{d0} * d1 * inner);
    for (uint32_t i = 0; i < d0; ++i) {
        for (uint32_t j = 0; j < d1; ++j) {
            std::copy_n(in + (size_t{i} * d1 + j) * inner, inner,
                        out.data() + (size_t{j} * d0 + i) * inner);
        }
    }
    return out;
}

/// Dimensions of a sequence: [maxTime, batches, size] time-major, [batches, maxTime, size] not.
struct SequenceShape {
    uint32_t maxTime = 0, batches = 0, size = 0;

    std::vector<uint32_t> dims(uint32_t lastSize, bool timeMajor) const {
        return timeMajor ? std::vector<uint32_t>{maxTime, batches, lastSize}
                         : std::vector<uint32_t>{batches, maxTime, lastSize};
    }
};

inline Result<SequenceShape> sequenceShape(const ExecutionContext& ctx, uint32_t i,
                                           bool timeMajor) {
    if (ctx.isOmitted(i) || ctx.inputRank(i) != 3) {
        return ctx.fail("input ", i, " must be a sequence of rank 3");
    }
    const auto& d = ctx.inputShape(i);
    return timeMajor ? SequenceShape{d[0], d[1], d[2]} : SequenceShape{d[1], d[0], d[2]};
}

/// Input i, a sequence of shape `s`, as time-major float32.
inline std::vector<float> timeMajorInput(FloatTensors& tensors, uint32_t i, const SequenceShape& s,
                                         bool timeMajor) {
    const float* data = tensors.get(i);
    if (timeMajor) return std::vector<float>(data, data + size_t{s.maxTime} * s.batches * s.size);
    return swapFirstTwoDims(data, s.batches, s.maxTime, s.size);
}

/// Sets output j's shape and writes `values` (row-major float32).
inline Status writeFloatOutput(ExecutionContext& ctx, uint32_t j, std::vector<uint32_t> dims,
                               const float* values) {
    NN_RETURN_IF_ERROR(ctx.setOutputShape(j, std::move(dims)));
    FloatOutput out(ctx, j);
    std::copy_n(values, ctx.outputCount(j), out.data());
    out.commit();
    return okStatus();
}

/// Sets output j to a sequence of shape `s` with last dimension `size`, from time-major values.
inline Status writeSequenceOutput(ExecutionContext& ctx, uint32_t j, const SequenceShape& s,
                                  uint32_t size, bool timeMajor, const std::vector<float>& values) {
    if (timeMajor) return writeFloatOutput(ctx, j, s.dims(size, true), values.data());
    return writeFloatOutput(ctx, j, s.dims(size, false),
                            swapFirstTwoDims(values.data(), s.maxTime, s.batches, size).data());
}

}  // namespace nncosim::golden
