#include "agent/message_codec.h"

#include <nlohmann/json.hpp>
#include <string>

#include "mend/base/json.h"

namespace mend::agent {
namespace {

using nlohmann::json;

Result<llm::Role> ParseRole(std::string_view name) {
  if (name == "system") return llm::Role::kSystem;
  if (name == "user") return llm::Role::kUser;
  if (name == "assistant") return llm::Role::kAssistant;
  if (name == "tool") return llm::Role::kTool;
  return InvalidArgumentError("unknown role \"" + std::string(name) + "\"");
}

Result<llm::ToolCall> DecodeCall(const json& j) {
  llm::ToolCall call;
  MEND_ASSIGN_OR_RETURN(call.id, GetString(j, "id"));
  MEND_ASSIGN_OR_RETURN(call.name, GetString(j, "name"));
  MEND_ASSIGN_OR_RETURN(call.arguments, GetString(j, "arguments"));
  return call;
}

Result<llm::Message> DecodeFields(const json& j, MessageMeta* meta) {
  llm::Message m;
  MEND_ASSIGN_OR_RETURN(std::string role, GetString(j, "role"));
  MEND_ASSIGN_OR_RETURN(m.role, ParseRole(role));
  MEND_ASSIGN_OR_RETURN(auto content, GetOptionalString(j, "content"));
  m.content = content.value_or("");
  MEND_ASSIGN_OR_RETURN(auto call_id, GetOptionalString(j, "tool_call_id"));
  m.tool_call_id = call_id.value_or("");
  MEND_ASSIGN_OR_RETURN(auto name, GetOptionalString(j, "name"));
  m.name = name.value_or("");
  MEND_ASSIGN_OR_RETURN(auto is_error, GetOptionalBool(j, "is_error"));
  m.is_error = is_error.value_or(false);
  MEND_ASSIGN_OR_RETURN(auto replaced, GetOptionalBool(j, "replaced_by_hook"));
  MEND_ASSIGN_OR_RETURN(auto decision, GetOptionalString(j, "hook_decision"));
  if (meta != nullptr) {
    meta->replaced_by_hook = replaced.value_or(false);
    meta->hook_decision = decision.value_or("");
  }
  MEND_ASSIGN_OR_RETURN(auto calls, GetOptionalArray(j, "tool_calls"));
  if (calls.has_value()) {
    for (const json& c : **calls) {
      MEND_ASSIGN_OR_RETURN(llm::ToolCall call, DecodeCall(c));
      m.tool_calls.push_back(std::move(call));
    }
  }
  return m;
}

}  // namespace

std::string EncodeMessage(const llm::Message& message, const MessageMeta& meta) {
  json j = json::object();
  j["role"] = llm::RoleName(message.role);
  if (!message.content.empty()) j["content"] = message.content;
  if (!message.tool_calls.empty()) {
    json calls = json::array();
    for (const llm::ToolCall& c : message.tool_calls) {
      calls.push_back({{"id", c.id}, {"name", c.name}, {"arguments", c.arguments}});
    }
    j["tool_calls"] = std::move(calls);
  }
  if (!message.tool_call_id.empty()) j["tool_call_id"] = message.tool_call_id;
  if (!message.name.empty()) j["name"] = message.name;
  if (message.is_error) j["is_error"] = true;
  if (meta.replaced_by_hook) j["replaced_by_hook"] = true;
  if (!meta.hook_decision.empty()) j["hook_decision"] = meta.hook_decision;
  return DumpJson(j);
}

Result<llm::Message> DecodeMessage(std::string_view text, std::string_view run_id,
                                   MessageMeta* meta) {
  Result<json> parsed = ParseJson(text);
  Result<llm::Message> decoded =
      parsed.ok() ? DecodeFields(*parsed, meta) : Result<llm::Message>(parsed.status());
  if (!decoded.ok()) {
    return DataLossError("run " + std::string(run_id) +
                         ": corrupt message: " + std::string(decoded.status().message()));
  }
  return decoded;
}

}  // namespace mend::agent
