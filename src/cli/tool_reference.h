#pragma once

#include <string>

#include "mend/base/result.h"

namespace mend::cli {

// docs/tools.md: the reference of the built-in tools, made from each tool's own spec (its
// description, JSON Schema, read-only and approval flags), so the page cannot drift from what the
// model is offered. `mend tool-reference` (a command left out of --help) prints it;
// tests/cli/tool_reference_test.cc fails when the page in the repository differs. kInternal when a
// built-in's schema does not parse (a programming error the tests catch).
Result<std::string> ToolReferenceMarkdown();

}  // namespace mend::cli
