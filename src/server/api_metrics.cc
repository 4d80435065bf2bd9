// /metrics: the process's metrics in Prometheus text format (docs/metrics.md); /api/v1/metrics:
// since when this server counts, and the store's totals (docs/http_api.md, "Metrics").
#include <httplib.h>

#include <array>
#include <chrono>
#include <nlohmann/json.hpp>
#include <string>
#include <utility>
#include <vector>

#include "mend/app/runtime.h"
#include "mend/base/time_format.h"
#include "mend/obs/metrics.h"
#include "server/api.h"
#include "server/serve_context.h"

namespace mend::server {
namespace {

constexpr std::array<store::RunStatus, 5> kStatuses = {
    store::RunStatus::kRunning, store::RunStatus::kWaiting, store::RunStatus::kCompleted,
    store::RunStatus::kFailed, store::RunStatus::kQuarantined};

// How many runs of the store match `statuses` (all of them when empty): the `total` of a
// one-run page, which the stores count in an index without reading the runs.
Result<int64_t> CountRuns(store::CheckpointStore& store, std::vector<store::RunStatus> statuses) {
  store::PendingQuery query;
  query.scope = store::RunScope::kAll;
  query.statuses = std::move(statuses);
  query.limit = 1;
  MEND_ASSIGN_OR_RETURN(store::PendingPage page, store.ListPending(query));
  return page.total;
}

Result<nlohmann::json> RunTotals(store::CheckpointStore& store) {
  nlohmann::json runs;
  MEND_ASSIGN_OR_RETURN(int64_t total, CountRuns(store, {}));
  runs["total"] = total;
  for (store::RunStatus status : kStatuses) {
    MEND_ASSIGN_OR_RETURN(int64_t count, CountRuns(store, {status}));
    runs[std::string(store::RunStatusName(status))] = count;
  }
  return runs;
}

Result<nlohmann::json> FactTotals(memory::FactStore& facts) {
  MEND_ASSIGN_OR_RETURN(memory::FactCounts counts, facts.CountFacts());
  int64_t lessons = 0;
  for (const auto& [category, count] : counts.categories) {
    if (category == "lesson") lessons = count;
  }
  return nlohmann::json{
      {"active", counts.active}, {"superseded", counts.superseded}, {"lessons", lessons}};
}

}  // namespace

void AddMetricsRoutes(ApiRoutes& routes, ServeContext& context) {
  routes.http().Get("/metrics", [&context](const httplib::Request&, httplib::Response& res) {
    res.set_header("Cache-Control", "no-store");
    res.set_content(context.runtime().metrics->RenderPrometheus(),
                    std::string(obs::kPrometheusContentType));
  });
  // The process's counters start at zero with the server; the page that shows them says so, and
  // shows beside them what the store holds whichever process wrote it.
  const Time started_at = context.runtime().env.clock->Now();
  routes.Get("/api/v1/metrics", [&context, started_at](const ApiRequest&) -> Result<ApiResponse> {
    app::Runtime& runtime = context.runtime();
    const Time now = runtime.env.clock->Now();
    MEND_ASSIGN_OR_RETURN(nlohmann::json runs, RunTotals(*runtime.store));
    MEND_ASSIGN_OR_RETURN(nlohmann::json facts, FactTotals(*runtime.facts));
    return ApiResponse(
        nlohmann::json{{"started_at", FormatRfc3339(started_at)},
                       {"uptime_seconds",
                        std::chrono::duration_cast<std::chrono::seconds>(now - started_at).count()},
                       {"runs", std::move(runs)},
                       {"facts", std::move(facts)}});
  });
}

}  // namespace mend::server
