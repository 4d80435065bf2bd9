#include "mend/base/pattern.h"

#include <re2/re2.h>

#include <cstddef>
#include <nlohmann/json.hpp>
#include <string>

#include "mend/base/json.h"
#include "mend/base/utf8.h"

namespace mend {
namespace {

bool IsHexDigit(char c) {
  return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
}

// Rewrites the two ECMAScript spellings RE2 writes otherwise: a code point `\uXXXX` becomes
// `\x{XXXX}`, and a named group `(?<name>` becomes `(?P<name>` (outside a character class; `(?<=`
// and `(?<!` are lookbehind and stay, to be refused). Every other escape is copied as it is, so
// `\\u0041` stays a backslash followed by "u0041".
std::string ToRe2Syntax(std::string_view pattern) {
  std::string out;
  out.reserve(pattern.size());
  bool in_class = false;
  for (std::size_t i = 0; i < pattern.size(); ++i) {
    const char c = pattern[i];
    if (c == '\\' && i + 1 < pattern.size()) {
      if (pattern[i + 1] == 'u' && i + 6 <= pattern.size() && IsHexDigit(pattern[i + 2]) &&
          IsHexDigit(pattern[i + 3]) && IsHexDigit(pattern[i + 4]) && IsHexDigit(pattern[i + 5])) {
        out += "\\x{";
        out.append(pattern.substr(i + 2, 4));
        out += '}';
        i += 5;
      } else {
        out.append(pattern.substr(i, 2));
        ++i;
      }
      continue;
    }
    if (c == '[') in_class = true;
    if (c == ']') in_class = false;
    if (!in_class && pattern.substr(i, 3) == "(?<" && i + 3 < pattern.size() &&
        pattern[i + 3] != '=' && pattern[i + 3] != '!') {
      out += "(?P<";
      i += 2;
      continue;
    }
    out += c;
  }
  return out;
}

// What the author can do about RE2's refusal, beyond RE2's own words.
std::string Hint(const re2::RE2& re) {
  const std::string& arg = re.error_arg();
  const bool backreference = re.error_code() == re2::RE2::ErrorBadEscape && arg.size() >= 2 &&
                             ((arg[1] >= '1' && arg[1] <= '9') || arg[1] == 'k');
  const bool lookaround =
      arg.rfind("(?=", 0) == 0 || arg.rfind("(?!", 0) == 0 || arg.rfind("(?<", 0) == 0;
  if (backreference || lookaround) {
    return " (backreferences and lookaround are not supported: patterns are matched in linear "
           "time)";
  }
  return "";
}

}  // namespace

Result<Pattern> Pattern::Compile(std::string_view pattern) {
  re2::RE2::Options options;
  options.set_log_errors(false);
  options.set_never_capture(true);
  auto re = std::make_shared<const re2::RE2>(ToRe2Syntax(pattern), options);
  if (!re->ok()) {
    return InvalidArgumentError("invalid pattern " + DumpJson(std::string(pattern)) + ": " +
                                SanitizeUtf8(re->error()) + Hint(*re));
  }
  return Pattern(std::move(re));
}

bool Pattern::Search(std::string_view subject) const {
  return re2::RE2::PartialMatch(re2::StringPiece(subject.data(), subject.size()), *re_);
}

}  // namespace mend
