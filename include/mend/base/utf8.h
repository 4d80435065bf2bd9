#pragma once

// UTF-8 helpers for text that comes from models, users and files. Every function accepts arbitrary
// bytes. A byte that does not begin a well-formed sequence (a stray continuation byte, a truncated
// sequence, an overlong form, a surrogate U+D800..U+DFFF or a value above U+10FFFF) counts as one
// invalid unit of one byte, exactly as Go's utf8.DecodeRune and `for range` over a string see it,
// so counts and cut points agree with the Go tool whose files we share. All functions are pure and
// thread-safe.

#include <cstddef>
#include <string>
#include <string_view>

namespace mend {

inline constexpr char32_t kUtf8ReplacementChar = 0xFFFD;  ///< U+FFFD, which replaces invalid bytes

/// One decoded unit of a UTF-8 string.
struct Utf8Rune {
  char32_t code_point;  ///< kUtf8ReplacementChar when !valid.
  std::size_t size;     ///< Bytes consumed: 1..4; 1 when !valid; 0 only for empty input.
  bool valid;           ///< a well-formed sequence
};

/// Decodes the first unit of `s`. Empty input yields {U+FFFD, 0, false}.
Utf8Rune DecodeUtf8Rune(std::string_view s);

/// Appends the UTF-8 encoding of `code_point` to `out`; surrogates and values above U+10FFFF are
/// encoded as U+FFFD.
void AppendUtf8(char32_t code_point, std::string& out);

/// True when `s` is entirely well-formed UTF-8.
bool IsValidUtf8(std::string_view s);

/// `s` with every invalid byte replaced by U+FFFD (one replacement per byte, as Go's encoding/json
/// does). Valid input comes back unchanged.
std::string SanitizeUtf8(std::string_view s);

/// SanitizeUtf8, and every NUL byte replaced by U+FFFD too: text a database's text column takes
/// (PostgreSQL's refuses both). Clean input comes back unchanged.
std::string SanitizeUtf8WithoutNul(std::string_view s);

/// The number of units in `s` (code points, plus one per invalid byte).
std::size_t CountUtf8Chars(std::string_view s);

/// The longest prefix of `s` of at most `max_bytes` bytes that does not split a code point. Invalid
/// bytes are kept as they are; well-formed input yields well-formed output.
std::string TruncateUtf8Bytes(std::string_view s, std::size_t max_bytes);

/// The prefix of `s` holding its first `max_code_points` units (see CountUtf8Chars); `s` itself
/// when it is shorter. This is the "cut to N characters" of the prompts (docs/reflexion.md).
/// Invalid bytes are kept as they are; well-formed input yields well-formed output.
std::string TruncateUtf8Chars(std::string_view s, std::size_t max_code_points);

/// True for the code points Go's unicode.IsSpace accepts: ASCII `\t \n \v \f \r` and space, U+0085,
/// U+00A0, U+1680, U+2000..U+200A, U+2028, U+2029, U+202F, U+205F and U+3000.
bool IsUnicodeSpace(char32_t code_point);

/// Splits `s` on runs of white space (IsUnicodeSpace) and joins the pieces with one ASCII space:
/// leading and trailing white space disappear. Non-space bytes are copied unchanged.
std::string CollapseWhitespace(std::string_view s);

/// `s` without leading and trailing white space (IsUnicodeSpace). The result views `s`'s bytes, so
/// it must not outlive them.
std::string_view Trim(std::string_view s);

/// `s` with 'A'..'Z' mapped to 'a'..'z'; every other byte unchanged.
std::string ToLowerAscii(std::string_view s);

/// The simple (one-to-one) Unicode lower-case mapping of `c`, as Go's unicode.ToLower gives it
/// (U+0130 becomes 'i'); `c` itself when it has none.
char32_t ToLowerRune(char32_t c);

/// `s` lower-cased rune by rune with ToLowerRune, as Go's strings.ToLower does: every invalid byte
/// becomes U+FFFD, so the result is always valid UTF-8.
std::string ToLowerUtf8(std::string_view s);

}  // namespace mend
