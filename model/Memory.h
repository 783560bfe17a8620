// Shared memory pools: what a driver receives from the NNAPI runtime (memfd + mmap).
#pragma once

#include <sys/mman.h>
#include <cstddef>
#include <cstdint>
#include <memory>

#include "model/Status.h"

namespace nncosim {

/// A mapped region of a file descriptor (memfd by default). The mapping and the descriptor
/// are released with the object; share it through SharedMemory.
class Memory {
  public:
    /// Creates anonymous shared memory of `size` bytes, readable and writable.
    static Result<std::shared_ptr<const Memory>> create(size_t size, const char* name = "nncosim");
    /// Maps `size` bytes of `fd` at `offset` with `prot` (PROT_READ/PROT_WRITE). The fd is
    /// dup'ed, so the caller keeps ownership of its own descriptor.
    static Result<std::shared_ptr<const Memory>> fromFd(int fd, size_t size, int prot,
                                                        size_t offset = 0);
    ~Memory();
    Memory(const Memory&) = delete;
    Memory& operator=(const Memory&) = delete;

    int fd() const { return mFd; }
    size_t size() const { return mSize; }
    int protection() const { return mProt; }
    bool writable() const { return (mProt & PROT_WRITE) != 0; }
    /// Mapped bytes. Writing requires PROT_WRITE; const pools are shared between threads,
    /// so writers must own the region they write (as request outputs do).
    uint8_t* data() const { return mData; }

  private:
    Memory(int fd, size_t size, int prot, uint8_t* data)
        : mFd(fd), mSize(size), mProt(prot), mData(data) {}
    int mFd;
    size_t mSize;
    int mProt;
    uint8_t* mData;
};

using SharedMemory = std::shared_ptr<const Memory>;

}  // namespace nncosim
