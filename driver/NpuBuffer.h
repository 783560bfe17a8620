// Internal to the driver (not part of its API, whose headers are IDevice.h & co. and
// NpuDevice.h): IBuffer on the NPU — a driver-managed buffer (IDevice::allocate), registered in
// its device's buffer table for as long as it lives.
#pragma once

#include <memory>
#include <vector>

#include "driver/IBuffer.h"

namespace nncosim::driver {
class ManagedBuffer;
}

namespace nncosim::driver::detail {

class DeviceCore;

class NpuBuffer : public IBuffer {
  public:
    NpuBuffer(std::shared_ptr<DeviceCore> core, std::shared_ptr<ManagedBuffer> buffer,
              MemoryDomainToken token);
    ~NpuBuffer() override;

    MemoryDomainToken getToken() const override { return mToken; }

    Status copyTo(const SharedMemory& dst) const override;

    Status copyFrom(const SharedMemory& src,
                    const std::vector<uint32_t>& dimensions) const override;

  private:
    const std::shared_ptr<DeviceCore> mCore;
    const std::shared_ptr<ManagedBuffer> mBuffer;
    const MemoryDomainToken mToken;
};

}  // namespace nncosim::driver::detail
