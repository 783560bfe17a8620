#include "driver/NpuBurst.h"

#include "driver/BusyGuard.h"
#include "driver/NpuPreparedModel.h"

namespace nncosim::driver::detail {

NpuBurst::NpuBurst(std::shared_ptr<const NpuPreparedModel> model) : mModel(std::move(model)) {}

NpuBurst::OptionalCacheHold NpuBurst::cacheMemory(const SharedMemory& memory) const {
    if (!memory) return nullptr;
    // Shared memory stays mapped for as long as the hold (or a request) references it.
    return std::make_shared<const SharedMemory>(memory);
}

ExecutionResult NpuBurst::execute(const Request& request, MeasureTiming measure,
                                  const OptionalTimePoint& deadline,
                                  const OptionalDuration& loopTimeout) const {
    BusyGuard guard(*mBusy);
    if (!guard.acquired())
        return ExecutionResult::failure(
            invalidArgument("burst: another execution is running on this burst"));
    return mModel->execute(request, measure, deadline, loopTimeout);
}

Result<SharedExecution> NpuBurst::createReusableExecution(
    const Request& request, MeasureTiming measure, const OptionalDuration& loopTimeout) const {
    // Its computations are this burst's executions: one at a time with the burst's others.
    return mModel->createReusableExecution(request, measure, loopTimeout, mBusy);
}

}  // namespace nncosim::driver::detail
