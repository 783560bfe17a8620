// Building NPU descriptor chains: tiling of whole layers into descriptors, packing of weight
// streams, and submitting a chain through HardwareAccess. This is the compiler's back end; it
// depends only on the generated register header (sizes included), never on SystemC.
//
// Tensors are NHWC bytes (uint8 for QUANT8_ASYMM, int8 for QUANT8_ASYMM_SIGNED) in device DRAM.
#pragma once

#include <algorithm>
#include <array>
#include <cstdint>
#include <optional>
#include <vector>

#include "driver/Descriptor.h"
#include "driver/HardwareAccess.h"
#include "driver/NpuRegisters.h"
#include "driver/Runtime.h"
#include "model/Status.h"

namespace nncosim::npu {

/// A quantized NHWC tensor (or a channel slice of one) in device DRAM.
struct DeviceTensor {
    uint32_t addr = 0;  ///< byte address of element (0, 0, 0, 0) of the slice
    uint32_t n = 1, h = 1, w = 1, c = 1;
    uint32_t pixelStride = 0;  ///< bytes between pixels; 0 means c (a whole, dense tensor)
    bool isSigned = false;     ///< int8 (QUANT8_ASYMM_SIGNED); false: uint8 (QUANT8_ASYMM)
    int32_t zeroPoint = 0;
    /// NCHW: bytes between channel planes, pixelStride then the element's bytes (a convolution
    /// loads such a tensor with A_PLANAR); 0: a pixel's channels lie together.
    uint32_t planeStride = 0;

