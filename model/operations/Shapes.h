// Output shapes of the operations whose shape both the golden and the driver's compiler
// compute (the window operations' are in Window.h): one definition each.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "model/Status.h"

namespace nncosim {

/// NNAPI broadcasting of two shapes (aligned on the right; a dimension of 1 stretches).
std::optional<std::vector<uint32_t>> broadcastShape(const std::vector<uint32_t>& a,
                                                    const std::vector<uint32_t>& b);

/// RESHAPE of `input` to `target`, where one entry may be -1 (inferred).
Result<std::vector<uint32_t>> reshapeShape(const std::vector<uint32_t>& input,
                                           const std::vector<int32_t>& target);

/// SQUEEZE: `input` without the listed axes (each of size 1; negative counts from the end), or
/// without every axis of size 1 when `axes` is nullopt; squeezing everything leaves [1].
Result<std::vector<uint32_t>> squeezeShape(const std::vector<uint32_t>& input,
                                           const std::optional<std::vector<int32_t>>& axes);

/// EXPAND_DIMS: `input` with an axis of size 1 inserted at `axis` (negative counts from the end).
Result<std::vector<uint32_t>> expandDimsShape(const std::vector<uint32_t>& input, int32_t axis);

/// CONCATENATION of `inputs` along `axis` (negative counts from the end).
Result<std::vector<uint32_t>> concatenationShape(const std::vector<std::vector<uint32_t>>& inputs,
                                                 int32_t axis);

/// Which axes of a tensor of rank `rank` the REDUCE_* operations reduce (negative counts from
/// the end; repeats allowed).
Result<std::vector<bool>> reducedAxes(size_t rank, const std::vector<int32_t>& axes);

/// The REDUCE_* output: the kept axes, and the reduced ones as 1 with `keepDims`; [1] when
/// nothing is kept.
std::vector<uint32_t> reductionShape(const std::vector<uint32_t>& input,
                                     const std::vector<bool>& reduced, bool keepDims);

/// FULLY_CONNECTED: [batches, units] for an input of rank 2 to 4 read as rows of weights[1].
Result<std::vector<uint32_t>> fullyConnectedShape(const std::vector<uint32_t>& input,
                                                  const std::vector<uint32_t>& weights,
                                                  const std::vector<uint32_t>& bias);

}  // namespace nncosim
