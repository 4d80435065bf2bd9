#pragma once

// The key table of docs/configuration.md, made from the configuration schema itself
// (`mend config reference`), so the page cannot drift from the keys mend reads.

#include <string>
#include <vector>

#include "mend/base/config.h"

namespace mend::cli {

// The Markdown table of `schema`, one row per key in schema order, ending in a newline:
// | key | type | default | accepted | environment | flag | shown | meaning |
// The type is the key's, or `list`; the default is the schema's, `{user_home}` written `$HOME` and
// `{home}` written `<home>`, with sizes in MiB beside byte counts; accepted is the range, the
// choices, "any" for a free string, and whether config.toml may set it; environment variables
// under MEND_QUALITY_REFLEXION_ are written with the prefix `R_`, and fallback variables follow
// the key's own; shown is how `mend config show` prints the value; meaning is the key's help.
std::string RenderConfigReference(const std::vector<ConfigKeySpec>& schema);

}  // namespace mend::cli
