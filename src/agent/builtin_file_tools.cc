// read_file, write_file and edit_file.

#include <nlohmann/json.hpp>
#include <sstream>

#include "agent/builtin_tool_util.h"
#include "agent/tool_output.h"
#include "agent/workspace_path.h"
#include "mend/base/json.h"

namespace mend::agent {
namespace {

using nlohmann::json;

// edit_file reads the whole file into memory; larger files are refused.
constexpr std::size_t kMaxEditableBytes = 16 * 1024 * 1024;

std::string PathArg(const json& args) {
  const auto it = args.find("path");
  return it != args.end() && it->is_string() ? it->get<std::string>() : std::string();
}

// The lines [offset, offset + limit) of `content`, 1-based, with their line ends.
Result<std::string> SelectLines(const std::string& content, std::int64_t offset,
                                std::optional<std::int64_t> limit, const std::string& path) {
  std::istringstream in(content);
  std::string line, out;
  std::int64_t number = 0, taken = 0;
  while (std::getline(in, line)) {
    if (++number < offset) continue;
    if (limit && taken >= *limit) break;
    out += line;
    if (!in.eof()) out += '\n';
    ++taken;
  }
  if (offset > 1 && taken == 0) {
    return OutOfRangeError("offset " + std::to_string(offset) + " is past the end of " + path +
                           " (" + std::to_string(number) + " lines)");
  }
  return out;
}

Result<ToolResult> ReadFile(const json& args, const ToolContext& ctx) {
  const std::string path = PathArg(args);
  Result<WorkspaceTarget> target =
      WalkWorkspace(ctx.workspace, path, PathUse::kRead, /*create_parents=*/false);
  if (!target.ok()) return ErrorResult(target.status());
  const Result<std::optional<std::int64_t>> offset = GetOptionalInt64(args, "offset");
  const Result<std::optional<std::int64_t>> limit = GetOptionalInt64(args, "limit");
  if (!offset.ok()) return ErrorResult(offset.status());
  if (!limit.ok()) return ErrorResult(limit.status());
  const bool whole = !offset->has_value() && !limit->has_value();
  // Without a line range only the part that can be shown is read; with one, the whole file (up
  // to the edit limit) so lines can be counted.
  const std::size_t max_read = whole ? ctx.max_output_bytes : kMaxEditableBytes;
  Result<FileContent> file = ReadTargetFile(*target, max_read, /*head_only=*/whole);
  if (!file.ok()) return ErrorResult(file.status().Annotate(path));
  if (whole && file->size > max_read) {
    return ToolResult::Ok(CapOutput(file->data, ctx.max_output_bytes, file->size));
  }
  if (whole) return ToolResult::Ok(file->data.empty() ? "(empty file)" : std::move(file->data));
  Result<std::string> lines = SelectLines(file->data, offset->value_or(1), *limit, path);
  if (!lines.ok()) return ErrorResult(lines.status());
  return ToolResult::Ok(*std::move(lines));
}

Result<ToolResult> WriteFile(const json& args, const ToolContext& ctx) {
  const std::string path = PathArg(args);
  // Refusals (absolute, "..", symlinks leading out) come before anything is created.
  if (Result<std::string> checked = ResolveInWorkspace(ctx.workspace, path, PathUse::kWrite);
      !checked.ok()) {
    return ErrorResult(checked.status());
  }
  const std::string content = args.value("content", std::string());
  Result<WorkspaceTarget> target =
      WalkWorkspace(ctx.workspace, path, PathUse::kWrite, /*create_parents=*/true);
  if (!target.ok()) {
    if (target.status().code() != StatusCode::kFailedPrecondition &&
        target.status().code() != StatusCode::kPermissionDenied) {
      return ToolResult::Error(
          path + ": cannot create parent directories: " + std::string(target.status().message()));
    }
    return ErrorResult(target.status());
  }
  if (Status s = WriteTargetFile(*target, content); !s.ok()) {
    if (s.message() == "is a directory") return ToolResult::Error(path + " is a directory");
    return ErrorResult(s.Annotate(path));
  }
  return ToolResult::Ok("wrote " + std::to_string(content.size()) + " bytes to " + path);
}

std::size_t CountOccurrences(const std::string& haystack, const std::string& needle) {
  std::size_t count = 0;
  for (std::size_t pos = haystack.find(needle); pos != std::string::npos;
       pos = haystack.find(needle, pos + 1)) {
    ++count;
  }
  return count;
}

Result<ToolResult> EditFile(const json& args, const ToolContext& ctx) {
  const std::string path = PathArg(args);
  const std::string old_string = args.value("old_string", std::string());
  const std::string new_string = args.value("new_string", std::string());
  if (old_string.empty()) return ToolResult::Error("old_string must not be empty");
  Result<WorkspaceTarget> target =
      WalkWorkspace(ctx.workspace, path, PathUse::kRead, /*create_parents=*/false);
  if (!target.ok()) return ErrorResult(target.status());
  Result<FileContent> file = ReadTargetFile(*target, kMaxEditableBytes);
  if (!file.ok()) return ErrorResult(file.status().Annotate(path));
  std::string* content = &file->data;
  const std::size_t count = CountOccurrences(*content, old_string);
  if (count == 0) return ToolResult::Error("old_string not found in " + path);
  if (count > 1) {
    return ToolResult::Error("old_string occurs " + std::to_string(count) + " times in " + path +
                             "; include more surrounding text so it matches exactly once");
  }
  content->replace(content->find(old_string), old_string.size(), new_string);
  // Written back through the same directory descriptor the file was read from.
  if (Status s = WriteTargetFile(*target, *content); !s.ok()) return ErrorResult(s.Annotate(path));
  return ToolResult::Ok("edited " + path + ": replaced 1 occurrence");
}

}  // namespace

std::unique_ptr<Tool> MakeReadFileTool() {
  ToolSpec spec{"read_file",
                "Read a text file in the workspace. Optionally return only `limit` lines starting "
                "at line `offset` (1-based).",
                R"({"type":"object","properties":{
                  "path":{"type":"string","description":"path relative to the workspace"},
                  "offset":{"type":"integer","minimum":1,"description":"first line, 1-based"},
                  "limit":{"type":"integer","minimum":1,"description":"number of lines"}},
                  "required":["path"],"additionalProperties":false})",
                /*read_only=*/true, /*requires_approval=*/false};
  return MakeFunctionTool(std::move(spec), ReadFile);
}

std::unique_ptr<Tool> MakeWriteFileTool() {
  ToolSpec spec{"write_file",
                "Create or replace a file in the workspace with `content`; missing parent "
                "directories are created.",
                R"({"type":"object","properties":{
                  "path":{"type":"string","description":"path relative to the workspace"},
                  "content":{"type":"string"}},
                  "required":["path","content"],"additionalProperties":false})",
                /*read_only=*/false, /*requires_approval=*/false};
  return MakeFunctionTool(std::move(spec), WriteFile);
}

std::unique_ptr<Tool> MakeEditFileTool() {
  ToolSpec spec{"edit_file",
                "Replace the one occurrence of `old_string` in a file with `new_string`. Fails "
                "when old_string is missing or occurs more than once.",
                R"({"type":"object","properties":{
                  "path":{"type":"string","description":"path relative to the workspace"},
                  "old_string":{"type":"string","minLength":1},
                  "new_string":{"type":"string"}},
                  "required":["path","old_string","new_string"],"additionalProperties":false})",
                /*read_only=*/false, /*requires_approval=*/false};
  return MakeFunctionTool(std::move(spec), EditFile);
}

}  // namespace mend::agent
