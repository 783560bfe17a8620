// A burst: a sequence of executions of one prepared model in quick succession (canonical
// IBurst; AIDL IBurst).
#pragma once

#include <memory>

#include "driver/HalTypes.h"

namespace nncosim::driver {

/// Keeps resources between executions. Implementations must be thread-safe; at most one
/// execution runs on one burst at a time (a second concurrent one fails with INVALID_ARGUMENT).
class IBurst {
  public:
    /// Releases the cached memory when the last copy is dropped.
    using OptionalCacheHold = std::shared_ptr<const void>;

    virtual ~IBurst() = default;

    /// Keeps `memory` mapped for the burst's executions while the returned hold lives. May
    /// return null when nothing is cached.
    virtual OptionalCacheHold cacheMemory(const SharedMemory& memory) const = 0;

    /// Executes synchronously with the contract of IPreparedModel::execute.
    virtual ExecutionResult execute(const Request& request, MeasureTiming measure,
                                    const OptionalTimePoint& deadline,
                                    const OptionalDuration& loopTimeout) const = 0;

    /// A reusable execution whose computations run as burst executions; the contract of
    /// IPreparedModel::createReusableExecution. Its computations (compute and computeFenced,
    /// until the fenced computation ends) are executions of this burst: while one runs, the
    /// burst's execute and every computation of its other reusable executions must fail with
    /// INVALID_ARGUMENT, and the other way round.
    virtual Result<SharedExecution> createReusableExecution(
        const Request& request, MeasureTiming measure,
        const OptionalDuration& loopTimeout) const = 0;
};

}  // namespace nncosim::driver
