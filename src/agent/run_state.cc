#include "agent/run_state.h"

#include <chrono>
#include <nlohmann/json.hpp>
#include <string>

#include "mend/base/json.h"

namespace mend::agent {
namespace {

using nlohmann::json;

int64_t ToMillis(Time t) {
  return std::chrono::duration_cast<std::chrono::milliseconds>(t.time_since_epoch()).count();
}

Time FromMillis(int64_t ms) {
  return Time(std::chrono::duration_cast<Time::duration>(std::chrono::milliseconds(ms)));
}

Result<std::string> OptString(const json& j, std::string_view key) {
  MEND_ASSIGN_OR_RETURN(auto v, GetOptionalString(j, key));
  return v.value_or("");
}

Result<int64_t> OptInt(const json& j, std::string_view key) {
  MEND_ASSIGN_OR_RETURN(auto v, GetOptionalInt64(j, key));
  return v.value_or(0);
}

Result<std::vector<llm::ToolCall>> DecodePending(const json& j) {
  std::vector<llm::ToolCall> calls;
  MEND_ASSIGN_OR_RETURN(auto array, GetOptionalArray(j, "pending"));
  if (!array.has_value()) return calls;
  for (const json& c : **array) {
    llm::ToolCall call;
    MEND_ASSIGN_OR_RETURN(call.id, GetString(c, "id"));
    MEND_ASSIGN_OR_RETURN(call.name, GetString(c, "name"));
    MEND_ASSIGN_OR_RETURN(call.arguments, GetString(c, "arguments"));
    calls.push_back(std::move(call));
  }
  return calls;
}

Result<RunState> DecodeFields(const json& j) {
  RunState s;
  MEND_ASSIGN_OR_RETURN(s.steps, GetInt64(j, "steps"));
  MEND_ASSIGN_OR_RETURN(s.input_tokens, OptInt(j, "input_tokens"));
  MEND_ASSIGN_OR_RETURN(s.output_tokens, OptInt(j, "output_tokens"));
  MEND_ASSIGN_OR_RETURN(auto cost, GetOptionalDouble(j, "cost_usd"));
  s.cost_usd = cost.value_or(0);
  MEND_ASSIGN_OR_RETURN(int64_t started, OptInt(j, "started_at_ms"));
  s.started_at = FromMillis(started);
  MEND_ASSIGN_OR_RETURN(int64_t active, OptInt(j, "active_ms"));
  if (active < 0) return InvalidArgumentError("active_ms is negative");
  s.active = std::chrono::milliseconds(active);
  MEND_ASSIGN_OR_RETURN(s.pending, DecodePending(j));
  MEND_ASSIGN_OR_RETURN(s.waiting, OptString(j, "waiting"));
  MEND_ASSIGN_OR_RETURN(s.waiting_call_id, OptString(j, "waiting_call_id"));
  MEND_ASSIGN_OR_RETURN(s.question, OptString(j, "question"));
  MEND_ASSIGN_OR_RETURN(int64_t since, OptInt(j, "waiting_since_ms"));
  s.waiting_since = FromMillis(since);
  MEND_ASSIGN_OR_RETURN(s.approved_call_id, OptString(j, "approved_call_id"));
  MEND_ASSIGN_OR_RETURN(s.output, OptString(j, "output"));
  if (s.steps < 0) return InvalidArgumentError("steps is negative");
  return s;
}

}  // namespace

std::string EncodeRunState(const RunState& state) {
  json j = {
      {"steps", state.steps},
      {"input_tokens", state.input_tokens},
      {"output_tokens", state.output_tokens},
      {"cost_usd", state.cost_usd},
      {"started_at_ms", ToMillis(state.started_at)},
      {"active_ms", std::chrono::duration_cast<std::chrono::milliseconds>(state.active).count()}};
  if (!state.pending.empty()) {
    json calls = json::array();
    for (const llm::ToolCall& c : state.pending) {
      calls.push_back({{"id", c.id}, {"name", c.name}, {"arguments", c.arguments}});
    }
    j["pending"] = std::move(calls);
  }
  if (!state.waiting.empty()) {
    j["waiting"] = state.waiting;
    j["waiting_call_id"] = state.waiting_call_id;
    j["question"] = state.question;
    j["waiting_since_ms"] = ToMillis(state.waiting_since);
  }
  if (!state.approved_call_id.empty()) j["approved_call_id"] = state.approved_call_id;
  if (!state.output.empty()) j["output"] = state.output;
  return DumpJson(j);
}

Result<RunState> DecodeRunState(std::string_view text, std::string_view run_id) {
  Result<json> parsed = ParseJson(text);
  Result<RunState> decoded =
      parsed.ok() ? DecodeFields(*parsed) : Result<RunState>(parsed.status());
  if (!decoded.ok()) {
    return DataLossError("run " + std::string(run_id) +
                         ": corrupt run state: " + std::string(decoded.status().message()));
  }
  return decoded;
}

}  // namespace mend::agent
