// Every file nncosim writes goes through writeOutputFile: whole or not at all, never through a
// symlink planted at the target, and a failure (full disk, missing folder) is an error that names
// the file instead of a silent loss.
#pragma once

#include <string>
#include <string_view>

#include "model/Status.h"

namespace nncosim {

/// Writes `bytes` to `path`. A regular file (or a new one) is written into a fresh temporary file
/// beside it (created exclusively, so never through a symlink), closed and checked, then renamed
/// over `path`; a symlink at `path` is replaced, not followed. A device or pipe that exists
/// (/dev/stdout, /dev/null) is written in place, every write checked. On failure nothing is left
/// behind and the Status (GENERAL_FAILURE) names `path` and the reason.
Status writeOutputFile(const std::string& path, std::string_view bytes);

/// Checks, before a long run, that `path` can be written: its folder exists or is created, is
/// writable, and `path` is not a folder. Writes nothing at `path` itself.
Status checkOutputPath(const std::string& path);

}  // namespace nncosim
