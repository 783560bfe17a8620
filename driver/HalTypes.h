// Types shared by the HAL interfaces (after Android's canonical nnapi/Types.h and the HAL 1.3 /
// AIDL contracts): owned file descriptors, cache handles and tokens, sync fences, execution
// results, and the callback interfaces of asynchronous preparation and execution.
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <utility>
#include <vector>

#include "model/Model.h"
#include "model/Status.h"
#include "model/Types.h"

namespace nncosim::driver {

class IPreparedModel;
class IBuffer;
class IBurst;
class IExecution;
using SharedPreparedModel = std::shared_ptr<const IPreparedModel>;
using SharedBuffer = std::shared_ptr<const IBuffer>;
using SharedBurst = std::shared_ptr<const IBurst>;
using SharedExecution = std::shared_ptr<const IExecution>;

/// An owned file descriptor, closed on destruction.
class UniqueFd {
  public:
    UniqueFd() = default;
    explicit UniqueFd(int fd) : mFd(fd) {}
    ~UniqueFd() { reset(); }
    UniqueFd(UniqueFd&& other) noexcept : mFd(other.release()) {}
    UniqueFd& operator=(UniqueFd&& other) noexcept {
        if (this != &other) reset(other.release());
        return *this;
    }
    UniqueFd(const UniqueFd&) = delete;
    UniqueFd& operator=(const UniqueFd&) = delete;

    int get() const { return mFd; }
    bool ok() const { return mFd >= 0; }
    int release() { return std::exchange(mFd, -1); }
    void reset(int fd = -1);

  private:
    int mFd = -1;
};

/// A duplicate (close-on-exec) of `fd`; fails with INVALID_ARGUMENT when `fd` is not open.
Result<UniqueFd> dupFd(int fd);

/// A file descriptor shared by the client and the driver (a cache file, a fence). The driver
/// must dup it when it keeps access to the file beyond the call that received it.
using SharedHandle = std::shared_ptr<const UniqueFd>;
/// A handle owning a duplicate of `fd` (the caller keeps its own descriptor).
Result<SharedHandle> makeSharedHandle(int fd);

/// Identifies a prepared model in the compilation cache (kByteSizeOfCacheToken bytes).
using CacheToken = std::array<uint8_t, kByteSizeOfCacheToken>;

/// A sync fence as a real file descriptor: the read end of a local socket pair. It is ACTIVE
/// until its signaler writes one status byte; from then on the fd is readable (poll POLLIN)
/// and the byte (peeked, never consumed) tells SIGNALED from ERROR to every holder of the fd.
class SyncFence {
  public:
    enum class State { ACTIVE, SIGNALED, ERROR };

    /// An empty fence: already signaled, with no file descriptor (the HAL's empty handle).
    SyncFence() = default;
    /// A fence over a duplicate of `fd`, which must be a fence created by createSyncFence().
    static Result<SyncFence> fromFd(int fd);

    bool empty() const { return !mHandle; }
    /// The fence's descriptor, or -1 when empty.
    int fd() const { return mHandle ? mHandle->get() : -1; }
    /// Current state, without blocking.
    State state() const;
    /// Blocks until the fence leaves ACTIVE or `timeout` passes (forever when absent); returns
    /// the state reached (ACTIVE on timeout).
    State wait(OptionalDuration timeout = std::nullopt) const;

  private:
    explicit SyncFence(SharedHandle handle) : mHandle(std::move(handle)) {}
    friend Result<std::pair<SyncFence, class FenceSignaler>> createSyncFence();
    SharedHandle mHandle;
};

/// The writing side of a fence. Signals exactly once; destroying it unsignaled signals ERROR
/// so that no waiter can hang on an abandoned fence.
class FenceSignaler {
  public:
    FenceSignaler() = default;
    FenceSignaler(FenceSignaler&&) noexcept = default;
    FenceSignaler& operator=(FenceSignaler&&) noexcept;
    ~FenceSignaler();
    /// Moves the fence to SIGNALED (`success`) or ERROR; later calls do nothing.
    void signal(bool success);

  private:
    explicit FenceSignaler(UniqueFd fd) : mFd(std::move(fd)) {}
    friend Result<std::pair<SyncFence, FenceSignaler>> createSyncFence();
    UniqueFd mFd;
};

/// A new ACTIVE fence and its signaler.
Result<std::pair<SyncFence, FenceSignaler>> createSyncFence();

/// What an execution returns: NONE with output shapes (and timing when measured);
/// OUTPUT_INSUFFICIENT_SIZE with one shape per output, the short ones marked; any other
/// status with no shapes and no timing.
struct ExecutionResult {
    Status status;
    std::vector<OutputShape> outputShapes;
    Timing timing;

    bool ok() const { return status.ok(); }
    static ExecutionResult failure(Status status) { return {std::move(status), {}, {}}; }
};

/// Timings and status of a fenced execution, as IFencedExecutionCallback reports them.
struct FencedExecutionInfo {
    Status status;
    /// From the executeFenced call to the end of the execution.
    Timing timingLaunched;
    /// From the moment every waitFor fence was signaled to the end of the execution.
    Timing timingFenced;
};

/// Queries the outcome of a fenced execution (HAL 1.3 IFencedExecutionCallback).
class IFencedExecutionCallback {
  public:
    virtual ~IFencedExecutionCallback() = default;
    /// Must block until the execution has finished, then report it. Timings are present only
    /// when MeasureTiming::YES was requested and the execution succeeded.
    virtual FencedExecutionInfo getExecutionInfo() const = 0;
};

/// What executeFenced / computeFenced return: the fence signaled when the execution ends (empty
/// when it had already ended) and the callback that reports it.
struct FencedExecution {
    SyncFence fence;
    std::shared_ptr<const IFencedExecutionCallback> callback;
};

/// Receives the outcome of an asynchronous preparation (HAL 1.3 IPreparedModelCallback).
class IPreparedModelCallback {
  public:
    virtual ~IPreparedModelCallback() = default;
    /// Called exactly once per preparation: status NONE with the prepared model, or a failure
    /// status with a null model.
    virtual void notify(Status status, SharedPreparedModel preparedModel) = 0;
};

/// Receives the outcome of an asynchronous execution (HAL 1.3 IExecutionCallback).
class IExecutionCallback {
  public:
    virtual ~IExecutionCallback() = default;
    /// Called exactly once per launched execution.
    virtual void notify(ExecutionResult result) = 0;
};

}  // namespace nncosim::driver
