#pragma once

#include <string_view>

#include "mend/base/pattern.h"
#include "mend/base/result.h"

namespace mend::agent::internal {

// True for the seven JSON Schema type names.
bool IsKnownTypeName(std::string_view name);

// Compiles a `pattern` (mend::Pattern: ECMAScript syntax, matched in linear time);
// kInvalidArgument naming it when it does not compile.
Result<Pattern> CompilePattern(std::string_view pattern);

}  // namespace mend::agent::internal
