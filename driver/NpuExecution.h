// Internal to the driver (not part of its API, whose headers are IDevice.h & co. and
// NpuDevice.h): IExecution on the NPU — a reusable execution of one request on a prepared
// model, one computation at a time.
#pragma once

#include <atomic>
#include <memory>
#include <vector>

#include "driver/IExecution.h"

namespace nncosim::driver::detail {

class NpuPreparedModel;

class NpuExecution : public IExecution {
  public:
    // `burstBusy`: the one-at-a-time flag of the burst that created the execution (null for an
    // execution of the prepared model): its computations are the burst's executions.
    NpuExecution(std::shared_ptr<const NpuPreparedModel> model, Request request,
                 MeasureTiming measure, OptionalDuration loopTimeout,
                 std::shared_ptr<std::atomic<bool>> burstBusy = nullptr);

    ExecutionResult compute(const OptionalTimePoint& deadline) const override;

    Result<FencedExecution> computeFenced(const std::vector<SyncFence>& waitFor,
                                          const OptionalTimePoint& deadline,
                                          const OptionalDuration& timeoutAfterFence) const override;

  private:
    const std::shared_ptr<const NpuPreparedModel> mModel;
    const Request mRequest;
    const MeasureTiming mMeasure;
    const OptionalDuration mLoopTimeout;
    // Marks the execution (and its burst, if any) busy; false, marking nothing, when either is.
    bool acquire() const;
    void release() const;

    const std::shared_ptr<std::atomic<bool>> mBusy = std::make_shared<std::atomic<bool>>(false);
    const std::shared_ptr<std::atomic<bool>> mBurstBusy;
};

}  // namespace nncosim::driver::detail
