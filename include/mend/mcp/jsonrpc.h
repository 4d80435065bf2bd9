#pragma once

// JSON-RPC 2.0 as MCP frames it (docs/mcp.md, "Protocol"): one message per line on stdio, one
// per POST body or server-sent event over Streamable HTTP. Parsing is strict, because a message
// read wrongly is worse than a message refused: a server that writes something else is a broken
// server, and the client says so instead of guessing.

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

#include "mend/base/result.h"

namespace mend::mcp {

///@{
/// The error codes of JSON-RPC 2.0 (and MCP's use of them).
inline constexpr int64_t kParseError = -32700;
inline constexpr int64_t kInvalidRequest = -32600;
inline constexpr int64_t kMethodNotFound = -32601;
inline constexpr int64_t kInvalidParams = -32602;
inline constexpr int64_t kInternalError = -32603;
///@}

/// The largest message either side accepts (a line on stdio, a body or an event over HTTP).
inline constexpr size_t kMaxMessageBytes = 16 * 1024 * 1024;

/// The error of an error response.
struct RpcError {
  int64_t code = kInternalError;  ///< a JSON-RPC error code
  std::string message;            ///< one sentence
  nlohmann::json data;            ///< null when absent

  /// "-32602 Invalid params: <data>" style text for error messages and spans.
  std::string Describe() const;
};

/// One JSON-RPC message: a request, a notification, a result or an error.
struct RpcMessage {
  /// What the message is.
  enum class Kind { kRequest, kNotification, kResult, kError };
  Kind kind = Kind::kNotification;  ///< what the message is
  /// A string or an integer. Null only for kNotification, and for a kError answering a message
  /// whose id could not be read.
  nlohmann::json id;
  std::string method;     ///< kRequest, kNotification
  nlohmann::json params;  ///< an object, or null when absent
  nlohmann::json result;  ///< kResult: an object
  RpcError error;         ///< kError

  ///@{
  /// A message of each kind.
  static RpcMessage Request(nlohmann::json id, std::string method, nlohmann::json params);
  static RpcMessage Notification(std::string method, nlohmann::json params);
  static RpcMessage Result(nlohmann::json id, nlohmann::json result);
  static RpcMessage Error(nlohmann::json id, int64_t code, std::string message,
                          nlohmann::json data = nullptr);
  ///@}
};

/// Reads one message. kInvalidArgument, saying what is wrong, for: text over kMaxMessageBytes,
/// text that is not one JSON document (invalid UTF-8 included), a batch (an array: MCP dropped
/// batching in 2025-06-18), "jsonrpc" other than "2.0", an id that is not a string or an integer
/// (null, a fraction, a bool), a method that is not a non-empty string, params that are not an
/// object, a response with both or neither of result and error, a result that is not an object,
/// an error without an integer code and a string message, or a member JSON-RPC does not define.
/// The error's message never holds more than the first 200 bytes of the text.
Result<RpcMessage> ParseRpcMessage(std::string_view text);

/// The message as one line of compact JSON (no newline inside or at the end).
std::string SerializeRpcMessage(const RpcMessage& message);

}  // namespace mend::mcp
