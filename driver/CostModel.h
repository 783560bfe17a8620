// The driver's cost model of the NPU: roughly how many device cycles a descriptor and a job
// take. The compiler sums it into Program::estimatedCycles; the functional model (sim/) uses the
// same figures as its per-descriptor timing. They are estimates for planning and for the
// functional model's clock, never measured cycles: the RTL is what measures.
#pragma once

#include <cstdint>

#include "driver/NpuRegisters.h"

namespace nncosim::driver {

/// Cycles a job costs beyond its descriptors: doorbell, first fetch and completion record.
inline constexpr uint64_t kJobOverheadCycles = 200;

/// Estimated cycles of a window descriptor (CONV, DWCONV, pooling): its input load (none when
/// chained) and one vector per output pixel, output-channel block and K step, a step taking at
/// least its weight block's stream.
uint64_t estimateWindowCycles(const npu::Descriptor& d);

/// Estimated cycles of any descriptor: window operations as estimateWindowCycles; element-wise
/// operations and lookups two cycles per word of A (three with a B operand) plus 30; NOP 1.
uint64_t estimateDescriptorCycles(const npu::Descriptor& d);

}  // namespace nncosim::driver
