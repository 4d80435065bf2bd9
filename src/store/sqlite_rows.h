#pragma once

#include <cstdint>
#include <string>

#include "mend/base/clock.h"
#include "mend/base/result.h"
#include "mend/store/checkpoint_store.h"
#include "store/sqlite_db.h"

namespace mend::store::internal {

// Times are stored as integer nanoseconds since the Unix epoch.
int64_t ToNanos(Time t);
Time FromNanos(int64_t nanos);

// A `runs` row: the public record plus the length of the run's conversation.
struct StoredRun {
  RunRecord record;
  int64_t message_count = 0;
};

// The column list every SELECT of `runs` uses, in the order ParseRunRow reads. A macro so that
// statements stay string literals (the statement cache keys on their address).
#define MEND_STORE_RUN_COLUMNS                                                                 \
  "id, agent, agent_dir, task, status, step, message_count, attempts, next_attempt_at, "       \
  "waiting, error_code, error_message, error_class, error_retryable, parent_id, parent_step, " \
  "metadata, created_at, updated_at, epoch, lease_id, lease_host, lease_boot_id, lease_pid, "  \
  "lease_expires_at"

// Reads a `runs` row selected with MEND_STORE_RUN_COLUMNS. A column of the wrong type or an unknown
// status is kDataLoss naming the run and the column.
Result<StoredRun> ParseRunRow(const SqliteStmt& stmt);

// What ListRuns shows for a row ParseRunRow rejected: the id, status failed and a DATA_LOSS last
// error (class internal, not retryable) carrying `why`.
RunRecord CorruptRunMarker(const SqliteStmt& stmt, const Status& why);

// Binds every column of `run` as ?1..?25 in MEND_STORE_RUN_COLUMNS order.
void BindRun(SqliteStmt& stmt, const StoredRun& run);

// Applies the set fields of `update` to `run`; validates the status change.
Status ApplyUpdate(const RunUpdate& update, RunRecord& run);

// True when `update` sets nothing.
bool IsEmpty(const RunUpdate& update);

}  // namespace mend::store::internal
