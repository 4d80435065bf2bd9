// Small helpers shared by the agent-folder loader's files.

#include <algorithm>

#include "agent/agent_folder_internal.h"
#include "mend/base/edit_distance.h"
#include "mend/base/utf8.h"

namespace mend::agent::folder_internal {

bool IsValidName(std::string_view name) {
  if (name.empty() || name.size() > 64) return false;
  auto lower_or_digit = [](char c) { return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9'); };
  if (!lower_or_digit(name[0])) return false;
  return std::all_of(name.begin(), name.end(),
                     [&](char c) { return lower_or_digit(c) || c == '_' || c == '-'; });
}

Status ErrorAt(const std::string& path, int line, std::string_view what) {
  return InvalidArgumentError(path + ":" + std::to_string(line) + ": " + std::string(what));
}

std::string DidYouMean(std::string_view word, const std::vector<std::string>& candidates,
                       std::string_view prefix) {
  const std::string* best = nullptr;
  size_t best_distance = 3;  // more edits than two is not a typo
  for (const std::string& candidate : candidates) {
    const size_t d = EditDistance(word, candidate);
    if (d < best_distance) best = &candidate, best_distance = d;
  }
  if (best == nullptr) return "";
  return " (did you mean " + std::string(prefix) + *best + "?)";
}

namespace {

// The 1-based line of the first byte of `text` that is not part of well-formed UTF-8, or 0.
int FirstInvalidUtf8Line(std::string_view text) {
  int line = 1;
  for (size_t i = 0; i < text.size();) {
    const Utf8Rune rune = DecodeUtf8Rune(text.substr(i));
    if (!rune.valid) return line;
    if (text[i] == '\n') ++line;
    i += rune.size;
  }
  return 0;
}

}  // namespace

Result<std::string> ReadTextFile(FileSystem& fs, const std::string& path) {
  MEND_ASSIGN_OR_RETURN(FileInfo info, fs.Stat(path));
  if (info.is_directory) return InvalidArgumentError(path + ": is a directory, expected a file");
  auto too_large = [&](size_t size) {
    return InvalidArgumentError(path + ": file is " + std::to_string(size) +
                                " bytes; the limit is " + std::to_string(kMaxTextFileBytes));
  };
  if (info.size > kMaxTextFileBytes) return too_large(info.size);
  MEND_ASSIGN_OR_RETURN(std::string text, ReadFileToString(fs, path));
  if (text.size() > kMaxTextFileBytes) return too_large(text.size());  // grew since Stat
  if (const int line = FirstInvalidUtf8Line(text); line != 0) {
    return ErrorAt(path, line, "not valid UTF-8");
  }
  return text;
}

Result<std::vector<std::string>> ListFilesWithSuffix(FileSystem& fs, const std::string& dir,
                                                     std::string_view suffix) {
  Result<FileInfo> info = fs.Stat(dir);
  if (!info.ok() && info.status().code() == StatusCode::kNotFound) {
    return std::vector<std::string>{};
  }
  MEND_RETURN_IF_ERROR(info);
  if (!info->is_directory) return InvalidArgumentError(dir + ": expected a directory");
  MEND_ASSIGN_OR_RETURN(std::vector<std::string> names, fs.List(dir));
  std::vector<std::string> matching;
  for (std::string& name : names) {
    // Hidden files are editor backups and the like, not part of the agent.
    if (name.size() <= suffix.size() || name[0] == '.') continue;
    if (name.compare(name.size() - suffix.size(), suffix.size(), suffix) != 0) continue;
    matching.push_back(std::move(name));
  }
  std::sort(matching.begin(), matching.end());
  return matching;
}

}  // namespace mend::agent::folder_internal
