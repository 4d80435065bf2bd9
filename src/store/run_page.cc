#include "mend/store/run_page.h"

#include <charconv>
#include <string>
#include <string_view>

#include "store/run_row.h"

namespace mend::store {
namespace {

constexpr char kHex[] = "0123456789ABCDEF";

bool Plain(char c) {
  return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '.' ||
         c == '_' || c == '-';
}

int HexDigit(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

}  // namespace

std::string FormatRunCursor(const RunCursor& cursor) {
  std::string text = std::to_string(internal::ToNanos(cursor.created_at)) + ":";
  for (char c : cursor.id) {
    if (Plain(c)) {
      text += c;
    } else {
      const auto byte = static_cast<unsigned char>(c);
      text += {'%', kHex[byte >> 4], kHex[byte & 0xf]};
    }
  }
  return text;
}

// Only the form FormatRunCursor writes is accepted (upper-case escapes, plain bytes unescaped), so
// one cursor has one text.
Result<RunCursor> ParseRunCursor(std::string_view text) {
  const Status bad =
      InvalidArgumentError("\"" + std::string(text.substr(0, 80)) + "\" is not a page cursor");
  const size_t colon = text.find(':');
  if (colon == std::string_view::npos || colon == 0 || colon + 1 == text.size()) return bad;
  const std::string_view nanos = text.substr(0, colon);
  int64_t value = 0;
  auto [end, ec] = std::from_chars(nanos.data(), nanos.data() + nanos.size(), value);
  if (ec != std::errc() || end != nanos.data() + nanos.size() || value < 0) return bad;
  RunCursor cursor{internal::FromNanos(value), ""};
  for (size_t i = colon + 1; i < text.size(); ++i) {
    if (text[i] != '%') {
      if (!Plain(text[i])) return bad;
      cursor.id += text[i];
      continue;
    }
    const int hi = i + 2 < text.size() ? HexDigit(text[i + 1]) : -1;
    const int lo = hi >= 0 ? HexDigit(text[i + 2]) : -1;
    if (lo < 0 || Plain(static_cast<char>(hi * 16 + lo))) return bad;
    cursor.id += static_cast<char>(hi * 16 + lo);
    i += 2;
  }
  return cursor;
}

Status ValidatePendingQuery(const PendingQuery& query) {
  if (query.limit < 1 || query.limit > kMaxPendingPageSize) {
    return InvalidArgumentError("a page holds 1 to " + std::to_string(kMaxPendingPageSize) +
                                " runs, not " + std::to_string(query.limit));
  }
  for (RunStatus s : query.statuses) {
    if (s == RunStatus::kCompleted && query.scope == RunScope::kUnfinished) {
      return InvalidArgumentError(
          "pending runs are never completed; filter on running, waiting, "
          "failed or quarantined");
    }
  }
  return OkStatus();
}

}  // namespace mend::store
