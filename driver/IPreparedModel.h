// A model prepared for execution on the device (canonical IPreparedModel; HAL 1.3
// IPreparedModel.hal; AIDL IPreparedModel).
#pragma once

#include <memory>
#include <vector>

#include "driver/HalTypes.h"

namespace nncosim::driver {

/// Launches executions of one prepared model. Implementations must be thread-safe: any number
/// of executions may run concurrently on one prepared model and on different ones.
///
/// Every execution path must validate its arguments before anything touches the device:
/// the request against the model (argument counts and lifetimes, pool indexes, locations inside
/// their pools, lengths, dimensions), every driver-managed buffer the request uses (a token of
/// this device, a role given at allocation, initialized when read, compatible dimensions),
/// MeasureTiming, the deadline and the loop timeout (at most kMaxLoopTimeoutDuration). Invalid
/// arguments must fail with INVALID_ARGUMENT and leave every output untouched.
///
/// Outputs: on success every output is written and outputShapes gives each output's actual
/// dimensions (unknown model dimensions resolved). When an output buffer is too small (also
/// for an output whose shape the model fixes: a length shorter than its byte size is valid, not
/// INVALID_ARGUMENT), the result is OUTPUT_INSUFFICIENT_SIZE with one shape per output and the
/// short ones marked isSufficient = false; no output is written and a driver-managed output
/// buffer becomes uninitialized, as after any failed execution. Inputs are never modified.
///
/// Deadlines: when the deadline has passed or cannot be met, the execution must fail with
/// MISSED_DEADLINE_TRANSIENT or MISSED_DEADLINE_PERSISTENT (aborting it on the device if it
/// had started). A device fault fails that execution with GENERAL_FAILURE and must leave the
/// device usable for the next one.
///
/// Timing: with MeasureTiming::YES a successful execution reports timeOnDevice (device cycles
/// × clock period) and timeInDriver: the driver's own wall time in the call (host time spent
/// simulating the device excluded) plus timeOnDevice, as on silicon, where the driver waits
/// while the device runs. Otherwise both are absent.
class IPreparedModel {
  public:
    virtual ~IPreparedModel() = default;

    /// Executes `request` synchronously; must not return before the execution is complete.
    virtual ExecutionResult execute(const Request& request, MeasureTiming measure,
                                    const OptionalTimePoint& deadline,
                                    const OptionalDuration& loopTimeout) const = 0;

    /// Launches `request` asynchronously (HAL 1.3 execute_1_3). Validation is synchronous:
    /// invalid arguments must be returned and also notified to `callback` with the same
    /// status. Otherwise the execution runs in the background, NONE is returned, and `callback`
    /// must be notified exactly once with the result. A null callback is INVALID_ARGUMENT (and
    /// cannot be notified).
    virtual Status executeAsynchronously(const Request& request, MeasureTiming measure,
                                         const OptionalTimePoint& deadline,
                                         const OptionalDuration& loopTimeout,
                                         std::shared_ptr<IExecutionCallback> callback) const = 0;

    /// Launches `request` once every fence in `waitFor` is signaled and returns at once with a
    /// fence the driver signals when the execution ends (ERROR when it failed, when a waitFor
    /// fence ends in ERROR, or when the deadline or `timeoutAfterFence`, counted from the
    /// moment the waitFor fences are signaled, passes) and a callback reporting the status and
    /// timings. Invalid arguments (including an empty or non-fence waitFor handle and a
    /// negative timeout) must fail immediately with INVALID_ARGUMENT. The fenced path does not
    /// support outputs of unknown shape: an output whose shape is unknown after the request's
    /// dimensions are applied fails the call with INVALID_ARGUMENT. Every output's size being
    /// known, an output buffer too small for it fails the call with OUTPUT_INSUFFICIENT_SIZE
    /// (the fenced path has no output shapes to report). However the execution fails (at the
    /// call, a waitFor fence in error, the deadline passing while waiting, or the run itself),
    /// its driver-managed output buffers become uninitialized.
    virtual Result<FencedExecution> executeFenced(
        const Request& request, const std::vector<SyncFence>& waitFor, MeasureTiming measure,
        const OptionalTimePoint& deadline, const OptionalDuration& loopTimeout,
        const OptionalDuration& timeoutAfterFence) const = 0;

    /// A reusable execution of `request`; the request is validated here (buffer uses again at
    /// every computation) and must fail with INVALID_ARGUMENT when invalid.
    virtual Result<SharedExecution> createReusableExecution(
        const Request& request, MeasureTiming measure,
        const OptionalDuration& loopTimeout) const = 0;

    /// A burst object for executions in quick succession.
    virtual Result<SharedBurst> configureExecutionBurst() const = 0;
};

}  // namespace nncosim::driver
