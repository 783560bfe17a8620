// The weight streams CONV and DWCONV descriptors read (driver/Descriptor.h's ConvWeightRows):
// per block of output channels its quantization words, then the K steps' rows, packed from
// quantized or binary32 weights.
#include <algorithm>
#include <cstring>

#include "driver/ChainBuilder.h"

namespace nncosim::npu {
namespace {

constexpr uint32_t kVec = kDramBusBytes;

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

}  // namespace nncosim::npu
