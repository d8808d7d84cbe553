// JSON documents as text. Strings in them come from traces (program and module paths, function
// names, region names), which are bytes, not always UTF-8: a damaged trace or a non-UTF-8 file
// name must not make the serializer throw, so invalid bytes become U+FFFD.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

namespace tasklens::report {

// indent < 0: compact.
inline std::string json_text(const nlohmann::ordered_json& j, int indent = -1) {
  return j.dump(indent, ' ', false, nlohmann::ordered_json::error_handler_t::replace);
}

}  // namespace tasklens::report
