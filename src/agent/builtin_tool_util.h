#pragma once

#include <functional>
#include <memory>
#include <nlohmann/json_fwd.hpp>
#include <string>

#include "agent/workspace_path.h"
#include "mend/agent/tool.h"
#include "mend/base/result.h"
#include "mend/base/subprocess.h"

namespace mend::agent {

// The body of a built-in tool: receives the parsed arguments (a JSON object).
using ToolFunction =
    std::function<Result<ToolResult>(const nlohmann::json& args, const ToolContext& ctx)>;

// A Tool made of a spec and a function. Execute parses the arguments and hands them over; text
// that is not a JSON object becomes an error result (the registry normally catches that first).
std::unique_ptr<Tool> MakeFunctionTool(ToolSpec spec, ToolFunction fn);

// An error result carrying a Status's message (path refusals, missing files, ...).
ToolResult ErrorResult(const Status& status);

// A file read through a workspace walk: its content (possibly only a head) and its size.
struct FileContent {
  std::string data;
  std::size_t size = 0;  // the file's size when opened
};

// Opens the walk's target (never following a symlink) and reads it. A file larger than
// `max_bytes` is kOutOfRange, or with `head_only` its first `max_bytes` are returned;
// kFailedPrecondition for a directory or anything but a regular file (a FIFO is not waited on);
// kPermissionDenied when the target became a symlink; errno-derived codes otherwise.
Result<FileContent> ReadTargetFile(const WorkspaceTarget& target, std::size_t max_bytes,
                                   bool head_only = false);

// Replaces the walk's target with `content` atomically: a temporary file is created next to it
// (openat, O_EXCL), written, fsync'd and renamed over the target with renameat, then the
// directory is fsync'd. A new file gets mode 0644 (before the umask); a replaced file keeps its
// mode. A directory there is kFailedPrecondition. The rename replaces a symlink that appeared
// there since the walk rather than following it.
Status WriteTargetFile(const WorkspaceTarget& target, const std::string& content);

// Shapes the outcome of a process run with `options` into the result the model sees: its stdout
// (capped, noting the cut), then "[exit code: N]"; an error result for a non-zero exit, a
// timeout ("timed out after 30s") or a death by signal. `what` names the process in messages.
ToolResult ProcessToolResult(const SubprocessResult& r, const SubprocessOptions& options,
                             std::string_view what);

// Factories of the individual built-ins.
std::unique_ptr<Tool> MakeReadFileTool();
std::unique_ptr<Tool> MakeWriteFileTool();
std::unique_ptr<Tool> MakeEditFileTool();
std::unique_ptr<Tool> MakeListDirTool();
std::unique_ptr<Tool> MakeGrepTool();
std::unique_ptr<Tool> MakeRunCommandTool();

}  // namespace mend::agent
