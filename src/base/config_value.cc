#include "base/config_value.h"

#include <algorithm>
#include <cassert>
#include <cctype>
#include <charconv>
#include <cmath>
#include <nlohmann/json.hpp>
#include <string>
#include <system_error>

#include "mend/base/json.h"
#include "mend/base/time_format.h"
#include "mend/base/utf8.h"

namespace mend {
namespace config_internal {
namespace {

std::string FormatDouble(double d) {
  char buf[64];
  auto [end, ec] = std::to_chars(buf, buf + sizeof(buf), d);
  return ec == std::errc() ? std::string(buf, end) : std::to_string(d);
}

// FormatDuration without zero trailing units: "1h" rather than "1h0m0s", "5m" rather than "5m0s".
std::string CompactDuration(std::chrono::milliseconds d) {
  std::string text = FormatDuration(d);
  if (text.ends_with("h0m0s")) return text.substr(0, text.size() - 4);
  if (text.ends_with("m0s")) return text.substr(0, text.size() - 2);
  return text;
}

std::optional<ParsedValue> ParseBool(std::string_view text) {
  const std::string t = ToLowerAscii(text);
  if (t == "true" || t == "1" || t == "yes" || t == "on") return ParsedValue{true, "true"};
  if (t == "false" || t == "0" || t == "no" || t == "off") return ParsedValue{false, "false"};
  return std::nullopt;
}

std::optional<ParsedValue> ParseInt(const ConfigKeySpec& spec, std::string_view text) {
  std::int64_t v = 0;
  const char* end = text.data() + text.size();
  auto [ptr, ec] = std::from_chars(text.data(), end, v);
  if (text.empty() || ec != std::errc() || ptr != end) return std::nullopt;
  if (v < spec.int_min || v > spec.int_max) return std::nullopt;
  return ParsedValue{v, std::to_string(v)};
}

std::optional<ParsedValue> ParseDouble(const ConfigKeySpec& spec, std::string_view text) {
  double v = 0;
  const char* end = text.data() + text.size();
  auto [ptr, ec] = std::from_chars(text.data(), end, v);
  if (text.empty() || ec != std::errc() || ptr != end || !std::isfinite(v)) return std::nullopt;
  if (v < spec.double_min || v > spec.double_max) return std::nullopt;
  return ParsedValue{v, FormatDouble(v)};
}

std::optional<ParsedValue> ParseDurationValue(const ConfigKeySpec& spec, std::string_view text) {
  Result<std::chrono::milliseconds> d = ParseDuration(text);
  if (!d.ok() || *d < spec.duration_min || *d > spec.duration_max) return std::nullopt;
  return ParsedValue{*d, CompactDuration(*d)};
}

std::optional<ParsedValue> ParseEnum(const ConfigKeySpec& spec, std::string_view text) {
  const std::string t = ToLowerAscii(text);
  for (const std::string& choice : spec.choices) {
    if (choice == t) return ParsedValue{choice, choice};
  }
  return std::nullopt;
}

std::string JoinChoices(const std::vector<std::string>& choices) {
  std::string out;
  for (size_t i = 0; i < choices.size(); ++i) {
    if (i > 0) out += i + 1 == choices.size() ? " or " : ", ";
    out += choices[i];
  }
  return out;
}

// "https://user:pass@host/x" → "https://****@host/x"; anything else unchanged.
std::string MaskUrlCredentials(std::string_view url) {
  const size_t scheme = url.find("://");
  if (scheme == std::string_view::npos) return std::string(url);
  const size_t start = scheme + 3;
  const size_t end = url.find_first_of("/?#", start);
  const size_t at = url.substr(0, end).rfind('@');
  if (at == std::string_view::npos || at < start) return std::string(url);
  return std::string(url.substr(0, start)) + "****" + std::string(url.substr(at));
}

}  // namespace

std::optional<ParsedValue> ParseConfigText(const ConfigKeySpec& spec, std::string_view text) {
  switch (spec.type) {
    case ConfigType::kString:
      return ParsedValue{std::string(text), std::string(text)};
    case ConfigType::kBool:
      return ParseBool(text);
    case ConfigType::kInt:
      return ParseInt(spec, text);
    case ConfigType::kDouble:
      return ParseDouble(spec, text);
    case ConfigType::kDuration:
      return ParseDurationValue(spec, text);
    case ConfigType::kEnum:
      return ParseEnum(spec, text);
  }
  return std::nullopt;
}

std::string DescribeAccepted(const ConfigKeySpec& spec) {
  switch (spec.type) {
    case ConfigType::kString:
      return "a string";
    case ConfigType::kBool:
      return "true or false";
    case ConfigType::kInt:
      return "an integer between " + std::to_string(spec.int_min) + " and " +
             std::to_string(spec.int_max);
    case ConfigType::kDouble:
      return "a number between " + FormatDouble(spec.double_min) + " and " +
             FormatDouble(spec.double_max);
    case ConfigType::kDuration:
      return "a duration between " + CompactDuration(spec.duration_min) + " and " +
             CompactDuration(spec.duration_max) + ", e.g. 30s";
    case ConfigType::kEnum:
      return "one of " + JoinChoices(spec.choices);
  }
  return "a valid value";
}

std::string SafeText(const ConfigKeySpec& spec, std::string_view raw) {
  switch (spec.sensitivity) {
    case Sensitivity::kSecret:
      return MaskSecret(raw);
    case Sensitivity::kUrl:
      return MaskUrlCredentials(raw);
    case Sensitivity::kPublic:
      break;
  }
  return std::string(raw);
}

Status InvalidValueError(const ConfigKeySpec& spec, std::string_view where,
                         std::string_view shown) {
  return InvalidArgumentError("invalid value for " + spec.name + " from " + std::string(where) +
                              ": " + std::string(shown) + " (expected " + DescribeAccepted(spec) +
                              ")");
}

}  // namespace config_internal

std::string_view ConfigSourceName(ConfigSource source) {
  switch (source) {
    case ConfigSource::kDefault:
      return "default";
    case ConfigSource::kFile:
      return "file";
    case ConfigSource::kEnv:
      return "env";
    case ConfigSource::kFlag:
      return "flag";
  }
  return "unknown";
}

std::string MaskSecret(std::string_view secret) {
  if (secret.empty()) return "";
  if (secret.size() < 16) return "****";
  return "****" + std::string(secret.substr(secret.size() - 4));
}

std::string DisplayValue(const ConfigValue& value) {
  ConfigKeySpec spec;
  spec.sensitivity = value.sensitivity;
  std::string text = config_internal::SafeText(spec, value.text);
  if (text.find('\n') == std::string::npos) return text;
  // A list's items (or a value with line breaks) as a JSON array of its lines, on one line, so
  // that a table of values keeps one row per key.
  nlohmann::json lines = nlohmann::json::array();
  size_t start = 0;
  while (start <= text.size()) {
    size_t end = text.find('\n', start);
    if (end == std::string::npos) end = text.size();
    lines.push_back(text.substr(start, end - start));
    start = end + 1;
  }
  return DumpJson(lines);
}

const ConfigValue* Config::Find(std::string_view key) const {
  for (const ConfigValue& v : values_) {
    if (v.key == key) return &v;
  }
  return nullptr;
}

namespace {

template <typename T>
const T& Get(const Config& config, std::string_view key) {
  static const T kEmpty{};
  const ConfigValue* v = config.Find(key);
  assert(v != nullptr && "unknown configuration key");
  if (v == nullptr) return kEmpty;
  const T* typed = std::get_if<T>(&v->value);
  assert(typed != nullptr && "configuration key read as the wrong type");
  return typed != nullptr ? *typed : kEmpty;
}

}  // namespace

const std::string& Config::GetString(std::string_view key) const {
  return Get<std::string>(*this, key);
}
bool Config::GetBool(std::string_view key) const { return Get<bool>(*this, key); }
std::int64_t Config::GetInt(std::string_view key) const { return Get<std::int64_t>(*this, key); }
double Config::GetDouble(std::string_view key) const { return Get<double>(*this, key); }
std::chrono::milliseconds Config::GetDuration(std::string_view key) const {
  return Get<std::chrono::milliseconds>(*this, key);
}
std::vector<std::string> Config::GetList(std::string_view key) const {
  std::vector<std::string> items;
  const std::string& text = GetString(key);
  size_t start = 0;
  while (start <= text.size()) {
    size_t end = text.find('\n', start);
    if (end == std::string::npos) end = text.size();
    if (end > start) items.push_back(text.substr(start, end - start));
    start = end + 1;
  }
  return items;
}

}  // namespace mend
