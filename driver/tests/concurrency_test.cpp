// Concurrency: many threads preparing and executing on shared prepared models of different
// priorities at once.
#include <atomic>
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
