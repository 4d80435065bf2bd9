#pragma once

// agent.toml's [[mcp_servers]] tables (docs/mcp.md, "An agent's MCP servers"). Included only by
// agent_folder*.cc.

#include <toml++/toml.h>

#include <string>
#include <vector>

#include "mend/agent/agent_spec.h"
#include "mend/base/result.h"

namespace mend::agent::folder_internal {

// The [[mcp_servers]] of `agent_toml` (the parsed agent.toml at `path`), in the file's order; none
// when absent. Needs `spec.dir`. Errors are kInvalidArgument "<path>:<line>: mcp_servers[<i>]...".
Result<std::vector<McpServerSpec>> ParseMcpServers(const toml::table& agent_toml,
                                                   const std::string& path, const AgentSpec& spec);

// Whether `value` uses ${VAR} correctly: every "${" is closed by "}" around a name of
// [A-Za-z_][A-Za-z0-9_]*. kInvalidArgument naming the problem otherwise.
Status CheckVariableReferences(std::string_view value);

}  // namespace mend::agent::folder_internal
