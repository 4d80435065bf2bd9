#include <cmath>
#include <nlohmann/json.hpp>

#include "mend/base/json.h"
#include "mend/base/time_format.h"
#include "mend/obs/events.h"

namespace mend::obs {

Event& Event::Put(std::string key, std::string json) {
  // The envelope owns these keys; letting a field shadow them would produce duplicate keys.
  if (key == "type" || key == "time") return *this;
  for (EventField& field : fields_) {
    if (field.key == key) {
      field.json = std::move(json);
      return *this;
    }
  }
  fields_.push_back(EventField{std::move(key), std::move(json)});
  return *this;
}

Event& Event::AddString(std::string key, std::string_view value) {
  return Put(std::move(key), DumpJson(nlohmann::json(std::string(value))));
}

Event& Event::AddInt(std::string key, int64_t value) {
  return Put(std::move(key), std::to_string(value));
}

Event& Event::AddDouble(std::string key, double value) {
  return Put(std::move(key), std::isfinite(value) ? DumpJson(nlohmann::json(value)) : "null");
}

Event& Event::AddBool(std::string key, bool value) {
  return Put(std::move(key), value ? "true" : "false");
}

Event& Event::AddJson(std::string key, std::string_view json) {
  Result<nlohmann::json> parsed = ParseJson(json);
  if (!parsed.ok()) return AddString(std::move(key), json);
  return Put(std::move(key), DumpJson(*parsed));
}

std::optional<std::string_view> Event::Find(std::string_view key) const {
  for (const EventField& field : fields_) {
    if (field.key == key) return field.json;
  }
  return std::nullopt;
}

std::string EventToJson(const Event& event) {
  std::string out = "{\"type\":";
  out += DumpJson(nlohmann::json(event.type()));
  out += ",\"time\":\"";
  out += FormatRfc3339(event.time());
  out += '"';
  for (const EventField& field : event.fields()) {
    out += ',';
    out += DumpJson(nlohmann::json(field.key));
    out += ':';
    out += field.json;
  }
  out += '}';
  return out;
}

}  // namespace mend::obs
