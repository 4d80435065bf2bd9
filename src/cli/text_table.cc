// Columns and shell words for the CLI's tables and the commands they suggest.
#include "cli/text_table.h"

#include <algorithm>
#include <cctype>
#include <ostream>

namespace mend::cli {

void PrintColumns(const std::vector<std::vector<std::string>>& rows, std::ostream& out) {
  std::vector<size_t> widths;
  for (const auto& row : rows) {
    if (widths.size() < row.size()) widths.resize(row.size(), 0);
    for (size_t c = 0; c < row.size(); ++c) widths[c] = std::max(widths[c], row[c].size());
  }
  for (const auto& row : rows) {
    std::string line;
    for (size_t c = 0; c < row.size(); ++c) {
      line += row[c];
      if (c + 1 < row.size()) line += std::string(widths[c] + 2 - row[c].size(), ' ');
    }
    while (!line.empty() && line.back() == ' ') line.pop_back();
    out << line << "\n";
  }
}

std::string ShellWord(std::string_view text) {
  const bool plain = !text.empty() && std::all_of(text.begin(), text.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) != 0 ||
           std::string_view("_-./:=@%+,").find(c) != std::string_view::npos;
  });
  if (plain) return std::string(text);
  std::string quoted = "'";
  for (char c : text) quoted += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return quoted + "'";
}

std::string RunFilterFlags(const store::PendingQuery& query, int64_t default_limit) {
  std::string flags;
  if (query.limit != static_cast<size_t>(default_limit)) {
    flags += " --limit " + std::to_string(query.limit);
  }
  for (size_t i = 0; i < query.statuses.size(); ++i) {
    flags += (i == 0 ? " --status " : ",") + std::string(store::RunStatusName(query.statuses[i]));
  }
  if (!query.agent.empty()) flags += " --agent " + ShellWord(query.agent);
  return flags;
}

}  // namespace mend::cli
