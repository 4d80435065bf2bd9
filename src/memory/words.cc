#include "memory/words.h"

#include <iterator>

namespace mend::memory::internal {
namespace {

struct Range {
  char32_t first;
  char32_t last;
};

// Sorted, disjoint: Latin-1 punctuation and symbols (its letters ª µ º and numbers ² ³ ¹ ¼ ½ ¾
// left out); General Punctuation (spaces, dashes, quotes, bullets, invisible marks); Currency
// Symbols; Arrows to Control Pictures; Box Drawing to Dingbats (before its numbers) and on to
// Miscellaneous Symbols and Arrows; Supplemental Punctuation; CJK punctuation (its letters and
// numbers left out); Vertical, CJK Compatibility and Small Forms; the byte order mark; fullwidth
// punctuation; the Specials (replacement character included); game pieces, emoji, pictographs.
constexpr Range kSeparators[] = {
    {0x0080, 0x00A9}, {0x00AB, 0x00B1},   {0x00B4, 0x00B4}, {0x00B6, 0x00B8}, {0x00BB, 0x00BB},
    {0x00BF, 0x00BF}, {0x00D7, 0x00D7},   {0x00F7, 0x00F7}, {0x2000, 0x206F}, {0x20A0, 0x20CF},
    {0x2190, 0x245F}, {0x2500, 0x2775},   {0x2794, 0x2BFF}, {0x2E00, 0x2E7F}, {0x3000, 0x3004},
    {0x3008, 0x3020}, {0x3030, 0x3030},   {0x303D, 0x303F}, {0xFE10, 0xFE1F}, {0xFE30, 0xFE6F},
    {0xFEFF, 0xFEFF}, {0xFF01, 0xFF0F},   {0xFF1A, 0xFF20}, {0xFF3B, 0xFF40}, {0xFF5B, 0xFF65},
    {0xFFF9, 0xFFFD}, {0x1F000, 0x1FAFF},
};

}  // namespace

bool IsSeparatorRune(char32_t c) {
  size_t lo = 0;
  size_t hi = std::size(kSeparators);
  while (lo < hi) {
    const size_t mid = (lo + hi) / 2;
    if (c < kSeparators[mid].first) {
      hi = mid;
    } else if (c > kSeparators[mid].last) {
      lo = mid + 1;
    } else {
      return true;
    }
  }
  return false;
}

}  // namespace mend::memory::internal
