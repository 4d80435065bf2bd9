#pragma once

#include <regex>
#include <string_view>

#include "mend/base/result.h"

namespace mend::agent::internal {

// Strings longer than this are not matched against a `pattern`: libstdc++'s regex engine
// recurses per input character and could exhaust the stack on hostile input.
inline constexpr std::size_t kMaxPatternSubjectBytes = 4096;

// True for the seven JSON Schema type names.
bool IsKnownTypeName(std::string_view name);

// Compiles an ECMAScript `pattern`; kInvalidArgument naming it when it does not compile.
Result<std::regex> CompilePattern(std::string_view pattern);

// Whether `re` matches somewhere in `subject`. kInvalidArgument when the subject is longer than
// kMaxPatternSubjectBytes or the engine gives up (too complex).
Result<bool> PatternSearch(const std::regex& re, std::string_view subject);

}  // namespace mend::agent::internal
