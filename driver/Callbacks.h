// Ready-made callbacks for the asynchronous HAL calls: they record the one notification and
// let the caller block until it arrives (after Android's PreparedModelCallback and
// ExecutionCallback).
#pragma once

#include <condition_variable>
#include <mutex>

#include "driver/HalTypes.h"
#include "driver/IDevice.h"

namespace nncosim::driver {

class PreparedModelCallback : public IPreparedModelCallback {
  public:
    void notify(Status status, SharedPreparedModel preparedModel) override;
    /// Blocks until notified.
    void wait() const;
    /// Blocks until notified, then the status notified.
    Status status() const;
    /// Blocks until notified, then the model notified (null on failure).
    SharedPreparedModel preparedModel() const;
    /// How many times notify() was called (the contract says exactly once).
    int notifications() const;

  private:
    mutable std::mutex mMutex;
    mutable std::condition_variable mCondition;
    int mNotifications = 0;
    Status mStatus;
    SharedPreparedModel mPreparedModel;
};

class ExecutionCallback : public IExecutionCallback {
  public:
    void notify(ExecutionResult result) override;
    void wait() const;
    /// Blocks until notified, then the result notified.
    ExecutionResult result() const;
    int notifications() const;

  private:
    mutable std::mutex mMutex;
    mutable std::condition_variable mCondition;
    int mNotifications = 0;
    ExecutionResult mResult;
};

/// prepareModel followed by waiting for its callback: the launch status when it failed, else
/// the notified status or model.
Result<SharedPreparedModel> prepareModelBlocking(
    const IDevice& device, const Model& model,
    ExecutionPreference preference = kDefaultExecutionPreference,
    Priority priority = kDefaultPriority, const OptionalTimePoint& deadline = {},
    const std::vector<SharedHandle>& modelCache = {},
    const std::vector<SharedHandle>& dataCache = {}, const CacheToken& token = {});

/// prepareModelFromCache followed by waiting for its callback.
Result<SharedPreparedModel> prepareModelFromCacheBlocking(
    const IDevice& device, const OptionalTimePoint& deadline,
    const std::vector<SharedHandle>& modelCache, const std::vector<SharedHandle>& dataCache,
    const CacheToken& token);

}  // namespace nncosim::driver
