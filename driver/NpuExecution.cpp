#include "driver/NpuExecution.h"

#include "driver/BusyGuard.h"
#include "driver/NpuPreparedModel.h"

namespace nncosim::driver::detail {

NpuExecution::NpuExecution(std::shared_ptr<const NpuPreparedModel> model, Request request,
                           MeasureTiming measure, OptionalDuration loopTimeout)
    : mModel(std::move(model)),
      mRequest(std::move(request)),
      mMeasure(measure),
      mLoopTimeout(loopTimeout) {}

ExecutionResult NpuExecution::compute(const OptionalTimePoint& deadline) const {
    BusyGuard guard(*mBusy);
    if (!guard.acquired())
        return ExecutionResult::failure(
            invalidArgument("compute: another computation is running on this execution"));
    return mModel->execute(mRequest, mMeasure, deadline, mLoopTimeout);
}

Result<FencedExecution> NpuExecution::computeFenced(
    const std::vector<SyncFence>& waitFor, const OptionalTimePoint& deadline,
    const OptionalDuration& timeoutAfterFence) const {
    if (mBusy->exchange(true))
        return invalidArgument("computeFenced: another computation is running on this execution");
    auto result = mModel->launchFenced(mRequest, waitFor, mMeasure, deadline, mLoopTimeout,
                                       timeoutAfterFence, [busy = mBusy] { *busy = false; });
    if (!result) *mBusy = false;
    return result;
}

}  // namespace nncosim::driver::detail
