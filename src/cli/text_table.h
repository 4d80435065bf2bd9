#pragma once

#include <iosfwd>
#include <string>
#include <string_view>
#include <vector>

namespace mend::cli {

// Prints `rows` (the first is the header) as left-aligned columns two spaces apart, without
// trailing blanks.
void PrintColumns(const std::vector<std::vector<std::string>>& rows, std::ostream& out);

// `text` as one shell word: unchanged when it is plain, else in single quotes, for the commands
// the CLI prints for a person to run next.
std::string ShellWord(std::string_view text);

}  // namespace mend::cli
