#pragma once

#include <algorithm>
#include <cstddef>
#include <string>
#include <string_view>

#include "mend/base/utf8.h"
#include "mend/memory/lexical.h"

namespace mend::memory::internal {

// Whether a non-ASCII code point separates words, as FTS5's unicode61 tokenizer, which keeps only
// letters and numbers, treats it: spaces, punctuation and symbols from the blocks that hold
// nothing else (quotes and dashes of General Punctuation, the byte order mark, arrows, math and
// technical symbols, box drawing, CJK and fullwidth punctuation, emoji), and any invalid byte.
// Letters and numbers of every script stay inside words.
bool IsSeparatorRune(char32_t c);

// Bytes of the word character at `text[i]` (1 for ASCII letters and digits, 1..4 for a non-ASCII
// character that is no separator), or 0 when a separator starts there.
inline size_t WordCharAt(std::string_view text, size_t i) {
  const unsigned char c = static_cast<unsigned char>(text[i]);
  if (c < 0x80) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ? 1 : 0;
  }
  const Utf8Rune rune = DecodeUtf8Rune(text.substr(i));
  return rune.valid && !IsSeparatorRune(rune.code_point) ? rune.size : 0;
}

// Whether a token is a stop word (IsStopWord): FTS5 indexes it, mend's query leaves it out.
enum class TokenKind { kWord, kStopWord };

// Calls `fn(token, kind)` for every token of `text` as FTS5's unicode61 tokenizer cuts it
// (maximal runs of word characters, WordCharAt), ASCII lower-cased, stop words included, repeats
// included, in order. `token` points into `buffer` and is valid during the call only.
template <typename Fn>
void ForEachToken(std::string_view text, std::string& buffer, Fn&& fn) {
  size_t i = 0;
  while (i < text.size()) {
    size_t n = WordCharAt(text, i);
    if (n == 0) {
      const unsigned char c = static_cast<unsigned char>(text[i]);
      i += c < 0x80 ? 1 : std::max<size_t>(1, DecodeUtf8Rune(text.substr(i)).size);
      continue;
    }
    const size_t start = i;
    while (n > 0) {
      i += n;
      n = i < text.size() ? WordCharAt(text, i) : 0;
    }
    buffer.assign(text.substr(start, i - start));
    for (char& c : buffer) {
      if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
    }
    fn(std::string_view(buffer), IsStopWord(buffer) ? TokenKind::kStopWord : TokenKind::kWord);
  }
}

}  // namespace mend::memory::internal
