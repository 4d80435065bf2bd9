#include "mend/lessonq/job.h"

#include <string>
#include <string_view>

#include "mend/base/hash.h"
#include "mend/base/utf8.h"

namespace mend::lessonq {
namespace {

// Even code points in [first, last] are capitals whose small letter follows them.
bool IsEvenCapital(char32_t c, char32_t first, char32_t last) {
  return c >= first && c <= last && (c - first) % 2 == 0;
}

// Latin-1 Supplement and Latin Extended-A, as Go's unicode.ToLower maps them.
char32_t LowerLatin(char32_t c) {
  if (c >= 0xC0 && c <= 0xDE && c != 0xD7) return c + 0x20;
  if (c == 0x130) return 'i';
  if (c == 0x178) return 0xFF;
  if (IsEvenCapital(c, 0x100, 0x12F) || IsEvenCapital(c, 0x132, 0x137) ||
      IsEvenCapital(c, 0x14A, 0x177)) {
    return c + 1;
  }
  // In these two runs the capitals sit at odd code points.
  if (IsEvenCapital(c, 0x139, 0x148) || IsEvenCapital(c, 0x179, 0x17E)) return c + 1;
  return c;
}

char32_t LowerGreek(char32_t c) {
  if ((c >= 0x391 && c <= 0x3A1) || (c >= 0x3A3 && c <= 0x3AB)) return c + 0x20;
  switch (c) {
    case 0x370:
    case 0x372:
    case 0x376:
    case 0x3F7:
    case 0x3FA:
      return c + 1;
    case 0x37F:
      return 0x3F3;
    case 0x386:
      return 0x3AC;
    case 0x388:
    case 0x389:
    case 0x38A:
      return c + 0x25;
    case 0x38C:
      return 0x3CC;
    case 0x38E:
    case 0x38F:
      return c + 0x3F;
    case 0x3CF:
      return 0x3D7;
    case 0x3F4:
      return 0x3B8;
    case 0x3F9:
      return 0x3F2;
    case 0x3FD:
    case 0x3FE:
    case 0x3FF:
      return c - 0x82;
    default:
      break;
  }
  if (IsEvenCapital(c, 0x3D8, 0x3EF)) return c + 1;
  return c;
}

// Cyrillic and Cyrillic Supplement.
char32_t LowerCyrillic(char32_t c) {
  if (c >= 0x400 && c <= 0x40F) return c + 0x50;
  if (c >= 0x410 && c <= 0x42F) return c + 0x20;
  if (c == 0x4C0) return 0x4CF;
  if (IsEvenCapital(c, 0x460, 0x481) || IsEvenCapital(c, 0x48A, 0x4BF) ||
      IsEvenCapital(c, 0x4D0, 0x52F)) {
    return c + 1;
  }
  if (IsEvenCapital(c, 0x4C1, 0x4CE)) return c + 1;  // capitals at odd code points
  return c;
}

char32_t LowerRune(char32_t c) {
  if (c < 0x80) return (c >= 'A' && c <= 'Z') ? c + ('a' - 'A') : c;
  if (c < 0x180) return LowerLatin(c);
  if (c >= 0x370 && c < 0x400) return LowerGreek(c);
  if (c >= 0x400 && c < 0x530) return LowerCyrillic(c);
  return c;
}

// Go's strings.ToLower restricted to the scripts above. Like Go, an invalid byte comes out as
// U+FFFD, so both tools hash the same bytes for the same input.
std::string ToLowerText(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  while (!s.empty()) {
    Utf8Rune r = DecodeUtf8Rune(s);
    if (r.valid && r.code_point < 0x80) {
      out.push_back(static_cast<char>(LowerRune(r.code_point)));
    } else {
      AppendUtf8(r.valid ? LowerRune(r.code_point) : kUtf8ReplacementChar, out);
    }
    s.remove_prefix(r.size);
  }
  return out;
}

}  // namespace

std::string NormalizeTask(std::string_view task) {
  return CollapseWhitespace(ToLowerText(Trim(task)));
}

std::string JobIdFor(const LessonRequest& request) {
  std::string key = "task:" + NormalizeTask(request.task);
  key.push_back('\0');
  key += "trigger:" + ToLowerText(Trim(request.trigger));
  key.push_back('\0');
  key += "attempt:";
  key += Trim(request.attempt);
  key.push_back('\0');
  key += "outcome:";
  key += Trim(request.outcome);
  const Sha256Digest digest = Sha256(key);
  return HexEncode(std::string_view(reinterpret_cast<const char*>(digest.data()), 8));
}

bool IsJobId(std::string_view id) {
  if (id.size() != 16) return false;
  for (char c : id) {
    if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'))) return false;
  }
  return true;
}

}  // namespace mend::lessonq
