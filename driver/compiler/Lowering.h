// The compiler's inside (not part of the driver's API): the lowering of one model to an NPU
// program, and the registration of every NNAPI operation the NPU executes. Each operation family
// lives in its own file (Convolution.cpp, FullyConnected.cpp, Elementwise.cpp, Lookup.cpp,
// DataMovement.cpp, Resize.cpp) and is registered once, in Operations.cpp, with its support check,
// output shape and lowering together; the cycle estimate is per descriptor (driver/CostModel.h).
#pragma once

#include <array>
#include <cstring>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "driver/ChainBuilder.h"
#include "driver/Compiler.h"
#include "model/FixedPoint.h"
#include "model/operations/ElementMap.h"
#include "model/operations/Window.h"

namespace nncosim::driver {

inline constexpr uint32_t kAlign = npu::kDramBusBytes;
inline constexpr uint32_t kLanes = npu::kArrayCols;
inline constexpr uint32_t kMaxCount = 0xffff;    // 16-bit INNER and COUNT fields
inline constexpr uint32_t kMaxByteField = 0xff;  // kernel, stride, dilation and padding fields
// The largest weight stream of ones a float sum over an axis (REDUCE_SUM, the normalizations)
// may pack into the program.
inline constexpr uint64_t kMaxSumStreamBytes = uint64_t{4} << 20;
// The most device memory one program may use (its addresses are 32 bits with room to relocate).
inline constexpr uint64_t kMaxArenaBytes = uint64_t{1} << 31;

inline uint32_t alignUp(uint64_t v, uint32_t a) {
    return static_cast<uint32_t>((v + a - 1) / a * a);
}
inline uint32_t ceilDiv(uint64_t a, uint64_t b) {
    return static_cast<uint32_t>((a + b - 1) / b);
}
inline bool isQuant8(OperandType t) {
    return t == OperandType::TENSOR_QUANT8_ASYMM || t == OperandType::TENSOR_QUANT8_ASYMM_SIGNED;
}
inline bool isSigned(OperandType t) {
    return t == OperandType::TENSOR_QUANT8_ASYMM_SIGNED;
}
inline int32_t typeMin(OperandType t) {
    return isSigned(t) ? -128 : 0;
}
inline int32_t typeMax(OperandType t) {
    return isSigned(t) ? 127 : 255;
}

/// The descriptor format of a float tensor type (FP32, FP16), or nullopt.
std::optional<npu::Format> floatFormat(OperandType t);

/// `count` elements of a FLOAT32 or FLOAT16 operand's bytes as float (binary16 widens exactly).
std::vector<float> floatValues(OperandType type, const uint8_t* data, size_t count);

/// The output stage of float tensors of `format`: the bounds of the fused `activation` as
/// Android's reference takes them (activationRangeFloat).
npu::OutputStage floatStage(npu::Format format, int32_t activation);

/// The float output stage that clamps nothing, [-inf, +inf]: infinities stay (operations without
/// a fused activation whose golden does not clamp).
npu::OutputStage unclampedFloatStage(npu::Format format);

/// A float ADD (`negateB`: SUB) or MUL descriptor with `stage`'s format and clamp.
npu::Descriptor floatDescriptor(npu::Opcode opcode, const npu::OutputStage& stage,
                                bool negateB = false);

/// The clamp of a fused activation on `out`'s quantized range; nullopt for a bad code.
std::optional<fixedpoint::ActivationRange> activationRange(int32_t activation, const Operand& out);

/// Per-output-channel requantization of a convolution or fully-connected layer, as the golden
/// derives it; nullopt when a multiplier is outside what the NPU's shifts express.
std::optional<std::vector<fixedpoint::QuantizedMultiplier>> channelMultipliers(
    const Operand& in, const Operand& filter, const Operand& bias, const Operand& out,
    uint32_t channels);

/// A lookup table of the LUT unit: entry i is the output for the input whose stored byte is i.
using Table = std::array<uint8_t, 256>;

/// The table of f over the values of `type`.
template <typename F>
Table tableOf(OperandType type, F f) {
    Table t{};
    for (int b = 0; b < 256; ++b) {
        const int32_t value = isSigned(type) ? static_cast<int8_t>(b) : b;
        t[b] = static_cast<uint8_t>(f(value));
    }
    return t;
}

/// A static support failure: GENERAL_FAILURE naming the operation.
Status unsupported(const Operation& op, const std::string& why);

/// Values of the main graph's constants and, when given, of model inputs known at compile time.
class Constants {
  public:
    explicit Constants(const Model& model, const InputValues* inputValues = nullptr)
        : mModel(model), mInputValues(inputValues) {}
    const Operand& operand(uint32_t index) const { return mModel.main.operands[index]; }
    bool isConstant(uint32_t index) const;
    /// A constant, or a model input whose value is known at compile time (weights given as inputs).
    bool isConstantOrInput(uint32_t index) const;
    const uint8_t* data(uint32_t index) const;
    /// Bytes at data(index).
    size_t length(uint32_t index) const;
    template <typename T>
    std::optional<T> scalar(uint32_t index) const {
        const uint8_t* p = data(index);
        if (!p || length(index) < sizeof(T)) return std::nullopt;
        T v;
        std::memcpy(&v, p, sizeof(T));
        return v;
    }
    /// `op`'s inputs for the shared parameter decoders (model/operations/Window.h).
    OperationInputs inputsOf(const Operation& op) const;

