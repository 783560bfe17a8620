// The device queue: every access to the NPU goes through it, one job at a time, on one worker
// thread (the SystemC platform is driven from a single thread).
#pragma once

#include <condition_variable>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#include "model/Types.h"

namespace nncosim::driver {

/// Serializes jobs fairly by priority. A job's rank is its enqueue time minus a boost of one
/// aging quantum per priority level above LOW: a HIGH job overtakes MEDIUM and LOW jobs that
/// have waited less than one or two quanta, but a job that has waited longer than that runs
/// first, so no priority starves the others.
class DeviceQueue {
  public:
    /// A job runs on the worker thread. `cancelled` is true when the queue is being destroyed
    /// before the job could run: the job must then only report failure.
    using Job = std::function<void(bool cancelled)>;

    explicit DeviceQueue(Duration agingQuantum = std::chrono::milliseconds(100));
    /// Cancels the jobs still queued (each runs with cancelled = true) and stops the worker.
    ~DeviceQueue();
    DeviceQueue(const DeviceQueue&) = delete;
    DeviceQueue& operator=(const DeviceQueue&) = delete;

    void submit(Priority priority, Job job);
    /// Jobs queued and not yet started.
    size_t pending() const;
    /// Whether the caller is the worker thread (jobs must not wait on the queue).
    bool onWorkerThread() const { return std::this_thread::get_id() == mWorker.get_id(); }

  private:
    struct Entry {
        TimePoint rank;
        uint64_t sequence;  // FIFO among equal ranks
        Job job;
    };
    // Shared with the worker, which may outlive the queue when a job drops its last owner.
    struct State {
        std::mutex mutex;
        std::condition_variable condition;
        std::vector<Entry> queue;
        uint64_t sequence = 0;
        bool stopping = false;
    };
    static void run(std::shared_ptr<State> state);

    const Duration mAgingQuantum;
    std::shared_ptr<State> mState;
    std::thread mWorker;
};

}  // namespace nncosim::driver
