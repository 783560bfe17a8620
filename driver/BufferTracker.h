// Driver-managed buffers (IDevice::allocate) and the per-device table that maps request
// tokens to them.
#pragma once

#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <tuple>
#include <vector>

#include "model/Model.h"
#include "model/Status.h"

namespace nncosim::driver {

/// One role of a buffer: an input or output of one prepared model (identified by address).
struct BufferUse {
    const void* preparedModel;
    bool isOutput;
    uint32_t ioIndex;
    bool operator<(const BufferUse& o) const {
        return std::tie(preparedModel, isOutput, ioIndex) <
               std::tie(o.preparedModel, o.isOutput, o.ioIndex);
    }
};

/// The content and state of a driver-managed buffer. Thread-safe.
class ManagedBuffer {
  public:
    ManagedBuffer(SharedMemory storage, std::set<BufferUse> roles, Operand operand);

    const Operand& operand() const { return mOperand; }
    const SharedMemory& storage() const { return mStorage; }
    size_t size() const { return mStorage->size(); }

    /// Checks how request pool `poolIndex` (this buffer's token) is used by a request of
    /// `preparedModel`: only in allocated roles, as at most one output and then nowhere else,
    /// initialized when read (GENERAL_FAILURE otherwise), with compatible dimensions.
    Status validateRequest(uint32_t poolIndex, const Request& request,
                           const void* preparedModel) const;
    Status validateCopyFrom(const std::vector<uint32_t>& dimensions, size_t size) const;
    Status validateCopyTo(size_t size) const;

    /// Current shape: the dimensions of the last successful write.
    std::vector<uint32_t> dimensions() const;
    /// Records a successful write with the given shape.
    void setInitialized(const std::vector<uint32_t>& dimensions);
    void setUninitialized();
    bool initialized() const;

  private:
    const SharedMemory mStorage;
    const std::set<BufferUse> mRoles;
    const Operand mOperand;  // combined operand of the roles; dimensions as allocated
    mutable std::mutex mMutex;
    bool mInitialized = false;
    std::vector<uint32_t> mDimensions;
};

/// The buffers of one device by token. Tokens are unique across every device of the process,
/// so a token is never valid on a device that did not issue it.
class BufferTracker {
  public:
    MemoryDomainToken add(std::shared_ptr<ManagedBuffer> buffer);
    void remove(MemoryDomainToken token);
    /// The buffer of `token`, or null when this device did not issue it or it was freed.
    std::shared_ptr<ManagedBuffer> get(MemoryDomainToken token) const;

  private:
    mutable std::mutex mMutex;
    std::map<MemoryDomainToken, std::shared_ptr<ManagedBuffer>> mBuffers;
};

}  // namespace nncosim::driver