    uint32_t pixelBytes() const { return pixelStride == 0 ? c : pixelStride; }
    uint32_t rowBytes() const { return w * pixelBytes(); }
    uint32_t imageBytes() const { return h * rowBytes(); }
};

/// Output stage of accumulating operations: zero point and the clamp (fused activation and
/// type range); for float formats (pooling) the format and its binary32 clamp instead.
struct OutputStage {
    int32_t zeroPoint = 0;
    int32_t actMin = -128;
    int32_t actMax = 127;
    uint32_t format = 0;  ///< Format
    uint32_t fpMin = 0, fpMax = 0;
};

struct ConvGeometry {
    uint32_t kernelH = 1, kernelW = 1;
    uint32_t strideH = 1, strideW = 1;
    uint32_t dilationH = 1, dilationW = 1;
    uint32_t padTop = 0, padLeft = 0;  ///< bottom/right padding follow from the output size
};

/// Per-output-channel requantization: multiplier and shift (model/FixedPoint.h's
/// QuantizedMultiplier) and the int32 bias. Per-tensor quantization repeats one value.
struct ChannelQuant {
    int32_t bias = 0;
    int32_t multiplier = 0;
    int32_t shift = 0;
};

/// A convolution layer's parameters on the device: its weight stream (packConvWeights or
/// packDepthwiseWeights, 16-byte aligned), the weight type and zero point, geometry and output
/// stage.
struct ConvLayer {
    uint32_t weights = 0;
    bool weightsSigned = false;
    int32_t weightZeroPoint = 0;
    ConvGeometry geometry;
    OutputStage stage;
};

/// Bytes of the weight stream of a CONV (or FULLY_CONNECTED) with these sizes.
uint32_t convWeightStreamBytes(uint32_t outChannels, uint32_t kernelH, uint32_t kernelW,
                               uint32_t inChannels);
/// Whether a depthwise convolution with this geometry runs in the array's TAPS mode (kernel taps
/// on array rows: KERNEL_H * STRIDE_W <= kDwTapPorts, KERNEL_H * KERNEL_W <= kArrayRows,
/// horizontal dilation 1). Otherwise it runs as diagonal blocks, one tap per K step.
bool depthwiseUsesTaps(const ConvGeometry& geometry);

/// A 1x1 expanding convolution fused before a depthwise-pointwise pair
/// (ChainBuilder::depthwisePointwise): its input and its layer.
struct Expansion {
    DeviceTensor input;
    ConvLayer layer;
};

/// Whether fusing this depthwise layer with the 1x1 convolution after it
/// (ChainBuilder::depthwisePointwise) is faster than running them one after the other: the
/// depthwise layer must run in TAPS mode (diagonal blocks are bound by the array, not by DRAM),
/// and the pointwise weights, which stream again for every fused tile (tiles that must also keep
/// the depthwise output on chip), must cost less than what fusing saves. 8-bit layers: a time
/// model, each part the longer of its array steps and its DRAM words, fused (the tiles'
/// regions, both weight streams per tile) against apart (the intermediate written and read,
/// the weights once). Float layers (`format`) are bound by DRAM:
/// the weights the extra tiles stream must be fewer words than the intermediate tensor's write
/// and read. `output` is the pointwise layer's.
bool depthwisePointwisePays(const DeviceTensor& input, const ConvGeometry& depthwise,
                            const DeviceTensor& intermediate, const DeviceTensor& output,
                            uint32_t format);

/// Whether fusing the expansion that writes `input` (from `expansionInput`) before a fused
/// depthwise-pointwise pair saves time. The tiles recompute the expansion over the rows their
/// regions share; in exchange the expanded tensor never goes to DRAM and back. In cycles, with
/// one DRAM word or one array step per cycle: apart, each part takes the longer of its array
/// steps and its DRAM words, and the array waits between them for the first pair tile's
/// expanded rows (fused, for its expansion input: the difference counts); fused, the longer of
/// all the array steps (the expansion's recomputed) and the input and output words.
bool expansionPays(const DeviceTensor& expansionInput, const DeviceTensor& input,
                   const ConvGeometry& depthwise, const DeviceTensor& intermediate,
                   const DeviceTensor& output);

/// Bytes of the weight stream of a DWCONV over `channels` (`isFloat`: binary32 rows of
/// kFloatWeightRowWords words).
uint64_t depthwiseWeightStreamBytes(uint32_t channels, uint32_t kernelH, uint32_t kernelW,
                                    bool taps, bool isFloat = false);

/// Packs a convolution's weights, OHWI ([outChannels][kernelH][kernelW][inChannels], bytes of
/// the weight type), and per-channel quantization (outChannels entries) into the stream CONV
/// descriptors read. Padding rows hold the weight zero point so they contribute nothing.
std::vector<uint8_t> packConvWeights(const uint8_t* weights, uint32_t outChannels, uint32_t kernelH,
                                     uint32_t kernelW, uint32_t inChannels, int32_t weightZeroPoint,
                                     const std::vector<ChannelQuant>& quant);

/// Packs depthwise weights ([1][kernelH][kernelW][channels], depth multiplier 1) for DWCONV
/// descriptors: with `taps` one block per 16 channels (row t = tap t), else diagonal blocks,
/// one per tap. `taps` must be what the descriptors use (depthwiseUsesTaps).
std::vector<uint8_t> packDepthwiseWeights(const uint8_t* weights, uint32_t channels,
                                          uint32_t kernelH, uint32_t kernelW,
                                          int32_t weightZeroPoint,
                                          const std::vector<ChannelQuant>& quant, bool taps);

/// Packs a float convolution's weights for float CONV (and FULLY_CONNECTED) descriptors: binary32
/// `weights` OHWI ([outChannels][kernelH][kernelW][inChannels]) and one `bias` per output
/// channel. Per block of 16 output channels the bias words (binary32; the multiplier and shift
/// words are zero), then per K step 16 rows of 16 binary32, kFloatWeightRowWords words a row, +0
/// outside the filter; the rows are ConvWeightRows' for input elements of `elementBytes` (the
/// tensors' format: 4 for FP32, 2 for FP16), which packs the taps of a few channels.
std::vector<uint8_t> packFloatConvWeights(const float* weights, const float* bias,
                                          uint32_t outChannels, uint32_t kernelH, uint32_t kernelW,
                                          uint32_t inChannels, uint32_t elementBytes);

/// Packs float depthwise weights ([1][kernelH][kernelW][channels], depth multiplier 1) for float
/// DWCONV descriptors: per block of 16 channels the bias words, then with `taps` one block (row
/// t = tap t), else per tap a diagonal block. `taps` must be what the descriptors use.
std::vector<uint8_t> packFloatDepthwiseWeights(const float* weights, const float* bias,
                                               uint32_t channels, uint32_t kernelH,
                                               uint32_t kernelW, bool taps);

/// Sets FENCE and FENCE_SKIP on every descriptor of a chain from what each reads and writes in
/// DRAM (the bounding byte ranges of A, B, the W stream and OUT): a descriptor waits for the
/// latest earlier one that writes a byte it reads, or reads weights it overwrites, and for
/// nothing after that one, so a layer's first tiles load while the previous layer's last ones
/// still run. Other orders need no fence: loads, compute and stores each go in chain order.
void placeFences(std::vector<Descriptor>& chain);

/// A 4-D operand of a streaming descriptor: its address and, per dimension of the output, the
/// element stride (0 where the operand is broadcast along that dimension).
struct StridedTensor {
    uint32_t addr = 0;
    std::array<uint32_t, 4> strides{};
    /// One value everywhere (all strides 0) stored as ChainBuilder::kStreamRowElements copies:
    /// a contiguous stream reads it as whole rows at row stride 0.
    bool rowOfCopies = false;
};

/// What a pooling window computes: its maximum, its average rounded half away from zero
/// (AVERAGE_POOL_2D), or its average truncated toward zero (NNAPI's quantized MEAN; a float
/// average is divided the one way).
enum class Pooling { MAX, AVERAGE, MEAN };

/// A chain under construction. Descriptors are appended in execution order. A compiled
/// program's fences come from placeFences; a chain built by hand calls fence() before an
/// operation that reads a tensor an earlier descriptor writes.
class ChainBuilder {
  public:
    /// Element-wise parameters (model/FixedPoint.h's AddSubParams / MulParams fields).
    struct ElementwiseParams {
        int32_t leftShift = 20;
        int32_t aMultiplier = 0, aShift = 0;  ///< ADD only
        int32_t bMultiplier = 0, bShift = 0;  ///< ADD only (negated multiplier for SUB)
        int32_t outMultiplier = 0, outShift = 0;
        OutputStage stage;
    };

