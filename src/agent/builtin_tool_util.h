#pragma once

#include <functional>
#include <memory>
#include <nlohmann/json_fwd.hpp>
#include <string>

#include "agent/subprocess.h"
#include "mend/agent/tool.h"
#include "mend/base/result.h"

namespace mend::agent {

// The body of a built-in tool: receives the parsed arguments (a JSON object).
using ToolFunction =
    std::function<Result<ToolResult>(const nlohmann::json& args, const ToolContext& ctx)>;

// A Tool made of a spec and a function. Execute parses the arguments and hands them over; text
// that is not a JSON object becomes an error result (the registry normally catches that first).
std::unique_ptr<Tool> MakeFunctionTool(ToolSpec spec, ToolFunction fn);

// An error result carrying a Status's message (path refusals, missing files, ...).
ToolResult ErrorResult(const Status& status);

// Reads the file at `path` (absolute). kOutOfRange when it is larger than `max_bytes`;
// kFailedPrecondition for a directory; errno-derived codes otherwise.
Result<std::string> ReadWholeFile(const std::string& path, std::size_t max_bytes);

// Replaces the file at `path` (absolute) with `content`, creating it with mode 0644 when new. A
// symlink as the last component is refused (the path comes already resolved).
Status WriteWholeFile(const std::string& path, const std::string& content);

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
