#pragma once

// The built-in tools (docs/tools.md). All of them work inside ToolContext::workspace:
//   read_file    {path, offset?, limit?}          read_only; offset/limit count lines (1-based)
//   write_file   {path, content}                  creates parent directories in the workspace
//   edit_file    {path, old_string, new_string}   old_string must occur exactly once
//   list_dir     {path?}                          read_only; sorted, directories end in '/'
//   grep         {pattern, path?, max_results?}   read_only; ECMAScript regex, "file:line: text"
//   run_command  {command}                        /bin/sh -c in the workspace; requires_approval
//   ask_human    {question}                       read_only; handled by the run loop
// Paths are relative to the workspace; absolute paths, ".." escapes and symlinks leading out are
// refused with an error result.
//
// MakeBuiltinTool creates one; RegisterBuiltinTools registers those an agent enables.

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "mend/agent/tool.h"
#include "mend/agent/tool_registry.h"
#include "mend/base/result.h"

namespace mend::agent {

/// The name of the tool the run loop answers itself by waiting for a person. Its Execute only
/// returns an error result ("ask_human must be handled by the run loop").
inline constexpr std::string_view kAskHumanToolName = "ask_human";

/// The names above, in that order.
std::vector<std::string> BuiltinToolNames();

/// Whether `name` is one of the built-in tools.
bool IsBuiltinTool(std::string_view name);

/// A new instance of the built-in tool `name`; kNotFound naming the built-ins otherwise.
Result<std::unique_ptr<Tool>> MakeBuiltinTool(std::string_view name);

/// Registers, in order, each name of `enabled` that is a built-in tool; other names (external
/// command tools) are skipped for the caller to register. Errors are those of
/// ToolRegistry::Register (kAlreadyExists for a name listed twice or already registered).
Status RegisterBuiltinTools(ToolRegistry& registry, const std::vector<std::string>& enabled);

}  // namespace mend::agent
