#include "mend/base/json.h"

#include <cstddef>
#include <limits>
#include <nlohmann/json.hpp>
#include <utility>

#include "mend/base/utf8.h"

namespace mend {
namespace {

using nlohmann::json;

// The 1-based position of the first bracket that opens level max_depth + 1, or npos. Brackets
// inside string literals do not count. nlohmann's parser is iterative, but dump, copy and
// comparison recurse, so a hostile document must be refused before a tree is built.
std::size_t FindExcessiveNesting(std::string_view text, int max_depth) {
  int depth = 0;
  bool in_string = false;
  bool escaped = false;
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (in_string) {
      if (escaped) {
        escaped = false;
      } else if (c == '\\') {
        escaped = true;
      } else if (c == '"') {
        in_string = false;
      }
    } else if (c == '"') {
      in_string = true;
    } else if (c == '[' || c == '{') {
      if (++depth > max_depth) return i + 1;
    } else if (c == ']' || c == '}') {
      --depth;
    }
  }
  return std::string_view::npos;
}

std::string Quoted(std::string_view key) { return "\"" + std::string(key) + "\""; }

Status WrongType(std::string_view key, std::string_view expected, const json& member) {
  return InvalidArgumentError("JSON key " + Quoted(key) + ": expected " + std::string(expected) +
                              ", got " + member.type_name());
}

// The member `key` of `obj`; nullptr when it is absent.
Result<const json*> FindMember(const json& obj, std::string_view key) {
  if (!obj.is_object()) {
    return InvalidArgumentError("cannot read JSON key " + Quoted(key) +
                                ": expected an object, got " + obj.type_name());
  }
  const auto it = obj.find(std::string(key));
  if (it == obj.end()) return static_cast<const json*>(nullptr);
  return &*it;
}

template <typename T, typename Extract>
Result<std::optional<T>> GetOptionalAs(const json& obj, std::string_view key,
                                       std::string_view expected, Extract extract) {
  MEND_ASSIGN_OR_RETURN(const json* member, FindMember(obj, key));
  if (member == nullptr || member->is_null()) return std::optional<T>();
  std::optional<T> value = extract(*member);
  if (!value.has_value()) return WrongType(key, expected, *member);
  return value;
}

template <typename T, typename Extract>
Result<T> GetAs(const json& obj, std::string_view key, std::string_view expected, Extract extract) {
  MEND_ASSIGN_OR_RETURN(const json* member, FindMember(obj, key));
  if (member == nullptr) return InvalidArgumentError("missing JSON key " + Quoted(key));
  std::optional<T> value = extract(*member);
  if (!value.has_value()) return WrongType(key, expected, *member);
  return *std::move(value);
}

std::optional<std::string> ExtractString(const json& j) {
  if (!j.is_string()) return std::nullopt;
  return j.get_ref<const std::string&>();
}

std::optional<std::int64_t> ExtractInt64(const json& j) {
  if (j.is_number_unsigned()) {
    const auto u = j.get<std::uint64_t>();
    if (u > static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max())) {
      return std::nullopt;
    }
    return static_cast<std::int64_t>(u);
  }
  if (j.is_number_integer()) return j.get<std::int64_t>();
  return std::nullopt;
}

std::optional<double> ExtractDouble(const json& j) {
  if (!j.is_number()) return std::nullopt;
  return j.get<double>();
}

std::optional<bool> ExtractBool(const json& j) {
  if (!j.is_boolean()) return std::nullopt;
  return j.get<bool>();
}

std::optional<const json*> ExtractObject(const json& j) {
  if (!j.is_object()) return std::nullopt;
  return &j;
}

std::optional<const json*> ExtractArray(const json& j) {
  if (!j.is_array()) return std::nullopt;
  return &j;
}

constexpr std::string_view kInt64 = "integer in the int64 range";

}  // namespace

Result<json> ParseJson(std::string_view text) {
  if (const std::size_t at = FindExcessiveNesting(text, kMaxJsonDepth);
      at != std::string_view::npos) {
    return InvalidArgumentError("malformed JSON at byte " + std::to_string(at) +
                                ": nesting deeper than " + std::to_string(kMaxJsonDepth));
  }
  try {
    return json::parse(text);
  } catch (const json::parse_error& e) {
    // nlohmann quotes the bytes it read last as they are; they may be invalid UTF-8 (found by
    // fuzz/tool_args_fuzz), and messages end up in JSON, tool results and logs.
    return InvalidArgumentError("malformed JSON at byte " + std::to_string(e.byte) + ": " +
                                SanitizeUtf8(e.what()));
  } catch (const json::exception& e) {
    // Numbers too large for a double are reported as out_of_range rather than parse_error.
    return InvalidArgumentError("malformed JSON: " + SanitizeUtf8(e.what()));
  }
}

std::string DumpJson(const json& value, int indent) {
  try {
    return value.dump(indent < 0 ? -1 : indent, ' ', /*ensure_ascii=*/false,
                      json::error_handler_t::replace);
  } catch (const json::exception&) {
    // dump throws only for invalid UTF-8 under the strict handler, which the replace handler
    // rules out; this keeps the no-throw promise even if a future version adds another case.
    return "null";
  }
}

Result<std::string> GetString(const json& obj, std::string_view key) {
  return GetAs<std::string>(obj, key, "string", ExtractString);
}
Result<std::int64_t> GetInt64(const json& obj, std::string_view key) {
  return GetAs<std::int64_t>(obj, key, kInt64, ExtractInt64);
}
Result<double> GetDouble(const json& obj, std::string_view key) {
  return GetAs<double>(obj, key, "number", ExtractDouble);
}
Result<bool> GetBool(const json& obj, std::string_view key) {
  return GetAs<bool>(obj, key, "boolean", ExtractBool);
}
Result<const json*> GetObject(const json& obj, std::string_view key) {
  return GetAs<const json*>(obj, key, "object", ExtractObject);
}
Result<const json*> GetArray(const json& obj, std::string_view key) {
  return GetAs<const json*>(obj, key, "array", ExtractArray);
}

Result<std::optional<std::string>> GetOptionalString(const json& obj, std::string_view key) {
  return GetOptionalAs<std::string>(obj, key, "string", ExtractString);
}
Result<std::optional<std::int64_t>> GetOptionalInt64(const json& obj, std::string_view key) {
  return GetOptionalAs<std::int64_t>(obj, key, kInt64, ExtractInt64);
}
Result<std::optional<double>> GetOptionalDouble(const json& obj, std::string_view key) {
  return GetOptionalAs<double>(obj, key, "number", ExtractDouble);
}
Result<std::optional<bool>> GetOptionalBool(const json& obj, std::string_view key) {
  return GetOptionalAs<bool>(obj, key, "boolean", ExtractBool);
}
Result<std::optional<const json*>> GetOptionalObject(const json& obj, std::string_view key) {
  return GetOptionalAs<const json*>(obj, key, "object", ExtractObject);
}
Result<std::optional<const json*>> GetOptionalArray(const json& obj, std::string_view key) {
  return GetOptionalAs<const json*>(obj, key, "array", ExtractArray);
}

}  // namespace mend
