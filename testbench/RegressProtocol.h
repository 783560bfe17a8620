// The line protocol between `nncosim regress` and its worker processes: the parent sends one item
// id per line, the worker answers one JSON result per line (Regress.h toJson). An id is sent as a
// JSON string, so no test name (a newline in it, say) can split one item into two.
#pragma once

#include <optional>
#include <string>

namespace nncosim {

/// The line (newline included) that asks a worker to run item `id`.
std::string encodeItemCommand(const std::string& id);

/// The item id of one command line (without its newline); none when the line is not one.
std::optional<std::string> decodeItemCommand(const std::string& line);

}  // namespace nncosim
