// Helpers shared by the reference implementations: activation ranges, float16 conversion,
// NCHW/NHWC conversion and requantization of int32 accumulators.
#pragma once

#include <algorithm>
#include <cstdint>
#include <limits>
#include <optional>
#include <type_traits>
#include <vector>

#include <Eigen/Core>

#include "golden/ExecutionContext.h"
#include "model/FixedPoint.h"
#include "model/operations/ElementMap.h"
#include "model/operations/Shapes.h"
#include "model/operations/Window.h"

namespace nncosim::golden {

template <typename T>
using RowMajorMatrix = Eigen::Matrix<T, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
template <typename T>
using ArrayX = Eigen::Array<T, Eigen::Dynamic, 1>;

/// Whether T is one of the 8-bit quantized element types.
template <typename T>
inline constexpr bool kIsQuant8 = std::is_same_v<T, uint8_t> || std::is_same_v<T, int8_t>;

/// Quantized range of output j after a fused activation, for its element type T.
template <typename T>
Result<fixedpoint::ActivationRange> quantActivationRange(const ExecutionContext& ctx, uint32_t j,
                                                         int32_t activation) {
    const auto act = static_cast<FusedActivation>(activation);
    const auto range = std::is_same_v<T, uint8_t>
                           ? fixedpoint::calculateActivationRangeUint8(act, ctx.outputScale(j),
                                                                       ctx.outputZeroPoint(j))
                           : fixedpoint::calculateActivationRangeInt8(act, ctx.outputScale(j),
                                                                      ctx.outputZeroPoint(j));
    if (!range) return ctx.fail("unsupported fused activation ", activation);
    return *range;
}

/// Input i as float32: TENSOR_FLOAT32 data is read in place, TENSOR_FLOAT16 is converted.
class FloatInput {
  public:
    FloatInput(const ExecutionContext& ctx, uint32_t i) {
        if (ctx.inputType(i) == OperandType::TENSOR_FLOAT32) {
            mData = ctx.inputData<float>(i);
        } else {
            mConverted = ctx.inputAsFloat(i);
            mData = mConverted.data();
        }
    }
    const float* data() const { return mData; }

  private:
    std::vector<float> mConverted;
    const float* mData = nullptr;
};

/// Output j written as float32; commit() converts to float16 when the output is TENSOR_FLOAT16.
/// The output's shape must be set before construction.
class FloatOutput {
  public:
    FloatOutput(ExecutionContext& ctx, uint32_t j) : mCtx(ctx), mIndex(j) {
        if (ctx.outputType(j) == OperandType::TENSOR_FLOAT32) {
            mData = ctx.outputData<float>(j);
        } else {
            mConverted.resize(ctx.outputCount(j));
            mData = mConverted.data();
        }
    }
    float* data() { return mData; }
    void commit() {
        if (!mConverted.empty()) mCtx.setOutputFromFloat(mIndex, mConverted.data());
    }

  private:
    ExecutionContext& mCtx;
    uint32_t mIndex;
    std::vector<float> mConverted;
    float* mData = nullptr;
};

/// Output 0 = f(input 0) element by element, computed in float32 for a float32 or float16 input
/// (the output's shape must be set).
template <typename F>
Status mapFloat(ExecutionContext& ctx, F f) {
    const FloatInput in(ctx, 0);
    FloatOutput out(ctx, 0);
    const size_t n = ctx.inputCount(0);
    Eigen::Map<ArrayX<float>>(out.data(), n) =
        Eigen::Map<const ArrayX<float>>(in.data(), n).unaryExpr([&f](float x) { return f(x); });
    out.commit();
    return okStatus();
}

/// The operation's inputs as the shared parameter decoders read them: every value is known.
inline OperationInputs operationInputs(const ExecutionContext& ctx) {
    OperationInputs in;
    in.count = ctx.numInputs();
    in.type = [&ctx](uint32_t i) { return ctx.inputType(i); };
    in.int32 = [&ctx](uint32_t i) -> std::optional<int32_t> { return ctx.scalar<int32_t>(i); };
    in.boolean = [&ctx](uint32_t i) -> std::optional<bool> { return ctx.scalar<bool>(i); };
    in.omitted = [&ctx](uint32_t i) { return ctx.isOmitted(i); };
    return in;
}

/// Copies an [N, C, H*W] tensor to [N, H*W, C] (or back with the two sizes swapped).
template <typename T>
void transposeInnerPlanes(const T* from, T* to, uint32_t batches, uint32_t rows, uint32_t cols) {
    const size_t plane = size_t{rows} * cols;
    for (uint32_t n = 0; n < batches; ++n) {
        Eigen::Map<RowMajorMatrix<T>>(to + n * plane, cols, rows) =
            Eigen::Map<const RowMajorMatrix<T>>(from + n * plane, rows, cols).transpose();
    }
}

/// A 4-D tensor of element T in NHWC: the data itself for NHWC, a converted copy for NCHW.
template <typename T>
class NhwcInput {
  public:
    NhwcInput(const T* data, const std::vector<uint32_t>& dims, bool nchw)
        : mDims(toNhwcShape(dims, nchw)) {
        if (!nchw) {
            mData = data;
            return;
        }
        mConverted.resize(size_t{mDims[0]} * mDims[1] * mDims[2] * mDims[3]);
        transposeInnerPlanes(data, mConverted.data(), mDims[0], mDims[3], mDims[1] * mDims[2]);
        mData = mConverted.data();
    }
    const T* data() const { return mData; }
    const std::vector<uint32_t>& dims() const { return mDims; }

