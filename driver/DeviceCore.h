// Internal to the driver (not part of its API, whose headers are IDevice.h & co. and
// NpuDevice.h): the state one NPU device shares with its prepared models, executions, bursts
// and buffers — identity, capabilities, buffer table, runtime and job queue.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "driver/BufferTracker.h"
#include "driver/DeviceQueue.h"
#include "driver/NpuDevice.h"
#include "driver/Runtime.h"

namespace nncosim::driver::detail {

/// True when `deadline` is set and has passed.
bool deadlinePassed(const OptionalTimePoint& deadline);

class DeviceCore {
  public:
    DeviceCore(std::shared_ptr<HardwareAccess> hardware, const DeviceOptions& options);

    // Runs one job on the NPU in priority order; blocks until it ends.
    JobOutcome runJob(Priority priority, const Program& program,
                      const std::vector<TensorData>& inputs, const OptionalTimePoint& deadline);

    const std::string name;
    const std::string version = "nncosim-npu 0.1 (NPU1 " + std::to_string(npu::kArrayRows) + "x" +
                                std::to_string(npu::kArrayCols) + ")";
    const CacheKey key;
    const Capabilities capabilities;
    const std::vector<Extension> extensions;
    BufferTracker buffers;
    Runtime runtime;
    DeviceQueue queue;  // last: destroyed first, so no job outlives the runtime
};

}  // namespace nncosim::driver::detail
