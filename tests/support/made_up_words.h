#pragma once

// Made-up words for end-to-end tests and the chaos program: texts built from different items'
// words share almost nothing, so no lesson of one item is a near duplicate of another's (those
// would merge into one fact, as they should).

#include <cstdint>
#include <string>

namespace mend::testing {

// `count` words of item `i`'s own, three syllables each.
inline std::string MadeUpWords(int i, int count) {
  static const char* const kSyllables[] = {"ka", "to", "mi", "ru", "se", "no", "pa", "li",
                                           "ve", "do", "zu", "fi", "go", "he", "ja", "qu"};
  uint32_t state = 2654435761u * static_cast<uint32_t>(i + 1);
  std::string out;
  for (int w = 0; w < count; ++w) {
    if (!out.empty()) out += ' ';
    for (int k = 0; k < 3; ++k) {
      state = state * 1664525u + 1013904223u;
      out += kSyllables[(state >> 24) % 16];
    }
  }
  return out;
}

}  // namespace mend::testing
