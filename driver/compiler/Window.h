// What the window operations (convolutions, pooling, MEAN and REDUCE over windows, transposed
// convolutions) share in their lowering: the decoded window, what the NPU's window descriptors
// take, the NCHW copies around an operation, and the images of its tensors. Internal to
// driver/compiler/.
#pragma once

#include <array>

#include "driver/compiler/Lowering.h"

namespace nncosim::driver {

// The decoded parameters and shapes of a window operation (padding resolved).
struct Window {
    WindowParams p;
    WindowGeometry g;
    std::array<uint32_t, 4> in{}, out{};  // NHWC
};

// Where a window operation reads and writes, in NHWC: the operands themselves, or for an NCHW
// operation the scratch copies that transposes fill and drain around it.
struct WindowIo {
    uint32_t inBase = 0, outBase = 0;
};

bool isPooling(OperationType t);
Result<Window> windowOf(const Lowering& lw, const Operation& op);

/// The filter (input 1), bias (input 2) and requantization of a convolution's 8-bit quantized
/// input 0 and output 0; a depthwise filter is [1, kh, kw, outC], others [outC, kh, kw, inC].
Status weightsSupported(const Constants& c, const Operation& op, bool depthwise);
/// A float convolution's filter and bias: the input's type, packed as binary32; computed at run
/// time only for float32 and when `runtimeAllowed`.
Status floatWeightsSupported(const Constants& c, const Operation& op, bool depthwise,
                             bool runtimeAllowed);

/// The NpuOperation entries of convolutions and pooling: what the NPU takes, the output shape,
/// and the scratch of NCHW copies (and of L2_POOL_2D's squares).
Status windowSupported(const Model& model, const Operation& op);
Result<std::vector<uint32_t>> windowShape(const Lowering& lw, const Operation& op);
std::vector<uint64_t> windowScratch(const Lowering& lw, const Operation& op);

/// A LUT descriptor copying bytes unchanged.
npu::Descriptor identityCopy(Lowering& lw);
/// Copies a [N, A, B] tensor of `size`-byte elements to [N, B, A].
Status transpose(Lowering& lw, const Operation& op, uint32_t size, uint32_t src, uint32_t dst,
                 uint32_t n, uint32_t a, uint32_t b);
/// `inputAsPlanes`: the operation loads its NCHW input in place (A_PLANAR), only its output is
/// transposed.
Result<WindowIo> transposeIn(Lowering& lw, const Operation& op, const Window& w,
                             bool inputAsPlanes = false);
Status transposeOut(Lowering& lw, const Operation& op, const Window& w, const WindowIo& io);

/// Image n of a window operation's NHWC input or output, or its channel slice
/// [first, first + channels).
npu::DeviceTensor imageOf(uint32_t base, const std::array<uint32_t, 4>& dims, uint32_t n,
                          uint32_t first, uint32_t channels, const Operand& operand);
/// Image n of an NHWC tensor of `dims` whose data lies in NCHW planes at `base`, as a
/// convolution loads it with A_PLANAR.
npu::DeviceTensor planesOf(uint32_t base, const std::array<uint32_t, 4>& dims, uint32_t n,
                           const Operand& operand);

}  // namespace nncosim::driver
