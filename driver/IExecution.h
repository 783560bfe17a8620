// A reusable execution: one request and its configuration, computed many times (canonical
// IExecution; AIDL IExecution).
#pragma once

#include <vector>

#include "driver/HalTypes.h"

namespace nncosim::driver {

/// A request fixed together with MeasureTiming and the loop timeout, validated once when the
/// execution is created. Implementations must be thread-safe; at most one computation runs on
/// one execution object at a time (a second concurrent one fails with INVALID_ARGUMENT).
class IExecution {
  public:
    virtual ~IExecution() = default;

    /// Computes the request synchronously, with the contract of IPreparedModel::execute.
    /// Uses of driver-managed buffers are validated again on every computation.
    virtual ExecutionResult compute(const OptionalTimePoint& deadline) const = 0;

    /// Launches the computation after every fence of `waitFor` is signaled, with the contract
    /// of IPreparedModel::executeFenced.
    virtual Result<FencedExecution> computeFenced(
        const std::vector<SyncFence>& waitFor, const OptionalTimePoint& deadline,
        const OptionalDuration& timeoutAfterFence) const = 0;
};

}  // namespace nncosim::driver
