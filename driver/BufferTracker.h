// Driver-managed buffers (IDevice::allocate) and the per-device table that maps request
// tokens to them.
#pragma once

#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <tuple>
#include <utility>
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

/// The largest buffer IDevice::allocate, copyFrom or an execution creates.
inline constexpr uint64_t kMaxBufferBytes = uint64_t{1} << 31;

/// The content and state of a driver-managed buffer. Thread-safe.
///
/// A buffer whose allocated shape is not fully specified has no storage until its shape is
/// known: a copyFrom with dimensions, or an execution writing it as an output, allocates storage
/// for that shape (storageFor), and a later write of another size replaces it. Holders of the
/// previous storage keep it alive, so an execution never sees it change under it.
class ManagedBuffer {
  public:
    ManagedBuffer(std::set<BufferUse> roles, Operand operand);

    /// The roles' combined operand; its dimensions as allocated.
    const Operand& operand() const { return mOperand; }
    /// Whether the allocated shape is fully specified (so the storage never changes).
    bool shapeFixed() const;

    /// Checks how request pool `poolIndex` (this buffer's token) is used by a request of
    /// `preparedModel`: only in allocated roles, as at most one output and then nowhere else,
    /// initialized when read (GENERAL_FAILURE otherwise), with compatible dimensions.
    Status validateRequest(uint32_t poolIndex, const Request& request,
                           const void* preparedModel) const;

    /// The storage and shape of the content (null storage before the shape is first known).
    std::pair<SharedMemory, std::vector<uint32_t>> contents() const;
    /// Storage of exactly the byte size of `dimensions` (fully specified, compatible with the
    /// allocated shape) to write the buffer with that shape: the current one when its size
    /// matches, else a new one that becomes the buffer's. GENERAL_FAILURE for a size of 0 or
    /// above kMaxBufferBytes or when the memory cannot be created; INVALID_ARGUMENT for
    /// dimensions the allocation contradicts.
    Result<SharedMemory> storageFor(const std::vector<uint32_t>& dimensions);
    /// What copyFrom writes: the storage for `dimensions` (empty: the allocated shape) after
    /// checking them and the source's `size` (INVALID_ARGUMENT).
    Result<SharedMemory> storageToCopyFrom(const std::vector<uint32_t>& dimensions, size_t size);
    /// What copyTo reads: INVALID_ARGUMENT when `size` differs from the storage's (checked
    /// first, whenever there is storage), GENERAL_FAILURE when uninitialized.
    Result<SharedMemory> storageToCopyTo(size_t size) const;

    /// Records a successful write with the given shape.
    void setInitialized(const std::vector<uint32_t>& dimensions);
    void setUninitialized();
    bool initialized() const;

  private:
    const std::set<BufferUse> mRoles;
    const Operand mOperand;  // combined operand of the roles; dimensions as allocated
    mutable std::mutex mMutex;
    SharedMemory mStorage;  // null until the shape is known
    bool mInitialized = false;
    std::vector<uint32_t> mDimensions;  // the content's shape: that of the last successful write
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
