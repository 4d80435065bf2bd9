#pragma once

// The vocabulary of model requests every provider shares (docs/llm_providers.md): Message and Role,
// ToolCall, ToolDefinition, CompletionRequest, Completion, Usage and FinishReason. Plain values.

#include <atomic>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace mend::llm {

/// A tool call requested by the model. `arguments` is the JSON text the model produced, passed
/// through unparsed (it may be invalid: the agent reports that back to the model as a tool error).
struct ToolCall {
  std::string id;         ///< the model's id of the call
  std::string name;       ///< the tool
  std::string arguments;  ///< JSON text, as the model wrote it
};

/// Who a message is from.
enum class Role { kSystem, kUser, kAssistant, kTool };
std::string_view RoleName(Role role);  ///< "system", "user", "assistant", "tool"

/// One message of a conversation. An assistant message may carry tool calls; a tool message carries
/// the result of the tool call `tool_call_id` in `content`.
struct Message {
  Role role = Role::kUser;           ///< who it is from
  std::string content;               ///< its text
  std::vector<ToolCall> tool_calls;  ///< kAssistant only
  std::string tool_call_id;          ///< kTool only
  /// kTool: the tool's name (Anthropic and some servers want it)
  std::string name;
  bool is_error = false;  ///< kTool: the tool failed (Anthropic's is_error)

  ///@{
  /// Messages of each role.
  static Message System(std::string text);
  static Message User(std::string text);
  static Message Assistant(std::string text, std::vector<ToolCall> calls = {});
  static Message ToolResult(std::string call_id, std::string tool_name, std::string content,
                            bool is_error = false);
  ///@}
};

/// A tool the model may call. `parameters` is a JSON Schema object, as JSON text.
struct ToolDefinition {
  std::string name;         ///< unique among a request's tools
  std::string description;  ///< what the model reads about the tool
  std::string parameters =
      R"({"type":"object","properties":{}})";  ///< JSON Schema of the arguments
};

/// One request to a chat model.
struct CompletionRequest {
  std::string model;                  ///< empty: the provider's configured model
  std::vector<Message> messages;      ///< the conversation, oldest first
  std::vector<ToolDefinition> tools;  ///< the tools the model may call
  int max_tokens = 0;                 ///< 0: provider default
  std::optional<double> temperature;  ///< unset: the provider default
  std::vector<std::string> stop;      ///< stop sequences
  /// When set, the request is abandoned soon after *cancel becomes true (within about a second,
  /// also while waiting for the server): Complete() then returns kCancelled. Not owned; must
  /// outlive the call.
  const std::atomic<bool>* cancel = nullptr;
  /// W3C trace context of the model turn ("00-<trace>-<span>-<flags>"); HTTP providers send it as
  /// the `traceparent` request header. Empty: no header.
  std::string traceparent;
};

/// The tokens one request used.
struct Usage {
  int64_t input_tokens = 0;   ///< prompt tokens
  int64_t output_tokens = 0;  ///< completion tokens
};

/// Why the model stopped.
enum class FinishReason { kStop, kToolCalls, kLength, kContentFilter, kOther };
std::string_view FinishReasonName(FinishReason r);  ///< "stop", "tool_calls", "length", ...

/// One answer of a chat model.
struct Completion {
  std::string id;                    ///< the provider's response id, if any
  std::string model;                 ///< the model that answered
  std::string text;                  ///< the answer text ("" when it only calls tools)
  std::vector<ToolCall> tool_calls;  ///< the tools the model asks to call
  FinishReason finish_reason = FinishReason::kStop;  ///< why the model stopped
  Usage usage;                                       ///< tokens used, as the provider reported them
  bool usage_reported = false;  ///< false when the provider sent no usage (cost is then 0)
  double cost_usd = 0;          ///< at the price table (prices.h)
};

}  // namespace mend::llm
