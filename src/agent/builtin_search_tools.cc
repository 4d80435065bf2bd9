// list_dir and grep.

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <regex>
#include <sstream>

#include "agent/builtin_tool_util.h"
#include "agent/json_schema_internal.h"
#include "agent/workspace_path.h"
#include "mend/base/json.h"
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

Result<ToolResult> ListDir(const json& args, const ToolContext& ctx) {
  const std::string path = OptionalPath(args);
  Result<std::string> resolved = ResolveInWorkspace(ctx.workspace, path, PathUse::kRead);
  if (!resolved.ok()) return ErrorResult(resolved.status());
  std::error_code ec;
  if (!fs::is_directory(*resolved, ec)) return ToolResult::Error(path + " is not a directory");
  std::vector<std::string> names;
  for (fs::directory_iterator it(*resolved, ec), end; !ec && it != end; it.increment(ec)) {
    std::error_code type_ec;
    const bool dir = it->symlink_status(type_ec).type() == fs::file_type::directory;
    names.push_back(it->path().filename().string() + (dir ? "/" : ""));
  }
  if (ec) return ToolResult::Error(path + ": cannot list: " + ec.message());
  if (names.empty()) return ToolResult::Ok("(empty directory)");
  std::sort(names.begin(), names.end());
  std::string out;
  for (std::size_t i = 0; i < names.size() && i < kMaxListedEntries; ++i) out += names[i] + "\n";
  if (names.size() > kMaxListedEntries) {
    out += "[" + std::to_string(names.size() - kMaxListedEntries) + " more entries not shown]\n";
  }
  return ToolResult::Ok(out);
}

// Files to search under `root`, sorted. Symlinks are skipped (they may lead out of the
// workspace), and so are .git directories.
std::vector<fs::path> FilesUnder(const fs::path& root) {
  std::error_code ec;
  if (fs::symlink_status(root, ec).type() == fs::file_type::regular) return {root};
  std::vector<fs::path> files;
  fs::recursive_directory_iterator it(root, fs::directory_options::skip_permission_denied, ec);
  for (fs::recursive_directory_iterator end; !ec && it != end; it.increment(ec)) {
    std::error_code type_ec;
    const fs::file_type type = it->symlink_status(type_ec).type();
    if (type == fs::file_type::directory && it->path().filename() == ".git") {
      it.disable_recursion_pending();
    } else if (type == fs::file_type::regular) {
      files.push_back(it->path());
    }
  }
  std::sort(files.begin(), files.end());
  return files;
}

bool LooksBinary(const std::string& content) {
  return content.find('\0', 0) < std::min<std::size_t>(content.size(), 8192);
}

struct GrepState {
  std::size_t max_results;
  std::vector<std::string> hits;
  std::size_t skipped_lines = 0;
  bool more = false;
};

void GrepFile(const std::regex& re, const std::string& content, const std::string& shown_path,
              GrepState& state) {
  std::istringstream in(content);
  std::string line;
  for (std::size_t number = 1; std::getline(in, line); ++number) {
    Result<bool> matched = internal::PatternSearch(re, line);
    if (!matched.ok()) ++state.skipped_lines;
    if (!matched.ok() || !*matched) continue;
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
  Result<std::string> resolved = ResolveInWorkspace(ctx.workspace, path, PathUse::kRead);
  if (!resolved.ok()) return ErrorResult(resolved.status());
  Result<std::regex> re = internal::CompilePattern(args.value("pattern", std::string()));
  if (!re.ok()) return ErrorResult(re.status());
  GrepState state{static_cast<std::size_t>(args.value("max_results", kDefaultGrepResults)), {}};
  Result<std::string> root = ResolveInWorkspace(ctx.workspace, "", PathUse::kRead);
  if (!root.ok()) return ErrorResult(root.status());
  for (const fs::path& file : FilesUnder(*resolved)) {
    if (state.more) break;
    std::error_code ec;
    if (fs::file_size(file, ec) > kMaxGreppedFileBytes || ec) continue;
    Result<std::string> content = ReadWholeFile(file.string(), kMaxGreppedFileBytes);
    if (!content.ok() || LooksBinary(*content)) continue;
    GrepFile(*re, *content, file.lexically_relative(*root).string(), state);
  }
  if (state.hits.empty()) return ToolResult::Ok("no matches");
  std::string out;
  for (const std::string& hit : state.hits) out += hit + "\n";
  if (state.more) {
    out += "[stopped after " + std::to_string(state.max_results) + " matches]\n";
  }
  if (state.skipped_lines > 0) {
    out += "[" + std::to_string(state.skipped_lines) + " lines too long to search]\n";
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
                "an ECMAScript regular expression. Prints file:line: text.",
                R"({"type":"object","properties":{
                  "pattern":{"type":"string","minLength":1},
                  "path":{"type":"string","description":"file or directory, relative"},
                  "max_results":{"type":"integer","minimum":1,"maximum":1000}},
                  "required":["pattern"],"additionalProperties":false})",
                /*read_only=*/true, /*requires_approval=*/false};
  return MakeFunctionTool(std::move(spec), Grep);
}

}  // namespace mend::agent
