// ListRecoveryCandidates of the SQLite store: pages of the runs a recovery pass acts on, from the
// index runs_recovery (docs/store_schema.md, "Recovery candidates").

#include <optional>
#include <utility>

#include "store/pending_plan.h"
#include "store/sqlite_recovery_sql.h"
#include "store/sqlite_store_impl.h"

namespace mend::store::internal {
namespace {

constexpr char kSelectCursor[] = "SELECT value FROM meta WHERE key = 'recovery.cursor'";
constexpr char kUpsertCursor[] =
    "INSERT INTO meta (key, value) VALUES ('recovery.cursor', ?1) "
    "ON CONFLICT (key) DO UPDATE SET value = excluded.value";
constexpr char kDeleteCursor[] = "DELETE FROM meta WHERE key = 'recovery.cursor'";

}  // namespace

Result<std::optional<RunCursor>> SqliteStore::RecoveryCursor() {
  std::optional<RunCursor> cursor;
  MEND_RETURN_IF_ERROR(Transact(SqliteConn::TxKind::kRead, [&]() -> Status {
    MEND_ASSIGN_OR_RETURN(SqliteStmt stmt, db_->Prepare(kSelectCursor));
    MEND_ASSIGN_OR_RETURN(bool row, stmt.Step());
    if (!row) return OkStatus();
    // A position that cannot be read is only a lost hint: the next pass starts at the oldest.
    Result<RunCursor> parsed = ParseRunCursor(stmt.Text(0));
    if (parsed.ok()) cursor = std::move(parsed).value();
    return OkStatus();
  }));
  return cursor;
}

Status SqliteStore::SetRecoveryCursor(const std::optional<RunCursor>& cursor) {
  return Transact(SqliteConn::TxKind::kWrite, [&]() -> Status {
    if (!cursor.has_value()) {
      MEND_ASSIGN_OR_RETURN(SqliteStmt stmt, db_->Prepare(kDeleteCursor));
      return stmt.Run();
    }
    MEND_ASSIGN_OR_RETURN(SqliteStmt stmt, db_->Prepare(kUpsertCursor));
    return stmt.BindText(1, FormatRunCursor(*cursor)).Run();
  });
}

Result<RecoveryPage> SqliteStore::ListRecoveryCandidates(const RecoveryQuery& query) {
  MEND_RETURN_IF_ERROR(ValidateRecoveryQuery(query));
  RecoveryPage page;
  MEND_RETURN_IF_ERROR(Transact(SqliteConn::TxKind::kRead, [&]() -> Status {
    page = RecoveryPage{};
    MEND_RETURN_IF_ERROR(ReadCandidates(query, page));
    if (query.counting == RecoveryCounting::kOmit) return OkStatus();
    MEND_ASSIGN_OR_RETURN(page.counts, CountForRecovery(query));
    return OkStatus();
  }));
  return page;
}

Status SqliteStore::ReadCandidates(const RecoveryQuery& query, RecoveryPage& page) {
  MEND_ASSIGN_OR_RETURN(SqliteStmt stmt, db_->Prepare(recovery_sql::kPage));
  stmt.Bind(1, query.after ? ToNanos(query.after->created_at) : kFirstKeyNanos);
  stmt.BindText(2, query.after ? query.after->id : "");
  stmt.Bind(3, query.max_attempts);
  if (query.backoff == RecoveryBackoff::kSkip) {
    stmt.Bind(4, ToNanos(query.now));
  } else {
    stmt.BindNull(4);
  }
  // One row more than the page says whether more follow, without counting them.
  stmt.Bind(5, static_cast<int64_t>(query.limit) + 1);
  while (true) {
    MEND_ASSIGN_OR_RETURN(bool row, stmt.Step());
    if (!row) return OkStatus();
    if (page.runs.size() == query.limit) {
      page.next = RunCursor{page.runs.back().created_at, page.runs.back().id};
      return OkStatus();
    }
    Result<StoredRun> run = ParseRunRow(stmt);
    // As in ListRuns: a corrupt row is listed as a failed run carrying the DATA_LOSS.
    page.runs.push_back(run.ok() ? std::move(run->record) : CorruptRunMarker(stmt, run.status()));
  }
}

Result<RecoveryCounts> SqliteStore::CountForRecovery(const RecoveryQuery& query) {
  MEND_ASSIGN_OR_RETURN(SqliteStmt stmt, db_->Prepare(recovery_sql::kCounts));
  stmt.Bind(1, query.max_attempts).Bind(2, ToNanos(query.now));
  MEND_ASSIGN_OR_RETURN(bool row, stmt.Step());
  if (!row) return InternalError("COUNT returned no row");
  RecoveryCountParts parts;
  int64_t* fields[] = {&parts.waiting_status, &parts.waiting_kind,  &parts.quarantined,
                       &parts.active,         &parts.non_retryable, &parts.backoff,
                       &parts.unfinished};
  for (int col = 0; col < 7; ++col) *fields[col] = stmt.Int(col);
  RecoveryCounts counts = CombineRecoveryCounts(parts);
  return counts;
}

}  // namespace mend::store::internal
