// The operations that only move data (TRANSPOSE, SLICE, STRIDED_SLICE, TILE, REVERSE, PAD, PAD_V2,
// MIRROR_PAD, GATHER, CHANNEL_SHUFFLE, SPLIT, RESIZE_NEAREST_NEIGHBOR, DENSIFY, and the
// space/depth/batch rearrangements in NHWC and NCHW),
// described once as element maps: which input element each output element copies. The golden
// executes a map element by element (golden/ops/DataMovement.h); the driver turns the same map
// into strided DMA copies (driver/compiler/DataMovement.cpp).
//
// A map is one or more copies; a copy fills a box of one output in row-major order of its axes,
// and each axis says, per index along it, which input offset (in elements) it contributes.
// Offsets of different axes add up, so any permutation, slicing, repetition or reflection of a
// row-major input is one table per axis; an axis of the output may be split into several (a
// pixel row of DEPTH_TO_SPACE is an input row times the block plus an offset in the block).
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <vector>

#include "model/Status.h"
#include "model/Types.h"

namespace nncosim {

/// Input offsets (in elements) contributed by one axis, one per index along it. kPadOffset marks a
/// position outside the input: the element takes the padding value.
using AxisOffsets = std::vector<int64_t>;
inline constexpr int64_t kPadOffset = -1;

/// Offsets start, start + stride, ... (count of them); stride may be negative.
AxisOffsets stridedAxis(uint32_t count, int64_t stride, int64_t start = 0);

/// Row-major element strides of a tensor of dimensions `dims`.
std::vector<int64_t> rowMajorStrides(const std::vector<uint32_t>& dims);

/// Element counts of a row-major tensor before, along and after one axis.
struct AxisSizes {
    size_t outer = 1, axis = 1, inner = 1;
};
AxisSizes axisSizes(const std::vector<uint32_t>& dims, uint32_t axis);

/// One box of an output: output[offset + i] = input[sum over d of axes[d][i_d]], i running over
/// the axes in row-major order.
struct ElementCopy {
    uint32_t input = 0;
    uint32_t output = 0;
    uint64_t offset = 0;  ///< in elements of the output
    std::vector<AxisOffsets> axes;
};

/// Every output's shape and the copies that fill them.
struct ElementMap {
    std::vector<std::vector<uint32_t>> shapes;
    std::vector<ElementCopy> copies;
    /// The bits of the padding element when the operation gives its value (PAD_V2); otherwise
    /// padding positions (kPadOffset) take the output's zero point (zero for unquantized types).
    std::optional<uint32_t> padBits;
};

/// The padding element of `map` for an output of `type` and `zeroPoint`, as the element's bits.
inline uint32_t paddingBits(const ElementMap& map, OperandType type, int32_t zeroPoint) {
    const uint32_t bits = map.padBits ? *map.padBits : static_cast<uint32_t>(zeroPoint);
    const uint32_t size = elementSize(type);
    return size >= 4 ? bits : bits & ((1u << (8 * size)) - 1);
}

/// What an element map reads of its operation.
struct ElementMapInputs {
    uint32_t outputs = 1;
    std::function<std::vector<uint32_t>(uint32_t)> shape;
    /// The values of an INT32 or BOOL scalar or a TENSOR_INT32 input; nullopt: unknown.
    std::function<std::optional<std::vector<int32_t>>(uint32_t)> ints;
    /// The raw bits of a scalar input of at most 4 bytes (FLOAT32, FLOAT16, INT32); nullopt:
    /// unknown.
    std::function<std::optional<uint32_t>(uint32_t)> bits;
    std::function<OperandType(uint32_t)> type;
    std::function<bool(uint32_t)> omitted;
};

/// Whether `type` is described by an element map.
bool hasElementMap(OperationType type);

/// The map of one operation; fails naming the parameter that is unknown or out of range.
Result<ElementMap> elementMap(OperationType type, const ElementMapInputs& inputs);

}  // namespace nncosim
