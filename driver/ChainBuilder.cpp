// Descriptor chains of the NPU's operations: tiling a window operation's output into tiles that
// fit the scratchpad and accumulators, fused depthwise-pointwise pairs (and when fusing pays),
// convolutions, pooling, element-wise streams and lookups. Weight packing is WeightPacking.cpp's,
// fence placement Fences.cpp's.
#include "driver/ChainBuilder.h"

#include <algorithm>
#include <array>
#include <cstring>
#include <map>

namespace nncosim::npu {
namespace {

constexpr uint32_t kVec = kDramBusBytes;
constexpr uint32_t kMaxPad = 255;

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
