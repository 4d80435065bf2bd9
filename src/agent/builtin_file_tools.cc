// read_file, write_file and edit_file.

#include <filesystem>
#include <fstream>
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
  Result<std::string> resolved = ResolveInWorkspace(ctx.workspace, path, PathUse::kRead);
  if (!resolved.ok()) return ErrorResult(resolved.status());
  const Result<std::optional<std::int64_t>> offset = GetOptionalInt64(args, "offset");
  const Result<std::optional<std::int64_t>> limit = GetOptionalInt64(args, "limit");
  if (!offset.ok()) return ErrorResult(offset.status());
  if (!limit.ok()) return ErrorResult(limit.status());
  const bool whole = !offset->has_value() && !limit->has_value();
  // Without a line range only the part that can be shown is read; with one, the whole file (up
  // to the edit limit) so lines can be counted.
  const std::size_t max_read = whole ? ctx.max_output_bytes : kMaxEditableBytes;
  std::error_code ec;
  const auto size = std::filesystem::file_size(*resolved, ec);
  if (whole && !ec && size > max_read) {
    std::ifstream in(*resolved, std::ios::binary);
    std::string head(max_read, '\0');
    in.read(head.data(), static_cast<std::streamsize>(max_read));
    head.resize(static_cast<std::size_t>(in.gcount()));
    return ToolResult::Ok(CapOutput(head, ctx.max_output_bytes, size));
  }
  Result<std::string> content = ReadWholeFile(*resolved, max_read);
  if (!content.ok()) return ErrorResult(content.status().Annotate(path));
  if (whole) return ToolResult::Ok(content->empty() ? "(empty file)" : *std::move(content));
  Result<std::string> lines = SelectLines(*content, offset->value_or(1), *limit, path);
  if (!lines.ok()) return ErrorResult(lines.status());
  return ToolResult::Ok(*std::move(lines));
}

Result<ToolResult> WriteFile(const json& args, const ToolContext& ctx) {
  const std::string path = PathArg(args);
  Result<std::string> resolved = ResolveInWorkspace(ctx.workspace, path, PathUse::kWrite);
  if (!resolved.ok()) return ErrorResult(resolved.status());
  const std::string content = args.value("content", std::string());
  std::error_code ec;
  const std::filesystem::path target(*resolved);
  if (std::filesystem::is_directory(target, ec)) {
    return ToolResult::Error(path + " is a directory");
  }
  // The parent was resolved inside the workspace, and the components still missing are plain
  // names, so creating them cannot leave it.
  std::filesystem::create_directories(target.parent_path(), ec);
  if (ec) return ToolResult::Error(path + ": cannot create parent directories: " + ec.message());
  if (Status s = WriteWholeFile(*resolved, content); !s.ok()) return ErrorResult(s.Annotate(path));
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
  Result<std::string> resolved = ResolveInWorkspace(ctx.workspace, path, PathUse::kRead);
  if (!resolved.ok()) return ErrorResult(resolved.status());
  Result<std::string> content = ReadWholeFile(*resolved, kMaxEditableBytes);
  if (!content.ok()) return ErrorResult(content.status().Annotate(path));
  const std::size_t count = CountOccurrences(*content, old_string);
  if (count == 0) return ToolResult::Error("old_string not found in " + path);
  if (count > 1) {
    return ToolResult::Error("old_string occurs " + std::to_string(count) + " times in " + path +
                             "; include more surrounding text so it matches exactly once");
  }
  content->replace(content->find(old_string), old_string.size(), new_string);
  if (Status s = WriteWholeFile(*resolved, *content); !s.ok()) return ErrorResult(s.Annotate(path));
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
