// Element copies driven by per-axis offset tables: the one engine behind the operations that only
// move data (TRANSPOSE, SLICE, STRIDED_SLICE, TILE, REVERSE, MIRROR_PAD, GATHER, CHANNEL_SHUFFLE,
// the space/depth/batch rearrangements in NHWC and NCHW). The output is written in row-major order
// of its axes; each output axis says, per index, which input offset (in elements) it contributes.
// Offsets of different axes add up, so any permutation, slicing, repetition or reflection of a
// row-major input is one table per output axis.
#pragma once

#include <algorithm>
#include <cstdint>
#include <vector>

#include "golden/ExecutionContext.h"
#include "model/Types.h"

namespace nncosim::golden {

/// Input offsets (in elements) contributed by one output axis, one per index along it. An entry of
/// kPadOffset marks a position outside the input: the element takes the padding value instead.
using AxisOffsets = std::vector<int64_t>;
inline constexpr int64_t kPadOffset = -1;

/// Offsets start, start + stride, ... (count of them); stride may be negative.
inline AxisOffsets stridedAxis(uint32_t count, int64_t stride, int64_t start = 0) {
    AxisOffsets offsets(count);
    for (uint32_t i = 0; i < count; ++i) offsets[i] = start + stride * i;
    return offsets;
}

/// Row-major element strides of a tensor of dimensions `dims`.
inline std::vector<int64_t> rowMajorStrides(const std::vector<uint32_t>& dims) {
    std::vector<int64_t> strides(dims.size(), 1);
    for (size_t d = dims.size(); d-- > 1;) strides[d - 1] = strides[d] * dims[d];
    return strides;
}

namespace detail {

template <typename E>
void copyMappedAs(const E* in, E* out, const std::vector<AxisOffsets>& axes, E pad) {
    const size_t rank = axes.size();
    if (rank == 0) {
        out[0] = in[0];
        return;
    }
    for (const auto& axis : axes) {
        if (axis.empty()) return;
    }
    const AxisOffsets& last = axes.back();
    const size_t n = last.size();
    bool contiguous = last[0] != kPadOffset;
    for (size_t i = 1; contiguous && i < n; ++i) contiguous = last[i] == last[0] + int64_t(i);

    // Odometer over the outer axes; base[d] is the summed offset of axes 0..d-1, or kPadOffset
    // once any of them lies in the padding.
    std::vector<uint32_t> index(rank - 1, 0);
    std::vector<int64_t> base(rank, 0);
    auto refresh = [&](size_t from) {
        for (size_t d = from; d + 1 < rank; ++d) {
            const int64_t o = axes[d][index[d]];
            base[d + 1] = base[d] == kPadOffset || o == kPadOffset ? kPadOffset : base[d] + o;
        }
    };
    refresh(0);
    while (true) {
        const int64_t b = base[rank - 1];
        if (b == kPadOffset) {
            std::fill(out, out + n, pad);
        } else if (contiguous) {
            std::copy(in + b + last[0], in + b + last[0] + n, out);
        } else {
            for (size_t i = 0; i < n; ++i) out[i] = last[i] == kPadOffset ? pad : in[b + last[i]];
        }
        out += n;
        // Next index over the outer axes; done when the outermost one wraps.
        size_t d = rank - 1;
        while (d > 0 && ++index[d - 1] == axes[d - 1].size()) index[--d] = 0;
        if (d == 0) return;
        refresh(d - 1);
    }
}

}  // namespace detail

/// Writes out[i0, ..., ik] = in[axes[0][i0] + ... + axes[k][ik]] for elements of `elementBytes`
/// (1, 2 or 4) bytes, in row-major order of the output axes; positions marked kPadOffset take the
/// padding element `pad` (its low `elementBytes` bytes). No axes copies one element.
inline void copyMapped(const uint8_t* in, uint8_t* out, uint32_t elementBytes,
                       const std::vector<AxisOffsets>& axes, uint32_t pad = 0) {
    switch (elementBytes) {
        case 1:
            detail::copyMappedAs(in, out, axes, static_cast<uint8_t>(pad));
            break;
        case 2:
            detail::copyMappedAs(reinterpret_cast<const uint16_t*>(in),
                                 reinterpret_cast<uint16_t*>(out), axes,
                                 static_cast<uint16_t>(pad));
            break;
        default:
            detail::copyMappedAs(reinterpret_cast<const uint32_t*>(in),
                                 reinterpret_cast<uint32_t*>(out), axes, pad);
            break;
    }
}

/// The axes of a row-major tensor read in its own order (an identity copy).
inline std::vector<AxisOffsets> identityAxes(const std::vector<uint32_t>& dims) {
    const auto strides = rowMajorStrides(dims);
    std::vector<AxisOffsets> axes;
    for (size_t d = 0; d < dims.size(); ++d) axes.push_back(stridedAxis(dims[d], strides[d]));
    return axes;
}

/// The axes reading the box begin[d] + steps[d] * i (0 <= i < sizes[d]) of a row-major tensor of
/// dimensions `dims`; steps may be negative.
inline std::vector<AxisOffsets> boxAxes(const std::vector<uint32_t>& dims,
                                        const std::vector<int64_t>& begin,
                                        const std::vector<uint32_t>& sizes,
                                        const std::vector<int64_t>& steps) {
    const auto strides = rowMajorStrides(dims);
    std::vector<AxisOffsets> axes;
    for (size_t d = 0; d < dims.size(); ++d) {
        axes.push_back(stridedAxis(sizes[d], steps[d] * strides[d], begin[d] * strides[d]));
    }
    return axes;
}

/// copyMapped from input i to output j of an operation; output j's shape must be set.
inline void copyMapped(ExecutionContext& ctx, uint32_t i, uint32_t j,
                       const std::vector<AxisOffsets>& axes, uint32_t pad = 0) {
    copyMapped(ctx.inputBytes(i), ctx.outputBytes(j), elementSize(ctx.inputType(i)), axes, pad);
}

}  // namespace nncosim::golden
