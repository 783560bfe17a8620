#include "driver/ChainBuilder.h"

#include <algorithm>
#include <array>
#include <cstring>
#include <map>

namespace nncosim::npu {
namespace {

constexpr uint32_t kVec = kDramBusBytes;
constexpr uint32_t kMaxPad = 255;

uint32_t ceilDiv(uint32_t a, uint32_t b) {
    return (a + b - 1) / b;
}

uint32_t wordsPerRow(uint32_t bytes) {
    return ceilDiv(bytes, kVec);
}

// The quantization words of one output-channel block: biases, multipliers, shifts.
void appendQuantWords(std::vector<uint8_t>& stream, const std::vector<ChannelQuant>& quant,
                      uint32_t firstChannel) {
    const size_t base = stream.size();
    stream.resize(base + kWeightQuantWords * kVec, 0);
    for (uint32_t l = 0; l < kVec; ++l) {
        const uint32_t channel = firstChannel + l;
        const ChannelQuant q = channel < quant.size() ? quant[channel] : ChannelQuant{};
        std::memcpy(&stream[base + 4 * l], &q.bias, 4);
        std::memcpy(&stream[base + 4 * kVec + 4 * l], &q.multiplier, 4);
        stream[base + 8 * kVec + l] = static_cast<uint8_t>(static_cast<int8_t>(q.shift));
    }
}

TensorDesc rowsOf(uint32_t addr, uint32_t inner, uint32_t count1, uint32_t stride1, uint32_t count2,
                  uint32_t stride2, uint32_t count3 = 1, uint32_t stride3 = 0) {
    TensorDesc t;
    t.addr = addr;
    t.inner = inner;
    t.count1 = count1;
    t.stride1 = stride1;
    t.count2 = count2;
    t.stride2 = stride2;
    t.count3 = count3;
    t.stride3 = stride3;
    return t;
}

}  // namespace

uint32_t convWeightStreamBytes(uint32_t outChannels, uint32_t kernelH, uint32_t kernelW,
                               uint32_t inChannels) {
    const uint32_t blocks = ConvWeightRows(inChannels, kernelH, kernelW).kSteps();
    return ceilDiv(outChannels, kVec) * (kWeightQuantWords + blocks * kArrayRows) * kVec;
}

bool depthwiseUsesTaps(const ConvGeometry& g) {
    return tapsFit(g.kernelH, g.kernelW, g.strideW, g.dilationW);
}

uint64_t depthwiseWeightStreamBytes(uint32_t channels, uint32_t kernelH, uint32_t kernelW,
                                    bool taps, bool isFloat) {
    const uint64_t blocks = taps ? 1 : uint64_t{kernelH} * kernelW;
    const uint64_t rowWords = isFloat ? kFloatWeightRowWords : 1;
    return uint64_t{ceilDiv(channels, kVec)} *
           (kWeightQuantWords + blocks * kArrayRows * rowWords) * kVec;
}

std::vector<uint8_t> packConvWeights(const uint8_t* weights, uint32_t outChannels, uint32_t kernelH,
                                     uint32_t kernelW, uint32_t inChannels, int32_t weightZeroPoint,
                                     const std::vector<ChannelQuant>& quant) {
    std::vector<uint8_t> stream;
    stream.reserve(convWeightStreamBytes(outChannels, kernelH, kernelW, inChannels));
    const ConvWeightRows rows(inChannels, kernelH, kernelW);
    const size_t blockBytes = size_t{rows.kSteps()} * kArrayRows * kArrayCols;
    for (uint32_t nb = 0; nb < ceilDiv(outChannels, kVec); ++nb) {
        appendQuantWords(stream, quant, nb * kVec);
        // Padding rows and columns hold the weight zero point.
        const size_t block = stream.size();
        stream.resize(block + blockBytes, static_cast<uint8_t>(weightZeroPoint));
        for (uint32_t c = 0; c < kArrayCols && nb * kVec + c < outChannels; ++c) {
            const uint8_t* filter = weights + size_t{nb * kVec + c} * rows.taps * inChannels;
            for (uint32_t t = 0; t < rows.taps; ++t) {
                for (uint32_t ic = 0; ic < inChannels; ++ic)
                    stream[block + size_t{rows.row(t, ic)} * kArrayCols + c] =
                        filter[t * inChannels + ic];
            }
        }
    }
    return stream;
}

namespace {

// A float weight stream: per block of 16 output channels the bias words, then `kSteps` blocks of
// 16 x 16 binary32, value(nb, k, r, c) at row r, column c of K step k.
template <typename Value>
std::vector<uint8_t> packFloatBlocks(const float* bias, uint32_t outChannels, uint32_t kSteps,
                                     Value value) {
    std::vector<uint8_t> stream;
    std::vector<ChannelQuant> quant(outChannels);
    for (uint32_t o = 0; o < outChannels; ++o) std::memcpy(&quant[o].bias, &bias[o], 4);
    for (uint32_t nb = 0; nb < ceilDiv(outChannels, kVec); ++nb) {
        appendQuantWords(stream, quant, nb * kVec);
        for (uint32_t k = 0; k < kSteps; ++k) {
            for (uint32_t r = 0; r < kArrayRows; ++r) {
                for (uint32_t c = 0; c < kArrayCols; ++c) {
                    const float v = value(nb, k, r, c);
                    const auto* bytes = reinterpret_cast<const uint8_t*>(&v);
                    stream.insert(stream.end(), bytes, bytes + 4);
                }
            }
        }
    }
    return stream;
}

}  // namespace

std::vector<uint8_t> packFloatConvWeights(const float* weights, const float* bias,
                                          uint32_t outChannels, uint32_t kernelH, uint32_t kernelW,
                                          uint32_t inChannels, uint32_t elementBytes) {
    const ConvWeightRows rows(inChannels, kernelH, kernelW, elementBytes);
    return packFloatBlocks(bias, outChannels, rows.kSteps(),
                           [&](uint32_t nb, uint32_t k, uint32_t r, uint32_t c) {
                               uint32_t tap = 0, ic = 0;
                               const uint32_t oc = nb * kVec + c;
                               if (!rows.tapChannel(k, r, &tap, &ic) || oc >= outChannels)
                                   return 0.0f;
                               return weights[(size_t{oc} * rows.taps + tap) * inChannels + ic];
                           });
}

std::vector<uint8_t> packFloatDepthwiseWeights(const float* weights, const float* bias,
                                               uint32_t channels, uint32_t kernelH,
                                               uint32_t kernelW, bool taps) {
    const uint32_t kernelTaps = kernelH * kernelW;
    return packFloatBlocks(bias, channels, taps ? 1 : kernelTaps,
                           [&](uint32_t nb, uint32_t k, uint32_t r, uint32_t c) {
                               // TAPS: row r is tap r; else K step k is tap k, on the diagonal.
                               const uint32_t channel = nb * kVec + c, tap = taps ? r : k;
                               if ((taps ? r >= kernelTaps : r != c) || channel >= channels)
                                   return 0.0f;
                               return weights[size_t{tap} * channels + channel];
                           });
}

std::vector<uint8_t> packDepthwiseWeights(const uint8_t* weights, uint32_t channels,
                                          uint32_t kernelH, uint32_t kernelW,
                                          int32_t weightZeroPoint,
                                          const std::vector<ChannelQuant>& quant, bool taps) {
    std::vector<uint8_t> stream;
    stream.reserve(depthwiseWeightStreamBytes(channels, kernelH, kernelW, taps));
    const uint8_t padding = static_cast<uint8_t>(weightZeroPoint);
    for (uint32_t nb = 0; nb < ceilDiv(channels, kVec); ++nb) {
        appendQuantWords(stream, quant, nb * kVec);
        if (taps) {
            // One block: row t is tap t (ky * kernelW + kx), column c channel 16 * nb + c.
            for (uint32_t r = 0; r < kArrayRows; ++r) {
                for (uint32_t c = 0; c < kArrayCols; ++c) {
                    const uint32_t channel = nb * kVec + c;
                    uint8_t value = padding;
                    if (r < kernelH * kernelW && channel < channels) {
                        value = weights[r * channels + channel];
                    }
                    stream.push_back(value);
                }
            }
            continue;
        }
        for (uint32_t ky = 0; ky < kernelH; ++ky) {
            for (uint32_t kx = 0; kx < kernelW; ++kx) {
                // Lane r of the input word feeds only output column r: a diagonal block.
                for (uint32_t r = 0; r < kArrayRows; ++r) {
                    for (uint32_t c = 0; c < kArrayCols; ++c) {
                        const uint32_t channel = nb * kVec + r;
                        uint8_t value = padding;
                        if (r == c && channel < channels) {
                            value = weights[(ky * kernelW + kx) * channels + channel];
                        }
                        stream.push_back(value);
                    }
                }
            }
        }
    }
    return stream;
}

void ChainBuilder::append(Descriptor d) {
    if (mFenceNext) {
        d.flags |= static_cast<uint32_t>(DescFlag::FENCE);
        mFenceNext = false;
    }
    mDescriptors.push_back(d);
}

namespace {

// One output tile of a window operation and the input region it reads (clipped to the input;
// what lies outside is padding).
struct WindowTile {
    uint32_t oy0 = 0, ox0 = 0, th = 0, tw = 0;
    uint32_t ry0 = 0, rx0 = 0, rows = 0, cols = 0;
    uint32_t padTop = 0, padLeft = 0;
};

// Words of DRAM traffic a tile costs besides its input region and weights (its descriptor, the
// start and end of its pipeline), for the choice of tile shape.
constexpr uint64_t kTileOverheadWords = 48;
// And per output row of a tile (the window restarts at the row's first pixel).
constexpr uint64_t kOutputRowOverheadWords = 16;
// Output pixels a short first band of tiles keeps at least (windowTiles).
constexpr uint32_t kFirstBandPixels = 2 * kArrayCols;
// A short last band's extra weight stream, at most this many times its output words
// (windowTiles): MobileNet-v2's 14x14 expansions (1.7 and 2.5 times) split, MobileNet-v1's
// pointwise layers, whose streams are larger than what the next layer's first band loads, not.
constexpr uint32_t kLastBandWeightShare = 4;

// Channel slices of a global pooling window (ChainBuilder::pool): four hide three quarters of
// its load; more gain nothing measurable (MobileNet-v2's MEAN: 7,985 cycles in one piece, 5,415
// in four or eight).
constexpr uint32_t kGlobalPoolSlices = 4;

// The output tiles of a window operation. A tile is as many output rows as the accumulators and
// the scratchpad buffer hold, of the widest that fits (whole rows when they do) or of a narrower
// width: of those candidates, the one whose tiles read the fewest DRAM words in all (input
// regions, whose halos overlap, and `weightWords`, the weight stream every tile repeats) wins,
// ties going to fewer tiles. `chainWords` > 0: the tile's output (that many words per pixel)
// stays on chip in a scratchpad buffer too. `maxRegionPixels`: a limit on the input region's
// pixels (a region computed on chip fills an accumulator bank). `residualWords`: words per
// output pixel of a RESIDUAL B that share the input region's buffer. `bufferWords`: the words the
// input region may fill (both buffers for a WIDE descriptor). `lastBand`: a short last band may
// split off (8-bit layers; float ones are bound by DRAM, where the weights streamed once more cost
// time).
Result<std::vector<WindowTile>> windowTiles(
    const DeviceTensor& input, const DeviceTensor& output, const ConvGeometry& g,
    uint32_t chainWords = 0, uint64_t weightWords = 0, uint32_t maxRegionPixels = UINT32_MAX,
    uint32_t residualWords = 0, uint32_t bufferWords = kSpadWords, bool lastBand = false) {
    if (input.n != 1 || output.n != 1) {
        return invalidArgument("NPU window operations take one image at a time");
    }
    if (g.kernelH == 0 || g.kernelW == 0 || g.strideH == 0 || g.strideW == 0 || g.dilationH == 0 ||
        g.dilationW == 0 || g.kernelH > 255 || g.kernelW > 255 || g.strideH > 255 ||
        g.strideW > 255 || g.dilationH > 255 || g.dilationW > 255) {
        return invalidArgument("NPU kernel, stride and dilation must be in [1, 255]");
    }
    if (input.c > 0xffff || output.c > 0xffff || input.w > 0xffff || input.h > 0xffff) {
        return invalidArgument("NPU tensor dimensions must be below 65536");
    }
    const uint32_t inWords = wordsPerRow(input.c);
    const uint32_t maxPixels =
        chainWords == 0 ? kAccDepth : std::min(kAccDepth, kSpadWords / chainWords);
    if (maxPixels == 0) {
        return invalidArgument("NPU: one output pixel does not fit the scratchpad");
    }
    const uint32_t spanH = (g.kernelH - 1) * g.dilationH + 1;
    const uint32_t spanW = (g.kernelW - 1) * g.dilationW + 1;
    const auto regionRows = [&](uint32_t tileH) {
        return std::min(input.h, (tileH - 1) * g.strideH + spanH);
    };
    const auto regionCols = [&](uint32_t tileW) {
        return std::min(input.w, (tileW - 1) * g.strideW + spanW);
    };
    const auto fits = [&](uint32_t tileH, uint32_t tileW) {
        const uint64_t pixels = uint64_t{regionRows(tileH)} * regionCols(tileW);
        return pixels * inWords + uint64_t{tileH} * tileW * residualWords <= bufferWords &&
               pixels <= maxRegionPixels;
    };
    uint32_t widest = std::min(output.w, maxPixels);
    while (widest > 1 && !fits(1, widest)) {
        widest = ceilDiv(widest, 2);
    }
    if (!fits(1, widest)) {
        return invalidArgument("NPU: one output pixel's input window does not fit the scratchpad");
    }
    const auto rowsFor = [&](uint32_t tileW) {
        uint32_t tileH = std::min(output.h, maxPixels / tileW);
        while (tileH > 1 && !fits(tileH, tileW)) {
            --tileH;
        }
        return tileH;
    };
    const auto cost = [&](uint32_t tileW, uint32_t tileH) {
        const uint64_t tiles = uint64_t{ceilDiv(output.h, tileH)} * ceilDiv(output.w, tileW);
        return tiles * (uint64_t{regionRows(tileH)} * regionCols(tileW) * inWords + weightWords +
                        kTileOverheadWords + uint64_t{tileH} * kOutputRowOverheadWords);
    };
    uint32_t tileW = widest, tileH = rowsFor(widest);
    for (uint32_t parts = 2; parts <= 16 && ceilDiv(widest, parts) < tileW; ++parts) {
        const uint32_t w = ceilDiv(widest, parts), h = rowsFor(w);
        if (cost(w, h) < cost(tileW, tileH)) tileW = w, tileH = h;
    }

    // A tile loads once the previous layer's tiles that write what it reads have stored
    // (placeFences), so the first tile of a layer of many bands loads while the previous layer
    // still runs its last ones. With at most two bands, the first tile reads into the previous
    // layer's last band (consecutive layers tile alike) and waits for its drain with the array
    // idle: a short first band (at most half a band) starts the array sooner. It costs one more
    // weight stream, hidden behind that band's compute when each of its K steps has at least
    // kFirstBandPixels pixels. A short last band as well lets the next layer's short first band,
    // which reads only the first rows, load while this layer computes its last rows, where its
    // weight stream, read once more, is small beside what that load reads (at most
    // kLastBandWeightShare times the band's output words). The rows between are split into bands
    // of equal height (within one), so that no band is left with a few rows, too few pixels to
    // hide its weight streams. (WIDE tiles load only once the array is idle: no short band.)
    const uint32_t shortH = ceilDiv(kFirstBandPixels, tileW);
    const uint32_t firstH = bufferWords == kSpadWords && 2 * shortH <= std::min(tileH, output.h) &&
                                    ceilDiv(output.h, tileH) <= 2
                                ? shortH
                                : 0;
    const uint64_t lastBandWords = uint64_t{shortH} * output.w * wordsPerRow(output.c);
    const uint32_t lastH = lastBand && firstH > 0 && 3 * shortH <= output.h &&
                                   weightWords <= kLastBandWeightShare * lastBandWords
                               ? shortH
                               : 0;
    const uint32_t rest = output.h - firstH - lastH, bands = ceilDiv(rest, tileH);
    std::vector<WindowTile> tiles;
    for (uint32_t oy0 = 0, band = 0; oy0 < output.h; ++band) {
        const uint32_t bandH = firstH > 0 && oy0 == 0 ? firstH
                               : oy0 == output.h - lastH
                                   ? lastH
                                   : rest / bands + (band - (firstH > 0) < rest % bands ? 1 : 0);
        for (uint32_t ox0 = 0; ox0 < output.w; ox0 += tileW) {
            WindowTile t;
            t.oy0 = oy0;
            t.ox0 = ox0;
            t.th = std::min(bandH, output.h - oy0);
            t.tw = std::min(tileW, output.w - ox0);
            const int64_t iy0 = int64_t{oy0} * g.strideH - g.padTop;
            const int64_t ix0 = int64_t{ox0} * g.strideW - g.padLeft;
            const int64_t iy1 = int64_t{oy0 + t.th - 1} * g.strideH + spanH - g.padTop;
            const int64_t ix1 = int64_t{ox0 + t.tw - 1} * g.strideW + spanW - g.padLeft;
            const int64_t ry0 = std::clamp<int64_t>(iy0, 0, input.h);
            const int64_t rx0 = std::clamp<int64_t>(ix0, 0, input.w);
            const int64_t ry1 = std::clamp<int64_t>(iy1, 0, input.h);
            const int64_t rx1 = std::clamp<int64_t>(ix1, 0, input.w);
            if (ry1 <= ry0 || rx1 <= rx0) {
                return invalidArgument("NPU: an output tile's window lies entirely in padding");
            }
            if (ry0 - iy0 > kMaxPad || rx0 - ix0 > kMaxPad) {
                return invalidArgument("NPU: padding above 255");
            }
            t.ry0 = static_cast<uint32_t>(ry0);
            t.rx0 = static_cast<uint32_t>(rx0);
            t.rows = static_cast<uint32_t>(ry1 - ry0);
            t.cols = static_cast<uint32_t>(rx1 - rx0);
            t.padTop = static_cast<uint32_t>(ry0 - iy0);
            t.padLeft = static_cast<uint32_t>(rx0 - ix0);
            tiles.push_back(t);
        }
        oy0 += bandH;
    }
    return tiles;
}

// The descriptor of one tile: its input region of `input`, its pixels of `output`.
Descriptor tileDescriptor(Opcode opcode, uint32_t flags, uint32_t tag, const DeviceTensor& input,
                          const DeviceTensor& output, const WindowTile& t, const ConvLayer& layer,
                          const std::optional<ChainBuilder::Residual>& residual = std::nullopt) {
    Descriptor d;
    d.opcode = opcode;
    d.flags = flags;
    d.tag = tag;
    d.aSigned = input.isSigned;
    d.bSigned = layer.weightsSigned;
    d.outSigned = output.isSigned;
    d.a = rowsOf(input.addr + t.ry0 * input.rowBytes() + t.rx0 * input.pixelBytes(), input.c,
                 t.cols, input.pixelBytes(), t.rows, input.rowBytes());
    if (input.planeStride != 0) {
        d.aPlanar = true;
        d.a.stride3 = input.planeStride;
    }
    d.out = rowsOf(output.addr + t.oy0 * output.rowBytes() + t.ox0 * output.pixelBytes(), output.c,
                   t.tw, output.pixelBytes(), t.th, output.rowBytes());
    d.wAddr = layer.weights;
    d.kernelH = layer.geometry.kernelH;
    d.kernelW = layer.geometry.kernelW;
    d.strideH = layer.geometry.strideH;
    d.strideW = layer.geometry.strideW;
    d.dilationH = layer.geometry.dilationH;
    d.dilationW = layer.geometry.dilationW;
    d.padTop = t.padTop;
    d.padLeft = t.padLeft;
    d.aZeroPoint = input.zeroPoint;
    d.bZeroPoint = layer.weightZeroPoint;
    d.outZeroPoint = layer.stage.zeroPoint;
    d.actMin = layer.stage.actMin;
    d.actMax = layer.stage.actMax;
    d.format = layer.stage.format;
    d.fpMin = layer.stage.fpMin;
    d.fpMax = layer.stage.fpMax;
    if (residual) {
        // B: the tile's pixels of the residual tensor; the layer's stage feeds the ADD.
        const DeviceTensor& b = residual->tensor;
        const ChainBuilder::ElementwiseParams& p = residual->params;
        d.flags |= static_cast<uint32_t>(DescFlag::RESIDUAL);
        d.b = rowsOf(b.addr + t.oy0 * b.rowBytes() + t.ox0 * b.pixelBytes(), b.c, t.tw,
                     b.pixelBytes(), t.th, b.rowBytes());
        d.midZeroPoint = residual->midZeroPoint;
        d.resZeroPoint = b.zeroPoint;
        d.leftShift = static_cast<uint32_t>(p.leftShift);
        d.aMultiplier = p.aMultiplier, d.aShift = p.aShift;
        d.bMultiplier = p.bMultiplier, d.bShift = p.bShift;
        d.outMultiplier = p.outMultiplier, d.outShift = p.outShift;
        d.outZeroPoint = p.stage.zeroPoint;
        d.actMin = p.stage.actMin;
        d.actMax = p.stage.actMax;
    }
    return d;
}

// Words per output pixel a RESIDUAL B keeps beside a tile's input.
uint32_t residualWords(const std::optional<ChainBuilder::Residual>& residual) {
    return residual ? wordsPerRow(residual->tensor.c) : 0;
}

}  // namespace

namespace {

// f(in, out, first) on the channel slices [first, first + slice) bytes of a window operation
// whose channels are independent (pooling, depthwise); the last slice may be shorter.
template <typename F>
Status forChannelSlices(const DeviceTensor& input, const DeviceTensor& output, uint32_t slice,
                        F f) {
    for (uint32_t first = 0; first < input.c; first += slice) {
        DeviceTensor in = input, out = output;
        in.addr += first, out.addr += first;
        in.c = out.c = std::min(slice, input.c - first);
        in.pixelStride = input.pixelBytes(), out.pixelStride = output.pixelBytes();
        NN_RETURN_IF_ERROR(f(in, out, first));
    }
    return okStatus();
}

// Words of the weight stream each tile of `opcode` reads (all of it).
uint64_t tileWeightWords(Opcode opcode, uint32_t flags, const DeviceTensor& input,
                         const DeviceTensor& output, const ConvLayer& layer) {
    const uint32_t size = formatBytes(layer.stage.format);
    const ConvGeometry& g = layer.geometry;
    if (opcode == Opcode::DWCONV) {
        const bool taps = (flags & static_cast<uint32_t>(DescFlag::TAPS)) != 0;
        return depthwiseWeightStreamBytes(output.c / size, g.kernelH, g.kernelW, taps, size != 1) /
               kVec;
    }
    if (opcode != Opcode::CONV) return 0;
    if (size == 1) return convWeightStreamBytes(output.c, g.kernelH, g.kernelW, input.c) / kVec;
    // binary32 rows, a K step per tap and input block
    const uint64_t kSteps = uint64_t{g.kernelH} * g.kernelW * ceilDiv(input.c / size, kArrayRows);
    return uint64_t{ceilDiv(output.c / size, kVec)} *
           (kWeightQuantWords + kSteps * kArrayRows * kFloatWeightRowWords);
}

}  // namespace

Status ChainBuilder::windowOp(Opcode opcode, const DeviceTensor& input, const DeviceTensor& output,
                              const ConvLayer& layer, uint32_t flags, uint32_t tag,
                              const std::optional<Residual>& residual) {
    const uint64_t weightWords = tileWeightWords(opcode, flags, input, output, layer);
    auto tiles = windowTiles(input, output, layer.geometry, 0, weightWords, UINT32_MAX,
                             residualWords(residual), kSpadWords,
                             layer.stage.format == static_cast<uint32_t>(Format::INT8));
    NN_RETURN_IF_ERROR(tiles.status());
    // A convolution whose tiles have fewer pixels than a weight block has words waits for its
    // weight stream, which every tile repeats (binary32 pointwise layers of many channels): WIDE
    // tiles fill both buffers, and pay for it with loads that no longer overlap the array. DRAM
    // words decide, the WIDE tiles' input counted twice.
    const uint32_t blockWords =
        kArrayRows *
        (layer.stage.format == static_cast<uint32_t>(Format::INT8) ? 1 : kFloatWeightRowWords);
    const auto maxPixels = [](const std::vector<WindowTile>& ts) {
        uint32_t m = 0;
        for (const WindowTile& t : ts) m = std::max(m, t.th * t.tw);
        return m;
    };
    const auto words = [&](const std::vector<WindowTile>& ts, uint64_t loadsCounted) {
        uint64_t sum = 0;
        for (const WindowTile& t : ts) {
            sum += loadsCounted * t.rows * t.cols * wordsPerRow(input.c) + weightWords;
        }
        return sum;
    };
    if (opcode == Opcode::CONV && flags == 0 && !residual && maxPixels(*tiles) < blockWords) {
        auto wide = windowTiles(input, output, layer.geometry, 0, weightWords, UINT32_MAX, 0,
                                2 * kSpadWords);
        if (wide.ok() && words(*wide, 2) < words(*tiles, 1)) {
            tiles = std::move(wide);
            flags = static_cast<uint32_t>(DescFlag::WIDE);
        }
    }
    for (const WindowTile& t : *tiles) {
        append(tileDescriptor(opcode, flags, tag, input, output, t, layer, residual));
    }
    return okStatus();
}

namespace {

// Words of the weight stream of a 1x1 convolution of `format` from `input` to `output`.
uint64_t pointwiseWeightWords(const DeviceTensor& input, const DeviceTensor& output,
                              uint32_t format) {
    OutputStage stage;
    stage.format = format;
    return tileWeightWords(Opcode::CONV, 0, input, output, {0, false, 0, {}, stage});
}

// Words of a TAPS depthwise layer's weight stream of `format`.
uint64_t tapsWeightWords(const DeviceTensor& input, const ConvGeometry& depthwise,
                         const DeviceTensor& intermediate, uint32_t format) {
    OutputStage stage;
    stage.format = format;
    return tileWeightWords(Opcode::DWCONV, static_cast<uint32_t>(DescFlag::TAPS), input,
                           intermediate, {0, false, 0, depthwise, stage});
}

// The tiles of a fused depthwise-pointwise pair of `format`: the depthwise layer's, its output
// kept on chip; each tile streams both layers' weights. With an expansion (from
// `expansionInput`, 8-bit) its result over the tile's input region stays on chip too: the region
// fills an accumulator bank, and it and the expansion's input (fewer channels) a buffer each. A
// RESIDUAL B (`residualWords` per pixel) shares the pointwise layer's buffer with the depthwise
// result.
Result<std::vector<WindowTile>> fusedTiles(const DeviceTensor& input, const ConvGeometry& depthwise,
                                           const DeviceTensor& intermediate,
                                           const DeviceTensor& output, uint32_t format,
                                           const DeviceTensor* expansionInput = nullptr,
                                           uint32_t residualWords = 0) {
    uint64_t weightWords = tapsWeightWords(input, depthwise, intermediate, format) +
                           pointwiseWeightWords(intermediate, output, format);
    if (expansionInput) {
        if (expansionInput->c > input.c) {
            return invalidArgument(
                "NPU: an expansion fused before a depthwise layer must not narrow the channels");
        }
        weightWords += convWeightStreamBytes(input.c, 1, 1, expansionInput->c) / kVec;
    }
    return windowTiles(input, intermediate, depthwise, wordsPerRow(intermediate.c) + residualWords,
                       weightWords, expansionInput ? kAccDepth : UINT32_MAX, 0, kSpadWords,
                       format == static_cast<uint32_t>(Format::INT8));
}

// The tiles of a fused depthwise-pointwise pair where fusing it pays (depthwisePointwisePays);
// nullopt otherwise.
std::optional<std::vector<WindowTile>> payingPairTiles(const DeviceTensor& input,
                                                       const ConvGeometry& depthwise,
                                                       const DeviceTensor& intermediate,
                                                       const DeviceTensor& output,
                                                       uint32_t format) {
    if (!depthwiseUsesTaps(depthwise)) return std::nullopt;
    auto tiles = fusedTiles(input, depthwise, intermediate, output, format);
    if (!tiles.ok()) return std::nullopt;
    const uint64_t pixels = uint64_t{intermediate.h} * intermediate.w;
    const uint64_t pwWeights = pointwiseWeightWords(intermediate, output, format);
    if (format == static_cast<uint32_t>(Format::INT8)) {
        // A time model in array steps and DRAM words, each part the longer of the two: fused,
        // the TAPS steps and the pointwise K steps against the tiles' regions, both weight
        // streams per tile and the output; apart, the depthwise layer (its map in, the
        // intermediate out) then the pointwise one (the intermediate in, its weights once).
        const uint64_t midWords = wordsPerRow(intermediate.c), outWords = wordsPerRow(output.c);
        const uint64_t dwWeights = tapsWeightWords(input, depthwise, intermediate, format);
        const uint64_t dwSteps = pixels * midWords, pwSteps = pixels * midWords * outWords;
        const uint64_t midMap = pixels * midWords, outMap = pixels * outWords;
        uint64_t regionWords = 0;
        for (const WindowTile& t : *tiles) regionWords += uint64_t{t.rows} * t.cols * midWords;
        const uint64_t fused = std::max(
            dwSteps + pwSteps, regionWords + tiles->size() * (dwWeights + pwWeights) + outMap);
        const uint64_t inMap = uint64_t{input.h} * input.w * midWords;
        const uint64_t apart = std::max(dwSteps, inMap + dwWeights + midMap) +
                               std::max(pwSteps, midMap + pwWeights + outMap);
        if (fused > apart) return std::nullopt;
    } else if ((tiles->size() - 1) * pwWeights >= 2 * pixels * wordsPerRow(intermediate.c)) {
        return std::nullopt;
    }
    return std::move(*tiles);
}

}  // namespace

bool depthwisePointwisePays(const DeviceTensor& input, const ConvGeometry& depthwise,
                            const DeviceTensor& intermediate, const DeviceTensor& output,
                            uint32_t format) {
    return payingPairTiles(input, depthwise, intermediate, output, format).has_value();
}

bool expansionPays(const DeviceTensor& expansionInput, const DeviceTensor& input,
                   const ConvGeometry& depthwise, const DeviceTensor& intermediate,
                   const DeviceTensor& output) {
    const auto int8 = static_cast<uint32_t>(Format::INT8);
    auto tiles = fusedTiles(input, depthwise, intermediate, output, int8, &expansionInput);
    const auto pairTiles = payingPairTiles(input, depthwise, intermediate, output, int8);
    if (!tiles.ok() || !pairTiles) return false;
    uint64_t regionPixels = 0;
    for (const WindowTile& t : *tiles) regionPixels += uint64_t{t.rows} * t.cols;
    const uint64_t inWords = wordsPerRow(expansionInput.c), midWords = wordsPerRow(input.c);
    const uint64_t outWords = wordsPerRow(output.c);
    const uint64_t mapPixels = uint64_t{input.h} * input.w;
    const uint64_t outPixels = uint64_t{output.h} * output.w;
    // Array steps per pixel: the expansion's K steps times blocks; the depthwise layer's one per
    // block (TAPS), and the pointwise layer's K steps times blocks, per output pixel.
    const uint64_t expandSteps = inWords * midWords;
    const uint64_t pairSteps = outPixels * (midWords + wordsPerRow(intermediate.c) * outWords);
    // Apart, the array waits at the boundary between the two layers for the pair's first tile
    // to load its expanded rows; fused, for the first tile's narrower expansion input instead.
    const WindowTile& first = pairTiles->front();
    const uint64_t boundary = uint64_t{first.rows} * first.cols * (midWords - inWords);
    const uint64_t apart = std::max(mapPixels * expandSteps, mapPixels * (inWords + midWords)) +
                           std::max(pairSteps, mapPixels * midWords + outPixels * outWords) +
                           boundary;
    const uint64_t fused = std::max(regionPixels * expandSteps + pairSteps,
                                    regionPixels * inWords + outPixels * outWords);
    return fused <= apart;  // equal: the expanded tensor's DRAM traffic is saved anyway
}

Status ChainBuilder::depthwisePointwise(const DeviceTensor& input, const ConvLayer& depthwise,
                                        const DeviceTensor& intermediate,
                                        const ConvLayer& pointwise, const DeviceTensor& output,
                                        const std::optional<Expansion>& expansion,
                                        const std::optional<Residual>& residual, uint32_t tag) {
    if (input.c != intermediate.c) {
        return invalidArgument("NPU DWCONV needs depth multiplier 1");
    }
    const uint32_t format = depthwise.stage.format;
    if (format != pointwise.stage.format ||
        (format != static_cast<uint32_t>(Format::INT8) &&
         (expansion || residual || intermediate.c % (kVec * formatBytes(format)) != 0))) {
        return invalidArgument(
            "NPU depthwise-pointwise: both layers of one format; float layers fuse as pairs of "
            "whole channel blocks only");
    }
    const auto pointwiseOnly = [](const ConvGeometry& g) {
        return g.kernelH == 1 && g.kernelW == 1 && g.strideH == 1 && g.strideW == 1 &&
               g.padTop == 0 && g.padLeft == 0;
    };
    if (!pointwiseOnly(pointwise.geometry) || intermediate.h != output.h ||
        intermediate.w != output.w) {
        return invalidArgument(
            "NPU depthwise-pointwise: the second layer must be a 1x1 convolution, stride 1, no "
            "padding");
    }
    if (expansion && (!pointwiseOnly(expansion->layer.geometry) || expansion->input.h != input.h ||
                      expansion->input.w != input.w)) {
        return invalidArgument(
            "NPU depthwise-pointwise: the expansion must be a 1x1 convolution, stride 1, no "
            "padding");
    }
    auto tiles = fusedTiles(input, depthwise.geometry, intermediate, output, format,
                            expansion ? &expansion->input : nullptr, residualWords(residual));
    NN_RETURN_IF_ERROR(tiles.status());
    const uint32_t chainOut =
        static_cast<uint32_t>(DescFlag::CHAIN_OUT) |
        (depthwiseUsesTaps(depthwise.geometry) ? static_cast<uint32_t>(DescFlag::TAPS) : 0) |
        (expansion ? static_cast<uint32_t>(DescFlag::CHAIN_IN) : 0);
    for (const WindowTile& t : *tiles) {
        if (expansion) {
            // The expansion over the tile's input region, into the depthwise layer's buffer.
            const WindowTile region{t.ry0, t.rx0,  t.rows, t.cols, t.ry0,
                                    t.rx0, t.rows, t.cols, 0,      0};
            append(tileDescriptor(Opcode::CONV, static_cast<uint32_t>(DescFlag::CHAIN_OUT), tag,
                                  expansion->input, input, region, expansion->layer));
        }
        append(tileDescriptor(Opcode::DWCONV, chainOut, tag, input, intermediate, t, depthwise));
        // The pointwise tile reads the depthwise tile from the scratchpad: same pixels.
        WindowTile same{t.oy0, t.ox0, t.th, t.tw, t.oy0, t.ox0, t.th, t.tw, 0, 0};
        append(tileDescriptor(Opcode::CONV, static_cast<uint32_t>(DescFlag::CHAIN_IN), tag,
                              intermediate, output, same, pointwise, residual));
    }
    return okStatus();
}

Status ChainBuilder::conv(const DeviceTensor& input, const DeviceTensor& output, uint32_t weights,
                          bool weightsSigned, int32_t weightZeroPoint, const ConvGeometry& geometry,
                          const OutputStage& stage, uint32_t tag,
                          const std::optional<Residual>& residual) {
    const uint32_t size = formatBytes(stage.format);
    const bool pack =
        ConvWeightRows(input.c / size, geometry.kernelH, geometry.kernelW, size).packed;
    if (residual && (pack || stage.format != static_cast<uint32_t>(Format::INT8))) {
        return invalidArgument("NPU: a residual is added to 8-bit convolutions without PACK only");
    }
    if (input.planeStride != 0 && (residual || input.c > 4 * size || input.pixelBytes() != size)) {
        return invalidArgument(
            "NPU: a convolution reads NCHW planes of at most 4 channels, "
            "without a residual");
    }
    return windowOp(Opcode::CONV, input, output,
                    {weights, weightsSigned, weightZeroPoint, geometry, stage},
                    pack ? static_cast<uint32_t>(DescFlag::PACK) : 0, tag, residual);
}

Status ChainBuilder::depthwise(const DeviceTensor& input, const DeviceTensor& output,
                               uint32_t weights, bool weightsSigned, int32_t weightZeroPoint,
                               const ConvGeometry& geometry, const OutputStage& stage, bool taps,
                               uint32_t tag) {
    if (input.c != output.c) {
        return invalidArgument("NPU DWCONV needs depth multiplier 1");
    }
    if (taps && !depthwiseUsesTaps(geometry)) {
        return invalidArgument("NPU DWCONV: this kernel cannot use the TAPS mode");
    }
    const ConvLayer layer{weights, weightsSigned, weightZeroPoint, geometry, stage};
    // A map that does not fit the scratchpad with all its channels runs on slices of channels
    // (whole vectors) that let it fit: tiles of whole rows re-read only their halo rows, and
    // diagonal blocks (a block per tap and channel block with every tile) stream about once.
    const uint32_t size = formatBytes(stage.format);
    const uint32_t vector = kVec * size;
    const uint64_t mapPixels = std::max<uint64_t>(1, uint64_t{input.h} * input.w);
    uint32_t slice = input.c;
    if (wordsPerRow(input.c) * mapPixels > kSpadWords) {
        const uint64_t fitting = kSpadWords / mapPixels * kVec;
        slice = static_cast<uint32_t>(std::max<uint64_t>(vector, fitting / vector * vector));
    }
    // Each slice's weights start at its first channel block's.
    const auto blockBytes = static_cast<uint32_t>(
        depthwiseWeightStreamBytes(kVec, geometry.kernelH, geometry.kernelW, taps, size != 1));
    const uint32_t flags = taps ? static_cast<uint32_t>(DescFlag::TAPS) : 0;
    return forChannelSlices(input, output, slice,
                            [&](const DeviceTensor& in, const DeviceTensor& out, uint32_t first) {
                                ConvLayer part = layer;
                                part.weights += first / vector * blockBytes;
                                return windowOp(Opcode::DWCONV, in, out, part, flags, tag);
                            });
}

Status ChainBuilder::fullyConnected(const DeviceTensor& input, const DeviceTensor& output,
                                    uint32_t weights, bool weightsSigned, int32_t weightZeroPoint,
                                    const OutputStage& stage, uint32_t tag) {
    // Batch rows become the pixels of a 1 x batch image.
    DeviceTensor in = input;
    in.w = input.n * input.h * input.w;
    in.n = in.h = 1;
    DeviceTensor out = output;
    out.w = output.n * output.h * output.w;
    out.n = out.h = 1;
    if (in.w != out.w) {
        return invalidArgument("NPU FULLY_CONNECTED: batch sizes differ");
    }
    return windowOp(Opcode::CONV, in, out,
                    {weights, weightsSigned, weightZeroPoint, ConvGeometry{}, stage}, 0, tag);
}

Status ChainBuilder::pool(Pooling kind, const DeviceTensor& input, const DeviceTensor& output,
                          const ConvGeometry& geometry, const OutputStage& stage, uint32_t tag) {
    if (input.c != output.c) {
        return invalidArgument("NPU pooling keeps the channel count");
    }
    // Channels pool apart: a window whose pixels do not fit the scratchpad with every channel
    // (a global average over 1024 float channels) runs on slices of whole words of channels.
    const uint64_t windowPixels =
        uint64_t{std::min(input.h, geometry.kernelH)} * std::min(input.w, geometry.kernelW);
    uint32_t slice = input.c;
    if (windowPixels * wordsPerRow(input.c) > kSpadWords) {
        slice = static_cast<uint32_t>(std::max<uint64_t>(1, kSpadWords / windowPixels)) * kVec;
    }
    // A global window (one output pixel, so one tile) loads its whole input before it pools;
    // in kGlobalPoolSlices channel slices each slice's load overlaps the previous one's pooling.
    if (output.h * output.w == 1) {
        slice = std::min(slice, ceilDiv(wordsPerRow(input.c), kGlobalPoolSlices) * kVec);
    }
    const size_t first = mDescriptors.size();
    NN_RETURN_IF_ERROR(forChannelSlices(
        input, output, slice, [&](const DeviceTensor& in, const DeviceTensor& out, uint32_t) {
            return windowOp(kind == Pooling::MAX ? Opcode::MAXPOOL : Opcode::AVGPOOL, in, out,
                            {0, false, 0, geometry, stage}, 0, tag);
        }));
    for (size_t i = first; i < mDescriptors.size(); ++i) {
        mDescriptors[i].truncate = kind == Pooling::MEAN;
    }
    return okStatus();
}

namespace {

// The strides of a dense tensor read over `out`'s shape (0 along its dimensions of size 1).
StridedTensor stridedOver(const DeviceTensor& t) {
    return {t.addr,
            {t.n == 1 ? 0 : t.imageBytes(), t.h == 1 ? 0 : t.rowBytes(),
             t.w == 1 ? 0 : t.pixelBytes(), 1}};
}

}  // namespace

Status ChainBuilder::elementwise(bool mul, const DeviceTensor& a, const DeviceTensor& b,
                                 const DeviceTensor& out, const ElementwiseParams& params,
                                 uint32_t tag) {
    if (a.c != out.c || b.c != out.c) {
        return invalidArgument("NPU element-wise: channel counts must match");
    }
    const auto broadcastOk = [&](const DeviceTensor& t) {
        return (t.n == out.n || t.n == 1) && (t.h == out.h || t.h == 1) &&
               (t.w == out.w || t.w == 1);
    };
    if (!broadcastOk(a) || !broadcastOk(b)) {
        return invalidArgument("NPU element-wise: shapes do not broadcast to the output");
    }
    Descriptor d;
    d.opcode = mul ? Opcode::MUL : Opcode::ADD;
    d.tag = tag;
    d.aSigned = a.isSigned;
    d.bSigned = b.isSigned;
    d.outSigned = out.isSigned;
    d.aZeroPoint = a.zeroPoint;
    d.bZeroPoint = b.zeroPoint;
    d.outZeroPoint = params.stage.zeroPoint;
    d.actMin = params.stage.actMin;
    d.actMax = params.stage.actMax;
    d.leftShift = static_cast<uint32_t>(params.leftShift);
    d.aMultiplier = params.aMultiplier;
    d.aShift = params.aShift;
    d.bMultiplier = params.bMultiplier;
    d.bShift = params.bShift;
    d.outMultiplier = params.outMultiplier;
    d.outShift = params.outShift;
    return stream(d, stridedOver(a), stridedOver(b), stridedOver(out),
                  {out.n, out.h, out.w, out.c});
}

Status ChainBuilder::lookup(const DeviceTensor& in, const DeviceTensor& out, uint32_t table,
                            uint32_t tag) {
    if (in.n != out.n || in.h != out.h || in.w != out.w || in.c != out.c) {
        return invalidArgument("NPU LUT: input and output shapes must match");
    }
    Descriptor d;
    d.opcode = Opcode::LUT;
    d.tag = tag;
    d.aSigned = in.isSigned;
    d.outSigned = out.isSigned;
    d.wAddr = table;
    d.actMin = out.isSigned ? -128 : 0;
    d.actMax = out.isSigned ? 127 : 255;
    return stream(d, stridedOver(in), std::nullopt, stridedOver(out), {out.n, out.h, out.w, out.c});
}

Status ChainBuilder::stream(const Descriptor& op, const StridedTensor& a,
                            const std::optional<StridedTensor>& b, const StridedTensor& out,
                            const std::array<uint32_t, 4>& shape) {
    // Scratchpad words one streaming descriptor may load per operand.
    constexpr uint32_t kWords = kSpadWords / 2;
    constexpr uint32_t kMaxCount = 0xffff;  // 16-bit INNER and COUNT fields
    const uint64_t total = uint64_t{shape[0]} * shape[1] * shape[2] * shape[3];
    const uint32_t size = elementBytes(op);
    auto contiguous = [&](const StridedTensor& s) {
        uint32_t expect = 1;
        for (int i = 3; i >= 0; --i) {
            if (shape[i] != 1 && s.strides[i] != expect) return false;
            expect *= shape[i];
        }
        return true;
    };
    if (contiguous(a) && (!b || b->rowOfCopies || contiguous(*b)) && contiguous(out)) {
        const auto inner = static_cast<uint32_t>(std::min<uint64_t>(total, kStreamRowElements));
        const uint32_t maxRows = std::max(1u, kWords / wordsPerRow(inner * size));
        for (uint64_t done = 0; done < total;) {
            const uint64_t left = total - done;
            const auto row = static_cast<uint32_t>(std::min<uint64_t>(inner, left));
            const auto rows = static_cast<uint32_t>(std::min<uint64_t>(maxRows, left / row));
            const uint32_t rowBytes = row * size;
            Descriptor t = op;
            const auto off = static_cast<uint32_t>(done * size);
            t.a = rowsOf(a.addr + off, rowBytes, rows, rowBytes, 1, 0);
            if (b)
                t.b = b->rowOfCopies ? rowsOf(b->addr, rowBytes, rows, 0, 1, 0)
                                     : rowsOf(b->addr + off, rowBytes, rows, rowBytes, 1, 0);
            t.out = rowsOf(out.addr + off, rowBytes, rows, rowBytes, 1, 0);
            append(t);
            done += uint64_t{rows} * row;
        }
        return okStatus();
    }
    // Strided or broadcast: rows over dimensions 1..3 (or 2..3 with rows of one element).
    const bool innerShared = a.strides[3] == 1 && (!b || b->strides[3] == 1) && out.strides[3] == 1;
    // Elements of c a buffer holds: a row of them (shared inner), or one word each.
    const uint32_t partC = innerShared ? kWords * kVec / size : kWords;
    if (shape[3] > partC) {
        // c in parts whose rows fit a buffer.
        for (uint32_t c0 = 0; c0 < shape[3]; c0 += partC) {
            std::array<uint32_t, 4> part = shape;
            part[3] = std::min(partC, shape[3] - c0);
            const auto from = [&](StridedTensor s) {
                s.addr += c0 * s.strides[3] * size;
                return s;
            };
            NN_RETURN_IF_ERROR(
                stream(op, from(a), b ? std::optional(from(*b)) : std::nullopt, from(out), part));
        }
        return okStatus();
    }
    const uint32_t inner = (innerShared ? shape[3] : 1) * size;  // bytes
    if (shape[1] > kMaxCount || shape[2] > kMaxCount || shape[3] > kMaxCount || inner > kMaxCount)
        return invalidArgument("NPU streaming: dimensions beyond the descriptor's 16 bits");
    // Rows per descriptor: whole rows of w (shared inner) or single elements over c, then w.
    const uint32_t rowWords = wordsPerRow(inner);
    const uint32_t perW = innerShared ? 1 : shape[3];
    if (uint64_t{perW} * rowWords > kWords)
        return invalidArgument("NPU streaming: broadcast rows beyond the scratchpad");
    const uint32_t wChunk = std::max(1u, kWords / (perW * rowWords));
    for (uint32_t n = 0; n < shape[0]; ++n) {
        for (uint32_t h = 0; h < shape[1]; ++h) {
            for (uint32_t w0 = 0; w0 < shape[2]; w0 += wChunk) {
                const uint32_t ws = std::min(wChunk, shape[2] - w0);
                auto tensor = [&](const StridedTensor& s) {
                    const uint32_t at =
                        s.addr + (n * s.strides[0] + h * s.strides[1] + w0 * s.strides[2]) * size;
                    return innerShared ? rowsOf(at, inner, ws, s.strides[2] * size, 1, 0)
                                       : rowsOf(at, size, shape[3], s.strides[3] * size, ws,
                                                s.strides[2] * size);
                };
                Descriptor t = op;
                t.a = tensor(a);
                if (b) t.b = tensor(*b);
                t.out = tensor(out);
                append(t);
            }
        }
    }
    return okStatus();
}

namespace {

// For each byte range, the latest descriptor that touched it (writes, or weight reads), kept as
// disjoint segments: a later touch repaints what it covers.
class LastToucher {
  public:
    void paint(uint64_t begin, uint64_t end, uint32_t index) {
        if (begin >= end) return;
        cut(begin);
        cut(end);
        mSegments.erase(mSegments.lower_bound(begin), mSegments.lower_bound(end));
        mSegments[begin] = {end, index};
    }
    /// The latest descriptor that touched a byte of [begin, end).
    std::optional<uint32_t> latest(uint64_t begin, uint64_t end) const {
        std::optional<uint32_t> found;
        if (begin >= end) return found;
        auto it = mSegments.upper_bound(begin);
        if (it != mSegments.begin()) --it;
        for (; it != mSegments.end() && it->first < end; ++it) {
            if (it->second.end > begin) found = std::max(found.value_or(0), it->second.index);
        }
        return found;
    }