  private:
    const Model& mModel;
    const InputValues* mInputValues;
};

class Lowering;

/// An NNAPI operation (or family) the NPU executes, registered once (Operations.cpp).
struct NpuOperation {
    /// Whether the NPU executes the operation bit-exactly, from the model alone: types,
    /// constant parameters, descriptor field ranges for the sizes already known.
    Status (*supported)(const Model& model, const Operation& op) = nullptr;
    /// Output 0's shape from the input shapes, all known at compile time.
    Result<std::vector<uint32_t>> (*outputShape)(const Lowering& lowering,
                                                 const Operation& op) = nullptr;
    /// Emits the operation's descriptors.
    Status (*lower)(Lowering& lowering, const Operation& op) = nullptr;
    /// Device memory the lowering needs besides the operands (e.g. NHWC copies of NCHW
    /// operands), in bytes; null: none.
    std::vector<uint64_t> (*scratch)(const Lowering& lowering, const Operation& op) = nullptr;
    /// Inputs whose values are packed into the program (weights, biases, target shapes): they
    /// must be constants or model inputs known at compile time.
    std::vector<uint32_t> packedInputs;
    /// Output 0 is input 0's bytes under another shape: no memory, no descriptors.
    bool aliasesInput = false;
    /// Every output's shape, for operations with several outputs (then used instead of
    /// outputShape); null: one output.
    Result<std::vector<std::vector<uint32_t>>> (*outputShapes)(const Lowering& lowering,
                                                               const Operation& op) = nullptr;
    /// The support check decides the output types (views and copies take any, comparisons
    /// write TENSOR_BOOL8, element-wise arithmetic is float too); otherwise outputs must be
    /// 8-bit quantized.
    bool ownOutputTypes = false;
};

/// The registration of `op` in `model` (extensions included); null: not an NPU operation.
const NpuOperation* findNpuOperation(const Model& model, const Operation& op);

/// A LUT descriptor applying `table` (placed in the program's constants) from `in`'s to `out`'s
/// type; its tensors are left to fill in. With the identity table it is the NPU's byte copy.
npu::Descriptor lookupDescriptor(Lowering& lowering, OperandType in, OperandType out,
                                 const Table& table);

/// Operand `k` over the 4-D output shape `o4` (its dimensions aligned on the right): per dimension
/// its element stride, 0 where it broadcasts; a broadcast constant is expanded to the output's
/// shape instead, so that it streams contiguous rows (Elementwise.cpp).
npu::StridedTensor operandRows(Lowering& lowering, uint32_t k, const std::array<uint32_t, 4>& o4);

/// Operand k's shape as four dimensions, leading ones added; fails naming `op` above rank 4,
/// which a shape known only at compile time can reach (a RESHAPE to rank 5 before an ADD).
Result<std::array<uint32_t, 4>> fourDims(const Lowering& lowering, const Operation& op, uint32_t k);

/// The ADD descriptor of quantized ADD/SUB `params` from `a` and `b` to an output of `outType`
/// (Elementwise.cpp).
npu::Descriptor addSubDescriptor(const Operand& a, const Operand& b, OperandType outType,
                                 const fixedpoint::AddSubParams& params);

/// The quantized SUB of `a` and `b` into a byte whose order against its zero point (the type's
/// middle) is the order of their real values, when such a SUB exists for every pair of stored
/// values (Elementwise.cpp).
std::optional<fixedpoint::AddSubParams> orderingSub(const Operand& a, const Operand& b);

/// A reduction of `dims` as a copy and a pooling window: the copy's axes (the reduced axes, then
/// the kept ones: [1, windowH, windowW, kept], the reduced elements in row-major order over the
/// window) (Convolution.cpp).
struct ReduceLayout {
    std::vector<AxisOffsets> axes;
    uint32_t windowH = 1, windowW = 1, kept = 1;
};
/// Nullopt when the reduced extent is no product of two window sides of at most 255.
std::optional<ReduceLayout> reduceLayout(const std::vector<uint32_t>& dims,
                                         const std::vector<bool>& reduced);

/// A widening lookup: `count` 8-bit elements of type `in` at `src` become the `size`-byte elements
/// bits[byte] at `dst`, one LUT pass per output byte (Lookup.cpp).
Status widenBytes(Lowering& lowering, const Operation& op, OperandType in, uint32_t src,
                  uint32_t dst, uint32_t size, uint32_t count,
                  const std::array<uint32_t, 256>& bits);

/// The float ADD or MUL `d` of `count` contiguous elements at `src` with a constant `value` (the
/// element's bits) into `dst` (Lookup.cpp).
Status streamWithConstant(Lowering& lowering, const Operation& op, const npu::Descriptor& d,
                          uint32_t src, uint32_t dst, uint32_t count, uint32_t value);

/// -x for `count` float elements of `format` from `src` to `dst` (which may be `src`): x * -1 on
/// the float MUL, exact, NaN staying NaN; it reverses the order for MINIMUM and REDUCE_MIN
/// (Lookup.cpp).
Status negateFloats(Lowering& lowering, const Operation& op, npu::Format format, uint32_t src,
                    uint32_t dst, uint32_t count);

/// Fills the weight slots of a stream packed with placeholders from weights the device computes
/// at run time (Convolution.cpp).
void scatterWeights(Lowering& lowering, uint32_t filter, uint32_t stream, uint32_t outC,
                    uint32_t inC, uint32_t kh, uint32_t kw, bool depthwise, uint32_t filterC,
                    uint32_t firstOut);

/// The same for the binary32 stream (npu::packFloatConvWeights / packFloatDepthwiseWeights) of a
/// float32 convolution or fully-connected `op`: its filter (input 1) and its bias (input 2),
/// whichever is computed at run time, copied into their slots 4 bytes at a time
/// (Convolution.cpp). `taps`: a depthwise stream in the TAPS layout.
Status scatterFloatWeights(Lowering& lowering, const Operation& op, uint32_t stream, uint32_t outC,
                           uint32_t inC, uint32_t kh, uint32_t kw, bool depthwise, bool taps,
                           uint32_t filterC, uint32_t firstOut);

/// One dimension of a strided copy: a count and the byte strides of source and destination.
struct MoveDim {
    uint32_t count = 1;
    int64_t src = 0, dst = 0;
};

/// Transposes `n` row-major byte matrices [a, b] at `src`, one after another, into [b, a] at
/// `dst` on the array, when one side is a small channel count and the other a multiple of 16
/// (NCHW to NHWC and back: DataMovement.cpp); false, emitting nothing, when that does not apply
/// and the bytes must be copied one per DMA row.
bool transposeOnArray(Lowering& lw, uint32_t src, uint32_t dst, uint32_t n, uint32_t a, uint32_t b);

/// Gathers every `stride`-th byte from `src` into `count` contiguous bytes at `dst` on the array
/// (2 <= stride <= kMaxGatherStride): each 16 destination bytes are a pixel whose 16 x stride
/// source bytes are its input channels, and output channel o selects channel stride x o (an
/// identity CONV): 16 bytes in `stride` cycles, where a copy moves one element a row. Returns
/// the bytes it gathered, a multiple of 16 (0 when it cannot, or when the two ranges overlap);
/// the caller copies the rest.
uint32_t gatherOnArray(Lowering& lw, uint32_t src, uint32_t dst, uint32_t count, uint32_t stride);
inline constexpr uint32_t kMaxGatherStride = 16;

/// Strided copies of elements of up to 4 bytes through the LUT unit (DataMovement.cpp).
class MoveEmitter {
  public:
    /// `padBits`: the element that fills write; `table`: what 1-byte elements become on the way
    /// (the identity when none).
    MoveEmitter(Lowering& lowering, uint32_t elementBytes, uint32_t padBits,
                const std::optional<Table>& table = std::nullopt);

