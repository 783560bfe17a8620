// Where RESIZE_BILINEAR and RESIZE_NEAREST_NEIGHBOR sample their input, shared by the golden's
// kernels, the element map of RESIZE_NEAREST_NEIGHBOR and the NPU's float RESIZE_BILINEAR.
// Float32 arithmetic term by term as Android's kernels compute it.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>

#include <Eigen/Core>

#include "model/Types.h"

namespace nncosim {

/// The output size along one axis from the operation's size input: an INT32 size, or a FLOAT32 or
/// FLOAT16 scale of the input size (floor of the product), given as the scalar's raw bits.
inline int64_t resizeOutputSize(OperandType type, uint32_t bits, uint32_t inSize) {
    if (type == OperandType::INT32) return static_cast<int32_t>(bits);
    float scale;
    if (type == OperandType::FLOAT16) {
        scale =
            static_cast<float>(Eigen::numext::bit_cast<Eigen::half>(static_cast<uint16_t>(bits)));
    } else {
        std::memcpy(&scale, &bits, sizeof(scale));
    }
    return static_cast<int64_t>(std::floor(static_cast<float>(inSize) * scale));
}

/// Input positions per output position.
inline float resizeScale(uint32_t inSize, uint32_t outSize, bool alignCorners) {
    return alignCorners && outSize > 1 ? static_cast<float>(inSize - 1) / (outSize - 1)
                                       : static_cast<float>(inSize) / outSize;
}

/// Bilinear sampling position of output index `i`: the real position and its two neighbours.
struct BilinearSample {
    float pos;
    int32_t lo, hi;
};

inline BilinearSample bilinearSample(uint32_t i, float scale, uint32_t inSize,
                                     bool halfPixelCenters) {
    BilinearSample s;
    s.pos = halfPixelCenters ? (static_cast<float>(i) + 0.5f) * scale - 0.5f
                             : static_cast<float>(i) * scale;
    s.lo = std::max(static_cast<int32_t>(std::floor(s.pos)), 0);
    s.hi = std::min(static_cast<int32_t>(std::ceil(s.pos)), static_cast<int32_t>(inSize) - 1);
    return s;
}

/// Source row/column of output index `i` for nearest-neighbor sampling.
inline int32_t nearestIndex(uint32_t i, float scale, uint32_t inSize, bool alignCorners,
                            bool halfPixelCenters) {
    const float pos =
        halfPixelCenters ? (static_cast<float>(i) + 0.5f) * scale : static_cast<float>(i) * scale;
    int32_t src = static_cast<int32_t>(alignCorners ? std::round(pos) : std::floor(pos));
    src = std::min(src, static_cast<int32_t>(inSize) - 1);
    return halfPixelCenters ? std::max(src, 0) : src;
}

}  // namespace nncosim
