// The window operations on the NPU: CONV_2D, DEPTHWISE_CONV_2D, GROUPED_CONV_2D (CONV and
// DWCONV descriptors, PACK for few input channels, TAPS depthwise, depthwise -> pointwise
// fusion with CHAIN_OUT/CHAIN_IN; float32 and float16 on the float CONV and DWCONV with binary32
// weight streams), AVERAGE_POOL_2D, MAX_POOL_2D, float L2_POOL_2D (pooling descriptors; L2 pools
// the squares and takes the FUNC square root), MEAN (an average pool truncating toward zero,
// over height and width, or over the reduced axes copied outermost), REDUCE_MAX and REDUCE_MIN (a
// MAXPOOL over the reduced axes), float REDUCE_SUM (a float DWCONV of ones over them) and
// TRANSPOSE_CONV_2D (a CONV over the input spread out by the strides). NCHW operations run on
// NHWC scratch copies that LUT identity copies fill and drain. Weights given as model inputs are
// scattered into the packed stream at run time by LUT copies (float32: 4-byte copies).
#include <algorithm>
#include <cstring>
#include <tuple>

#include "driver/compiler/Lowering.h"
#include "model/operations/Shapes.h"

namespace nncosim::driver {
namespace {

using fixedpoint::QuantizedMultiplier;

bool isPooling(OperationType t) {
    return t == OperationType::AVERAGE_POOL_2D || t == OperationType::MAX_POOL_2D ||
           t == OperationType::L2_POOL_2D;
}

// The decoded parameters and shapes of a window operation (padding resolved).
struct Window {
    WindowParams p;
    WindowGeometry g;
    std::array<uint32_t, 4> in{}, out{};  // NHWC
};

Result<Window> windowOf(const Lowering& lw, const Operation& op) {
    auto p = decodeWindowParams(op.type, lw.constants().inputsOf(op));
    if (!p) return p.status();
    const bool pooling = isPooling(op.type);
    auto g = windowGeometry(op.type, *p, lw.dims(op.inputs[0]),
                            pooling ? std::vector<uint32_t>{} : lw.dims(op.inputs[1]),
                            pooling ? std::vector<uint32_t>{} : lw.dims(op.inputs[2]));
    if (!g) return g.status();
    Window w{*p, *g, {g->batches, g->inH, g->inW, g->inC}, {g->batches, g->outH, g->outW, g->outC}};
    w.p.padH = g->padH;
    w.p.padW = g->padW;
    return w;
}

// The filter (input 1), bias (input 2) and requantization of a convolution's 8-bit quantized
// input 0 and output 0; a depthwise filter is [1, kh, kw, outC], others [outC, kh, kw, inC].
Status weightsSupported(const Constants& c, const Operation& op, bool depthwise) {
    const Operand& in = c.operand(op.inputs[0]);
    const Operand& out = c.operand(op.outputs[0]);
    const Operand& filter = c.operand(op.inputs[1]);
    const Operand& bias = c.operand(op.inputs[2]);
    if (!c.isConstantOrInput(op.inputs[2]))
        return unsupported(op,
                           "the bias must be a constant or a model input (packed at compile time)");
    const bool perChannel = filter.type == OperandType::TENSOR_QUANT8_SYMM_PER_CHANNEL;
    if (filter.type != in.type && !perChannel) return unsupported(op, "filter type");
    if (perChannel) {
        const auto* pc = std::get_if<SymmPerChannelQuantParams>(&filter.extraParams);
        if (!pc || pc->channelDim != (depthwise ? 3u : 0u))
            return unsupported(op, "per-channel quantization must be along the output channels");
    }
    if (bias.type != OperandType::TENSOR_INT32) return unsupported(op, "bias type");
    if (filter.dimensions.size() != 4) return unsupported(op, "filter rank");
    if (depthwise && filter.dimensions[0] != 1)
        return unsupported(op, "depthwise filter must be [1, height, width, channels]");
    const uint32_t outC = depthwise ? filter.dimensions[3] : filter.dimensions[0];
    if (filter.dimensions[1] > kMaxByteField || filter.dimensions[2] > kMaxByteField)
        return unsupported(op, "kernel beyond the descriptor's 8 bits");
    if (outC > kMaxCount) return unsupported(op, "too many output channels");
    if (!channelMultipliers(in, filter, bias, out, outC))
        return unsupported(
            op, "requantization multiplier outside the NPU's range or bias scale mismatch");
    return okStatus();
}

// A float convolution's filter and bias: the input's type, packed as binary32; computed at run
// time (scattered into the stream) only for float32 and when `runtimeAllowed`.
Status floatWeightsSupported(const Constants& c, const Operation& op, bool depthwise,
                             bool runtimeAllowed) {
    const Operand& in = c.operand(op.inputs[0]);
    const Operand& filter = c.operand(op.inputs[1]);
    if (filter.type != in.type || c.operand(op.inputs[2]).type != in.type)
        return unsupported(op, "filter and bias types must be the input's");
    if ((!c.isConstantOrInput(op.inputs[1]) || !c.isConstantOrInput(op.inputs[2])) &&
        (!runtimeAllowed || in.type != OperandType::TENSOR_FLOAT32))
        return unsupported(op,
                           "a float filter or bias computed at run time: float32 convolutions and "
                           "depthwise multiplier 1 only (a binary16 one would need widening)");
    if (filter.dimensions.size() != 4) return unsupported(op, "filter rank");
    if (depthwise && filter.dimensions[0] != 1)
        return unsupported(op, "depthwise filter must be [1, height, width, channels]");
    if (filter.dimensions[1] > kMaxByteField || filter.dimensions[2] > kMaxByteField)
        return unsupported(op, "kernel beyond the descriptor's 8 bits");
    if ((depthwise ? filter.dimensions[3] : filter.dimensions[0]) > kMaxCount / 4)
        return unsupported(op, "too many output channels");
    return okStatus();
}

Status supported(const Model& model, const Operation& op) {
    const Constants c(model);
    const Operand& in = c.operand(op.inputs[0]);
    const Operand& out = c.operand(op.outputs[0]);
    const bool isFloat = floatFormat(in.type).has_value();
    if ((!isQuant8(in.type) && !isFloat) || out.type != in.type)
        return unsupported(op, "only 8-bit quantized, float32 and float16 tensors");
    auto p = decodeWindowParams(op.type, c.inputsOf(op));
    if (!p) return unsupported(op, "scalar parameters must be constants: " + p.status().message);
    if (isFloat ? p->activation < 0 || p->activation > 3 : !activationRange(p->activation, out))
        return unsupported(op, "activation");
    const auto byteField = [](int32_t v) { return v >= 0 && v <= int32_t{kMaxByteField}; };
    if (!byteField(p->strideW) || !byteField(p->strideH) || !byteField(p->dilationW) ||
        !byteField(p->dilationH))
        return unsupported(op, "stride or dilation beyond the descriptor's 8 bits");
    if (p->explicitPadding && (!byteField(p->padW.head) || !byteField(p->padH.head)))
        return unsupported(op, "leading padding beyond the descriptor's 8 bits");
    if (isPooling(op.type)) {
        if (op.type == OperationType::L2_POOL_2D && !isFloat)
            return unsupported(op, "L2_POOL_2D of float tensors only");
        if (!byteField(p->filterW) || !byteField(p->filterH))
            return unsupported(op, "filter size beyond the descriptor's 8 bits");
        return okStatus();
    }
    const bool depthwise = op.type == OperationType::DEPTHWISE_CONV_2D;
    NN_RETURN_IF_ERROR(
        isFloat ? floatWeightsSupported(c, op, depthwise, !depthwise || p->depthMultiplier == 1)
                : weightsSupported(c, op, depthwise));
    const Operand& filter = c.operand(op.inputs[1]);
    if (op.type == OperationType::CONV_2D && in.dimensions.size() == 4) {
        const uint32_t inC = in.dimensions[p->nchw ? 1 : 3];
        if (inC != 0 && filter.dimensions[3] != inC)
            return unsupported(op, "filter depth differs from the input's");
    }
    return okStatus();
}

Result<std::vector<uint32_t>> outputShape(const Lowering& lw, const Operation& op) {
    auto w = windowOf(lw, op);
    if (!w) return w.status();
    return windowOutputShape(w->g, w->p.nchw);
}

// NCHW operations run on NHWC copies of their input and output; L2_POOL_2D pools the squares.
std::vector<uint64_t> scratch(const Lowering& lw, const Operation& op) {
    auto p = decodeWindowParams(op.type, lw.constants().inputsOf(op));
    if (!p) return {};
    const uint32_t in = op.inputs[0], out = op.outputs[0];
    std::vector<uint64_t> areas;
    if (p->nchw)
        areas = {byteSize(lw.operand(in).type, lw.dims(in)),
                 byteSize(lw.operand(out).type, lw.dims(out))};
    if (op.type == OperationType::L2_POOL_2D)
        areas.push_back(byteSize(lw.operand(in).type, lw.dims(in)));
    return areas;
}

// ---------------------------------------------------------------------------------------------
// Layout copies and run-time weights (LUT identity copies).

npu::Descriptor identityCopy(Lowering& lw) {
    return lookupDescriptor(lw, OperandType::TENSOR_QUANT8_ASYMM, OperandType::TENSOR_QUANT8_ASYMM,
                            tableOf(OperandType::TENSOR_QUANT8_ASYMM, [](int32_t v) { return v; }));
}

// Copies a [N, A, B] tensor of `size`-byte elements to [N, B, A]: bytes on the array when it can
// (transposeOnArray), else in rows of one element, read with the source's strides and written
// with the destination's.
Status transpose(Lowering& lw, const Operation& op, uint32_t size, uint32_t src, uint32_t dst,
                 uint32_t n, uint32_t a, uint32_t b) {
    if (size != 1) {
        MoveEmitter move(lw, size, 0);
        const int64_t plane = int64_t{a} * b * size;
        return move.block(src, dst,
                          {{n, plane, plane},
                           {b, size, int64_t{a} * size},
                           {a, int64_t{b} * size, size},
                           {size, 1, 1}},
                          false);
    }
    if (transposeOnArray(lw, src, dst, n, a, b)) return okStatus();
    npu::Descriptor d = identityCopy(lw);
    if (a > kMaxCount || b > kMaxCount)
        return lw.fail(op, "layout transpose beyond the descriptor's 16 bits");
    // count1 runs over a chunk of a (the destination's inner dimension), count2 over b.
    const uint32_t words = npu::kSpadWords / 2;
    const uint32_t aChunk = std::min(a, words);
    const uint32_t bChunk = std::max(1u, words / aChunk);
    const uint32_t plane = a * b;
    for (uint32_t i = 0; i < n; ++i) {
        for (uint32_t a0 = 0; a0 < a; a0 += aChunk) {
            for (uint32_t b0 = 0; b0 < b; b0 += bChunk) {
                const uint32_t as = std::min(aChunk, a - a0), bs = std::min(bChunk, b - b0);
                npu::Descriptor t = d;
                t.a = {src + i * plane + a0 * b + b0, 1, as, b, bs, 1, 1, 0};
                t.out = {dst + i * plane + b0 * a + a0, 1, as, 1, bs, 1, a, 0};
                lw.emit(t);
            }
        }
    }
    return okStatus();
}

// Where a window operation reads and writes, in NHWC: the operands themselves, or for an NCHW
// operation the scratch copies that transposes fill and drain around it.
struct WindowIo {
    uint32_t inBase = 0, outBase = 0;
};

// `inputAsPlanes`: the operation loads its NCHW input in place (A_PLANAR), only its output is
// transposed.
Result<WindowIo> transposeIn(Lowering& lw, const Operation& op, const Window& w,
                             bool inputAsPlanes = false) {
    if (!w.p.nchw) return WindowIo{lw.address(op.inputs[0]), lw.address(op.outputs[0])};
    const WindowIo io{lw.scratch().at(0), lw.scratch().at(1)};
    if (inputAsPlanes) return io;
    NN_RETURN_IF_ERROR(transpose(lw, op, elementSize(lw.operand(op.inputs[0]).type),
                                 lw.address(op.inputs[0]), io.inBase, w.in[0], w.in[3],
                                 w.in[1] * w.in[2]));
    return io;
}

Status transposeOut(Lowering& lw, const Operation& op, const Window& w, const WindowIo& io) {
    if (!w.p.nchw) return okStatus();
    return transpose(lw, op, elementSize(lw.operand(op.outputs[0]).type), io.outBase,
                     lw.address(op.outputs[0]), w.out[0], w.out[1] * w.out[2], w.out[3]);
}

// scatterWeights for a TAPS depthwise stream (filter [1, kh, kw, C]): row t of a block is tap
// t's 16 channels, which lie together in the filter, so one copy of `taps` rows per block of
// kLanes channels.
void scatterTaps(Lowering& lw, uint32_t filter, uint32_t stream, uint32_t channels, uint32_t taps) {
    const npu::Descriptor d = identityCopy(lw);
    const uint32_t streamBlock = npu::kWeightQuantWords * kAlign + npu::kArrayRows * kLanes;
    for (uint32_t ob = 0; ob < ceilDiv(channels, kLanes); ++ob) {
        const uint32_t nc = std::min(kLanes, channels - ob * kLanes);
        npu::Descriptor t = d;
        t.a = {filter + ob * kLanes, nc, taps, channels, 1, 1, 0, 0};
        t.out = {stream + ob * streamBlock + npu::kWeightQuantWords * kAlign,
                 nc,
                 taps,
                 kLanes,
                 1,
                 1,
                 0,
                 0};
        lw.emit(t);
    }
}

// scatterWeights for a depthwise filter [1, kh, kw, C * m] run as a dense convolution: output
// channel o takes input channel o / m, so within a block the lanes n = r, r + m, ... of one
// residue r step one input channel each (a diagonal of slope m), one copy per residue.
void scatterExpandedDepthwise(Lowering& lw, uint32_t filter, uint32_t stream, uint32_t outC,
                              uint32_t inC, uint32_t kh, uint32_t kw, uint32_t m) {
    const npu::Descriptor d = identityCopy(lw);
    const npu::ConvWeightRows rows(inC, kh, kw);
    const uint32_t streamBlock =
        npu::kWeightQuantWords * kAlign + rows.kSteps() * npu::kArrayRows * kLanes;
    const auto blockOf = [&](uint32_t o) { return o / m / npu::kArrayRows; };
    for (uint32_t ob = 0; ob < ceilDiv(outC, kLanes); ++ob) {
        for (uint32_t y = 0; y < kh; ++y) {
            for (uint32_t x = 0; x < kw; ++x) {
                for (uint32_t n0 = 0; n0 < kLanes; ++n0) {
                    // Lanes n0, n0 + m, ... that stay in one input-channel block.
                    const uint32_t o0 = ob * kLanes + n0;
                    if (o0 >= outC || (n0 >= m && blockOf(o0 - m) == blockOf(o0)))
                        continue;  // part of the run of lane n0 - m
                    const uint32_t c0 = o0 / m, cb = c0 / npu::kArrayRows;
                    uint32_t count = 0;
                    for (uint32_t n = n0;
                         n < kLanes && ob * kLanes + n < outC && blockOf(ob * kLanes + n) == cb;
                         n += m)
                        ++count;
                    npu::Descriptor t = d;
                    t.a = {filter + (y * kw + x) * outC + o0, 1, count, m, 1, 1, 0, 0};
                    t.out = {stream + ob * streamBlock + npu::kWeightQuantWords * kAlign +
                                 rows.row(y * kw + x, c0) * kLanes + n0,
                             1,
                             count,
                             kLanes + m,
                             1,
                             1,
                             0,
                             0};
                    lw.emit(t);
                }
            }
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Convolutions.

// What lowering a convolution needs, from the operands and shapes alone (nothing placed in
// device memory), so that the fusion pass can try a lowering before the tensors are laid out.
struct ConvInfo {
    Window w;
    bool dw = false;     // DEPTHWISE_CONV_2D
    bool useDw = false;  // depth multiplier 1: DWCONV descriptors
    bool taps = false;   // in the array's TAPS mode (npu::depthwiseUsesTaps)
    uint32_t kh = 1, kw = 1, groups = 1, groupIn = 0, groupOut = 0;
    npu::ConvGeometry geometry;
    npu::OutputStage stage;
    std::vector<QuantizedMultiplier> multipliers;  // per output channel
    int32_t weightZero = 0;
    bool weightsSigned = false;
    const uint8_t* weights = nullptr;  // null: computed by the device at run time
    const uint8_t* bias = nullptr;
};

Result<ConvInfo> convInfo(const Lowering& lw, const Operation& op) {
    const Operand& in = lw.operand(op.inputs[0]);
    const Operand& filter = lw.operand(op.inputs[1]);
    const Operand& out = lw.operand(op.outputs[0]);
    auto w = windowOf(lw, op);
    if (!w) return lw.fail(op, w.status().message);
    ConvInfo c;
    c.w = *w;
    const WindowParams& p = w->p;
    c.dw = op.type == OperationType::DEPTHWISE_CONV_2D;
    const uint32_t inC = w->in[3], outC = w->out[3];
    c.kh = w->g.filterH, c.kw = w->g.filterW;
    c.groups = c.dw ? 1 : static_cast<uint32_t>(p.groups);
    c.groupIn = c.dw ? inC : inC / c.groups;
    c.groupOut = outC / c.groups;
    const auto format = floatFormat(in.type);
    if (format) {
        c.stage = floatStage(*format, p.activation);
    } else {
        auto multipliers = channelMultipliers(in, filter, lw.operand(op.inputs[2]), out, outC);
        auto range = activationRange(p.activation, out);
        if (!multipliers || !range) return lw.fail(op, "quantization");
        c.multipliers = std::move(*multipliers);
        c.stage = {out.zeroPoint, range->min, range->max};
    }
    const bool perChannel = filter.type == OperandType::TENSOR_QUANT8_SYMM_PER_CHANNEL;
    c.weightZero = perChannel ? 0 : filter.zeroPoint;
    c.weightsSigned = perChannel || isSigned(filter.type);
    c.weights = lw.constants().data(op.inputs[1]);
    c.bias = lw.constants().data(op.inputs[2]);
    if (!c.bias && !format) return lw.fail(op, "the bias must be known at compile time");
    c.geometry = {c.kh,
                  c.kw,
                  static_cast<uint32_t>(p.strideH),
                  static_cast<uint32_t>(p.strideW),
                  static_cast<uint32_t>(p.dilationH),
                  static_cast<uint32_t>(p.dilationW),
                  static_cast<uint32_t>(p.padH.head),
                  static_cast<uint32_t>(p.padW.head)};
    // Depthwise with multiplier 1 runs on DWCONV (TAPS when the kernel allows); other
    // multipliers as a dense convolution whose filter holds the weight zero point (+0) off the
    // multiplier's channels. Grouped convolution is one convolution per group.
    c.useDw = c.dw && p.depthMultiplier == 1;
    c.taps = c.useDw && npu::depthwiseUsesTaps(c.geometry);
    if (format && (!c.weights || !c.bias) &&
        (in.type != OperandType::TENSOR_FLOAT32 || (c.dw && !c.useDw)))
        return lw.fail(op, "this float filter must be known at compile time");
    return c;
}

// The binary32 weight stream of a float convolution's group g (npu::packFloatConvWeights /
// packFloatDepthwiseWeights); a filter or bias computed at run time is scattered into it.
Result<uint32_t> floatConvWeights(Lowering& lw, const Operation& op, const ConvInfo& c,
                                  uint32_t g) {
    const uint32_t inC = c.w.in[3], outC = c.w.out[3], kh = c.kh, kw = c.kw;
    const Operand& filter = lw.operand(op.inputs[1]);
    const size_t count = elementCount(filter.dimensions);
    const std::vector<float> weights =
        c.weights ? floatValues(filter.type, c.weights, count) : std::vector<float>(count, 0.0f);
    const std::vector<float> bias = c.bias
                                        ? floatValues(lw.operand(op.inputs[2]).type, c.bias, outC)
                                        : std::vector<float>(outC, 0.0f);
    const float* groupBias = bias.data() + size_t{g} * c.groupOut;
    const uint32_t size = elementSize(lw.operand(op.inputs[0]).type);
    std::vector<uint8_t> stream;
    if (c.useDw) {
        stream = npu::packFloatDepthwiseWeights(weights.data(), groupBias, outC, kh, kw, c.taps);
    } else if (c.dw) {
        const auto m = static_cast<uint32_t>(c.w.p.depthMultiplier);
        std::vector<float> dense(size_t{outC} * kh * kw * inC, 0.0f);
        for (uint32_t o = 0; o < outC; ++o) {
            for (uint32_t t = 0; t < kh * kw; ++t)
                dense[(size_t{o} * kh * kw + t) * inC + o / m] = weights[size_t{t} * outC + o];
        }
        stream = npu::packFloatConvWeights(dense.data(), groupBias, outC, kh, kw, inC, size);
    } else {
        const size_t groupSize = size_t{c.groupOut} * kh * kw * c.groupIn;
        stream = npu::packFloatConvWeights(weights.data() + g * groupSize, groupBias, c.groupOut,
                                           kh, kw, c.groupIn, size);
    }
    const uint32_t addr = lw.addConstant(stream.data(), stream.size());
    if (!c.weights || !c.bias) {
        NN_RETURN_IF_ERROR(scatterFloatWeights(lw, op, addr, c.useDw ? outC : c.groupOut,
                                               c.useDw ? 1 : c.groupIn, kh, kw, c.useDw, c.taps,
                                               c.useDw ? outC : c.groupIn, g * c.groupOut));
    }
    return addr;
}

// The weight stream of group g (npu::packConvWeights / packDepthwiseWeights). Weights the device
// computes at run time are scattered into a stream of placeholders (the weight zero point).
uint32_t convWeights(Lowering& lw, const Operation& op, const ConvInfo& c, uint32_t g) {
    const uint32_t inC = c.w.in[3], outC = c.w.out[3], kh = c.kh, kw = c.kw;
    std::vector<npu::ChannelQuant> quant(c.groupOut);
    for (uint32_t o = 0; o < c.groupOut; ++o) {
        const size_t channel = size_t{g} * c.groupOut + o;
        std::memcpy(&quant[o].bias, c.bias + channel * sizeof(int32_t), sizeof(int32_t));
        quant[o].multiplier = c.multipliers[channel].multiplier;
        quant[o].shift = c.multipliers[channel].shift;
    }
    const auto zero = static_cast<uint8_t>(c.weightZero);
    std::vector<uint8_t> placeholders, stream;
    if (c.useDw) {
        if (!c.weights) placeholders.assign(size_t{kh} * kw * outC, zero);
        stream = npu::packDepthwiseWeights(c.weights ? c.weights : placeholders.data(), outC, kh,
                                           kw, c.weightZero, quant, c.taps);
    } else if (c.dw) {
        // Output channel o of depth multiplier m reads input channel o / m only.
        const auto m = static_cast<uint32_t>(c.w.p.depthMultiplier);
        std::vector<uint8_t> dense(size_t{outC} * kh * kw * inC, zero);
        for (uint32_t o = 0; c.weights && o < outC; ++o) {
            for (uint32_t t = 0; t < kh * kw; ++t)
                dense[(size_t{o} * kh * kw + t) * inC + o / m] = c.weights[size_t{t} * outC + o];
        }
        stream = npu::packConvWeights(dense.data(), outC, kh, kw, inC, c.weightZero, quant);
    } else {
        const size_t groupBytes = size_t{c.groupOut} * kh * kw * c.groupIn;
        if (!c.weights) placeholders.assign(groupBytes, zero);
        stream = npu::packConvWeights(c.weights ? c.weights + g * groupBytes : placeholders.data(),
                                      c.groupOut, kh, kw, c.groupIn, c.weightZero, quant);
    }
    const uint32_t wAddr = lw.addConstant(stream.data(), stream.size());
    if (!c.weights) {
        const uint32_t filter = lw.address(op.inputs[1]);
        if (c.taps)
            scatterTaps(lw, filter, wAddr, outC, kh * kw);
        else if (!c.useDw && c.dw)
            scatterExpandedDepthwise(lw, filter, wAddr, outC, inC, kh, kw,
                                     static_cast<uint32_t>(c.w.p.depthMultiplier));
        else
            scatterWeights(lw, filter, wAddr, c.groupOut, c.groupIn, kh, kw, c.useDw,
                           c.dw ? outC : c.groupIn, g * c.groupOut);
    }
    return wAddr;
}

// Image n of a window operation's NHWC input or output, or its channel slice
// [first, first + channels).
npu::DeviceTensor imageOf(uint32_t base, const std::array<uint32_t, 4>& dims, uint32_t n,
                          uint32_t first, uint32_t channels, const Operand& operand) {
    const uint32_t size = elementSize(operand.type);  // the descriptors count bytes
    npu::DeviceTensor t;
    t.addr = base + (first + n * dims[1] * dims[2] * dims[3]) * size;
    t.h = dims[1];
    t.w = dims[2];
    t.c = channels * size;
    t.pixelStride = channels == dims[3] ? 0 : dims[3] * size;
    t.isSigned = isSigned(operand.type);
    t.zeroPoint = operand.zeroPoint;
    return t;
}

// Image n of an NHWC tensor of `dims` whose data lies in NCHW planes at `base`, as a convolution
// loads it with A_PLANAR.
npu::DeviceTensor planesOf(uint32_t base, const std::array<uint32_t, 4>& dims, uint32_t n,
                           const Operand& operand) {
    const uint32_t size = elementSize(operand.type);
    npu::DeviceTensor t = imageOf(base, dims, 0, 0, dims[3], operand);
    t.pixelStride = size;
    t.planeStride = dims[1] * dims[2] * size;
    t.addr = base + n * dims[3] * t.planeStride;
    return t;
}

// The fused pair's shapes: the depthwise layer's input, its result (on chip only) and the
// pointwise layer's output, image n (addresses 0 for the dry run of the fusion pass).
struct FusedTensors {
    npu::DeviceTensor input, intermediate, output;
};
FusedTensors fusedTensors(const Lowering& lw, const Operation& dw, const ConvInfo& a,
                          const Operation& pw, const ConvInfo& b, uint32_t n, uint32_t inBase,
                          uint32_t outBase) {
    FusedTensors t;
    t.input = imageOf(inBase, a.w.in, n, 0, a.w.in[3], lw.operand(dw.inputs[0]));
    t.intermediate = imageOf(0, a.w.out, 0, 0, a.w.out[3], lw.operand(dw.outputs[0]));
    t.output = imageOf(outBase, b.w.out, n, 0, b.w.out[3], lw.operand(pw.outputs[0]));
    return t;
}

// The weight stream of group g, binary32 for a float convolution.
Result<uint32_t> groupWeights(Lowering& lw, const Operation& op, const ConvInfo& c, uint32_t g) {
    if (c.stage.format != 0) return floatConvWeights(lw, op, c, g);
    return convWeights(lw, op, c, g);
}

npu::ConvLayer layerOf(const ConvInfo& c, uint32_t weights) {
    npu::ConvLayer layer{weights, c.weightsSigned, c.weightZero, c.geometry, c.stage};
    // A 1x1 kernel's dilation changes nothing; the chained CONV takes the plain geometry.
    if (c.kh == 1 && c.kw == 1) layer.geometry.dilationH = layer.geometry.dilationW = 1;
    return layer;
}

// ---------------------------------------------------------------------------------------------
// Residual connections: an ADD of a convolution's result (which nothing else reads) and a
// tensor ready before the convolution runs is done in the convolution's drain
// (DescFlag::RESIDUAL), and the convolution writes the ADD's output.

// The residual the drain of the convolution writing `convOutput` adds for `add`, image n of the
// other input at `partnerBase` (0: a dry run); nullopt when the ADD has no exact parameters.
std::optional<npu::ChainBuilder::Residual> drainResidual(const Lowering& lw, const Operation& add,
                                                         uint32_t convOutput, uint32_t n,
                                                         uint32_t partnerBase) {
    const uint32_t partner = add.inputs[0] == convOutput ? add.inputs[1] : add.inputs[0];
    const Operand& c = lw.operand(convOutput);
    const Operand& p = lw.operand(partner);
    const Operand& out = lw.operand(add.outputs[0]);
    const auto act = lw.constants().scalar<int32_t>(add.inputs[2]);
    const auto range = act ? activationRange(*act, out) : std::nullopt;
    if (!range) return std::nullopt;
    const auto params = fixedpoint::computeAddSubParams(
        {c.scale, c.zeroPoint}, {p.scale, p.zeroPoint}, {out.scale, out.zeroPoint}, *range, false);
    if (!params) return std::nullopt;
    const auto& d = lw.dims(partner);
    npu::ChainBuilder::Residual r;
    r.tensor = imageOf(partnerBase, {d[0], d[1], d[2], d[3]}, n, 0, d[3], p);
    r.midZeroPoint = c.zeroPoint;
    r.params = {fixedpoint::AddSubParams::kLeftShift,
                params->input1.multiplier,
                params->input1.shift,
                params->input2.multiplier,
                params->input2.shift,
                params->output.multiplier,
                params->output.shift,
                {params->outputOffset, range->min, range->max}};
    return r;
}

// Image n of convolution `conv`'s residual and the output it then writes (the ADD's), or
// nothing and `output` when no ADD is done in its drain.
std::pair<std::optional<npu::ChainBuilder::Residual>, npu::DeviceTensor> residualAndSum(
    Lowering& lw, uint32_t conv, uint32_t n, const npu::DeviceTensor& output) {
    const auto addIndex = lw.drainAddOf(conv);
    if (!addIndex) return {std::nullopt, output};
    const auto& ops = lw.model().main.operations;
    const Operation& add = ops[*addIndex];
    const uint32_t convOutput = ops[conv].outputs[0];
    const uint32_t partner = add.inputs[0] == convOutput ? add.inputs[1] : add.inputs[0];
    npu::DeviceTensor sum = output;
    const auto& d = lw.dims(add.outputs[0]);
    sum.addr = lw.address(add.outputs[0]) + n * d[1] * d[2] * d[3];
    return {drainResidual(lw, add, convOutput, n, lw.address(partner)), sum};
}

// The expansion `e` before a fused depthwise layer of input `dwInput` (a ConvInfo's window):
// its ConvInfo when it is a 1x1 convolution, stride 1, no padding, NHWC, quantized, of one
// group, whose result is that input.
std::optional<ConvInfo> expansionInfo(Lowering& lw, uint32_t e,
                                      const std::array<uint32_t, 4>& dwInput) {
    const Operation& op = lw.model().main.operations[e];
    if (op.type != OperationType::CONV_2D) return std::nullopt;
    lw.setOpIndex(e);
    auto x = convInfo(lw, op);
    if (!x || x->w.p.nchw || x->kh != 1 || x->kw != 1 || x->groups != 1 || x->stage.format != 0 ||
        x->w.p.strideH != 1 || x->w.p.strideW != 1 || x->w.p.padH.head || x->w.p.padH.tail ||
        x->w.p.padW.head || x->w.p.padW.tail || x->w.out != dwInput)
        return std::nullopt;
    return std::move(*x);
}

// Image n of an expansion's input.
npu::DeviceTensor expansionInput(const Lowering& lw, const Operation& e, const ConvInfo& x,
                                 uint32_t n, uint32_t base) {
    return imageOf(base, x.w.in, n, 0, x.w.in[3], lw.operand(e.inputs[0]));
}

// The depthwise operation `dwIndex` fused with the pointwise `pw` (the current operation), and
// with the expansion before it when that is fused too: weight streams of all, then per image
// and tile the expansion's CONV (CHAIN_OUT), a DWCONV (TAPS, CHAIN_OUT) and a CONV (CHAIN_IN),
// each tagged with its operation.
Status lowerFused(Lowering& lw, uint32_t dwIndex, const Operation& pw) {
    const auto& ops = lw.model().main.operations;
    const Operation& dw = ops[dwIndex];
    const uint32_t pwIndex = lw.opIndex();
    const std::optional<uint32_t> eIndex = lw.fusedFrom(dwIndex);
    lw.setOpIndex(dwIndex);
    auto a = convInfo(lw, dw);
    NN_RETURN_IF_ERROR(a.status());
    std::optional<ConvInfo> x;
    std::optional<npu::Expansion> expansion;
    if (eIndex) {
        x = expansionInfo(lw, *eIndex, a->w.in);
        if (!x) return lw.fail(ops[*eIndex], "the fused expansion is not a 1x1 convolution");
        expansion = npu::Expansion{{}, layerOf(*x, convWeights(lw, ops[*eIndex], *x, 0))};
    }
    lw.setOpIndex(dwIndex);
    const auto dwWeights = groupWeights(lw, dw, *a, 0);  // run-time weights: dw's copies
    NN_RETURN_IF_ERROR(dwWeights.status());
    lw.setOpIndex(pwIndex);
    auto b = convInfo(lw, pw);
    NN_RETURN_IF_ERROR(b.status());
    const auto pwWeights = groupWeights(lw, pw, *b, 0);
    NN_RETURN_IF_ERROR(pwWeights.status());
    // A fused expansion's result, the depthwise input, stays on chip: no address.
    const uint32_t inBase = eIndex ? 0 : lw.address(dw.inputs[0]);
    const uint32_t outBase = lw.address(pw.outputs[0]);  // 0 when an ADD in the drain writes
    for (uint32_t n = 0; n < a->w.in[0]; ++n) {
        FusedTensors t = fusedTensors(lw, dw, *a, pw, *b, n, inBase, outBase);
        const auto [residual, output] = residualAndSum(lw, pwIndex, n, t.output);
        t.output = output;
        if (expansion) {
            const Operation& e = ops[*eIndex];
            expansion->input = expansionInput(lw, e, *x, n, lw.address(e.inputs[0]));
        }
        npu::ChainBuilder chain;
        const Status st =
            chain.depthwisePointwise(t.input, layerOf(*a, *dwWeights), t.intermediate,
                                     layerOf(*b, *pwWeights), t.output, expansion, residual);
        if (!st.ok()) return lw.fail(pw, st.message);
        for (const npu::Descriptor& d : chain.descriptors()) {
            const bool chainOut = d.flags & static_cast<uint32_t>(npu::DescFlag::CHAIN_OUT);
            lw.emit(d, !chainOut                         ? std::nullopt
                       : d.opcode == npu::Opcode::DWCONV ? std::optional(dwIndex)
                                                         : eIndex);
        }
    }
    return okStatus();
}

Status lowerConv(Lowering& lw, const Operation& op) {
    if (lw.isFusedIntoLater(lw.opIndex())) return okStatus();  // with its pointwise layer
    if (auto from = lw.fusedFrom(lw.opIndex())) return lowerFused(lw, *from, op);
    auto info = convInfo(lw, op);
    NN_RETURN_IF_ERROR(info.status());
    const ConvInfo& c = *info;
    const Operand& in = lw.operand(op.inputs[0]);
    const Operand& out = lw.operand(op.outputs[0]);
    // An NCHW input of at most 4 channels, or an image a TRANSPOSE left in NCHW, is read in
    // place as planes (ChainBuilder::conv).
    const bool nchwPlanes = c.w.p.nchw && c.groups == 1 && !c.dw && c.w.in[3] <= 4;
    auto io = transposeIn(lw, op, c.w, nchwPlanes);
    NN_RETURN_IF_ERROR(io.status());
    const auto planes = nchwPlanes ? std::optional(op.inputs[0]) : lw.planarSource(op.inputs[0]);
    for (uint32_t g = 0; g < c.groups; ++g) {
        auto weights = groupWeights(lw, op, c, g);
        NN_RETURN_IF_ERROR(weights.status());
        for (uint32_t n = 0; n < c.w.in[0]; ++n) {
            const auto input =
                planes ? planesOf(lw.address(*planes), c.w.in, n, in)
                       : imageOf(io->inBase, c.w.in, n, c.dw ? 0 : g * c.groupIn, c.groupIn, in);
            // An ADD done in the drain (one group, NHWC) writes its output instead.
            const auto [residual, output] =
                residualAndSum(lw, lw.opIndex(), n,
                               imageOf(io->outBase, c.w.out, n, g * c.groupOut, c.groupOut, out));
            npu::ChainBuilder chain;
            const Status st = c.useDw ? chain.depthwise(input, output, *weights, c.weightsSigned,
                                                        c.weightZero, c.geometry, c.stage, c.taps)
                                      : chain.conv(input, output, *weights, c.weightsSigned,
                                                   c.weightZero, c.geometry, c.stage, 0, residual);
            if (!st.ok()) return lw.fail(op, st.message);
            lw.emitChain(chain);
        }
    }
    return transposeOut(lw, op, c.w, *io);
}

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
// TRANSPOSE_CONV_2D.
//
// A transposed convolution is a stride-1 convolution, with the filter turned by 180 degrees, over
// the input spread out by the strides: input pixel (h, w) lands at (h * strideH + kh - 1 - top,
// w * strideW + kw - 1 - left) of a canvas of (outH + kh - 1) x (outW + kw - 1) pixels, so that a
// VALID convolution of the canvas has the output's size. The canvas is the input's zero point
// elsewhere, which contributes (zero point - zero point) * weight = 0 to every sum, as the
// golden's scatter of products does; the sums and their requantization are a convolution's, so
// the result is bit-exact. The canvas is written by two strided copies (a fill, then the input);
// the stride's gaps cost array time (stride^2 more taps), not correctness.

Result<TransposeConvWindow> transposeConvOf(
    const Constants& c, const Operation& op,
    const std::function<std::vector<uint32_t>(uint32_t)>& dims) {
    std::optional<std::vector<int32_t>> outputShape;
    if (op.inputs.size() == 9) {
        if (const uint8_t* p = c.data(op.inputs[3])) {
            outputShape.emplace(elementCount(dims(op.inputs[3])));
            std::memcpy(outputShape->data(), p, outputShape->size() * sizeof(int32_t));
        }
    }
    return transposeConvWindow(c.inputsOf(op), dims(op.inputs[0]), dims(op.inputs[1]),
                               dims(op.inputs[2]), outputShape);
}

// The canvas's NHWC dimensions.
std::array<uint32_t, 4> canvasOf(const WindowGeometry& g) {
    return {g.batches, g.outH + g.filterH - 1, g.outW + g.filterW - 1, g.inC};
}

Status transposeConvSupported(const Model& model, const Operation& op) {
    const Constants c(model);
    const Operand& in = c.operand(op.inputs[0]);
    const Operand& out = c.operand(op.outputs[0]);
    const bool isFloat = floatFormat(in.type).has_value();
    if ((!isQuant8(in.type) && !isFloat) || out.type != in.type)
        return unsupported(op, "only 8-bit quantized, float32 and float16 tensors");
    NN_RETURN_IF_ERROR(isFloat ? floatWeightsSupported(c, op, false, false)
                               : weightsSupported(c, op, false));
    const auto activation = c.scalar<int32_t>(op.inputs[op.inputs.size() == 11 ? 9 : 7]);
    if (!activation ||
        (isFloat ? *activation < 0 || *activation > 3 : !activationRange(*activation, out)))
        return unsupported(op, "activation");
    // The canvas must fit the convolution's descriptors, when the shapes are already known.
    const bool shapeKnown = op.inputs.size() == 11 || c.isConstant(op.inputs[3]);
    if (!shapeKnown || elementCount(in.dimensions) == 0) return okStatus();
    auto w = transposeConvOf(c, op, [&c](uint32_t k) { return c.operand(k).dimensions; });
    if (!w) return unsupported(op, w.status().message);
    const auto canvas = canvasOf(w->g);
    if (canvas[1] > kMaxCount || canvas[2] > kMaxCount ||
        canvas[3] * elementSize(in.type) > kMaxCount)
        return unsupported(op, "the spread input is beyond the descriptor's 16 bits");
    return okStatus();
}

Result<std::vector<uint32_t>> transposeConvOutputShape(const Lowering& lw, const Operation& op) {
    auto w = transposeConvOf(lw.constants(), op, [&lw](uint32_t k) { return lw.dims(k); });
    if (!w) return w.status();
    return windowOutputShape(w->g, w->p.nchw);
}

// The canvas; for NCHW an NHWC copy of the output; for a filter computed at run time its turned
// copy.
std::vector<uint64_t> transposeConvScratch(const Lowering& lw, const Operation& op) {
    auto w = transposeConvOf(lw.constants(), op, [&lw](uint32_t k) { return lw.dims(k); });
    if (!w) return {};
    const auto canvas = canvasOf(w->g);
    std::vector<uint64_t> areas{uint64_t{canvas[0]} * canvas[1] * canvas[2] * canvas[3] *
                                elementSize(lw.operand(op.inputs[0]).type)};
    if (w->p.nchw)
        areas.push_back(byteSize(lw.operand(op.outputs[0]).type, lw.dims(op.outputs[0])));
    if (!lw.constants().data(op.inputs[1])) areas.push_back(elementCount(lw.dims(op.inputs[1])));
    return areas;
}

// Input indices i with 0 <= i * stride + offset < size: the first and how many.
std::pair<int64_t, int64_t> placedRange(uint32_t inSize, int32_t stride, int64_t offset,
                                        uint32_t size) {
    const int64_t first = offset < 0 ? (-offset + stride - 1) / stride : 0;
    const int64_t end = std::min<int64_t>(inSize, (int64_t{size} - 1 - offset) / stride + 1);
    return {first, std::max<int64_t>(0, end - first)};
}

// The canvas: the zero point (+0 for floats), then each input pixel at its place (those outside
// it cropped).
Status spreadInput(Lowering& lw, const Operation& op, const TransposeConvWindow& tc,
                   uint32_t canvasBase) {
    const WindowGeometry& g = tc.g;
    const WindowParams& p = tc.p;
    const auto canvas = canvasOf(g);
    const Operand& in = lw.operand(op.inputs[0]);
    const uint32_t size = elementSize(in.type);
    // Byte strides; elements of `size` bytes.
    const int64_t row = int64_t{canvas[2]} * canvas[3] * size;
    MoveEmitter move(lw, size, static_cast<uint8_t>(in.zeroPoint));
    NN_RETURN_IF_ERROR(
        move.block(0, canvasBase,
                   {{canvas[0] * canvas[1], 0, row}, {static_cast<uint32_t>(row), 1, 1}}, true));
    const int64_t top = int64_t{g.filterH} - 1 - p.padH.head;
    const int64_t left = int64_t{g.filterW} - 1 - p.padW.head;
    const auto [h0, hCount] = placedRange(g.inH, p.strideH, top, canvas[1]);
    const auto [w0, wCount] = placedRange(g.inW, p.strideW, left, canvas[2]);
    if (hCount == 0 || wCount == 0) return okStatus();
    // The input's element strides along N, H, W and C in its layout.
    const int64_t plane = int64_t{g.inH} * g.inW * size, pixel = int64_t{canvas[3]} * size;
    const std::array<int64_t, 4> s =
        p.nchw ? std::array<int64_t, 4>{plane * g.inC, g.inW * size, size, plane}
               : std::array<int64_t, 4>{plane * g.inC, int64_t{g.inW} * g.inC * size, g.inC * size,
                                        size};
    const int64_t from = h0 * s[1] + w0 * s[2];
    const int64_t to = (h0 * p.strideH + top) * row + (w0 * p.strideW + left) * pixel;
    std::vector<MoveDim> dims = {{g.batches, s[0], row * canvas[1]},
                                 {static_cast<uint32_t>(hCount), s[1], p.strideH * row},
                                 {static_cast<uint32_t>(wCount), s[2], p.strideW * pixel},
                                 {g.inC, s[3], size}};
    if (size > 1) dims.push_back({size, 1, 1});
    return move.block(lw.address(op.inputs[0]) + static_cast<uint32_t>(from),
                      canvasBase + static_cast<uint32_t>(to), dims, false);
}

// A filter OHWI turned by 180 degrees in height and width: the transposed convolution's filter
// as a convolution's.
template <typename T>
std::vector<T> turnedFilter(const T* weights, uint32_t outC, uint32_t kh, uint32_t kw, uint32_t inC,
                            T fill) {
    std::vector<T> turned(size_t{outC} * kh * kw * inC, fill);
    for (uint32_t o = 0; weights && o < outC; ++o) {
        for (uint32_t y = 0; y < kh; ++y) {
            for (uint32_t x = 0; x < kw; ++x) {
                std::copy_n(weights + ((size_t{o} * kh + (kh - 1 - y)) * kw + (kw - 1 - x)) * inC,
                            inC, &turned[((size_t{o} * kh + y) * kw + x) * inC]);
            }
        }
    }
    return turned;
}

// A float transposed convolution's binary32 stream (constant filter and bias).
uint32_t floatTurnedWeights(Lowering& lw, const Operation& op, const WindowGeometry& g,
                            const uint8_t* weights, const uint8_t* bias) {
    const OperandType type = lw.operand(op.inputs[0]).type;
    const uint32_t kh = g.filterH, kw = g.filterW, inC = g.inC, outC = g.outC;
    const auto w = floatValues(type, weights, size_t{outC} * kh * kw * inC);
    const auto b = floatValues(type, bias, outC);
    const auto turned = turnedFilter(w.data(), outC, kh, kw, inC, 0.0f);
    const auto stream =
        npu::packFloatConvWeights(turned.data(), b.data(), outC, kh, kw, inC, elementSize(type));
    return lw.addConstant(stream.data(), stream.size());
}

Status lowerTransposeConv(Lowering& lw, const Operation& op) {
    auto tc = transposeConvOf(lw.constants(), op, [&lw](uint32_t k) { return lw.dims(k); });
    if (!tc) return lw.fail(op, tc.status().message);
    const WindowGeometry& g = tc->g;
    const Operand& in = lw.operand(op.inputs[0]);
    const Operand& filter = lw.operand(op.inputs[1]);
    const Operand& out = lw.operand(op.outputs[0]);
    const uint32_t canvasBase = lw.scratch().at(0);
    NN_RETURN_IF_ERROR(spreadInput(lw, op, *tc, canvasBase));

    // The convolution with the turned filter.
    const uint32_t kh = g.filterH, kw = g.filterW, inC = g.inC, outC = g.outC;
    const uint8_t* weights = lw.constants().data(op.inputs[1]);  // null: computed at run time
    const uint8_t* bias = lw.constants().data(op.inputs[2]);
    if (!bias) return lw.fail(op, "the bias must be known at compile time");
    const npu::ConvGeometry geometry{kh, kw, 1, 1, 1, 1, 0, 0};
    const std::array<uint32_t, 4> outDims{g.batches, g.outH, g.outW, outC};
    const uint32_t outBase = tc->p.nchw ? lw.scratch().at(1) : lw.address(op.outputs[0]);
    // One convolution per image over the canvas.
    const auto convolve = [&](uint32_t weightAddr, bool weightsSigned, int32_t weightZero,
                              const npu::OutputStage& stage) -> Status {
        for (uint32_t n = 0; n < g.batches; ++n) {
            npu::ChainBuilder chain;
            const Status st = chain.conv(imageOf(canvasBase, canvasOf(g), n, 0, inC, in),
                                         imageOf(outBase, outDims, n, 0, outC, out), weightAddr,
                                         weightsSigned, weightZero, geometry, stage);
            if (!st.ok()) return lw.fail(op, st.message);
            lw.emitChain(chain);
        }
        if (!tc->p.nchw) return okStatus();
        return transpose(lw, op, elementSize(out.type), outBase, lw.address(op.outputs[0]),
                         g.batches, g.outH * g.outW, outC);
    };
    if (auto format = floatFormat(in.type)) {
        if (!weights) return lw.fail(op, "the float filter must be known at compile time");
        return convolve(floatTurnedWeights(lw, op, g, weights, bias), false, 0,
                        floatStage(*format, tc->p.activation));
    }
    auto multipliers = channelMultipliers(in, filter, lw.operand(op.inputs[2]), out, outC);
    auto range = activationRange(tc->p.activation, out);
    if (!multipliers || !range) return lw.fail(op, "quantization");
    const bool perChannel = filter.type == OperandType::TENSOR_QUANT8_SYMM_PER_CHANNEL;
    const int32_t weightZero = perChannel ? 0 : filter.zeroPoint;
    const bool weightsSigned = perChannel || isSigned(filter.type);
    const auto turned = turnedFilter(weights, outC, kh, kw, inC, static_cast<uint8_t>(weightZero));
    std::vector<npu::ChannelQuant> quant(outC);
    for (uint32_t o = 0; o < outC; ++o) {
        std::memcpy(&quant[o].bias, bias + size_t{o} * sizeof(int32_t), sizeof(int32_t));
        quant[o].multiplier = (*multipliers)[o].multiplier;
        quant[o].shift = (*multipliers)[o].shift;
    }
    const auto stream = npu::packConvWeights(turned.data(), outC, kh, kw, inC, weightZero, quant);
    const uint32_t weightAddr = lw.addConstant(stream.data(), stream.size());
    if (!weights) {
        // The filter turned by a copy with negative strides, then scattered into the stream.
        const uint32_t turnedBase = lw.scratch().back();
        const int64_t c = inC, tap = int64_t{kw} * inC;
        MoveEmitter move(lw, 1, 0);
        NN_RETURN_IF_ERROR(move.block(
            lw.address(op.inputs[1]) +
                static_cast<uint32_t>((int64_t{kh} - 1) * tap + (kw - 1) * c),
            turnedBase, {{outC, kh * tap, kh * tap}, {kh, -tap, tap}, {kw, -c, c}, {inC, 1, 1}},
            false));
        scatterWeights(lw, turnedBase, weightAddr, outC, inC, kh, kw, false, inC, 0);
    }
    return convolve(weightAddr, weightsSigned, weightZero, {out.zeroPoint, range->min, range->max});
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

// Fills the weight slots of a stream packed with placeholders from weights the device computes
// at run time (OHWI bytes at `filter`, `filterC` input channels per filter row, output channels
// from `firstOut`): one LUT identity copy per block and K step, reading input channels along k
// and output channels along n.
void scatterWeights(Lowering& lw, uint32_t filter, uint32_t stream, uint32_t outC, uint32_t inC,
                    uint32_t kh, uint32_t kw, bool depthwise, uint32_t filterC, uint32_t firstOut) {
    const npu::Descriptor d = identityCopy(lw);
    const npu::ConvWeightRows rows(inC, kh, kw);
    const uint32_t cBlocks = depthwise ? 1 : rows.words();
    const uint32_t kSteps = depthwise ? kh * kw : rows.kSteps();
    const uint32_t streamBlock =
        npu::kWeightQuantWords * kAlign + kSteps * npu::kArrayRows * kLanes;
    const uint32_t rowStride = kh * kw * filterC;  // between output channels of the filter
    for (uint32_t ob = 0; ob < ceilDiv(outC, kLanes); ++ob) {
        const uint32_t nc = std::min(kLanes, outC - ob * kLanes);
        for (uint32_t y = 0; y < kh; ++y) {
            for (uint32_t x = 0; x < kw; ++x) {
                for (uint32_t cb = 0; cb < cBlocks; ++cb) {
                    // A diagonal block per tap, or the rows of the tap's channel block.
                    const uint32_t row = depthwise ? (y * kw + x) * npu::kArrayRows
                                                   : rows.row(y * kw + x, cb * npu::kArrayRows);
                    const uint32_t block =
                        stream + ob * streamBlock + npu::kWeightQuantWords * kAlign + row * kLanes;
                    npu::Descriptor t = d;
                    if (depthwise) {  // [1, kh, kw, C]: lane n on the block's diagonal
                        t.a = {filter + (y * kw + x) * filterC + ob * kLanes, 1, nc, 1, 1, 1, 0, 0};
                        t.out = {block, 1, nc, kLanes + 1, 1, 1, 0, 0};
                    } else {
                        const uint32_t kc = std::min(npu::kArrayRows, inC - cb * npu::kArrayRows);
                        const uint32_t o0 = firstOut + ob * kLanes;
                        t.a = {filter + ((o0 * kh + y) * kw + x) * filterC + cb * npu::kArrayRows,
                               1,
                               kc,
                               1,
                               nc,
                               1,
                               rowStride,
                               0};
                        t.out = {block, 1, kc, kLanes, nc, 1, 1, 0};
                    }
                    lw.emit(t);
                }
            }
        }
    }
}

Status scatterFloatWeights(Lowering& lw, const Operation& op, uint32_t stream, uint32_t outC,
                           uint32_t inC, uint32_t kh, uint32_t kw, bool depthwise, bool taps,
                           uint32_t filterC, uint32_t firstOut) {
    // The filter (input 1) and the bias (input 2) computed at run time.
    const auto runtime = [&](uint32_t k) -> std::optional<uint32_t> {
        if (lw.constants().data(op.inputs[k])) return std::nullopt;
        return lw.address(op.inputs[k]);
    };
    const std::optional<uint32_t> filter = runtime(1), bias = runtime(2);
    constexpr int64_t kRow = npu::kFloatWeightRowWords * kAlign, kBlock = npu::kArrayRows * kRow;
    // A filter computed at run time is float32 (convInfo claims no other).
    const npu::ConvWeightRows rows(inC, kh, kw, 4);
    const uint32_t cBlocks = depthwise ? 1 : ceilDiv(inC, npu::kArrayRows);
    const uint32_t steps = taps ? 1 : depthwise ? kh * kw : rows.kSteps();  // TAPS: row t = tap t
    const int64_t streamBlock = npu::kWeightQuantWords * kAlign + steps * kBlock;
    const int64_t rowStride = int64_t{kh} * kw * filterC * 4;  // between output channels
    MoveEmitter move(lw, 4, 0);
    for (uint32_t ob = 0; ob < ceilDiv(outC, kLanes); ++ob) {
        const uint32_t nc = std::min(kLanes, outC - ob * kLanes), o0 = firstOut + ob * kLanes;
        const auto at = [&](int64_t offset) { return static_cast<uint32_t>(offset); };
        const uint32_t quant = stream + at(ob * streamBlock);
        if (bias)
            NN_RETURN_IF_ERROR(move.block(*bias + o0 * 4, quant, {{nc, 4, 4}, {4, 1, 1}}, false));
        for (uint32_t t = 0; filter && t < kh * kw; ++t) {
            for (uint32_t cb = 0; cb < cBlocks; ++cb) {
                const uint32_t rows0 = quant + npu::kWeightQuantWords * kAlign;
                if (taps) {  // [1, kh, kw, C]: row t of the block
                    NN_RETURN_IF_ERROR(move.block(*filter + (t * filterC + o0) * 4,
                                                  rows0 + t * kRow, {{nc, 4, 4}, {4, 1, 1}},
                                                  false));
                } else if (depthwise) {  // [1, kh, kw, C]: lane n on the block's diagonal
                    NN_RETURN_IF_ERROR(move.block(*filter + (t * filterC + o0) * 4,
                                                  rows0 + at(t * kBlock),
                                                  {{nc, 4, kRow + 4}, {4, 1, 1}}, false));
                } else {
                    // The block's channels are consecutive rows (ConvWeightRows), PACK or not.
                    const uint32_t kc = std::min(npu::kArrayRows, inC - cb * npu::kArrayRows);
                    const uint32_t row = rows.row(t, cb * npu::kArrayRows);
                    NN_RETURN_IF_ERROR(
                        move.block(*filter + at(o0 * rowStride) + (t * filterC + cb * kLanes) * 4,
                                   rows0 + at(row * kRow),
                                   {{nc, rowStride, 4}, {kc, 4, kRow}, {4, 1, 1}}, false));
                }
            }
        }
    }
    return okStatus();
}

// Depthwise layers (multiplier 1, TAPS, NHWC) whose result only a 1x1 convolution (stride 1, no
// padding, NHWC) reads and which is not a model output run fused with it
// (npu::ChainBuilder::depthwisePointwise) where that pays (npu::depthwisePointwisePays): the
// intermediate tensor never goes to DRAM. Decided before the tensors are laid out, so that the
// intermediate gets no memory.
void planDepthwisePointwiseFusion(Lowering& lw) {
    const auto& g = lw.model().main;
    std::vector<uint32_t> uses(g.operands.size(), 0);
    for (const Operation& op : g.operations) {
        for (uint32_t k : op.inputs) ++uses[k];
    }
    for (uint32_t k : g.outputIndexes) ++uses[k];  // a model output is read by the host
    for (uint32_t i = 0; i < g.operations.size(); ++i) {
        const Operation& dw = g.operations[i];
        if (dw.type != OperationType::DEPTHWISE_CONV_2D || uses[dw.outputs[0]] != 1) continue;
        uint32_t j = i + 1;
        while (j < g.operations.size() && g.operations[j].inputs[0] != dw.outputs[0]) ++j;
        if (j == g.operations.size() || g.operations[j].type != OperationType::CONV_2D) continue;
        const Operation& pw = g.operations[j];
        lw.setOpIndex(i);
        auto a = convInfo(lw, dw);
        lw.setOpIndex(j);
        auto b = convInfo(lw, pw);
        if (!a || !b || !a->taps || a->w.p.nchw || b->w.p.nchw || b->kh != 1 || b->kw != 1 ||
            b->w.p.strideH != 1 || b->w.p.strideW != 1 || b->w.p.padH.head || b->w.p.padH.tail ||
            b->w.p.padW.head || b->w.p.padW.tail || a->w.out != b->w.in ||
            a->w.out[1] != b->w.out[1] || a->w.out[2] != b->w.out[2])
            continue;
        // Fused only where it pays (tiles large enough to hide the pointwise weights that
        // stream again per tile) and where the builder accepts the pair (a dry run).
        const FusedTensors t = fusedTensors(lw, dw, *a, pw, *b, 0, 0, 0);
        if (!npu::depthwisePointwisePays(t.input, a->geometry, t.intermediate, t.output,
                                         a->stage.format))
            continue;
        npu::ChainBuilder chain;
        if (!chain
                 .depthwisePointwise(t.input, layerOf(*a, 0), t.intermediate, layerOf(*b, 0),
                                     t.output)
                 .ok())
            continue;
        lw.fuse(i, j, dw.outputs[0]);
        // The expansion before the pair (8-bit), when only the depthwise layer reads its result
        // and it is no fused pair's second layer itself.
        if (a->stage.format != 0) continue;
        uint32_t e = 0;
        while (e < i && g.operations[e].outputs[0] != dw.inputs[0]) ++e;
        if (e == i || uses[dw.inputs[0]] != 1 || lw.fusedFrom(e)) continue;
        const auto x = expansionInfo(lw, e, a->w.in);
        if (!x) continue;
        const npu::DeviceTensor in = expansionInput(lw, g.operations[e], *x, 0, 0);
        if (!npu::expansionPays(in, t.input, a->geometry, t.intermediate, t.output)) continue;
        npu::ChainBuilder triple;
        if (!triple
                 .depthwisePointwise(t.input, layerOf(*a, 0), t.intermediate, layerOf(*b, 0),
                                     t.output, npu::Expansion{in, layerOf(*x, 0)})
                 .ok())
            continue;
        lw.fuse(e, i, dw.inputs[0]);
    }
}

// An image that a converted model transposes from NCHW to NHWC for its first convolutions (at
// most 4 channels, as ChainBuilder::conv takes planes) is not transposed: the TRANSPOSE writes
// nothing, and each convolution reading its result loads its tiles from the NCHW planes.
void planPlanarInputs(Lowering& lw) {
    const auto& g = lw.model().main;
    for (uint32_t i = 0; i < g.operations.size(); ++i) {
        const Operation& t = g.operations[i];
        if (t.type != OperationType::TRANSPOSE || t.inputs.size() != 2) continue;
        const uint32_t nchw = t.inputs[0], nhwc = t.outputs[0];
        const uint8_t* perm = lw.constants().data(t.inputs[1]);
        const std::array<int32_t, 4> toNhwc{0, 2, 3, 1};
        if (lw.dims(nchw).size() != 4 || lw.dims(nchw)[1] > 4 || !perm ||
            lw.constants().length(t.inputs[1]) != sizeof(toNhwc) ||
            std::memcmp(perm, toNhwc.data(), sizeof(toNhwc)) != 0 ||
            std::count(g.outputIndexes.begin(), g.outputIndexes.end(), nhwc) != 0)
            continue;
        bool onlyConvolutions = true;
        for (uint32_t j = 0; j < g.operations.size() && onlyConvolutions; ++j) {
            const Operation& op = g.operations[j];
            if (std::count(op.inputs.begin(), op.inputs.end(), nhwc) == 0) continue;
            lw.setOpIndex(j);
            const auto c = op.type == OperationType::CONV_2D && op.inputs[0] == nhwc &&
                                   std::count(op.inputs.begin(), op.inputs.end(), nhwc) == 1 &&
                                   !lw.isFusedIntoLater(j) && !lw.fusedFrom(j) && !lw.drainAddOf(j)
                               ? convInfo(lw, op)
                               : Result<ConvInfo>(invalidArgument("not a plain convolution"));
            onlyConvolutions = c.ok() && !c->w.p.nchw && c->groups == 1 && !c->dw;
        }
        if (onlyConvolutions) lw.readAsPlanes(i, nhwc, nchw);
    }
}

// An ADD whose one input is a convolution's result that nothing else reads, the other ready
// before the convolution runs (produced earlier, a model input or a constant), all of one shape:
// done in the convolution's drain when the convolution is 8-bit, NHWC, of one group, without
// PACK and clamps nothing (the ADD takes its result unclamped), and when the weight streams of
// the tiles B's room in the buffers adds cost less than the ADD's pass (reading both inputs and
// writing the sum, of which B's load remains: twice the output's words).
void planResidualAdds(Lowering& lw) {
    const auto& g = lw.model().main;
    std::vector<uint32_t> uses(g.operands.size(), 0);
    std::vector<std::optional<uint32_t>> producer(g.operands.size());
    for (uint32_t i = 0; i < g.operations.size(); ++i) {
        for (uint32_t k : g.operations[i].inputs) ++uses[k];
        for (uint32_t k : g.operations[i].outputs) producer[k] = i;
    }
    for (uint32_t k : g.outputIndexes) ++uses[k];
    for (uint32_t i = 0; i < g.operations.size(); ++i) {
        const Operation& add = g.operations[i];
        if (add.type != OperationType::ADD || !isQuant8(lw.operand(add.outputs[0]).type)) continue;
        const auto& dims = lw.dims(add.outputs[0]);
        if (dims.size() != 4 || lw.dims(add.inputs[0]) != dims || lw.dims(add.inputs[1]) != dims)
            continue;
        for (uint32_t side = 0; side < 2; ++side) {
            const uint32_t convOutput = add.inputs[side], partner = add.inputs[1 - side];
            const auto conv = producer[convOutput];
            if (!conv || g.operations[*conv].type != OperationType::CONV_2D ||
                uses[convOutput] != 1 || lw.isFusedIntoLater(*conv) ||
                (producer[partner] && *producer[partner] >= *conv))
                continue;
            const Operation& op = g.operations[*conv];
            lw.setOpIndex(*conv);
            auto c = convInfo(lw, op);
            const Operand& out = lw.operand(convOutput);
            if (!c || c->w.p.nchw || c->groups != 1 || c->dw || c->stage.format != 0 ||
                c->stage.actMin != typeMin(out.type) || c->stage.actMax != typeMax(out.type) ||
                npu::ConvWeightRows(c->w.in[3], c->kh, c->kw).packed)
                continue;
            const auto residual = drainResidual(lw, add, convOutput, 0, 0);
            if (!residual) continue;
            // A dry run with and without B: the image's tiles (a fused pair's too), counted by
            // the descriptors that store the output.
            const auto tiles = [&](const std::optional<npu::ChainBuilder::Residual>& r) {
                npu::ChainBuilder chain;
                Status st;
                if (auto dwIndex = lw.fusedFrom(*conv)) {
                    const Operation& dw = g.operations[*dwIndex];
                    lw.setOpIndex(*dwIndex);
                    auto a = convInfo(lw, dw);
                    lw.setOpIndex(*conv);
                    if (!a) return size_t{0};
                    const FusedTensors t = fusedTensors(lw, dw, *a, op, *c, 0, 0, 0);
                    std::optional<npu::Expansion> expansion;
                    if (auto e = lw.fusedFrom(*dwIndex)) {
                        const auto x = expansionInfo(lw, *e, a->w.in);
                        if (!x) return size_t{0};
                        expansion = npu::Expansion{expansionInput(lw, g.operations[*e], *x, 0, 0),
                                                   layerOf(*x, 0)};
                    }
                    st = chain.depthwisePointwise(t.input, layerOf(*a, 0), t.intermediate,
                                                  layerOf(*c, 0), t.output, expansion, r);
                } else {
                    const auto image = [&](const std::array<uint32_t, 4>& d, uint32_t k) {
                        return imageOf(0, d, 0, 0, d[3], lw.operand(k));
                    };
                    st = chain.conv(image(c->w.in, op.inputs[0]), image(c->w.out, convOutput), 0,
                                    c->weightsSigned, c->weightZero, c->geometry, c->stage, 0, r);
                }
                if (!st.ok()) return uint64_t{0};
                return static_cast<uint64_t>(std::count_if(
                    chain.descriptors().begin(), chain.descriptors().end(),
                    [](const npu::Descriptor& d) {
                        return d.opcode == npu::Opcode::CONV &&
                               !(d.flags & static_cast<uint32_t>(npu::DescFlag::CHAIN_OUT));
                    }));
            };
            const uint64_t with = tiles(residual), without = tiles(std::nullopt);
            const uint64_t weightWords =
                npu::convWeightStreamBytes(c->w.out[3], c->kh, c->kw, c->w.in[3]) / kAlign;
            const uint64_t outWords =
                uint64_t{dims[1]} * dims[2] * ceilDiv(dims[3], kLanes);  // one image
            if (with == 0 || (with - std::min(with, without)) * weightWords >= 2 * outWords)
                continue;
            lw.addInDrain(*conv, i, convOutput);
            break;
        }
    }
}

extern const NpuOperation kConvolutionOperation{supported, outputShape, lowerConv, scratch,
                                                {1, 2},    false,       nullptr,   true};
extern const NpuOperation kPoolingOperation{supported, outputShape, lowerPool, scratch,
                                            {},        false,       nullptr,   true};
extern const NpuOperation kReduceOperation{
    reduceSupported, reduceOutputShape, lowerReduce, reduceScratch, {}, false, nullptr, true};
extern const NpuOperation kMeanOperation{meanSupported, meanOutputShape, lowerMean, meanScratch,
                                         {1, 2},        false,           nullptr,   true};
extern const NpuOperation kTransposeConvOperation{transposeConvSupported,
                                                  transposeConvOutputShape,
                                                  lowerTransposeConv,
                                                  transposeConvScratch,
                                                  {1, 2, 3},
                                                  false,
                                                  nullptr,
                                                  true};

}  // namespace nncosim::driver
