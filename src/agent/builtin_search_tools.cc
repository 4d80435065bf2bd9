// list_dir and grep.

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <sstream>

#include "agent/builtin_tool_util.h"
#include "agent/workspace_path.h"
#include "mend/base/json.h"
#include "mend/base/pattern.h"
#include "mend/base/utf8.h"

namespace mend::agent {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

constexpr std::size_t kMaxListedEntries = 1000;
constexpr std::size_t kMaxGreppedFileBytes = 1024 * 1024;
constexpr std::int64_t kDefaultGrepResults = 100;
constexpr std::size_t kMaxShownLineBytes = 300;

std::string OptionalPath(const json& args) {
  const auto it = args.find("path");
  return it != args.end() && it->is_string() ? it->get<std::string>() : std::string();
}

// Opens the walk's target as a directory; "is not a directory" for anything else.
Result<UniqueFd> OpenTargetDir(const WorkspaceTarget& target) {
  return OpenTarget(target, O_RDONLY | O_DIRECTORY);
}

// The entries of the open directory `fd` (consumed), without "." and "..", each with whether it
// is a directory (a symlink is not, whatever it points to).
Result<std::vector<std::pair<std::string, bool>>> ReadDirectory(UniqueFd fd) {
  DIR* dir = fdopendir(fd.get());
  if (dir == nullptr) return ErrnoToStatus(errno, "list");
  fd.Release();  // owned by `dir` now
  std::vector<std::pair<std::string, bool>> entries;
  while (dirent* entry = readdir(dir)) {
    const std::string name = entry->d_name;
    if (name == "." || name == "..") continue;
    bool is_dir = entry->d_type == DT_DIR;
    if (entry->d_type == DT_UNKNOWN) {
      struct stat st;
      is_dir =
          fstatat(dirfd(dir), name.c_str(), &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISDIR(st.st_mode);
    }
    entries.emplace_back(name, is_dir);
  }
  closedir(dir);
  return entries;
}

Result<ToolResult> ListDir(const json& args, const ToolContext& ctx) {
  const std::string path = OptionalPath(args);
  Result<WorkspaceTarget> target =
      WalkWorkspace(ctx.workspace, path, PathUse::kRead, /*create_parents=*/false);
  if (!target.ok()) return ErrorResult(target.status());
  Result<UniqueFd> fd = OpenTargetDir(*target);
  if (!fd.ok()) {
    if (fd.status().code() == StatusCode::kPermissionDenied) return ErrorResult(fd.status());
    return ToolResult::Error(path + " is not a directory");
  }
  Result<std::vector<std::pair<std::string, bool>>> entries = ReadDirectory(*std::move(fd));
  if (!entries.ok()) return ToolResult::Error(path + ": cannot " + entries.status().ToString());
  std::vector<std::string> names;
  for (const auto& [name, is_dir] : *entries) names.push_back(name + (is_dir ? "/" : ""));
  if (names.empty()) return ToolResult::Ok("(empty directory)");
  std::sort(names.begin(), names.end());
  std::string out;
  for (std::size_t i = 0; i < names.size() && i < kMaxListedEntries; ++i) out += names[i] + "\n";
  if (names.size() > kMaxListedEntries) {
    out += "[" + std::to_string(names.size() - kMaxListedEntries) + " more entries not shown]\n";
  }
  return ToolResult::Ok(out);
}

// Adds the regular files under the open directory `fd` to `files`, as paths relative to the
// workspace (`prefix` is the directory's). Directories are entered by openat(O_NOFOLLOW), never by
// name from the root; symlinks are skipped (they may lead out of the workspace), and so are .git
// directories and anything that cannot be opened.
void CollectFiles(UniqueFd fd, const std::string& prefix, std::vector<fs::path>& files) {
  const int dir = fd.get();
  UniqueFd listing(fcntl(dir, F_DUPFD_CLOEXEC, 0));
  DIR* stream = listing.valid() ? fdopendir(listing.get()) : nullptr;
  if (stream == nullptr) return;
  listing.Release();  // owned by `stream` now
  std::vector<std::pair<std::string, bool>> entries;
  while (dirent* entry = readdir(stream)) {
    const std::string name = entry->d_name;
    if (name == "." || name == "..") continue;
    struct stat st;
    if (fstatat(dir, name.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0) continue;
    if (S_ISREG(st.st_mode) || (S_ISDIR(st.st_mode) && name != ".git")) {
      entries.emplace_back(name, S_ISDIR(st.st_mode));
    }
  }
  closedir(stream);
  for (const auto& [name, is_dir] : entries) {
    const std::string shown = prefix.empty() ? name : prefix + "/" + name;
    if (!is_dir) {
      files.emplace_back(shown);
      continue;
    }
    UniqueFd sub(openat(dir, name.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
    if (sub.valid()) CollectFiles(std::move(sub), shown, files);
  }
}

bool LooksBinary(const std::string& content) {
  return content.find('\0', 0) < std::min<std::size_t>(content.size(), 8192);
}

struct GrepState {
  std::size_t max_results;
  std::vector<std::string> hits;
  bool more = false;
};

void GrepFile(const Pattern& re, const std::string& content, const std::string& shown_path,
              GrepState& state) {
  std::istringstream in(content);
  std::string line;
  for (std::size_t number = 1; std::getline(in, line); ++number) {
    if (!re.Search(line)) continue;
    if (state.hits.size() == state.max_results) {
      state.more = true;
      return;
    }
    state.hits.push_back(shown_path + ":" + std::to_string(number) + ": " +
                         SanitizeUtf8(TruncateUtf8Bytes(line, kMaxShownLineBytes)));
  }
}

Result<ToolResult> Grep(const json& args, const ToolContext& ctx) {
  const std::string path = OptionalPath(args);
  Result<WorkspaceTarget> target =
      WalkWorkspace(ctx.workspace, path, PathUse::kRead, /*create_parents=*/false);
  if (!target.ok()) return ErrorResult(target.status());
  Result<Pattern> re = Pattern::Compile(args.value("pattern", std::string()));
  if (!re.ok()) return ErrorResult(re.status());
  GrepState state{static_cast<std::size_t>(args.value("max_results", kDefaultGrepResults)), {}};
  std::vector<fs::path> files;
  if (Result<UniqueFd> dir = OpenTargetDir(*target); dir.ok()) {
    CollectFiles(*std::move(dir), target->relative, files);
  } else {
    struct stat st;
    if (fstatat(target->dir.get(), target->name.c_str(), &st, AT_SYMLINK_NOFOLLOW) == 0 &&
        S_ISREG(st.st_mode)) {
      files.emplace_back(target->relative);
    }
  }
  std::sort(files.begin(), files.end());
  for (const fs::path& file : files) {
    if (state.more) break;
    // Each file is reached again by a walk from the root, so a directory swapped for a symlink
    // since it was listed cannot lead the read out of the workspace.
    Result<WorkspaceTarget> file_target =
        WalkWorkspace(ctx.workspace, file.string(), PathUse::kRead, /*create_parents=*/false);
    if (!file_target.ok()) continue;
    Result<FileContent> content = ReadTargetFile(*file_target, kMaxGreppedFileBytes);
    if (!content.ok() || LooksBinary(content->data)) continue;
    GrepFile(*re, content->data, file.string(), state);
  }
  if (state.hits.empty()) return ToolResult::Ok("no matches");
  std::string out;
  for (const std::string& hit : state.hits) out += hit + "\n";
  if (state.more) {
    out += "[stopped after " + std::to_string(state.max_results) + " matches]\n";
  }
  return ToolResult::Ok(out);
}

}  // namespace

std::unique_ptr<Tool> MakeListDirTool() {
  ToolSpec spec{"list_dir",
                "List a directory of the workspace (default: its top). Directories end in '/'.",
                R"({"type":"object","properties":{
                  "path":{"type":"string","description":"path relative to the workspace"}},
                  "additionalProperties":false})",
                /*read_only=*/true, /*requires_approval=*/false};
  return MakeFunctionTool(std::move(spec), ListDir);
}

std::unique_ptr<Tool> MakeGrepTool() {
  ToolSpec spec{"grep",
                "Search text files under `path` (default: the whole workspace) for lines matching "
                "a regular expression (ECMAScript syntax; no backreferences or lookaround). Prints "
                "file:line: text.",
                R"({"type":"object","properties":{
                  "pattern":{"type":"string","minLength":1},
                  "path":{"type":"string","description":"file or directory, relative"},
                  "max_results":{"type":"integer","minimum":1,"maximum":1000}},
                  "required":["pattern"],"additionalProperties":false})",
                /*read_only=*/true, /*requires_approval=*/false};
  return MakeFunctionTool(std::move(spec), Grep);
}

}  // namespace mend::agent
