// CONV_2D, DEPTHWISE_CONV_2D, GROUPED_CONV_2D, TRANSPOSE_CONV_2D.
//
// Every variant computes in NHWC (NCHW tensors are converted on the way in and out). Float
// tensors accumulate in float32 (float16 is widened, as Android does); quantized tensors
// accumulate (input - zeroPoint) * (filter - zeroPoint) in int32 and requantize each output
// channel with fixedpoint::requantize, which is what Android's CPU kernels compute.
// Convolutions run as matrix products: im2col patches times the filter matrix.
#include <algorithm>

#include "golden/ops/OpUtils.h"
#include "golden/ops/Operations.h"

namespace nncosim::golden {
namespace {

constexpr uint32_t kInput = 0;
constexpr uint32_t kFilter = 1;
constexpr uint32_t kBias = 2;

// Output-channel multipliers of a quantized convolution: one per tensor, or one per channel for
// TENSOR_QUANT8_SYMM_PER_CHANNEL filters.
Result<std::vector<fixedpoint::QuantizedMultiplier>> convMultipliers(const ExecutionContext& ctx,
                                                                     uint32_t outChannels) {
    const float inScale = ctx.inputScale(kInput);
    std::vector<float> filterScales{ctx.inputScale(kFilter)};
    std::vector<float> biasScales{ctx.inputScale(kBias)};
    if (ctx.inputType(kFilter) == OperandType::TENSOR_QUANT8_SYMM_PER_CHANNEL) {
        filterScales = ctx.inputChannelQuant(kFilter).scales;
        if (filterScales.size() != outChannels) {
            return ctx.fail("filter has ", filterScales.size(), " channel scales for ", outChannels,
                            " output channels");
        }
        biasScales.clear();
        for (float s : filterScales) biasScales.push_back(s * inScale);
    }
    std::vector<fixedpoint::QuantizedMultiplier> result;
    for (size_t c = 0; c < filterScales.size(); ++c) {
        const auto real = fixedpoint::getQuantizedConvolutionMultiplier(
            inScale, filterScales[c], biasScales[c], ctx.outputScale(0));
        if (!real) return ctx.fail("bias scale does not match input scale * filter scale");
        const auto m = fixedpoint::quantizeMultiplier(*real);
        if (!m) return ctx.fail("cannot quantize the output multiplier ", *real);
        result.push_back(*m);
    }
    return result;
}

// Filter values minus their zero point (0 for symmetric per-channel filters) as int32.
ArrayX<int32_t> centeredFilter(const ExecutionContext& ctx) {
    const size_t n = ctx.inputCount(kFilter);
    switch (ctx.inputType(kFilter)) {
        case OperandType::TENSOR_QUANT8_ASYMM:
            return centered(ctx.inputData<uint8_t>(kFilter), n, ctx.inputZeroPoint(kFilter));
        default:  // TENSOR_QUANT8_ASYMM_SIGNED, TENSOR_QUANT8_SYMM_PER_CHANNEL
            return centered(ctx.inputData<int8_t>(kFilter), n,
                            ctx.inputType(kFilter) == OperandType::TENSOR_QUANT8_SYMM_PER_CHANNEL
                                ? 0
                                : ctx.inputZeroPoint(kFilter));
    }
}

// Grouped 2-D convolution of NHWC `in` with filter [outC, filterH, filterW, inC / groups] into
// acc [batches * outH * outW, outC] (no bias): im2col patches times the filter matrix, one group
// and one tile of output pixels at a time.
template <typename Acc>
void convolve(const Acc* in, const Acc* filter, const WindowGeometry& g, const WindowParams& p,
              Acc* acc) {
    const uint32_t groupInC = g.inC / p.groups;
    const uint32_t groupOutC = g.outC / p.groups;
    const size_t patchSize = size_t{g.filterH} * g.filterW * groupInC;
    const size_t pixels = size_t{g.batches} * g.outH * g.outW;
    using Filter = Eigen::Map<const RowMajorMatrix<Acc>>;
    using Out = Eigen::Map<RowMajorMatrix<Acc>, 0, Eigen::OuterStride<>>;

    const bool pointwise = g.filterH == 1 && g.filterW == 1 && p.strideW == 1 && p.strideH == 1 &&
                           p.padW.head == 0 && p.padH.head == 0 && g.outH == g.inH &&
                           g.outW == g.inW && p.groups == 1;
    if (pointwise) {  // the input already is the patch matrix
        Out(acc, pixels, g.outC, Eigen::OuterStride<>(g.outC)).noalias() =
            Eigen::Map<const RowMajorMatrix<Acc>>(in, pixels, g.inC) *
            Filter(filter, g.outC, g.inC).transpose();
        return;
    }

    const size_t tile = std::max<size_t>(1, (size_t{1} << 20) / std::max<size_t>(patchSize, 1));
    RowMajorMatrix<Acc> patches(std::min(tile, pixels), patchSize);
    for (int32_t group = 0; group < p.groups; ++group) {
        const uint32_t c0 = group * groupInC;
        for (size_t first = 0; first < pixels; first += tile) {
            const size_t rows = std::min(tile, pixels - first);
            for (size_t r = 0; r < rows; ++r) {
                const size_t pixel = first + r;
                const uint32_t ow = pixel % g.outW;
                const uint32_t oh = (pixel / g.outW) % g.outH;
                const uint32_t n = pixel / (size_t{g.outW} * g.outH);
                Acc* row = patches.row(r).data();
                for (uint32_t kh = 0; kh < g.filterH; ++kh) {
                    const int32_t ih = static_cast<int32_t>(oh) * p.strideH - p.padH.head +
                                       static_cast<int32_t>(kh) * p.dilationH;
                    for (uint32_t kw = 0; kw < g.filterW; ++kw, row += groupInC) {
                        const int32_t iw = static_cast<int32_t>(ow) * p.strideW - p.padW.head +
                                           static_cast<int32_t>(kw) * p.dilationW;
                        Eigen::Map<ArrayX<Acc>> dst(row, groupInC);
                        if (ih < 0 || ih >= static_cast<int32_t>(g.inH) || iw < 0 ||
                            iw >= static_cast<int32_t>(g.inW)) {
                            dst.setZero();
                        } else {
                            dst = Eigen::Map<const ArrayX<Acc>>(
                                in + ((size_t{n} * g.inH + ih) * g.inW + iw) * g.inC + c0,
                                groupInC);
                        }
                    }
                }
            }
            Out(acc + first * g.outC + group * groupOutC, rows, groupOutC,
                Eigen::OuterStride<>(g.outC))
                .noalias() =
                patches.topRows(rows) *
                Filter(filter + group * groupOutC * patchSize, groupOutC, patchSize).transpose();
        }
    }
}

// Depthwise convolution of NHWC `in` (channels already expanded by the depth multiplier) with
// filter [1, filterH, filterW, outC] into acc [pixels, outC], vectorized over channels.
template <typename Acc>
void convolveDepthwise(const Acc* in, const Acc* filter, const WindowGeometry& g,
                       const WindowParams& p, Acc* acc) {
    const uint32_t c = g.outC;
    for (uint32_t n = 0; n < g.batches; ++n) {
        for (uint32_t oh = 0; oh < g.outH; ++oh) {
            for (uint32_t ow = 0; ow < g.outW; ++ow) {
                Eigen::Map<ArrayX<Acc>> sum(acc + ((size_t{n} * g.outH + oh) * g.outW + ow) * c, c);
                sum.setZero();
                for (uint32_t kh = 0; kh < g.filterH; ++kh) {
                    const int32_t ih = static_cast<int32_t>(oh) * p.strideH - p.padH.head +
                                       static_cast<int32_t>(kh) * p.dilationH;
                    if (ih < 0 || ih >= static_cast<int32_t>(g.inH)) continue;
                    for (uint32_t kw = 0; kw < g.filterW; ++kw) {
                        const int32_t iw = static_cast<int32_t>(ow) * p.strideW - p.padW.head +
                                           static_cast<int32_t>(kw) * p.dilationW;
                        if (iw < 0 || iw >= static_cast<int32_t>(g.inW)) continue;
                        sum += Eigen::Map<const ArrayX<Acc>>(
                                   in + ((size_t{n} * g.inH + ih) * g.inW + iw) * c, c) *
                               Eigen::Map<const ArrayX<Acc>>(
                                   filter + (size_t{kh} * g.filterW + kw) * c, c);
                    }
                }
            }
        }
    }
}

// Transposed convolution of NHWC `in` with filter [outC, filterH, filterW, inC] into acc
// [batches * outH * outW, outC] (zeroed here): each input pixel's products with the filter taps
// (one matrix product) are scattered to the output pixels they reach.
template <typename Acc>
void convolveTransposed(const Acc* in, const Acc* filter, const WindowGeometry& g,
                        const WindowParams& p, Acc* acc) {
    const uint32_t taps = g.filterH * g.filterW;
    // Reorder the filter to [tap, outC, inC] so each tap's outputs are contiguous.
    RowMajorMatrix<Acc> tapFilter(size_t{taps} * g.outC, g.inC);
    for (uint32_t o = 0; o < g.outC; ++o) {
        for (uint32_t t = 0; t < taps; ++t) {
            tapFilter.row(size_t{t} * g.outC + o) =
                Eigen::Map<const Eigen::Matrix<Acc, 1, Eigen::Dynamic>>(
                    filter + (size_t{o} * taps + t) * g.inC, g.inC);
        }
    }
    std::fill(acc, acc + size_t{g.batches} * g.outH * g.outW * g.outC, Acc{0});
    const size_t pixels = size_t{g.batches} * g.inH * g.inW;
    const size_t tile =
        std::max<size_t>(1, (size_t{1} << 20) / std::max<size_t>(tapFilter.rows(), 1));
    RowMajorMatrix<Acc> products;
    for (size_t first = 0; first < pixels; first += tile) {
        const size_t rows = std::min(tile, pixels - first);
        products.noalias() =
            Eigen::Map<const RowMajorMatrix<Acc>>(in + first * g.inC, rows, g.inC) *
            tapFilter.transpose();
        for (size_t r = 0; r < rows; ++r) {
            const size_t pixel = first + r;
            const uint32_t w = pixel % g.inW;
            const uint32_t h = (pixel / g.inW) % g.inH;
            const uint32_t n = pixel / (size_t{g.inW} * g.inH);
            for (uint32_t kh = 0; kh < g.filterH; ++kh) {
                const int32_t oh = static_cast<int32_t>(h) * p.strideH - p.padH.head + kh;
                if (oh < 0 || oh >= static_cast<int32_t>(g.outH)) continue;
                for (uint32_t kw = 0; kw < g.filterW; ++kw) {
                    const int32_t ow = static_cast<int32_t>(w) * p.strideW - p.padW.head + kw;
                    if (ow < 0 || ow >= static_cast<int32_t>(g.outW)) continue;
                    Eigen::Map<ArrayX<Acc>>(
                        acc + ((size_t{n} * g.outH + oh) * g.outW + ow) * g.outC, g.outC) +=
                        products.row(r)
                            .segment((size_t{kh} * g.filterW + kw) * g.outC, g.outC)
                            .transpose()
                            .array();
                }
            }
        }
    }
}

enum class Kind { kConv, kDepthwise, kTransposed };

template <typename Acc>
void runKernel(Kind kind, const Acc* in, const Acc* filter, const WindowGeometry& g,
               const WindowParams& p, Acc* acc) {
    switch (kind) {
        case Kind::kConv:
            convolve(in, filter, g, p, acc);
            break;
        case Kind::kDepthwise:
            convolveDepthwise(in, filter, g, p, acc);
            break;
        case Kind::kTransposed:
            convolveTransposed(in, filter, g, p, acc);
            break;
    }
}

// Repeats each input channel `multiplier` times (DEPTHWISE_CONV_2D's depth multiplier).
template <typename T>
std::vector<T> expandChannels(const T* in, size_t pixels, uint32_t channels, int32_t multiplier) {
    std::vector<T> out(pixels * channels * multiplier);
    for (size_t i = 0; i < pixels * channels; ++i) {
        std::fill_n(out.begin() + i * multiplier, multiplier, in[i]);
    }
    return out;
}

Status runFloat(ExecutionContext& ctx, Kind kind, const WindowGeometry& g, const WindowParams& p) {
    const FloatInput input(ctx, kInput);
    const FloatInput filter(ctx, kFilter);
    const FloatInput bias(ctx, kBias);
    NhwcInput<float> in(input.data(), ctx.inputShape(kInput), p.nchw);
    std::vector<float> expanded;
    const float* inData = in.data();
    if (kind == Kind::kDepthwise && p.depthMultiplier > 1) {
        expanded =
            expandChannels(inData, size_t{g.batches} * g.inH * g.inW, g.inC, p.depthMultiplier);
        inData = expanded.data();
    }
    FloatOutput output(ctx, 0);
    NhwcOutput<float> out(output.data(), {g.batches, g.outH, g.outW, g.outC}, p.nchw);
    runKernel(kind, inData, filter.data(), g, p, out.data());

    const auto [lo, hi] = activationRangeFloat(p.activation);
    const size_t pixels = size_t{g.batches} * g.outH * g.outW;
    Eigen::Map<RowMajorMatrix<float>> result(out.data(), pixels, g.outC);
    result.rowwise() += Eigen::Map<const Eigen::RowVectorXf>(bias.data(), g.outC);
    result = result.array().max(lo).min(hi).matrix();
    out.commit();
    output.commit();
    return okStatus();
}

template <typename T>
Status runQuant(ExecutionContext& ctx, Kind kind, const WindowGeometry& g, const WindowParams& p) {
    auto multipliers = convMultipliers(ctx, g.outC);
    if (!multipliers) return multipliers.status();
    auto range = quantActivationRange<T>(ctx, 0, p.activation);
    if (!range) return range.status();

    NhwcInput<T> in(ctx.inputData<T>(kInput), ctx.inputShape(kInput), p.nchw);
    const size_t inPixels = size_t{g.batches} * g.inH * g.inW;
    ArrayX<int32_t> input =
        centered(in.data(), inPixels * in.dims()[3], ctx.inputZeroPoint(kInput));
    if (kind == Kind::kDepthwise && p.depthMultiplier > 1) {
        std::vector<int32_t> expanded =
            expandChannels(input.data(), inPixels, g.inC, p.depthMultiplier);
        input = Eigen::Map<ArrayX<int32_t>>(expanded.data(), expanded.size());
    }
    const ArrayX<int32_t> filter = centeredFilter(ctx);
    const size_t pixels = size_t{g.batches} * g.outH * g.outW;
    std::vector<int32_t> acc(pixels * g.outC);
    if (kind == Kind::kDepthwise) {
        runKernel(kind, input.data(), filter.data(), g, p, acc.data());
    } else {
        // Matrix products run in double: every product and partial sum is an integer of
        // magnitude below 2^53, so the sums are exact, and Eigen's double GEMM is several times
        // faster than its int32 one. The sums wrap to int32 as Android's accumulators do.
        const ArrayX<double> inputD = input.template cast<double>();
        const ArrayX<double> filterD = filter.template cast<double>();
        std::vector<double> sums(acc.size());
        runKernel(kind, inputD.data(), filterD.data(), g, p, sums.data());
        std::transform(sums.begin(), sums.end(), acc.begin(), wrapToInt32);
    }

    NhwcOutput<T> out(ctx.outputData<T>(0), {g.batches, g.outH, g.outW, g.outC}, p.nchw);
    requantizeRows(acc.data(), pixels, g.outC, ctx.inputData<int32_t>(kBias), *multipliers,
                   ctx.outputZeroPoint(0), *range, out.data());
    out.commit();
    return okStatus();
}

Status run(ExecutionContext& ctx, Kind kind, const WindowGeometry& g, const WindowParams& p) {
    NN_RETURN_IF_ERROR(
        ctx.setOutputShape(0, fromNhwcShape({g.batches, g.outH, g.outW, g.outC}, p.nchw)));
    if (ctx.outputCount(0) == 0) return okStatus();
    switch (ctx.inputType(kInput)) {
        case OperandType::TENSOR_FLOAT32:
        case OperandType::TENSOR_FLOAT16:
            return runFloat(ctx, kind, g, p);
        case OperandType::TENSOR_QUANT8_ASYMM:
            return runQuant<uint8_t>(ctx, kind, g, p);
        case OperandType::TENSOR_QUANT8_ASYMM_SIGNED:
            return runQuant<int8_t>(ctx, kind, g, p);
        default:
            return ctx.fail("unsupported input type ", nameOf(ctx.inputType(kInput)));
    }
}

// Decodes a forward convolution's parameters and shapes (model/operations/Window.h); the padding
// the kernels read is the resolved one.
Status readForwardConv(ExecutionContext& ctx, WindowParams* p, WindowGeometry* g) {
    auto params = decodeWindowParams(ctx.type(), operationInputs(ctx));
    if (!params) return ctx.fail(params.status().message);
    auto geometry = windowGeometry(ctx.type(), *params, ctx.inputShape(kInput),
                                   ctx.inputShape(kFilter), ctx.inputShape(kBias));
    if (!geometry) return ctx.fail(geometry.status().message);
    *p = *params;
    *g = *geometry;
    p->padH = g->padH;
    p->padW = g->padW;
    return okStatus();
}

}  // namespace

Status executeConv2D(ExecutionContext& ctx) {
    WindowParams p;
    WindowGeometry g;
    NN_RETURN_IF_ERROR(readForwardConv(ctx, &p, &g));
    return run(ctx, Kind::kConv, g, p);
}

Status executeDepthwiseConv2D(ExecutionContext& ctx) {
    WindowParams p;
    WindowGeometry g;
    NN_RETURN_IF_ERROR(readForwardConv(ctx, &p, &g));
    return run(ctx, Kind::kDepthwise, g, p);
}

Status executeGroupedConv2D(ExecutionContext& ctx) {
    WindowParams p;
    WindowGeometry g;
    NN_RETURN_IF_ERROR(readForwardConv(ctx, &p, &g));
    return run(ctx, Kind::kConv, g, p);
}

Status executeTransposeConv2D(ExecutionContext& ctx) {
    std::optional<std::vector<int32_t>> outputShape;
    if (ctx.numInputs() == 9 && ctx.inputRank(3) == 1) {
        const int32_t* shape = ctx.inputData<int32_t>(3);
        outputShape.emplace(shape, shape + ctx.inputCount(3));
    }
    auto w = transposeConvWindow(operationInputs(ctx), ctx.inputShape(kInput),
                                 ctx.inputShape(kFilter), ctx.inputShape(kBias), outputShape);
    if (!w) return ctx.fail(w.status().message);
    return run(ctx, Kind::kTransposed, w->g, w->p);
}

}  // namespace nncosim::golden
