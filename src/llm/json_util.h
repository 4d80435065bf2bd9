#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>

#include "mend/base/result.h"
#include "mend/base/utf8.h"

namespace mend::llm {

// Non-throwing access to JSON that came from the network or a file: every lookup tolerates a
// missing key or a value of the wrong type. nlohmann-json is only called through these helpers
// (and the providers' top-level guard), so no exception escapes.
using Json = nlohmann::json;

// Parses `text`; invalid UTF-8 is replaced by U+FFFD first so that a stray byte in model output
// does not lose the whole answer. kInvalidArgument with the parser's position when not JSON.
Result<Json> ParseJson(std::string_view text);

// Serialises, replacing invalid UTF-8 in strings instead of throwing.
std::string DumpJson(const Json& j);

// The member `key` of an object, or nullptr when `j` is not an object or lacks it.
const Json* Member(const Json& j, std::string_view key);
std::optional<std::string> StringMember(const Json& j, std::string_view key);
std::optional<int64_t> IntMember(const Json& j, std::string_view key);
// A count a server reports (tokens): IntMember when it is not negative, else absent, so a bad
// usage block can never make a cost negative.
std::optional<int64_t> CountMember(const Json& j, std::string_view key);
std::optional<double> NumberMember(const Json& j, std::string_view key);

// mend::SanitizeUtf8(s) cut to at most `max_bytes` bytes on a character boundary, "..." appended
// when cut; control characters other than tab become spaces so messages stay on one line.
std::string ForMessage(std::string_view s, size_t max_bytes);

}  // namespace mend::llm
