#include "obs/redaction.h"

#include <nlohmann/json.hpp>

#include "mend/base/json.h"

namespace mend::obs {
namespace {

// Returns true when anything was replaced.
bool ReplaceAll(std::string* text, std::string_view secret) {
  bool replaced = false;
  size_t pos = 0;
  while ((pos = text->find(secret, pos)) != std::string::npos) {
    text->replace(pos, secret.size(), kRedacted);
    pos += kRedacted.size();
    replaced = true;
  }
  return replaced;
}

}  // namespace

bool ReplaceAllSecrets(std::string* text, const std::vector<std::string>& secrets) {
  bool replaced = false;
  for (const std::string& secret : secrets) {
    if (!secret.empty() && ReplaceAll(text, secret)) replaced = true;
  }
  return replaced;
}

namespace {

// Rewrites `value` in place. Object keys cannot be renamed in place, so objects are rebuilt.
void RedactValue(const std::vector<std::string>& secrets, nlohmann::json* value) {
  if (value->is_string()) {
    ReplaceAllSecrets(value->get_ptr<std::string*>(), secrets);
  } else if (value->is_array()) {
    for (nlohmann::json& element : *value) RedactValue(secrets, &element);
  } else if (value->is_object()) {
    nlohmann::json rebuilt = nlohmann::json::object();
    for (auto& [key, member] : value->items()) {
      std::string new_key = key;
      ReplaceAllSecrets(&new_key, secrets);
      RedactValue(secrets, &member);
      rebuilt[new_key] = std::move(member);
    }
    *value = std::move(rebuilt);
  } else {
    std::string text = value->dump();
    if (ReplaceAllSecrets(&text, secrets)) *value = std::move(text);
  }
}

// Whether `json` might mention a secret: in raw form (numbers, literals) or in the escaped form
// DumpJson gives it inside strings. Lets the common event skip parsing entirely.
bool MightContainSecret(const std::string& json, const std::vector<std::string>& secrets) {
  for (const std::string& secret : secrets) {
    if (secret.empty()) continue;
    if (json.find(secret) != std::string::npos) return true;
    const std::string quoted = DumpJson(nlohmann::json(secret));
    const std::string_view escaped = std::string_view(quoted).substr(1, quoted.size() - 2);
    if (json.find(escaped) != std::string::npos) return true;
  }
  return false;
}

}  // namespace

void RedactEvent(const std::vector<std::string>& secrets, Event* event) {
  std::string type = event->type();
  if (ReplaceAllSecrets(&type, secrets)) event->set_type(std::move(type));
  for (EventField& field : event->mutable_fields()) {
    ReplaceAllSecrets(&field.key, secrets);
    if (!MightContainSecret(field.json, secrets)) continue;
    Result<nlohmann::json> parsed = ParseJson(field.json);
    if (!parsed.ok()) {
      // Not JSON after all (a caller bypassed the Add* methods): fall back to a string value.
      std::string text = field.json;
      ReplaceAllSecrets(&text, secrets);
      field.json = DumpJson(nlohmann::json(text));
      continue;
    }
    RedactValue(secrets, &parsed.value());
    field.json = DumpJson(*parsed);
  }
}

}  // namespace mend::obs
