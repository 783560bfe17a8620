// RESIZE_BILINEAR of float32 and float16 tensors on the NPU. Each output pixel interpolates its
// four neighbours (model/operations/ResizeSampling.h, the golden's sampling): the four are
// gathered by element-map copies into tensors of the output's shape (separably: the left and
// right columns of every input row first, then from those the top and bottom rows, so a copy
// covers a run of output columns or rows, not a pixel), then the golden's formula
// runs term by term on the float MUL and ADD,
//   ((A (1-dy)) (1-dx) + (C dy) (1-dx)) + (B (1-dy)) dx) + (D dy) dx
// (A, B the top-left and top-right neighbours, C, D the bottom ones), with the factors as
// constant tensors of [1, H, 1, C] and [1, 1, W, C] that the MUL broadcasts. In float32 each step
// rounds as the golden's does, so the result is the golden's bit for bit; float16 rounds every
// step to binary16 (the golden rounds once), within the relaxed tolerance.
//
// A quantized resize is the golden's too: it interpolates the stored values in float32 and
// truncates. The bytes are widened to binary32 by a lookup (value -> float bits), the same
// formula runs, FUNC truncates toward zero, adding 1.5 * 2^23 (exact) puts the integer in the
// low byte of each binary32 (two's complement for negative ones), and a byte copy gathers those.
// Three kinds run on the array instead: power-of-two upsamplings of uint8, one-pixel inputs
// (float32 too) and upsamplings by integer factors (float32 and float16 too; pathOf).
#include "driver/Program.h"
#include "driver/compiler/Lowering.h"
#include "model/operations/ResizeSampling.h"

namespace nncosim::driver {
namespace {

// Bytes of an element of the formula: the tensor's float, binary32 for quantized tensors.
uint32_t workBytes(OperandType type) {
    return isQuant8(type) ? 4 : elementSize(type);
}

// The decoded operation: NHWC shapes, layout, sampling per output row and column.
struct Bilinear {
    uint32_t n = 0, inH = 0, inW = 0, c = 0, outH = 0, outW = 0;
    bool nchw = false, alignCorners = false, halfPixelCenters = false;
    std::vector<BilinearSample> ys, xs;

