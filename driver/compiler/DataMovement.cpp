// RESHAPE, SQUEEZE and EXPAND_DIMS (views: the output shares its input's bytes), CONCATENATION
// (each input copied through the LUT unit into its slab of the output, requantized when its
// quantization differs), and the operations described by an element map (TRANSPOSE, SLICE,
// STRIDED_SLICE, TILE, REVERSE, MIRROR_PAD, GATHER, CHANNEL_SHUFFLE, SPLIT, the space/depth/batch
// rearrangements, PAD, PAD_V2, RESIZE_NEAREST_NEIGHBOR, DENSIFY): strided byte copies through the
// LUT unit with the identity table, the padding copied from a constant buffer of padding elements.
#include <algorithm>
#include <cmath>
#include <functional>

#include "driver/compiler/Lowering.h"
#include "model/operations/ElementMap.h"
#include "model/operations/Shapes.h"

namespace nncosim::driver {
namespace {

// Views take tensors of any type: nothing is computed.
Status reshapeSupported(const Model& model, const Operation& op) {
    const Constants c(model);
    if (!c.isConstantOrInput(op.inputs[1]))
        return unsupported(op, "the shape must be a constant or a model input");
    return okStatus();
}

Result<std::vector<uint32_t>> reshapeOutputShape(const Lowering& lw, const Operation& op) {
    const uint8_t* p = lw.constants().data(op.inputs[1]);
    const auto& shape = lw.dims(op.inputs[1]);
    if (!p || shape.size() != 1) return fail(ErrorStatus::GENERAL_FAILURE, "shape");
    std::vector<int32_t> target(shape[0]);
    std::memcpy(target.data(), p, target.size() * sizeof(int32_t));
    auto out = reshapeShape(lw.dims(op.inputs[0]), target);
    if (out && std::find(out->begin(), out->end(), 0u) != out->end())
        return fail(ErrorStatus::GENERAL_FAILURE, "zero-sized target shape ", toString(*out));
    return out;
}

// SQUEEZE and EXPAND_DIMS: their axes are constants (an omitted SQUEEZE axis list: every axis of
// size 1).
Status squeezeSupported(const Model& model, const Operation& op) {
    const Constants c(model);
    if (c.operand(op.inputs[1]).lifetime != OperandLifeTime::NO_VALUE &&
        !c.isConstant(op.inputs[1]))
        return unsupported(op, "the axes must be constants");
    return okStatus();
}

Result<std::vector<uint32_t>> squeezeOutputShape(const Lowering& lw, const Operation& op) {
    std::optional<std::vector<int32_t>> axes;
    if (lw.operand(op.inputs[1]).lifetime != OperandLifeTime::NO_VALUE) {
        const uint8_t* p = lw.constants().data(op.inputs[1]);
        if (!p) return fail(ErrorStatus::GENERAL_FAILURE, "axes");
        axes.emplace(elementCount(lw.dims(op.inputs[1])));
        std::memcpy(axes->data(), p, axes->size() * sizeof(int32_t));
    }
    return squeezeShape(lw.dims(op.inputs[0]), axes);
}

Result<std::vector<uint32_t>> expandDimsOutputShape(const Lowering& lw, const Operation& op) {
    auto axis = lw.constants().scalar<int32_t>(op.inputs[1]);
    if (!axis) return fail(ErrorStatus::GENERAL_FAILURE, "axis");
    return expandDimsShape(lw.dims(op.inputs[0]), *axis);
}

Status lowerReshape(Lowering& lw, const Operation& op) {
    // A view of a constant is placed with the constants now; otherwise nothing moves.
    if (lw.constants().isConstant(op.inputs[0])) lw.address(op.outputs[0]);
    return okStatus();
}

Status concatenationSupported(const Model& model, const Operation& op) {
    const Constants c(model);
    const auto n = static_cast<uint32_t>(op.inputs.size()) - 1;
    if (!c.isConstant(op.inputs[n])) return unsupported(op, "the axis must be a constant");
    const Operand& out = c.operand(op.outputs[0]);
    for (uint32_t i = 0; i < n; ++i) {
        if (c.operand(op.inputs[i]).type != out.type) return unsupported(op, "input types");
    }
    if (out.dimensions.size() > 4) return unsupported(op, "rank above 4");
    return okStatus();
}

Result<std::vector<uint32_t>> concatenationOutputShape(const Lowering& lw, const Operation& op) {
    const auto n = static_cast<uint32_t>(op.inputs.size()) - 1;
    auto axis = lw.constants().scalar<int32_t>(op.inputs[n]);
    if (!axis) return fail(ErrorStatus::GENERAL_FAILURE, "axis");
    std::vector<std::vector<uint32_t>> shapes;
    for (uint32_t i = 0; i < n; ++i) shapes.push_back(lw.dims(op.inputs[i]));
    return concatenationShape(shapes, *axis);
}

// Android's concatenation with scaling for an input whose quantization differs from the
// output's (float rescale, round, clamp); the identity otherwise.
Table requantTable(const Operand& in, const Operand& out) {
    if (in.scale == out.scale && in.zeroPoint == out.zeroPoint)
        return tableOf(in.type, [](int32_t v) { return v; });
    const float scale = in.scale * (1.0f / out.scale);
    const float bias = -in.zeroPoint * scale;
    return tableOf(in.type, [&](int32_t v) {
        const int32_t r = static_cast<int32_t>(std::round(v * scale + bias)) + out.zeroPoint;
        return std::clamp(r, typeMin(out.type), typeMax(out.type));
    });
}

// Copies `inputs` one after the other along `axis` of the output: per input one slab of its
// trailing dimensions per index of the output's leading ones, requantized when its quantization
// differs from the output's (CONCATENATION, PACK).
Status copySlabs(Lowering& lw, const Operation& op, const std::vector<uint32_t>& inputs,
                 int32_t axis) {
    const Operand& out = lw.operand(op.outputs[0]);
    const auto& outD = lw.dims(op.outputs[0]);
    const auto rank = static_cast<int32_t>(outD.size());
    if (axis < 0) axis += rank;
    // In bytes: PACK moves elements of any size.
    const uint64_t e = elementSize(out.type);
    uint64_t outer = 1, outInner = e;
    for (int32_t i = 0; i < axis; ++i) outer *= outD[i];
    for (int32_t i = axis; i < rank; ++i) outInner *= outD[i];
    const uint32_t outBase = lw.address(op.outputs[0]);
    const uint32_t maxWords = npu::kSpadWords / 2;
    uint64_t offset = 0;
    for (uint32_t k : inputs) {
        const uint64_t inner = elementCount(lw.dims(k)) * e / std::max<uint64_t>(1, outer);
        if (inner == 0) continue;
        if (outer > kMaxCount) return lw.fail(op, "more slabs than the descriptor's 16 bits");
        const npu::Descriptor d =
            lookupDescriptor(lw, lw.operand(k).type, out.type, requantTable(lw.operand(k), out));
        // Slabs longer than a row's 16-bit INNER are copied in column chunks of whole words.
        const uint32_t chunk = std::min<uint64_t>(inner, kMaxCount / kAlign * kAlign);
        const uint32_t maxRows = std::max(1u, maxWords / ceilDiv(chunk, npu::kDramBusBytes));
        const uint32_t inBase = lw.address(k);
        const auto in32 = static_cast<uint32_t>(inner);
        for (uint32_t c0 = 0; c0 < in32; c0 += chunk) {
            const uint32_t width = std::min(chunk, in32 - c0);
            for (uint64_t r0 = 0; r0 < outer; r0 += maxRows) {
                const auto rows = static_cast<uint32_t>(std::min<uint64_t>(maxRows, outer - r0));
                npu::Descriptor t = d;
                t.a = {
                    inBase + static_cast<uint32_t>(r0 * inner) + c0, width, rows, in32, 1, 1, 0, 0};
                t.out = {outBase + static_cast<uint32_t>(r0 * outInner + offset) + c0,
                         width,
                         rows,
                         static_cast<uint32_t>(outInner),
                         1,
                         1,
                         0,
                         0};
                lw.emit(t);
            }
        }
        offset += inner;
    }
    return okStatus();
}

Status lowerConcatenation(Lowering& lw, const Operation& op) {
    const std::vector<uint32_t> inputs(op.inputs.begin(), op.inputs.end() - 1);
    return copySlabs(lw, op, inputs, *lw.constants().scalar<int32_t>(op.inputs.back()));
}

// PACK (input 0 the axis, then tensors of one shape and quantization, the output's): the
// tensors concatenated along a new axis.
Status packSupported(const Model& model, const Operation& op) {
    const Constants c(model);
    if (!c.isConstant(op.inputs[0])) return unsupported(op, "the axis must be a constant");
    const Operand& out = c.operand(op.outputs[0]);
    for (size_t i = 1; i < op.inputs.size(); ++i) {
        const Operand& in = c.operand(op.inputs[i]);
        if (in.type != out.type || in.scale != out.scale || in.zeroPoint != out.zeroPoint)
            return unsupported(op, "the inputs' type and quantization must be the output's");
    }
    return okStatus();
}

Result<std::vector<uint32_t>> packOutputShape(const Lowering& lw, const Operation& op) {
    auto axis = lw.constants().scalar<int32_t>(op.inputs[0]);
    std::vector<uint32_t> shape = lw.dims(op.inputs[1]);
    if (!axis || *axis < 0 || static_cast<size_t>(*axis) > shape.size())
        return fail(ErrorStatus::GENERAL_FAILURE, "axis out of range");
    shape.insert(shape.begin() + *axis, static_cast<uint32_t>(op.inputs.size() - 1));
    return shape;
}

Status lowerPack(Lowering& lw, const Operation& op) {
    const std::vector<uint32_t> inputs(op.inputs.begin() + 1, op.inputs.end());
    return copySlabs(lw, op, inputs, *lw.constants().scalar<int32_t>(op.inputs[0]));
}

// ---------------------------------------------------------------------------------------------
// Element maps.

/// The map's view of an operation: shapes from `dims`, parameter values from the constants.
ElementMapInputs mapInputs(const Constants& c, const Operation& op,
                           std::function<std::vector<uint32_t>(uint32_t)> dims) {
    ElementMapInputs in;
    in.outputs = static_cast<uint32_t>(op.outputs.size());
    in.shape = [&op, dims](uint32_t i) { return dims(op.inputs[i]); };
    in.omitted = [&c, &op](uint32_t i) {
        return i >= op.inputs.size() ||
               c.operand(op.inputs[i]).lifetime == OperandLifeTime::NO_VALUE;
    };
    in.ints = [&c, &op, dims](uint32_t i) -> std::optional<std::vector<int32_t>> {
        if (i >= op.inputs.size()) return std::nullopt;
        const Operand& operand = c.operand(op.inputs[i]);
        const uint8_t* p = c.data(op.inputs[i]);
        if (!p) return std::nullopt;
        if (operand.type == OperandType::BOOL) return std::vector<int32_t>{p[0] != 0};
        std::vector<int32_t> values(isTensorType(operand.type) ? elementCount(dims(op.inputs[i]))
                                                               : 1);
        std::memcpy(values.data(), p, values.size() * sizeof(int32_t));
        return values;
    };
    in.bits = [&c, &op](uint32_t i) -> std::optional<uint32_t> {
        if (i >= op.inputs.size()) return std::nullopt;
        const uint8_t* p = c.data(op.inputs[i]);
        const uint32_t size = elementSize(c.operand(op.inputs[i]).type);
        if (!p || size > 4) return std::nullopt;
        uint32_t bits = 0;
        std::memcpy(&bits, p, size);
        return bits;
    };
    in.type = [&c, &op](uint32_t i) { return c.operand(op.inputs[i]).type; };
    return in;
}

/// A maximal run of an axis: `count` indices from `first` reading start, start + step, ...;
/// start kPadOffset: padding.
struct Run {
    uint32_t first = 0, count = 1;
    int64_t start = 0, step = 0;
};

std::vector<Run> runsOf(const AxisOffsets& axis) {
    std::vector<Run> runs;
    for (uint32_t i = 0; i < axis.size();) {
        Run r{i, 1, axis[i], 0};
        const auto next = [&](uint32_t k) {
            return i + k < axis.size() ? axis[i + k] : kPadOffset;
        };
        if (r.start == kPadOffset) {
            while (i + r.count < axis.size() && next(r.count) == kPadOffset) ++r.count;
        } else if (next(1) != kPadOffset) {
            r.step = next(1) - r.start;
            r.count = 2;
            while (i + r.count < axis.size() && next(r.count) != kPadOffset &&
                   next(r.count) - next(r.count - 1) == r.step)
                ++r.count;
        }
        runs.push_back(r);
        i += r.count;
    }
    return runs;
}

/// Affine blocks of the copies, the unit the descriptors are made of.
uint64_t blockCount(const ElementMap& map) {
    uint64_t blocks = 0;
    for (const ElementCopy& copy : map.copies) {
        uint64_t n = 1;
        for (const AxisOffsets& axis : copy.axes) n *= runsOf(axis).size();
        blocks += n;
    }
    return blocks;
}

// A program of more copies than this is not worth the descriptors (a GATHER of scattered
// indices, a TILE of many small repeats): the CPU runs it.
constexpr uint64_t kMaxMoveBlocks = 4096;

// Transposes on the array. A transpose that moves the innermost axis copies one byte per DMA row,
// a read and a write beat per byte. When that axis is a channel count C of at most
// kMaxTransposeChannels and the other a multiple of 16, a CONV moves 16 bytes per beat instead:
// planes [C, P] viewed as C image rows of P / 16 pixels of 16 bytes, a C x 1 kernel gives each
// output pixel (16 pixels of C channels) its output channel C k + y from byte k of row y, with
// a weight of 1 and the requantization the identity (zero points 0, clamp [0, 255]: every byte
// value comes through as it is). Back, pixels to planes, is one 1x1 CONV per plane. Either way
// C^2 array passes per 16 pixels.
constexpr uint32_t kMaxTransposeChannels = 16;

// The identity requantization, checked on every byte value.
std::optional<fixedpoint::QuantizedMultiplier> identityRequantization() {
    auto m = fixedpoint::quantizeMultiplier(1.0);
    for (int32_t v = 0; m && v <= 255; ++v)
        if (fixedpoint::requantize(v, 0, *m, 0, {0, 255}) != v) m.reset();
    return m;
}

// Weights OHWI with a 1 where output channel o reads (tap, input channel) = source(o).
std::vector<uint8_t> selectionWeights(
    uint32_t outChannels, uint32_t taps, uint32_t inChannels,
    const std::function<std::pair<uint32_t, uint32_t>(uint32_t)>& source) {
    std::vector<uint8_t> w(size_t{outChannels} * taps * inChannels, 0);
    for (uint32_t o = 0; o < outChannels; ++o) {
        const auto [tap, channel] = source(o);
        w[(size_t{o} * taps + tap) * inChannels + channel] = 1;
    }
    return w;
}

// Whether a flattened block (outermost first, byte strides) transposes n matrices [a, b] into
// [b, a]: innermost {a, b, 1} and {b, 1, a}, above them at most one dimension stepping whole
// matrices.
bool transposesMatrices(const std::vector<MoveDim>& flat) {
    const size_t n = flat.size();
    if (n < 2 || n > 3) return false;
    const MoveDim& x = flat[n - 2];
    const MoveDim& y = flat[n - 1];
    const int64_t matrix = int64_t{x.count} * y.count;
    return x.src == 1 && y.dst == 1 && x.dst == y.count && y.src == x.count &&
           (n == 2 || (flat[0].src == matrix && flat[0].dst == matrix));
}

}  // namespace

bool transposeOnArray(Lowering& lw, uint32_t src, uint32_t dst, uint32_t n, uint32_t a,
                      uint32_t b) {
    const bool toPixels = a <= kMaxTransposeChannels && b % kLanes == 0;  // [C, P] -> [P, C]
    const bool toPlanes = b <= kMaxTransposeChannels && a % kLanes == 0;  // [P, C] -> [C, P]
    const auto m = identityRequantization();
    if (!(toPixels || toPlanes) || std::min(a, b) < 2 || !m) return false;
    const uint32_t c = toPixels ? a : b, groups = (toPixels ? b : a) / kLanes;
    const uint32_t pixels = kLanes * c;  // bytes of one group of 16 pixels
    const std::vector<npu::ChannelQuant> quant(pixels, {0, m->multiplier, m->shift});
    const npu::OutputStage stage{0, 0, 255};
    // Beyond what the tiler takes (sides past the descriptors' counts), the caller copies.
    npu::ChainBuilder chain;
    if (toPixels) {
        const auto w = selectionWeights(pixels, c, kLanes, [c](uint32_t o) {
            return std::pair{o % c, o / c};  // channel C k + y: row y, byte k
        });
        const auto stream = npu::packConvWeights(w.data(), pixels, c, 1, kLanes, 0, quant);
        const uint32_t weights = lw.addConstant(stream.data(), stream.size());
        for (uint32_t i = 0; i < n; ++i) {
            npu::DeviceTensor in, out;
            in.addr = src + i * c * groups * kLanes, in.h = c, in.w = groups, in.c = kLanes;
            out.addr = dst + i * c * groups * kLanes, out.w = groups, out.c = pixels;
            if (!chain.conv(in, out, weights, false, 0, {c, 1, 1, 1, 1, 1, 0, 0}, stage).ok())
                return false;
        }
    } else {
        for (uint32_t y = 0; y < c; ++y) {
            const auto w = selectionWeights(kLanes, 1, pixels, [c, y](uint32_t o) {
                return std::pair{0u, c * o + y};  // byte k of plane y: channel y of pixel k
            });
            const auto stream = npu::packConvWeights(w.data(), kLanes, 1, 1, pixels, 0, quant);
            const uint32_t weights = lw.addConstant(stream.data(), stream.size());
            for (uint32_t i = 0; i < n; ++i) {
                npu::DeviceTensor in, out;
                in.addr = src + i * c * groups * kLanes, in.w = groups, in.c = pixels;
                out.addr = dst + i * c * groups * kLanes + y * groups * kLanes, out.w = groups,
                out.c = kLanes;
                if (!chain.conv(in, out, weights, false, 0, {1, 1, 1, 1, 1, 1, 0, 0}, stage).ok())
                    return false;
            }
        }
    }
    lw.emitChain(chain);
    return true;
}

uint32_t gatherOnArray(Lowering& lw, uint32_t src, uint32_t dst, uint32_t count, uint32_t stride) {
    const auto m = identityRequantization();
    const bool overlap =
        uint64_t{dst} < uint64_t{src} + uint64_t{count} * stride &&
        uint64_t{src} < uint64_t{dst} + count;  // tiles would read what others wrote
    if (stride < 2 || stride > kMaxGatherStride || overlap || !m) return 0;
    const uint32_t inChannels = kLanes * stride;
    const std::vector<npu::ChannelQuant> quant(kLanes, {0, m->multiplier, m->shift});
    const auto selection = selectionWeights(kLanes, 1, inChannels, [stride](uint32_t o) {
        return std::pair{0u, stride * o};
    });
    const auto stream = npu::packConvWeights(selection.data(), kLanes, 1, 1, inChannels, 0, quant);
    const uint32_t weights = lw.addConstant(stream.data(), stream.size());
    // Rows of kRow pixels of 16 destination bytes, then one of the rest.
    constexpr uint32_t kRow = 1024;
    const uint32_t pixels = count / kLanes, rows = pixels / kRow, rest = pixels % kRow;
    npu::ChainBuilder chain;
    const auto part = [&](uint32_t first, uint32_t h, uint32_t w) {
        npu::DeviceTensor in, out;
        in.addr = src + first * inChannels, out.addr = dst + first * kLanes;
        in.h = out.h = h;
        in.w = out.w = w;
        in.c = inChannels, out.c = kLanes;
        return chain.conv(in, out, weights, false, 0, {}, npu::OutputStage{0, 0, 255}).ok();
    };
    if ((rows > 0 && !part(0, rows, kRow)) || (rest > 0 && !part(rows * kRow, 1, rest))) return 0;
    lw.emitChain(chain);
    return pixels * kLanes;
}

MoveEmitter::MoveEmitter(Lowering& lw, uint32_t elementBytes, uint32_t padBits,
                         const std::optional<Table>& table)
    : mLw(lw),
      mCopy(lookupDescriptor(
          lw, OperandType::TENSOR_QUANT8_ASYMM, OperandType::TENSOR_QUANT8_ASYMM,
          table ? *table : tableOf(OperandType::TENSOR_QUANT8_ASYMM, [](int32_t v) { return v; }))),
      mIdentity(!table),
      mElementBytes(elementBytes),
      mPadBits(padBits) {}

// Every combination of one run per axis is an affine block.
Status MoveEmitter::box(uint32_t src, uint32_t dst, const std::vector<AxisOffsets>& axes) {
    const int64_t e = mElementBytes;
    std::vector<uint32_t> sizes;
    for (const AxisOffsets& axis : axes) sizes.push_back(static_cast<uint32_t>(axis.size()));
    if (std::find(sizes.begin(), sizes.end(), 0u) != sizes.end()) return okStatus();  // empty
    const auto outStrides = rowMajorStrides(sizes);
    std::vector<std::vector<Run>> runs;
    for (const AxisOffsets& axis : axes) runs.push_back(runsOf(axis));
    std::vector<size_t> pick(runs.size(), 0);
    while (true) {
        std::vector<MoveDim> dims;
        int64_t from = 0, to = 0;
        bool fill = false;
        for (size_t d = 0; d < runs.size(); ++d) {
            const Run& r = runs[d][pick[d]];
            fill |= r.start == kPadOffset;
            from += r.start * e;
            to += int64_t{r.first} * outStrides[d] * e;
            dims.push_back({r.count, r.step * e, outStrides[d] * e});
        }
        dims.push_back({static_cast<uint32_t>(e), 1, 1});
        NN_RETURN_IF_ERROR(
            block(src + static_cast<uint32_t>(from), dst + static_cast<uint32_t>(to), dims, fill));
        size_t d = runs.size();
        while (d > 0 && ++pick[d - 1] == runs[d - 1].size()) pick[--d] = 0;
        if (d == 0) return okStatus();
    }
}

Status MoveEmitter::block(uint32_t src, uint32_t dst, const std::vector<MoveDim>& dims, bool fill) {
    // Fewest dimensions: drop single ones, merge a dimension into the next inner one when both
    // tensors step through them as one.
    std::vector<MoveDim> flat;
    for (size_t i = dims.size(); i-- > 0;) {
        MoveDim d = dims[i];
        if (d.count == 1) continue;
        if (fill) d.src = d.dst;  // the source repeats one row: only the destination counts
        if (!flat.empty() && d.src == int64_t{flat.back().count} * flat.back().src &&
            d.dst == int64_t{flat.back().count} * flat.back().dst &&
            uint64_t{d.count} * flat.back().count <= UINT32_MAX) {
            flat.back().count *= d.count;
        } else {
            flat.push_back(d);
        }
    }
    std::reverse(flat.begin(), flat.end());
    if (!fill && mIdentity && mElementBytes == 1 && transposesMatrices(flat)) {
        const MoveDim& rows = flat[flat.size() - 2];
        if (transposeOnArray(mLw, src, dst, flat.size() == 3 ? flat[0].count : 1, rows.dst,
                             rows.count))
            return okStatus();
    }
    // A long gather of every s-th byte: the array's descriptor costs what a few hundred rows do.
    if (!fill && mIdentity && mElementBytes == 1 && flat.size() == 1 && flat[0].dst == 1 &&
        flat[0].src > 1 && flat[0].src <= kMaxGatherStride && flat[0].count >= 256) {
        const uint32_t done =
            gatherOnArray(mLw, src, dst, flat[0].count, static_cast<uint32_t>(flat[0].src));
        if (done == flat[0].count) return okStatus();
        flat[0].count -= done;
        return emit(src + done * static_cast<uint32_t>(flat[0].src), dst + done, flat, false);
    }
    if (!fill || flat.empty() || flat.back().count <= kFillRow) return emit(src, dst, flat, fill);
    // A long fill: rows of kFillRow bytes of the padding buffer, then the rest of the row.
    MoveDim inner = flat.back();
    flat.back() = {inner.count / kFillRow, kFillRow, kFillRow};
    flat.push_back({kFillRow, 1, 1});
    NN_RETURN_IF_ERROR(emit(src, dst, flat, true));
    const uint32_t rest = inner.count % kFillRow;
    if (rest == 0) return okStatus();
    flat.pop_back();
    flat.back() = {rest, 1, 1};
    return emit(src, dst + inner.count - rest, flat, true);
}

Status MoveEmitter::emit(uint32_t src, uint32_t dst, const std::vector<MoveDim>& dims, bool fill) {
    // `dims` outermost first. The tiler takes four dimensions of at most 16 bits each below the
    // outermost; loop here over what does not fit, in parts that keep whole elements of up to 4
    // bytes.
    const size_t n = dims.size();
    constexpr uint32_t kPart = kMaxCount / 4 * 4;
    for (size_t i = 0; i < n; ++i) {
        const bool tooMany = n > 4 && i == 0;
        if (!tooMany && (i == 0 || dims[i].count <= kMaxCount)) continue;
        const uint32_t step = tooMany ? 1 : kPart;
        for (uint32_t first = 0; first < dims[i].count; first += step) {
            std::vector<MoveDim> part = dims;
            part[i].count = std::min(step, dims[i].count - first);
            if (tooMany) part.erase(part.begin());
            NN_RETURN_IF_ERROR(emit(src + static_cast<uint32_t>(first * dims[i].src),
                                    dst + static_cast<uint32_t>(first * dims[i].dst), part, fill));
        }
        return okStatus();
    }
    std::array<uint32_t, 4> shape{1, 1, 1, 1};
    npu::StridedTensor a{src, {}}, out{dst, {}};
    for (size_t i = 0; i < n; ++i) {
        const size_t k = 4 - n + i;
        shape[k] = dims[i].count;
        a.strides[k] = static_cast<uint32_t>(dims[i].src);
        out.strides[k] = static_cast<uint32_t>(dims[i].dst);
    }
    if (fill) a = {padding(), {0, 0, 0, 1}};
    npu::ChainBuilder chain;
    NN_RETURN_IF_ERROR(chain.stream(mCopy, a, std::nullopt, out, shape));
    mLw.emitChain(chain);
    return okStatus();
}

uint32_t MoveEmitter::padding() {
    if (!mPadding) {
        std::array<uint8_t, kFillRow> elements{};
        for (uint32_t i = 0; i < kFillRow; ++i)
            elements[i] = static_cast<uint8_t>(mPadBits >> (8 * (i % mElementBytes)));
        mPadding = mLw.addConstant(elements.data(), elements.size());
    }
    return *mPadding;
}

namespace {

Result<ElementMap> loweringMap(const Lowering& lw, const Operation& op) {
    return elementMap(op.type,
                      mapInputs(lw.constants(), op, [&lw](uint32_t k) { return lw.dims(k); }));
}

Status elementMapSupported(const Model& model, const Operation& op) {
    const Constants c(model);
    const Operand& in = c.operand(op.inputs[0]);
    const uint32_t bytes = elementSize(in.type);
    if (!isTensorType(in.type) || (bytes != 1 && bytes != 2 && bytes != 4))
        return unsupported(op, "element type " + std::string(nameOf(in.type)));
    bool parametersKnown = true;
    for (uint32_t i = 1; i < op.inputs.size(); ++i) {
        const Operand& parameter = c.operand(op.inputs[i]);
        if (parameter.lifetime == OperandLifeTime::NO_VALUE || c.isConstant(op.inputs[i])) continue;
        // A parameter given as a model input is packed when its value is known.
        if (!c.isConstantOrInput(op.inputs[i]))
            return unsupported(op, "its parameters must be constants or model inputs");
        // Shapes are laid out when the model is prepared, before inputs have values.
        if (isTensorType(parameter.type) &&
            (parameter.dimensions.empty() || elementCount(parameter.dimensions) == 0))
            return unsupported(op, "a parameter's shape is not known");
        parametersKnown = false;
    }
    if (in.dimensions.empty() || elementCount(in.dimensions) == 0)
        return unsupported(op, "the input shape is not known");
    if (!parametersKnown) return okStatus();
    auto map =
        elementMap(op.type, mapInputs(c, op, [&c](uint32_t k) { return c.operand(k).dimensions; }));
    if (!map) return unsupported(op, map.status().message);
    if (blockCount(*map) > kMaxMoveBlocks)
        return unsupported(op, "more than " + std::to_string(kMaxMoveBlocks) + " copies");
    return okStatus();
}

Result<std::vector<std::vector<uint32_t>>> elementMapOutputShapes(const Lowering& lw,
                                                                  const Operation& op) {
    auto map = loweringMap(lw, op);
    if (!map) return map.status();
    return std::move(map->shapes);
}

Status lowerElementMap(Lowering& lw, const Operation& op) {
    if (lw.isReadAsPlanes(lw.opIndex())) return okStatus();  // its readers load the planes
    auto map = loweringMap(lw, op);
    if (!map) return lw.fail(op, map.status().message);
    const Operand& out = lw.operand(op.outputs[0]);
    const uint32_t e = elementSize(lw.operand(op.inputs[0]).type);
    MoveEmitter emitter(lw, e, paddingBits(*map, out.type, out.zeroPoint));
    for (const ElementCopy& copy : map->copies) {
        const uint32_t src = lw.address(op.inputs[copy.input]);
        const uint32_t dst =
            lw.address(op.outputs[copy.output]) + static_cast<uint32_t>(copy.offset * e);
        NN_RETURN_IF_ERROR(emitter.box(src, dst, copy.axes));
    }
    return okStatus();
}

}  // namespace

extern const NpuOperation kReshapeOperation{
    reshapeSupported, reshapeOutputShape, lowerReshape, nullptr, {1}, true, nullptr, true};
extern const NpuOperation kSqueezeOperation{
    squeezeSupported, squeezeOutputShape, lowerReshape, nullptr, {}, true, nullptr, true};
extern const NpuOperation kExpandDimsOperation{
    squeezeSupported, expandDimsOutputShape, lowerReshape, nullptr, {}, true, nullptr, true};
// Any element type: 8-bit inputs are requantized to the output's scale, float ones copied.
extern const NpuOperation kConcatenationOperation{concatenationSupported,
                                                  concatenationOutputShape,
                                                  lowerConcatenation,
                                                  nullptr,
                                                  {},
                                                  false,
                                                  nullptr,
                                                  true};
extern const NpuOperation kPackOperation{packSupported, packOutputShape, lowerPack, nullptr, {},
                                         false,         nullptr,         true};
// Every input after the first may be a parameter (DENSIFY has two per traversed dimension).
extern const NpuOperation kElementMapOperation{
    elementMapSupported,
    nullptr,
    lowerElementMap,
    nullptr,
    {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16},
    false,
    elementMapOutputShapes,
    true};

}  // namespace nncosim::driver
