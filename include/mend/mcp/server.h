#pragma once

// The server side of MCP (docs/mcp.md, "mend as an MCP server"): the protocol of `mend mcp
// serve`, independent of what its tools do and of the transport. A McpServer answers one
// JSON-RPC message at a time: initialize (with revision negotiation), ping, tools/list,
// tools/call, resources/list, resources/templates/list and resources/read.

#include <functional>
#include <mutex>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "mend/base/result.h"

namespace mend::mcp {

/// A tool the server offers. `call` gets the arguments (an object) and returns the structured
/// result (an object), sent as structuredContent and as its JSON text. A non-OK Status is an
/// isError result saying why, except kInvalidArgument for arguments that do not fit the schema,
/// which is the same isError result with the message (the spec: input errors are tool errors, so
/// the model can correct them).
struct ServedTool {
  std::string name;              ///< unique among the tools
  std::string title;             ///< for display
  std::string description;       ///< what the model reads
  nlohmann::json input_schema;   ///< an object schema
  nlohmann::json output_schema;  ///< null when none
  nlohmann::json annotations;    ///< readOnlyHint, destructiveHint, idempotentHint, openWorldHint
  std::function<Result<nlohmann::json>(const nlohmann::json& arguments)> call;  ///< runs a call
};

/// A resource the server offers, or a template of them (`uri` holds "{name}" parts).
struct ServedResource {
  std::string uri;                          ///< the URI, or the template with {name} parts
  std::string name;                         ///< a short name
  std::string description;                  ///< what it holds
  std::string mime_type = "text/markdown";  ///< its mimeType
};

/// What the server says about itself in initialize.
struct ServerIdentity {
  std::string name = "mend";  ///< serverInfo's name
  std::string version;        ///< serverInfo's version
  std::string instructions;   ///< sent in the initialize answer when not empty
};

/// The resources the server offers and how to read them.
struct ServedResources {
  std::vector<ServedResource> fixed;      ///< resources/list
  std::vector<ServedResource> templates;  ///< resources/templates/list
  /// The text of the resource at `uri`: kNotFound for a URI that names nothing (-32002).
  std::function<Result<std::string>(const std::string& uri)> read;
};

/// The protocol side of an MCP server (see the top of this file).
class McpServer {
 public:
  /// A server offering `tools` and `resources`.
  McpServer(ServerIdentity identity, std::vector<ServedTool> tools, ServedResources resources);

  /// The answer to one message (a line of stdio, a POST body), or nullopt when it needs none (a
  /// notification, a response). Never fails: malformed input gets a JSON-RPC error answer (-32700
  /// for text that is not JSON, -32600 for JSON that is not a valid message). Thread-safe for
  /// concurrent messages when the tools' calls are.
  std::optional<std::string> Handle(std::string_view message);

  /// The revision the last initialize agreed on ("" before one).
  std::string protocol_version() const;

 private:
  nlohmann::json Initialize(const nlohmann::json& params);
  Result<nlohmann::json> CallTool(const nlohmann::json& params);
  Result<nlohmann::json> ReadResource(const nlohmann::json& params);

  const ServerIdentity identity_;
  const std::vector<ServedTool> tools_;
  const ServedResources resources_;
  mutable std::mutex mu_;
  std::string protocol_version_;  // guarded by mu_
};

}  // namespace mend::mcp
