// Retention for the SQLite store: Prune, and giving the freed pages back to the file system.

#include <string>
#include <vector>

#include "store/sqlite_store_impl.h"

namespace mend::store::internal {
namespace {

// The runs_status index finds the finished runs; the age is checked on their rows.
constexpr char kSelectFinishedBefore[] =
    "SELECT " MEND_STORE_RUN_COLUMNS
    " FROM runs WHERE status IN ('completed', 'failed') AND updated_at < ?1 "
    "ORDER BY created_at, id";
// Every checkpoint of a run but its newest, which Load, resume and `mend show` read.
constexpr char kCountHistory[] =
    "SELECT COUNT(*), COALESCE(SUM(LENGTH(state)), 0) FROM checkpoints WHERE run_id = ?1 AND "
    "step < (SELECT MAX(step) FROM checkpoints WHERE run_id = ?1)";
constexpr char kDeleteHistory[] =
    "DELETE FROM checkpoints WHERE run_id = ?1 AND "
    "step < (SELECT MAX(step) FROM checkpoints WHERE run_id = ?1)";
constexpr char kCountCheckpoints[] =
    "SELECT COUNT(*), COALESCE(SUM(LENGTH(state)), 0) FROM checkpoints WHERE run_id = ?1";
constexpr char kCountMessages[] =
    "SELECT COUNT(*), COALESCE(SUM(LENGTH(body)), 0) FROM messages WHERE run_id = ?1";
// The cascade removes the run's messages and checkpoints.
constexpr char kDeleteWholeRun[] = "DELETE FROM runs WHERE id = ?1";

struct RowsAndBytes {
  int64_t rows = 0;
  int64_t bytes = 0;
};

}  // namespace

Result<PruneReport> SqliteStore::Prune(const PruneRequest& request) {
  PruneReport report;
  MEND_RETURN_IF_ERROR(Transact(SqliteConn::TxKind::kWrite, [&]() -> Status {
    std::vector<RunRecord> runs;
    {
      MEND_ASSIGN_OR_RETURN(SqliteStmt select, db_->Prepare(kSelectFinishedBefore));
      select.Bind(1, ToNanos(request.cutoff));
      while (true) {
        MEND_ASSIGN_OR_RETURN(bool row, select.Step());
        if (!row) break;
        // A corrupt row is left for DeleteRun: nothing about it can be trusted, its age included.
        Result<StoredRun> run = ParseRunRow(select);
        if (!run.ok()) continue;
        if (OldEnoughToPrune(run->record, request.cutoff) && !LeaseIsLive(run->record)) {
          runs.push_back(std::move(run->record));
        }
      }
    }
    for (const RunRecord& run : runs) MEND_RETURN_IF_ERROR(PruneRun(run.id, request, report));
    return OkStatus();
  }));
  if (request.mode == PruneMode::kApply) MEND_RETURN_IF_ERROR(ReclaimSpace());
  return report;
}

Status SqliteStore::PruneRun(const std::string& run_id, const PruneRequest& request,
                             PruneReport& report) {
  auto count = [&](const char* sql) -> Result<RowsAndBytes> {
    MEND_ASSIGN_OR_RETURN(SqliteStmt stmt, db_->Prepare(sql));
    stmt.BindText(1, run_id);
    MEND_ASSIGN_OR_RETURN(bool row, stmt.Step());
    if (!row) return RowsAndBytes{};
    return RowsAndBytes{stmt.Int(0), stmt.Int(1)};
  };
  const bool whole = request.scope == PruneScope::kWholeRuns;
  MEND_ASSIGN_OR_RETURN(RowsAndBytes checkpoints, count(whole ? kCountCheckpoints : kCountHistory));
  RowsAndBytes messages;
  if (whole) {
    MEND_ASSIGN_OR_RETURN(messages, count(kCountMessages));
  } else if (checkpoints.rows == 0) {
    return OkStatus();  // nothing but the final checkpoint: nothing to prune
  }
  report.runs += 1;
  report.runs_deleted += whole ? 1 : 0;
  report.checkpoints += checkpoints.rows;
  report.messages += messages.rows;
  report.bytes += checkpoints.bytes + messages.bytes;
  if (request.mode == PruneMode::kDryRun) return OkStatus();
  MEND_ASSIGN_OR_RETURN(SqliteStmt remove, db_->Prepare(whole ? kDeleteWholeRun : kDeleteHistory));
  return remove.BindText(1, run_id).Run();
}

Status SqliteStore::ReclaimSpace() {
  std::lock_guard<std::mutex> lock(mu_);
  // Pages freed by deletes stay in the file on a free list. A database created with
  // auto_vacuum = INCREMENTAL (every new mend.db, Init) hands them back cheaply; an older one is
  // rewritten once by VACUUM, which also converts it to incremental mode (the pragma is set on
  // this connection). Checking the free list rather than this prune's counts lets a later prune
  // finish the job when an earlier VACUUM found the database busy.
  int64_t free_pages = 0;
  int64_t auto_vacuum = 0;
  {
    MEND_ASSIGN_OR_RETURN(SqliteStmt stmt, db_->Prepare("PRAGMA freelist_count"));
    MEND_ASSIGN_OR_RETURN(bool row, stmt.Step());
    if (row) free_pages = stmt.Int(0);
  }
  if (free_pages == 0) return OkStatus();
  {
    MEND_ASSIGN_OR_RETURN(SqliteStmt stmt, db_->Prepare("PRAGMA auto_vacuum"));
    MEND_ASSIGN_OR_RETURN(bool row, stmt.Step());
    if (row) auto_vacuum = stmt.Int(0);
  }
  constexpr int64_t kIncremental = 2;
  if (auto_vacuum == kIncremental) return db_->Exec("PRAGMA incremental_vacuum");
  // An older file: the VACUUM takes the mode and converts it (the store sets the mode on a new
  // database only, so that opening one never writes).
  MEND_RETURN_IF_ERROR(db_->Exec("PRAGMA auto_vacuum = INCREMENTAL"));
  return db_->Exec("VACUUM");
}

}  // namespace mend::store::internal
