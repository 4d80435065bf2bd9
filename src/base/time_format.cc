#include "mend/base/time_format.h"

#include <cstdint>
#include <cstdio>
#include <limits>
#include <string>

namespace mend {
namespace {

using std::chrono::days;
using std::chrono::nanoseconds;
using std::chrono::seconds;

// Go accepts both spellings of the micro sign: U+00B5 and U+03BC.
constexpr std::string_view kMicroSign = "\xC2\xB5s";
constexpr std::string_view kGreekMu = "\xCE\xBCs";
constexpr std::uint64_t kMaxMagnitudeNs = std::uint64_t{1} << 63;  // |INT64_MIN|.

std::string FormatUtc(Time t, bool with_fraction) {
  const auto ns = std::chrono::time_point_cast<nanoseconds>(t);
  const auto day = std::chrono::floor<days>(ns);
  const std::chrono::year_month_day ymd{day};
  const std::chrono::hh_mm_ss<nanoseconds> tod{ns - day};
  char buf[48];
  int n = std::snprintf(
      buf, sizeof(buf), "%04d-%02u-%02uT%02d:%02d:%02d", int{ymd.year()}, unsigned{ymd.month()},
      unsigned{ymd.day()}, static_cast<int>(tod.hours().count()),
      static_cast<int>(tod.minutes().count()), static_cast<int>(tod.seconds().count()));
  std::string out(buf, static_cast<std::size_t>(n));
  const long long fraction = tod.subseconds().count();
  if (with_fraction && fraction != 0) {
    n = std::snprintf(buf, sizeof(buf), ".%09lld", fraction);
    std::string_view digits(buf, static_cast<std::size_t>(n));
    out.append(digits.substr(0, digits.find_last_not_of('0') + 1));
  }
  out.push_back('Z');
  return out;
}

Status BadTimestamp(std::string_view text, std::string_view why) {
  return InvalidArgumentError("invalid RFC 3339 timestamp \"" + std::string(text) +
                              "\": " + std::string(why));
}

bool IsDigit(char c) { return c >= '0' && c <= '9'; }

// Reads exactly `n` decimal digits of `s` starting at `pos`.
bool ReadDigits(std::string_view s, std::size_t pos, std::size_t n, int& out) {
  if (pos + n > s.size()) return false;
  out = 0;
  for (std::size_t i = pos; i < pos + n; ++i) {
    if (!IsDigit(s[i])) return false;
    out = out * 10 + (s[i] - '0');
  }
  return true;
}

// The optional ".fraction" at `pos` as nanoseconds; advances `pos` past it.
Result<std::int64_t> ParseFraction(std::string_view text, std::size_t& pos) {
  if (pos >= text.size() || text[pos] != '.') return std::int64_t{0};
  const std::size_t start = ++pos;
  std::int64_t ns = 0;
  for (; pos < text.size() && IsDigit(text[pos]); ++pos) {
    // Only nine digits are ever used; more are refused below, and would overflow `ns`.
    if (pos - start < 9) ns = ns * 10 + (text[pos] - '0');
  }
  const std::size_t digits = pos - start;
  if (digits == 0 || digits > 9) return BadTimestamp(text, "fraction must have 1 to 9 digits");
  for (std::size_t i = digits; i < 9; ++i) ns *= 10;
  return ns;
}

// The zone designator, which must be all of `zone`, as minutes east of UTC.
Result<int> ParseOffset(std::string_view text, std::string_view zone) {
  if (zone == "Z" || zone == "z") return 0;
  int hours = 0;
  int minutes = 0;
  if (zone.size() != 6 || (zone[0] != '+' && zone[0] != '-') || !ReadDigits(zone, 1, 2, hours) ||
      zone[3] != ':' || !ReadDigits(zone, 4, 2, minutes)) {
    return BadTimestamp(text, "expected 'Z' or a ±hh:mm offset");
  }
  if (hours > 23 || minutes > 59) return BadTimestamp(text, "offset out of range");
  const int offset = hours * 60 + minutes;
  return zone[0] == '-' ? -offset : offset;
}

}  // namespace

std::string FormatRfc3339(Time t) { return FormatUtc(t, /*with_fraction=*/true); }

std::string FormatRfc3339Seconds(Time t) { return FormatUtc(t, /*with_fraction=*/false); }

Result<Time> ParseRfc3339(std::string_view text) {
  int year = 0, month = 0, day = 0, hour = 0, minute = 0, second = 0;
  if (!ReadDigits(text, 0, 4, year) || text.size() < 20 || text[4] != '-' ||
      !ReadDigits(text, 5, 2, month) || text[7] != '-' || !ReadDigits(text, 8, 2, day) ||
      (text[10] != 'T' && text[10] != 't') || !ReadDigits(text, 11, 2, hour) || text[13] != ':' ||
      !ReadDigits(text, 14, 2, minute) || text[16] != ':' || !ReadDigits(text, 17, 2, second)) {
    return BadTimestamp(text, "expected YYYY-MM-DDTHH:MM:SS");
  }
  std::size_t pos = 19;
  MEND_ASSIGN_OR_RETURN(const std::int64_t fraction_ns, ParseFraction(text, pos));
  MEND_ASSIGN_OR_RETURN(const int offset_minutes, ParseOffset(text, text.substr(pos)));
  const std::chrono::year_month_day ymd{std::chrono::year{year},
                                        std::chrono::month{static_cast<unsigned>(month)},
                                        std::chrono::day{static_cast<unsigned>(day)}};
  if (!ymd.ok()) return BadTimestamp(text, "no such date");
  if (hour > 23 || minute > 59 || second > 59) return BadTimestamp(text, "no such time of day");

  const std::int64_t day_count = std::chrono::sys_days{ymd}.time_since_epoch().count();
  const std::int64_t secs =
      day_count * 86400 + hour * 3600 + minute * 60 + second - std::int64_t{offset_minutes} * 60;
  // One second of margin keeps the fraction from overflowing the clock's representation.
  const std::int64_t limit = std::chrono::duration_cast<seconds>(Time::duration::max()).count() - 1;
  if (secs > limit || secs < -limit) return BadTimestamp(text, "outside the representable range");
  return Time(std::chrono::duration_cast<Time::duration>(seconds{secs} + nanoseconds{fraction_ns}));
}

namespace {

Status BadDuration(std::string_view text, std::string_view why) {
  return InvalidArgumentError("invalid duration \"" + std::string(text) +
                              "\": " + std::string(why));
}

std::uint64_t UnitNanoseconds(std::string_view unit) {
  if (unit == "ns") return 1;
  if (unit == "us" || unit == kMicroSign || unit == kGreekMu) return 1'000;
  if (unit == "ms") return 1'000'000;
  if (unit == "s") return 1'000'000'000;
  if (unit == "m") return 60'000'000'000;
  if (unit == "h") return 3'600'000'000'000;
  // Not in Go: a day of exactly 24 hours (no calendar, no daylight saving), for retention limits
  // such as "30d". FormatDuration never writes it, so its output stays Go's.
  if (unit == "d") return 86'400'000'000'000;
  return 0;
}

// Consumes one "<number><unit>" from the front of `rest` and returns its length in nanoseconds.
// Like Go, fraction digits beyond what 64 bits hold are ignored and the fraction is scaled in
// floating point.
Result<std::uint64_t> ParseDurationPart(std::string_view text, std::string_view& rest) {
  std::size_t i = 0;
  std::uint64_t whole = 0;
  for (; i < rest.size() && IsDigit(rest[i]); ++i) {
    const auto digit = static_cast<std::uint64_t>(rest[i] - '0');
    if (whole > (kMaxMagnitudeNs - digit) / 10) return BadDuration(text, "too large");
    whole = whole * 10 + digit;
  }
  bool has_digits = i > 0;
  std::uint64_t fraction = 0;
  double scale = 1;
  if (i < rest.size() && rest[i] == '.') {
    const std::size_t fraction_start = ++i;
    for (; i < rest.size() && IsDigit(rest[i]); ++i) {
      if (fraction > (kMaxMagnitudeNs - 9) / 10) continue;
      fraction = fraction * 10 + static_cast<std::uint64_t>(rest[i] - '0');
      scale *= 10;
    }
    has_digits = has_digits || i > fraction_start;
  }
  if (!has_digits) return BadDuration(text, "expected a number");
  const std::size_t unit_start = i;
  while (i < rest.size() && rest[i] != '.' && !IsDigit(rest[i])) ++i;
  const std::string_view unit = rest.substr(unit_start, i - unit_start);
  if (unit.empty()) return BadDuration(text, "missing unit");
  const std::uint64_t unit_ns = UnitNanoseconds(unit);
  if (unit_ns == 0) return BadDuration(text, "unknown unit \"" + std::string(unit) + "\"");
  if (whole > kMaxMagnitudeNs / unit_ns) return BadDuration(text, "too large");
  std::uint64_t ns = whole * unit_ns;
  ns += static_cast<std::uint64_t>(static_cast<double>(fraction) *
                                   (static_cast<double>(unit_ns) / scale));
  if (ns > kMaxMagnitudeNs) return BadDuration(text, "too large");
  rest.remove_prefix(i);
  return ns;
}

}  // namespace

Result<std::chrono::milliseconds> ParseDuration(std::string_view text) {
  std::string_view rest = text;
  bool negative = false;
  if (!rest.empty() && (rest[0] == '-' || rest[0] == '+')) {
    negative = rest[0] == '-';
    rest.remove_prefix(1);
  }
  if (rest == "0") return std::chrono::milliseconds{0};
  if (rest.empty()) return BadDuration(text, "empty");
  std::uint64_t total = 0;
  while (!rest.empty()) {
    MEND_ASSIGN_OR_RETURN(const std::uint64_t part, ParseDurationPart(text, rest));
    if (part > kMaxMagnitudeNs - total) return BadDuration(text, "too large");
    total += part;
  }
  if (!negative && total == kMaxMagnitudeNs) return BadDuration(text, "too large");
  // Two's complement negation of the magnitude is well defined on unsigned values, including
  // for |INT64_MIN|.
  const auto ns = static_cast<std::int64_t>(negative ? 0 - total : total);
  return std::chrono::duration_cast<std::chrono::milliseconds>(nanoseconds{ns});
}

std::string FormatDuration(std::chrono::milliseconds d) {
  const std::int64_t count = d.count();
  const std::uint64_t ms =
      count < 0 ? 0 - static_cast<std::uint64_t>(count) : static_cast<std::uint64_t>(count);
  if (ms == 0) return "0s";
  std::string out = count < 0 ? "-" : "";
  if (ms < 1000) return out + std::to_string(ms) + "ms";
  const std::uint64_t hours = ms / 3'600'000;
  const std::uint64_t minutes = ms / 60'000 % 60;
  const std::uint64_t millis = ms % 60'000;
  if (hours > 0) out += std::to_string(hours) + "h";
  if (hours > 0 || minutes > 0) out += std::to_string(minutes) + "m";
  out += std::to_string(millis / 1000);
  if (const std::uint64_t frac = millis % 1000; frac != 0) {
    std::string digits = std::to_string(1000 + frac).substr(1);  // Zero-padded to three digits.
    out += "." + digits.substr(0, digits.find_last_not_of('0') + 1);
  }
  return out + "s";
}

}  // namespace mend
