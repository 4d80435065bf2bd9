// ListPending of the PostgreSQL store: pages of unfinished runs, or of every run, newest first
// (docs/store_schema.md, "Pages of pending runs" and "Pages of every run"). The statements mirror
// those of sqlite_pending.cc; ids compare with COLLATE "C" (bytes), matching the indexes of schema
// versions 2 and 3.

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "store/pending_plan.h"
#include "store/pg_store_impl.h"

namespace mend::store::internal {
namespace {

#define MEND_PG_ID "id COLLATE \"C\""
#define MEND_PG_NEWEST_FIRST " ORDER BY created_at DESC, " MEND_PG_ID " DESC "

// $1 $2: the key rows must precede; $3: the limit.
constexpr char kPageAll[] = "SELECT " MEND_STORE_RUN_COLUMNS
                            " FROM runs WHERE status <> 'completed' AND (created_at, " MEND_PG_ID
                            ") < ($1, $2)" MEND_PG_NEWEST_FIRST "LIMIT $3";
constexpr char kRunsPage[] =
    "SELECT " MEND_STORE_RUN_COLUMNS " FROM runs WHERE (created_at, " MEND_PG_ID
    ") < ($1, $2)" MEND_PG_NEWEST_FIRST "LIMIT $3";

// $1..$4: the unfinished statuses of the branches (NULL matches nothing); $5 $6: the key rows must
// precede; $7: the limit; then the agent ($8), or for RunScope::kAll 'completed' or NULL ($8) and
// the agent ($9). Each branch reads at most $7 entries of its index backwards.
#define MEND_PG_BRANCH(filter)                                                                 \
  "(SELECT " MEND_STORE_RUN_COLUMNS " FROM runs WHERE " filter " AND (created_at, " MEND_PG_ID \
  ") < ($5, $6)" MEND_PG_NEWEST_FIRST "LIMIT $7)"
#define MEND_PG_BRANCHES(prefix)                                 \
  MEND_PG_BRANCH(prefix "status = $1 AND status <> 'completed'") \
  " UNION ALL " MEND_PG_BRANCH(prefix "status = $2 AND status <> 'completed'")            \
  " UNION ALL " MEND_PG_BRANCH(prefix "status = $3 AND status <> 'completed'")            \
  " UNION ALL " MEND_PG_BRANCH(prefix "status = $4 AND status <> 'completed'")
#define MEND_PG_COMPLETED_BRANCH(prefix) \
  " UNION ALL " MEND_PG_BRANCH(prefix "status = $8 AND status = 'completed'")
#define MEND_PG_PAGE(branches) \
  "SELECT " MEND_STORE_RUN_COLUMNS " FROM (" branches ") AS page" MEND_PG_NEWEST_FIRST "LIMIT $7"

constexpr char kPageByStatus[] = MEND_PG_PAGE(MEND_PG_BRANCHES(""));
constexpr char kPageByAgent[] = MEND_PG_PAGE(MEND_PG_BRANCHES("agent = $8 AND "));
constexpr char kRunsPageByStatus[] =
    MEND_PG_PAGE(MEND_PG_BRANCHES("") MEND_PG_COMPLETED_BRANCH(""));
constexpr char kRunsPageByAgent[] =
    MEND_PG_PAGE(MEND_PG_BRANCHES("agent = $9 AND ") MEND_PG_COMPLETED_BRANCH("agent = $9 AND "));

// Counts: $1..$4 the statuses, $5 $6 the key counted from, then the agent ($7), or for
// RunScope::kAll 'completed' or NULL ($7) and the agent ($8).
#define MEND_PG_COUNT_PENDING(prefix)                                                 \
  "SELECT COUNT(*) FROM runs WHERE " prefix                                           \
  "status IN ($1, $2, $3, $4) AND status <> 'completed' AND (created_at, " MEND_PG_ID \
  ") >= "                                                                             \
  "($5, $6)"
#define MEND_PG_COUNT_COMPLETED(prefix)     \
  "SELECT COUNT(*) FROM runs WHERE " prefix \
  "status = $7 AND status = 'completed' AND (created_at, " MEND_PG_ID ") >= ($5, $6)"

constexpr char kCountAll[] = "SELECT COUNT(*) FROM runs WHERE status <> 'completed'";
constexpr char kCountAllFrom[] =
    "SELECT COUNT(*) FROM runs WHERE status <> 'completed' AND "
    "(created_at, " MEND_PG_ID ") >= ($1, $2)";
constexpr char kCountByStatus[] = MEND_PG_COUNT_PENDING("");
constexpr char kCountByAgent[] = MEND_PG_COUNT_PENDING("agent = $7 AND ");
constexpr char kRunsCount[] = "SELECT COUNT(*) FROM runs";
constexpr char kRunsCountFrom[] =
    "SELECT COUNT(*) FROM runs WHERE (created_at, " MEND_PG_ID ") >= ($1, $2)";
constexpr char kRunsCountByStatus[] =
    "SELECT (" MEND_PG_COUNT_PENDING("") ") + (" MEND_PG_COUNT_COMPLETED("") ")";
constexpr char kRunsCountByAgent[] = "SELECT (" MEND_PG_COUNT_PENDING(
    "agent = $8 AND ") ") + (" MEND_PG_COUNT_COMPLETED("agent = $8 AND ") ")";

#undef MEND_PG_COUNT_COMPLETED
#undef MEND_PG_COUNT_PENDING
#undef MEND_PG_PAGE
#undef MEND_PG_COMPLETED_BRANCH
#undef MEND_PG_BRANCHES
#undef MEND_PG_BRANCH
#undef MEND_PG_NEWEST_FIRST
#undef MEND_PG_ID

// The statements of one scope.
struct PageStatements {
  const char* page;
  const char* page_by_status;
  const char* page_by_agent;
  const char* count;
  const char* count_from;
  const char* count_by_status;
  const char* count_by_agent;
};

constexpr PageStatements kUnfinished = {kPageAll,      kPageByStatus,  kPageByAgent, kCountAll,
                                        kCountAllFrom, kCountByStatus, kCountByAgent};
constexpr PageStatements kEveryRun = {kRunsPage,        kRunsPageByStatus, kRunsPageByAgent,
                                      kRunsCount,       kRunsCountFrom,    kRunsCountByStatus,
                                      kRunsCountByAgent};

const PageStatements& StatementsOf(const PendingPlan& plan) {
  return plan.scope == RunScope::kAll ? kEveryRun : kUnfinished;
}

std::vector<PgParam> StatusParams(const PendingPlan& plan) {
  std::vector<PgParam> params;
  for (const std::optional<std::string>& status : plan.statuses) {
    params.push_back(status ? PgParam::Text(*status) : PgParam::Null());
  }
  return params;
}

// The parameters after the key (and limit): the completed slot of RunScope::kAll, the agent.
void AppendFilterTail(const PendingPlan& plan, std::vector<PgParam>& params) {
  if (plan.scope == RunScope::kAll) {
    params.push_back(plan.completed ? PgParam::Text(RunStatusName(RunStatus::kCompleted))
                                    : PgParam::Null());
  }
  if (plan.agent.has_value()) params.push_back(PgParam::Text(*plan.agent));
}

std::vector<PgParam> PageParams(const PendingPlan& plan) {
  std::vector<PgParam> params;
  if (plan.filtered) params = StatusParams(plan);
  params.push_back(PgParam::Int(plan.before_nanos));
  params.push_back(PgParam::Text(plan.before_id));
  params.push_back(PgParam::Int(plan.limit));
  if (plan.filtered) AppendFilterTail(plan, params);
  return params;
}

}  // namespace

Result<PendingPage> PgStore::ListPending(const PendingQuery& query) {
  MEND_ASSIGN_OR_RETURN(PendingPlan plan, PlanPending(query));
  std::optional<PendingPage> page;
  MEND_RETURN_IF_ERROR(Transact(TxKind::kRead, [&](PgConn& conn) -> Status {
    const PageStatements& sqls = StatementsOf(plan);
    const char* sql = !plan.filtered ? sqls.page
                      : plan.agent   ? sqls.page_by_agent
                                     : sqls.page_by_status;
    MEND_ASSIGN_OR_RETURN(PgResult res, conn.Exec(sql, PageParams(plan)));
    std::vector<RunRecord> rows;
    for (int i = 0; i < res.rows(); ++i) {
      Result<StoredRun> run = ParsePgRunRow(res, i);
      // As in ListRuns: a corrupt row is listed as a failed run carrying the DATA_LOSS.
      rows.push_back(run.ok() ? std::move(run->record) : PgCorruptRunMarker(res, i, run.status()));
    }
    MEND_ASSIGN_OR_RETURN(page, FinishPendingPage(query, std::move(rows), [&](const auto& from) {
                            return CountPending(conn, plan, from);
                          }));
    return OkStatus();
  }));
  return std::move(*page);
}

Result<int64_t> PgStore::CountPending(PgConn& conn, const PendingPlan& plan,
                                      const std::optional<RunCursor>& from) {
  std::vector<PgParam> params;
  if (plan.filtered) params = StatusParams(plan);
  if (plan.filtered || from.has_value()) {
    params.push_back(PgParam::Int(from ? ToNanos(from->created_at) : kFirstKeyNanos));
    params.push_back(PgParam::Text(from ? from->id : ""));
  }
  if (plan.filtered) AppendFilterTail(plan, params);
  const PageStatements& sqls = StatementsOf(plan);
  const char* sql = plan.agent      ? sqls.count_by_agent
                    : plan.filtered ? sqls.count_by_status
                    : from          ? sqls.count_from
                                    : sqls.count;
  MEND_ASSIGN_OR_RETURN(PgResult res, conn.Exec(sql, params));
  std::optional<int64_t> count = res.rows() == 1 ? res.Int(0, 0) : std::nullopt;
  if (!count.has_value()) return InternalError("COUNT returned no number");
  return *count;
}

}  // namespace mend::store::internal
