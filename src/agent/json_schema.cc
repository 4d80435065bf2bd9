// ValidateAgainstSchema: checks tool-call arguments against a tool's parameter schema. Messages
// are written for the model, which must be able to fix its call from them alone.

#include "mend/agent/json_schema.h"

#include <cmath>
#include <mutex>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <unordered_map>

#include "agent/json_schema_internal.h"
#include "mend/base/json.h"
#include "mend/base/utf8.h"

namespace mend::agent {
namespace internal {

bool IsKnownTypeName(std::string_view name) {
  return name == "null" || name == "boolean" || name == "object" || name == "array" ||
         name == "number" || name == "string" || name == "integer";
}

Result<Pattern> CompilePattern(std::string_view pattern) {
  struct Cache {
    std::mutex mu;
    std::unordered_map<std::string, Pattern> patterns;
  };
  static Cache& cache = *new Cache;  // Never destroyed: checks may run during exit.
  const std::string key(pattern);
  {
    std::lock_guard<std::mutex> lock(cache.mu);
    if (auto it = cache.patterns.find(key); it != cache.patterns.end()) return it->second;
  }
  MEND_ASSIGN_OR_RETURN(Pattern compiled, Pattern::Compile(pattern));
  std::lock_guard<std::mutex> lock(cache.mu);
  if (cache.patterns.size() >= kMaxCachedPatterns) cache.patterns.clear();
  cache.patterns.emplace(key, compiled);
  return compiled;
}

}  // namespace internal

namespace {

using nlohmann::json;

// Enumerations and constants can be long; messages quote at most this much of them.
constexpr std::size_t kMaxQuotedBytes = 200;

std::string Quote(const json& v) {
  std::string text = DumpJson(v);
  if (text.size() <= kMaxQuotedBytes) return text;
  return TruncateUtf8Bytes(text, kMaxQuotedBytes) + "...";
}

std::string TypeName(const json& v) {
  switch (v.type()) {
    case json::value_t::null:
      return "null";
    case json::value_t::boolean:
      return "boolean";
    case json::value_t::object:
      return "object";
    case json::value_t::array:
      return "array";
    case json::value_t::string:
      return "string";
    default:
      return "number";
  }
}

bool HasType(const json& v, std::string_view type) {
  if (type == "integer") {
    if (v.is_number_integer()) return true;
    return v.is_number_float() && std::isfinite(v.get<double>()) &&
           std::floor(v.get<double>()) == v.get<double>();
  }
  return TypeName(v) == type;
}

bool IsPlainName(std::string_view name) {
  if (name.empty() || std::isdigit(static_cast<unsigned char>(name[0]))) return false;
  for (char c : name) {
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '_') return false;
  }
  return true;
}

std::string MemberPath(const std::string& path, std::string_view name) {
  if (IsPlainName(name)) return path + "." + std::string(name);
  return path + "[" + Quote(std::string(name)) + "]";
}

Status Fail(const std::string& path, std::string_view what) {
  return InvalidArgumentError(path + ": " + std::string(what));
}

class Validator {
 public:
  Status Check(const json& v, const json& schema, const std::string& path);

