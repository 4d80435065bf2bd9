// JSON pieces of a run shared by the CLI and the server (run_json.h).
#include "mend/app/run_json.h"

#include "mend/base/time_format.h"

namespace mend::app {

using nlohmann::json;

json NullIfEmpty(const std::string& text) { return text.empty() ? json(nullptr) : json(text); }

json RunErrorJson(const std::optional<store::RunError>& error) {
  if (!error.has_value()) return nullptr;
  return {{"code", error->code},
          {"message", error->message},
          {"class", error->error_class},
          {"retryable", error->retryable}};
}

void AddInterruptionJson(const std::optional<Interruption>& interruption, json& run) {
  run["interrupted"] = interruption.has_value();
  if (!interruption.has_value()) {
    run["interruption"] = nullptr;
    return;
  }
  const Interruption& i = *interruption;
  const char* reason = i.lease == store::LeaseState::kHolderGone ? "process_gone"
                       : i.lease == store::LeaseState::kExpired  ? "lease_expired"
                                                                 : "not_held";
  run["interruption"] = {
      {"reason", reason},
      {"holder", i.holder.has_value() ? json(i.holder->id) : json(nullptr)},
      {"lease_expires_at",
       i.lease_expires_at.has_value() ? json(FormatRfc3339(*i.lease_expires_at)) : json(nullptr)}};
}

json ToolCallsJson(const std::vector<llm::ToolCall>& calls) {
  json list = json::array();
  for (const llm::ToolCall& c : calls) {
    list.push_back({{"id", c.id}, {"name", c.name}, {"arguments", c.arguments}});
  }
  return list;
}

json TranscriptEntryJson(const agent::TranscriptEntry& entry) {
  const llm::Message& m = entry.message;
  json j = {{"role", std::string(llm::RoleName(m.role))}, {"content", m.content}};
  if (!m.tool_calls.empty()) j["tool_calls"] = ToolCallsJson(m.tool_calls);
  if (m.role == llm::Role::kTool) {
    j["tool_call_id"] = m.tool_call_id;
    j["name"] = m.name;
    j["is_error"] = m.is_error;
    j["replaced_by_hook"] = entry.replaced_by_hook;
    j["hook_decision"] = NullIfEmpty(entry.hook_decision);
  }
  return j;
}

}  // namespace mend::app