    // The fractions of output row y and column x between their neighbours.
    float dy(uint32_t y) const { return ys[y].pos - static_cast<float>(ys[y].lo); }
    float dx(uint32_t x) const { return xs[x].pos - static_cast<float>(xs[x].lo); }
};

// Inputs: 0 tensor, 1 width (or scale), 2 height (or scale), 3 layout, 4 align_corners,
// 5 half_pixel_centers (the last three optional).
Result<Bilinear> bilinearOf(const Constants& c, const Operation& op,
                            const std::vector<uint32_t>& dims) {
    const auto flag = [&](uint32_t i) -> std::optional<bool> {
        if (i >= op.inputs.size()) return false;
        auto v = c.scalar<uint8_t>(op.inputs[i]);
        if (!v) return std::nullopt;
        return *v != 0;
    };
    const auto nchw = flag(3), align = flag(4), half = flag(5);
    if (!nchw || !align || !half) return invalidArgument("layout and corner flags");
    if (*align && *half) return invalidArgument("align_corners and half_pixel_centers");
    if (dims.size() != 4 || elementCount(dims) == 0) return invalidArgument("input shape");
    Bilinear b;
    b.nchw = *nchw;
    b.alignCorners = *align;
    b.halfPixelCenters = *half;
    b.n = dims[0];
    b.c = dims[b.nchw ? 1 : 3];
    b.inH = dims[b.nchw ? 2 : 1];
    b.inW = dims[b.nchw ? 3 : 2];
    const auto size = [&](uint32_t i, uint32_t inSize) -> std::optional<int64_t> {
        const Operand& operand = c.operand(op.inputs[i]);
        const uint8_t* p = c.data(op.inputs[i]);
        if (!p) return std::nullopt;
        uint32_t bits = 0;
        std::memcpy(&bits, p, elementSize(operand.type));
        return resizeOutputSize(operand.type, bits, inSize);
    };
    const auto width = size(1, b.inW), height = size(2, b.inH);
    if (!width || !height || *width <= 0 || *height <= 0 || *width > kMaxCount ||
        *height > kMaxCount)
        return invalidArgument("output size");
    b.outW = static_cast<uint32_t>(*width);
    b.outH = static_cast<uint32_t>(*height);
    const float scaleH = resizeScale(b.inH, b.outH, *align);
    const float scaleW = resizeScale(b.inW, b.outW, *align);
    for (uint32_t y = 0; y < b.outH; ++y) b.ys.push_back(bilinearSample(y, scaleH, b.inH, *half));
    for (uint32_t x = 0; x < b.outW; ++x) b.xs.push_back(bilinearSample(x, scaleW, b.inW, *half));
    return b;
}

Status supported(const Model& model, const Operation& op) {
    const Constants c(model);
    const Operand& in = c.operand(op.inputs[0]);
    if ((!floatFormat(in.type) && !isQuant8(in.type)) || c.operand(op.outputs[0]).type != in.type)
        return unsupported(op, "8-bit quantized, float32 and float16 tensors of one type only");
    for (uint32_t i = 1; i < op.inputs.size(); ++i) {
        if (!c.isConstant(op.inputs[i])) return unsupported(op, "parameters must be constants");
    }
    if (in.dimensions.empty() || elementCount(in.dimensions) == 0) return okStatus();
    auto b = bilinearOf(c, op, in.dimensions);
    if (!b) return unsupported(op, b.status().message);
    if (uint64_t{b->c} * workBytes(in.type) > kMaxCount)
        return unsupported(op, "channels beyond the descriptor's 16 bits");
    return okStatus();
}

Result<std::vector<uint32_t>> outputShape(const Lowering& lw, const Operation& op) {
    auto b = bilinearOf(lw.constants(), op, lw.dims(op.inputs[0]));
    if (!b) return b.status();
    return b->nchw ? std::vector<uint32_t>{b->n, b->c, b->outH, b->outW}
                   : std::vector<uint32_t>{b->n, b->outH, b->outW, b->c};
}

// How a resize runs: the formula on the streaming units (lower), or on the array for a dyadic
// uint8 upsampling, a one-pixel input or an upsampling by integer factors (pathOf, below).
enum class Path { kFormula, kDyadic, kOnePixel, kPhases };
Path pathOf(const Bilinear& b, OperandType type);

// In the working format: two terms' tensors of the output's NHWC shape, the left and right
// columns [N, inH, outW, C], and a quantized resize's input widened to binary32. On the array: the
// result in binary32 (NHWC), the one pixel's weight streams (a stream per output row) or the
// products by the row factors (lowerPhases' L), and the widened input.
std::vector<uint64_t> scratch(const Lowering& lw, const Operation& op) {
    const OperandType type = lw.operand(op.inputs[0]).type;
    auto b = bilinearOf(lw.constants(), op, lw.dims(op.inputs[0]));
    if (!b) return {};
    const uint64_t element = workBytes(type), pixels = uint64_t{b->n} * b->outW * b->c;
    const uint64_t bytes = pixels * b->outH * element, columns = pixels * b->inH * element;
    const uint64_t widened = elementCount(lw.dims(op.inputs[0])) * 4, sums = pixels * b->outH * 4;
    switch (pathOf(*b, type)) {
        case Path::kOnePixel: {
            const uint64_t stream = (npu::kWeightQuantWords + kLanes * npu::kFloatWeightRowWords) *
                                    npu::kDramBusBytes * ceilDiv(b->c, kLanes);
            return {sums, b->n * b->outH * stream, widened};
        }
        case Path::kPhases:  // L, and the two pixels the last shifted window's row reads past it
            return {sums, (uint64_t{b->n} * b->outH * (4 * b->inW + 2) + 2) * b->c * element,
                    widened};
        default:
            break;
    }
    std::vector<uint64_t> areas{bytes, bytes, columns, columns};
    if (isQuant8(type)) areas.push_back(widened);
    return areas;
}

// The factors of a power-of-two upsampling of uint8 values (NHWC, neither align_corners nor
// half-pixel centers, each factor 1, 2, 4 or 8 and not both 1): every factor of the formula is
// k / s, so each of the golden's products and sums is exact and its truncated result is
// floor(sum of W x neighbour / (sH sW)) with integer weights W = (sH - py or py)(sW - px or px)
// for output phase (py, px) = (y mod sH, x mod sW). A one-pixel input may grow by up to 128:
// its four neighbours are the pixel, so the exact sum is the pixel itself. nullopt for any other
// resize.
std::optional<std::pair<uint32_t, uint32_t>> dyadicUpsampling(const Bilinear& b, OperandType type) {
    if (type != OperandType::TENSOR_QUANT8_ASYMM || b.nchw || b.alignCorners ||
        b.halfPixelCenters || b.outH % b.inH != 0 || b.outW % b.inW != 0)
        return std::nullopt;
    const uint32_t sh = b.outH / b.inH, sw = b.outW / b.inW;
    const uint32_t maxFactor = b.inH == 1 && b.inW == 1 ? 128 : 8;
    const auto dyadic = [&](uint32_t s) { return (s & (s - 1)) == 0 && s <= maxFactor; };
    if (!dyadic(sh) || !dyadic(sw) || sh * sw == 1) return std::nullopt;
    return std::pair{sh, sw};
}

// The dyadic upsampling on the array: the input with its last row and column repeated (the
// golden clamps the lower and right neighbours to the last ones), then per output phase a 2x2
// DWCONV with that phase's weights, requantized by 2^-n (n = log2(sH sW)) with the bias
// -2^(n-1) (SRDHM rounds ties up, which makes the rounding a floor), into a dense tile that a
// strided copy places at its phase's pixels.
Status lowerDyadicUpsampling(Lowering& lw, const Operation& op, const Bilinear& b, uint32_t sh,
                             uint32_t sw) {
    const uint32_t c = b.c, in = lw.address(op.inputs[0]), out = lw.address(op.outputs[0]);
    const uint32_t padded = lw.scratch().at(0), phase = lw.scratch().at(1);
    const int64_t inRow = int64_t{b.inW} * c, padRow = int64_t{b.inW + 1} * c;
    const int64_t inImage = inRow * b.inH, padImage = padRow * (b.inH + 1);
    const int64_t outRow = int64_t{b.outW} * c, outImage = outRow * b.outH;
    MoveEmitter copy(lw, 1, 0);
    if (b.inH == 1 && b.inW == 1)  // the pixel everywhere
        return copy.block(in, out, {{b.n, c, outImage}, {b.outH * b.outW, 0, c}, {c, 1, 1}}, false);
    NN_RETURN_IF_ERROR(copy.block(
        in, padded,
        {{b.n, inImage, padImage}, {b.inH, inRow, padRow}, {static_cast<uint32_t>(inRow), 1, 1}},
        false));
    NN_RETURN_IF_ERROR(
        copy.block(in + static_cast<uint32_t>(inRow - c), padded + static_cast<uint32_t>(inRow),
                   {{b.n, inImage, padImage}, {b.inH, inRow, padRow}, {c, 1, 1}}, false));
    NN_RETURN_IF_ERROR(
        copy.block(padded + static_cast<uint32_t>(padRow * (b.inH - 1)),
                   padded + static_cast<uint32_t>(padRow * b.inH),
                   {{b.n, padImage, padImage}, {static_cast<uint32_t>(padRow), 1, 1}}, false));
    const int n = __builtin_ctz(sh * sw);
    const npu::ChannelQuant quant{-(1 << (n - 1)), static_cast<int32_t>(1u << (31 - n)), 0};
    const npu::ConvGeometry geometry{2, 2, 1, 1, 1, 1, 0, 0};
    const npu::OutputStage stage{0, 0, 255};
    for (uint32_t py = 0; py < sh; ++py) {
        for (uint32_t px = 0; px < sw; ++px) {
            std::vector<uint8_t> weights(4 * size_t{c});
            for (uint32_t tap = 0; tap < 4; ++tap) {
                const uint32_t wy = tap / 2 ? py : sh - py, wx = tap % 2 ? px : sw - px;
                std::fill_n(weights.begin() + tap * c, c, static_cast<uint8_t>(wy * wx));
            }
            const auto stream = npu::packDepthwiseWeights(
                weights.data(), c, 2, 2, 0, std::vector<npu::ChannelQuant>(c, quant), false);
            const uint32_t weightStream = lw.addConstant(stream.data(), stream.size());
            for (uint32_t i = 0; i < b.n; ++i) {
                npu::DeviceTensor source, tile;
                source.addr = padded + static_cast<uint32_t>(i * padImage);
                source.h = b.inH + 1, source.w = b.inW + 1, source.c = c;
                tile.addr = phase + static_cast<uint32_t>(i * inImage);
                tile.h = b.inH, tile.w = b.inW, tile.c = c;
                npu::ChainBuilder chain;
                const Status st =
                    chain.depthwise(source, tile, weightStream, true, 0, geometry, stage, false);
                if (!st.ok()) return lw.fail(op, st.message);
                lw.emitChain(chain);
            }
            NN_RETURN_IF_ERROR(
                copy.block(phase, out + static_cast<uint32_t>((int64_t{py} * b.outW + px) * c),
                           {{b.n, inImage, outImage},
                            {b.inH, inRow, outRow * sh},
                            {b.inW, c, int64_t{c} * sw},
                            {c, 1, 1}},
                           false));
        }
    }
    return okStatus();
}

// The factors kh, kw of an upsampling whose output row y = kh i + py samples input row i, and row
// i + 1 (clamped) unless its fraction is 0, at a fraction that depends on py alone, and whose
// columns do likewise; nullopt for any other (align_corners, half-pixel centers, other sizes).
std::optional<std::pair<uint32_t, uint32_t>> integerUpsampling(const Bilinear& b) {
    if (b.outH % b.inH != 0 || b.outW % b.inW != 0) return std::nullopt;
    const auto phased = [](const std::vector<BilinearSample>& s, uint32_t in, uint32_t k) {
        const auto fraction = [&](uint32_t i) { return s[i].pos - static_cast<float>(s[i].lo); };
        for (uint32_t i = 0; i < s.size(); ++i) {
            const auto lo = static_cast<int32_t>(i / k);
            const int32_t hi = std::min<int32_t>(lo + (fraction(i) != 0), in - 1);
            if (s[i].lo != lo || s[i].hi != hi || fraction(i) != fraction(i % k)) return false;
        }
        return true;
    };
    const uint32_t kh = b.outH / b.inH, kw = b.outW / b.inW;
    if (!phased(b.ys, b.inH, kh) || !phased(b.xs, b.inW, kw)) return std::nullopt;
    return std::pair{kh, kw};
}

Path pathOf(const Bilinear& b, OperandType type) {
    if (dyadicUpsampling(b, type)) return Path::kDyadic;
    const bool binary32 = isQuant8(type) || type == OperandType::TENSOR_FLOAT32;
    // One pixel's weights are binary32 in a weight stream, written by binary32 MULs.
    if (binary32 && b.inH == 1 && b.inW == 1) return Path::kOnePixel;
    const bool rowsFit = 4 * uint64_t{b.inW} + 2 <= kMaxCount;  // L's rows, in pixels
    if (!b.nchw && rowsFit && integerUpsampling(b)) return Path::kPhases;
    return Path::kFormula;
}

// The values `v` among the program's constants, as binary32 (size 4) or binary16 (size 2,
// rounded to nearest even).
uint32_t floatConstant(Lowering& lw, const std::vector<float>& v, uint32_t size = 4) {
    const auto* bytes = reinterpret_cast<const uint8_t*>(v.data());
    if (size == 4) return lw.addConstant(bytes, v.size() * 4);
    const std::vector<uint8_t> halves = floatsToBinary16(bytes, v.size());
    return lw.addConstant(halves.data(), halves.size());
}

// A quantized resize's stored values as binary32, at `dst`.
Status widenToBinary32(Lowering& lw, const Operation& op, OperandType type, uint32_t dst) {
    std::array<uint32_t, 256> bits{};
    for (int v = 0; v < 256; ++v) {
        const float value = static_cast<float>(isSigned(type) ? static_cast<int8_t>(v) : v);
        std::memcpy(&bits[v], &value, 4);
    }
    return widenBytes(lw, op, type, lw.address(op.inputs[0]), dst, 4,
                      static_cast<uint32_t>(elementCount(lw.dims(op.inputs[0]))), bits);
}

// The array paths' input as floats: a float tensor itself, or a quantized one widened to
// binary32 into the third scratch area.
Result<uint32_t> floatInput(Lowering& lw, const Operation& op) {
    const OperandType type = lw.operand(op.inputs[0]).type;
    if (!isQuant8(type)) return lw.address(op.inputs[0]);
    NN_RETURN_IF_ERROR(widenToBinary32(lw, op, type, lw.scratch().at(2)));
    return lw.scratch().at(2);
}

// The `count` binary32 sums at `sum` truncated toward zero, as the golden converts them, and each
// integer put in the low byte of its word (two's complement for negative ones) by adding
// 1.5 * 2^23, which is exact for -2^22 <= n < 2^22.
Status truncateToLowBytes(Lowering& lw, const Operation& op, uint32_t sum, uint32_t count) {
    const npu::OutputStage stage = unclampedFloatStage(npu::Format::FP32);
    npu::Descriptor trunc = floatDescriptor(npu::Opcode::FUNC, stage);
    trunc.floatFn = static_cast<uint32_t>(npu::Function::TRUNC);
    npu::ChainBuilder truncation;
    const npu::StridedTensor sums{sum, {0, 0, 0, 1}};
    NN_RETURN_IF_ERROR(truncation.stream(trunc, sums, std::nullopt, sums, {1, 1, 1, count}));
    lw.emitChain(truncation);
    constexpr uint32_t kIntegerInLowByte = 0x4b400000;  // 1.5 * 2^23
    return streamWithConstant(lw, op, floatDescriptor(npu::Opcode::ADD, stage), sum, sum, count,
                              kIntegerInLowByte);
}

// The array paths' binary32 NHWC result at `sums` into the output: a quantized one truncated and
// its low bytes gathered, a float32 one copied into NCHW (an NHWC float32 result is written in
// place and needs nothing).
Status storeSums(Lowering& lw, const Operation& op, const Bilinear& b, uint32_t sums) {
    const bool quantized = isQuant8(lw.operand(op.inputs[0]).type);
    const uint32_t image = b.outH * b.outW * b.c, plane = b.outH * b.outW;  // elements
    const int64_t size = quantized ? 1 : 4;
    if (quantized) NN_RETURN_IF_ERROR(truncateToLowBytes(lw, op, sums, b.n * image));
    // Each element's low byte (quantized) or all four, NHWC -> the output's layout.
    MoveEmitter move(lw, static_cast<uint32_t>(size), 0);
    std::vector<MoveDim> dims{{b.n, 4 * int64_t{image}, size * image}};
    if (b.nchw) {
        dims.push_back({b.c, 4, size * plane});
        dims.push_back({plane, 4 * int64_t{b.c}, size});
    } else {
        dims.push_back({image, 4, size});
    }
    if (!quantized) dims.push_back({4, 1, 1});
    return move.block(sums, lw.address(op.outputs[0]), dims, false);
}

// A one-pixel input, quantized or float32, on the array (DeepLab's image pooling grows a global
// average back to the map, by any factor). Every neighbour is the pixel p, so the formula's
// terms are c_t(x) (p r_t(y)), t = 0..3, with the row factors r = (1-dy, dy, 1-dy, dy) and the
// column factors c = (1-dx, 1-dx, dx, dx). Per output row y a 1x1 float CONV takes as pixels x
// a constant [outW][4] of c_t(x), with weights W_y[t][ch] = p[ch] r_t(y) that MULs write into a
// weight stream at run time. It rounds each product and sums them in row order from -0, which
// are the golden's products and order: -0 is the sum's identity, and the stream's padding rows
// and biases are -0 too, so not even a zero's sign changes. The result is the output row in
// binary32: the float32 output, or the sums a quantized resize truncates. Where the formula's
// path makes about twenty passes over the output, this makes one (float32) or four.
Status lowerOnePixel(Lowering& lw, const Operation& op, const Bilinear& b) {
    const bool quantized = isQuant8(lw.operand(op.inputs[0]).type);
    const uint32_t sums = lw.scratch().at(0), streams = lw.scratch().at(1);
    auto pixelOrError = floatInput(lw, op);
    NN_RETURN_IF_ERROR(pixelOrError.status());
    const uint32_t pixel = *pixelOrError;
    // Each row's stream: per block of 16 channels the bias words, then one K step (rows t).
    const uint32_t blocks = ceilDiv(b.c, kLanes);
    const uint32_t blockElements =
        (npu::kWeightQuantWords + kLanes * npu::kFloatWeightRowWords) * 4;
    const uint32_t rowStream = blocks * blockElements;  // elements
    MoveEmitter fill(lw, 4, npu::kFp32NegZero);
    NN_RETURN_IF_ERROR(fill.block(0, streams, {{b.n * b.outH * rowStream * 4, 1, 1}}, true));
    // r_t(y) repeated across a block's 16 lanes, [4][outH][16]; c_t(x), [outW][4].
    std::vector<float> rowFactors, columnFactors;
    for (uint32_t t = 0; t < 4; ++t) {
        for (uint32_t y = 0; y < b.outH; ++y)
            rowFactors.insert(rowFactors.end(), kLanes, t % 2 ? b.dy(y) : 1 - b.dy(y));
    }
    for (uint32_t x = 0; x < b.outW; ++x)
        columnFactors.insert(columnFactors.end(), {1 - b.dx(x), 1 - b.dx(x), b.dx(x), b.dx(x)});
    const uint32_t rowFactorsAddr = floatConstant(lw, rowFactors),
                   columnFactorsAddr = floatConstant(lw, columnFactors);
    const npu::OutputStage stage = unclampedFloatStage(npu::Format::FP32);
    const npu::Descriptor mul = floatDescriptor(npu::Opcode::MUL, stage);
    // Weight row t of image i: p r_t(y) into the lanes of each block, whole blocks then a part.
    const auto weights = [&](uint32_t i, uint32_t t, uint32_t firstBlock, uint32_t count,
                             uint32_t lanes) {
        const uint32_t first = firstBlock * kLanes;
        const uint32_t row = npu::kWeightQuantWords * 4 + t * kLanes + firstBlock * blockElements;
        npu::ChainBuilder chain;
        NN_RETURN_IF_ERROR(chain.stream(
            mul, {pixel + (i * b.c + first) * 4, {0, 0, kLanes, 1}},
            npu::StridedTensor{rowFactorsAddr + t * b.outH * kLanes * 4, {0, kLanes, 0, 1}},
            {streams + (i * b.outH * rowStream + row) * 4, {0, rowStream, blockElements, 1}},
            {1, b.outH, count, lanes}));
        lw.emitChain(chain);
        return okStatus();
    };
    const bool direct = !quantized && !b.nchw;  // the float32 NHWC output itself
    const uint32_t result = direct ? lw.address(op.outputs[0]) : sums;
    for (uint32_t i = 0; i < b.n; ++i) {
        for (uint32_t t = 0; t < 4; ++t) {
            if (b.c >= kLanes) NN_RETURN_IF_ERROR(weights(i, t, 0, b.c / kLanes, kLanes));
            if (b.c % kLanes) NN_RETURN_IF_ERROR(weights(i, t, b.c / kLanes, 1, b.c % kLanes));
        }
        for (uint32_t y = 0; y < b.outH; ++y) {
            npu::DeviceTensor in, out;
            in.addr = columnFactorsAddr;
            out.addr = result + (i * b.outH + y) * b.outW * b.c * 4;
            in.w = out.w = b.outW;
            in.c = 16, out.c = b.c * 4;
            npu::ChainBuilder chain;
            const Status st = chain.conv(in, out, streams + (i * b.outH + y) * rowStream * 4, false,
                                         0, {}, stage);
            if (!st.ok()) return lw.fail(op, st.message);
            lw.emitChain(chain);
        }
    }
    return direct ? okStatus() : storeSums(lw, op, b, sums);
}

// An upsampling by integer factors kh x kw (integerUpsampling; NHWC, quantized, float32 or
// float16) on the array. Output row y = kh i + py interpolates input rows i and hi(i) at its
// phase's fraction dy, column x = kw j + px columns j and hi(j) at dx. Per phase py two MULs write
// the rows' products T = in[i] (1-dy) and U = in[hi(i)] dy, each pair twice, into L: per output row
// T0 U0 T0 U0 T1 U1 T1 U1 ... T(W-1) U(W-1) T(W-1) U(W-1), and a copy appends the last pair once
// more (the clamped right neighbour). Per phase px a float DWCONV, kernel 1x4 at stride 4,
// takes from pixel 2 the windows (Tj, Uj, Tj+1, Uj+1) (dx > 0), or from pixel 0 (Tj, Uj, Tj, Uj)
// (dx = 0, where the golden's right neighbour is the left one), with weights (1-dx, 1-dx, dx, dx)
// and bias -0: the golden's products, added in its order from -0 (rows past the kernel leave the
// sum as it is), written to the output columns of phase px. About five passes over the output
// where the formula's path makes twenty. float16 keeps L and the result in binary16: T, U and
// each sum rounded once (the formula's path rounds every step), within the relaxed tolerance.
Status lowerPhases(Lowering& lw, const Operation& op, const Bilinear& b, uint32_t kh, uint32_t kw) {
    const OperandType type = lw.operand(op.inputs[0]).type;
    const bool quantized = isQuant8(type);
    const npu::Format format = quantized ? npu::Format::FP32 : *floatFormat(type);
    const uint32_t size = workBytes(type);  // bytes of an element of L and of the result
    const uint32_t sums = lw.scratch().at(0), products = lw.scratch().at(1);
    auto sourceOrError = floatInput(lw, op);
    NN_RETURN_IF_ERROR(sourceOrError.status());
    const uint32_t source = *sourceOrError;
    const uint32_t c = b.c, rowL = (4 * b.inW + 2) * c, imageL = b.outH * rowL;  // elements
    const uint32_t rowIn = b.inW * c, imageIn = b.inH * rowIn;
    const npu::OutputStage stage = unclampedFloatStage(format);
    const npu::Descriptor mul = floatDescriptor(npu::Opcode::MUL, stage);
    // Input rows [fromRow, fromRow + rows) of image n times `factor` into rows py + kh (first + r)
    // of L, each element at L pixels 4j + offset and 4j + 2 + offset (a descriptor per row).
    const auto rowProducts = [&](uint32_t n, uint32_t py, uint32_t offset, uint32_t first,
                                 uint32_t fromRow, uint32_t rows, float factor) {
        const uint32_t copies = floatConstant(lw, std::vector<float>(c, factor), size);
        npu::ChainBuilder chain;
        for (uint32_t twice : {0u, 2u}) {
            NN_RETURN_IF_ERROR(chain.stream(
                mul, {source + (n * imageIn + fromRow * rowIn) * size, {0, rowIn, c, 1}},
                npu::StridedTensor{copies, {0, 0, 0, 1}},
                {products + (n * imageL + (py + kh * first) * rowL + (offset + twice) * c) * size,
                 {0, kh * rowL, 4 * c, 1}},
                {1, rows, b.inW, c}));
        }
        lw.emitChain(chain);
        return okStatus();
    };
    for (uint32_t n = 0; n < b.n; ++n) {
        for (uint32_t py = 0; py < kh; ++py) {
            const float dy = b.dy(py);
            NN_RETURN_IF_ERROR(rowProducts(n, py, 0, 0, 0, b.inH, 1 - dy));
            if (dy == 0) {
                NN_RETURN_IF_ERROR(rowProducts(n, py, 1, 0, 0, b.inH, dy));
                continue;
            }
            if (b.inH > 1) NN_RETURN_IF_ERROR(rowProducts(n, py, 1, 0, 1, b.inH - 1, dy));
            NN_RETURN_IF_ERROR(rowProducts(n, py, 1, b.inH - 1, b.inH - 1, 1, dy));
        }
    }
    MoveEmitter copy(lw, size, 0);
    const int64_t rowBytes = int64_t{rowL} * size;
    NN_RETURN_IF_ERROR(
        copy.block(products + (rowL - 4 * c) * size, products + (rowL - 2 * c) * size,
                   {{b.n * b.outH, rowBytes, rowBytes}, {2 * c * size, 1, 1}}, false));
    const bool direct = !quantized;  // NHWC: the float output itself
    const uint32_t result = direct ? lw.address(op.outputs[0]) : sums;
    const npu::ConvGeometry geometry{1, 4, 1, 4, 1, 1, 0, 0};
    const bool taps = npu::depthwiseUsesTaps(geometry);
    for (uint32_t px = 0; px < kw; ++px) {
        const float dx = b.dx(px);
        std::vector<float> weights;
        for (float w : {1 - dx, 1 - dx, dx, dx}) weights.insert(weights.end(), c, w);
        const auto packed = npu::packFloatDepthwiseWeights(
            weights.data(), std::vector<float>(c, -0.0f).data(), c, 1, 4, taps);
        const uint32_t stream = lw.addConstant(packed.data(), packed.size());
        for (uint32_t n = 0; n < b.n; ++n) {
            npu::DeviceTensor in, out;
            in.addr = products + (n * imageL + (dx == 0 ? 0 : 2 * c)) * size;
            out.addr = result + ((n * b.outH * b.outW + px) * c) * size;
            in.h = out.h = b.outH;
            in.w = 4 * b.inW + 2, out.w = b.inW;
            in.c = out.c = c * size;
            out.pixelStride = kw * c * size;
            npu::ChainBuilder chain;
            const Status st = chain.depthwise(in, out, stream, false, 0, geometry, stage, taps);
            if (!st.ok()) return lw.fail(op, st.message);
            lw.emitChain(chain);
        }
    }
    return direct ? okStatus() : storeSums(lw, op, b, sums);
}

Status lower(Lowering& lw, const Operation& op) {
    auto plan = bilinearOf(lw.constants(), op, lw.dims(op.inputs[0]));
    if (!plan) return lw.fail(op, plan.status().message);
    const Bilinear& b = *plan;
    const OperandType type = lw.operand(op.inputs[0]).type;
    switch (pathOf(b, type)) {
        case Path::kDyadic: {
            const auto factors = dyadicUpsampling(b, type);
            return lowerDyadicUpsampling(lw, op, b, factors->first, factors->second);
        }
        case Path::kOnePixel:
            return lowerOnePixel(lw, op, b);
        case Path::kPhases: {
            const auto factors = integerUpsampling(b);
            return lowerPhases(lw, op, b, factors->first, factors->second);
        }
        case Path::kFormula:
            break;
    }
    const bool quantized = isQuant8(type);
    const npu::Format format = quantized ? npu::Format::FP32 : *floatFormat(type);
    const uint32_t size = workBytes(type);
    const uint32_t sum = lw.scratch().at(0), term = lw.scratch().at(1);
    uint32_t source = lw.address(op.inputs[0]);
    if (quantized) {
        source = lw.scratch().at(4);
        NN_RETURN_IF_ERROR(widenToBinary32(lw, op, type, source));
    }

    // A factor tensor: value(i) for i along H ([1, H, 1, C]) or W ([1, 1, W, C]), in the
    // tensor's format.
    const auto factor = [&](uint32_t count, const auto& value) {
        std::vector<float> values;
        for (uint32_t i = 0; i < count; ++i) values.insert(values.end(), b.c, value(i));
        return floatConstant(lw, values, size);
    };
    const uint32_t notDy = factor(b.outH, [&](uint32_t y) { return 1 - b.dy(y); });
    const uint32_t isDy = factor(b.outH, [&](uint32_t y) { return b.dy(y); });
    const uint32_t notDx = factor(b.outW, [&](uint32_t x) { return 1 - b.dx(x); });
    const uint32_t isDx = factor(b.outW, [&](uint32_t x) { return b.dx(x); });

    // The input's element strides along N, H, W and C; the NHWC output's; the shapes.
    const uint32_t plane = b.inH * b.inW;
    const std::array<int64_t, 4> in =
        b.nchw ? std::array<int64_t, 4>{int64_t{plane} * b.c, b.inW, 1, plane}
               : std::array<int64_t, 4>{int64_t{plane} * b.c, int64_t{b.inW} * b.c, b.c, 1};
    const std::array<uint32_t, 4> shape{b.n, b.outH, b.outW, b.c};
    const std::array<uint32_t, 4> nhwc = npu::ChainBuilder::denseStrides(shape);
    const npu::StridedTensor rowFactor{0, {0, b.c, 0, 1}}, columnFactor{0, {0, 0, b.c, 1}};

    // The left (lo) and right (hi) neighbour columns of every input row, [N, inH, outW, C].
    const uint32_t columns[2] = {lw.scratch().at(2), lw.scratch().at(3)};
    for (bool right : {false, true}) {
        std::vector<AxisOffsets> axes{
            stridedAxis(b.n, in[0]), stridedAxis(b.inH, in[1]), {}, stridedAxis(b.c, in[3])};
        for (const BilinearSample& s : b.xs) axes[2].push_back((right ? s.hi : s.lo) * in[2]);
        MoveEmitter move(lw, size, 0);
        NN_RETURN_IF_ERROR(move.box(source, columns[right], axes));
    }
    // Neighbour (row lo/hi, column lo/hi) of every output pixel, gathered into `dst` from the
    // columns.
    const int64_t columnRow = int64_t{b.outW} * b.c;
    const auto gather = [&](bool bottom, bool right, uint32_t dst) {
        std::vector<AxisOffsets> axes{
            stridedAxis(b.n, columnRow * b.inH), {}, stridedAxis(b.outW, b.c), stridedAxis(b.c, 1)};
        for (const BilinearSample& s : b.ys) axes[1].push_back((bottom ? s.hi : s.lo) * columnRow);
        MoveEmitter move(lw, size, 0);
        return move.box(columns[right], dst, axes);
    };
    // One float MUL or ADD over the output's shape (no clamp: infinities stay).
    const auto arithmetic = [&](npu::Opcode opcode, npu::StridedTensor a, npu::StridedTensor c,
                                npu::StridedTensor out) {
        const npu::Descriptor d = floatDescriptor(opcode, unclampedFloatStage(format));
        npu::ChainBuilder chain;
        NN_RETURN_IF_ERROR(chain.stream(d, a, c, out, shape));
        lw.emitChain(chain);
        return okStatus();
    };
    // term = neighbour x rowFactor x columnFactor, in `dst`.
    const auto product = [&](bool bottom, bool right, uint32_t dst) {
        NN_RETURN_IF_ERROR(gather(bottom, right, dst));
        const npu::StridedTensor t{dst, nhwc};
        NN_RETURN_IF_ERROR(
            arithmetic(npu::Opcode::MUL, t, {bottom ? isDy : notDy, rowFactor.strides}, t));
        return arithmetic(npu::Opcode::MUL, t, {right ? isDx : notDx, columnFactor.strides}, t);
    };
    const npu::StridedTensor total{sum, nhwc}, next{term, nhwc};
    NN_RETURN_IF_ERROR(product(false, false, sum));
    NN_RETURN_IF_ERROR(product(true, false, term));
    NN_RETURN_IF_ERROR(arithmetic(npu::Opcode::ADD, total, next, total));
    NN_RETURN_IF_ERROR(product(false, true, term));
    NN_RETURN_IF_ERROR(arithmetic(npu::Opcode::ADD, total, next, total));
    NN_RETURN_IF_ERROR(product(true, true, term));
    // The last sum goes to the output in its layout.
    const uint32_t outPlane = b.outH * b.outW;
    if (!quantized) {
        const npu::StridedTensor out{
            lw.address(op.outputs[0]),
            b.nchw ? std::array<uint32_t, 4>{outPlane * b.c, b.outW, 1, outPlane} : nhwc};
        const Status st = arithmetic(npu::Opcode::ADD, total, next, out);
        return st.ok() ? st : lw.fail(op, st.message);
    }
    NN_RETURN_IF_ERROR(arithmetic(npu::Opcode::ADD, total, next, total));
    const uint32_t count = b.n * outPlane * b.c;
    NN_RETURN_IF_ERROR(truncateToLowBytes(lw, op, sum, count));
    // The low bytes, NHWC -> the output's layout.
    MoveEmitter move(lw, 1, 0);
    const int64_t image = int64_t{outPlane} * b.c;
    return b.nchw
               ? move.block(sum, lw.address(op.outputs[0]),
                            {{b.n, 4 * image, image}, {b.c, 4, outPlane}, {outPlane, 4 * b.c, 1}},
                            false)
               : move.block(sum, lw.address(op.outputs[0]), {{count, 4, 1}}, false);
}

}  // namespace

extern const NpuOperation kResizeBilinearOperation{supported, outputShape, lower,   scratch,
                                                   {},        false,       nullptr, true};

}  // namespace nncosim::driver
