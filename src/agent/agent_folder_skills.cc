// skills/*.md: a front matter block of `key: value` lines between two `---` lines, then the
// Markdown body. The block is deliberately a tiny YAML subset (no nesting, no lists) so the
// loader can name the exact line of every mistake without a YAML library.

#include <map>
#include <optional>

#include "agent/agent_folder_internal.h"
#include "mend/base/utf8.h"

namespace mend::agent::folder_internal {
namespace {

struct Line {
  std::string_view text;  // without the line break (and a trailing '\r')
  size_t end = 0;         // offset just past the line break
};

std::vector<Line> SplitLines(std::string_view text) {
  std::vector<Line> lines;
  size_t start = 0;
  while (start < text.size()) {
    size_t newline = text.find('\n', start);
    const size_t stop = newline == std::string_view::npos ? text.size() : newline;
    std::string_view line = text.substr(start, stop - start);
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    start = newline == std::string_view::npos ? text.size() : newline + 1;
    lines.push_back({line, start});
  }
  return lines;
}

bool IsDelimiter(std::string_view line) { return Trim(line) == "---"; }

// The value of a `key: value` line without its quotes; std::nullopt for an unterminated quote.
std::optional<std::string> Unquote(std::string_view value) {
  if (value.empty() || (value[0] != '"' && value[0] != '\'')) return std::string(value);
  const char quote = value[0];
  if (value.size() < 2 || value.back() != quote) return std::nullopt;
  value = value.substr(1, value.size() - 2);
  std::string out;
  for (size_t i = 0; i < value.size(); ++i) {
    if (quote == '"' && value[i] == '\\' && i + 1 < value.size()) {
      const char next = value[++i];
      out += next == 'n' ? '\n' : next == 't' ? '\t' : next;
    } else if (quote == '\'' && value[i] == '\'' && i + 1 < value.size() && value[i + 1] == '\'') {
      out += value[i++];  // '' is a single quote inside single quotes
    } else {
      out += value[i];
    }
  }
  return out;
}

struct FrontMatterValue {
  std::string value;
  int line = 0;
};

// Parses lines [first, last) of the front matter into `values`.
Status ParseFrontMatter(const std::vector<Line>& lines, size_t first, size_t last,
                        const std::string& path, std::map<std::string, FrontMatterValue>& values) {
  static const std::vector<std::string> kKeys = {"name", "description"};
  for (size_t i = first; i < last; ++i) {
    const int line = static_cast<int>(i) + 1;
    const std::string_view text = Trim(lines[i].text);
    if (text.empty() || text[0] == '#') continue;
    const size_t colon = text.find(':');
    if (colon == std::string_view::npos) {
      return ErrorAt(path, line, "expected `key: value` in the front matter");
    }
    const std::string key(Trim(text.substr(0, colon)));
    if (key != "name" && key != "description") {
      return ErrorAt(path, line,
                     "unknown front matter key " + key + DidYouMean(key, kKeys) +
                         "; accepted keys: name, description");
    }
    if (values.count(key) != 0) {
      return ErrorAt(path, line,
                     key + " is already set on line " + std::to_string(values[key].line));
    }
    std::optional<std::string> value = Unquote(Trim(text.substr(colon + 1)));
    if (!value.has_value())
      return ErrorAt(path, line, "the quoted value of " + key + " is not closed");
    values[key] = {std::move(*value), line};
  }
  return OkStatus();
}

}  // namespace

Result<ParsedSkill> ParseSkill(std::string_view text, const std::string& rel_path,
                               const std::string& display_path) {
  const std::vector<Line> lines = SplitLines(text);
  if (lines.empty() || !IsDelimiter(lines[0].text)) {
    return ErrorAt(display_path, 1,
                   "missing front matter: the file must start with a `---` line, then `name:` and "
                   "`description:` lines, then `---`");
  }
  size_t close = 1;
  while (close < lines.size() && !IsDelimiter(lines[close].text)) ++close;
  if (close == lines.size()) {
    return ErrorAt(display_path, 1, "the front matter opened here is not closed by a `---` line");
  }
  std::map<std::string, FrontMatterValue> values;
  MEND_RETURN_IF_ERROR(ParseFrontMatter(lines, 1, close, display_path, values));
  for (const char* key : {"name", "description"}) {
    if (values.count(key) == 0 || values[key].value.empty()) {
      return ErrorAt(display_path, values.count(key) ? values[key].line : 1,
                     std::string("the front matter needs a non-empty ") + key + ":");
    }
  }
  if (!IsValidName(values["name"].value)) {
    return ErrorAt(
        display_path, values["name"].line,
        "invalid skill name \"" + values["name"].value + "\": use " + std::string(kNameRule));
  }
  ParsedSkill parsed;
  parsed.skill.name = values["name"].value;
  parsed.skill.description = values["description"].value;
  parsed.skill.body = std::string(text.substr(lines[close].end));
  parsed.skill.path = rel_path;
  parsed.name_line = values["name"].line;
  return parsed;
}

Result<std::vector<SkillSpec>> LoadSkills(FileSystem& fs, const std::string& dir) {
  const std::string skills_dir = JoinPath(dir, "skills");
  MEND_ASSIGN_OR_RETURN(std::vector<std::string> files, ListFilesWithSuffix(fs, skills_dir, ".md"));
  std::vector<SkillSpec> skills;
  for (const std::string& file : files) {
    const std::string rel_path = JoinPath("skills", file);
    const std::string path = JoinPath(dir, rel_path);
    MEND_ASSIGN_OR_RETURN(std::string text, ReadTextFile(fs, path));
    MEND_ASSIGN_OR_RETURN(ParsedSkill parsed, ParseSkill(text, rel_path, path));
    for (const SkillSpec& earlier : skills) {
      if (earlier.name == parsed.skill.name) {
        return ErrorAt(
            path, parsed.name_line,
            "duplicate skill name \"" + earlier.name + "\" (also in " + earlier.path + ")");
      }
    }
    skills.push_back(std::move(parsed.skill));
  }
  return skills;
}

}  // namespace mend::agent::folder_internal
