#include "mend/base/base64.h"

#include <array>
#include <cstdint>

namespace mend {
namespace {

constexpr char kBase64Digits[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

// The value of each base64 digit, standard and URL-safe; -1 for any other byte.
constexpr std::array<int8_t, 256> kDigitValues = [] {
  std::array<int8_t, 256> values{};
  values.fill(-1);
  for (int i = 0; i < 64; ++i) {
    values[static_cast<unsigned char>(kBase64Digits[i])] = static_cast<int8_t>(i);
  }
  values['-'] = 62;
  values['_'] = 63;
  return values;
}();

int Base64Value(char c) { return kDigitValues[static_cast<unsigned char>(c)]; }

}  // namespace

std::string Base64Encode(std::string_view bytes) {
  std::string out;
  out.reserve((bytes.size() + 2) / 3 * 4);
  size_t i = 0;
  for (; i + 3 <= bytes.size(); i += 3) {
    const uint32_t n = (uint32_t{static_cast<uint8_t>(bytes[i])} << 16) |
                       (uint32_t{static_cast<uint8_t>(bytes[i + 1])} << 8) |
                       static_cast<uint8_t>(bytes[i + 2]);
    for (int shift = 18; shift >= 0; shift -= 6) out += kBase64Digits[(n >> shift) & 63];
  }
  const size_t rest = bytes.size() - i;
  if (rest == 0) return out;
  uint32_t n = uint32_t{static_cast<uint8_t>(bytes[i])} << 16;
  if (rest == 2) n |= uint32_t{static_cast<uint8_t>(bytes[i + 1])} << 8;
  out += kBase64Digits[(n >> 18) & 63];
  out += kBase64Digits[(n >> 12) & 63];
  out += rest == 2 ? kBase64Digits[(n >> 6) & 63] : '=';
  out += '=';
  return out;
}

bool Base64Decode(std::string_view text, std::string* out) {
  while (!text.empty() && text.back() == '=') text.remove_suffix(1);
  const size_t rest = text.size() % 4;
  if (rest == 1) return false;
  out->resize(text.size() / 4 * 3 + (rest == 0 ? 0 : rest - 1));
  char* w = out->data();
  size_t i = 0;
  for (; i + 4 <= text.size(); i += 4) {
    const int a = Base64Value(text[i]), b = Base64Value(text[i + 1]), c = Base64Value(text[i + 2]),
              d = Base64Value(text[i + 3]);
    if ((a | b | c | d) < 0) return false;
    const uint32_t n = static_cast<uint32_t>(a) << 18 | static_cast<uint32_t>(b) << 12 |
                       static_cast<uint32_t>(c) << 6 | static_cast<uint32_t>(d);
    *w++ = static_cast<char>(n >> 16);
    *w++ = static_cast<char>((n >> 8) & 0xff);
    *w++ = static_cast<char>(n & 0xff);
  }
  if (rest == 0) return true;
  uint32_t n = 0;
  for (size_t k = 0; k < rest; ++k) {
    const int v = Base64Value(text[i + k]);
    if (v < 0) return false;
    n |= static_cast<uint32_t>(v) << (18 - 6 * k);
  }
  *w++ = static_cast<char>(n >> 16);
  if (rest == 3) *w = static_cast<char>((n >> 8) & 0xff);
  return true;
}

}  // namespace mend
