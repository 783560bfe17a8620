// The float LSTMs: LSTM (one time step), UNIDIRECTIONAL_SEQUENCE_LSTM and
// BIDIRECTIONAL_SEQUENCE_LSTM, with every option of the cell (CIFG, peephole, projection, layer
// normalization, auxiliary input). Like Android's LSTMCell, TENSOR_FLOAT16 models run in float32
// for the whole sequence and round once at the end.
#include <array>
#include <cmath>

#include "golden/ops/Operations.h"
#include "golden/ops/Recurrent.h"

namespace nncosim::golden {
namespace {

constexpr uint32_t kNone = UINT32_MAX;  // an input index the operation does not have

enum Gate { kInputGate = 0, kForgetGate = 1, kCellGate = 2, kOutputGate = 3 };

/// Input indexes of one cell's tensors, per gate in the order input, forget, cell, output.
struct CellInputs {
    std::array<uint32_t, 4> inputWeights, recurrentWeights, peephole, bias, layerNorm, auxWeights;
    uint32_t projectionWeights, projectionBias;
};

/// The NNAPI layout of a cell starting at `base` (input-to-input weights at base + 1).
CellInputs cellInputs(uint32_t base, uint32_t layerNorm, uint32_t aux) {
    const auto four = [](uint32_t first) {
        return first == kNone ? std::array<uint32_t, 4>{kNone, kNone, kNone, kNone}
                              : std::array<uint32_t, 4>{first, first + 1, first + 2, first + 3};
    };
    return {four(base + 1),  four(base + 5),  {base + 9, base + 10, kNone, base + 11},
            four(base + 12), four(layerNorm), four(aux),
            base + 16,       base + 17};
}

/// One cell's tensors as float32, null where absent.
struct LstmCell {
    std::array<const float*, 4> inputWeights{}, auxWeights{}, recurrentWeights{}, peephole{},
        bias{}, layerNorm{};
    const float* projection = nullptr;
    const float* projectionBias = nullptr;
    uint32_t inputSize = 0, auxInputSize = 0, numCells = 0, outputSize = 0;

