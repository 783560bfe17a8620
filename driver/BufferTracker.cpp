#include "driver/BufferTracker.h"

#include <atomic>

#include "model/Validation.h"

namespace nncosim::driver {

ManagedBuffer::ManagedBuffer(std::set<BufferUse> roles, Operand operand)
    : mRoles(std::move(roles)), mOperand(std::move(operand)), mDimensions(mOperand.dimensions) {}

bool ManagedBuffer::shapeFixed() const {
    return !hasUnknownDimensions(mOperand);
}

Status ManagedBuffer::validateRequest(uint32_t poolIndex, const Request& request,
                                      const void* preparedModel) const {
    std::lock_guard<std::mutex> lock(mMutex);
    bool usedAsInput = false, usedAsOutput = false;
    const auto uses = [poolIndex](const Request::Argument& arg) {
        return arg.lifetime == Request::Argument::LifeTime::POOL &&
               arg.location.poolIndex == poolIndex;
    };
    for (uint32_t i = 0; i < request.inputs.size(); ++i) {
        const auto& arg = request.inputs[i];
        if (!uses(arg)) continue;
        if (mRoles.count({preparedModel, false, i}) == 0)
            return invalidArgument("request input ", i, ": buffer pool ", poolIndex,
                                   " was not allocated for this role");
        if (!mInitialized)
            return fail(ErrorStatus::GENERAL_FAILURE, "request input ", i, ": buffer pool ",
                        poolIndex, " is uninitialized");
        if (auto dims = combineDimensions(mDimensions, arg.dimensions); !dims)
            return invalidArgument("request input ", i, ": ", dims.status().message);
        if (arg.location.offset != 0 || arg.location.length != 0)
            return invalidArgument("request input ", i,
                                   ": a buffer argument must have offset and length 0");
        usedAsInput = true;
    }
    for (uint32_t i = 0; i < request.outputs.size(); ++i) {
        const auto& arg = request.outputs[i];
        if (!uses(arg)) continue;
        if (usedAsInput || usedAsOutput)
            return invalidArgument("request output ", i, ": buffer pool ", poolIndex,
                                   " is also used as another input or output");
        if (mRoles.count({preparedModel, true, i}) == 0)
            return invalidArgument("request output ", i, ": buffer pool ", poolIndex,
                                   " was not allocated for this role");
        if (auto dims = combineDimensions(mOperand.dimensions, arg.dimensions); !dims)
            return invalidArgument("request output ", i, ": ", dims.status().message);
        if (arg.location.offset != 0 || arg.location.length != 0)
            return invalidArgument("request output ", i,
                                   ": a buffer argument must have offset and length 0");
        usedAsOutput = true;
    }
    return okStatus();
}

std::pair<SharedMemory, std::vector<uint32_t>> ManagedBuffer::contents() const {
    std::lock_guard<std::mutex> lock(mMutex);
    return {mStorage, mDimensions};
}

Result<SharedMemory> ManagedBuffer::storageFor(const std::vector<uint32_t>& dimensions) {
    if (auto dims = combineDimensions(mOperand.dimensions, dimensions); !dims)
        return invalidArgument("the shape ", toString(dimensions), " does not fit the buffer's ",
                               toString(mOperand.dimensions), ": ", dims.status().message);
    const uint64_t size = byteSize(mOperand.type, dimensions);
    std::lock_guard<std::mutex> lock(mMutex);
    if (mStorage && mStorage->size() == size) return mStorage;
    if (size == 0 || size > kMaxBufferBytes)
        return fail(ErrorStatus::GENERAL_FAILURE, "a buffer of ", byteSizeText(size),
                    " (the driver's buffers hold 1 byte to ", byteSizeText(kMaxBufferBytes), ")");
    auto storage = Memory::create(size, "nncosim-buffer");
    if (!storage) return storage.status();
    mStorage = std::move(*storage);
    return mStorage;
}

Result<SharedMemory> ManagedBuffer::storageToCopyFrom(const std::vector<uint32_t>& dimensions,
                                                      size_t size) {
    const auto& shape = dimensions.empty() ? mOperand.dimensions : dimensions;
    if (isScalarType(mOperand.type)) {
        if (!dimensions.empty())
            return invalidArgument("copyFrom: dimensions given for a scalar buffer");
    } else {
        Operand probe = mOperand;
        probe.dimensions = shape;
        if (hasUnknownDimensions(probe))
            return invalidArgument("copyFrom: dimensions ", toString(shape),
                                   " are not fully specified");
        if (auto dims = combineDimensions(mOperand.dimensions, shape); !dims)
            return invalidArgument("copyFrom: ", dims.status().message);
    }
    const uint64_t expected = byteSize(mOperand.type, shape);
    if (size != expected)
        return invalidArgument("copyFrom: source of ", size, " bytes for a buffer of shape ",
                               toString(shape), " (", expected, " bytes)");
    return storageFor(shape);
}

Result<SharedMemory> ManagedBuffer::storageToCopyTo(size_t size) const {
    std::lock_guard<std::mutex> lock(mMutex);
    // The destination's size first (INVALID_ARGUMENT, the caller's error), whenever the buffer
    // has a size: a buffer of unknown shape has none until it is first written.
    if (mStorage && size != mStorage->size())
        return invalidArgument("copyTo: destination of ", size, " bytes for a buffer of ",
                               mStorage->size());
    if (!mInitialized || !mStorage)
        return fail(ErrorStatus::GENERAL_FAILURE, "copyTo: the buffer is uninitialized");
    return mStorage;
}

void ManagedBuffer::setInitialized(const std::vector<uint32_t>& dimensions) {
    std::lock_guard<std::mutex> lock(mMutex);
    mInitialized = true;
    if (!dimensions.empty()) mDimensions = dimensions;
}

void ManagedBuffer::setUninitialized() {
    std::lock_guard<std::mutex> lock(mMutex);
    mInitialized = false;
}

bool ManagedBuffer::initialized() const {
    std::lock_guard<std::mutex> lock(mMutex);
    return mInitialized;
}

MemoryDomainToken BufferTracker::add(std::shared_ptr<ManagedBuffer> buffer) {
    static std::atomic<MemoryDomainToken> nextToken{1};  // process-wide: 0 is never a token
    MemoryDomainToken token = nextToken++;
    if (token == 0) token = nextToken++;
    std::lock_guard<std::mutex> lock(mMutex);
    mBuffers[token] = std::move(buffer);
    return token;
}

void BufferTracker::remove(MemoryDomainToken token) {
    std::lock_guard<std::mutex> lock(mMutex);
    mBuffers.erase(token);
}

std::shared_ptr<ManagedBuffer> BufferTracker::get(MemoryDomainToken token) const {
    std::lock_guard<std::mutex> lock(mMutex);
    auto it = mBuffers.find(token);
    return it == mBuffers.end() ? nullptr : it->second;
}

}  // namespace nncosim::driver
