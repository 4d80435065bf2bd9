#pragma once

// How MCP messages travel between mend's client and a server (docs/mcp.md, "Transports"). A
// transport moves whole messages (serialised JSON-RPC, mcp/jsonrpc.h) and knows nothing of what
// they mean; the client (mcp/client.h) does the rest. stdio and Streamable HTTP implement it;
// the stateless revision to come can be one more.

#include <chrono>
#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "mend/base/result.h"

namespace mend::mcp {

/// Carries whole messages between the client and one server.
class Transport {
 public:
  /// Each message the server sends, in order, on the transport's own thread.
  using MessageFn = std::function<void(std::string message)>;
  /// Once, when the transport can carry no more messages for a reason other than Close (the
  /// server exited, wrote past the message limit, the connection broke).
  using ClosedFn = std::function<void(Status why)>;

  virtual ~Transport() = default;

  /// Connects (starts the server process). Errors: kNotFound / kPermissionDenied for a program
  /// that cannot be started, kUnavailable for a server that cannot be reached.
  virtual Status Start(MessageFn on_message, ClosedFn on_closed) = 0;
  /// Sends one message; thread-safe. kUnavailable once closed.
  virtual Status Send(const std::string& message) = 0;
  /// Shuts down and waits until done; no callback runs after it returns. Idempotent.
  virtual void Close() = 0;

  /// "stdio: npx -y server" or the URL, for messages.
  virtual std::string Describe() const = 0;
  /// What the server wrote on stderr lately (stdio), at most a few KiB; "" when none.
  virtual std::string StderrTail() const { return ""; }
  /// The session the server assigned (Streamable HTTP's Mcp-Session-Id); "" when none.
  virtual std::string SessionId() const { return ""; }
  /// Told the negotiated revision once initialize succeeded (HTTP sends it as a header).
  virtual void SetProtocolVersion(const std::string& /*version*/) {}
};

/// A server started as a child process, speaking newline-delimited JSON-RPC on its stdin and
/// stdout (docs/mcp.md, "stdio").
struct StdioOptions {
  std::vector<std::string> argv;       ///< the server command; argv[0] is looked up in PATH
  std::string cwd;                     ///< the server's working directory
  std::vector<std::string> extra_env;  ///< NAME=VALUE, on top of mend's child environment
  /// Each line of the server's stderr (its log), at most max_stderr_lines of them; the rest are
  /// counted and reported once when the transport closes. Runs on the transport's thread.
  std::function<void(const std::string& line)> on_stderr;
  int max_stderr_lines = 200;  ///< see on_stderr
  /// Shutdown: stdin is closed, then SIGTERM after `grace`, then SIGKILL after `grace` again, each
  /// to the server's whole process group.
  std::chrono::milliseconds grace{2000};
};

/// kInvalidArgument for an empty argv. The process starts in Start().
Result<std::unique_ptr<Transport>> MakeStdioTransport(StdioOptions options);

/// A server behind one URL, spoken to over MCP's Streamable HTTP (docs/mcp.md, "Streamable HTTP"):
/// each message is a POST; a request's answer is one JSON message or a stream of server-sent
/// events that ends with the response. The transport keeps the session the server assigns
/// (Mcp-Session-Id), sends the negotiated revision (MCP-Protocol-Version) once told it, resumes a
/// broken event stream (GET with Last-Event-ID) and ends the session with DELETE on Close.
///
/// Send returns at once: each message is posted on a thread of its own, and what comes back is
/// handed to on_message one message at a time, in the order each answer carried it. A
/// notification or response is posted only after those sent before it were accepted, so the
/// server sees notifications/initialized before the requests that follow it. The transport closes
/// (on_closed) when an answer is an HTTP error: kUnauthenticated for 401 and 403, kUnavailable for
/// 5xx and for 404 to a request that carried the session (the session expired),
/// kResourceExhausted for 429 and for a message over kMaxMessageBytes, kInvalidArgument for other
/// statuses; the message names the status and the first 200 bytes of the body. It also closes
/// with kUnavailable for an unreachable server, a stream that broke off and could not be resumed,
/// a request answered with no message, or a malformed Mcp-Session-Id, and with kDeadlineExceeded
/// for a request still unanswered after request_timeout. Header values are never logged or put
/// into a message.
struct HttpOptions {
  std::string url;  ///< http:// or https://
  /// Sent with every request (Authorization, ...). Not the ones the transport sets itself
  /// (Accept, Content-Type, Mcp-Session-Id, MCP-Protocol-Version, Last-Event-ID, ...).
  std::vector<std::pair<std::string, std::string>> headers;
  std::chrono::milliseconds connect_timeout{10'000};  ///< opening a connection
  /// How long one POST may take end to end, its SSE stream included.
  std::chrono::milliseconds request_timeout{600'000};
  /// How many times in a row a broken stream is resumed (GET with Last-Event-ID) without the
  /// server sending a new event in between; the server's "retry" delay is waited before each.
  int max_resumptions = 3;
};

/// kInvalidArgument for a URL that is not http(s), a header that is not a valid name and value
/// or one the transport sets itself, a timeout that is not positive, or negative max_resumptions.
/// Nothing is sent before Start(), which itself sends nothing: the first message (initialize)
/// makes the first connection.
Result<std::unique_ptr<Transport>> MakeHttpTransport(HttpOptions options);

}  // namespace mend::mcp
