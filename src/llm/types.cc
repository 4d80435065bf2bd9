#include "mend/llm/types.h"

#include <utility>

namespace mend::llm {

Message Message::System(std::string text) {
  Message m;
  m.role = Role::kSystem;
  m.content = std::move(text);
  return m;
}

Message Message::User(std::string text) {
  Message m;
  m.role = Role::kUser;
  m.content = std::move(text);
  return m;
}

Message Message::Assistant(std::string text, std::vector<ToolCall> calls) {
  Message m;
  m.role = Role::kAssistant;
  m.content = std::move(text);
  m.tool_calls = std::move(calls);
  return m;
}

Message Message::ToolResult(std::string call_id, std::string tool_name, std::string content,
                            bool is_error) {
  Message m;
  m.role = Role::kTool;
  m.tool_call_id = std::move(call_id);
  m.name = std::move(tool_name);
  m.content = std::move(content);
  m.is_error = is_error;
  return m;
}

std::string_view RoleName(Role role) {
  switch (role) {
    case Role::kSystem:
      return "system";
    case Role::kUser:
      return "user";
    case Role::kAssistant:
      return "assistant";
    case Role::kTool:
      return "tool";
  }
  return "user";
}

std::string_view FinishReasonName(FinishReason r) {
  switch (r) {
    case FinishReason::kStop:
      return "stop";
    case FinishReason::kToolCalls:
      return "tool_calls";
    case FinishReason::kLength:
      return "length";
    case FinishReason::kContentFilter:
      return "content_filter";
    case FinishReason::kOther:
      return "other";
  }
  return "other";
}

}  // namespace mend::llm
