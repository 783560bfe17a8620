// The driver's asynchronous work on a bounded number of threads. The HAL's asynchronous calls
// (prepareModel, prepareModelFromCache, executeAsynchronously, executeFenced) post their work
// here instead of starting a thread each; executions waiting for their fences hold no thread:
// one watcher polls every pending fence.
#pragma once

#include <cstddef>
#include <functional>
#include <vector>

#include "driver/HalTypes.h"
#include "model/Status.h"

namespace nncosim::driver {

/// Threads that run the driver's asynchronous work.
inline constexpr size_t kWorkerThreads = 4;
/// Work items posted and not yet finished, at most; more are refused.
inline constexpr size_t kMaxPendingWork = 1024;
/// Fenced executions waiting for their fences, at most; more are refused.
inline constexpr size_t kMaxPendingFences = 16384;

/// Runs `work` on the worker threads. Fails with GENERAL_FAILURE, and runs nothing, when
/// kMaxPendingWork items are pending or the threads cannot be started.
Status postWork(std::function<void()> work);

/// Calls `done` once: with OK on a worker thread when every fence of `fences` has signaled;
/// with GENERAL_FAILURE as soon as any one signals an error (the others still waiting); with
/// MISSED_DEADLINE_TRANSIENT when `deadline` passes first; or with GENERAL_FAILURE when the
/// work cannot be posted. Fails itself (and never calls `done`) when kMaxPendingFences
/// executions are waiting or the watcher cannot be started.
Status whenSignaled(std::vector<SyncFence> fences, OptionalTimePoint deadline,
                    std::function<void(Status)> done);

/// How many times the fence watcher has woken up since it started (each return of its poll): it
/// must sleep while no fence it watches changes state and no deadline passes, whatever state the
/// watched fences are in. For tests.
uint64_t fenceWatcherWakeups();

}  // namespace nncosim::driver
