// Group commit for the SQLite store: many writes, one transaction, one fsync, separate outcomes.

#include <algorithm>
#include <string>
#include <vector>

#include "store/sqlite_store_impl.h"

namespace mend::store::internal {
namespace {

// Gives `status` to every write of `writes` that has not failed on its own: the writes that
// succeeded so far lose their changes with the transaction, and the rest never ran.
void FailSurvivors(std::span<PendingWrite* const> writes, const Status& status) {
  for (PendingWrite* w : writes) {
    if (w->result.ok()) w->result = status;
  }
}

}  // namespace

// The writes of a batch run one after another in one transaction, without a savepoint each: a
// savepoint made SQLite journal every page a write touched, which cost more than the statements
// themselves (docs/performance.md). When a write fails (a lost lease, a step out of order: rare),
// the transaction is rolled back and the batch runs again without it, so the outcome is the
// same as if the failed write had been undone alone. A batch of n writes with k failures runs
// k + 1 times; each run is cheap next to the fsync of its COMMIT.
void SqliteStore::RunBatch(std::span<PendingWrite* const> batch) {
  std::lock_guard<std::mutex> lock(mu_);
  for (PendingWrite* w : batch) w->result = OkStatus();
  stats_.writes += static_cast<int64_t>(batch.size());
  std::vector<PendingWrite*> live(batch.begin(), batch.end());
  while (!live.empty()) {
    Status begin = db_->Exec("BEGIN IMMEDIATE");
    if (!begin.ok()) {
      FailSurvivors(live, begin);
      return;
    }
    PendingWrite* failed = nullptr;
    for (PendingWrite* w : live) {
      Status s = (*w->body)();
      if (!db_->TransactionActive()) {
        // SQLite abandoned the transaction (a full disk, an I/O error): nothing of this batch is
        // written.
        w->result = s;
        FailSurvivors(live, s.ok() ? InternalError("the write transaction was rolled back") : s);
        return;
      }
      if (!s.ok()) {
        w->result = s;
        failed = w;
        break;
      }
    }
    if (failed != nullptr) {
      db_->Exec("ROLLBACK").IgnoreError();
      live.erase(std::find(live.begin(), live.end(), failed));
      if (!live.empty()) stats_.retries += 1;
      continue;
    }
    stats_.transactions += 1;
    Status commit = db_->Exec("COMMIT");
    if (commit.ok()) {
      FinishCheckpointIfDue();
      return;
    }
    // A failed COMMIT may leave the transaction open (SQLITE_BUSY) or already rolled back.
    db_->Exec("ROLLBACK").IgnoreError();
    FailSurvivors(live, commit);
    return;
  }
}

SqliteStore::WriteStats SqliteStore::write_stats() {
  std::lock_guard<std::mutex> lock(mu_);
  return stats_;
}

}  // namespace mend::store::internal
