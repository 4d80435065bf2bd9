#include "store/pending_plan.h"

#include <algorithm>
#include <string>
#include <utility>

#include "store/run_row.h"

namespace mend::store::internal {

Result<PendingPlan> PlanPending(const PendingQuery& query) {
  MEND_RETURN_IF_ERROR(ValidatePendingQuery(query));
  PendingPlan plan;
  plan.scope = query.scope;
  plan.filtered = !query.statuses.empty() || !query.agent.empty();
  if (!query.agent.empty()) plan.agent = query.agent;
  // An agent filter alone still goes through the per-status branches: every status of the scope.
  std::vector<RunStatus> statuses = query.statuses;
  if (statuses.empty()) {
    statuses = {RunStatus::kRunning, RunStatus::kWaiting, RunStatus::kFailed,
                RunStatus::kQuarantined};
    plan.completed = query.scope == RunScope::kAll;
  }
  size_t slot = 0;
  for (RunStatus s : statuses) {
    if (s == RunStatus::kCompleted) {  // ValidatePendingQuery allowed it: RunScope::kAll
      plan.completed = true;
      continue;
    }
    std::string name(RunStatusName(s));
    auto end = plan.statuses.begin() + static_cast<std::ptrdiff_t>(slot);
    if (std::find(plan.statuses.begin(), end, name) != end) continue;  // a repeat
    plan.statuses[slot++] = std::move(name);
  }
  if (query.before.has_value()) {
    plan.before_nanos = ToNanos(query.before->created_at);
    plan.before_id = query.before->id;
  }
  plan.limit = static_cast<int64_t>(query.limit);
  return plan;
}

Result<PendingPage> FinishPendingPage(const PendingQuery& query, std::vector<RunRecord> rows,
                                      const PendingCounter& count) {
  PendingPage page;
  MEND_ASSIGN_OR_RETURN(page.total, count(std::nullopt));
  const int64_t listed = static_cast<int64_t>(rows.size());
  if (!rows.empty() && rows.size() == query.limit) {
    RunCursor last{rows.back().created_at, rows.back().id};
    // Without a cursor the page is the newest runs, so everything at or after its last run is on
    // it; with one, the runs of earlier pages (and any created since) are counted too.
    int64_t newer = listed;
    if (query.before.has_value()) {
      MEND_ASSIGN_OR_RETURN(newer, count(last));
    }
    page.more = std::max<int64_t>(0, page.total - newer);
    if (page.more > 0) page.next = std::move(last);
  }
  page.runs = std::move(rows);
  return page;
}

}  // namespace mend::store::internal
