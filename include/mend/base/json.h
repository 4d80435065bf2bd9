#pragma once

// ParseJson, DumpJson and typed getters of object members: the adapter between our error-as-value
// code and nlohmann::json, which reports errors by throwing. These functions are the only place
// nlohmann exceptions are caught; none of them throws. Code that needs the full nlohmann API
// includes <nlohmann/json.hpp> in its .cc file. Thread-safe.

#include <cstdint>
#include <nlohmann/json_fwd.hpp>
#include <optional>
#include <string>
#include <string_view>

#include "mend/base/result.h"

namespace mend {

/// The deepest nesting of arrays and objects ParseJson accepts. Deeper documents could exhaust the
/// stack in the recursive parts of nlohmann (dump, copy, comparison).
inline constexpr int kMaxJsonDepth = 256;

/// Parses one JSON document (RFC 8259; no comments, no trailing commas; surrounding white space is
/// allowed). Malformed, truncated or non-JSON text (an HTML error page, say), invalid UTF-8 inside
/// strings and nesting deeper than kMaxJsonDepth all yield kInvalidArgument with the 1-based byte
/// position of the problem in the message ("malformed JSON at byte 7: ...").
Result<nlohmann::json> ParseJson(std::string_view text);

/// Serialises `value` compactly (indent < 0) or pretty-printed with `indent` spaces per level.
/// Invalid UTF-8 in strings is written as U+FFFD instead of failing, so this always produces valid
/// JSON text.
std::string DumpJson(const nlohmann::json& value, int indent = -1);

///@{
/// Typed access to a member of a JSON object. Each returns kInvalidArgument naming `key` when `obj`
/// is not an object, when the key is missing, or when the member has another type (the message
/// names the expected and the actual type). A null member counts as the wrong type here.
///
/// GetInt64 accepts integers only (not 1.0 or 1e3) within the int64 range; GetDouble accepts any
/// number. GetObject and GetArray return a pointer into `obj`, valid while `obj` is unchanged.
Result<std::string> GetString(const nlohmann::json& obj, std::string_view key);
Result<std::int64_t> GetInt64(const nlohmann::json& obj, std::string_view key);
Result<double> GetDouble(const nlohmann::json& obj, std::string_view key);
Result<bool> GetBool(const nlohmann::json& obj, std::string_view key);
Result<const nlohmann::json*> GetObject(const nlohmann::json& obj, std::string_view key);
Result<const nlohmann::json*> GetArray(const nlohmann::json& obj, std::string_view key);
///@}

///@{
/// Like the getters above, but a missing or null member yields std::nullopt instead of an error
/// (as Go's encoding/json leaves a field alone for null). A member of another type is still
/// kInvalidArgument, and so is an `obj` that is not an object.
Result<std::optional<std::string>> GetOptionalString(const nlohmann::json& obj,
                                                     std::string_view key);
Result<std::optional<std::int64_t>> GetOptionalInt64(const nlohmann::json& obj,
                                                     std::string_view key);
Result<std::optional<double>> GetOptionalDouble(const nlohmann::json& obj, std::string_view key);
Result<std::optional<bool>> GetOptionalBool(const nlohmann::json& obj, std::string_view key);
Result<std::optional<const nlohmann::json*>> GetOptionalObject(const nlohmann::json& obj,
                                                               std::string_view key);
Result<std::optional<const nlohmann::json*>> GetOptionalArray(const nlohmann::json& obj,
                                                              std::string_view key);
///@}

}  // namespace mend
