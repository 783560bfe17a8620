#include "driver/AsyncWork.h"

#include <fcntl.h>
#include <poll.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <mutex>
#include <system_error>
#include <thread>

#include <thread_pool/thread_pool.hpp>

namespace nncosim::driver {
namespace {

// Process-wide and never destroyed: work still pending at exit must not be joined.
thread_pool::ThreadPool* workerPool() {
    static thread_pool::ThreadPool* pool = new thread_pool::ThreadPool(kWorkerThreads);
    return pool;
}

std::atomic<size_t> gPendingWork{0};

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
            char drain[64];
            while (::read(mWakeRead, drain, sizeof(drain)) > 0) {
            }
            settle();
        }
    }

    // Finishes every waiter whose fences all signaled, one of which failed, or whose deadline
    // passed.
    void settle() {
        std::vector<std::pair<std::function<void(Status)>, Status>> finished;
        {
            std::lock_guard lock(mMutex);
            const auto now = Clock::now();
            for (size_t i = 0; i < mWaiters.size();) {
                Waiter& w = mWaiters[i];
                bool all = true, error = false;
                for (const SyncFence& f : w.fences) {
                    const auto state = f.state();
                    error = error || state == SyncFence::State::ERROR;
                    all = all && state == SyncFence::State::SIGNALED;
                }
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

    const int mWakeRead, mWakeWrite;
    std::mutex mMutex;
    std::vector<Waiter> mWaiters;
};

}  // namespace

Status postWork(std::function<void()> work) {
    if (gPendingWork.fetch_add(1) >= kMaxPendingWork) {
        --gPendingWork;
        return fail(ErrorStatus::GENERAL_FAILURE, kMaxPendingWork,
                    " asynchronous calls are already pending; try again later");
    }
    try {
        workerPool()->Submit([work = std::move(work)] {
            struct Finished {
                ~Finished() { --gPendingWork; }
            } finished;
            work();
        });
    } catch (const std::system_error& e) {
        --gPendingWork;
        return fail(ErrorStatus::GENERAL_FAILURE,
                    "cannot start the driver's worker threads: ", e.what());
    }
    return okStatus();
}

Status whenSignaled(std::vector<SyncFence> fences, OptionalTimePoint deadline,
                    std::function<void(Status)> done) {
    auto watcher = FenceWatcher::instance();
    if (!watcher) return watcher.status();
    return (*watcher)->add(std::move(fences), deadline, std::move(done));
}

}  // namespace nncosim::driver
