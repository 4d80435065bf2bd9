#include "obs/prometheus_format.h"

#include <charconv>
#include <cmath>
#include <system_error>

namespace mend::obs {
namespace {

bool IsLetterOrUnderscore(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
}
bool IsDigit(char c) { return c >= '0' && c <= '9'; }

}  // namespace

std::string FormatPrometheusValue(double value) {
  if (std::isnan(value)) return "NaN";
  if (std::isinf(value)) return value > 0 ? "+Inf" : "-Inf";
  char buf[64];
  // Integral values are common (counters, bucket counts) and read best without an exponent; below
  // 2^53 every integer is exact, so the fixed form round-trips.
  constexpr double kExactIntegerLimit = 9007199254740992.0;
  const bool integral = std::trunc(value) == value && std::fabs(value) < kExactIntegerLimit;
  const auto [end, ec] =
      integral ? std::to_chars(buf, buf + sizeof(buf), value, std::chars_format::fixed, 0)
               : std::to_chars(buf, buf + sizeof(buf), value);
  if (ec != std::errc()) return "NaN";  // Unreachable: 64 bytes fit any double.
  return std::string(buf, end);
}

std::string EscapePrometheusHelp(std::string_view help) {
  std::string out;
  out.reserve(help.size());
  for (char c : help) {
    if (c == '\\') {
      out += "\\\\";
    } else if (c == '\n') {
      out += "\\n";
    } else {
      out += c;
    }
  }
  return out;
}

std::string EscapePrometheusLabelValue(std::string_view value) {
  std::string out;
  out.reserve(value.size());
  for (char c : value) {
    if (c == '\\') {
      out += "\\\\";
    } else if (c == '"') {
      out += "\\\"";
    } else if (c == '\n') {
      out += "\\n";
    } else {
      out += c;
    }
  }
  return out;
}

bool IsValidMetricName(std::string_view name) {
  if (name.empty()) return false;
  for (size_t i = 0; i < name.size(); ++i) {
    const char c = name[i];
    const bool ok = IsLetterOrUnderscore(c) || c == ':' || (i > 0 && IsDigit(c));
    if (!ok) return false;
  }
  return true;
}

bool IsValidLabelName(std::string_view name) {
  if (name.empty() || name.starts_with("__")) return false;
  for (size_t i = 0; i < name.size(); ++i) {
    const char c = name[i];
    if (!IsLetterOrUnderscore(c) && !(i > 0 && IsDigit(c))) return false;
  }
  return true;
}

}  // namespace mend::obs
