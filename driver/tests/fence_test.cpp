// Sync fences as real file descriptors: states, waiting, peeking by several holders.
#include <doctest/doctest.h>

#include <poll.h>
#include <unistd.h>
#include <thread>

#include "driver/HalTypes.h"

using namespace nncosim;
using namespace nncosim::driver;

TEST_CASE("driver_fence_signal_states") {
    auto created = createSyncFence();
    REQUIRE(created.ok());
    auto& [fence, signaler] = *created;
    CHECK(fence.fd() >= 0);
    CHECK(fence.state() == SyncFence::State::ACTIVE);
    CHECK(fence.wait(std::chrono::milliseconds(5)) == SyncFence::State::ACTIVE);
    signaler.signal(true);
    CHECK(fence.state() == SyncFence::State::SIGNALED);
    // Peeking never consumes: every holder, and a duplicate of the fd, sees the same state.
    auto copy = SyncFence::fromFd(fence.fd());
    REQUIRE(copy.ok());
    CHECK(copy->state() == SyncFence::State::SIGNALED);
    CHECK(fence.wait() == SyncFence::State::SIGNALED);
    pollfd p{fence.fd(), POLLIN, 0};
    CHECK(poll(&p, 1, 0) == 1);
}

TEST_CASE("driver_fence_error_and_abandoned") {
    auto a = createSyncFence();
    REQUIRE(a.ok());
    a->second.signal(false);
    a->second.signal(true);  // a second signal changes nothing
    CHECK(a->first.state() == SyncFence::State::ERROR);

    auto b = createSyncFence();
    REQUIRE(b.ok());
    SyncFence fence = b->first;
    { FenceSignaler dropped = std::move(b->second); }
    CHECK(fence.state() == SyncFence::State::ERROR);

    CHECK(SyncFence().empty());
    CHECK(SyncFence().state() == SyncFence::State::SIGNALED);
}

TEST_CASE("driver_fence_wait_across_threads") {
    auto created = createSyncFence();
    REQUIRE(created.ok());
    SyncFence fence = created->first;
    std::thread t([s = std::move(created->second)]() mutable {
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
        s.signal(true);
    });
    CHECK(fence.wait(std::chrono::seconds(5)) == SyncFence::State::SIGNALED);
    t.join();
}

TEST_CASE("driver_fence_rejects_non_fence_fds") {
    int fds[2];
    REQUIRE(pipe(fds) == 0);
    CHECK(SyncFence::fromFd(fds[0]).status().code == ErrorStatus::INVALID_ARGUMENT);
    close(fds[0]);
    close(fds[1]);
    CHECK(SyncFence::fromFd(-1).status().code == ErrorStatus::INVALID_ARGUMENT);
}