    /// Copies the box `axes` (model/operations/ElementMap.h) from `src` into the row-major
    /// output at `dst`; padding positions take the padding element.
    Status box(uint32_t src, uint32_t dst, const std::vector<AxisOffsets>& axes);

    /// Copies the block `dims` (outermost first, in bytes; a source stride may be 0, broadcasting,
    /// or negative, reading backwards) from `src` to `dst`; fill: writes the padding element
    /// instead, `src` ignored.
    Status block(uint32_t src, uint32_t dst, const std::vector<MoveDim>& dims, bool fill);

  private:
    // Fills read rows of this many bytes of padding elements (a multiple of every element size).
    static constexpr uint32_t kFillRow = 256;

    Status emit(uint32_t src, uint32_t dst, const std::vector<MoveDim>& dims, bool fill);
    /// The row of padding elements in the program's constants.
    uint32_t padding();

    Lowering& mLw;
    npu::Descriptor mCopy;
    bool mIdentity;  // no table: bytes are copied as they are
    uint32_t mElementBytes, mPadBits;
    std::optional<uint32_t> mPadding;
};

/// Passes over the whole graph that run before device memory is laid out.
void planDepthwisePointwiseFusion(Lowering& lowering);
void planResidualAdds(Lowering& lowering);
void planPlanarInputs(Lowering& lowering);

/// The graph the lowering sees after the rewrites (Rewrite.cpp). Operands keep their indexes
/// (new constants are appended); operations folded into others are gone.
struct RewrittenModel {
    Model model;
    std::vector<uint32_t> origin;  ///< per operation of `model`: its index in the original graph
};

/// Whether main-graph operation `index`, a PAD or PAD_V2, folds into the padding of the
/// convolutions that read it (otherwise it runs as a copy); the reason why not otherwise.
Status padFolds(const Model& model, uint32_t index);

/// Applies every rewrite to a model whose operations are all supported.
RewrittenModel rewriteGraph(const Model& model);

/// The lowering of one model: shapes, device memory, descriptors. The operation families use
/// its public interface.
class Lowering {
  public:
    /// Lowers `rewritten`, tagging descriptors and naming operations as in `original`.
    Lowering(const Model& original, const RewrittenModel& rewritten,
             const std::vector<std::vector<uint32_t>>& inputShapes, const InputValues& values);

