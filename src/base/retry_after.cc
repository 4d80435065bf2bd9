#include "mend/base/retry_after.h"

#include <algorithm>
#include <cctype>
#include <cstdint>
#include <ctime>
#include <string>

#include "mend/base/utf8.h"

namespace mend {

std::optional<Duration> ParseRetryAfter(std::string_view value, Time now, Duration longest) {
  value = Trim(value);
  if (value.empty()) return std::nullopt;
  const auto longest_seconds = std::chrono::duration_cast<std::chrono::seconds>(longest).count();
  if (std::all_of(value.begin(), value.end(),
                  [](char c) { return std::isdigit(static_cast<unsigned char>(c)); })) {
    // Beyond nine digits (about 31 years) the value only matters as "very long".
    if (value.size() > 9) return longest;
    int64_t seconds = 0;
    for (char c : value) seconds = seconds * 10 + (c - '0');
    return seconds > longest_seconds ? longest : Duration(std::chrono::seconds(seconds));
  }
  struct tm parts = {};
  const std::string text(value);
  const char* end = strptime(text.c_str(), "%a, %d %b %Y %H:%M:%S GMT", &parts);
  if (end == nullptr || *end != '\0') return std::nullopt;
  // Compared in whole seconds first: a far-future date does not fit a nanosecond time point...
  const int64_t ahead = static_cast<int64_t>(timegm(&parts)) -
                        static_cast<int64_t>(std::chrono::system_clock::to_time_t(now));
  if (ahead > longest_seconds) return longest;
  // ... and neither does a far-past one (year 0215): the sum below would overflow.
  if (ahead <= 0) return Duration::zero();
  const Time when = std::chrono::floor<std::chrono::seconds>(now) + std::chrono::seconds(ahead);
  if (when <= now) return Duration::zero();
  return std::min<Duration>(std::chrono::duration_cast<Duration>(when - now), longest);
}

}  // namespace mend
