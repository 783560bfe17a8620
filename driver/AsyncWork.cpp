#include "driver/AsyncWork.h"

#include <fcntl.h>
#include <poll.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <deque>
#include <mutex>
#include <system_error>
#include <thread>

namespace nncosim::driver {
namespace {

// kWorkerThreads threads taking work from one shared queue. (Debian's work-stealing pools queue
// a task behind a busy thread while others idle, which blocking work like ours cannot afford.)
// Process-wide and never destroyed: work still pending at exit must not be joined.
class WorkerPool {
  public:
    static Result<WorkerPool*> instance() {
        static Result<WorkerPool*> pool = []() -> Result<WorkerPool*> {
            auto* p = new WorkerPool;
            try {
                for (size_t i = 0; i < kWorkerThreads; ++i)
                    std::thread([p] { p->loop(); }).detach();
            } catch (const std::system_error& e) {
                if (p->mThreads == 0)
                    return fail(ErrorStatus::GENERAL_FAILURE,
                                "cannot start the driver's worker threads: ", e.what());
            }
            return p;
        }();
        return pool;
    }

    Status post(std::function<void()> work) {
        {
            std::lock_guard lock(mMutex);
            if (mPending >= kMaxPendingWork)
                return fail(ErrorStatus::GENERAL_FAILURE, kMaxPendingWork,
                            " asynchronous calls are already pending; try again later");
            ++mPending;
            mQueue.push_back(std::move(work));
        }
        mCondition.notify_one();
        return okStatus();
    }

  private:
    void loop() {
        {
            std::lock_guard lock(mMutex);
            ++mThreads;
        }
        for (;;) {
            std::function<void()> work;
            {
                std::unique_lock lock(mMutex);
                mCondition.wait(lock, [&] { return !mQueue.empty(); });
                work = std::move(mQueue.front());
                mQueue.pop_front();
            }
            work();
            std::lock_guard lock(mMutex);
            --mPending;
        }
    }

    std::mutex mMutex;
    std::condition_variable mCondition;
    std::deque<std::function<void()>> mQueue;
    size_t mPending = 0;  // queued or running
    size_t mThreads = 0;
};

// Polls every pending execution's fences on one thread; a pipe wakes it when one is added.
class FenceWatcher {
  public:
    static Result<FenceWatcher*> instance() {
        static Result<FenceWatcher*> watcher = []() -> Result<FenceWatcher*> {
            int fds[2];
            if (::pipe2(fds, O_CLOEXEC | O_NONBLOCK) != 0)
                return fail(ErrorStatus::GENERAL_FAILURE, "cannot create the fence watcher's pipe");
            auto* w = new FenceWatcher(fds[0], fds[1]);
            try {
                std::thread([w] { w->loop(); }).detach();
            } catch (const std::system_error& e) {
                return fail(ErrorStatus::GENERAL_FAILURE,
                            "cannot start the fence watcher: ", e.what());
            }
            return w;
        }();
        return watcher;
    }

    Status add(std::vector<SyncFence> fences, OptionalTimePoint deadline,
               std::function<void(Status)> done) {
        {
            std::lock_guard lock(mMutex);
            if (mWaiters.size() >= kMaxPendingFences)
                return fail(ErrorStatus::GENERAL_FAILURE, "executeFenced: ", kMaxPendingFences,
                            " fenced executions are already waiting");
            mWaiters.push_back({std::move(fences), deadline, std::move(done)});
        }
        const char byte = 0;
        [[maybe_unused]] ssize_t n = ::write(mWakeWrite, &byte, 1);  // full pipe: awake anyway
        return okStatus();
    }

  private:
    struct Waiter {
        std::vector<SyncFence> fences;
        OptionalTimePoint deadline;
        std::function<void(Status)> done;
    };

    FenceWatcher(int wakeRead, int wakeWrite) : mWakeRead(wakeRead), mWakeWrite(wakeWrite) {}

