#pragma once

// `mend mcp serve --http` (docs/mcp.md, "Over HTTP"): an McpServer behind MCP's Streamable HTTP
// transport on one endpoint, /mcp. A POST carries one JSON-RPC message; a request is answered
// with application/json, a notification or response with 202. Sessions: initialize's answer
// carries Mcp-Session-Id, later requests must echo it (404 for one the server does not know),
// DELETE ends one. No server-initiated stream: GET is 405. The same guards as `mend serve`:
// loopback by default, a bearer token required for any other address, Host checked against DNS
// rebinding, cross-site requests refused.

#include <memory>
#include <string>

#include "mend/base/result.h"
#include "mend/mcp/server.h"
#include "mend/server/server.h"

namespace mend::server {

/// MCP over Streamable HTTP: an McpServer on the endpoint /mcp.
class McpHttpServer {
 public:
  /// `mcp` is borrowed and must outlive the server. kInvalidArgument for a non-loopback host
  /// without a token. Uses options.host, port, token, max_body_bytes and threads.
  static Result<std::unique_ptr<McpHttpServer>> Create(mcp::McpServer& mcp, ServerOptions options);
  virtual ~McpHttpServer() = default;

  /// Binds and serves on background threads; kUnavailable when the address cannot be bound.
  virtual Status Start() = 0;
  /// The bound port (after Start).
  virtual int port() const = 0;
  /// Stops accepting and waits for requests in flight. Idempotent.
  virtual void Stop() = 0;
};

}  // namespace mend::server
