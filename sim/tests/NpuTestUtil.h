// Helpers of the NPU tests: device memory allocation, random tensors, and C++ references of
// every compute descriptor built on model/FixedPoint.h (the arithmetic specification).
#pragma once

#include <cstdint>
#include <random>
#include <vector>

#include <doctest/doctest.h>

#include "driver/ChainBuilder.h"
#include "model/FixedPoint.h"
#include "sim/Platform.h"

namespace nncosim::sim::testing {

/// Bump allocator over device DRAM, 16-byte aligned; reset() forgets everything.
class DeviceArena {
  public:
    explicit DeviceArena(uint32_t base = 0x100000) : mBase(base), mNext(base) {}
    uint32_t alloc(size_t bytes, uint32_t align = 16) {
        mNext = (mNext + align - 1) / align * align;
        const uint32_t addr = mNext;
        mNext += static_cast<uint32_t>(bytes);
        return addr;
    }
    uint32_t used() const { return mNext; }
    void reset() { mNext = mBase; }

  private:
    uint32_t mBase;
    uint32_t mNext;
};

/// Runs `program` with its queue and completion record placed after what `arena` holds, the DMA
/// window covering everything from address 0 up to them, and requires it to complete without
/// an error.
/// Soft reset (CONTROL.SOFT_RESET), waiting until STATUS reads 0: a halted device usable again.
inline void softReset(driver::HardwareAccess& hw) {
    hw.writeRegister(npu::reg::kControl, npu::field::kControlSoftReset);
    for (int i = 0; i < 1000 && hw.readRegister(npu::reg::kStatus) != 0; ++i) {
        hw.advance(10);
    }
}

inline npu::JobResult runInArena(driver::HardwareAccess& hw, const npu::ChainBuilder& program,
                                 DeviceArena& arena, uint32_t tag = 1,
                                 uint64_t timeoutCycles = 50'000'000) {
    const uint32_t queue = arena.alloc(program.descriptors().size() * npu::kDescriptorWords * 4);
    const uint32_t record = arena.alloc(npu::kCompletionWords * 4);
    auto job = npu::runJob(hw, program, {queue, record, 0, arena.used() + 16}, tag, timeoutCycles);
    REQUIRE(job.ok());
    CAPTURE(job->errorCode);
    CAPTURE(job->errorDesc);
    REQUIRE(job->interrupted);
    REQUIRE(job->errorCode == 0);
    return *job;
}

/// The NPU's element-wise parameters for golden's ADD/SUB parameters.
inline npu::ChainBuilder::ElementwiseParams elementwiseParams(const fixedpoint::AddSubParams& p) {
    npu::ChainBuilder::ElementwiseParams e;
    e.leftShift = fixedpoint::AddSubParams::kLeftShift;
    e.aMultiplier = p.input1.multiplier;
    e.aShift = p.input1.shift;
    e.bMultiplier = p.input2.multiplier;
    e.bShift = p.input2.shift;
    e.outMultiplier = p.output.multiplier;
    e.outShift = p.output.shift;
    e.stage = {p.outputOffset, p.range.min, p.range.max};
    return e;
}

/// The NPU's element-wise parameters for golden's MUL parameters.
inline npu::ChainBuilder::ElementwiseParams elementwiseParams(const fixedpoint::MulParams& p) {
    npu::ChainBuilder::ElementwiseParams e;
    e.outMultiplier = p.output.multiplier;
    e.outShift = p.output.shift;
    e.stage = {p.outputOffset, p.range.min, p.range.max};
    return e;
}

/// Random bytes.
inline std::vector<uint8_t> randomBytes(std::mt19937& rng, size_t n) {
    std::vector<uint8_t> v(n);
    for (auto& b : v) {
        b = static_cast<uint8_t>(rng());
    }
    return v;
}

/// A stored byte as its integer value.
inline int32_t valueOf(uint8_t byte, bool isSigned) {
    return isSigned ? static_cast<int8_t>(byte) : byte;
}

struct ConvCase {
    uint32_t h, w, inC, outC;
    npu::ConvGeometry g;
    uint32_t outH, outW;
    bool inSigned, wSigned, outSigned;
    int32_t inZero, wZero;
    npu::OutputStage stage;
};

/// Index of the input pixel under tap (ky, kx) of output pixel (oy, ox); -1 in the padding.
inline int64_t inputPixel(const ConvCase& c, uint32_t oy, uint32_t ox, uint32_t ky, uint32_t kx) {
    const int64_t iy = int64_t{oy} * c.g.strideH + int64_t{ky} * c.g.dilationH - c.g.padTop;
    const int64_t ix = int64_t{ox} * c.g.strideW + int64_t{kx} * c.g.dilationW - c.g.padLeft;
    return iy < 0 || ix < 0 || iy >= c.h || ix >= c.w ? -1 : iy * c.w + ix;
}

/// Convolution reference: accumulate (in - inZero) * (w - wZero) over the window (padding
/// contributes nothing), then golden's requantize with the channel's bias and scale.
inline std::vector<uint8_t> referenceConv(const ConvCase& c, const std::vector<uint8_t>& in,
                                          const std::vector<uint8_t>& weights,
                                          const std::vector<npu::ChannelQuant>& quant,
                                          bool depthwise) {
    std::vector<uint8_t> out(size_t{c.outH} * c.outW * c.outC);
    for (uint32_t oy = 0; oy < c.outH; ++oy) {
        for (uint32_t ox = 0; ox < c.outW; ++ox) {
            for (uint32_t oc = 0; oc < c.outC; ++oc) {
                int32_t acc = 0;
                for (uint32_t ky = 0; ky < c.g.kernelH; ++ky) {
                    for (uint32_t kx = 0; kx < c.g.kernelW; ++kx) {
                        const int64_t at = inputPixel(c, oy, ox, ky, kx);
                        if (at < 0) {
                            continue;
                        }
                        const size_t pixel = static_cast<size_t>(at) * c.inC;
                        if (depthwise) {
                            const int32_t x = valueOf(in[pixel + oc], c.inSigned) - c.inZero;
                            const int32_t wv =
                                valueOf(weights[(ky * c.g.kernelW + kx) * c.outC + oc], c.wSigned) -
                                c.wZero;
                            acc += x * wv;
                            continue;
                        }
                        for (uint32_t ic = 0; ic < c.inC; ++ic) {
                            const int32_t x = valueOf(in[pixel + ic], c.inSigned) - c.inZero;
                            const int32_t wv =
                                valueOf(
                                    weights[((oc * c.g.kernelH + ky) * c.g.kernelW + kx) * c.inC +
                                            ic],
                                    c.wSigned) -
                                c.wZero;
                            acc += x * wv;
                        }
                    }
                }
                const npu::ChannelQuant& q = quant[oc];
                const int32_t value =
                    fixedpoint::requantize(acc, q.bias, {q.multiplier, q.shift}, c.stage.zeroPoint,
                                           {c.stage.actMin, c.stage.actMax});
                out[(static_cast<size_t>(oy) * c.outW + ox) * c.outC + oc] =
                    static_cast<uint8_t>(value);
            }
        }
    }
    return out;
}

/// Pooling reference with golden's rules: windows cover valid pixels only; the average
/// rounds half away from zero (MEAN's truncates toward zero); then the clamp.
inline std::vector<uint8_t> referencePool(const ConvCase& c, const std::vector<uint8_t>& in,
                                          npu::Pooling kind) {
    const bool average = kind != npu::Pooling::MAX;
    std::vector<uint8_t> out(size_t{c.outH} * c.outW * c.outC);
    for (uint32_t oy = 0; oy < c.outH; ++oy) {
        for (uint32_t ox = 0; ox < c.outW; ++ox) {
            for (uint32_t ch = 0; ch < c.outC; ++ch) {
                int32_t acc = average ? 0 : fixedpoint::kInt32Min;
                int32_t count = 0;
                for (uint32_t ky = 0; ky < c.g.kernelH; ++ky) {
                    for (uint32_t kx = 0; kx < c.g.kernelW; ++kx) {
                        const int64_t at = inputPixel(c, oy, ox, ky, kx);
                        if (at < 0) {
                            continue;
                        }
                        const int32_t x =
                            valueOf(in[static_cast<size_t>(at) * c.inC + ch], c.inSigned);
                        acc = average ? acc + x : std::max(acc, x);
                        ++count;
                    }
                }
                if (kind == npu::Pooling::MEAN) {
                    acc /= count;  // C++ division truncates toward zero
                } else if (average) {
                    acc = acc >= 0 ? (acc + count / 2) / count : (acc - count / 2) / count;
                }
                out[(static_cast<size_t>(oy) * c.outW + ox) * c.outC + ch] =
                    static_cast<uint8_t>(std::clamp(acc, c.stage.actMin, c.stage.actMax));
            }
        }
    }
    return out;
}

/// Output size of a window operation.
inline uint32_t windowOutput(uint32_t in, uint32_t kernel, uint32_t stride, uint32_t dilation,
                             uint32_t padBefore, uint32_t padAfter) {
    const uint32_t span = (kernel - 1) * dilation + 1;
    return (in + padBefore + padAfter - span) / stride + 1;
}

}  // namespace nncosim::sim::testing
