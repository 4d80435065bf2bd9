// The JSON shapes of the runs route group (docs/http_api.md, "Runs"), and the parsing of a page's
// query string.
#include <string>
#include <string_view>
#include <utility>

#include "mend/app/run_json.h"
#include "mend/base/time_format.h"
#include "server/api_runs.h"

namespace mend::server::runs {
namespace {

using nlohmann::json;

constexpr int64_t kDefaultLimit = 20;

// Adds the statuses of one `status` parameter ("failed" or "failed,quarantined") to `query`.
Status AddStatuses(std::string_view text, store::RunScope scope, store::PendingQuery& query) {
  while (true) {
    const size_t comma = text.find(',');
    const std::string_view name = text.substr(0, comma);
    Result<store::RunStatus> status = store::ParseRunStatus(name);
    const bool allowed =
        status.ok() && (scope == store::RunScope::kAll || *status != store::RunStatus::kCompleted);
    if (!allowed) {
      return InvalidArgumentError(
          "status must be " +
          std::string(scope == store::RunScope::kAll
                          ? "running, waiting, completed, failed or quarantined"
                          : "running, waiting, failed or quarantined (pending runs)") +
          ", not \"" + std::string(name) + "\"");
    }
    query.statuses.push_back(*status);
    if (comma == std::string_view::npos) return OkStatus();
    text.remove_prefix(comma + 1);
  }
}

}  // namespace

json RunJson(const store::RunRecord& run, const agent::RunOrigin& origin,
             const std::optional<app::Interruption>& interruption) {
  json j = app::ListedRunJson(run, origin, interruption);
  j["created_at"] = FormatRfc3339(run.created_at);
  j["updated_at"] = FormatRfc3339(run.updated_at);
  return j;
}

void AddProgressJson(const std::optional<app::RunProgress>& progress, json& run) {
  if (!progress.has_value()) {
    run["steps"] = nullptr;
    run["usage"] = nullptr;
    run["cost_usd"] = nullptr;
    return;
  }
  run["steps"] = progress->steps;
  run["usage"] = {{"input_tokens", progress->input_tokens},
                  {"output_tokens", progress->output_tokens}};
  run["cost_usd"] = progress->cost_usd;
}

json PageJson(json runs, const store::PendingPage& page) {
  return app::RunPageJson(std::move(runs), page);
}

json RunDetailJson(const agent::RunView& view, const app::RunOverview& overview) {
  const store::RunRecord& run = view.run;
  json j = RunJson(run, overview.origin, overview.interruption);
  j["run_id"] = run.id;  // the `run` shape of docs/cli.md names it so
  j["agent_dir"] = run.agent_dir;
  j["agent_changed"] = app::NullIfEmpty(overview.AgentChangedText());
  j["task"] = run.task;
  j["provider"] = app::NullIfEmpty(overview.origin.model.provider);
  j["steps"] = view.steps;
  j["usage"] = {{"input_tokens", view.input_tokens}, {"output_tokens", view.output_tokens}};
  j["cost_usd"] = view.cost_usd;
  j["output"] = view.output;
  j["error"] = app::RunErrorJson(run.last_error);
  j["question"] = app::NullIfEmpty(view.question);
  j["trace_id"] = app::NullIfEmpty(overview.origin.trace_id);
  j["shadow"] = overview.origin.shadow;
  j["parent"] =
      run.parent_id.empty()
          ? json(nullptr)
          : json{{"id", run.parent_id}, {"checkpoint", run.parent_step}, {"step", run.parent_step}};
  json transcript = json::array();
  for (const agent::TranscriptEntry& entry : view.transcript) {
    transcript.push_back(app::TranscriptEntryJson(entry));
  }
  j["transcript"] = std::move(transcript);
  j["pending_calls"] = app::ToolCallsJson(view.pending);
  json checkpoints = json::array();
  for (const store::CheckpointInfo& c : view.checkpoints) {
    checkpoints.push_back({{"checkpoint", c.step},
                           {"step", c.step},
                           {"message_count", c.message_count},
                           {"created_at", FormatRfc3339(c.created_at)}});
  }
  j["checkpoints"] = std::move(checkpoints);
  return j;
}

Result<store::PendingQuery> PageQueryOf(const ApiRequest& request, store::RunScope scope) {
  store::PendingQuery query;
  query.scope = scope;
  MEND_ASSIGN_OR_RETURN(int64_t limit,
                        request.QueryInt("limit", kDefaultLimit, 1,
                                         static_cast<int64_t>(store::kMaxPendingPageSize)));
  query.limit = static_cast<size_t>(limit);
  auto [begin, end] = request.query.equal_range("status");
  for (auto it = begin; it != end; ++it) {
    MEND_RETURN_IF_ERROR(AddStatuses(it->second, scope, query));
  }
  query.agent = request.Query("agent").value_or("");
  if (std::optional<std::string> cursor = request.Query("cursor"); cursor.has_value()) {
    Result<store::RunCursor> parsed = store::ParseRunCursor(*cursor);
    if (!parsed.ok()) {
      return InvalidArgumentError("cursor: " + std::string(parsed.status().message()));
    }
    query.before = *std::move(parsed);
  }
  return query;
}

Status CheckRunId(const std::string& id) {
  bool plain = !id.empty() && id.size() <= 128 && id.front() != '.';
  for (char c : id) {
    plain = plain && ((c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') ||
                      c == '.' || c == '_' || c == '-');
  }
  if (plain) return OkStatus();
  return InvalidArgumentError(
      "a run id is 1 to 128 characters of A-Z, a-z, 0-9, '.', '_' and '-', not starting with "
      "'.'");
}

}  // namespace mend::server::runs
