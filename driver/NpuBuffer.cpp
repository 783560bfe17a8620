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
    NN_RETURN_IF_ERROR(mBuffer->validateCopyTo(dst->size()));
    std::memcpy(dst->data(), mBuffer->storage()->data(), mBuffer->size());
    return okStatus();
}

Status NpuBuffer::copyFrom(const SharedMemory& src, const std::vector<uint32_t>& dimensions) const {
    Status st = src ? mBuffer->validateCopyFrom(dimensions, src->size())
                    : invalidArgument("copyFrom: null memory");
    if (!st.ok()) {
        mBuffer->setUninitialized();
        return st;
    }
    std::memcpy(mBuffer->storage()->data(), src->data(), mBuffer->size());
    mBuffer->setInitialized(dimensions.empty() ? mBuffer->operand().dimensions : dimensions);
    return okStatus();
}

}  // namespace nncosim::driver::detail
