#include "driver/NpuBuffer.h"

#include <cstring>

#include "driver/BufferTracker.h"
#include "driver/DeviceCore.h"

namespace nncosim::driver::detail {

NpuBuffer::NpuBuffer(std::shared_ptr<DeviceCore> core, std::shared_ptr<ManagedBuffer> buffer,
                     MemoryDomainToken token)
    : mCore(std::move(core)), mBuffer(std::move(buffer)), mToken(token) {}

NpuBuffer::~NpuBuffer() {
    mCore->buffers.remove(mToken);
}

Status NpuBuffer::copyTo(const SharedMemory& dst) const {
    if (!dst) return invalidArgument("copyTo: null memory");
    if (!dst->writable()) return invalidArgument("copyTo: the destination is not writable");
    auto storage = mBuffer->storageToCopyTo(dst->size());
    if (!storage) return storage.status();
    std::memcpy(dst->data(), (*storage)->data(), (*storage)->size());
    return okStatus();
}

Status NpuBuffer::copyFrom(const SharedMemory& src, const std::vector<uint32_t>& dimensions) const {
    auto storage = src ? mBuffer->storageToCopyFrom(dimensions, src->size())
                       : Result<SharedMemory>(invalidArgument("copyFrom: null memory"));
    if (!storage) {
        mBuffer->setUninitialized();
        return storage.status();
    }
    std::memcpy((*storage)->data(), src->data(), (*storage)->size());
    mBuffer->setInitialized(dimensions.empty() ? mBuffer->operand().dimensions : dimensions);
    return okStatus();
}

}  // namespace nncosim::driver::detail
