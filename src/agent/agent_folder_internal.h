#pragma once

// Pieces of the agent-folder loader (agent_folder*.cc) shared between its files. Not a public API.

#include <string>
#include <string_view>
#include <vector>

#include "mend/agent/agent_spec.h"
#include "mend/base/file_system.h"
#include "mend/base/result.h"

namespace mend::agent::folder_internal {

// Text files of an agent folder larger than this are rejected: they end up in every prompt.
inline constexpr size_t kMaxTextFileBytes = 256 * 1024;

// True for names matching [a-z0-9][a-z0-9_-]{0,63} (agents, skills, command tools).
bool IsValidName(std::string_view name);
inline constexpr std::string_view kNameRule =
    "1 to 64 characters of a-z, 0-9, '_' and '-', starting with a letter or digit";

// "<path>:<line>: <what>" as kInvalidArgument.
Status ErrorAt(const std::string& path, int line, std::string_view what);

// " (did you mean <prefix>X?)" for the closest of `candidates` within two edits of `word`, or ""
// when none is that close.
std::string DidYouMean(std::string_view word, const std::vector<std::string>& candidates,
                       std::string_view prefix = "");

// Reads a text file of the folder: kInvalidArgument naming `path` when it is larger than
// kMaxTextFileBytes or not valid UTF-8 (with the line of the first bad byte).
Result<std::string> ReadTextFile(FileSystem& fs, const std::string& path);

// Names of the entries of `dir` ending in `suffix`, sorted; an absent directory has none.
Result<std::vector<std::string>> ListFilesWithSuffix(FileSystem& fs, const std::string& dir,
                                                     std::string_view suffix);

// skills/*.md of the folder `dir`, sorted by file name, with unique names.
Result<std::vector<SkillSpec>> LoadSkills(FileSystem& fs, const std::string& dir);
// A skill and where its name is written, for errors about duplicates.
struct ParsedSkill {
  SkillSpec skill;
  int name_line = 0;
};

// Parses one skill file. `rel_path` is relative to the agent folder ("skills/x.md"); errors name
// `display_path`.
Result<ParsedSkill> ParseSkill(std::string_view text, const std::string& rel_path,
                               const std::string& display_path);

// tools/*.toml of the folder `dir`, sorted by file name, with unique names that are not built-in.
Result<std::vector<CommandToolSpec>> LoadCommandTools(FileSystem& fs, const std::string& dir);

}  // namespace mend::agent::folder_internal
