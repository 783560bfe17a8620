// Pooling on the NPU's pool unit: AVERAGE_POOL_2D, MAX_POOL_2D, float L2_POOL_2D (pooling
// descriptors; L2 pools the squares and takes the FUNC square root), MEAN (an average pool
// truncating toward zero, over height and width, or over the reduced axes copied outermost),
// REDUCE_MAX and REDUCE_MIN (a MAXPOOL over the reduced axes) and float REDUCE_SUM (a float
// DWCONV of ones over them).
#include <algorithm>
#include <cstring>

#include "driver/compiler/Window.h"
#include "model/operations/Shapes.h"

namespace nncosim::driver {
namespace {

// ---------------------------------------------------------------------------------------------
// Pooling.

Status lowerPool(Lowering& lw, const Operation& op) {
    const Operand& in = lw.operand(op.inputs[0]);
    const Operand& out = lw.operand(op.outputs[0]);
    auto w = windowOf(lw, op);
    if (!w) return lw.fail(op, w.status().message);
    npu::OutputStage stage;
    if (auto format = floatFormat(in.type)) {
        stage = floatStage(*format, w->p.activation);
    } else if (auto range = activationRange(w->p.activation, out)) {
        stage.actMin = range->min, stage.actMax = range->max;
    } else {
        return lw.fail(op, "activation");
    }
    auto io = transposeIn(lw, op, *w);
    NN_RETURN_IF_ERROR(io.status());
    // L2: the average of the squares, then its square root with the activation's clamp.
    const bool l2 = op.type == OperationType::L2_POOL_2D;
    const npu::OutputStage finish = stage;
    uint32_t poolIn = io->inBase;
    if (l2) {
        const auto count = static_cast<uint32_t>(elementCount(lw.dims(op.inputs[0])));
        poolIn = lw.scratch().back();
        stage = unclampedFloatStage(*floatFormat(in.type));
        npu::ChainBuilder squares;
        const Status st = squares.stream(
            floatDescriptor(npu::Opcode::MUL, stage), {io->inBase, {0, 0, 0, 1}},
            npu::StridedTensor{io->inBase, {0, 0, 0, 1}}, {poolIn, {0, 0, 0, 1}}, {1, 1, 1, count});
        if (!st.ok()) return lw.fail(op, st.message);
        lw.emitChain(squares);
    }
    const npu::ConvGeometry geometry{w->g.filterH,
                                     w->g.filterW,
                                     static_cast<uint32_t>(w->p.strideH),
                                     static_cast<uint32_t>(w->p.strideW),
                                     1,
                                     1,
                                     static_cast<uint32_t>(w->p.padH.head),
                                     static_cast<uint32_t>(w->p.padW.head)};
    for (uint32_t n = 0; n < w->in[0]; ++n) {
        npu::ChainBuilder chain;
        const Status st = chain.pool(
            op.type == OperationType::MAX_POOL_2D ? npu::Pooling::MAX : npu::Pooling::AVERAGE,
            imageOf(poolIn, w->in, n, 0, w->in[3], in),
            imageOf(io->outBase, w->out, n, 0, w->out[3], out), geometry, stage);
        if (!st.ok()) return lw.fail(op, st.message);
        lw.emitChain(chain);
    }
    if (l2) {
        npu::Descriptor sqrt = floatDescriptor(npu::Opcode::FUNC, finish);
        sqrt.floatFn = static_cast<uint32_t>(npu::Function::SQRT);
        const auto count = static_cast<uint32_t>(elementCount(lw.dims(op.outputs[0])));
        npu::ChainBuilder roots;
        const Status st = roots.stream(sqrt, {io->outBase, {0, 0, 0, 1}}, std::nullopt,
                                       {io->outBase, {0, 0, 0, 1}}, {1, 1, 1, count});
        if (!st.ok()) return lw.fail(op, st.message);
        lw.emitChain(roots);
    }
    return transposeOut(lw, op, *w, *io);
}

}  // namespace

std::optional<ReduceLayout> reduceLayout(const std::vector<uint32_t>& dims,
                                         const std::vector<bool>& reduced) {
    ReduceLayout l;
    const auto strides = rowMajorStrides(dims);
    uint64_t extent = 1;
    for (bool pass : {true, false}) {
        for (size_t d = 0; d < dims.size(); ++d) {
            if (reduced[d] != pass) continue;
            l.axes.push_back(stridedAxis(dims[d], strides[d]));
            if (pass)
                extent *= dims[d];
            else
                l.kept *= dims[d];
        }
    }
    for (uint64_t h = std::min<uint64_t>(extent, kMaxByteField); h >= 1; --h) {
        if (extent % h == 0 && extent / h <= kMaxByteField) {
            l.windowH = static_cast<uint32_t>(h);
            l.windowW = static_cast<uint32_t>(extent / h);
            return l;
        }
    }
    return std::nullopt;
}

namespace {

std::optional<std::vector<bool>> reducedOf(const Constants& c, const Operation& op, size_t rank) {
    const uint8_t* p = c.data(op.inputs[1]);
    const uint64_t count = elementCount(c.operand(op.inputs[1]).dimensions);
    if (!p || count == kSizeOverflow) return std::nullopt;
    std::vector<int32_t> axes(count);
    std::memcpy(axes.data(), p, axes.size() * sizeof(int32_t));
    auto reduced = reducedAxes(rank, axes);
    if (!reduced) return std::nullopt;
    return std::move(*reduced);
}

// ---------------------------------------------------------------------------------------------
// MEAN over height and width.
//
// An average pool over the whole map: binary32 sums in row-major order for float, as the golden
// sums, divided once; for 8-bit types the sum of the stored values divided by their count and
// truncated toward zero (AVGPOOL with TRUNCATE), NNAPI's quantized MEAN.

// The [N, H, W, C] image a MEAN averages over H x W: the input itself when it reduces
// height and width of a 4-D tensor, else its copy with the reduced axes outermost (reduceLayout:
// [1, Rh, Rw, kept]); nullopt when the reduced extent is no product of two 8-bit sides.
struct MeanImage {
    std::array<uint32_t, 4> d{};
    std::optional<ReduceLayout> copy;
};

std::optional<MeanImage> meanImageOf(const std::vector<uint32_t>& dims,
                                     const std::vector<bool>& reduced) {
    if (reduced == std::vector<bool>{false, true, true, false})
        return MeanImage{{dims[0], dims[1], dims[2], dims[3]}, std::nullopt};
    auto layout = reduceLayout(dims, reduced);
    if (!layout) return std::nullopt;
    return MeanImage{{1, layout->windowH, layout->windowW, layout->kept}, std::move(layout)};
}

std::optional<MeanImage> meanImageOf(const Constants& c, const Operation& op,
                                     const std::vector<uint32_t>& dims) {
    auto reduced = reducedOf(c, op, dims.size());
    if (!reduced) return std::nullopt;
    return meanImageOf(dims, *reduced);
}

// The MEAN's average pool over image n of the map `d` at inBase (pool() slices the channels of
// a map too large for the scratchpad with all of them).
Status meanPool(npu::ChainBuilder& chain, const std::array<uint32_t, 4>& d, uint32_t inBase,
                uint32_t outBase, uint32_t n, OperandType type) {
    const uint32_t size = elementSize(type);
    npu::DeviceTensor input, output;
    input.addr = inBase + n * d[1] * d[2] * d[3] * size;
    input.h = d[1], input.w = d[2], input.c = d[3] * size;
    output.addr = outBase + n * d[3] * size;
    output.c = input.c;
    input.isSigned = output.isSigned = isSigned(type);
    const auto format = floatFormat(type);
    const npu::OutputStage stage =
        format ? floatStage(*format, static_cast<int32_t>(FusedActivation::NONE))
               : npu::OutputStage{0, typeMin(type), typeMax(type)};
    return chain.pool(npu::Pooling::MEAN, input, output, {d[1], d[2], 1, 1, 1, 1, 0, 0}, stage);
}

Status meanSupported(const Model& model, const Operation& op) {
    const Constants c(model);
    const Operand& in = c.operand(op.inputs[0]);
    if ((!isQuant8(in.type) && !floatFormat(in.type)) || c.operand(op.outputs[0]).type != in.type)
        return unsupported(op, "only 8-bit quantized, float32 and float16 tensors");
    if (!c.isConstantOrInput(op.inputs[1]) || !c.isConstantOrInput(op.inputs[2]))
        return unsupported(op, "the axes and keep_dims must be constants or model inputs");
    if (in.dimensions.empty() || elementCount(in.dimensions) == 0)
        return unsupported(op, "the input's shape must be known");
    // Axes given as a model input are packed when a program compiles: then every set of axes
    // must run.
    const size_t rank = in.dimensions.size();
    std::vector<std::vector<bool>> candidates;
    if (c.isConstant(op.inputs[1])) {
        auto reduced = reducedOf(c, op, rank);
        if (!reduced) return unsupported(op, "axes");
        candidates.push_back(std::move(*reduced));
    } else {
        if (hasUnknownDimensions(c.operand(op.inputs[1])))
            return unsupported(op, "the axes' shape must be known");
        for (uint32_t mask = 0; mask < (1u << rank); ++mask) {
            std::vector<bool> reduced(rank);
            for (size_t a = 0; a < rank; ++a) reduced[a] = (mask >> a) & 1;
            candidates.push_back(std::move(reduced));
        }
    }
    for (const std::vector<bool>& reduced : candidates) {
        const auto image = meanImageOf(in.dimensions, reduced);
        if (!image)
            return unsupported(op,
                               "the reduced extent is no product of two windows of at most 255");
        const auto& d = image->d;
        if (d[1] > kMaxByteField || d[2] > kMaxByteField)
            return unsupported(op, "a map beyond the descriptor's 8-bit kernel");
        npu::ChainBuilder dryRun;
        if (!meanPool(dryRun, d, 0, 0, 0, in.type).ok())
            return unsupported(op, "the map of one channel block does not fit the scratchpad");
    }
    return okStatus();
}

Result<std::vector<uint32_t>> meanOutputShape(const Lowering& lw, const Operation& op) {
    const auto& in = lw.dims(op.inputs[0]);
    auto reduced = reducedOf(lw.constants(), op, in.size());
    auto keepDims = lw.constants().scalar<int32_t>(op.inputs[2]);
    if (!reduced || !keepDims) return fail(ErrorStatus::GENERAL_FAILURE, "axes or keep_dims");
    return reductionShape(in, *reduced, *keepDims > 0);
}

// The copied input, when the MEAN does not reduce height and width in place.
std::vector<uint64_t> meanScratch(const Lowering& lw, const Operation& op) {
    const auto image = meanImageOf(lw.constants(), op, lw.dims(op.inputs[0]));
    if (!image || !image->copy) return {};
    return {elementCount(lw.dims(op.inputs[0])) * elementSize(lw.operand(op.inputs[0]).type)};
}

Status lowerMean(Lowering& lw, const Operation& op) {
    const auto image = meanImageOf(lw.constants(), op, lw.dims(op.inputs[0]));
    if (!image) return lw.fail(op, "the reduced extent is no product of two windows");
    const OperandType type = lw.operand(op.inputs[0]).type;
    uint32_t inBase = lw.address(op.inputs[0]);
    if (image->copy) {
        MoveEmitter move(lw, elementSize(type), 0);
        NN_RETURN_IF_ERROR(move.box(inBase, lw.scratch().at(0), image->copy->axes));
        inBase = lw.scratch().at(0);
    }
    for (uint32_t n = 0; n < image->d[0]; ++n) {
        npu::ChainBuilder chain;
        const Status st = meanPool(chain, image->d, inBase, lw.address(op.outputs[0]), n, type);
        if (!st.ok()) return lw.fail(op, st.message);
        lw.emitChain(chain);
    }
    return okStatus();
}

// ---------------------------------------------------------------------------------------------
// REDUCE_MAX and REDUCE_MIN of 8-bit quantized tensors: the largest (smallest) stored value, as
// the golden folds them. The input is copied with the reduced axes outermost and the kept ones
// innermost, [1, Rh, Rw, P] in NHWC (Rh x Rw the reduced elements, P the kept ones), and one
// MAXPOOL window of Rh x Rw gives [1, 1, 1, P]: the output in its own order. The minimum is the
// complement of the maximum of complements (~x reverses the order of uint8 and of int8 bytes
// alike): the copy complements, and a LUT complements the pooled values. Float tensors pool on
// the float MAXPOOL, unclamped; their minimum is the negated maximum of the negated values. A
// float REDUCE_SUM is a float DWCONV of weight 1 over the window: the reduced elements added in
// order, as the golden adds them.

bool isMinimum(const Operation& op) {
    return op.type == OperationType::REDUCE_MIN;
}

Status reduceSupported(const Model& model, const Operation& op) {
    const Constants c(model);
    const Operand& in = c.operand(op.inputs[0]);
    if ((!isQuant8(in.type) && !floatFormat(in.type)) || c.operand(op.outputs[0]).type != in.type)
        return unsupported(op, "only 8-bit quantized, float32 and float16 tensors");
    if (op.type == OperationType::REDUCE_SUM && !floatFormat(in.type))
        return unsupported(op, "REDUCE_SUM of float tensors only");
    if (!c.isConstant(op.inputs[1]) || !c.isConstant(op.inputs[2]))
        return unsupported(op, "the axes and keep_dims must be constants");
    auto reduced = reducedOf(c, op, in.dimensions.size());
    if (!reduced) return unsupported(op, "axes");
    if (elementCount(in.dimensions) == 0) return okStatus();  // checked when the shape is known
    auto layout = reduceLayout(in.dimensions, *reduced);
    if (!layout)
        return unsupported(op, "the reduced extent is no product of two windows of at most 255");
    if (layout->kept * elementSize(in.type) > kMaxCount)
        return unsupported(op, "more kept bytes than 16 bits count");
    if (op.type == OperationType::REDUCE_SUM &&
        npu::depthwiseWeightStreamBytes(layout->kept, layout->windowH, layout->windowW, false,
                                        true) > kMaxSumStreamBytes)
        return unsupported(op, "the sum's weight stream would exceed 4 MiB");
    return okStatus();
}

Result<std::vector<uint32_t>> reduceOutputShape(const Lowering& lw, const Operation& op) {
    const auto& in = lw.dims(op.inputs[0]);
    auto reduced = reducedOf(lw.constants(), op, in.size());
    auto keepDims = lw.constants().scalar<uint8_t>(op.inputs[2]);
    if (!reduced || !keepDims) return fail(ErrorStatus::GENERAL_FAILURE, "axes or keep_dims");
    return reductionShape(in, *reduced, *keepDims != 0);
}

// The reordered (and for REDUCE_MIN complemented or negated) input, and the reversed minimum.
std::vector<uint64_t> reduceScratch(const Lowering& lw, const Operation& op) {
    const OperandType type = lw.operand(op.inputs[0]).type;
    std::vector<uint64_t> areas{byteSize(type, lw.dims(op.inputs[0]))};
    if (isMinimum(op)) areas.push_back(byteSize(type, lw.dims(op.outputs[0])));
    return areas;
}

Status lowerReduce(Lowering& lw, const Operation& op) {
    const Operand& in = lw.operand(op.inputs[0]);
    const auto& dims = lw.dims(op.inputs[0]);
    auto reduced = reducedOf(lw.constants(), op, dims.size());
    if (!reduced) return lw.fail(op, "axes");
    auto layout = reduceLayout(dims, *reduced);
    if (!layout) return lw.fail(op, "the reduced extent is no product of two windows");
    if (layout->kept == 0 || layout->windowH * layout->windowW == 0) return okStatus();  // empty
    const Table complement = tableOf(in.type, [](int32_t v) { return ~v; });
    const bool minimum = isMinimum(op);
    const auto format = floatFormat(in.type);
    const uint32_t size = elementSize(in.type);
    MoveEmitter move(lw, size, 0,
                     minimum && !format ? std::optional<Table>(complement) : std::nullopt);
    const uint32_t ordered = lw.scratch().at(0);
    NN_RETURN_IF_ERROR(move.box(lw.address(op.inputs[0]), ordered, layout->axes));
    if (minimum && format) {
        NN_RETURN_IF_ERROR(negateFloats(lw, op, *format, ordered, ordered,
                                        static_cast<uint32_t>(elementCount(dims))));
    }
    npu::DeviceTensor window;
    window.addr = ordered;
    window.h = layout->windowH, window.w = layout->windowW, window.c = layout->kept * size;
    window.isSigned = isSigned(in.type);
    window.zeroPoint = in.zeroPoint;
    npu::DeviceTensor pooled = window;
    pooled.addr = minimum ? lw.scratch().at(1) : lw.address(op.outputs[0]);
    pooled.h = pooled.w = 1;
    const npu::ConvGeometry geometry{layout->windowH, layout->windowW, 1, 1, 1, 1, 0, 0};
    const npu::OutputStage stage = format ? unclampedFloatStage(*format)
                                          : npu::OutputStage{0, typeMin(in.type), typeMax(in.type)};
    npu::ChainBuilder chain;
    Status st = okStatus();
    if (op.type == OperationType::REDUCE_SUM) {
        const uint32_t taps = layout->windowH * layout->windowW;
        const std::vector<float> ones(size_t{taps} * layout->kept, 1.0f), zeros(layout->kept, 0.0f);
        const auto stream = npu::packFloatDepthwiseWeights(ones.data(), zeros.data(), layout->kept,
                                                           layout->windowH, layout->windowW, false);
        st = chain.depthwise(window, pooled, lw.addConstant(stream.data(), stream.size()), false, 0,
                             geometry, stage, false);
    } else {
        st = chain.pool(npu::Pooling::MAX, window, pooled, geometry, stage);
    }
    if (!st.ok()) return lw.fail(op, st.message);
    lw.emitChain(chain);
    if (!minimum) return okStatus();
    if (format)
        return negateFloats(lw, op, *format, pooled.addr, lw.address(op.outputs[0]), layout->kept);
    MoveEmitter back(lw, 1, 0, complement);
    return back.block(pooled.addr, lw.address(op.outputs[0]), {{layout->kept, 1, 1}}, false);
}

}  // namespace

extern const NpuOperation kPoolingOperation{
    windowSupported, windowShape, lowerPool, windowScratch, {}, false, nullptr, true};
extern const NpuOperation kReduceOperation{
    reduceSupported, reduceOutputShape, lowerReduce, reduceScratch, {}, false, nullptr, true};
extern const NpuOperation kMeanOperation{meanSupported, meanOutputShape, lowerMean, meanScratch,
                                         {1, 2},        false,           nullptr,   true};

}  // namespace nncosim::driver