 private:
  Status CheckType(const json& v, const json& type, const std::string& path);
  Status CheckEnumConst(const json& v, const json& schema, const std::string& path);
  Status CheckNumber(const json& v, const json& schema, const std::string& path);
  Status CheckString(const json& v, const json& schema, const std::string& path);
  Status CheckArray(const json& v, const json& schema, const std::string& path);
  Status CheckObject(const json& v, const json& schema, const std::string& path);
  Status CheckCombinators(const json& v, const json& schema, const std::string& path);
};

Status Validator::Check(const json& v, const json& schema, const std::string& path) {
  if (schema.is_boolean()) {
    return schema.get<bool>() ? OkStatus() : Fail(path, "no value is allowed here");
  }
  if (auto it = schema.find("type"); it != schema.end()) {
    MEND_RETURN_IF_ERROR(CheckType(v, *it, path));
  }
  MEND_RETURN_IF_ERROR(CheckEnumConst(v, schema, path));
  if (v.is_number()) MEND_RETURN_IF_ERROR(CheckNumber(v, schema, path));
  if (v.is_string()) MEND_RETURN_IF_ERROR(CheckString(v, schema, path));
  if (v.is_array()) MEND_RETURN_IF_ERROR(CheckArray(v, schema, path));
  if (v.is_object()) MEND_RETURN_IF_ERROR(CheckObject(v, schema, path));
  return CheckCombinators(v, schema, path);
}

Status Validator::CheckType(const json& v, const json& type, const std::string& path) {
  if (type.is_string()) {
    const auto& name = type.get_ref<const std::string&>();
    if (HasType(v, name)) return OkStatus();
    return Fail(path, "expected " + name + ", got " + TypeName(v));
  }
  std::string names;
  for (const json& t : type) {
    if (HasType(v, t.get_ref<const std::string&>())) return OkStatus();
    names += (names.empty() ? "" : " or ") + t.get<std::string>();
  }
  return Fail(path, "expected " + names + ", got " + TypeName(v));
}

Status Validator::CheckEnumConst(const json& v, const json& schema, const std::string& path) {
  if (auto it = schema.find("enum"); it != schema.end()) {
    bool found = false;
    for (const json& option : *it) found = found || option == v;
    if (!found) return Fail(path, "must be one of " + Quote(*it));
  }
  if (auto it = schema.find("const"); it != schema.end() && *it != v) {
    return Fail(path, "must equal " + Quote(*it));
  }
  return OkStatus();
}

Status Validator::CheckNumber(const json& v, const json& schema, const std::string& path) {
  const double x = v.get<double>();
  const std::string got = ", got " + DumpJson(v);
  const auto bound = [&](const char* key) -> const json* {
    auto it = schema.find(key);
    return it == schema.end() ? nullptr : &*it;
  };
  const json* ex_min = bound("exclusiveMinimum");
  const json* ex_max = bound("exclusiveMaximum");
  if (const json* min = bound("minimum")) {
    const bool exclusive = ex_min != nullptr && ex_min->is_boolean() && ex_min->get<bool>();
    if (exclusive ? x <= min->get<double>() : x < min->get<double>()) {
      return Fail(path,
                  std::string(exclusive ? "must be > " : "must be >= ") + DumpJson(*min) + got);
    }
  }
  if (const json* max = bound("maximum")) {
    const bool exclusive = ex_max != nullptr && ex_max->is_boolean() && ex_max->get<bool>();
    if (exclusive ? x >= max->get<double>() : x > max->get<double>()) {
      return Fail(path,
                  std::string(exclusive ? "must be < " : "must be <= ") + DumpJson(*max) + got);
    }
  }
  if (ex_min != nullptr && ex_min->is_number() && x <= ex_min->get<double>()) {
    return Fail(path, "must be > " + DumpJson(*ex_min) + got);
  }
  if (ex_max != nullptr && ex_max->is_number() && x >= ex_max->get<double>()) {
    return Fail(path, "must be < " + DumpJson(*ex_max) + got);
  }
  return OkStatus();
}

Status Validator::CheckString(const json& v, const json& schema, const std::string& path) {
  const auto& s = v.get_ref<const std::string&>();
  const std::size_t chars = CountUtf8Chars(s);
  if (auto it = schema.find("minLength"); it != schema.end() && chars < it->get<std::size_t>()) {
    return Fail(path, "must be at least " + DumpJson(*it) + " characters long, got " +
                          std::to_string(chars));
  }
  if (auto it = schema.find("maxLength"); it != schema.end() && chars > it->get<std::size_t>()) {
    return Fail(path, "must be at most " + DumpJson(*it) + " characters long, got " +
                          std::to_string(chars));
  }
  if (auto it = schema.find("pattern"); it != schema.end()) {
    const auto& pattern = it->get_ref<const std::string&>();
    MEND_ASSIGN_OR_RETURN(const Pattern re, internal::CompilePattern(pattern));
    if (!re.Search(s)) return Fail(path, "does not match the pattern " + Quote(*it));
  }
  return OkStatus();
}

Status Validator::CheckArray(const json& v, const json& schema, const std::string& path) {
  const std::string got = ", got " + std::to_string(v.size());
  if (auto it = schema.find("minItems"); it != schema.end() && v.size() < it->get<std::size_t>()) {
    return Fail(path, "must have at least " + DumpJson(*it) + " items" + got);
  }
  if (auto it = schema.find("maxItems"); it != schema.end() && v.size() > it->get<std::size_t>()) {
    return Fail(path, "must have at most " + DumpJson(*it) + " items" + got);
  }
  auto items = schema.find("items");
  if (items == schema.end()) return OkStatus();
  for (std::size_t i = 0; i < v.size(); ++i) {
    const std::string item_path = path + "[" + std::to_string(i) + "]";
    if (!items->is_array()) {
      MEND_RETURN_IF_ERROR(Check(v[i], *items, item_path));
    } else if (i < items->size()) {
      MEND_RETURN_IF_ERROR(Check(v[i], (*items)[i], item_path));
    }
  }
  return OkStatus();
}

Status Validator::CheckObject(const json& v, const json& schema, const std::string& path) {
  if (auto it = schema.find("required"); it != schema.end()) {
    for (const json& name : *it) {
      if (!v.contains(name.get_ref<const std::string&>())) {
        return Fail(path, "missing required property " + Quote(name));
      }
    }
  }
  const auto props = schema.find("properties");
  const auto additional = schema.find("additionalProperties");
  for (const auto& [name, member] : v.items()) {
    const std::string member_path = MemberPath(path, name);
    if (props != schema.end() && props->contains(name)) {
      MEND_RETURN_IF_ERROR(Check(member, (*props)[name], member_path));
    } else if (additional != schema.end()) {
      if (additional->is_boolean() && !additional->get<bool>()) {
        return Fail(path, "unexpected property " + Quote(name));
      }
      MEND_RETURN_IF_ERROR(Check(member, *additional, member_path));
    }
  }
  return OkStatus();
}

Status Validator::CheckCombinators(const json& v, const json& schema, const std::string& path) {
  if (auto it = schema.find("allOf"); it != schema.end()) {
    for (const json& sub : *it) MEND_RETURN_IF_ERROR(Check(v, sub, path));
  }
  if (auto it = schema.find("anyOf"); it != schema.end()) {
    Status first;
    bool matched = false;
    for (const json& sub : *it) {
      Status s = Check(v, sub, path);
      matched = matched || s.ok();
      if (matched) break;
      if (first.ok()) first = s;
    }
    if (!matched) {
      return Fail(path, "matches none of the anyOf alternatives (first: " +
                            std::string(first.message()) + ")");
    }
  }
  if (auto it = schema.find("oneOf"); it != schema.end()) {
    Status first;
    int matches = 0;
    for (const json& sub : *it) {
      Status s = Check(v, sub, path);
      if (s.ok()) ++matches;
      if (!s.ok() && first.ok()) first = s;
    }
    if (matches == 0) {
      return Fail(path, "matches none of the oneOf alternatives (first: " +
                            std::string(first.message()) + ")");
    }
    if (matches > 1) {
      return Fail(path, "matches " + std::to_string(matches) +
                            " of the oneOf alternatives; exactly one is allowed");
    }
  }
  return OkStatus();
}

}  // namespace

Status ValidateAgainstSchema(const json& value, const json& schema) {
  try {
    if (Status s = ValidateJsonSchema(schema); !s.ok()) {
      return InvalidArgumentError("invalid schema: " + std::string(s.message()));
    }
    return Validator().Check(value, schema, "$");
  } catch (const std::exception& e) {
    // Only allocation failures can reach here; the checks use non-throwing accessors.
    return InternalError(std::string("schema validation failed: ") + e.what());
  }
}

}  // namespace mend::agent
