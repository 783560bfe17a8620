// VTS-equivalent deadlines: NOW, SHORT and UNLIMITED for preparation and on every execution
// path; a deadline passing while the device runs aborts the job and the device stays usable.
#include <thread>

#include "driver/tests/TestUtil.h"

using namespace nncosim;
using namespace nncosim::driver;
using namespace nncosim::driver::testing;

namespace {

enum class Bound { NOW, SHORT, UNLIMITED };

OptionalTimePoint deadlineOf(Bound bound) {
    switch (bound) {
        case Bound::NOW:
            return Clock::now();
        case Bound::SHORT:
            return Clock::now() + std::chrono::microseconds(100);
        case Bound::UNLIMITED:
            return std::nullopt;
    }
    return std::nullopt;
}

bool missed(ErrorStatus code) {
    return code == ErrorStatus::MISSED_DEADLINE_TRANSIENT ||
           code == ErrorStatus::MISSED_DEADLINE_PERSISTENT;
}

// NOW must miss, UNLIMITED must succeed, SHORT may do either.
void checkOutcome(Bound bound, ErrorStatus code) {
    CAPTURE(static_cast<int>(bound));
    CAPTURE(nameOf(code));
    if (bound == Bound::NOW) CHECK(missed(code));
    if (bound == Bound::UNLIMITED) CHECK(code == ErrorStatus::NONE);
    if (bound == Bound::SHORT) CHECK((code == ErrorStatus::NONE || missed(code)));
}

}  // namespace

TEST_CASE("driver_deadline_prepare") {
    auto t = makeTestDevice();
    for (Bound bound : {Bound::NOW, Bound::SHORT, Bound::UNLIMITED}) {
        auto callback = std::make_shared<PreparedModelCallback>();
        const Status launch =
            t.device->prepareModel(convModel(), kDefaultExecutionPreference, kDefaultPriority,
                                   deadlineOf(bound), {}, {}, {}, callback);
        const Status status = callback->status();
        if (!launch.ok()) CHECK(launch.code == status.code);
        checkOutcome(bound, status.code);
        CHECK((status.ok() == (callback->preparedModel() != nullptr)));
        CHECK(callback->notifications() == 1);
    }
}

TEST_CASE("driver_deadline_execute_all_paths") {
    auto t = makeTestDevice();
    auto prepared = prepare(*t.device, convModel());
    for (Bound bound : {Bound::NOW, Bound::SHORT, Bound::UNLIMITED}) {
        auto r = convRequest();
        checkOutcome(
            bound,
            prepared->execute(r.request, MeasureTiming::NO, deadlineOf(bound), {}).status.code);

        auto callback = std::make_shared<ExecutionCallback>();
        const Status launch = prepared->executeAsynchronously(r.request, MeasureTiming::NO,
                                                              deadlineOf(bound), {}, callback);
        if (!launch.ok()) CHECK(launch.code == callback->result().status.code);
        checkOutcome(bound, callback->result().status.code);

        auto fenced =
            prepared->executeFenced(r.request, {}, MeasureTiming::NO, deadlineOf(bound), {}, {});
        REQUIRE(fenced.ok());
        const auto state = fenced->fence.wait(std::chrono::seconds(30));
        const auto info = fenced->callback->getExecutionInfo();
        checkOutcome(bound, info.status.code);
        CHECK(((state == SyncFence::State::SIGNALED) == info.status.ok()));

        auto burst = prepared->configureExecutionBurst();
        REQUIRE(burst.ok());
        checkOutcome(
            bound,
            (*burst)->execute(r.request, MeasureTiming::NO, deadlineOf(bound), {}).status.code);

        auto execution = prepared->createReusableExecution(r.request, MeasureTiming::NO, {});
        REQUIRE(execution.ok());
        checkOutcome(bound, (*execution)->compute(deadlineOf(bound)).status.code);
    }
}

TEST_CASE("driver_deadline_timeout_after_fence") {
    auto t = makeTestDevice();
    auto prepared = prepare(*t.device, addModel());
    auto r = addRequest();
    // A job that hangs on the device (about 240 ms of wall time until the watchdog) is aborted
    // when the duration after the fences runs out.
    t.npu->hangNextJob();
    auto fenced = prepared->executeFenced(r.request, {}, MeasureTiming::NO, {}, {},
                                          std::chrono::milliseconds(30));
    REQUIRE(fenced.ok());
    CHECK(fenced->fence.wait(std::chrono::seconds(30)) == SyncFence::State::ERROR);
    CHECK(missed(fenced->callback->getExecutionInfo().status.code));
    auto ok = prepared->execute(r.request, MeasureTiming::NO, {}, {});
    REQUIRE_MESSAGE(ok.ok(), ok.status.message);
    checkAddOutput(r);
}