    Result<Program> run();

    // The model as compiled.
    const Model& model() const { return mModel; }
    const Constants& constants() const { return mConstants; }
    const Operand& operand(uint32_t k) const { return mModel.main.operands[k]; }
    /// Operand k's shape, fully known once shapes are inferred.
    const std::vector<uint32_t>& dims(uint32_t k) const { return mDims[k]; }
    /// The operation being lowered (descriptors are tagged with it).
    uint32_t opIndex() const { return mOpIndex; }
    void setOpIndex(uint32_t index) { mOpIndex = index; }
    /// GENERAL_FAILURE naming the current operation.
    Status fail(const Operation& op, const std::string& why) const;

    // Device memory.
    /// Arena address of operand k (a constant is copied into the program on first use).
    uint32_t address(uint32_t k);
    /// Appends bytes to the program's constants (16-byte aligned); null data: zeros.
    uint32_t addConstant(const void* data, size_t size);
    /// The scratch areas the operation's registration asked for, in order.
    const std::vector<uint32_t>& scratch() const;

    // Descriptors.
    /// Appends a descriptor tagged with `tag` (default: the current operation), adding its
    /// estimated cycles. Fences are placed once the program is complete (npu::placeFences).
    void emit(npu::Descriptor d, std::optional<uint32_t> tag = std::nullopt);
    /// Appends a builder's chain.
    void emitChain(const npu::ChainBuilder& chain);

