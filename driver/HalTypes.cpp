#include "driver/HalTypes.h"

#include <fcntl.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>
#include <cerrno>
#include <chrono>
#include <cstring>

namespace nncosim::driver {
namespace {

// The status byte a signaler writes into its fence.
constexpr char kSignaled = 'S';
constexpr char kError = 'E';

}  // namespace

void UniqueFd::reset(int fd) {
    if (mFd >= 0) ::close(mFd);
    mFd = fd;
}

Result<UniqueFd> dupFd(int fd) {
    if (fd < 0) return invalidArgument("invalid file descriptor ", fd);
    int own = fcntl(fd, F_DUPFD_CLOEXEC, 0);
    if (own < 0)
        return invalidArgument("cannot dup file descriptor ", fd, ": ", std::strerror(errno));
    return UniqueFd(own);
}

Result<SharedHandle> makeSharedHandle(int fd) {
    auto own = dupFd(fd);
    if (!own) return own.status();
    return std::make_shared<const UniqueFd>(std::move(*own));
}

Result<SyncFence> SyncFence::fromFd(int fd) {
    int type = 0;
    socklen_t length = sizeof(type);
    if (getsockopt(fd, SOL_SOCKET, SO_TYPE, &type, &length) != 0 || type != SOCK_STREAM)
        return invalidArgument("file descriptor ", fd, " is not a sync fence");
    auto handle = makeSharedHandle(fd);
    if (!handle) return handle.status();
    return SyncFence(std::move(*handle));
}

SyncFence::State SyncFence::state() const {
    return wait(Duration::zero());
}

SyncFence::State SyncFence::wait(OptionalDuration timeout) const {
    if (empty()) return State::SIGNALED;
    const auto until = timeout ? Clock::now() + *timeout : TimePoint::max();
    for (;;) {
        int ms = -1;
        if (timeout) {
            const auto left =
                std::chrono::duration_cast<std::chrono::milliseconds>(until - Clock::now());
            ms = static_cast<int>(std::max<int64_t>(0, std::min<int64_t>(left.count(), 1 << 30)));
        }
        pollfd p{fd(), POLLIN, 0};
        const int n = ::poll(&p, 1, ms);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) {
            if (n == 0 && timeout && Clock::now() < until) continue;  // rounded down to whole ms
            return n == 0 ? State::ACTIVE : State::ERROR;
        }
        char byte = 0;
        const ssize_t got = ::recv(fd(), &byte, 1, MSG_PEEK | MSG_DONTWAIT);
        if (got < 0 && errno == EINTR) continue;
        // A signaler that vanished without writing (peer closed: 0 bytes) is an error too.
        return got == 1 && byte == kSignaled ? State::SIGNALED : State::ERROR;
    }
}

FenceSignaler& FenceSignaler::operator=(FenceSignaler&& other) noexcept {
    if (this != &other) {
        signal(false);
        mFd = std::move(other.mFd);
    }
    return *this;
}

FenceSignaler::~FenceSignaler() {
    signal(false);
}

void FenceSignaler::signal(bool success) {
    if (!mFd.ok()) return;
    const char byte = success ? kSignaled : kError;
    ssize_t n;
    do {
        n = ::send(mFd.get(), &byte, 1, MSG_NOSIGNAL);
    } while (n < 0 && errno == EINTR);
    mFd.reset();
}

Result<std::pair<SyncFence, FenceSignaler>> createSyncFence() {
    int fds[2];
    if (::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, fds) != 0)
        return fail(ErrorStatus::GENERAL_FAILURE, "socketpair: ", std::strerror(errno));
    ::shutdown(fds[0], SHUT_WR);  // the fence side only reads
    return std::make_pair(SyncFence(std::make_shared<const UniqueFd>(fds[0])),
                          FenceSignaler(UniqueFd(fds[1])));
}

}  // namespace nncosim::driver
