#include "app/metric_labels.h"

#include <nlohmann/json.hpp>
#include <optional>

#include "mend/base/json.h"

namespace mend::app::internal {
namespace {

constexpr size_t kMaxLabelBytes = 64;

bool IsLabelByte(char c) {
  if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9')) return true;
  return std::string_view("._:/@+-").find(c) != std::string_view::npos;
}

}  // namespace

std::string CleanLabelValue(std::string_view raw) {
  if (raw.empty()) return std::string(kUnknownLabelValue);
  std::string out(raw.substr(0, kMaxLabelBytes));
  for (char& c : out) {
    if (!IsLabelByte(c)) c = '_';
  }
  return out;
}

std::string BoundedLabel::Get(std::string_view raw) {
  std::string value = CleanLabelValue(raw);
  std::lock_guard lock(mu_);
  if (seen_.contains(value)) return value;
  if (seen_.size() >= max_values_) return std::string(kOtherLabelValue);
  seen_.insert(value);
  return value;
}

std::string EventString(const obs::Event& event, std::string_view key) {
  std::optional<std::string_view> json = event.Find(key);
  if (!json.has_value()) return "";
  // Event values are stored as JSON text; the codes and names read here are plain strings, so
  // the common case needs no parser.
  if (json->size() >= 2 && json->front() == '"' && json->back() == '"' &&
      json->find('\\') == std::string_view::npos) {
    return std::string(json->substr(1, json->size() - 2));
  }
  Result<nlohmann::json> parsed = ParseJson(*json);
  if (!parsed.ok() || !parsed->is_string()) return "";
  return parsed->get<std::string>();
}

bool EventBool(const obs::Event& event, std::string_view key) {
  std::optional<std::string_view> json = event.Find(key);
  return json.has_value() && *json == "true";
}

}  // namespace mend::app::internal
