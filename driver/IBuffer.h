// A driver-managed device buffer (canonical IBuffer; HAL 1.3 IBuffer.hal).
#pragma once

#include <vector>

#include "driver/HalTypes.h"

namespace nncosim::driver {

/// Memory the driver manages for the roles given to IDevice::allocate. Requests use it as a
/// memory pool by its token. Implementations must be thread-safe.
///
/// A buffer starts uninitialized. It becomes initialized after a successful copyFrom or after
/// a successful execution that wrote it as an output; a failed copyFrom or a failed execution
/// that had it as an output makes it uninitialized again. An uninitialized buffer may only be
/// used as an output.
class IBuffer {
  public:
    virtual ~IBuffer() = default;

    /// The token requests must use to refer to this buffer. Never 0; valid only on the device
    /// that allocated the buffer, and only while the buffer exists.
    virtual MemoryDomainToken getToken() const = 0;

    /// Copies the buffer's content to `dst`.
    /// Must fail with INVALID_ARGUMENT when `dst` is null or its size differs from the buffer's
    /// byte size, and with GENERAL_FAILURE when the buffer is uninitialized. The size is checked
    /// first: a destination of the wrong size is INVALID_ARGUMENT even when the buffer is also
    /// uninitialized (unless its shape is still unknown, so that it has no size yet).
    virtual Status copyTo(const SharedMemory& dst) const = 0;

    /// Sets the buffer's content from `src`, with `dimensions` as its new shape.
    /// `dimensions` may be empty only when the allocated dimensions are fully specified; when
    /// given, they must be fully specified and agree with every dimension the allocation
    /// specified. The size of `src` must equal the byte size of the resulting shape. Any
    /// violation must fail with INVALID_ARGUMENT and leave the buffer uninitialized.
    virtual Status copyFrom(const SharedMemory& src,
                            const std::vector<uint32_t>& dimensions) const = 0;
};

}  // namespace nncosim::driver
