#pragma once

#include <cstdint>
#include <iosfwd>
#include <string>
#include <string_view>
#include <vector>

#include "mend/store/run_page.h"

namespace mend::cli {

// Prints `rows` (the first is the header) as left-aligned columns two spaces apart, without
// trailing blanks.
void PrintColumns(const std::vector<std::vector<std::string>>& rows, std::ostream& out);

// `text` as one shell word: unchanged when it is plain, else in single quotes, for the commands
// the CLI prints for a person to run next.
std::string ShellWord(std::string_view text);

// The flags that repeat `query`'s filters on another page (" --limit 5 --status failed,waiting
// --agent fixer"); --limit only when it is not `default_limit`. For `mend pending` and `mend runs`.
std::string RunFilterFlags(const store::PendingQuery& query, int64_t default_limit);

}  // namespace mend::cli
