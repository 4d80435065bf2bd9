#pragma once

// ToolRegistry, the tools one agent may call, by name: it owns them, checks a call's arguments
// against the tool's schema and invokes it. Register everything first; lookups and calls are then
// thread-safe.

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "mend/agent/tool.h"
#include "mend/base/status.h"
#include "mend/llm/types.h"

namespace mend::agent {

/// The tools one agent may call, by name. The registry owns its tools. Register() is not
/// thread-safe; once registration is done, Find/Names/Specs may be called concurrently, and
/// Invoke is as thread-safe as the tool it calls.
class ToolRegistry {
 public:
  ToolRegistry();
  ~ToolRegistry();
  ToolRegistry(const ToolRegistry&) = delete;
  ToolRegistry& operator=(const ToolRegistry&) = delete;

  /// Adds `tool`. kInvalidArgument when the tool is null, its name is empty or not made of
  /// [A-Za-z0-9_-], or its parameters are not valid JSON or not a usable JSON Schema object
  /// (the message names the tool); kAlreadyExists when a tool of that name is registered.
  Status Register(std::unique_ptr<Tool> tool);

  /// The tool called `name`, or nullptr. The pointer stays valid for the registry's lifetime.
  Tool* Find(std::string_view name) const;

  /// Tool names in registration order.
  std::vector<std::string> Names() const;

  /// What the model is told about each tool, in registration order.
  std::vector<llm::ToolDefinition> Specs() const;

  /// Runs one tool call from the model. Never fails the run: every problem becomes an error result
  /// the model can read and react to —
  ///   unknown tool            "unknown tool \"x\"; available: a, b"
  ///   malformed JSON          "invalid JSON arguments for tool x: ...; arguments began: \"...\""
  ///   not an object / schema  "invalid arguments for tool x: $.path: expected string, got number"
  ///   tool returns non-OK     "tool x failed: INTERNAL: ..."
  ///   tool throws             "tool x failed: unexpected exception: ..."
  /// Empty or all-white-space arguments count as "{}" (some models send nothing for tools without
  /// parameters). The content of every result is made valid UTF-8 (invalid bytes become U+FFFD)
  /// and, when longer than ctx.max_output_bytes plus 4 KiB, cut to ctx.max_output_bytes at a
  /// character boundary with a final line "[output truncated: N of M bytes shown]" (the slack
  /// lets tools that cut their own captured output append short notes such as an exit code).
  ToolResult Invoke(std::string_view name, std::string_view arguments_json, const ToolContext& ctx);

 private:
  struct Entry;
  std::vector<Entry> entries_;
};

}  // namespace mend::agent