    /// A residual connection a convolution's drain adds (DescFlag::RESIDUAL): `tensor` (the
    /// output's shape) added to the result as the quantized ADD `params` takes it (its stage is
    /// the sum's), the convolution's result requantized with `midZeroPoint` and clamped to the
    /// type's range only (the layer's own stage must clamp nothing else).
    struct Residual {
        DeviceTensor tensor;
        int32_t midZeroPoint = 0;
        ElementwiseParams params;
    };

    const std::vector<Descriptor>& descriptors() const { return mDescriptors; }
    bool empty() const { return mDescriptors.empty(); }

    /// The next descriptor waits until every earlier one has stored its results.
    void fence() { mFenceNext = true; }

    /// Convolution of one image (input.n == output.n == 1): output channels
    /// [0, output.c) from input channels [0, input.c) with the weight stream at `weights`
    /// (packConvWeights, 16-byte aligned). Groups: call once per group with channel slices.
    Status conv(const DeviceTensor& input, const DeviceTensor& output, uint32_t weights,
                bool weightsSigned, int32_t weightZeroPoint, const ConvGeometry& geometry,
                const OutputStage& stage, uint32_t tag = 0,
                const std::optional<Residual>& residual = std::nullopt);

    /// Depthwise convolution, depth multiplier 1 (input.c == output.c), in TAPS mode when
    /// `taps` (which requires depthwiseUsesTaps) with weights packed to match.
    Status depthwise(const DeviceTensor& input, const DeviceTensor& output, uint32_t weights,
                     bool weightsSigned, int32_t weightZeroPoint, const ConvGeometry& geometry,
                     const OutputStage& stage, bool taps, uint32_t tag = 0);

    /// A depthwise convolution (depth multiplier 1; in TAPS mode when depthwiseUsesTaps holds,
    /// with weights packed to match) followed by a 1x1 convolution (stride 1, no padding) of its
    /// result, fused: per tile a DWCONV with CHAIN_OUT and a CONV with CHAIN_IN, so the
    /// intermediate tensor stays in the scratchpad and the two overlap on the array.
    /// `intermediate` gives the depthwise output's shape, type and zero point (its address is
    /// unused). With an `expansion` (a 1x1 convolution, stride 1, no padding, whose result is
    /// `input`, then only a shape) it runs first per tile over the tile's input region with
    /// CHAIN_OUT and the DWCONV takes its result with CHAIN_IN: MobileNet-v2's inverted residual
    /// block without DRAM traffic between its layers; neighbouring tiles recompute the rows their
    /// regions share. A `residual` is added in the pointwise layer's drain.
    Status depthwisePointwise(const DeviceTensor& input, const ConvLayer& depthwise,
                              const DeviceTensor& intermediate, const ConvLayer& pointwise,
                              const DeviceTensor& output,
                              const std::optional<Expansion>& expansion = std::nullopt,
                              const std::optional<Residual>& residual = std::nullopt,
                              uint32_t tag = 0);

