// Routes of runs and pending (docs/http_api.md, "Runs"): the reads — pages of runs and of pending
// runs, one run in detail, the agents that may be started. The routes that drive runs are in
// api_runs_actions.cc.
#include "server/api_runs.h"

#include <string>
#include <utility>
#include <vector>

#include "mend/agent/agent_spec.h"
#include "mend/agent/run_view.h"
#include "mend/app/run_inspector.h"
#include "mend/app/run_progress.h"
#include "mend/app/runtime.h"
#include "server/api.h"
#include "server/serve_context.h"

namespace mend::server {
namespace {

using nlohmann::json;

// GET /api/v1/runs: every run, completed ones included, newest first.
Result<ApiResponse> ListRuns(ServeContext& context, const ApiRequest& request) {
  MEND_ASSIGN_OR_RETURN(store::PendingQuery query,
                        runs::PageQueryOf(request, store::RunScope::kAll));
  MEND_ASSIGN_OR_RETURN(store::PendingPage page, context.runtime().store->ListPending(query));
  MEND_ASSIGN_OR_RETURN(auto progress, app::ProgressOf(context.runtime(), page.runs));
  json items = json::array();
  for (const store::RunRecord& run : page.runs) {
    // A run whose metadata does not parse is still listed, without workspace and model.
    agent::RunOrigin origin =
        agent::ParseRunOrigin(run.metadata, run.id).value_or(agent::RunOrigin{});
    json item = runs::RunJson(run, origin, app::InterruptionOf(context.runtime(), run));
    runs::AddProgressJson(progress[run.id], item);
    items.push_back(std::move(item));
  }
  return ApiResponse(runs::PageJson(std::move(items), page));
}

// GET /api/v1/pending: `mend pending --json` with paging: unfinished runs, and whether each one's
// agent folder changed since it started.
Result<ApiResponse> ListPending(ServeContext& context, const ApiRequest& request) {
  MEND_ASSIGN_OR_RETURN(store::PendingQuery query,
                        runs::PageQueryOf(request, store::RunScope::kUnfinished));
  MEND_ASSIGN_OR_RETURN(store::PendingPage page, context.runtime().store->ListPending(query));
  MEND_ASSIGN_OR_RETURN(auto progress, app::ProgressOf(context.runtime(), page.runs));
  app::RunInspector inspector(context.runtime());
  json items = json::array();
  for (const store::RunRecord& run : page.runs) {
    const app::RunOverview overview = inspector.Inspect(run);
    json item = runs::RunJson(run, overview.origin, overview.interruption);
    runs::AddProgressJson(progress[run.id], item);
    const std::string changed = overview.AgentChangedText();
    item["agent_changed"] = changed.empty() ? json(nullptr) : json(changed);
    items.push_back(std::move(item));
  }
  return ApiResponse(runs::PageJson(std::move(items), page));
}

// GET /api/v1/runs/{id}: what `mend show` shows.
Result<ApiResponse> ShowRun(ServeContext& context, const ApiRequest& request) {
  const std::string& run_id = request.params.at(0);
  Result<agent::RunView> view = agent::ReadRunView(*context.runtime().store, run_id);
  if (!view.ok() && view.status().code() == StatusCode::kNotFound) {
    return NotFoundError("no run named " + run_id);
  }
  MEND_RETURN_IF_ERROR(view.status());
  app::RunInspector inspector(context.runtime());
  json body = runs::RunDetailJson(*view, inspector.Inspect(view->run));
  body["driven_here"] = context.runs().IsDriving(run_id);
  return ApiResponse(std::move(body));
}

// GET /api/v1/agents: the folders of serve.agents_dir that hold an agent.toml, by name.
Result<ApiResponse> ListAgents(ServeContext& context) {
  json agents = json::array();
  const std::string& root = context.options().agents_dir;
  if (root.empty()) return ApiResponse(json{{"agents", std::move(agents)}});
  FileSystem& fs = *context.runtime().env.fs;
  Result<std::vector<std::string>> names = fs.List(root);
  // A folder that does not exist (yet) holds no agents; other errors are the server's.
  if (!names.ok() && names.status().code() == StatusCode::kNotFound) {
    return ApiResponse(json{{"agents", std::move(agents)}});
  }
  MEND_RETURN_IF_ERROR(names.status());
  for (const std::string& name : *names) {
    const std::string dir = root + "/" + name;
    Result<FileInfo> info = fs.Stat(dir);
    if (name.front() == '.' || !info.ok() || !info->is_directory) continue;
    if (!fs.Exists(dir + "/agent.toml")) continue;
    json agent = {{"name", name}};
    // A broken folder is listed with its error, so whoever fixes it sees why runs would fail.
    Result<agent::AgentSpec> spec = agent::LoadAgentFolder(fs, dir);
    if (!spec.ok()) {
      agent["error"] = std::string(spec.status().message());
    } else if (!spec->description.empty()) {
      agent["description"] = spec->description;
    }
    agents.push_back(std::move(agent));
  }
  return ApiResponse(json{{"agents", std::move(agents)}});
}

}  // namespace

void AddRunRoutes(ApiRoutes& routes, ServeContext& context) {
  routes.Get("/api/v1/runs",
             [&context](const ApiRequest& request) { return ListRuns(context, request); });
  routes.Get("/api/v1/pending",
             [&context](const ApiRequest& request) { return ListPending(context, request); });
  routes.Get("/api/v1/agents", [&context](const ApiRequest&) { return ListAgents(context); });
  routes.Get("/api/v1/runs/([^/]+)",
             [&context](const ApiRequest& request) { return ShowRun(context, request); });
  runs::AddRunActionRoutes(routes, context);
}

}  // namespace mend::server
