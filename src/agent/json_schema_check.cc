// ValidateJsonSchema: checks the shape of a schema before it is used to validate arguments.

#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

#include "agent/json_schema_internal.h"
#include "mend/agent/json_schema.h"
#include "mend/base/json.h"

namespace mend::agent {
namespace {

using nlohmann::json;

Status SchemaError(const std::string& where, std::string_view what) {
  return InvalidArgumentError(where + ": " + std::string(what));
}

Status CheckSchema(const json& schema, const std::string& where, int depth);

Status CheckType(const json& type, const std::string& where) {
  if (type.is_string()) {
    if (!internal::IsKnownTypeName(type.get_ref<const std::string&>())) {
      return SchemaError(where, "unknown type " + DumpJson(type));
    }
    return OkStatus();
  }
  if (!type.is_array() || type.empty()) {
    return SchemaError(where, "must be a type name or a non-empty array of type names");
  }
  for (const json& t : type) MEND_RETURN_IF_ERROR(CheckType(t, where));
  return OkStatus();
}

Status CheckSchemaArray(const json& list, const std::string& where, int depth) {
  if (!list.is_array() || list.empty()) return SchemaError(where, "must be a non-empty array");
  for (std::size_t i = 0; i < list.size(); ++i) {
    MEND_RETURN_IF_ERROR(CheckSchema(list[i], where + "[" + std::to_string(i) + "]", depth + 1));
  }
  return OkStatus();
}

Status CheckNonNegativeInteger(const json& v, const std::string& where) {
  if (!v.is_number_unsigned() && !(v.is_number_integer() && v.get<std::int64_t>() >= 0)) {
    return SchemaError(where, "must be a non-negative integer");
  }
  return OkStatus();
}

Status CheckObjectKeywords(const json& schema, const std::string& where, int depth) {
  if (auto it = schema.find("properties"); it != schema.end()) {
    if (!it->is_object()) return SchemaError(where + ".properties", "must be an object");
    for (const auto& [name, sub] : it->items()) {
      MEND_RETURN_IF_ERROR(CheckSchema(sub, where + ".properties." + name, depth + 1));
    }
  }
  if (auto it = schema.find("required"); it != schema.end()) {
    if (!it->is_array()) return SchemaError(where + ".required", "must be an array of strings");
    for (const json& name : *it) {
      if (!name.is_string()) return SchemaError(where + ".required", "must be an array of strings");
    }
  }
  if (auto it = schema.find("additionalProperties"); it != schema.end()) {
    MEND_RETURN_IF_ERROR(CheckSchema(*it, where + ".additionalProperties", depth + 1));
  }
  if (auto it = schema.find("items"); it != schema.end()) {
    if (it->is_array()) return CheckSchemaArray(*it, where + ".items", depth);
    MEND_RETURN_IF_ERROR(CheckSchema(*it, where + ".items", depth + 1));
  }
  return OkStatus();
}

Status CheckValueKeywords(const json& schema, const std::string& where) {
  if (auto it = schema.find("type"); it != schema.end()) {
    MEND_RETURN_IF_ERROR(CheckType(*it, where + ".type"));
  }
  if (auto it = schema.find("enum"); it != schema.end() && !it->is_array()) {
    return SchemaError(where + ".enum", "must be an array");
  }
  for (const char* key : {"minimum", "maximum"}) {
    if (auto it = schema.find(key); it != schema.end() && !it->is_number()) {
      return SchemaError(where + "." + key, "must be a number");
    }
  }
  for (const char* key : {"exclusiveMinimum", "exclusiveMaximum"}) {
    if (auto it = schema.find(key); it != schema.end() && !it->is_number() && !it->is_boolean()) {
      return SchemaError(where + "." + key, "must be a number or a boolean");
    }
  }
  for (const char* key : {"minLength", "maxLength", "minItems", "maxItems"}) {
    if (auto it = schema.find(key); it != schema.end()) {
      MEND_RETURN_IF_ERROR(CheckNonNegativeInteger(*it, where + "." + key));
    }
  }
  if (auto it = schema.find("pattern"); it != schema.end()) {
    if (!it->is_string()) return SchemaError(where + ".pattern", "must be a string");
    MEND_RETURN_IF_ERROR(internal::CompilePattern(it->get_ref<const std::string&>()).status());
  }
  return OkStatus();
}

Status CheckSchema(const json& schema, const std::string& where, int depth) {
  if (schema.is_boolean()) return OkStatus();
  if (!schema.is_object()) return SchemaError(where, "a schema must be an object or a boolean");
  if (depth > kMaxJsonDepth) return SchemaError(where, "schema nests too deeply");
  if (schema.contains("$ref")) return SchemaError(where + ".$ref", "$ref is not supported");
  MEND_RETURN_IF_ERROR(CheckValueKeywords(schema, where));
  MEND_RETURN_IF_ERROR(CheckObjectKeywords(schema, where, depth));
  for (const char* key : {"anyOf", "oneOf", "allOf"}) {
    if (auto it = schema.find(key); it != schema.end()) {
      MEND_RETURN_IF_ERROR(CheckSchemaArray(*it, where + "." + key, depth));
    }
  }
  return OkStatus();
}

}  // namespace

Status ValidateJsonSchema(const json& schema) {
  try {
    return CheckSchema(schema, "schema", 0);
  } catch (const std::exception& e) {
    // Only allocation failures can reach here; the checks above use non-throwing accessors.
    return InternalError(std::string("schema check failed: ") + e.what());
  }
}

}  // namespace mend::agent
