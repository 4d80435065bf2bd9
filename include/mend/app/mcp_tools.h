#pragma once

// The tools of an agent folder's MCP servers (docs/mcp.md, "An agent's MCP servers"): app starts
// each [[mcp_servers]] server, lists its tools and makes each one an agent::Tool named
// `<server>__<tool>`, which OpenAgent hands to the agent as AgentOptions::extra_tools. The agent
// never learns where these tools come from: shadow mode, approvals, the progress guard, output
// checks, checkpoints and traces apply to them as to built-in tools.

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "mend/agent/agent_spec.h"
#include "mend/agent/tool.h"
#include "mend/base/result.h"
#include "mend/mcp/client.h"

namespace mend::obs {
class EventBus;
}

namespace mend::app {

/// Looks up an environment variable for ${VAR} in env and headers; nullopt when unset.
using VariableLookup = std::function<std::optional<std::string>(const std::string& name)>;
/// The process environment.
VariableLookup ProcessVariables();

/// How StartMcpTools starts the servers.
struct McpToolsOptions {
  std::string workspace;  ///< a stdio server's working directory when it names none
  /// Optional: where mcp.server_started, mcp.server_log and mcp.server_exited go.
  obs::EventBus* events = nullptr;
  VariableLookup variables = ProcessVariables();  ///< resolves ${VAR} in env and headers
  std::string client_version;                     ///< sent in initialize; empty: mend's version
};

/// One server's tool as the agent sees it, for `mend mcp list` and tests.
struct McpToolView {
  std::string server;              ///< the [[mcp_servers]] name
  std::string name;                ///< `<server>__<tool>`
  mcp::ToolInfo info;              ///< the tool as the server lists it
  bool read_only = false;          ///< runs in shadow mode
  bool requires_approval = false;  ///< a person approves each call
  bool schema_checked = true;      ///< false: passed through, the checker cannot use it
};

/// What StartMcpTools gives an agent. The servers live as long as any of `tools` does.
struct McpTools {
  std::vector<std::shared_ptr<agent::Tool>> tools;  ///< for AgentOptions::extra_tools
  std::vector<std::string> read_only;               ///< names of `tools` that run in shadow mode
  std::vector<McpToolView> views;                   ///< one per tool of `tools`
  /// Each started server: its name, protocol revision and server info.
  struct Server {
    ///@{
    /// The [[mcp_servers]] name, the protocol revision agreed on, and the serverInfo the server
    /// sent.
    std::string name;
    std::string protocol_version;
    nlohmann::json server_info;
    ///@}
  };
  std::vector<Server> servers;  ///< in start order
};

/// Starts the servers of `spec.mcp_servers` in order, each initialized and its tools listed.
/// Errors name the server and the agent.toml line: a ${VAR} that is not set (kInvalidArgument), a
/// program that cannot be started (kNotFound / kPermissionDenied), a server that does not answer,
/// speaks another revision or lists malformed tools, a tool of the allow-list the server does not
/// have. Servers started before the error are shut down. No servers: an empty McpTools.
Result<McpTools> StartMcpTools(const agent::AgentSpec& spec, McpToolsOptions options);

/// `<server>__<tool>` with every character outside [A-Za-z0-9_-] replaced by '_'; nullopt when
/// the name would be longer than 64 characters (the limit of tool names for the model APIs).
std::optional<std::string> McpToolName(const std::string& server, const std::string& tool);

}  // namespace mend::app
