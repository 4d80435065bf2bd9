#include "mend/base/utf8.h"

#include <cstdint>

namespace mend {
namespace {

constexpr Utf8Rune kInvalid{kUtf8ReplacementChar, 1, false};

bool IsContinuation(unsigned char b) { return (b & 0xC0) == 0x80; }

// The valid range of the second byte for each lead byte. Restricting it is what rules out
// overlong forms (E0 80.., F0 80..), surrogates (ED A0..) and values above U+10FFFF (F4 90..).
struct LeadInfo {
  std::size_t size;
  unsigned char second_lo;
  unsigned char second_hi;
};

LeadInfo InfoForLead(unsigned char b) {
  if (b >= 0xC2 && b <= 0xDF) return {2, 0x80, 0xBF};
  if (b == 0xE0) return {3, 0xA0, 0xBF};
  if (b == 0xED) return {3, 0x80, 0x9F};
  if (b >= 0xE1 && b <= 0xEF) return {3, 0x80, 0xBF};
  if (b == 0xF0) return {4, 0x90, 0xBF};
  if (b >= 0xF1 && b <= 0xF3) return {4, 0x80, 0xBF};
  if (b == 0xF4) return {4, 0x80, 0x8F};
  return {0, 0, 0};  // C0, C1, F5..FF and continuation bytes never start a sequence.
}

}  // namespace

Utf8Rune DecodeUtf8Rune(std::string_view s) {
  if (s.empty()) return {kUtf8ReplacementChar, 0, false};
  const auto b0 = static_cast<unsigned char>(s[0]);
  if (b0 < 0x80) return {b0, 1, true};
  const LeadInfo info = InfoForLead(b0);
  if (info.size == 0 || s.size() < info.size) return kInvalid;
  const auto b1 = static_cast<unsigned char>(s[1]);
  if (b1 < info.second_lo || b1 > info.second_hi) return kInvalid;
  char32_t cp = b0 & (0xFF >> (info.size + 1));
  cp = (cp << 6) | (b1 & 0x3F);
  for (std::size_t i = 2; i < info.size; ++i) {
    const auto b = static_cast<unsigned char>(s[i]);
    if (!IsContinuation(b)) return kInvalid;
    cp = (cp << 6) | (b & 0x3F);
  }
  return {cp, info.size, true};
}

void AppendUtf8(char32_t cp, std::string& out) {
  if ((cp >= 0xD800 && cp <= 0xDFFF) || cp > 0x10FFFF) cp = kUtf8ReplacementChar;
  if (cp < 0x80) {
    out.push_back(static_cast<char>(cp));
  } else if (cp < 0x800) {
    out.push_back(static_cast<char>(0xC0 | (cp >> 6)));
    out.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  } else if (cp < 0x10000) {
    out.push_back(static_cast<char>(0xE0 | (cp >> 12)));
    out.push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
    out.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  } else {
    out.push_back(static_cast<char>(0xF0 | (cp >> 18)));
    out.push_back(static_cast<char>(0x80 | ((cp >> 12) & 0x3F)));
    out.push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
    out.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  }
}

bool IsValidUtf8(std::string_view s) {
  while (!s.empty()) {
    const Utf8Rune r = DecodeUtf8Rune(s);
    if (!r.valid) return false;
    s.remove_prefix(r.size);
  }
  return true;
}

std::string SanitizeUtf8WithoutNul(std::string_view s) {
  if (s.find('\0') == std::string_view::npos && IsValidUtf8(s)) return std::string(s);
  std::string out;
  for (char c : SanitizeUtf8(s)) {
    if (c == '\0') {
      out += "\xEF\xBF\xBD";
    } else {
      out += c;
    }
  }
  return out;
}

std::string SanitizeUtf8(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  while (!s.empty()) {
    // Runs of ASCII, most of any model response or file, are copied at once.
    std::size_t ascii = 0;
    while (ascii < s.size() && static_cast<unsigned char>(s[ascii]) < 0x80) ++ascii;
    if (ascii > 0) {
      out.append(s.substr(0, ascii));
      s.remove_prefix(ascii);
      continue;
    }
    const Utf8Rune r = DecodeUtf8Rune(s);
    if (r.valid) {
      out.append(s.substr(0, r.size));
    } else {
      AppendUtf8(kUtf8ReplacementChar, out);
    }
    s.remove_prefix(r.size);
  }
  return out;
}

std::size_t CountUtf8Chars(std::string_view s) {
  std::size_t count = 0;
  for (; !s.empty(); ++count) s.remove_prefix(DecodeUtf8Rune(s).size);
  return count;
}

std::string TruncateUtf8Bytes(std::string_view s, std::size_t max_bytes) {
  if (s.size() <= max_bytes) return std::string(s);
  // Only the unit that straddles the cut matters. It starts at most three bytes before the cut, at
  // the nearest byte that is not a continuation byte; if that unit runs past the cut, drop it.
  // Four continuation bytes in a row are all invalid single-byte units, so the cut stands.
  const std::size_t floor = max_bytes >= 3 ? max_bytes - 3 : 0;
  std::size_t cut = max_bytes;
  for (std::size_t i = max_bytes + 1; i-- > floor;) {
    if (IsContinuation(static_cast<unsigned char>(s[i]))) continue;
    if (i < max_bytes && i + DecodeUtf8Rune(s.substr(i)).size > max_bytes) cut = i;
    break;
  }
  return std::string(s.substr(0, cut));
}

std::string TruncateUtf8Chars(std::string_view s, std::size_t max_code_points) {
  std::size_t end = 0;
  for (std::size_t n = 0; n < max_code_points && end < s.size(); ++n) {
    end += DecodeUtf8Rune(s.substr(end)).size;
  }
  return std::string(s.substr(0, end));
}

bool IsUnicodeSpace(char32_t cp) {
  switch (cp) {
    case '\t':
    case '\n':
    case '\v':
    case '\f':
    case '\r':
    case ' ':
    case 0x85:
    case 0xA0:
    case 0x1680:
    case 0x2028:
    case 0x2029:
    case 0x202F:
    case 0x205F:
    case 0x3000:
      return true;
    default:
      return cp >= 0x2000 && cp <= 0x200A;
  }
}

std::string CollapseWhitespace(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  bool pending_space = false;
  while (!s.empty()) {
    const Utf8Rune r = DecodeUtf8Rune(s);
    if (r.valid && IsUnicodeSpace(r.code_point)) {
      pending_space = !out.empty();
    } else {
      if (pending_space) out.push_back(' ');
      pending_space = false;
      out.append(s.substr(0, r.size));
    }
    s.remove_prefix(r.size);
  }
  return out;
}

std::string_view Trim(std::string_view s) {
  std::size_t begin = s.size();
  std::size_t end = 0;
  for (std::size_t pos = 0; pos < s.size();) {
    const Utf8Rune r = DecodeUtf8Rune(s.substr(pos));
    if (!(r.valid && IsUnicodeSpace(r.code_point))) {
      if (begin == s.size()) begin = pos;
      end = pos + r.size;
    }
    pos += r.size;
  }
  return begin < end ? s.substr(begin, end - begin) : std::string_view();
}

std::string ToLowerAscii(std::string_view s) {
  std::string out(s);
  for (char& c : out) {
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
  }
  return out;
}

}  // namespace mend
