// The basic recurrent layers: RNN (one time step), UNIDIRECTIONAL_SEQUENCE_RNN,
// BIDIRECTIONAL_SEQUENCE_RNN and SVDF. TENSOR_FLOAT16 models are computed in float32 and rounded
// once; Android accumulates RNN sums in half precision, which the CTS float16 tolerance absorbs.
#include "golden/ops/Operations.h"
#include "golden/ops/Recurrent.h"

namespace nncosim::golden {
namespace {

/// One direction of an RNN: hidden = activation(input * W^T + aux * A^T + hidden * R^T + bias).
struct RnnCell {
    const float* weights = nullptr;           // [units, inputSize]
    const float* auxWeights = nullptr;        // [units, auxInputSize] or null
    const float* recurrentWeights = nullptr;  // [units, units]
    const float* bias = nullptr;              // [units]
    uint32_t units = 0, inputSize = 0, auxInputSize = 0;
};

/// Loads a cell whose weights, recurrent weights and bias are inputs w, w + 1, w + 2.
Result<RnnCell> loadRnnCell(const ExecutionContext& ctx, FloatTensors& tensors, uint32_t w,
                            uint32_t inputSize, uint32_t auxWeights, uint32_t auxInputSize) {
    if (ctx.isOmitted(w) || ctx.inputRank(w) != 2) return ctx.fail("input ", w, " must be 2-D");
    RnnCell cell;
    cell.units = ctx.inputDim(w, 0);
    cell.inputSize = inputSize;
    NN_RETURN_IF_ERROR(expectShape(ctx, w, {cell.units, inputSize}));
    NN_RETURN_IF_ERROR(expectShape(ctx, w + 1, {cell.units, cell.units}));
    NN_RETURN_IF_ERROR(expectShape(ctx, w + 2, {cell.units}));
    cell.weights = tensors.get(w);
    cell.recurrentWeights = tensors.get(w + 1);
    cell.bias = tensors.get(w + 2);
    if (auxInputSize > 0) {
        NN_RETURN_IF_ERROR(expectShape(ctx, auxWeights, {cell.units, auxInputSize}));
        cell.auxWeights = tensors.get(auxWeights);
        cell.auxInputSize = auxInputSize;
    }
    if (!cell.recurrentWeights || !cell.bias) return ctx.fail("RNN weights are missing");
    return cell;
}

/// One time step for all batches; `hidden` [batches, units] is read and replaced.
void rnnStep(const RnnCell& cell, int32_t activation, const float* input, const float* aux,
             uint32_t batches, ArrayRM& hidden) {
    RowMajorMatrix<float> acc =
        ConstMatrixMap(input, batches, cell.inputSize) *
        ConstMatrixMap(cell.weights, cell.units, cell.inputSize).transpose();
    if (aux != nullptr && cell.auxWeights != nullptr) {
        acc.noalias() += ConstMatrixMap(aux, batches, cell.auxInputSize) *
                         ConstMatrixMap(cell.auxWeights, cell.units, cell.auxInputSize).transpose();
    }
    acc.noalias() +=
        hidden.matrix() * ConstMatrixMap(cell.recurrentWeights, cell.units, cell.units).transpose();
    hidden = acc.array();
    hidden.rowwise() += rowVector(cell.bias, cell.units);
    applyActivation(hidden, activation);
}

/// Runs a time-major sequence; the hidden state of step t goes to the rows of output step t
/// (`stride` floats each, this direction at `offset`).
void rnnSequence(const RnnCell& cell, int32_t activation, const SequenceShape& s,
                 const float* input, const float* aux, bool forward, ArrayRM& hidden, float* output,
                 uint32_t stride, uint32_t offset) {
    for (uint32_t step = 0; step < s.maxTime; ++step) {
        const uint32_t t = forward ? step : s.maxTime - 1 - step;
        rnnStep(cell, activation, input + size_t{t} * s.batches * cell.inputSize,
                aux ? aux + size_t{t} * s.batches * cell.auxInputSize : nullptr, s.batches, hidden);
        Eigen::Map<ArrayRM, 0, Eigen::OuterStride<>>(
            output + size_t{t} * s.batches * stride + offset, s.batches, cell.units,
            Eigen::OuterStride<>(stride)) = hidden;
    }
}

Result<ArrayRM> loadHidden(const ExecutionContext& ctx, FloatTensors& tensors, uint32_t i,
                           uint32_t batches, uint32_t units) {
    NN_RETURN_IF_ERROR(expectShape(ctx, i, {batches, units}));
    if (ctx.isOmitted(i)) return ctx.fail("input ", i, " (hidden state) is required");
    return ArrayRM(Eigen::Map<const ArrayRM>(tensors.get(i), batches, units));
}

}  // namespace

Status executeRnn(ExecutionContext& ctx) {
    if (ctx.inputRank(0) != 2) return ctx.fail("input 0 must be 2-D");
    const uint32_t batches = ctx.inputDim(0, 0);
    FloatTensors tensors(ctx);
    auto cell = loadRnnCell(ctx, tensors, 1, ctx.inputDim(0, 1), 0, 0);
    if (!cell) return cell.status();
    auto hidden = loadHidden(ctx, tensors, 4, batches, cell->units);
    if (!hidden) return hidden.status();
    rnnStep(*cell, ctx.scalar<int32_t>(5), tensors.get(0), nullptr, batches, *hidden);
    // Outputs: the new hidden state, then the output, which are equal.
    NN_RETURN_IF_ERROR(writeFloatOutput(ctx, 0, {batches, cell->units}, hidden->data()));
    return writeFloatOutput(ctx, 1, {batches, cell->units}, hidden->data());
}

Status executeUnidirectionalSequenceRnn(ExecutionContext& ctx) {
    const bool timeMajor = ctx.scalar<int32_t>(6) != 0;
    auto shape = sequenceShape(ctx, 0, timeMajor);
    if (!shape) return shape.status();
    FloatTensors tensors(ctx);
    auto cell = loadRnnCell(ctx, tensors, 1, shape->size, 0, 0);
    if (!cell) return cell.status();
    auto hidden = loadHidden(ctx, tensors, 4, shape->batches, cell->units);
    if (!hidden) return hidden.status();
    const std::vector<float> input = timeMajorInput(tensors, 0, *shape, timeMajor);
    std::vector<float> output(size_t{shape->maxTime} * shape->batches * cell->units);
    rnnSequence(*cell, ctx.scalar<int32_t>(5), *shape, input.data(), nullptr, true, *hidden,
                output.data(), cell->units, 0);
    NN_RETURN_IF_ERROR(writeSequenceOutput(ctx, 0, *shape, cell->units, timeMajor, output));
    if (ctx.numOutputs() == 2) {
        return writeFloatOutput(ctx, 1, {shape->batches, cell->units}, hidden->data());
    }
    return okStatus();
}

Status executeBidirectionalSequenceRnn(ExecutionContext& ctx) {
    constexpr uint32_t kAuxInput = 9, kFwAuxWeights = 10, kBwAuxWeights = 11;
    NN_RETURN_IF_ERROR(expectPresent(ctx, {0, 1, 2, 3, 4, 5, 6, 7, 8, 12, 13, 14}));
    const int32_t activation = ctx.scalar<int32_t>(12);
    const bool timeMajor = ctx.scalar<bool>(13);
    const bool mergeOutputs = ctx.scalar<bool>(14);
    auto shape = sequenceShape(ctx, 0, timeMajor);
    if (!shape) return shape.status();

    // Linking as in BIDIRECTIONAL_SEQUENCE_LSTM: none, cross (aux input with aux weights in both
    // directions) or parallel (aux input without weights is the backward direction's input).
    const bool hasAux = !ctx.isOmitted(kAuxInput);
    const bool fwAux = !ctx.isOmitted(kFwAuxWeights);
    if (fwAux != !ctx.isOmitted(kBwAuxWeights) || (fwAux && !hasAux)) {
        return ctx.fail("unsupported combination of auxiliary input and weights");
    }
    SequenceShape auxShape;
    if (hasAux) {
        auto s = sequenceShape(ctx, kAuxInput, timeMajor);
        if (!s) return s.status();
        if (s->maxTime != shape->maxTime || s->batches != shape->batches) {
            return ctx.fail("the auxiliary input ", toString(ctx.inputShape(kAuxInput)),
                            " does not match the input ", toString(ctx.inputShape(0)));
        }
        auxShape = *s;
    }
    const bool parallel = hasAux && !fwAux;
    const uint32_t auxSize = fwAux ? auxShape.size : 0;

    FloatTensors tensors(ctx);
    auto fw = loadRnnCell(ctx, tensors, 1, shape->size, kFwAuxWeights, auxSize);
    if (!fw) return fw.status();
    auto bw = loadRnnCell(ctx, tensors, 5, parallel ? auxShape.size : shape->size, kBwAuxWeights,
                          auxSize);
    if (!bw) return bw.status();
    auto fwHidden = loadHidden(ctx, tensors, 4, shape->batches, fw->units);
    if (!fwHidden) return fwHidden.status();
    auto bwHidden = loadHidden(ctx, tensors, 8, shape->batches, bw->units);
    if (!bwHidden) return bwHidden.status();

    const std::vector<float> input = timeMajorInput(tensors, 0, *shape, timeMajor);
    std::vector<float> auxInput;
    if (hasAux) auxInput = timeMajorInput(tensors, kAuxInput, auxShape, timeMajor);
    const float* crossAux = fwAux ? auxInput.data() : nullptr;
    const float* bwInput = parallel ? auxInput.data() : input.data();
    const size_t rows = size_t{shape->maxTime} * shape->batches;
    const uint32_t fwStride = mergeOutputs ? fw->units + bw->units : fw->units;
    std::vector<float> fwOutput(rows * fwStride);
    std::vector<float> bwOutput(mergeOutputs ? 0 : rows * bw->units);
    rnnSequence(*fw, activation, *shape, input.data(), crossAux, true, *fwHidden, fwOutput.data(),
                fwStride, 0);
    if (mergeOutputs) {
        rnnSequence(*bw, activation, *shape, bwInput, crossAux, false, *bwHidden, fwOutput.data(),
                    fwStride, fw->units);
    } else {
        rnnSequence(*bw, activation, *shape, bwInput, crossAux, false, *bwHidden, bwOutput.data(),
                    bw->units, 0);
    }

    NN_RETURN_IF_ERROR(writeSequenceOutput(ctx, 0, *shape, fwStride, timeMajor, fwOutput));
    if (!mergeOutputs) {
        NN_RETURN_IF_ERROR(writeSequenceOutput(ctx, 1, *shape, bw->units, timeMajor, bwOutput));
    }
    const uint32_t firstState = mergeOutputs ? 1 : 2;
    if (ctx.numOutputs() == firstState + 2) {
        NN_RETURN_IF_ERROR(
            writeFloatOutput(ctx, firstState, {shape->batches, fw->units}, fwHidden->data()));
        NN_RETURN_IF_ERROR(
            writeFloatOutput(ctx, firstState + 1, {shape->batches, bw->units}, bwHidden->data()));
    }
    return okStatus();
}

Status executeSvdf(ExecutionContext& ctx) {
    constexpr uint32_t kInput = 0, kWeightsFeature = 1, kWeightsTime = 2, kBias = 3, kState = 4;
    NN_RETURN_IF_ERROR(expectPresent(ctx, {kInput, kWeightsFeature, kWeightsTime, kState, 5, 6}));
    for (uint32_t i : {kInput, kWeightsFeature, kWeightsTime, kState}) {
        if (ctx.inputRank(i) != 2) return ctx.fail("input ", i, " must be 2-D");
    }
    const int32_t rank = ctx.scalar<int32_t>(5);
    const uint32_t batches = ctx.inputDim(kInput, 0);
    const uint32_t inputSize = ctx.inputDim(kInput, 1);
    const uint32_t filters = ctx.inputDim(kWeightsFeature, 0);
    const uint32_t memory = ctx.inputDim(kWeightsTime, 1);
    if (rank <= 0 || filters % rank != 0 || memory == 0) {
        return ctx.fail("rank ", rank, " must divide the ", filters, " filters");
    }
    const uint32_t units = filters / rank;
    NN_RETURN_IF_ERROR(expectShape(ctx, kWeightsFeature, {filters, inputSize}));
    NN_RETURN_IF_ERROR(expectShape(ctx, kWeightsTime, {filters, memory}));
    NN_RETURN_IF_ERROR(expectShape(ctx, kBias, {units}));
    NN_RETURN_IF_ERROR(expectShape(ctx, kState, {batches, filters * memory}));

    FloatTensors tensors(ctx);
    // The state holds, per batch and filter, the last `memory` feature activations, oldest first.
    ArrayRM state =
        Eigen::Map<const ArrayRM>(tensors.get(kState), size_t{batches} * filters, memory);
    const RowMajorMatrix<float> features =
        ConstMatrixMap(tensors.get(kInput), batches, inputSize) *
        ConstMatrixMap(tensors.get(kWeightsFeature), filters, inputSize).transpose();
    state.col(memory - 1) = Eigen::Map<const Eigen::ArrayXf>(features.data(), features.size());

    const Eigen::Map<const ArrayRM> weightsTime(tensors.get(kWeightsTime), filters, memory);
    Eigen::ArrayXf perFilter(size_t{batches} * filters);
    for (uint32_t b = 0; b < batches; ++b) {
        perFilter.segment(size_t{b} * filters, filters) =
            (state.middleRows(size_t{b} * filters, filters) * weightsTime).rowwise().sum();
    }
    // Each unit sums `rank` consecutive filters.
    ArrayRM output(batches, units);
    Eigen::Map<Eigen::ArrayXf>(output.data(), output.size()) =
        Eigen::Map<const ArrayRM>(perFilter.data(), size_t{batches} * units, rank).rowwise().sum();
    if (const float* bias = tensors.get(kBias)) output.rowwise() += rowVector(bias, units);
    applyActivation(output, ctx.scalar<int32_t>(6));

    // Shift the memory by one step for the next call.
    state.leftCols(memory - 1) = state.rightCols(memory - 1).eval();
    state.col(memory - 1).setZero();
    NN_RETURN_IF_ERROR(writeFloatOutput(ctx, 0, {batches, filters * memory}, state.data()));
    return writeFloatOutput(ctx, 1, {batches, units}, output.data());
}

}  // namespace nncosim::golden
