#pragma once

// How MCP messages travel between mend's client and a server (docs/mcp.md, "Transports"). A
// transport moves whole messages (serialised JSON-RPC, mcp/jsonrpc.h) and knows nothing of what
// they mean; the client (mcp/client.h) does the rest. stdio and Streamable HTTP implement it;
// the stateless revision to come can be one more.

#include <chrono>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "mend/base/result.h"

namespace mend::mcp {

class Transport {
 public:
  // Each message the server sends, in order, on the transport's own thread.
  using MessageFn = std::function<void(std::string message)>;
  // Once, when the transport can carry no more messages for a reason other than Close (the
  // server exited, wrote past the message limit, the connection broke).
  using ClosedFn = std::function<void(Status why)>;

  virtual ~Transport() = default;

  // Connects (starts the server process). Errors: kNotFound / kPermissionDenied for a program
  // that cannot be started, kUnavailable for a server that cannot be reached.
  virtual Status Start(MessageFn on_message, ClosedFn on_closed) = 0;
  // Sends one message; thread-safe. kUnavailable once closed.
  virtual Status Send(const std::string& message) = 0;
  // Shuts down and waits until done; no callback runs after it returns. Idempotent.
  virtual void Close() = 0;

  // "stdio: npx -y server" or the URL, for messages.
  virtual std::string Describe() const = 0;
  // What the server wrote on stderr lately (stdio), at most a few KiB; "" when none.
  virtual std::string StderrTail() const { return ""; }
  // The session the server assigned (Streamable HTTP's Mcp-Session-Id); "" when none.
  virtual std::string SessionId() const { return ""; }
  // Told the negotiated revision once initialize succeeded (HTTP sends it as a header).
  virtual void SetProtocolVersion(const std::string& /*version*/) {}
};

// A server started as a child process, speaking newline-delimited JSON-RPC on its stdin and
// stdout (docs/mcp.md, "stdio").
struct StdioOptions {
  std::vector<std::string> argv;
  std::string cwd;
  std::vector<std::string> extra_env;  // NAME=VALUE, on top of mend's child environment
  // Each line of the server's stderr (its log), at most max_stderr_lines of them; the rest are
  // counted and reported once when the transport closes. Runs on the transport's thread.
  std::function<void(const std::string& line)> on_stderr;
  int max_stderr_lines = 200;
  // Shutdown: stdin is closed, then SIGTERM after `grace`, then SIGKILL after `grace` again, each
  // to the server's whole process group.
  std::chrono::milliseconds grace{2000};
};

// kInvalidArgument for an empty argv. The process starts in Start().
Result<std::unique_ptr<Transport>> MakeStdioTransport(StdioOptions options);

}  // namespace mend::mcp
