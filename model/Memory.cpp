#include "model/Memory.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#include <cerrno>
#include <cstring>

namespace nncosim {

Result<SharedMemory> Memory::create(size_t size, const char* name) {
    if (size == 0) return invalidArgument("Memory::create: size must be positive");
    int fd = memfd_create(name, MFD_CLOEXEC);
    if (fd < 0) return fail(ErrorStatus::GENERAL_FAILURE, "memfd_create: ", std::strerror(errno));
    if (ftruncate(fd, static_cast<off_t>(size)) != 0) {
        int err = errno;
        close(fd);
        return fail(ErrorStatus::RESOURCE_EXHAUSTED_PERSISTENT, "ftruncate(", size,
                    "): ", std::strerror(err));
    }
    auto mem = fromFd(fd, size, PROT_READ | PROT_WRITE);
    close(fd);  // fromFd keeps its own duplicate
    return mem;
}

Result<SharedMemory> Memory::fromFd(int fd, size_t size, int prot, size_t offset) {
    if (fd < 0) return invalidArgument("Memory::fromFd: invalid file descriptor ", fd);
    if (size == 0) return invalidArgument("Memory::fromFd: size must be positive");
    if ((prot & ~(PROT_READ | PROT_WRITE)) != 0 || prot == 0)
        return invalidArgument("Memory::fromFd: protection must be PROT_READ and/or PROT_WRITE");
    if (offset % static_cast<size_t>(sysconf(_SC_PAGESIZE)) != 0)
        return invalidArgument("Memory::fromFd: offset ", offset, " is not page aligned");
    int own = fcntl(fd, F_DUPFD_CLOEXEC, 0);
    if (own < 0)
        return invalidArgument("Memory::fromFd: cannot dup fd ", fd, ": ", std::strerror(errno));
    struct stat st {};
    if (fstat(own, &st) == 0 && S_ISREG(st.st_mode) &&
        static_cast<uint64_t>(st.st_size) < offset + size) {
        close(own);
        return invalidArgument("Memory::fromFd: file of ", st.st_size,
                               " bytes is smaller than offset ", offset, " + size ", size);
    }
    void* data = mmap(nullptr, size, prot, MAP_SHARED, own, static_cast<off_t>(offset));
    if (data == MAP_FAILED) {
        int err = errno;
        close(own);
        return invalidArgument("Memory::fromFd: mmap failed: ", std::strerror(err));
    }
    return SharedMemory(new Memory(own, size, prot, static_cast<uint8_t*>(data)));
}

Memory::~Memory() {
    munmap(mData, mSize);
    close(mFd);
}

}  // namespace nncosim
