// Helpers of the NPU benchmarks: random layers in device DRAM run through the program builder.
#pragma once

#include <cstdint>
#include <cstdio>
#include <random>
#include <string>
#include <vector>

#include "driver/ChainBuilder.h"
#include "sim/Platform.h"

namespace nncosim::bench {

/// A convolution-like layer of a network (one image, NHWC, int8).
struct LayerShape {
    std::string name;
    enum class Kind { kConv, kDepthwise } kind = Kind::kConv;
    uint32_t h = 1, w = 1, inC = 1, outC = 1;
    uint32_t kernel = 1, stride = 1;
    uint32_t repeat = 1;  ///< identical layers in the network

    uint32_t pad() const { return (kernel - 1) / 2; }
    uint32_t outH() const { return (h + 2 * pad() - kernel) / stride + 1; }
    uint32_t outW() const { return (w + 2 * pad() - kernel) / stride + 1; }
    /// Multiply-accumulates of the layer (padding taps included, as layer counts do).
    uint64_t macs() const {
        const uint64_t perOutput = uint64_t{kernel} * kernel * (kind == Kind::kDepthwise ? 1 : inC);
        return uint64_t{outH()} * outW() * outC * perOutput;
    }
};

/// Random int8 data in device DRAM, placed upwards from a base address.
class DeviceData {
  public:
    DeviceData(driver::HardwareAccess& hw, uint32_t base, std::mt19937& rng)
        : mHw(hw), mNext(base), mRng(rng) {}

    uint32_t alloc(size_t bytes) {
        const uint32_t addr = (mNext + 15) / 16 * 16;
        mNext = addr + static_cast<uint32_t>(bytes);
        return addr;
    }
    std::vector<uint8_t> randomBytes(size_t bytes) {
        std::vector<uint8_t> data(bytes);
        for (auto& b : data) {
            b = static_cast<uint8_t>(mRng());
        }
        return data;
    }
    /// Allocates and writes `data`; returns its address.
    uint32_t put(const std::vector<uint8_t>& data) {
        const uint32_t addr = alloc(data.size());
        (void)mHw.writeMemory(addr, data.data(), data.size());
        return addr;
    }
    uint32_t end() const { return mNext; }

  private:
    driver::HardwareAccess& mHw;
    uint32_t mNext;
    std::mt19937& mRng;
};

inline npu::ConvGeometry geometryOf(const LayerShape& l) {
    npu::ConvGeometry g;
    g.kernelH = g.kernelW = l.kernel;
    g.strideH = g.strideW = l.stride;
    g.padTop = g.padLeft = l.pad();
    return g;
}

/// The layer's weight stream (random weights, one quantization for all channels) in DRAM.
inline npu::ConvLayer layerWeights(DeviceData& data, const LayerShape& l) {
    const std::vector<npu::ChannelQuant> quant(l.outC, {0, 1 << 30, -12});
    npu::ConvLayer layer;
    layer.weightsSigned = true;
    layer.geometry = geometryOf(l);
    if (l.kind == LayerShape::Kind::kDepthwise) {
        const auto w = data.randomBytes(size_t{l.kernel} * l.kernel * l.inC);
        layer.weights = data.put(npu::packDepthwiseWeights(
            w.data(), l.inC, l.kernel, l.kernel, 0, quant, npu::depthwiseUsesTaps(layer.geometry)));
    } else {
        const auto w = data.randomBytes(size_t{l.outC} * l.kernel * l.kernel * l.inC);
        layer.weights =
            data.put(npu::packConvWeights(w.data(), l.outC, l.kernel, l.kernel, l.inC, 0, quant));
    }
    return layer;
}

inline npu::DeviceTensor outputOf(const LayerShape& l, uint32_t addr) {
    return {addr, 1, l.outH(), l.outW(), l.outC, 0, true, 0};
}

/// Builds the layer's program over random int8 data placed from `base` up; returns the program
/// (empty when the layer cannot be tiled) and sets `end` to the first free address.
inline npu::ChainBuilder buildLayer(driver::HardwareAccess& hw, const LayerShape& l, uint32_t base,
                                    uint32_t& end, std::mt19937& rng) {
    DeviceData data(hw, base, rng);
    const npu::DeviceTensor input{
        data.put(data.randomBytes(size_t{l.h} * l.w * l.inC)), 1, l.h, l.w, l.inC, 0, true, 0};
    const npu::DeviceTensor output = outputOf(l, data.alloc(size_t{l.outH()} * l.outW() * l.outC));
    const npu::ConvLayer layer = layerWeights(data, l);
    npu::ChainBuilder program;
    const Status built =
        l.kind == LayerShape::Kind::kDepthwise
            ? program.depthwise(input, output, layer.weights, true, 0, layer.geometry, layer.stage,
                                npu::depthwiseUsesTaps(layer.geometry))
            : program.conv(input, output, layer.weights, true, 0, layer.geometry, layer.stage);
    if (!built.ok()) {
        std::fprintf(stderr, "cannot tile %s: %s\n", l.name.c_str(), built.message.c_str());
        return {};
    }
    end = data.end();
    return program;
}

/// A depthwise layer and the 1x1 convolution after it, fused (Program::depthwisePointwise).
inline npu::ChainBuilder buildDepthwisePointwise(driver::HardwareAccess& hw, const LayerShape& dw,
                                                 const LayerShape& pw, uint32_t base, uint32_t& end,
                                                 std::mt19937& rng) {
    DeviceData data(hw, base, rng);
    const npu::DeviceTensor input{data.put(data.randomBytes(size_t{dw.h} * dw.w * dw.inC)),
                                  1,
                                  dw.h,
                                  dw.w,
                                  dw.inC,
                                  0,
                                  true,
                                  0};
    const npu::DeviceTensor output = outputOf(pw, data.alloc(size_t{pw.h} * pw.w * pw.outC));
    npu::ChainBuilder program;
    const Status built = program.depthwisePointwise(input, layerWeights(data, dw), outputOf(dw, 0),
                                                    layerWeights(data, pw), output);
    if (!built.ok()) {
        std::fprintf(stderr, "cannot fuse %s and %s: %s\n", dw.name.c_str(), pw.name.c_str(),
                     built.message.c_str());
        return {};
    }
    end = data.end();
    return program;
}

}  // namespace nncosim::bench
