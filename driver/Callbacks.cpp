#include "driver/Callbacks.h"

namespace nncosim::driver {

void PreparedModelCallback::notify(Status status, SharedPreparedModel preparedModel) {
    {
        std::lock_guard<std::mutex> lock(mMutex);
        if (mNotifications++ == 0) {  // the first notification wins; later ones are counted only
            mStatus = std::move(status);
            mPreparedModel = std::move(preparedModel);
        }
    }
    mCondition.notify_all();
}

void PreparedModelCallback::wait() const {
    std::unique_lock<std::mutex> lock(mMutex);
    mCondition.wait(lock, [this] { return mNotifications > 0; });
}

Status PreparedModelCallback::status() const {
    wait();
    std::lock_guard<std::mutex> lock(mMutex);
    return mStatus;
}

SharedPreparedModel PreparedModelCallback::preparedModel() const {
    wait();
    std::lock_guard<std::mutex> lock(mMutex);
    return mPreparedModel;
}

int PreparedModelCallback::notifications() const {
    std::lock_guard<std::mutex> lock(mMutex);
    return mNotifications;
}

void ExecutionCallback::notify(ExecutionResult result) {
    {
        std::lock_guard<std::mutex> lock(mMutex);
        if (mNotifications++ == 0) mResult = std::move(result);
    }
    mCondition.notify_all();
}

void ExecutionCallback::wait() const {
    std::unique_lock<std::mutex> lock(mMutex);
    mCondition.wait(lock, [this] { return mNotifications > 0; });
}

ExecutionResult ExecutionCallback::result() const {
    wait();
    std::lock_guard<std::mutex> lock(mMutex);
    return mResult;
}

int ExecutionCallback::notifications() const {
    std::lock_guard<std::mutex> lock(mMutex);
    return mNotifications;
}

namespace {

Result<SharedPreparedModel> finish(const Status& launch, const PreparedModelCallback& callback) {
    if (!launch.ok()) return launch;
    Status status = callback.status();
    if (!status.ok()) return status;
    return callback.preparedModel();
}

}  // namespace

Result<SharedPreparedModel> prepareModelBlocking(const IDevice& device, const Model& model,
                                                 ExecutionPreference preference, Priority priority,
                                                 const OptionalTimePoint& deadline,
                                                 const std::vector<SharedHandle>& modelCache,
                                                 const std::vector<SharedHandle>& dataCache,
                                                 const CacheToken& token) {
    auto callback = std::make_shared<PreparedModelCallback>();
    Status launch = device.prepareModel(model, preference, priority, deadline, modelCache,
                                        dataCache, token, callback);
    return finish(launch, *callback);
}

Result<SharedPreparedModel> prepareModelFromCacheBlocking(
    const IDevice& device, const OptionalTimePoint& deadline,
    const std::vector<SharedHandle>& modelCache, const std::vector<SharedHandle>& dataCache,
    const CacheToken& token) {
    auto callback = std::make_shared<PreparedModelCallback>();
    Status launch = device.prepareModelFromCache(deadline, modelCache, dataCache, token, callback);
    return finish(launch, *callback);
}

}  // namespace nncosim::driver
