// TRANSPOSE_CONV_2D on the NPU: a CONV over the input spread out by the strides.
#include <algorithm>
#include <functional>

#include "driver/compiler/Window.h"
#include "model/operations/Shapes.h"

namespace nncosim::driver {
namespace {

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

}  // namespace

extern const NpuOperation kTransposeConvOperation{transposeConvSupported,
                                                  transposeConvOutputShape,
                                                  lowerTransposeConv,
                                                  transposeConvScratch,
                                                  {1, 2, 3},
                                                  false,
                                                  nullptr,
                                                  true};

}  // namespace nncosim::driver
