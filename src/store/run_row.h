#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "mend/base/clock.h"
#include "mend/base/result.h"
#include "mend/store/checkpoint_store.h"

namespace mend::store::internal {

// The `runs` row codec shared by the SQLite and PostgreSQL stores: same columns, same order,
// same encodings. Each store adapts its database API to RunRowSource / RunRowSink.

// Times are stored as integer nanoseconds since the Unix epoch.
int64_t ToNanos(Time t);
Time FromNanos(int64_t nanos);

// A `runs` row: the public record plus the length of the run's conversation.
struct StoredRun {
  RunRecord record;
  int64_t message_count = 0;
};

// The column list every SELECT of `runs` uses, in the order the codec reads and writes. A macro so
// that statements stay string literals (the SQLite statement cache keys on their address).
#define MEND_STORE_RUN_COLUMNS                                                                 \
  "id, agent, agent_dir, task, status, step, message_count, attempts, next_attempt_at, "       \
  "waiting, error_code, error_message, error_class, error_retryable, parent_id, parent_step, " \
  "metadata, created_at, updated_at, epoch, lease_id, lease_host, lease_boot_id, lease_pid, "  \
  "lease_expires_at"
inline constexpr int kRunColumnCount = 25;

// One row read with MEND_STORE_RUN_COLUMNS; columns are 0-based in that order.
class RunRowSource {
 public:
  virtual ~RunRowSource() = default;
  virtual bool IsNull(int col) const = 0;
  // The value, or nullopt when the column is NULL or of another type.
  virtual std::optional<std::string> Text(int col) const = 0;
  virtual std::optional<int64_t> Int(int col) const = 0;
};

// Where a row's values go, columns 0-based in MEND_STORE_RUN_COLUMNS order.
class RunRowSink {
 public:
  virtual ~RunRowSink() = default;
  virtual void Text(int col, std::string_view value) = 0;
  virtual void Int(int col, int64_t value) = 0;
  virtual void Null(int col) = 0;
};

// A NULL where a value belongs, a value of the wrong type, an unknown status or a negative step is
// kDataLoss naming the run and the column.
Result<StoredRun> ParseRunColumns(const RunRowSource& row);

// What ListRuns shows for a row ParseRunColumns rejected: the id, status failed and a DATA_LOSS
// last error (class internal, not retryable) carrying `why`.
RunRecord CorruptRunMarker(const RunRowSource& row, const Status& why);

// Every column of `run`.
void WriteRunColumns(const StoredRun& run, RunRowSink& sink);

// Applies the set fields of `update` to `run`; validates the status change.
Status ApplyUpdate(const RunUpdate& update, RunRecord& run);

// True when `update` sets nothing.
bool IsEmpty(const RunUpdate& update);

}  // namespace mend::store::internal
