#pragma once

// mend's MCP client (docs/mcp.md, "Client"): the lifecycle (initialize, version negotiation,
// initialized, shutdown), tools (list with pagination, list_changed, call, cancel), ping, and the
// few requests a server may send its client. One Client talks to one server over one transport.

#include <atomic>
#include <chrono>
#include <cstdint>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "mend/base/result.h"
#include "mend/mcp/jsonrpc.h"
#include "mend/mcp/transport.h"

namespace mend::mcp {

/// The revisions mend speaks, newest first. It asks for the first; a server may answer with any
/// of them.
inline constexpr const char* kProtocolVersions[] = {"2025-11-25", "2025-06-18", "2025-03-26",
                                                    "2024-11-05"};
/// Whether `version` is one of kProtocolVersions.
bool IsSupportedProtocolVersion(const std::string& version);

/// A tool as the server lists it. Annotations are hints from a server that may not be trusted;
/// absent ones take the specification's defaults.
struct ToolInfo {
  std::string name;              ///< unique on its server
  std::string title;             ///< for display; may be empty
  std::string description;       ///< what the model reads
  nlohmann::json input_schema;   ///< an object; {"type":"object"} when the server sent none
  nlohmann::json output_schema;  ///< null when none
  nlohmann::json annotations;    ///< as sent, or null
  ///@{
  /// The annotations' hints, with the specification's defaults when absent.
  bool read_only_hint = false;
  bool destructive_hint = true;
  bool idempotent_hint = false;
  bool open_world_hint = true;
  ///@}
};

/// What a tools/call returned, or the JSON-RPC error it failed with.
struct CallResult {
  nlohmann::json result;  ///< the CallToolResult object (content, structuredContent, isError)
  bool is_error = false;  ///< result.isError
};

/// How a Client talks to its server.
struct ClientOptions {
  std::string name;                  ///< the server's name, for messages ("server filesystem: ...")
  std::string client_version = "0";  ///< sent in initialize's clientInfo
  /// How long initialize, tools/list and ping may take.
  std::chrono::milliseconds request_timeout{30'000};
  /// How often a call waiting for its result looks at its stop flag.
  std::chrono::milliseconds stop_poll{100};
  /// The first revision asked for; the others are accepted in an answer (tests use an older one).
  std::string protocol_version = kProtocolVersions[0];
};

/// An MCP client session with one server (see the top of this file). Thread-safe.
class Client {
 public:
  /// Starts the transport and initializes the session. Errors name the server: the transport's
  /// (a program that cannot start), kDeadlineExceeded for no answer within request_timeout,
  /// kFailedPrecondition for a revision mend does not speak, kUnavailable for a server that exits
  /// or writes a malformed message.
  static Result<std::unique_ptr<Client>> Connect(std::unique_ptr<Transport> transport,
                                                 ClientOptions options);
  virtual ~Client() = default;

  /// Every tool, following nextCursor to the end (at most 1,000 pages). Clears tools_changed().
  virtual Result<std::vector<ToolInfo>> ListTools() = 0;
  /// Calls `name` with `arguments` (an object). Waits at most `timeout`, and stops waiting when
  /// `stop` (optional) reads true; either way the server gets notifications/cancelled and the
  /// answer is kDeadlineExceeded or kCancelled. A JSON-RPC error answer is kInvalidArgument (for
  /// -32602) or kUnknown with the error's code, message and data in the message; a server that
  /// dies or breaks meanwhile is kUnavailable.
  virtual Result<CallResult> CallTool(const std::string& name, const nlohmann::json& arguments,
                                      std::chrono::milliseconds timeout,
                                      const std::atomic<bool>* stop = nullptr) = 0;
  /// Sends ping and waits for the answer (request_timeout).
  virtual Status Ping() = 0;
  /// Closes the session and the transport (for stdio: stdin, then SIGTERM, then SIGKILL).
  virtual void Close() = 0;

  /// Whether the server sent notifications/tools/list_changed since the last ListTools.
  virtual bool tools_changed() const = 0;
  /// Whether the server can still be talked to (not closed, not exited, not broken).
  virtual bool alive() const = 0;
  /// Why it is not, when it is not.
  virtual Status broken() const = 0;
  /// The revision agreed on in initialize.
  virtual std::string protocol_version() const = 0;
  /// The server's serverInfo.
  virtual nlohmann::json server_info() const = 0;
  /// The transport's session id; "" when none.
  virtual std::string session_id() const = 0;
  /// The transport's recent stderr (stdio).
  virtual std::string stderr_tail() const = 0;
};

/// The model-facing text of a tools/call result: text content as is; images, audio and resources
/// summarised in a line each; structuredContent as JSON when there is no text. At most `max_bytes`
/// (cut on a UTF-8 boundary, with a line saying how much was left out). Never throws.
std::string RenderToolResult(const nlohmann::json& result, size_t max_bytes);

}  // namespace mend::mcp
