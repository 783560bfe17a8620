// Element copies driven by per-axis offset tables (model/operations/ElementMap.h): the one engine
// behind the operations that only move data, and a helper of those that gather before computing.
#pragma once

#include <algorithm>
#include <cstdint>
#include <vector>

#include "golden/ExecutionContext.h"
#include "model/Types.h"
#include "model/operations/ElementMap.h"

namespace nncosim::golden {

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

/// The operations described by an element map (model/operations/ElementMap.h), executed element
/// by element.
Status executeElementMap(ExecutionContext& ctx);

}  // namespace nncosim::golden