    // Fusion (graph passes): `first` is lowered with the later `second`; `intermediate`, which
    // only `second` reads, stays on chip.
    void fuse(uint32_t first, uint32_t second, uint32_t intermediate);
    bool isFusedIntoLater(uint32_t op) const { return mFusedInto.count(op) != 0; }
    std::optional<uint32_t> fusedFrom(uint32_t op) const;
    // Residual connections: the ADD `add` is done in the drain of convolution `conv`
    // (DescFlag::RESIDUAL), whose result `convOutput` stays on chip.
    void addInDrain(uint32_t conv, uint32_t add, uint32_t convOutput);
    std::optional<uint32_t> drainAddOf(uint32_t conv) const;
    bool isAddedInDrain(uint32_t add) const { return mAddedInDrain.count(add) != 0; }
    // Layout transposes read in place: the NCHW -> NHWC TRANSPOSE `op` writes nothing, and the
    // convolutions reading its `output` load the planes of its input instead (A_PLANAR).
    void readAsPlanes(uint32_t op, uint32_t output, uint32_t planes);
    bool isReadAsPlanes(uint32_t op) const { return mReadAsPlanes.count(op) != 0; }
    /// The NCHW operand whose planes stand for NHWC operand k.
    std::optional<uint32_t> planarSource(uint32_t k) const;

  private:
    Status inferShape(const Operation& op);
    Status planTensors();
    void placeConstantIfNeeded(uint32_t k);
    ProgramIo io(uint32_t k);

    const Model& mOriginal;
    const Model& mModel;
    const std::vector<uint32_t>& mOrigin;  // operation of mModel -> operation of mOriginal
    const Constants mConstants;
    const std::vector<std::vector<uint32_t>>& mInputShapes;
    std::vector<const NpuOperation*> mOps;  // registration per operation
    std::vector<std::vector<uint32_t>> mDims;
    struct Placement {
        uint32_t offset = 0;
        bool placed = false;
    };
    std::vector<Placement> mPlace;
    std::map<uint32_t, uint32_t> mAlias;  // aliasing output -> its input
    uint32_t mTensorEnd = 0;
    std::map<uint32_t, std::vector<uint32_t>> mScratch;  // operation -> its scratch areas
    std::map<uint32_t, uint32_t> mFusedInto, mFusedFrom, mDrainAdd;
    std::set<uint32_t> mAddedInDrain, mReadAsPlanes;
    std::map<uint32_t, uint32_t> mPlanarSource;  // NHWC operand -> the NCHW operand
    std::set<uint32_t> mOnChip;
    uint32_t mOpIndex = 0;
    Program mProgram;
};

}  // namespace nncosim::driver
