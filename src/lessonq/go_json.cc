#include "lessonq/go_json.h"

#include <string>
#include <string_view>

#include "mend/base/utf8.h"

namespace mend::lessonq {
namespace {

constexpr char kHexDigits[] = "0123456789abcdef";

// The ASCII bytes Go's encoding/json copies as they are when it escapes HTML: everything from
// the space up, except '"', '\\', '<', '>' and '&'.
bool IsHtmlSafe(unsigned char b) {
  return b >= 0x20 && b < 0x80 && b != '"' && b != '\\' && b != '<' && b != '>' && b != '&';
}

void AppendAsciiEscape(unsigned char b, std::string& out) {
  out.push_back('\\');
  switch (b) {
    case '"':
    case '\\':
      out.push_back(static_cast<char>(b));
      return;
    case '\n':
      out.push_back('n');
      return;
    case '\r':
      out.push_back('r');
      return;
    case '\t':
      out.push_back('t');
      return;
    default:
      // Go before 1.22 (Debian 12's Go 1.19 among them) writes \b and \f this way too, as
      // \u0008 and \u000c; later Go writes them as \b and \f. Readers accept both.
      out.append("u00");
      out.push_back(kHexDigits[b >> 4]);
      out.push_back(kHexDigits[b & 0xF]);
  }
}

}  // namespace

void AppendGoJsonString(std::string_view s, std::string& out) {
  out.push_back('"');
  while (!s.empty()) {
    const auto b = static_cast<unsigned char>(s[0]);
    if (b < 0x80) {
      if (IsHtmlSafe(b)) {
        out.push_back(static_cast<char>(b));
      } else {
        AppendAsciiEscape(b, out);
      }
      s.remove_prefix(1);
      continue;
    }
    const Utf8Rune rune = DecodeUtf8Rune(s);
    if (!rune.valid) {
      out.append("\\ufffd");  // rune.size is 1: one replacement per invalid byte
    } else if (rune.code_point == 0x2028 || rune.code_point == 0x2029) {
      out.append(rune.code_point == 0x2028 ? "\\u2028" : "\\u2029");
    } else {
      out.append(s.substr(0, rune.size));
    }
    s.remove_prefix(rune.size);
  }
  out.push_back('"');
}

}  // namespace mend::lessonq
