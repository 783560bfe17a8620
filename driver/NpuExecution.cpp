#include "driver/NpuExecution.h"

#include "driver/NpuPreparedModel.h"

namespace nncosim::driver::detail {

NpuExecution::NpuExecution(std::shared_ptr<const NpuPreparedModel> model, Request request,
                           MeasureTiming measure, OptionalDuration loopTimeout,
                           std::shared_ptr<std::atomic<bool>> burstBusy)
    : mModel(std::move(model)),
      mRequest(std::move(request)),
      mMeasure(measure),
      mLoopTimeout(loopTimeout),
      mBurstBusy(std::move(burstBusy)) {}

bool NpuExecution::acquire() const {
    if (mBurstBusy && mBurstBusy->exchange(true)) return false;
    if (mBusy->exchange(true)) {
        if (mBurstBusy) *mBurstBusy = false;
        return false;
    }
    return true;
}

void NpuExecution::release() const {
    *mBusy = false;
    if (mBurstBusy) *mBurstBusy = false;
}

ExecutionResult NpuExecution::compute(const OptionalTimePoint& deadline) const {
    if (!acquire())
        return ExecutionResult::failure(invalidArgument(
            "compute: another computation is running on this execution or its burst"));
    ExecutionResult result = mModel->execute(mRequest, mMeasure, deadline, mLoopTimeout);
    release();
    return result;
}

Result<FencedExecution> NpuExecution::computeFenced(
    const std::vector<SyncFence>& waitFor, const OptionalTimePoint& deadline,
    const OptionalDuration& timeoutAfterFence) const {
    if (!acquire())
        return invalidArgument(
            "computeFenced: another computation is running on this execution or its burst");
    // Busy until the fenced computation has ended (released by its last step).
    auto result = mModel->launchFenced(mRequest, waitFor, mMeasure, deadline, mLoopTimeout,
                                       timeoutAfterFence, [busy = mBusy, burstBusy = mBurstBusy] {
                                           *busy = false;
                                           if (burstBusy) *burstBusy = false;
                                       });
    if (!result) release();
    return result;
}

}  // namespace nncosim::driver::detail
