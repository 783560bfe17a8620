// The device queue: one job at a time, priority first, no starvation, cancellation.
#include <doctest/doctest.h>

#include <atomic>
#include <future>
#include <mutex>
#include <vector>

#include "driver/DeviceQueue.h"

using namespace nncosim;
using namespace nncosim::driver;

TEST_CASE("driver_queue_priority_order") {
    DeviceQueue queue(std::chrono::seconds(10));  // long quantum: pure priority order here
    std::mutex mutex;
    std::vector<int> order;
    std::promise<void> release;
    auto gate = release.get_future().share();
    // Block the worker so the next jobs queue up together.
    std::promise<void> started;
    queue.submit(Priority::LOW, [gate, &started](bool) {
        started.set_value();
        gate.wait();
    });
    started.get_future().wait();
    std::promise<void> done;
    auto record = [&](int id) {
        return [&, id](bool cancelled) {
            CHECK_FALSE(cancelled);
            std::lock_guard<std::mutex> lock(mutex);
            order.push_back(id);
        };
    };
    queue.submit(Priority::LOW, record(1));
    queue.submit(Priority::MEDIUM, record(2));
    queue.submit(Priority::HIGH, record(3));
    queue.submit(Priority::HIGH, record(4));
    queue.submit(Priority::LOW, [&](bool) { done.set_value(); });
    CHECK(queue.pending() == 5);
    release.set_value();
    done.get_future().wait();
    CHECK(order == std::vector<int>{3, 4, 2, 1});
}

TEST_CASE("driver_queue_aging_prevents_starvation") {
    DeviceQueue queue(std::chrono::milliseconds(1));
    std::promise<void> release;
    auto gate = release.get_future().share();
    queue.submit(Priority::LOW, [gate](bool) { gate.wait(); });
    std::atomic<int> sequence{0};
    int lowRan = -1, highRan = -1;
    queue.submit(Priority::LOW, [&](bool) { lowRan = sequence++; });
    std::this_thread::sleep_for(std::chrono::milliseconds(20));  // the LOW job ages past 2 quanta
    std::promise<void> done;
    queue.submit(Priority::HIGH, [&](bool) {
        highRan = sequence++;
        done.set_value();
    });
    release.set_value();
    done.get_future().wait();
    CHECK(lowRan == 0);
    CHECK(highRan == 1);
}

TEST_CASE("driver_queue_serializes_jobs") {
    DeviceQueue queue;
    std::atomic<int> running{0}, maxRunning{0}, count{0};
    std::vector<std::thread> threads;
    for (int t = 0; t < 4; ++t) {
        threads.emplace_back([&, t] {
            for (int i = 0; i < 50; ++i) {
                std::promise<void> done;
                queue.submit(static_cast<Priority>((t + i) % 3), [&](bool) {
                    const int now = ++running;
                    int seen = maxRunning;
                    while (now > seen && !maxRunning.compare_exchange_weak(seen, now)) {
                    }
                    ++count;
                    --running;
                    done.set_value();
                });
                done.get_future().wait();
            }
        });
    }
    for (auto& t : threads) t.join();
    CHECK(count == 200);
    CHECK(maxRunning == 1);
}

TEST_CASE("driver_queue_cancels_pending_jobs_on_destruction") {
    std::atomic<int> cancelled{0}, ran{0};
    std::promise<void> release;
    auto gate = release.get_future().share();
    std::thread releaser;
    {
        DeviceQueue queue;
        queue.submit(Priority::LOW, [gate, &ran](bool) {
            gate.wait();
            ++ran;
        });
        for (int i = 0; i < 3; ++i)
            queue.submit(Priority::LOW, [&](bool c) { c ? ++cancelled : ++ran; });
        releaser = std::thread([&] {
            std::this_thread::sleep_for(std::chrono::milliseconds(20));
            release.set_value();
        });
    }  // the destructor waits for the running job, then cancels the three queued ones
    releaser.join();
    CHECK(ran == 1);
    CHECK(cancelled == 3);
}
