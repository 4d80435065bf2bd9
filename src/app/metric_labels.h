#pragma once

#include <cstddef>
#include <functional>
#include <mutex>
#include <set>
#include <string>
#include <string_view>

#include "mend/obs/events.h"

namespace mend::app::internal {

// The value counted in place of new values once a label has seen its maximum.
inline constexpr std::string_view kOtherLabelValue = "other";
// The value of a label whose source value is empty.
inline constexpr std::string_view kUnknownLabelValue = "unknown";

// `raw` made safe and short as a label value: every byte outside [A-Za-z0-9._:/@+-] becomes '_'
// (so the value is ASCII and needs no escaping), cut to 64 bytes; "" becomes "unknown".
std::string CleanLabelValue(std::string_view raw);

// Keeps the values of one label to a bounded set, so that a model name or an error code that keeps
// changing cannot grow the metrics without bound: the first `max_values` distinct cleaned values
// are kept as they are, later new ones come back as "other". Thread-safe.
class BoundedLabel {
 public:
  explicit BoundedLabel(size_t max_values) : max_values_(max_values) {}

  std::string Get(std::string_view raw);

 private:
  const size_t max_values_;
  std::mutex mu_;
  std::set<std::string, std::less<>> seen_;
};

// The string value of field `key` of `event`; "" when the field is missing or not a string.
std::string EventString(const obs::Event& event, std::string_view key);
// The boolean value of field `key`; false when missing or not a boolean.
bool EventBool(const obs::Event& event, std::string_view key);

}  // namespace mend::app::internal
