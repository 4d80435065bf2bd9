// ListPending of the SQLite store: pages of unfinished runs, or of every run, newest first
// (docs/store_schema.md, "Pages of pending runs" and "Pages of every run").

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "store/pending_plan.h"
#include "store/sqlite_pending_sql.h"
#include "store/sqlite_store_impl.h"

namespace mend::store::internal {
namespace {

using namespace pending_sql;  // NOLINT(google-build-using-namespace): the statements of this file

const PageStatements& StatementsOf(const PendingPlan& plan) {
  return plan.scope == RunScope::kAll ? kEveryRun : kUnfinished;
}

void BindFilters(SqliteStmt& stmt, const PendingPlan& plan) {
  for (int i = 0; i < 4; ++i) {
    const std::optional<std::string>& status = plan.statuses[static_cast<size_t>(i)];
    if (status.has_value()) {
      stmt.BindText(i + 1, *status);
    } else {
      stmt.BindNull(i + 1);
    }
  }
  if (plan.agent.has_value()) stmt.BindText(8, *plan.agent);
  if (plan.scope != RunScope::kAll) return;
  if (plan.completed) {
    stmt.BindText(9, RunStatusName(RunStatus::kCompleted));
  } else {
    stmt.BindNull(9);
  }
}

}  // namespace

Result<PendingPage> SqliteStore::ListPending(const PendingQuery& query) {
  MEND_ASSIGN_OR_RETURN(PendingPlan plan, PlanPending(query));
  std::optional<PendingPage> page;
  MEND_RETURN_IF_ERROR(Transact(SqliteConn::TxKind::kRead, [&]() -> Status {
    const PageStatements& sqls = StatementsOf(plan);
    const char* sql = !plan.filtered ? sqls.page
                      : plan.agent   ? sqls.page_by_agent
                                     : sqls.page_by_status;
    MEND_ASSIGN_OR_RETURN(SqliteStmt stmt, db_->Prepare(sql));
    if (plan.filtered) BindFilters(stmt, plan);
    stmt.Bind(5, plan.before_nanos).BindText(6, plan.before_id).Bind(7, plan.limit);
    std::vector<RunRecord> rows;
    while (true) {
      MEND_ASSIGN_OR_RETURN(bool row, stmt.Step());
      if (!row) break;
      Result<StoredRun> run = ParseRunRow(stmt);
      // As in ListRuns: a corrupt row is listed as a failed run carrying the DATA_LOSS.
      rows.push_back(run.ok() ? std::move(run->record) : CorruptRunMarker(stmt, run.status()));
    }
    MEND_ASSIGN_OR_RETURN(page, FinishPendingPage(query, std::move(rows), [&](const auto& from) {
                            return CountPending(plan, from);
                          }));
    return OkStatus();
  }));
  return std::move(*page);
}

Result<int64_t> SqliteStore::CountPending(const PendingPlan& plan,
                                          const std::optional<RunCursor>& from) {
  const PageStatements& sqls = StatementsOf(plan);
  const char* sql = plan.agent      ? sqls.count_by_agent
                    : plan.filtered ? sqls.count_by_status
                    : from          ? sqls.count_from
                                    : sqls.count;
  MEND_ASSIGN_OR_RETURN(SqliteStmt stmt, db_->Prepare(sql));
  if (plan.filtered) BindFilters(stmt, plan);
  if (plan.filtered || from.has_value()) {
    stmt.Bind(5, from ? ToNanos(from->created_at) : kFirstKeyNanos);
    stmt.BindText(6, from ? from->id : "");
  }
  MEND_ASSIGN_OR_RETURN(bool row, stmt.Step());
  if (!row) return InternalError("COUNT returned no row");
  return stmt.Int(0);
}

}  // namespace mend::store::internal
