// ListPending of the PostgreSQL store: pages of unfinished runs, newest first
// (docs/store_schema.md, "Pages of pending runs"). The statements mirror those of
// sqlite_pending.cc; ids compare with COLLATE "C" (bytes), matching the indexes of schema
// version 2.

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

// $1..$4: the statuses of the branches (NULL matches nothing); $5 $6: the key rows must precede;
// $7: the limit; $8: the agent. Each branch reads at most $7 entries of its index backwards.
#define MEND_PG_BRANCH(filter)                                                                  \
  "(SELECT " MEND_STORE_RUN_COLUMNS " FROM runs WHERE " filter                                  \
  " AND status <> 'completed' AND (created_at, " MEND_PG_ID ") < ($5, $6)" MEND_PG_NEWEST_FIRST \
  "LIMIT $7)"
#define MEND_PG_PAGE(prefix) \
  "SELECT " MEND_STORE_RUN_COLUMNS " FROM (" MEND_PG_BRANCH(prefix "status = $1")             \
  " UNION ALL " MEND_PG_BRANCH(prefix "status = $2") " UNION ALL " MEND_PG_BRANCH(            \
      prefix "status = $3") " UNION ALL " MEND_PG_BRANCH(prefix "status = $4") ") AS page" \
      MEND_PG_NEWEST_FIRST "LIMIT $7"

constexpr char kPageByStatus[] = MEND_PG_PAGE("");
constexpr char kPageByAgent[] = MEND_PG_PAGE("agent = $8 AND ");

// Counts: $1..$4 the statuses, $5 $6 the key counted from, $7 the agent.
constexpr char kCountAll[] = "SELECT COUNT(*) FROM runs WHERE status <> 'completed'";
constexpr char kCountAllFrom[] =
    "SELECT COUNT(*) FROM runs WHERE status <> 'completed' AND "
    "(created_at, " MEND_PG_ID ") >= ($1, $2)";
constexpr char kCountByStatus[] =
    "SELECT COUNT(*) FROM runs WHERE status IN ($1, $2, $3, $4) AND status <> 'completed' AND "
    "(created_at, " MEND_PG_ID ") >= ($5, $6)";
constexpr char kCountByAgent[] =
    "SELECT COUNT(*) FROM runs WHERE agent = $7 AND status IN ($1, $2, $3, $4) AND "
    "status <> 'completed' AND (created_at, " MEND_PG_ID ") >= ($5, $6)";

#undef MEND_PG_PAGE
#undef MEND_PG_BRANCH
#undef MEND_PG_NEWEST_FIRST
#undef MEND_PG_ID

std::vector<PgParam> StatusParams(const PendingPlan& plan) {
  std::vector<PgParam> params;
  for (const std::optional<std::string>& status : plan.statuses) {
    params.push_back(status ? PgParam::Text(*status) : PgParam::Null());
  }
  return params;
}

std::vector<PgParam> PageParams(const PendingPlan& plan) {
  std::vector<PgParam> params;
  if (plan.filtered) params = StatusParams(plan);
  params.push_back(PgParam::Int(plan.before_nanos));
  params.push_back(PgParam::Text(plan.before_id));
  params.push_back(PgParam::Int(plan.limit));
  if (plan.agent.has_value()) params.push_back(PgParam::Text(*plan.agent));
  return params;
}

}  // namespace

Result<PendingPage> PgStore::ListPending(const PendingQuery& query) {
  MEND_ASSIGN_OR_RETURN(PendingPlan plan, PlanPending(query));
  std::optional<PendingPage> page;
  MEND_RETURN_IF_ERROR(Transact(TxKind::kRead, [&](PgConn& conn) -> Status {
    const char* sql = !plan.filtered ? kPageAll : plan.agent ? kPageByAgent : kPageByStatus;
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
  if (plan.agent.has_value()) params.push_back(PgParam::Text(*plan.agent));
  const char* sql = plan.agent      ? kCountByAgent
                    : plan.filtered ? kCountByStatus
                    : from          ? kCountAllFrom
                                    : kCountAll;
  MEND_ASSIGN_OR_RETURN(PgResult res, conn.Exec(sql, params));
  std::optional<int64_t> count = res.rows() == 1 ? res.Int(0, 0) : std::nullopt;
  if (!count.has_value()) return InternalError("COUNT returned no number");
  return *count;
}

}  // namespace mend::store::internal
