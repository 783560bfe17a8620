// The driver's asynchronous calls run on a bounded number of threads, refuse work cleanly past
// their bound, and fenced executions watch all their fences at once without holding a thread.
#include <doctest/doctest.h>

#include <dirent.h>

#include <future>
#include <thread>

#include "driver/AsyncWork.h"
#include "driver/tests/TestUtil.h"

namespace nncosim::driver::testing {
namespace {

size_t threadCount() {
    size_t n = 0;
    if (DIR* d = ::opendir("/proc/self/task")) {
        while (const dirent* e = ::readdir(d)) n += e->d_name[0] != '.';
        ::closedir(d);
    }
    return n;
}

}  // namespace

TEST_CASE("driver_fenced_waits_hold_no_thread") {
    auto [npu, device] = makeTestDevice();
    auto prepared = prepare(*device, addModel());
    TestRequest r = addRequest();
    auto gate = createSyncFence();
    REQUIRE(gate.ok());
    prepared->executeFenced(r.request, {}, MeasureTiming::NO, {}, {}, {})
        ->callback->getExecutionInfo();  // the worker threads and the watcher exist now
    const size_t before = threadCount();
    std::vector<FencedExecution> pending;
    for (int i = 0; i < 3000; ++i) {
        auto launched =
            prepared->executeFenced(r.request, {gate->first}, MeasureTiming::NO, {}, {}, {});
        REQUIRE_MESSAGE(launched.ok(), launched.status().message);
        pending.push_back(*launched);
    }
    CHECK(threadCount() <= before);
    CHECK(pending.front().fence.state() == SyncFence::State::ACTIVE);
    gate->second.signal(false);
    for (const FencedExecution& f : pending) {
        CHECK(f.callback->getExecutionInfo().status.code == ErrorStatus::GENERAL_FAILURE);
        CHECK(f.fence.wait(std::chrono::seconds(5)) == SyncFence::State::ERROR);
    }
}

TEST_CASE("driver_fenced_rejects_a_fence_already_in_error") {
    auto [npu, device] = makeTestDevice();
    auto prepared = prepare(*device, addModel());
    TestRequest r = addRequest();
    auto failed = createSyncFence();
    REQUIRE(failed.ok());
    failed->second.signal(false);
    auto launched =
        prepared->executeFenced(r.request, {failed->first}, MeasureTiming::NO, {}, {}, {});
    CHECK(launched.status().code == ErrorStatus::INVALID_ARGUMENT);
}

TEST_CASE("driver_fenced_notices_a_later_fence_error_at_once") {
    auto [npu, device] = makeTestDevice();
    auto prepared = prepare(*device, addModel());
    TestRequest r = addRequest();
    auto never = createSyncFence(), failing = createSyncFence();
    REQUIRE(never.ok());
    REQUIRE(failing.ok());
    auto launched = prepared->executeFenced(r.request, {never->first, failing->first},
                                            MeasureTiming::YES, {}, {}, {});
    REQUIRE(launched.ok());
    failing->second.signal(false);
    // The first fence is still active: the error of the second must end the execution anyway.
    CHECK(launched->fence.wait(std::chrono::seconds(5)) == SyncFence::State::ERROR);
    CHECK(never->first.state() == SyncFence::State::ACTIVE);
    const auto info = launched->callback->getExecutionInfo();
    CHECK(info.status.code == ErrorStatus::GENERAL_FAILURE);
    CHECK_FALSE(info.timingFenced.timeOnDevice.has_value());
}

TEST_CASE("driver_fenced_without_timing_reports_none") {
    auto [npu, device] = makeTestDevice();
    auto prepared = prepare(*device, addModel());
    TestRequest r = addRequest();
    auto launched = prepared->executeFenced(r.request, {}, MeasureTiming::NO, {}, {}, {});
    REQUIRE(launched.ok());
    const auto info = launched->callback->getExecutionInfo();
    REQUIRE(info.status.ok());
    checkAddOutput(r);
    for (const Timing& t : {info.timingLaunched, info.timingFenced}) {
        CHECK_FALSE(t.timeOnDevice.has_value());
        CHECK_FALSE(t.timeInDriver.has_value());
    }
}

TEST_CASE("driver_async_work_is_bounded") {
    auto [npu, device] = makeTestDevice();
    auto prepared = prepare(*device, addModel());
    TestRequest r = addRequest();
    // Occupy every worker, then fill the queue to its bound.
    std::promise<void> release;
    std::shared_future<void> released = release.get_future().share();
    size_t accepted = 0;
    while (postWork([released] { released.wait(); }).ok()) ++accepted;
    // (The preparation's own work item may still be finishing.)
    CHECK(accepted >= kMaxPendingWork - 1);
    CHECK(accepted <= kMaxPendingWork);
    CHECK(threadCount() <= kWorkerThreads + 8);

    // A call that cannot be started returns and notifies GENERAL_FAILURE.
    auto callback = std::make_shared<ExecutionCallback>();
    const Status st =
        prepared->executeAsynchronously(r.request, MeasureTiming::NO, {}, {}, callback);
    CHECK(st.code == ErrorStatus::GENERAL_FAILURE);
    CHECK(callback->result().status.code == ErrorStatus::GENERAL_FAILURE);
    auto preparation = std::make_shared<PreparedModelCallback>();
    CHECK(device
              ->prepareModel(addModel(), ExecutionPreference::FAST_SINGLE_ANSWER, kDefaultPriority,
                             {}, {}, {}, {}, preparation)
              .code == ErrorStatus::GENERAL_FAILURE);
    CHECK(preparation->status().code == ErrorStatus::GENERAL_FAILURE);

    release.set_value();
    // The queue drains and takes work again.
    std::shared_ptr<ExecutionCallback> later;
    Status again;
    for (int i = 0; i < 1000; ++i) {
        later = std::make_shared<ExecutionCallback>();
        again = prepared->executeAsynchronously(r.request, MeasureTiming::NO, {}, {}, later);
        if (again.ok()) break;
        std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    REQUIRE(again.ok());
    CHECK_MESSAGE(later->result().status.ok(), later->result().status.message);
    checkAddOutput(r);
}

}  // namespace nncosim::driver::testing

namespace nncosim::driver::testing {

// The fence watcher sleeps while nothing changes: a pending execution waiting for one signaled
// and one active fence must not make it spin (a signaled fence stays readable, so polling it
// again returns at once). Its wakeups over 300 ms of waiting are counted; spinning would be
// thousands.
TEST_CASE("driver_fence_watcher_sleeps_with_a_signaled_fence_pending") {
    auto [npu, device] = makeTestDevice();
    auto prepared = prepare(*device, addModel());
    TestRequest r = addRequest();
    auto done = createSyncFence(), pending = createSyncFence();
    REQUIRE(done.ok());
    REQUIRE(pending.ok());
    done->second.signal(true);
    auto launched = prepared->executeFenced(r.request, {done->first, pending->first},
                                            MeasureTiming::NO, {}, {}, {});
    REQUIRE(launched.ok());
    std::this_thread::sleep_for(std::chrono::milliseconds(20));  // the watcher has seen both
    const uint64_t before = fenceWatcherWakeups();
    std::this_thread::sleep_for(std::chrono::milliseconds(300));
    const uint64_t wakeups = fenceWatcherWakeups() - before;
    CHECK(wakeups <= 2);
    CHECK(launched->fence.state() == SyncFence::State::ACTIVE);
    pending->second.signal(true);
    CHECK(launched->fence.wait(std::chrono::seconds(10)) == SyncFence::State::SIGNALED);
    CHECK(launched->callback->getExecutionInfo().status.ok());
    checkAddOutput(r);
}

}  // namespace nncosim::driver::testing
