// Concurrency: many threads preparing and executing on shared prepared models of different
// priorities at once.
#include <atomic>
#include <future>
#include <thread>

#include "driver/tests/TestUtil.h"

using namespace nncosim;
using namespace nncosim::driver;
using namespace nncosim::driver::testing;

TEST_CASE("driver_concurrency_prepare_and_execute") {
    auto t = makeTestDevice();
    std::vector<SharedPreparedModel> models;
    for (Priority p : {Priority::LOW, Priority::MEDIUM, Priority::HIGH}) {
        auto prepared = prepareModelBlocking(*t.device, addModel(), kDefaultExecutionPreference, p);
        REQUIRE(prepared.ok());
        models.push_back(*prepared);
    }
    std::atomic<int> failures{0}, executions{0};
    std::vector<std::thread> threads;
    for (int i = 0; i < 8; ++i) {
        threads.emplace_back([&, i] {
            // Each thread also prepares its own model while the others execute.
            auto own = prepareModelBlocking(*t.device, i % 2 ? addModel() : convModel());
            if (!own.ok()) ++failures;
            for (int k = 0; k < 25; ++k) {
                auto r = addRequest();
                const auto& model = models[(i + k) % models.size()];
                ExecutionResult result;
                if (k % 3 == 0) {
                    auto callback = std::make_shared<ExecutionCallback>();
                    if (!model
                             ->executeAsynchronously(r.request, MeasureTiming::YES, {}, {},
                                                     callback)
                             .ok())
                        ++failures;
                    result = callback->result();
                } else if (k % 3 == 1) {
                    auto fenced =
                        model->executeFenced(r.request, {}, MeasureTiming::NO, {}, {}, {});
                    if (!fenced.ok() || fenced->fence.wait() != SyncFence::State::SIGNALED)
                        ++failures;
                } else {
                    result = model->execute(r.request, MeasureTiming::NO, {}, {});
                }
                if (!result.ok()) ++failures;
                for (int e = 0; e < 6; ++e) {
                    if (r.output(0)[e] != 11 * (e + 1)) ++failures;
                }
                ++executions;
            }
        });
    }
    for (auto& thread : threads) thread.join();
    CHECK(failures == 0);
    CHECK(executions == 200);
}

TEST_CASE("driver_concurrency_one_burst_or_execution_at_a_time") {
    auto t = makeTestDevice();
    auto prepared = prepare(*t.device, addModel());
    auto r = addRequest();
    auto execution = prepared->createReusableExecution(r.request, MeasureTiming::NO, {});
    REQUIRE(execution.ok());
    auto gate = createSyncFence();
    REQUIRE(gate.ok());
    auto fenced = (*execution)->computeFenced({gate->first}, {}, {});
    REQUIRE(fenced.ok());
    // While the fenced computation waits, the execution object is busy.
    CHECK((*execution)->compute({}).status.code == ErrorStatus::INVALID_ARGUMENT);
    gate->second.signal(true);
    CHECK(fenced->fence.wait(std::chrono::seconds(10)) == SyncFence::State::SIGNALED);
    fenced->callback->getExecutionInfo();
    // Once done, it may compute again.
    for (int attempt = 0; attempt < 100; ++attempt) {
        auto result = (*execution)->compute({});
        if (result.ok()) break;
        std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
    checkAddOutput(r);
}

// A burst runs one execution at a time, and the computations of the reusable executions it
// creates are its executions (IBurst.h): while burst->execute runs, a computation of the burst's
// reusable execution is refused, and while that computation waits for its fence, so are
// burst->execute and the burst's other reusable executions. The prepared model's own reusable
// executions are not the burst's.
TEST_CASE("driver_concurrency_burst_reusable_execution_is_a_burst_execution") {
    auto t = makeHookedDevice();
    auto prepared = prepare(*t.device, addModel());
    auto burst = prepared->configureExecutionBurst();
    REQUIRE(burst.ok());
    auto r = addRequest();
    auto execution = (*burst)->createReusableExecution(r.request, MeasureTiming::NO, {});
    auto other = (*burst)->createReusableExecution(r.request, MeasureTiming::NO, {});
    auto own = prepared->createReusableExecution(r.request, MeasureTiming::NO, {});
    REQUIRE(execution.ok());
    REQUIRE(other.ok());
    REQUIRE(own.ok());

    // burst->execute holds the device (its job waits for a gate, at most 5 s).
    std::promise<void> entered, gate;
    std::shared_future<void> opened = gate.get_future().share();
    std::atomic<bool> first{true};
    t.npu->onWait = [&] {
        if (!first.exchange(false)) return;
        entered.set_value();
        opened.wait_for(std::chrono::seconds(5));
    };
    ExecutionResult running;
    std::thread thread([&] { running = (*burst)->execute(r.request, MeasureTiming::NO, {}, {}); });
    entered.get_future().wait();
    const ExecutionResult refused = (*execution)->compute({});
    CHECK(refused.status.code == ErrorStatus::INVALID_ARGUMENT);
    CHECK((*execution)->computeFenced({}, {}, {}).status().code == ErrorStatus::INVALID_ARGUMENT);
    gate.set_value();
    thread.join();
    REQUIRE_MESSAGE(running.ok(), running.status.message);

    // A fenced computation of the burst's reusable execution holds the burst while it waits.
    auto fenceGate = createSyncFence();
    REQUIRE(fenceGate.ok());
    auto fenced = (*execution)->computeFenced({fenceGate->first}, {}, {});
    REQUIRE(fenced.ok());
    CHECK((*burst)->execute(r.request, MeasureTiming::NO, {}, {}).status.code ==
          ErrorStatus::INVALID_ARGUMENT);
    CHECK((*other)->compute({}).status.code == ErrorStatus::INVALID_ARGUMENT);
    CHECK((*own)->compute({}).ok());  // not the burst's
    fenceGate->second.signal(true);
    CHECK(fenced->fence.wait(std::chrono::seconds(10)) == SyncFence::State::SIGNALED);
    CHECK(fenced->callback->getExecutionInfo().status.ok());
    // Once it has ended, the burst and its executions run again.
    CHECK((*burst)->execute(r.request, MeasureTiming::NO, {}, {}).ok());
    CHECK((*other)->compute({}).ok());
    CHECK((*execution)->compute({}).ok());
    checkAddOutput(r);
}
