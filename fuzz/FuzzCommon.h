// Shared by the fuzz targets: limits that keep one input cheap (a fuzz input must never make a
// target allocate gigabytes or run for seconds), and the libFuzzer entry point's declaration.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>

namespace nncosim::fuzz {

/// Models whose tensors need more than this in all are validated but never executed.
inline constexpr uint64_t kExecuteLimitBytes = uint64_t{1} << 20;
/// A WHILE loop of an executed model stops after this long (MISSED_DEADLINE_TRANSIENT).
inline constexpr std::chrono::milliseconds kLoopTimeout{5};

}  // namespace nncosim::fuzz

/// libFuzzer's entry point, defined once per target: must return 0 and must not crash, hang or
/// leak on any input.
extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size);
