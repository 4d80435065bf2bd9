#pragma once

// What the files of the runs route group share (docs/http_api.md, "Runs"): the JSON shapes of a
// run, a page and a run's detail, how a page's query string becomes a store query, and the
// registration of the routes that drive runs (api_runs_actions.cc).
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "mend/agent/run_origin.h"
#include "mend/agent/run_view.h"
#include "mend/app/run_inspector.h"
#include "mend/app/run_progress.h"
#include "mend/base/result.h"
#include "mend/store/checkpoint_store.h"
#include "server/api.h"

namespace mend::server::runs {

// One run of a list: id, agent, status, step, attempts, quarantined, next_attempt_at, waiting,
// last_error, created_at, updated_at, workspace and model (the last two from `origin`; null when
// not recorded), interrupted and interruption (app::AddInterruptionJson).
nlohmann::json RunJson(const store::RunRecord& run, const agent::RunOrigin& origin,
                       const std::optional<app::Interruption>& interruption);

// Adds "steps" (model turns), "usage" and "cost_usd" from `progress` to a listed run's JSON; null
// when its state cannot be read.
void AddProgressJson(const std::optional<app::RunProgress>& progress, nlohmann::json& run);
// {"runs":[...],"total","more","next"}.
nlohmann::json PageJson(nlohmann::json runs, const store::PendingPage& page);
// GET /api/v1/runs/{id}: RunJson plus task, usage, cost, output, question, trace, parent, the
// transcript and the checkpoints.
nlohmann::json RunDetailJson(const agent::RunView& view, const app::RunOverview& overview);

// The store query of a page request: limit (1..1000, default 20), status (repeated or
// comma-separated; completed only in RunScope::kAll), agent and cursor. kInvalidArgument naming
// the parameter otherwise.
Result<store::PendingQuery> PageQueryOf(const ApiRequest& request, store::RunScope scope);

// A run id a client may choose: 1 to 128 bytes of A-Z a-z 0-9 . _ -, not starting with '.'.
// kInvalidArgument otherwise.
Status CheckRunId(const std::string& id);

// The folder of agent `name` under serve.agents_dir. Only a plain name of a folder there is
// accepted, so a request never names an arbitrary path: kInvalidArgument for a name with a '/', a
// leading '.' or a control character, kNotFound for one that is not a folder there (or without
// serve.agents_dir).
Result<std::string> AgentDirOf(ServeContext& context, const std::string& name);

// POST /api/v1/runs and /api/v1/runs/{id}/{resume,approve,deny,answer,fork}.
void AddRunActionRoutes(ApiRoutes& routes, ServeContext& context);

}  // namespace mend::server::runs
