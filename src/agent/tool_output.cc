#include "agent/tool_output.h"

#include <algorithm>
#include <cstdio>
#include <nlohmann/json.hpp>

#include "mend/base/json.h"
#include "mend/base/utf8.h"

namespace mend::agent {

std::string CapOutput(std::string_view content, std::size_t max_bytes, std::size_t total_bytes) {
  const std::size_t total = std::max(total_bytes, content.size());
  bool cut = total > max_bytes;
  std::string text = SanitizeUtf8(TruncateUtf8Bytes(content, max_bytes));
  // Sanitizing can grow the text (one invalid byte becomes the three bytes of U+FFFD).
  if (text.size() > max_bytes) {
    text = TruncateUtf8Bytes(text, max_bytes);
    cut = true;
  }
  if (!cut) return text;
  const std::size_t shown = text.size();
  if (!text.empty() && text.back() != '\n') text += '\n';
  text += "[output truncated: " + std::to_string(shown) + " of " + std::to_string(total) +
          " bytes shown]";
  return text;
}

std::string QuoteExcerpt(std::string_view text, std::size_t max_bytes) {
  std::string excerpt = TruncateUtf8Bytes(SanitizeUtf8(text.substr(0, max_bytes)), max_bytes);
  std::string quoted = DumpJson(excerpt);
  if (text.size() > max_bytes) quoted += "...";
  return quoted;
}

std::string FormatSeconds(long long milliseconds) {
  if (milliseconds % 1000 == 0) return std::to_string(milliseconds / 1000) + "s";
  char buf[32];
  std::snprintf(buf, sizeof(buf), "%.3f", static_cast<double>(milliseconds) / 1000.0);
  std::string s = buf;
  while (s.back() == '0') s.pop_back();
  return s + "s";
}

}  // namespace mend::agent
