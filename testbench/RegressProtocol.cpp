#include "testbench/RegressProtocol.h"

#include <nlohmann/json.hpp>

namespace nncosim {

std::string encodeItemCommand(const std::string& id) {
    // dump() escapes control characters and replaces invalid UTF-8 rather than throwing: the
    // line holds no raw newline whatever the id.
    return nlohmann::json(id).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
}

std::optional<std::string> decodeItemCommand(const std::string& line) {
    const nlohmann::json command = nlohmann::json::parse(line, nullptr, false);
    if (!command.is_string()) return std::nullopt;
    return command.get<std::string>();
}

}  // namespace nncosim