    /// Fully connected: input [batch][inSize] (input.n = batch, input.c = inSize), output
    /// [batch][units]; weights packed as a 1x1 convolution.
    Status fullyConnected(const DeviceTensor& input, const DeviceTensor& output, uint32_t weights,
                          bool weightsSigned, int32_t weightZeroPoint, const OutputStage& stage,
                          uint32_t tag = 0);

    /// Pooling of one image (input.c == output.c, in bytes); the stage's clamp is the fused
    /// activation (input and output share scale and zero point, as NNAPI requires), its format
    /// says whether the elements are float.
    Status pool(Pooling kind, const DeviceTensor& input, const DeviceTensor& output,
                const ConvGeometry& geometry, const OutputStage& stage, uint32_t tag = 0);

    /// ADD (mul false) or MUL of a and b into out: all three have out's shape; a dimension of
    /// size 1 in a or b is broadcast, except the channel dimension, which must match.
    Status elementwise(bool mul, const DeviceTensor& a, const DeviceTensor& b,
                       const DeviceTensor& out, const ElementwiseParams& params, uint32_t tag = 0);

    /// out[i] = table[in[i]] with the 256-byte table at `table` (16-byte aligned).
    Status lookup(const DeviceTensor& in, const DeviceTensor& out, uint32_t table,
                  uint32_t tag = 0);

    /// The one tiler of the streaming opcodes (ADD, MUL, LUT): `op` (opcode, format and
    /// arithmetic fields set) over a 4-D `shape`, reading `a` (and `b` for ADD and MUL) and
    /// writing `out` with their strides (0 where an input is broadcast), in elements of `op`'s
    /// format. Contiguous tensors stream in rows of up to 256 elements; otherwise a row is the
    /// innermost dimension where every tensor has it contiguous, else one element.
    Status stream(const Descriptor& op, const StridedTensor& a,
                  const std::optional<StridedTensor>& b, const StridedTensor& out,
                  const std::array<uint32_t, 4>& shape);

    /// Elements per row of a contiguous stream.
    static constexpr uint32_t kStreamRowElements = 256;

    /// The strides of a tensor of `shape` stored densely.
    static std::array<uint32_t, 4> denseStrides(const std::array<uint32_t, 4>& shape) {
        return {shape[1] * shape[2] * shape[3], shape[2] * shape[3], shape[3], 1};
    }

    /// Appends one ready-made descriptor (its FENCE flag is added when fence() was called).
    void append(Descriptor d);

  private:
    Status windowOp(Opcode opcode, const DeviceTensor& input, const DeviceTensor& output,
                    const ConvLayer& layer, uint32_t flags, uint32_t tag,
                    const std::optional<Residual>& residual = std::nullopt);

    std::vector<Descriptor> mDescriptors;
    bool mFenceNext = false;
};

using driver::JobLayout;

/// The end of a job as the device reported it.
struct JobResult {
    bool interrupted = false;  ///< the interrupt came before the timeout
    uint32_t irqStatus = 0;
    uint32_t errorCode = 0;  ///< ErrorCode
    uint32_t errorDesc = 0;
    uint32_t errorAddr = 0;
    uint32_t descDone = 0;
    uint64_t cycles = 0;  ///< device cycles from doorbell to interrupt
};

/// Writes the chain (LAST set on its final descriptor) at layout.queueAddr, starts it
/// (driver::startJob), waits up to `timeoutCycles` for the interrupt and clears it. For tests
/// and benchmarks that drive the NPU with hand-built chains; the driver runs programs through
/// driver::Runtime.
Result<JobResult> runJob(driver::HardwareAccess& hw, const ChainBuilder& program,
                         const JobLayout& layout, uint32_t tag, uint64_t timeoutCycles);

}  // namespace nncosim::npu
