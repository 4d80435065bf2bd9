// Group commit for the SQLite store: many writes, one transaction, one fsync, separate outcomes.

#include <string>

#include "store/sqlite_store_impl.h"

namespace mend::store::internal {
namespace {

constexpr char kSavepoint[] = "SAVEPOINT write";
constexpr char kRelease[] = "RELEASE write";
constexpr char kRollbackTo[] = "ROLLBACK TO write";

// Gives `status` to every write of `batch` that has not failed on its own: the writes that
// succeeded so far lose their changes with the transaction, and the rest never ran.
void FailSurvivors(std::span<PendingWrite* const> batch, const Status& status) {
  for (PendingWrite* w : batch) {
    if (w->result.ok()) w->result = status;
  }
}

}  // namespace

Status SqliteStore::RunInSavepoint(const std::function<Status()>& body) {
  MEND_ASSIGN_OR_RETURN(SqliteStmt savepoint, db_->Prepare(kSavepoint));
  MEND_RETURN_IF_ERROR(savepoint.Run());
  Status s = body();
  if (s.ok()) {
    MEND_ASSIGN_OR_RETURN(SqliteStmt release, db_->Prepare(kRelease));
    s = release.Run();
    if (s.ok()) return s;
  }
  // ROLLBACK TO keeps the savepoint open; RELEASE then removes it. Both fail harmlessly when
  // SQLite already rolled the whole transaction back, which RunBatch checks for.
  if (Result<SqliteStmt> rollback = db_->Prepare(kRollbackTo); rollback.ok()) {
    rollback->Run().IgnoreError();
  }
  if (Result<SqliteStmt> release = db_->Prepare(kRelease); release.ok()) {
    release->Run().IgnoreError();
  }
  return s;
}

void SqliteStore::RunBatch(std::span<PendingWrite* const> batch) {
  std::lock_guard<std::mutex> lock(mu_);
  for (PendingWrite* w : batch) w->result = OkStatus();
  Status begin = db_->Exec("BEGIN IMMEDIATE");
  if (!begin.ok()) {
    FailSurvivors(batch, begin);
    return;
  }
  stats_.transactions += 1;
  stats_.writes += static_cast<int64_t>(batch.size());
  // A write alone in its batch needs no savepoint: if it fails, the whole transaction is rolled
  // back below. That saves a SAVEPOINT and a RELEASE (and the statement journal) for every save
  // of a run that writes alone, which is what a single run's save costs beyond SQLite's own.
  const bool alone = batch.size() == 1;
  for (PendingWrite* w : batch) {
    w->result = alone ? (*w->body)() : RunInSavepoint(*w->body);
    if (!db_->TransactionActive()) {
      // SQLite abandoned the transaction (a full disk, an I/O error): nothing of this batch is
      // written, whatever the savepoints said.
      Status lost =
          w->result.ok() ? InternalError("the write transaction was rolled back") : w->result;
      FailSurvivors(batch, lost);
      return;
    }
  }
  if (alone && !batch[0]->result.ok()) {
    db_->Exec("ROLLBACK").IgnoreError();
    return;
  }
  Status commit = db_->Exec("COMMIT");
  if (commit.ok()) return;
  // A failed COMMIT may leave the transaction open (SQLITE_BUSY) or already rolled back.
  db_->Exec("ROLLBACK").IgnoreError();
  FailSurvivors(batch, commit);
}

SqliteStore::WriteStats SqliteStore::write_stats() {
  std::lock_guard<std::mutex> lock(mu_);
  return stats_;
}

}  // namespace mend::store::internal
