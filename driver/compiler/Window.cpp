#include "driver/compiler/Window.h"

#include <algorithm>

namespace nncosim::driver {

bool isPooling(OperationType t) {
    return t == OperationType::AVERAGE_POOL_2D || t == OperationType::MAX_POOL_2D ||
           t == OperationType::L2_POOL_2D;
}

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

Status windowSupported(const Model& model, const Operation& op) {
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

Result<std::vector<uint32_t>> windowShape(const Lowering& lw, const Operation& op) {
    auto w = windowOf(lw, op);
    if (!w) return w.status();
    return windowOutputShape(w->g, w->p.nchw);
}

// NCHW operations run on NHWC copies of their input and output; L2_POOL_2D pools the squares.
std::vector<uint64_t> windowScratch(const Lowering& lw, const Operation& op) {
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

// `inputAsPlanes`: the operation loads its NCHW input in place (A_PLANAR), only its output is
// transposed.
Result<WindowIo> transposeIn(Lowering& lw, const Operation& op, const Window& w,
                             bool inputAsPlanes) {
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

}  // namespace nncosim::driver
