#include "model/OutputFile.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>

namespace nncosim {
namespace {

bool writeAll(int fd, std::string_view bytes) {
    for (size_t written = 0; written < bytes.size();) {
        const ssize_t n = ::write(fd, bytes.data() + written, bytes.size() - written);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) {
            if (n == 0) errno = EIO;
            return false;
        }
        written += static_cast<size_t>(n);
    }
    return true;
}

Status cannotWrite(const std::string& path, int error) {
    return fail(ErrorStatus::GENERAL_FAILURE, path, ": cannot write file: ", std::strerror(error));
}

/// An existing device, pipe or socket: written where it is.
Status writeInPlace(const std::string& path, std::string_view bytes) {
    const int fd = ::open(path.c_str(), O_WRONLY | O_CLOEXEC | O_NOCTTY);
    if (fd < 0) return cannotWrite(path, errno);
    const bool written = writeAll(fd, bytes);
    const int error = errno;
    if (::close(fd) != 0 && written) return cannotWrite(path, errno);
    return written ? okStatus() : cannotWrite(path, error);
}

}  // namespace

Status writeOutputFile(const std::string& path, std::string_view bytes) {
    if (path.empty()) return fail(ErrorStatus::GENERAL_FAILURE, "an output file needs a name");
    struct stat existing {};
    if (::lstat(path.c_str(), &existing) == 0) {
        if (S_ISDIR(existing.st_mode))
            return fail(ErrorStatus::GENERAL_FAILURE, path, ": cannot write file: is a folder");
        if (!S_ISREG(existing.st_mode) && !S_ISLNK(existing.st_mode))
            return writeInPlace(path, bytes);
    }
    const std::filesystem::path target(path);
    std::string temporary =
        (target.parent_path() / ("." + target.filename().string() + ".tmp-XXXXXX")).string();
    const int fd = ::mkostemp(temporary.data(), O_CLOEXEC);
    if (fd < 0) return cannotWrite(path, errno);
    bool ok = ::fchmod(fd, 0644) == 0 && writeAll(fd, bytes);
    int error = errno;
    if (::close(fd) != 0 && ok) {
        ok = false;
        error = errno;
    }
    if (ok && ::rename(temporary.c_str(), path.c_str()) != 0) {
        ok = false;
        error = errno;
    }
    if (!ok) {
        ::unlink(temporary.c_str());
        return cannotWrite(path, error);
    }
    return okStatus();
}

Status checkOutputPath(const std::string& path) {
    namespace fs = std::filesystem;
    if (path.empty()) return fail(ErrorStatus::GENERAL_FAILURE, "an output file needs a name");
    std::error_code ec;
    if (fs::is_directory(path, ec))
        return fail(ErrorStatus::GENERAL_FAILURE, path, ": cannot write file: is a folder");
    ec.clear();
    const fs::path folder = fs::path(path).parent_path();
    if (!folder.empty()) fs::create_directories(folder, ec);
    if (ec)
        return fail(ErrorStatus::GENERAL_FAILURE, path,
                    ": cannot create its folder: ", ec.message());
    std::string probe =
        ((folder.empty() ? fs::path(".") : folder) / ".nncosim-probe-XXXXXX").string();
    const int fd = ::mkostemp(probe.data(), O_CLOEXEC);
    if (fd < 0) return cannotWrite(path, errno);
    ::close(fd);
    ::unlink(probe.c_str());
    return okStatus();
}

}  // namespace nncosim
