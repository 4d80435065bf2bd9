// ListRecoveryCandidates of the PostgreSQL store: the statements of sqlite_recovery_sql.h, with ids
// compared with COLLATE "C" (bytes), matching the index runs_recovery of schema version 4.

#include <algorithm>
#include <optional>
#include <utility>
#include <vector>

#include "store/pending_plan.h"
#include "store/pg_store_impl.h"
#include "store/recovery_sql.h"

namespace mend::store::internal {
namespace {

// $1 $2: the key runs must follow; $3: max_attempts; $4: now, or NULL to take runs in backoff too;
// $5: the limit.
constexpr char kPage[] =
    "SELECT " MEND_STORE_RUN_COLUMNS " FROM runs WHERE " MEND_RECOVERY_ACTIVE
    " AND (created_at, id COLLATE \"C\") > ($1, $2) AND " MEND_RECOVERY_CANDIDATE(
        "$3", "$4::BIGINT") " ORDER BY created_at, id COLLATE \"C\" LIMIT $5";

// $1: max_attempts; $2: now.
constexpr char kCounts[] = MEND_RECOVERY_COUNTS("FROM runs", "$1", "$2");

constexpr char kSelectCursor[] = "SELECT value FROM meta WHERE key = 'recovery.cursor'";
constexpr char kUpsertCursor[] =
    "INSERT INTO meta (key, value) VALUES ('recovery.cursor', $1) "
    "ON CONFLICT (key) DO UPDATE SET value = excluded.value";
constexpr char kDeleteCursor[] = "DELETE FROM meta WHERE key = 'recovery.cursor'";

}  // namespace

Result<std::optional<RunCursor>> PgStore::RecoveryCursor() {
  std::optional<RunCursor> cursor;
  MEND_RETURN_IF_ERROR(Transact(TxKind::kRead, [&](PgConn& conn) -> Status {
    MEND_ASSIGN_OR_RETURN(PgResult res, conn.Exec(kSelectCursor));
    if (res.rows() == 0) return OkStatus();
    // A position that cannot be read is only a lost hint: the next pass starts at the oldest.
    Result<RunCursor> parsed = ParseRunCursor(res.Text(0, 0));
    if (parsed.ok()) cursor = std::move(parsed).value();
    return OkStatus();
  }));
  return cursor;
}

Status PgStore::SetRecoveryCursor(const std::optional<RunCursor>& cursor) {
  return Transact(TxKind::kWrite, [&](PgConn& conn) -> Status {
    if (!cursor.has_value()) return conn.Exec(kDeleteCursor).status();
    return conn.Exec(kUpsertCursor, {PgParam::Text(FormatRunCursor(*cursor))}).status();
  });
}

Result<RecoveryPage> PgStore::ListRecoveryCandidates(const RecoveryQuery& query) {
  MEND_RETURN_IF_ERROR(ValidateRecoveryQuery(query));
  RecoveryPage page;
  MEND_RETURN_IF_ERROR(Transact(TxKind::kRead, [&](PgConn& conn) -> Status {
    page = RecoveryPage{};
    std::vector<PgParam> params = {
        PgParam::Int(query.after ? ToNanos(query.after->created_at) : kFirstKeyNanos),
        PgParam::Text(query.after ? query.after->id : ""), PgParam::Int(query.max_attempts),
        query.backoff == RecoveryBackoff::kSkip ? PgParam::Int(ToNanos(query.now))
                                                : PgParam::Null(),
        // One row more than the page says whether more follow, without counting them.
        PgParam::Int(static_cast<int64_t>(query.limit) + 1)};
    MEND_ASSIGN_OR_RETURN(PgResult res, conn.Exec(kPage, params));
    const int rows = std::min(res.rows(), static_cast<int>(query.limit));
    for (int i = 0; i < rows; ++i) {
      Result<StoredRun> run = ParsePgRunRow(res, i);
      // As in ListRuns: a corrupt row is listed as a failed run carrying the DATA_LOSS.
      page.runs.push_back(run.ok() ? std::move(run->record)
                                   : PgCorruptRunMarker(res, i, run.status()));
    }
    if (res.rows() > rows) page.next = RunCursor{page.runs.back().created_at, page.runs.back().id};
    if (query.counting == RecoveryCounting::kOmit) return OkStatus();
    MEND_ASSIGN_OR_RETURN(PgResult counts, conn.Exec(kCounts, {PgParam::Int(query.max_attempts),
                                                               PgParam::Int(ToNanos(query.now))}));
    if (counts.rows() != 1) return InternalError("COUNT returned no row");
    RecoveryCountParts parts;
    int64_t* fields[] = {&parts.waiting_status, &parts.waiting_kind,  &parts.quarantined,
                         &parts.active,         &parts.non_retryable, &parts.backoff,
                         &parts.unfinished};
    for (int col = 0; col < 7; ++col) {
      std::optional<int64_t> n = counts.Int(0, col);
      if (!n.has_value()) return InternalError("COUNT returned no number");
      *fields[col] = *n;
    }
    page.counts = CombineRecoveryCounts(parts);
    return OkStatus();
  }));
  return page;
}

}  // namespace mend::store::internal
