#include "improve/untrusted.h"

#include <cstdint>
#include <string>

#include "mend/base/utf8.h"

namespace mend::improve {
namespace {

// Code points written as a numeric reference in content and attributes (see the header for why).
bool NeedsNumericEscape(char32_t cp) {
  if (cp < 0x20) return cp != '\t' && cp != '\n';
  if (cp >= 0x7F && cp <= 0x9F) return true;
  if (cp >= 0xE0000 && cp <= 0xE007F) return true;
  return cp == 0xFE64 || cp == 0xFE65 || cp == 0xFF1C || cp == 0xFF1E;
}

std::string NumericReference(char32_t cp) {
  static constexpr char kHex[] = "0123456789ABCDEF";
  std::string digits;
  do {
    digits.insert(digits.begin(), kHex[cp & 0xF]);
    cp >>= 4;
  } while (cp != 0);
  return "&#x" + digits + ";";
}

enum class Context { kContent, kAttribute };

// The escaped form of one well-formed character whose UTF-8 bytes are `raw`.
std::string EscapeChar(char32_t cp, std::string_view raw, Context context) {
  switch (cp) {
    case '&':
      return "&amp;";
    case '<':
      return "&lt;";
    case '>':
      return "&gt;";
    default:
      break;
  }
  if (context == Context::kAttribute && (cp == '"' || cp == '\n' || cp == '\t')) {
    return cp == '"' ? std::string("&quot;") : NumericReference(cp);
  }
  if (NeedsNumericEscape(cp)) return NumericReference(cp);
  return std::string(raw);
}

std::string EscapeAttribute(std::string_view value) {
  const std::string repaired = SanitizeUtf8(value);
  std::string out;
  std::string_view rest = repaired;
  while (!rest.empty()) {
    const Utf8Rune rune = DecodeUtf8Rune(rest);
    out += EscapeChar(rune.code_point, rest.substr(0, rune.size), Context::kAttribute);
    rest.remove_prefix(rune.size);
  }
  return out;
}

// Appends `hex` (without the "&#x" and ";") as a code point when it is one; false otherwise.
bool AppendHexReference(std::string_view hex, std::string& out) {
  if (hex.empty() || hex.size() > 6) return false;
  std::uint32_t cp = 0;
  for (char c : hex) {
    int digit = -1;
    if (c >= '0' && c <= '9') digit = c - '0';
    if (c >= 'A' && c <= 'F') digit = c - 'A' + 10;
    if (c >= 'a' && c <= 'f') digit = c - 'a' + 10;
    if (digit < 0) return false;
    cp = cp * 16 + static_cast<std::uint32_t>(digit);
  }
  if (cp > 0x10FFFF) return false;
  AppendUtf8(static_cast<char32_t>(cp), out);
  return true;
}

}  // namespace

std::string UntrustedBlock(std::string_view source, std::string_view text, std::size_t max_bytes) {
  const std::string repaired = SanitizeUtf8(text);
  std::string content;
  std::size_t shown = 0;
  std::string_view rest = repaired;
  while (!rest.empty()) {
    const Utf8Rune rune = DecodeUtf8Rune(rest);
    const std::string piece =
        EscapeChar(rune.code_point, rest.substr(0, rune.size), Context::kContent);
    if (content.size() + piece.size() > max_bytes) break;
    content += piece;
    shown += rune.size;
    rest.remove_prefix(rune.size);
  }
  const bool truncated = shown < repaired.size();

  std::string block;
  block.reserve(content.size() + 160);
  block += "<";
  block += kUntrustedTag;
  block += " source=\"" + EscapeAttribute(source) + "\"";
  block += " bytes=\"" + std::to_string(repaired.size()) + "\"";
  block += " shown=\"" + std::to_string(shown) + "\"";
  block += truncated ? " truncated=\"true\">\n" : " truncated=\"false\">\n";
  block += content;
  block += "\n</";
  block += kUntrustedTag;
  block += ">\n";
  return block;
}

std::string UnescapeUntrusted(std::string_view content) {
  std::string out;
  out.reserve(content.size());
  while (!content.empty()) {
    const std::size_t amp = content.find('&');
    out.append(content.substr(0, amp));
    if (amp == std::string_view::npos) break;
    content.remove_prefix(amp);
    const std::size_t semi = content.find(';');
    const std::string_view entity =
        semi == std::string_view::npos ? std::string_view() : content.substr(0, semi + 1);
    if (entity == "&amp;") {
      out += '&';
    } else if (entity == "&lt;") {
      out += '<';
    } else if (entity == "&gt;") {
      out += '>';
    } else if (entity == "&quot;") {
      out += '"';
    } else if (!(entity.starts_with("&#x") &&
                 AppendHexReference(entity.substr(3, entity.size() - 4), out))) {
      out += '&';
      content.remove_prefix(1);
      continue;
    }
    content.remove_prefix(entity.size());
  }
  return out;
}

}  // namespace mend::improve