  private:
    struct Segment {
        uint64_t end;
        uint32_t index;
    };
    // Splits the segment containing `at` so that one starts there.
    void cut(uint64_t at) {
        auto it = mSegments.upper_bound(at);
        if (it == mSegments.begin()) return;
        --it;
        if (it->first < at && it->second.end > at) {
            mSegments[at] = it->second;
            it->second.end = at;
        }
    }
    std::map<uint64_t, Segment> mSegments;  // by first byte
};

struct ByteRange {
    uint64_t begin = 0, end = 0;
};

ByteRange rangeOf(const TensorDesc& t) {
    const auto last = [](uint32_t count) { return uint64_t{count > 0 ? count - 1 : 0}; };
    return {t.addr, uint64_t{t.addr} + last(t.count1) * t.stride1 + last(t.count2) * t.stride2 +
                        last(t.count3) * t.stride3 + t.inner};
}

}  // namespace

void placeFences(std::vector<Descriptor>& chain) {
    constexpr uint32_t kMaxSkip = (1u << 7) - 1;  // FENCE_SKIP's width
    LastToucher writers, weightReaders;
    for (uint32_t i = 0; i < chain.size(); ++i) {
        Descriptor& d = chain[i];
        d.flags &= ~static_cast<uint32_t>(DescFlag::FENCE);
        d.fenceSkip = 0;
        if (d.opcode == Opcode::NOP) continue;
        std::vector<ByteRange> reads;
        if (op::usesA(d.opcode) && !(d.flags & static_cast<uint32_t>(DescFlag::CHAIN_IN)))
            reads.push_back(rangeOf(d.a));
        if (readsB(d)) reads.push_back(rangeOf(d.b));
        const uint64_t weightBytes = weightStreamWords(d) * kDramBusBytes;
        const ByteRange weights{d.wAddr, d.wAddr + weightBytes};
        if (weightBytes > 0) reads.push_back(weights);
        const bool writes = !(d.flags & static_cast<uint32_t>(DescFlag::CHAIN_OUT));
        const ByteRange out = rangeOf(d.out);

        std::optional<uint32_t> waitFor;
        const auto later = [&](std::optional<uint32_t> j) {
            if (j) waitFor = std::max(waitFor.value_or(0), *j);
        };
        for (const ByteRange& r : reads) later(writers.latest(r.begin, r.end));
        if (writes) later(weightReaders.latest(out.begin, out.end));
        if (waitFor) {
            d.flags |= static_cast<uint32_t>(DescFlag::FENCE);
            d.fenceSkip = std::min(i - 1 - *waitFor, kMaxSkip);
        }
        if (writes) writers.paint(out.begin, out.end, i);
        if (weightBytes > 0) weightReaders.paint(weights.begin, weights.end, i);
    }
}

Result<JobResult> runJob(driver::HardwareAccess& hw, const ChainBuilder& program,
                         const JobLayout& layout, uint32_t tag, uint64_t timeoutCycles) {
    if (program.empty()) {
        return invalidArgument("runJob: empty program");
    }
    std::vector<uint32_t> words;
    words.reserve(program.descriptors().size() * kDescriptorWords);
    for (size_t i = 0; i < program.descriptors().size(); ++i) {
        Descriptor d = program.descriptors()[i];
        if (i + 1 == program.descriptors().size()) {
            d.flags |= static_cast<uint32_t>(DescFlag::LAST);
        }
        const DescriptorWords w = d.encode();
        words.insert(words.end(), w.begin(), w.end());
    }
    NN_RETURN_IF_ERROR(hw.writeMemory(layout.queueAddr, words.data(), words.size() * 4));
    const uint64_t start = driver::startJob(hw, layout, tag);
    JobResult result;
    result.interrupted = hw.waitForInterrupt(timeoutCycles);
    result.cycles = hw.cycleCount() - start;
    const driver::JobEnd end = driver::readJobEnd(hw);
    result.irqStatus = end.irqStatus;
    result.errorCode = end.errorCode;
    result.errorDesc = end.errorDesc;
    result.errorAddr = end.errorAddr;
    result.descDone = end.descDone;
    hw.writeRegister(reg::kIrqStatus, result.irqStatus);
    return result;
}

}  // namespace nncosim::npu
