// The convolutions on the NPU: CONV_2D, DEPTHWISE_CONV_2D, GROUPED_CONV_2D (CONV and DWCONV
// descriptors, PACK for few input channels, TAPS depthwise, depthwise -> pointwise fusion with
// CHAIN_OUT/CHAIN_IN; float32 and float16 on the float CONV and DWCONV with binary32 weight
// streams), and the passes that plan their fusion, planar inputs and residual additions. Weights
// given as model inputs are scattered into the packed stream at run time by LUT copies (float32:
// 4-byte copies). Pooling.cpp and TransposeConv.cpp hold the other window operations; Window.h
// what they share.
#include <algorithm>
#include <cstring>
#include <tuple>

#include "driver/compiler/Window.h"
#include "model/operations/Shapes.h"

namespace nncosim::driver {
namespace {

using fixedpoint::QuantizedMultiplier;

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

extern const NpuOperation kConvolutionOperation{
    windowSupported, windowShape, lowerConv, windowScratch, {1, 2}, false, nullptr, true};

}  // namespace nncosim::driver
