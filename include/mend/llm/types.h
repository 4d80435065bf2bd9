#pragma once

#include <atomic>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace mend::llm {

// A tool call requested by the model. `arguments` is the JSON text the model produced, passed
// through unparsed (it may be invalid: the agent reports that back to the model as a tool error).
struct ToolCall {
  std::string id;
  std::string name;
  std::string arguments;
};

enum class Role { kSystem, kUser, kAssistant, kTool };
std::string_view RoleName(Role role);  // "system", "user", "assistant", "tool"

// One message of a conversation. An assistant message may carry tool calls; a tool message carries
// the result of the tool call `tool_call_id` in `content`.
struct Message {
  Role role = Role::kUser;
  std::string content;
  std::vector<ToolCall> tool_calls;  // kAssistant only
  std::string tool_call_id;          // kTool only
  std::string name;                  // kTool: the tool's name (Anthropic and some servers want it)
  bool is_error = false;             // kTool: the tool failed (Anthropic's is_error)

  static Message System(std::string text);
  static Message User(std::string text);
  static Message Assistant(std::string text, std::vector<ToolCall> calls = {});
  static Message ToolResult(std::string call_id, std::string tool_name, std::string content,
                            bool is_error = false);
};

// A tool the model may call. `parameters` is a JSON Schema object, as JSON text.
struct ToolDefinition {
  std::string name;
  std::string description;
  std::string parameters = R"({"type":"object","properties":{}})";
};

struct CompletionRequest {
  std::string model;  // empty: the provider's configured model
  std::vector<Message> messages;
  std::vector<ToolDefinition> tools;
  int max_tokens = 0;  // 0: provider default
  std::optional<double> temperature;
  std::vector<std::string> stop;
  // When set, the request is abandoned soon after *cancel becomes true (within about a second,
  // also while waiting for the server): Complete() then returns kCancelled. Not owned; must
  // outlive the call.
  const std::atomic<bool>* cancel = nullptr;
  // W3C trace context of the model turn ("00-<trace>-<span>-<flags>"); HTTP providers send it as
  // the `traceparent` request header. Empty: no header.
  std::string traceparent;
};

struct Usage {
  int64_t input_tokens = 0;
  int64_t output_tokens = 0;
};

enum class FinishReason { kStop, kToolCalls, kLength, kContentFilter, kOther };
std::string_view FinishReasonName(FinishReason r);  // "stop", "tool_calls", "length", ...

struct Completion {
  std::string id;     // the provider's response id, if any
  std::string model;  // the model that answered
  std::string text;
  std::vector<ToolCall> tool_calls;
  FinishReason finish_reason = FinishReason::kStop;
  Usage usage;
  bool usage_reported = false;  // false when the provider sent no usage (cost is then 0)
  double cost_usd = 0;
};

}  // namespace mend::llm
