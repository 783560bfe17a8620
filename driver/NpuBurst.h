// Internal to the driver (not part of its API, whose headers are IDevice.h & co. and
// NpuDevice.h): IBurst on the NPU — executions of one prepared model, one at a time, with
// memory holds.
#pragma once

#include <atomic>
#include <memory>

#include "driver/IBurst.h"

namespace nncosim::driver::detail {

class NpuPreparedModel;

class NpuBurst : public IBurst {
  public:
    explicit NpuBurst(std::shared_ptr<const NpuPreparedModel> model);

    OptionalCacheHold cacheMemory(const SharedMemory& memory) const override;

    ExecutionResult execute(const Request& request, MeasureTiming measure,
                            const OptionalTimePoint& deadline,
                            const OptionalDuration& loopTimeout) const override;

    Result<SharedExecution> createReusableExecution(
        const Request& request, MeasureTiming measure,
        const OptionalDuration& loopTimeout) const override;

  private:
    const std::shared_ptr<const NpuPreparedModel> mModel;
    // One execution at a time, shared with the reusable executions the burst creates.
    const std::shared_ptr<std::atomic<bool>> mBusy = std::make_shared<std::atomic<bool>>(false);
};

}  // namespace nncosim::driver::detail