  private:
    std::vector<uint32_t> mDims;
    std::vector<T> mConverted;
    const T* mData = nullptr;
};

/// An NHWC result buffer for a 4-D output stored in NHWC or NCHW; commit() writes NCHW.
template <typename T>
class NhwcOutput {
  public:
    /// `out` holds the output in its own layout (already allocated).
    NhwcOutput(T* out, const std::vector<uint32_t>& nhwcDims, bool nchw)
        : mOut(out), mDims(nhwcDims), mNchw(nchw) {
        if (!nchw) {
            mData = out;
        } else {
            mConverted.resize(size_t{mDims[0]} * mDims[1] * mDims[2] * mDims[3]);
            mData = mConverted.data();
        }
    }
    T* data() { return mData; }
    void commit() {
        if (mNchw) transposeInnerPlanes(mData, mOut, mDims[0], mDims[1] * mDims[2], mDims[3]);
    }

  private:
    T* mOut;
    std::vector<uint32_t> mDims;
    bool mNchw;
    std::vector<T> mConverted;
    T* mData = nullptr;
};

/// Runs f(in, out) with input i and output 0 as float32 NHWC buffers (float16 widened, NCHW
/// converted), then writes the output back. `outNhwcDims` is output 0's shape in NHWC, already
/// set. f returns void or a Status; an error returns before the write-back.
template <typename F>
Status runFloatNhwc(ExecutionContext& ctx, uint32_t i, const std::vector<uint32_t>& outNhwcDims,
                    bool nchw, F f) {
    const FloatInput input(ctx, i);
    const NhwcInput<float> in(input.data(), ctx.inputShape(i), nchw);
    FloatOutput output(ctx, 0);
    NhwcOutput<float> out(output.data(), outNhwcDims, nchw);
    if constexpr (std::is_void_v<std::invoke_result_t<F&, const float*, float*>>) {
        f(in.data(), out.data());
    } else {
        NN_RETURN_IF_ERROR(f(in.data(), out.data()));
    }
    out.commit();
    output.commit();
    return okStatus();
}

/// Walks a broadcast of shapes `a` and `b` to `out` (a valid broadcast) in runs along the last
/// dimension: f(outOffset, aOffset, bOffset, count, aRepeats, bRepeats), where a repeating side
/// supplies one element for the whole run. Equal shapes make a single run.
template <typename F>
void forEachBroadcastRun(const std::vector<uint32_t>& a, const std::vector<uint32_t>& b,
                         const std::vector<uint32_t>& out, F f) {
    size_t total = 1;
    for (uint32_t d : out) total *= d;
    if (total == 0) return;
    if (a == out && b == out) {
        f(size_t{0}, size_t{0}, size_t{0}, total, false, false);
        return;
    }
    const size_t rank = out.size();
    // Element strides of a and b per output dimension (0 where they broadcast).
    std::vector<size_t> strideA(rank, 0), strideB(rank, 0);
    size_t sa = 1, sb = 1;
    for (size_t i = 1; i <= rank; ++i) {
        const size_t d = rank - i;
        const uint32_t da = i <= a.size() ? a[a.size() - i] : 1;
        const uint32_t db = i <= b.size() ? b[b.size() - i] : 1;
        strideA[d] = da == 1 ? 0 : sa;
        strideB[d] = db == 1 ? 0 : sb;
        sa *= da;
        sb *= db;
    }
    const size_t inner = rank == 0 ? 1 : out[rank - 1];
    const bool repeatA = rank == 0 || strideA[rank - 1] == 0;
    const bool repeatB = rank == 0 || strideB[rank - 1] == 0;
    std::vector<uint32_t> index(rank, 0);
    for (size_t o = 0; o < total; o += inner) {
        size_t offA = 0, offB = 0;
        for (size_t d = 0; d + 1 < rank; ++d) {
            offA += index[d] * strideA[d];
            offB += index[d] * strideB[d];
        }
        f(o, offA, offB, inner, repeatA, repeatB);
        for (size_t d = rank - 1; d-- > 0;) {  // next index over the outer dimensions
            if (++index[d] < out[d]) break;
            index[d] = 0;
        }
    }
}

/// out = op(a, b) elementwise with broadcasting; op maps two T to one Out.
template <typename T, typename Out, typename Op>
void broadcastBinary(const T* a, const std::vector<uint32_t>& aDims, const T* b,
                     const std::vector<uint32_t>& bDims, Out* out,
                     const std::vector<uint32_t>& outDims, Op op) {
    forEachBroadcastRun(aDims, bDims, outDims,
                        [&](size_t o, size_t ai, size_t bi, size_t n, bool aRep, bool bRep) {
                            Eigen::Map<ArrayX<Out>> dst(out + o, n);
                            if (aRep && bRep) {
                                dst.setConstant(op(a[ai], b[bi]));
                            } else if (aRep) {
                                dst = ArrayX<T>::Constant(n, a[ai]).binaryExpr(
                                    Eigen::Map<const ArrayX<T>>(b + bi, n), op);
                            } else if (bRep) {
                                dst = Eigen::Map<const ArrayX<T>>(a + ai, n).binaryExpr(
                                    ArrayX<T>::Constant(n, b[bi]), op);
                            } else {
                                dst = Eigen::Map<const ArrayX<T>>(a + ai, n).binaryExpr(
                                    Eigen::Map<const ArrayX<T>>(b + bi, n), op);
                            }
                        });
}

/// An exact integer held in a double (|x| < 2^53) as int32 arithmetic holds it (modulo 2^32).
/// Integer matrix products run in double for speed; this brings their sums back.
inline int32_t wrapToInt32(double exactInteger) {
    return static_cast<int32_t>(static_cast<uint32_t>(static_cast<int64_t>(exactInteger)));
}

/// Values of a quantized tensor minus its zero point, as int32 (what accumulations multiply).
template <typename T>
ArrayX<int32_t> centered(const T* data, size_t count, int32_t zeroPoint) {
    return Eigen::Map<const ArrayX<T>>(data, count).template cast<int32_t>() - zeroPoint;
}

/// Per-output-channel requantization of int32 accumulators laid out [rows, channels]:
/// accumulator + bias, scaled by the channel's multiplier, plus the zero point, clamped.
template <typename T>
void requantizeRows(const int32_t* acc, size_t rows, uint32_t channels, const int32_t* bias,
                    const std::vector<fixedpoint::QuantizedMultiplier>& multipliers,
                    int32_t zeroPoint, fixedpoint::ActivationRange range, T* out) {
    for (size_t r = 0; r < rows; ++r) {
        for (uint32_t c = 0; c < channels; ++c) {
            const auto& m = multipliers.size() == 1 ? multipliers[0] : multipliers[c];
            out[r * channels + c] = static_cast<T>(fixedpoint::requantize(
                acc[r * channels + c], bias ? bias[c] : 0, m, zeroPoint, range));
        }
    }
}

/// Android's CPU executor fails an operation given a zero-sized input unless the operation is
/// registered as accepting one; those that are not call this first.
inline Status requireNoZeroSizedInput(const ExecutionContext& ctx) {
    for (uint32_t i = 0; i < ctx.numInputs(); ++i) {
        if (ctx.isOmitted(i)) continue;
        for (uint32_t d : ctx.inputShape(i)) {
            if (d == 0) return ctx.fail("input ", i, " is zero-sized");
        }
    }
    return okStatus();
}

/// An axis operand in [-rank, rank) made non-negative; nullopt when out of range.
inline std::optional<uint32_t> resolveAxis(int32_t axis, uint32_t rank) {
    const int32_t r = static_cast<int32_t>(rank);
    if (axis < -r || axis >= r) return std::nullopt;
    return static_cast<uint32_t>(axis < 0 ? axis + r : axis);
}

/// Calls f(x, y) for each vector along the axis of an [outer, axis, inner] float tensor: x reads
/// `in` and y writes `out` at the same positions, both strided maps.
template <typename F>
void forEachAxisVector(const float* in, float* out, const AxisSizes& s, F f) {
    using Strided = Eigen::Map<const ArrayX<float>, 0, Eigen::InnerStride<>>;
    using StridedOut = Eigen::Map<ArrayX<float>, 0, Eigen::InnerStride<>>;
    for (size_t o = 0; o < s.outer; ++o) {
        for (size_t i = 0; i < s.inner; ++i) {
            const size_t base = o * s.axis * s.inner + i;
            const Strided x(in + base, s.axis, Eigen::InnerStride<>(s.inner));
            StridedOut y(out + base, s.axis, Eigen::InnerStride<>(s.inner));
            f(x, y);
        }
    }
}

// Android's quantization of real values, shared with the driver's lookup tables.
using fixedpoint::dequantizeValue;
using fixedpoint::quantizeValue;

}  // namespace nncosim::golden
