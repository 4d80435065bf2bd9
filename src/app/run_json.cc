// JSON pieces of a run shared by the CLI and the server (run_json.h).
#include "mend/app/run_json.h"

#include <string>
#include <utility>

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

json ListedRunJson(const store::RunRecord& run, const agent::RunOrigin& origin,
                   const std::optional<Interruption>& interruption) {
  const agent::RunModel& model = origin.model;
  json j = {
      {"id", run.id},
      {"agent", run.agent},
      {"status", std::string(store::RunStatusName(run.status))},
      // Steps are model turns (docs/runs.md, "Steps and checkpoints"); "step" is the old
      // name of "checkpoint", kept for scripts that read it.
      {"checkpoint", run.step},
      {"step", run.step},
      {"attempts", run.attempts},
      {"quarantined", run.status == store::RunStatus::kQuarantined},
      {"next_attempt_at",
       run.next_attempt_at.has_value() ? json(FormatRfc3339(*run.next_attempt_at)) : json(nullptr)},
      {"waiting", NullIfEmpty(run.waiting)},
      {"last_error", RunErrorJson(run.last_error)},
      {"workspace", NullIfEmpty(origin.workspace)},
      {"model", model.empty() ? json(nullptr)
                              : json{{"provider", model.provider},
                                     {"base_url", model.base_url},
                                     {"model", model.model}}}};
  AddInterruptionJson(interruption, j);
  return j;
}

json RunPageJson(json runs, const store::PendingPage& page) {
  return {
      {"runs", std::move(runs)},
      {"total", page.total},
      {"more", page.more},
      {"next", page.next.has_value() ? json(store::FormatRunCursor(*page.next)) : json(nullptr)}};
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
