#pragma once

#include <chrono>
#include <cstddef>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "mend/agent/tool.h"
#include "mend/base/file_system.h"
#include "mend/base/result.h"

namespace mend::agent {

struct AgentLimits {
  int max_steps = 50;  // model turns
  double max_cost_usd = 1.0;
  std::chrono::seconds max_wall{600};
};

struct SkillSpec {
  std::string name;
  std::string description;
  std::string body;  // the Markdown after the front matter
  std::string path;  // relative to the agent folder
};

// An external command tool from tools/*.toml: arguments as JSON on stdin, result on stdout,
// non-zero exit = tool error.
struct CommandToolSpec {
  ToolSpec spec;
  std::vector<std::string> command;  // argv; run in the workspace
  std::optional<std::chrono::milliseconds> timeout;
  std::string path;  // relative to the agent folder
};

// Per-tool settings from agent.toml's [tool_options.<name>] tables, for the step loop to apply to
// the ToolContext of every call of that tool. Unset fields keep the loop's defaults.
struct ToolOptions {
  std::optional<std::chrono::milliseconds> timeout;  // timeout_seconds
  std::optional<size_t> max_output_bytes;
};

// A loaded, validated agent folder (DESIGN.md §6):
//   agent.toml        name, model, tools, [limits], [tool_options.<name>]
//   instructions.md   the system prompt
//   skills/*.md       front matter (name, description) + body
//   tools/*.toml      external command tools
struct AgentSpec {
  std::string dir;  // the folder it was loaded from
  std::string name;
  std::string description;
  std::string model;  // empty: the configured model
  std::string instructions;
  std::vector<std::string> tools;  // built-in and external tool names enabled, in order
  AgentLimits limits;
  std::vector<SkillSpec> skills;
  std::vector<CommandToolSpec> command_tools;  // every tool defined in tools/*.toml, by file name
  std::map<std::string, ToolOptions> tool_options;  // keyed by tool name; only enabled tools
  // agent.toml's `workspace` joined to `dir` when relative (so it is absolute when `dir` is);
  // empty when not set: the caller runs in the current directory.
  std::string workspace;
  // Lowercase hex SHA-256 of agent.toml's bytes (run fingerprints, run_origin.h).
  std::string agent_toml_sha256;
};

// Loads and validates an agent folder through `fs` (the format is docs/agent_folder.md). Errors
// are kInvalidArgument (kNotFound for a missing folder or agent.toml) whose message names the
// file, the line when known, and what is wrong:
// "agents/x/agent.toml:4: limits.max_steps must be an integer between 1 and 10000, got -3".
// Failures to read an existing file keep the filesystem's code. Thread-safe if `fs` is.
Result<AgentSpec> LoadAgentFolder(FileSystem& fs, const std::string& dir);

}  // namespace mend::agent