    bool cifg() const { return inputWeights[kInputGate] == nullptr; }
    bool layerNormalized() const { return layerNorm[kOutputGate] != nullptr; }
};

struct LstmOptions {
    int32_t activation = 0;  // 0 none, 1 relu, 2 relu1, 3 relu6, 4 tanh, 6 sigmoid
    float cellClip = 0.0f;   // 0 disables clipping
    float projClip = 0.0f;
};

/// Loads one cell after checking its shapes and which of its optional tensors are present
/// (Android's LSTMCell::CheckInputTensorDimensions). `auxInputSize` is 0 without aux weights.
Result<LstmCell> loadCell(const ExecutionContext& ctx, FloatTensors& tensors, const CellInputs& in,
                          uint32_t inputSize, uint32_t auxInputSize) {
    const auto has = [&](uint32_t i) { return !ctx.isOmitted(i); };
    for (uint32_t i : {in.inputWeights[kOutputGate], in.recurrentWeights[kOutputGate]}) {
        if (!has(i) || ctx.inputRank(i) != 2) return ctx.fail("input ", i, " must be a matrix");
    }
    LstmCell cell;
    cell.inputSize = inputSize;
    cell.auxInputSize = auxInputSize;
    cell.numCells = ctx.inputDim(in.inputWeights[kOutputGate], 0);
    cell.outputSize = ctx.inputDim(in.recurrentWeights[kOutputGate], 1);
    const uint32_t n = cell.numCells;

    const bool cifg = !has(in.inputWeights[kInputGate]);
    if (has(in.recurrentWeights[kInputGate]) == cifg || has(in.bias[kInputGate]) == cifg) {
        return ctx.fail("the input-gate weights and bias must all be present or all omitted");
    }
    // As in Android, CIFG ignores cell-to-input weights that come with the other two.
    const bool peephole = has(in.peephole[kOutputGate]);
    if (has(in.peephole[kForgetGate]) != peephole ||
        (!cifg && has(in.peephole[kInputGate]) != peephole) ||
        (!peephole && has(in.peephole[kInputGate]))) {
        return ctx.fail("the peephole weights must all be present or all omitted");
    }
    const bool layerNorm = has(in.layerNorm[kOutputGate]);
    if (has(in.layerNorm[kForgetGate]) != layerNorm || has(in.layerNorm[kCellGate]) != layerNorm ||
        has(in.layerNorm[kInputGate]) != (layerNorm && !cifg)) {
        return ctx.fail("the layer normalization weights must all be present or all omitted");
    }
    if (has(in.projectionBias) && !has(in.projectionWeights)) {
        return ctx.fail("a projection bias needs projection weights");
    }
    const bool aux = auxInputSize > 0;
    for (int g = kInputGate; g <= kOutputGate; ++g) {
        const bool needed = g != kInputGate || !cifg;
        if (needed && (!has(in.inputWeights[g]) || !has(in.recurrentWeights[g]) ||
                       !has(in.bias[g]) || (aux && !has(in.auxWeights[g])))) {
            return ctx.fail("the weights and bias of gate ", g, " are missing");
        }
        NN_RETURN_IF_ERROR(expectShape(ctx, in.inputWeights[g], {n, inputSize}));
        NN_RETURN_IF_ERROR(expectShape(ctx, in.recurrentWeights[g], {n, cell.outputSize}));
        NN_RETURN_IF_ERROR(expectShape(ctx, in.bias[g], {n}));
        NN_RETURN_IF_ERROR(expectShape(ctx, in.peephole[g], {n}));
        NN_RETURN_IF_ERROR(expectShape(ctx, in.layerNorm[g], {n}));
        cell.inputWeights[g] = tensors.get(in.inputWeights[g]);
        cell.recurrentWeights[g] = tensors.get(in.recurrentWeights[g]);
        cell.bias[g] = tensors.get(in.bias[g]);
        cell.peephole[g] = tensors.get(in.peephole[g]);
        cell.layerNorm[g] = tensors.get(in.layerNorm[g]);
        if (aux && needed) {
            NN_RETURN_IF_ERROR(expectShape(ctx, in.auxWeights[g], {n, auxInputSize}));
            cell.auxWeights[g] = tensors.get(in.auxWeights[g]);
        }
    }
    NN_RETURN_IF_ERROR(expectShape(ctx, in.projectionWeights, {cell.outputSize, n}));
    NN_RETURN_IF_ERROR(expectShape(ctx, in.projectionBias, {cell.outputSize}));
    if (!has(in.projectionWeights) && cell.outputSize != n) {
        return ctx.fail("without projection the output size ", cell.outputSize,
                        " must equal the number of cells ", n);
    }
    cell.projection = tensors.get(in.projectionWeights);
    cell.projectionBias = tensors.get(in.projectionBias);
    return cell;
}

void sigmoid(ArrayRM& x) {
    x = 1.0f / (1.0f + (-x).exp());
}

/// Each row normalized to zero mean and unit variance (TFLite's MeanStddevNormalization).
void normalizeRows(ArrayRM& x) {
    constexpr float kVarianceEpsilon = 1e-8f;
    for (Eigen::Index r = 0; r < x.rows(); ++r) {
        const float mean = x.row(r).sum() / static_cast<float>(x.cols());
        const float variance = (x.row(r) - mean).square().sum() / static_cast<float>(x.cols());
        x.row(r) = (x.row(r) - mean) * (1.0f / std::sqrt(variance + kVarianceEpsilon));
    }
}

/// The state of one direction of an LSTM between time steps.
struct LstmState {
    ArrayRM output;  // [batches, outputSize]
    ArrayRM cell;    // [batches, numCells]
};

/// One time step for all batches: input [batches, inputSize] (aux [batches, auxInputSize] or
/// null) updates `state`. `scratch`, when given, receives the gate buffers the way Android leaves
/// them: [input gate,] cell activation, forget gate, output, each [batches, numCells].
void lstmStep(const LstmCell& cell, const LstmOptions& options, const float* input,
              const float* aux, uint32_t batches, LstmState& state, float* scratch) {
    const uint32_t n = cell.numCells;
    const ConstMatrixMap x(input, batches, cell.inputSize);
    const RowMajorMatrix<float> h = state.output.matrix();
    std::array<ArrayRM, 4> gates;
    for (int g = kInputGate; g <= kOutputGate; ++g) {
        if (g == kInputGate && cell.cifg()) continue;
        RowMajorMatrix<float> acc =
            x * ConstMatrixMap(cell.inputWeights[g], n, cell.inputSize).transpose();
        if (aux != nullptr && cell.auxWeights[g] != nullptr) {
            acc.noalias() += ConstMatrixMap(aux, batches, cell.auxInputSize) *
                             ConstMatrixMap(cell.auxWeights[g], n, cell.auxInputSize).transpose();
        }
        acc.noalias() +=
            h * ConstMatrixMap(cell.recurrentWeights[g], n, cell.outputSize).transpose();
        gates[g] = acc.array();
        // Without layer normalization the bias is part of the sum; with it, it follows it.
        if (!cell.layerNormalized()) gates[g].rowwise() += rowVector(cell.bias[g], n);
    }
    const auto finishGate = [&](int g, const ArrayRM* peepholeState) {
        if (peepholeState != nullptr && cell.peephole[g] != nullptr) {
            gates[g] += peepholeState->rowwise() * rowVector(cell.peephole[g], n);
        }
        if (cell.layerNormalized()) {
            normalizeRows(gates[g]);
            gates[g] = gates[g].rowwise() * rowVector(cell.layerNorm[g], n);
            gates[g].rowwise() += rowVector(cell.bias[g], n);
        }
    };
    if (!cell.cifg()) {
        finishGate(kInputGate, &state.cell);
        sigmoid(gates[kInputGate]);
    }
    finishGate(kForgetGate, &state.cell);
    sigmoid(gates[kForgetGate]);
    finishGate(kCellGate, nullptr);
    applyActivation(gates[kCellGate], options.activation);

    const ArrayRM inputGate = cell.cifg() ? ArrayRM(1.0f - gates[kForgetGate]) : gates[kInputGate];
    state.cell = gates[kForgetGate] * state.cell + gates[kCellGate] * inputGate;
    if (options.cellClip > 0.0f) {
        state.cell = state.cell.max(-options.cellClip).min(options.cellClip);
    }
    finishGate(kOutputGate, &state.cell);
    sigmoid(gates[kOutputGate]);
    ArrayRM activatedCell = state.cell;
    applyActivation(activatedCell, options.activation);
    const ArrayRM hidden = gates[kOutputGate] * activatedCell;

    if (cell.projection != nullptr) {
        RowMajorMatrix<float> projected =
            hidden.matrix() * ConstMatrixMap(cell.projection, cell.outputSize, n).transpose();
        state.output = projected.array();
        if (cell.projectionBias != nullptr) {
            state.output.rowwise() += rowVector(cell.projectionBias, cell.outputSize);
        }
        if (options.projClip > 0.0f) {
            state.output = state.output.max(-options.projClip).min(options.projClip);
        }
    } else {
        state.output = hidden;
    }

    if (scratch != nullptr) {
        const size_t block = size_t{batches} * n;
        std::vector<const ArrayRM*> blocks;
        if (!cell.cifg()) blocks.push_back(&gates[kInputGate]);
        const ArrayRM forgetBlock = cell.cifg() ? inputGate : gates[kForgetGate];
        blocks.insert(blocks.end(), {&activatedCell, &forgetBlock, &hidden});
        for (size_t b = 0; b < blocks.size(); ++b) {
            Eigen::Map<ArrayRM>(scratch + b * block, batches, n) = *blocks[b];
        }
    }
}

/// Where a direction reads its sequence and writes its outputs, all time-major.
struct SequenceIo {
    const float* input = nullptr;  // [maxTime, batches, inputSize]
    const float* aux = nullptr;    // [maxTime, batches, auxInputSize] or null
    float* output = nullptr;       // rows of outputStride floats; this direction at outputOffset
    uint32_t outputStride = 0;
    uint32_t outputOffset = 0;
};

void runSequence(const LstmCell& cell, const LstmOptions& options, uint32_t maxTime,
                 uint32_t batches, const SequenceIo& io, bool forward, LstmState& state,
                 float* scratch) {
    for (uint32_t step = 0; step < maxTime; ++step) {
        const uint32_t t = forward ? step : maxTime - 1 - step;
        const float* aux = io.aux ? io.aux + size_t{t} * batches * cell.auxInputSize : nullptr;
        lstmStep(cell, options, io.input + size_t{t} * batches * cell.inputSize, aux, batches,
                 state, scratch);
        Eigen::Map<ArrayRM, 0, Eigen::OuterStride<>>(
            io.output + size_t{t} * batches * io.outputStride + io.outputOffset, batches,
            cell.outputSize, Eigen::OuterStride<>(io.outputStride)) = state.output;
    }
}

/// The initial state from the state inputs, checked against the cell.
Result<LstmState> loadState(const ExecutionContext& ctx, FloatTensors& tensors,
                            const LstmCell& cell, uint32_t batches, uint32_t outputStateIndex,
                            uint32_t cellStateIndex) {
    NN_RETURN_IF_ERROR(expectShape(ctx, outputStateIndex, {batches, cell.outputSize}));
    NN_RETURN_IF_ERROR(expectShape(ctx, cellStateIndex, {batches, cell.numCells}));
    if (ctx.isOmitted(outputStateIndex) || ctx.isOmitted(cellStateIndex)) {
        return ctx.fail("the state inputs are required");
    }
    return LstmState{
        Eigen::Map<const ArrayRM>(tensors.get(outputStateIndex), batches, cell.outputSize),
        Eigen::Map<const ArrayRM>(tensors.get(cellStateIndex), batches, cell.numCells)};
}

LstmOptions loadOptions(const ExecutionContext& ctx, uint32_t first) {
    return {ctx.scalar<int32_t>(first), ctx.scalar<float>(first + 1), ctx.scalar<float>(first + 2)};
}

}  // namespace

Status executeLstm(ExecutionContext& ctx) {
    NN_RETURN_IF_ERROR(expectPresent(ctx, {0, 18, 19, 20, 21, 22}));
    if (ctx.inputRank(0) != 2) return ctx.fail("input 0 must have rank 2");
    const uint32_t batches = ctx.inputDim(0, 0);
    FloatTensors tensors(ctx);
    auto cell = loadCell(ctx, tensors, cellInputs(0, ctx.numInputs() == 27 ? 23 : kNone, kNone),
                         ctx.inputDim(0, 1), 0);
    if (!cell) return cell.status();
    auto state = loadState(ctx, tensors, *cell, batches, 18, 19);
    if (!state) return state.status();

    const uint32_t gates = cell->cifg() ? 3 : 4;
    std::vector<float> scratch(size_t{batches} * cell->numCells * gates);
    std::vector<float> output(size_t{batches} * cell->outputSize);
    const SequenceIo io{tensors.get(0), nullptr, output.data(), cell->outputSize, 0};
    runSequence(*cell, loadOptions(ctx, 20), 1, batches, io, true, *state, scratch.data());
    NN_RETURN_IF_ERROR(writeFloatOutput(ctx, 0, {batches, cell->numCells * gates}, scratch.data()));
    NN_RETURN_IF_ERROR(writeFloatOutput(ctx, 1, {batches, cell->outputSize}, state->output.data()));
    NN_RETURN_IF_ERROR(writeFloatOutput(ctx, 2, {batches, cell->numCells}, state->cell.data()));
    return writeFloatOutput(ctx, 3, {batches, cell->outputSize}, output.data());
}

Status executeUnidirectionalSequenceLstm(ExecutionContext& ctx) {
    NN_RETURN_IF_ERROR(expectPresent(ctx, {0, 18, 19, 20, 21, 22, 23}));
    const bool timeMajor = ctx.scalar<bool>(23);
    auto shape = sequenceShape(ctx, 0, timeMajor);
    if (!shape) return shape.status();
    FloatTensors tensors(ctx);
    auto cell = loadCell(ctx, tensors, cellInputs(0, 24, kNone), shape->size, 0);
    if (!cell) return cell.status();
    auto state = loadState(ctx, tensors, *cell, shape->batches, 18, 19);
    if (!state) return state.status();

    const std::vector<float> input = timeMajorInput(tensors, 0, *shape, timeMajor);
    std::vector<float> output(size_t{shape->maxTime} * shape->batches * cell->outputSize);
    const SequenceIo io{input.data(), nullptr, output.data(), cell->outputSize, 0};
    runSequence(*cell, loadOptions(ctx, 20), shape->maxTime, shape->batches, io, true, *state,
                nullptr);
    NN_RETURN_IF_ERROR(writeSequenceOutput(ctx, 0, *shape, cell->outputSize, timeMajor, output));
    if (ctx.numOutputs() == 3) {
        NN_RETURN_IF_ERROR(
            writeFloatOutput(ctx, 1, {shape->batches, cell->outputSize}, state->output.data()));
        NN_RETURN_IF_ERROR(
            writeFloatOutput(ctx, 2, {shape->batches, cell->numCells}, state->cell.data()));
    }
    return okStatus();
}

Status executeBidirectionalSequenceLstm(ExecutionContext& ctx) {
    constexpr uint32_t kAuxInput = 39;
    NN_RETURN_IF_ERROR(expectPresent(ctx, {0, 35, 36, 37, 38, 48, 49, 50, 51, 52}));
    const bool mergeOutputs = ctx.scalar<bool>(51);
    const bool timeMajor = ctx.scalar<bool>(52);
    auto shape = sequenceShape(ctx, 0, timeMajor);
    if (!shape) return shape.status();

    // Linking: no aux input; aux input with aux weights feeding both directions (cross); aux input
    // without weights replacing the backward direction's input (parallel).
    const bool hasAux = !ctx.isOmitted(kAuxInput);
    const bool auxWeights = !ctx.isOmitted(41) || !ctx.isOmitted(45);
    if (auxWeights && !hasAux) return ctx.fail("auxiliary weights need the auxiliary input");
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
    const bool parallel = hasAux && !auxWeights;
    const uint32_t auxSize = auxWeights ? auxShape.size : 0;

    FloatTensors tensors(ctx);
    auto fw = loadCell(ctx, tensors, cellInputs(0, 53, 40), shape->size, auxSize);
    if (!fw) return fw.status();
    auto bw = loadCell(ctx, tensors, cellInputs(17, 57, 44), parallel ? auxShape.size : shape->size,
                       auxSize);
    if (!bw) return bw.status();
    auto fwState = loadState(ctx, tensors, *fw, shape->batches, 35, 36);
    if (!fwState) return fwState.status();
    auto bwState = loadState(ctx, tensors, *bw, shape->batches, 37, 38);
    if (!bwState) return bwState.status();
    const LstmOptions options = loadOptions(ctx, 48);

    const std::vector<float> input = timeMajorInput(tensors, 0, *shape, timeMajor);
    std::vector<float> auxInput;
    if (hasAux) auxInput = timeMajorInput(tensors, kAuxInput, auxShape, timeMajor);
    const float* crossAux = auxWeights ? auxInput.data() : nullptr;
    const uint32_t fwSize = fw->outputSize;
    const uint32_t bwSize = bw->outputSize;
    // Merged outputs are [fw | bw] along the last dimension of the forward output.
    const uint32_t fwStride = mergeOutputs ? fwSize + bwSize : fwSize;
    const size_t rows = size_t{shape->maxTime} * shape->batches;
    std::vector<float> fwOutput(rows * fwStride);
    std::vector<float> bwOutput(mergeOutputs ? 0 : rows * bwSize);

    runSequence(*fw, options, shape->maxTime, shape->batches,
                {input.data(), crossAux, fwOutput.data(), fwStride, 0}, true, *fwState, nullptr);
    const float* bwInput = parallel ? auxInput.data() : input.data();
    const SequenceIo bwIo = mergeOutputs
                                ? SequenceIo{bwInput, crossAux, fwOutput.data(), fwStride, fwSize}
                                : SequenceIo{bwInput, crossAux, bwOutput.data(), bwSize, 0};
    runSequence(*bw, options, shape->maxTime, shape->batches, bwIo, false, *bwState, nullptr);

    NN_RETURN_IF_ERROR(writeSequenceOutput(ctx, 0, *shape, fwStride, timeMajor, fwOutput));
    if (!mergeOutputs) {
        NN_RETURN_IF_ERROR(writeSequenceOutput(ctx, 1, *shape, bwSize, timeMajor, bwOutput));
    }
    const uint32_t firstState = mergeOutputs ? 1 : 2;
    if (ctx.numOutputs() == firstState + 4) {
        const std::array<const ArrayRM*, 4> states = {&fwState->output, &fwState->cell,
                                                      &bwState->output, &bwState->cell};
        for (uint32_t k = 0; k < 4; ++k) {
            const ArrayRM& s = *states[k];
            NN_RETURN_IF_ERROR(writeFloatOutput(
                ctx, firstState + k,
                {static_cast<uint32_t>(s.rows()), static_cast<uint32_t>(s.cols())}, s.data()));
        }
    }
    return okStatus();
}

}  // namespace nncosim::golden
