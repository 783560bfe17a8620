// The quantized LSTM cells, bit-exact with Android:
//  - QUANTIZED_LSTM: TFLite's integer 8x8->16 LSTM (int8 activations and weights, int16 gates and
//    cell state, optional CIFG, peephole, projection and layer normalization);
//  - QUANTIZED_16BIT_LSTM: TFLite's older 8-bit LSTM cell with a 16-bit cell state of 4 integer
//    bits and gemmlowp's 16-bit logistic and tanh.
#include <array>
#include <cmath>

#include "golden/ops/OpUtils.h"
#include "golden/ops/Operations.h"

namespace nncosim::golden {
namespace {

using fixedpoint::FixedPoint;
using fixedpoint::QuantizedMultiplier;
using Int32Matrix = RowMajorMatrix<int32_t>;

int32_t scaleBy(int32_t x, QuantizedMultiplier m) {
    return fixedpoint::multiplyByQuantizedMultiplier(x, m.multiplier, m.shift);
}

int16_t clampInt16(int32_t x) {
    return static_cast<int16_t>(std::clamp<int32_t>(x, -32768, 32767));
}

/// x as int32, [rows, cols].
template <typename T>
Int32Matrix widen(const T* x, uint32_t rows, uint32_t cols) {
    return Eigen::Map<const RowMajorMatrix<T>>(x, rows, cols).template cast<int32_t>();
}

/// tanh of Q(integerBits).(15 - integerBits) values to Q0.15, for the integer bits at run time.
template <int IntegerBits>
int16_t tanhInt16(int16_t raw) {
    return fixedpoint::tanh(FixedPoint<int16_t, IntegerBits>::fromRaw(raw)).raw();
}

int16_t (*tanhForIntegerBits(int bits))(int16_t) {
    constexpr std::array<int16_t (*)(int16_t), 7> kTanh = {
        &tanhInt16<0>, &tanhInt16<1>, &tanhInt16<2>, &tanhInt16<3>,
        &tanhInt16<4>, &tanhInt16<5>, &tanhInt16<6>};
    return bits >= 0 && bits < 7 ? kTanh[bits] : nullptr;
}

int16_t sigmoidInt16(int16_t raw) {
    return fixedpoint::logistic(FixedPoint<int16_t, 3>::fromRaw(raw)).raw();
}

// ---- QUANTIZED_LSTM ---------------------------------------------------------------------------

enum Gate { kInputGate = 0, kForgetGate = 1, kCellGate = 2, kOutputGate = 3 };

// Input indexes (per gate: input, forget, cell, output; the cell gate has no peephole).
constexpr uint32_t kInput = 0;
constexpr std::array<uint32_t, 4> kInputWeights = {1, 2, 3, 4};
constexpr std::array<uint32_t, 4> kRecurrentWeights = {5, 6, 7, 8};
constexpr std::array<uint32_t, 4> kPeephole = {9, 10, UINT32_MAX, 11};
constexpr std::array<uint32_t, 4> kBias = {12, 13, 14, 15};
constexpr uint32_t kProjectionWeights = 16, kProjectionBias = 17;
constexpr uint32_t kPrevOutput = 18, kPrevCellState = 19;
constexpr std::array<uint32_t, 4> kLayerNorm = {20, 21, 22, 23};
constexpr uint32_t kCellClip = 24, kProjectionClip = 25;
constexpr std::array<uint32_t, 4> kIntermediateScale = {26, 27, 28, 29};
constexpr uint32_t kHiddenZeroPoint = 30, kHiddenScale = 31;

/// TFLite's integer MatrixBatchVectorMultiplyAccumulate: each output element becomes
/// clamp(scale(bias + x . w) + zeroPoint + previous value) for the range of the output type.
template <typename T>
void accumulateProduct(const Int32Matrix& x, const int8_t* weights, uint32_t rows,
                       const Eigen::VectorXi& bias, QuantizedMultiplier m, int32_t zeroPoint,
                       Eigen::Array<T, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>& out) {
    const Int32Matrix acc = x * widen(weights, rows, static_cast<uint32_t>(x.cols())).transpose();
    for (Eigen::Index b = 0; b < acc.rows(); ++b) {
        for (Eigen::Index r = 0; r < acc.cols(); ++r) {
            const int32_t v =
                scaleBy(fixedpoint::wrappingAdd(bias[r], acc(b, r)), m) + zeroPoint + out(b, r);
            out(b, r) = static_cast<T>(std::clamp<int32_t>(v, std::numeric_limits<T>::min(),
                                                           std::numeric_limits<T>::max()));
        }
    }
}

using Int16Array = Eigen::Array<int16_t, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
using Int8Array = Eigen::Array<int8_t, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;

/// zeroPoint * (row sums of the weights) + bias: the zero-point correction folded into a bias
/// (Android's PrecomputeZeroPointTimesWeightWithBias).
Eigen::VectorXi zeroPointBias(int32_t zeroPoint, const int8_t* weights, uint32_t rows,
                              uint32_t cols, const int32_t* bias) {
    Eigen::VectorXi out = zeroPoint * widen(weights, rows, cols).rowwise().sum();
    if (bias != nullptr) out += Eigen::Map<const Eigen::VectorXi>(bias, rows);
    return out;
}

/// Android's integer layer normalization of each row of `x`, with weights, the gate bias and the
/// layer-normalization scale; `varianceLimit` replaces variances below 1.
void layerNormalize(Int16Array& x, const int16_t* weights, const int32_t* bias,
                    QuantizedMultiplier scale, int32_t varianceLimit) {
    constexpr int32_t kOverflowGuard = 1 << 20;
    const auto n = static_cast<int32_t>(x.cols());
    for (Eigen::Index b = 0; b < x.rows(); ++b) {
        const auto row = x.row(b).cast<int64_t>();
        const int64_t sum = row.sum();
        const int64_t sumSquares = row.square().sum();
        const auto mean = static_cast<int32_t>(sum * 1024 / n);
        const int64_t variance =
            sumSquares * (kOverflowGuard / n) - static_cast<int64_t>(mean) * mean;
        auto variance32 = static_cast<int32_t>(variance / kOverflowGuard);
        if (variance32 < 1) variance32 = varianceLimit;
        const QuantizedMultiplier inverseStddev = fixedpoint::inverseSqrtMultiplier(variance32);
        for (int32_t j = 0; j < n; ++j) {
            const int32_t rescaled = scaleBy(1024 * x(b, j) - mean, inverseStddev);
            // Android multiplies and adds in int32, wrapping on overflow.
            const int64_t weighted = fixedpoint::wrappingAdd(
                static_cast<int32_t>(static_cast<uint32_t>(rescaled) *
                                     static_cast<uint32_t>(int32_t{weights[j]})),
                bias[j]);
            const auto rounded =
                static_cast<int32_t>((weighted > 0 ? weighted + 512 : weighted - 512) / 1024);
            x(b, j) = clampInt16(fixedpoint::multiplyByQuantizedMultiplier(
                rounded, scale.multiplier, scale.shift + 12));
        }
    }
}

/// Multiplier of a real scale computed (as Android does) in float.
Result<QuantizedMultiplier> multiplierOf(const ExecutionContext& ctx, float real) {
    auto m = fixedpoint::quantizeMultiplier(real);
    if (!m) return ctx.fail("cannot quantize the multiplier ", real);
    return *m;
}

}  // namespace

Status executeQuantizedLstm(ExecutionContext& ctx) {
    const auto has = [&](uint32_t i) { return !ctx.isOmitted(i); };
    for (uint32_t i = kCellClip; i <= kHiddenScale; ++i) {
        if (!has(i)) return ctx.fail("required input ", i, " is omitted");
    }
    if (ctx.inputRank(kInput) != 2 || !has(kInputWeights[kOutputGate]) ||
        !has(kRecurrentWeights[kOutputGate])) {
        return ctx.fail("the input must be 2-D and the output-gate weights present");
    }
    const uint32_t batches = ctx.inputDim(kInput, 0);
    const uint32_t inputSize = ctx.inputDim(kInput, 1);
    const uint32_t units = ctx.inputDim(kInputWeights[kOutputGate], 0);
    const uint32_t outputSize = ctx.inputDim(kRecurrentWeights[kOutputGate], 1);
    const bool cifg = !has(kInputWeights[kInputGate]);
    const bool layerNorm = has(kLayerNorm[kForgetGate]);
    const bool projection = has(kProjectionWeights);
    const auto shapeIs = [&](uint32_t i, std::vector<uint32_t> dims) {
        return !has(i) || ctx.inputShape(i) == dims;
    };
    bool shapesOk =
        shapeIs(kPrevOutput, {batches, outputSize}) && shapeIs(kPrevCellState, {batches, units}) &&
        shapeIs(kProjectionWeights, {outputSize, units}) &&
        shapeIs(kProjectionBias, {outputSize}) && (projection || outputSize == units) &&
        has(kPrevOutput) && has(kPrevCellState) && has(kRecurrentWeights[kInputGate]) == !cifg &&
        has(kBias[kInputGate]) == !cifg && has(kLayerNorm[kInputGate]) == (layerNorm && !cifg) &&
        has(kPeephole[kForgetGate]) == has(kPeephole[kOutputGate]) &&
        (cifg || has(kPeephole[kInputGate]) == has(kPeephole[kOutputGate]));
    for (int g = kInputGate; g <= kOutputGate; ++g) {
        if (g == kInputGate && cifg) continue;
        shapesOk =
            shapesOk && has(kInputWeights[g]) && has(kRecurrentWeights[g]) && has(kBias[g]) &&
            has(kLayerNorm[g]) == layerNorm && shapeIs(kInputWeights[g], {units, inputSize}) &&
            shapeIs(kRecurrentWeights[g], {units, outputSize}) && shapeIs(kBias[g], {units}) &&
            shapeIs(kLayerNorm[g], {units}) && (g == kCellGate || shapeIs(kPeephole[g], {units}));
    }
    if (!shapesOk) return ctx.fail("inconsistent tensor shapes or optional tensors");

    const float inputScale = ctx.inputScale(kInput);
    const float prevOutputScale = ctx.inputScale(kPrevOutput);
    const int32_t inputZeroPoint = ctx.inputZeroPoint(kInput);
    const int32_t prevOutputZeroPoint = ctx.inputZeroPoint(kPrevOutput);
    const float hiddenScale = ctx.scalar<float>(kHiddenScale);
    const int32_t hiddenZeroPoint = ctx.scalar<int32_t>(kHiddenZeroPoint);
    const auto cellShift = fixedpoint::checkedLog2(ctx.inputScale(kPrevCellState));
    if (!cellShift || *cellShift > -9 || *cellShift < -15) {
        return ctx.fail("the cell state scale must be 2^n with -15 <= n <= -9, got ",
                        ctx.inputScale(kPrevCellState));
    }
    const auto tanhOfCell = tanhForIntegerBits(*cellShift + 15);

    // Per gate: multipliers of the input and recurrent products into the gate's intermediate
    // scale, of the peephole product, and of layer normalization; zero-point corrections.
    std::array<QuantizedMultiplier, 4> inputMul{}, recurrentMul{}, peepholeMul{}, layerNormMul{};
    std::array<Eigen::VectorXi, 4> inputBias, recurrentBias;
    std::array<int32_t, 4> varianceLimit{};
    for (int g = kInputGate; g <= kOutputGate; ++g) {
        if (g == kInputGate && cifg) continue;
        const float intermediate = ctx.scalar<float>(kIntermediateScale[g]);
        auto in = multiplierOf(ctx, ctx.inputScale(kInputWeights[g]) * inputScale / intermediate);
        auto rec = multiplierOf(
            ctx, ctx.inputScale(kRecurrentWeights[g]) * prevOutputScale / intermediate);
        if (!in) return in.status();
        if (!rec) return rec.status();
        inputMul[g] = *in;
        recurrentMul[g] = *rec;
        if (g != kCellGate && has(kPeephole[g])) {
            auto p =
                multiplierOf(ctx, static_cast<float>(std::pow(2.0, *cellShift) *
                                                     ctx.inputScale(kPeephole[g]) / intermediate));
            if (!p) return p.status();
            peepholeMul[g] = *p;
        }
        if (layerNorm) {
            auto ln = multiplierOf(ctx, ctx.inputScale(kLayerNorm[g]));
            if (!ln) return ln.status();
            layerNormMul[g] = *ln;
        }
        // Android's guard: 0 or 1 depending on the layer-normalization scale.
        varianceLimit[g] = std::min(1, static_cast<int32_t>(10000 * ctx.inputScale(kLayerNorm[g])));
        inputBias[g] = zeroPointBias(-inputZeroPoint, ctx.inputData<int8_t>(kInputWeights[g]),
                                     units, inputSize, nullptr);
        recurrentBias[g] =
            zeroPointBias(-prevOutputZeroPoint, ctx.inputData<int8_t>(kRecurrentWeights[g]), units,
                          outputSize, nullptr);
    }
    auto hiddenMul = multiplierOf(
        ctx, static_cast<float>(std::pow(2.0, -15) / hiddenScale * std::pow(2.0, -15)));
    if (!hiddenMul) return hiddenMul.status();

    const Int32Matrix input = widen(ctx.inputData<int8_t>(kInput), batches, inputSize);
    const Int32Matrix prevOutput = widen(ctx.inputData<int8_t>(kPrevOutput), batches, outputSize);
    const Eigen::Map<const Int16Array> prevCell(ctx.inputData<int16_t>(kPrevCellState), batches,
                                                units);

    // Adds peephole * cell (rescaled) to a gate, saturating.
    const auto addPeephole = [&](Int16Array& gate, int g, const Int16Array& cell) {
        if (g == kCellGate || !has(kPeephole[g])) return;
        const int16_t* w = ctx.inputData<int16_t>(kPeephole[g]);
        for (uint32_t b = 0; b < batches; ++b) {
            for (uint32_t u = 0; u < units; ++u) {
                gate(b, u) =
                    clampInt16(scaleBy(int32_t{w[u]} * cell(b, u), peepholeMul[g]) + gate(b, u));
            }
        }
    };
    // The pre-activation of gate g in its intermediate scale, normalized when layerNorm.
    const auto gatePreActivation = [&](int g, const Int16Array* peepholeCell) {
        Int16Array gate = Int16Array::Zero(batches, units);
        accumulateProduct(input, ctx.inputData<int8_t>(kInputWeights[g]), units, inputBias[g],
                          inputMul[g], 0, gate);
        accumulateProduct(prevOutput, ctx.inputData<int8_t>(kRecurrentWeights[g]), units,
                          recurrentBias[g], recurrentMul[g], 0, gate);
        // The peephole reads the previous cell state for the input and forget gates and the new
        // one for the output gate, as TFLite does.
        if (peepholeCell != nullptr) addPeephole(gate, g, *peepholeCell);
        // Without layer normalization the gate biases are unused, as in TFLite.
        if (layerNorm) {
            layerNormalize(gate, ctx.inputData<int16_t>(kLayerNorm[g]),
                           ctx.inputData<int32_t>(kBias[g]), layerNormMul[g], varianceLimit[g]);
        }
        return gate;
    };

    const Int16Array prevCellCopy = prevCell;
    Int16Array forget = gatePreActivation(kForgetGate, &prevCellCopy).unaryExpr(&sigmoidInt16);
    Int16Array cellGate = gatePreActivation(kCellGate, nullptr).unaryExpr(&tanhInt16<3>);
    Int16Array inputGate =
        cifg ? Int16Array(int16_t{32767} - forget)
             : Int16Array(gatePreActivation(kInputGate, &prevCellCopy).unaryExpr(&sigmoidInt16));

    // New cell state: forget * previous (Q0.15 products) + input * cell gate in the cell scale.
    Int16Array cell(batches, units);
    const int cellProductShift = 30 + *cellShift;
    for (uint32_t b = 0; b < batches; ++b) {
        for (uint32_t u = 0; u < units; ++u) {
            const auto kept = static_cast<int16_t>(
                fixedpoint::roundingDivideByPOT(int32_t{forget(b, u)} * prevCell(b, u), 15));
            const auto added = static_cast<int16_t>(fixedpoint::roundingDivideByPOT(
                int32_t{inputGate(b, u)} * cellGate(b, u), cellProductShift));
            cell(b, u) = clampInt16(int32_t{kept} + added);
        }
    }
    const float cellClip = ctx.scalar<float>(kCellClip);
    if (cellClip > 0.0f) {
        const auto clip = static_cast<int16_t>(static_cast<int32_t>(
            std::min(std::max(cellClip / ctx.inputScale(kPrevCellState), -32768.0f), 32767.0f)));
        if (clip > 0) cell = cell.max(static_cast<int16_t>(-clip)).min(clip);
    }
    const Int16Array outputGate = gatePreActivation(kOutputGate, &cell).unaryExpr(&sigmoidInt16);

    // Hidden state: output gate * tanh(cell) into the hidden scale and zero point, int8.
    const Int16Array tanhCell = cell.unaryExpr(tanhOfCell);
    Int8Array hidden(batches, units);
    for (uint32_t b = 0; b < batches; ++b) {
        for (uint32_t u = 0; u < units; ++u) {
            const int32_t v =
                scaleBy(int32_t{outputGate(b, u)} * tanhCell(b, u), *hiddenMul) - hiddenZeroPoint;
            hidden(b, u) = static_cast<int8_t>(std::clamp(v, -128, 127));
        }
    }

    Int8Array output(batches, outputSize);
    if (projection) {
        auto projMul =
            multiplierOf(ctx, ctx.inputScale(kProjectionWeights) * hiddenScale / prevOutputScale);
        if (!projMul) return projMul.status();
        const auto* weights = ctx.inputData<int8_t>(kProjectionWeights);
        const Eigen::VectorXi bias =
            zeroPointBias(hiddenZeroPoint, weights, outputSize, units,
                          has(kProjectionBias) ? ctx.inputData<int32_t>(kProjectionBias) : nullptr);
        output.setZero();
        accumulateProduct(Int32Matrix(hidden.cast<int32_t>().matrix()), weights, outputSize, bias,
                          *projMul, prevOutputZeroPoint, output);
        const float projClip = ctx.scalar<float>(kProjectionClip);
        if (projClip > 0.0f) {
            const auto clip = static_cast<int8_t>(static_cast<int32_t>(std::min(
                std::max(projClip / ctx.inputScale(kProjectionWeights), -128.0f), 127.0f)));
            if (clip > 0) output = output.max(static_cast<int8_t>(-clip)).min(clip);
        }
    } else {
        output = hidden;
    }

    NN_RETURN_IF_ERROR(ctx.setOutputShape(0, {batches, outputSize}));
    NN_RETURN_IF_ERROR(ctx.setOutputShape(1, {batches, units}));
    NN_RETURN_IF_ERROR(ctx.setOutputShape(2, {batches, outputSize}));
    std::copy_n(output.data(), output.size(), ctx.outputData<int8_t>(0));
    std::copy_n(cell.data(), cell.size(), ctx.outputData<int16_t>(1));
    std::copy_n(output.data(), output.size(), ctx.outputData<int8_t>(2));
    return okStatus();
}

// ---- QUANTIZED_16BIT_LSTM ---------------------------------------------------------------------

Status executeQuantized16BitLstm(ExecutionContext& ctx) {
    constexpr uint32_t kPrevCell = 13, kPrevOut = 14;
    // Android stacks the gates as input, cell (input modulation), forget, output.
    constexpr std::array<uint32_t, 4> kStackedInputWeights = {1, 3, 2, 4};
    constexpr std::array<uint32_t, 4> kStackedRecurrentWeights = {5, 7, 6, 8};
    constexpr std::array<uint32_t, 4> kStackedBias = {9, 11, 10, 12};
    if (ctx.inputRank(0) != 2 || ctx.inputRank(kPrevOut) != 2) {
        return ctx.fail("the input and previous output must be 2-D");
    }
    const uint32_t batches = ctx.inputDim(0, 0);
    const uint32_t inputSize = ctx.inputDim(0, 1);
    const uint32_t outputSize = ctx.inputDim(kPrevOut, 1);
    bool shapesOk = ctx.inputShape(kPrevOut) == std::vector<uint32_t>{batches, outputSize} &&
                    ctx.inputShape(kPrevCell) == std::vector<uint32_t>{batches, outputSize};
    for (int g = 0; g < 4; ++g) {
        shapesOk = shapesOk &&
                   ctx.inputShape(kStackedInputWeights[g]) ==
                       std::vector<uint32_t>{outputSize, inputSize} &&
                   ctx.inputShape(kStackedRecurrentWeights[g]) ==
                       std::vector<uint32_t>{outputSize, outputSize} &&
                   ctx.inputShape(kStackedBias[g]) == std::vector<uint32_t>{outputSize};
    }
    if (!shapesOk) return ctx.fail("inconsistent tensor shapes");
    const auto stateShift = fixedpoint::checkedLog2(ctx.inputScale(kPrevCell));
    if (!stateShift || *stateShift + 15 != 4) {
        return ctx.fail("the cell state scale must be 2^-11, got ", ctx.inputScale(kPrevCell));
    }

    // One fully connected layer over [input, previous output] for the four stacked gates, with
    // accumulators scaled to Q3.12 (fixed output scale 2^-12). Android stacks each gate's weights
    // as [recurrent | input] columns, which line up with the activations only when the input and
    // output sizes are equal; the CTS expects exactly Android's pairing, so it is kept.
    const int32_t weightsZeroPoint = ctx.inputZeroPoint(1);
    const float realMultiplier = 4096 * ctx.inputScale(9);
    auto multiplier = multiplierOf(ctx, realMultiplier);
    if (!multiplier) return multiplier.status();
    const uint32_t depth = inputSize + outputSize;
    Int32Matrix concatenated(batches, depth);
    concatenated << widen(ctx.inputData<uint8_t>(0), batches, inputSize),
        widen(ctx.inputData<uint8_t>(kPrevOut), batches, outputSize);
    concatenated.array() -= 128;
    Int32Matrix weights(4 * outputSize, depth);
    Eigen::VectorXi bias(4 * outputSize);
    for (int g = 0; g < 4; ++g) {
        weights.block(g * outputSize, outputSize, outputSize, inputSize) =
            widen(ctx.inputData<uint8_t>(kStackedInputWeights[g]), outputSize, inputSize);
        weights.block(g * outputSize, 0, outputSize, outputSize) =
            widen(ctx.inputData<uint8_t>(kStackedRecurrentWeights[g]), outputSize, outputSize);
        bias.segment(g * outputSize, outputSize) =
            Eigen::Map<const Eigen::VectorXi>(ctx.inputData<int32_t>(kStackedBias[g]), outputSize);
    }
    weights.array() -= weightsZeroPoint;
    Int32Matrix acc = concatenated * weights.transpose();
    acc.rowwise() += bias.transpose();

    NN_RETURN_IF_ERROR(ctx.setOutputShape(0, {batches, outputSize}));
    NN_RETURN_IF_ERROR(ctx.setOutputShape(1, {batches, outputSize}));
    using F0 = FixedPoint<int16_t, 0>;
    using F3 = FixedPoint<int16_t, 3>;
    using F4 = FixedPoint<int16_t, 4>;
    const int16_t* prevCell = ctx.inputData<int16_t>(kPrevCell);
    int16_t* cellOut = ctx.outputData<int16_t>(0);
    uint8_t* out = ctx.outputData<uint8_t>(1);
    for (uint32_t b = 0; b < batches; ++b) {
        const auto gate = [&](int g, uint32_t c) {
            return F3::fromRaw(clampInt16(scaleBy(acc(b, g * outputSize + c), *multiplier)));
        };
        for (uint32_t c = 0; c < outputSize; ++c) {
            const F0 inputGate = fixedpoint::logistic(gate(0, c));
            const F0 modulation = fixedpoint::tanh(gate(1, c));
            const F0 forgetGate = fixedpoint::logistic(gate(2, c));
            const F0 outputGate = fixedpoint::logistic(gate(3, c));
            const size_t i = size_t{b} * outputSize + c;
            const F4 kept = forgetGate * F4::fromRaw(prevCell[i]);
            const F4 added = fixedpoint::rescale<4>(inputGate * modulation);
            const F4 state = F4::fromRaw(fixedpoint::saturatingAdd(added.raw(), kept.raw()));
            const F0 activation = outputGate * fixedpoint::tanh(fixedpoint::rescale<3>(state));
            cellOut[i] = state.raw();
            const int16_t scaled = fixedpoint::roundingDivideByPOT<int16_t>(activation.raw(), 8);
            out[i] = static_cast<uint8_t>(128 + std::clamp<int16_t>(scaled, -128, 127));
        }
    }
    return okStatus();
}

}  // namespace nncosim::golden
