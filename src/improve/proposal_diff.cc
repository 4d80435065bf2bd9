#include "mend/improve/proposal_diff.h"

#include <algorithm>
#include <cstddef>
#include <dtl/dtl.hpp>
#include <string>
#include <vector>

namespace mend::improve {
namespace {

constexpr std::size_t kContext = 3;

// Lines keep their '\n', so a last line without one differs from the same text with one.
std::vector<std::string> SplitLines(std::string_view text) {
  std::vector<std::string> lines;
  std::size_t start = 0;
  while (start < text.size()) {
    std::size_t end = text.find('\n', start);
    end = end == std::string_view::npos ? text.size() : end + 1;
    lines.emplace_back(text.substr(start, end - start));
    start = end;
  }
  return lines;
}

struct Op {
  char tag;  // ' ', '-' or '+'
  std::string line;
};

std::vector<Op> EditScript(const std::vector<std::string>& a, const std::vector<std::string>& b) {
  // Deletions first within a change, as diff(1) prints them.
  dtl::Diff<std::string, std::vector<std::string>> diff(a, b, true);
  diff.compose();
  std::vector<Op> ops;
  for (const auto& [line, info] : diff.getSes().getSequence()) {
    const char tag = info.type == dtl::SES_ADD ? '+' : info.type == dtl::SES_DELETE ? '-' : ' ';
    ops.push_back({tag, line});
  }
  return ops;
}

std::string Range(std::size_t first_line, std::size_t count) {
  // diff(1) names an empty range by the line before it.
  std::string out = std::to_string(count == 0 ? first_line - 1 : first_line);
  if (count != 1) out += "," + std::to_string(count);
  return out;
}

// Appends the hunk covering ops[begin, end); old_line/new_line are the 1-based numbers of the
// first old/new line at `begin`.
void AppendHunk(const std::vector<Op>& ops, std::size_t begin, std::size_t end,
                std::size_t old_line, std::size_t new_line, std::string& out) {
  std::size_t old_count = 0;
  std::size_t new_count = 0;
  for (std::size_t i = begin; i < end; ++i) {
    old_count += ops[i].tag != '+' ? 1 : 0;
    new_count += ops[i].tag != '-' ? 1 : 0;
  }
  out += "@@ -" + Range(old_line, old_count) + " +" + Range(new_line, new_count) + " @@\n";
  for (std::size_t i = begin; i < end; ++i) {
    out += ops[i].tag;
    out += ops[i].line;
    if (ops[i].line.empty() || ops[i].line.back() != '\n')
      out += "\n\\ No newline at end of file\n";
  }
}

std::string HeaderPath(std::string_view path) {
  std::string out(path);
  for (char& c : out) {
    if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) c = '?';
  }
  return out;
}

}  // namespace

std::string UnifiedDiff(std::string_view path, std::string_view before, std::string_view after) {
  if (before == after) return "";
  const std::vector<Op> ops = EditScript(SplitLines(before), SplitLines(after));
  std::string out = "--- a/" + HeaderPath(path) + "\n+++ b/" + HeaderPath(path) + "\n";
  // Line numbers at each op, so a hunk can start anywhere.
  std::vector<std::size_t> old_at(ops.size() + 1, 1);
  std::vector<std::size_t> new_at(ops.size() + 1, 1);
  for (std::size_t i = 0; i < ops.size(); ++i) {
    old_at[i + 1] = old_at[i] + (ops[i].tag != '+' ? 1 : 0);
    new_at[i + 1] = new_at[i] + (ops[i].tag != '-' ? 1 : 0);
  }
  std::size_t i = 0;
  while (i < ops.size()) {
    if (ops[i].tag == ' ') {
      ++i;
      continue;
    }
    const std::size_t begin = i >= kContext ? i - kContext : 0;
    // Extend the hunk while at most 2 × context unchanged lines separate it from the next change.
    std::size_t last_change = i;
    std::size_t j = i + 1;
    while (j < ops.size() && j - last_change <= 2 * kContext + 1) {
      if (ops[j].tag != ' ') last_change = j;
      ++j;
    }
    const std::size_t end = std::min(ops.size(), last_change + 1 + kContext);
    AppendHunk(ops, begin, end, old_at[begin], new_at[begin], out);
    i = end;
  }
  return out;
}

}  // namespace mend::improve
