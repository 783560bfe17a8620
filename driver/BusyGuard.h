// Internal to the driver (not part of its API, whose headers are IDevice.h & co. and
// NpuDevice.h): the guard that lets one computation at a time run on a reusable execution or a
// burst.
#pragma once

#include <atomic>

namespace nncosim::driver::detail {

// Marks an object busy for the duration of one computation.
class BusyGuard {
  public:
    explicit BusyGuard(std::atomic<bool>& busy) : mBusy(busy), mAcquired(!busy.exchange(true)) {}
    ~BusyGuard() {
        if (mAcquired) mBusy = false;
    }
    bool acquired() const { return mAcquired; }

  private:
    std::atomic<bool>& mBusy;
    bool mAcquired;
};

}  // namespace nncosim::driver::detail
