#include "driver/DeviceQueue.h"

#include <algorithm>

namespace nncosim::driver {

DeviceQueue::DeviceQueue(Duration agingQuantum)
    : mAgingQuantum(agingQuantum),
      mState(std::make_shared<State>()),
      mWorker(&DeviceQueue::run, mState) {}

DeviceQueue::~DeviceQueue() {
    {
        std::lock_guard<std::mutex> lock(mState->mutex);
        mState->stopping = true;
    }
    mState->condition.notify_all();
    // The last owner may drop the queue from inside a job; the worker then ends on its own.
    if (onWorkerThread()) {
        mWorker.detach();
    } else {
        mWorker.join();
    }
}

void DeviceQueue::submit(Priority priority, Job job) {
    const int level = std::clamp(static_cast<int>(priority), 0, 2);
    {
        std::lock_guard<std::mutex> lock(mState->mutex);
        if (!mState->stopping) {
            mState->queue.push_back(
                {Clock::now() - level * mAgingQuantum, mState->sequence++, std::move(job)});
            job = nullptr;
        }
    }
    if (job) {
        job(/*cancelled=*/true);
        return;
    }
    mState->condition.notify_one();
}

size_t DeviceQueue::pending() const {
    std::lock_guard<std::mutex> lock(mState->mutex);
    return mState->queue.size();
}

void DeviceQueue::run(std::shared_ptr<State> state) {
    std::unique_lock<std::mutex> lock(state->mutex);
    for (;;) {
        state->condition.wait(lock, [&] { return state->stopping || !state->queue.empty(); });
        if (state->queue.empty()) return;  // stopping with nothing left
        auto best = std::min_element(
            state->queue.begin(), state->queue.end(), [](const Entry& a, const Entry& b) {
                return a.rank != b.rank ? a.rank < b.rank : a.sequence < b.sequence;
            });
        Job job = std::move(best->job);
        state->queue.erase(best);
        const bool cancelled = state->stopping;
        lock.unlock();
        job(cancelled);
        job = nullptr;  // release what the job holds (possibly the queue's owner) before relocking
        lock.lock();
    }
}

}  // namespace nncosim::driver
