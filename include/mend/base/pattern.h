#pragma once

// Pattern, regular expressions matched in time linear in the subject (RE2), for the patterns agent
// authors and models write: tool schemas, the grep tool, output checks (docs/security.md).
// Immutable and thread-safe.

#include <memory>
#include <string_view>

#include "mend/base/result.h"

namespace re2 {
class RE2;
}  // namespace re2

namespace mend {

/// A regular expression whose search takes time linear in the subject, whatever the pattern.
/// mend matches patterns that agent authors and models write (a tool schema's `pattern`, the
/// `grep` tool, output checks) against text that models and tools produce, so no pattern may
/// hang a run or exhaust the stack. RE2 does the matching: a pattern like `(a*)*b`, which makes
/// a backtracking engine take exponential time, costs RE2 one pass over the subject.
///
/// The syntax is ECMAScript's (JSON Schema's `pattern`) as far as RE2 has it: classes, escapes
/// (`\d \w \s \b`, `\uXXXX`), anchors, groups (also `(?:...)` and named `(?<name>...)`),
/// alternation and every quantifier, lazy ones included. Backreferences and lookaround need
/// backtracking and are refused when compiling, with a message that says so. Patterns and subjects
/// are read as UTF-8: `.` and classes take one code point; a byte that is not valid UTF-8 is
/// matched by no class, and a pattern that is not valid UTF-8 is refused. Where RE2 differs from
/// ECMAScript: `\s` is ASCII whitespace only, and `.` excludes `\n` but not `\r`, U+2028 or U+2029.
/// Copies share the compiled program; a Pattern is immutable and safe to use from several threads.
class Pattern {
 public:
  /// kInvalidArgument naming the pattern and the reason when it does not compile, or when its
  /// program would need more than a few megabytes.
  static Result<Pattern> Compile(std::string_view pattern);

  /// Whether the pattern matches somewhere in `subject`.
  bool Search(std::string_view subject) const;

 private:
  explicit Pattern(std::shared_ptr<const re2::RE2> re) : re_(std::move(re)) {}

  std::shared_ptr<const re2::RE2> re_;
};

}  // namespace mend
