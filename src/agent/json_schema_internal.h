#pragma once

#include <cstddef>
#include <string_view>

#include "mend/base/pattern.h"
#include "mend/base/result.h"

namespace mend::agent::internal {

// True for the seven JSON Schema type names.
bool IsKnownTypeName(std::string_view name);

// At most this many compiled schema patterns are kept; the cache is emptied when it is full.
inline constexpr std::size_t kMaxCachedPatterns = 256;

// Compiles a schema's `pattern` (mend::Pattern: ECMAScript syntax, matched in linear time);
// kInvalidArgument naming it when it does not compile. Tool schemas are checked on every call
// with the same few patterns, and compiling one costs far more than a search (RE2 builds its
// whole program up front), so compiled patterns are kept, shared by every thread. Patterns the
// model writes (`grep`'s) go to Pattern::Compile directly and are not kept.
Result<Pattern> CompilePattern(std::string_view pattern);

}  // namespace mend::agent::internal