    void loop() {
        for (;;) {
            std::vector<pollfd> fds{{mWakeRead, POLLIN, 0}};
            OptionalTimePoint next;
            {
                std::lock_guard lock(mMutex);
                for (const Waiter& w : mWaiters) {
                    for (const SyncFence& f : w.fences) {
                        if (!f.empty()) fds.push_back({f.fd(), POLLIN, 0});
                    }
                    if (w.deadline && (!next || *w.deadline < *next)) next = w.deadline;
                }
            }
            int timeoutMs = -1;
            if (next) {
                const auto left =
                    std::chrono::duration_cast<std::chrono::milliseconds>(*next - Clock::now());
                timeoutMs = static_cast<int>(std::clamp<int64_t>(left.count() + 1, 0, 1 << 30));
            }
            ::poll(fds.data(), fds.size(), timeoutMs);
            mWakeups.fetch_add(1, std::memory_order_relaxed);
            char drain[64];
            while (::read(mWakeRead, drain, sizeof(drain)) > 0) {
            }
            settle();
        }
    }

    // Finishes every waiter whose fences all signaled, one of which failed, or whose deadline
    // passed. A signaled fence leaves its waiter's list: it stays readable, so polling it again
    // would return at once and the watcher would spin while the waiter's other fences are
    // still active.
    void settle() {
        std::vector<std::pair<std::function<void(Status)>, Status>> finished;
        {
            std::lock_guard lock(mMutex);
            const auto now = Clock::now();
            for (size_t i = 0; i < mWaiters.size();) {
                Waiter& w = mWaiters[i];
                bool error = false;
                for (size_t k = 0; k < w.fences.size();) {
                    const auto state = w.fences[k].state();
                    error = error || state == SyncFence::State::ERROR;
                    if (state == SyncFence::State::SIGNALED) {
                        w.fences[k] = std::move(w.fences.back());
                        w.fences.pop_back();
                    } else {
                        ++k;
                    }
                }
                const bool all = w.fences.empty();
                std::optional<Status> outcome;
                if (error)
                    outcome =
                        fail(ErrorStatus::GENERAL_FAILURE, "a waitFor fence signaled an error");
                else if (all)
                    outcome = okStatus();
                else if (w.deadline && now >= *w.deadline)
                    outcome = fail(ErrorStatus::MISSED_DEADLINE_TRANSIENT,
                                   "the deadline passed waiting for fences");
                if (!outcome) {
                    ++i;
                    continue;
                }
                finished.emplace_back(std::move(w.done), std::move(*outcome));
                mWaiters[i] = std::move(mWaiters.back());
                mWaiters.pop_back();
            }
        }
        for (auto& [done, status] : finished) {
            if (!status.ok()) {
                done(status);  // only reports: cheap enough for this thread
                continue;
            }
            auto shared = std::make_shared<std::function<void(Status)>>(std::move(done));
            Status posted = postWork([shared] { (*shared)(okStatus()); });
            if (!posted.ok()) (*shared)(posted);
        }
    }

  public:
    uint64_t wakeups() const { return mWakeups.load(std::memory_order_relaxed); }

  private:
    const int mWakeRead, mWakeWrite;
    std::atomic<uint64_t> mWakeups{0};
    std::mutex mMutex;
    std::vector<Waiter> mWaiters;
};

}  // namespace

Status postWork(std::function<void()> work) {
    auto pool = WorkerPool::instance();
    if (!pool) return pool.status();
    return (*pool)->post(std::move(work));
}

uint64_t fenceWatcherWakeups() {
    auto watcher = FenceWatcher::instance();
    return watcher ? (*watcher)->wakeups() : 0;
}

Status whenSignaled(std::vector<SyncFence> fences, OptionalTimePoint deadline,
                    std::function<void(Status)> done) {
    auto watcher = FenceWatcher::instance();
    if (!watcher) return watcher.status();
    return (*watcher)->add(std::move(fences), deadline, std::move(done));
}

}  // namespace nncosim::driver
