// Helpers of the NPU benchmarks: random layers in device DRAM run through the program builder.
#pragma once

#include <cstdint>
#include <cstdio>
#include <random>
#include <string>
#include <vector>

#include "sim/HardwareAccess.h"
#include "sim/NpuProgram.h"

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

/// Builds the layer's program over random int8 data placed from `base` up; returns the program
/// and sets `end` to the first free address.
inline npu::Program buildLayer(sim::HardwareAccess& hw, const LayerShape& l, uint32_t base,
                               uint32_t& end, std::mt19937& rng) {
    uint32_t next = base;
    const auto alloc = [&next](size_t bytes) {
        const uint32_t addr = (next + 15) / 16 * 16;
        next = addr + static_cast<uint32_t>(bytes);
        return addr;
    };
    const auto fill = [&](uint32_t addr, size_t bytes) {
        std::vector<uint8_t> data(bytes);
        for (auto& b : data) {
            b = static_cast<uint8_t>(rng());
        }
        (void)hw.writeMemory(addr, data.data(), data.size());
    };
    const size_t inBytes = size_t{l.h} * l.w * l.inC;
    const size_t outBytes = size_t{l.outH()} * l.outW() * l.outC;
    const uint32_t in = alloc(inBytes);
    fill(in, inBytes);
    const uint32_t out = alloc(outBytes);
    std::vector<npu::ChannelQuant> quant(l.outC, {0, 1 << 30, -12});
    npu::ConvGeometry g;
    g.kernelH = g.kernelW = l.kernel;
    g.strideH = g.strideW = l.stride;
    g.padTop = g.padLeft = l.pad();
    npu::Program program;
    const npu::DeviceTensor input{in, 1, l.h, l.w, l.inC, 0, true, 0};
    const npu::DeviceTensor output{out, 1, l.outH(), l.outW(), l.outC, 0, true, 0};
    if (l.kind == LayerShape::Kind::kDepthwise) {
        std::vector<uint8_t> w(size_t{l.kernel} * l.kernel * l.inC);
        for (auto& b : w) {
            b = static_cast<uint8_t>(rng());
        }
        const bool taps = npu::depthwiseUsesTaps(g);
        const auto stream =
            npu::packDepthwiseWeights(w.data(), l.inC, l.kernel, l.kernel, 0, quant, taps);
        const uint32_t weights = alloc(stream.size());
        (void)hw.writeMemory(weights, stream.data(), stream.size());
        if (!program.depthwise(input, output, weights, true, 0, g, npu::OutputStage{}, taps)
                 .ok()) {
            std::fprintf(stderr, "cannot tile %s\n", l.name.c_str());
        }
    } else {
        std::vector<uint8_t> w(size_t{l.outC} * l.kernel * l.kernel * l.inC);
        for (auto& b : w) {
            b = static_cast<uint8_t>(rng());
        }
        const auto stream =
            npu::packConvWeights(w.data(), l.outC, l.kernel, l.kernel, l.inC, 0, quant);
        const uint32_t weights = alloc(stream.size());
        (void)hw.writeMemory(weights, stream.data(), stream.size());
        if (!program.conv(input, output, weights, true, 0, g, npu::OutputStage{}).ok()) {
            std::fprintf(stderr, "cannot tile %s\n", l.name.c_str());
        }
    }
    end = next;
    return program;
}

}  // namespace nncosim::bench
