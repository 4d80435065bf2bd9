#include "store/sqlite_rows.h"

#include <chrono>
#include <string>

namespace mend::store::internal {
namespace {

enum Col {
  kId,
  kAgent,
  kAgentDir,
  kTask,
  kStatus,
  kStep,
  kMessageCount,
  kAttempts,
  kNextAttemptAt,
  kWaiting,
  kErrorCode,
  kErrorMessage,
  kErrorClass,
  kErrorRetryable,
  kParentId,
  kParentStep,
  kMetadata,
  kCreatedAt,
  kUpdatedAt,
  kEpoch,
  kLeaseId,
  kLeaseHost,
  kLeaseBootId,
  kLeasePid,
  kLeaseExpiresAt,
};

const char* const kColumnNames[] = {
    "id",
    "agent",
    "agent_dir",
    "task",
    "status",
    "step",
    "message_count",
    "attempts",
    "next_attempt_at",
    "waiting",
    "error_code",
    "error_message",
    "error_class",
    "error_retryable",
    "parent_id",
    "parent_step",
    "metadata",
    "created_at",
    "updated_at",
    "epoch",
    "lease_id",
    "lease_host",
    "lease_boot_id",
    "lease_pid",
    "lease_expires_at",
};

// Reads columns with type checks; the first mismatch is remembered as a kDataLoss.
class RowReader {
 public:
  explicit RowReader(const SqliteStmt& stmt) : stmt_(stmt) {}

  std::string Text(int col) { return Expect(col, SQLITE_TEXT) ? stmt_.Text(col) : ""; }
  int64_t Int(int col) { return Expect(col, SQLITE_INTEGER) ? stmt_.Int(col) : 0; }
  bool Null(int col) { return stmt_.IsNull(col); }

  void Fail(int col, const std::string& why) {
    if (!error_.ok()) return;
    error_ = DataLossError("run \"" + stmt_.Text(kId) + "\": corrupt runs row (column " +
                           kColumnNames[col] + ": " + why + ")");
  }
  const Status& error() const { return error_; }

 private:
  bool Expect(int col, int type) {
    if (stmt_.ColumnType(col) == type) return true;
    Fail(col, "unexpected type");
    return false;
  }

  const SqliteStmt& stmt_;
  Status error_;
};

void ReadError(RowReader& r, RunRecord& run) {
  if (r.Null(kErrorCode)) return;
  RunError e;
  e.code = r.Text(kErrorCode);
  e.message = r.Text(kErrorMessage);
  e.error_class = r.Text(kErrorClass);
  int64_t retryable = r.Int(kErrorRetryable);
  if (retryable != 0 && retryable != 1) r.Fail(kErrorRetryable, "not 0 or 1");
  e.retryable = retryable == 1;
  run.last_error = std::move(e);
}

void ReadLease(RowReader& r, RunRecord& run) {
  if (r.Null(kLeaseId)) return;
  LeaseHolder h;
  h.id = r.Text(kLeaseId);
  h.host = r.Text(kLeaseHost);
  h.boot_id = r.Text(kLeaseBootId);
  h.pid = r.Int(kLeasePid);
  run.lease_holder = std::move(h);
  run.lease_expires_at = FromNanos(r.Int(kLeaseExpiresAt));
}

void BindOptionalTime(SqliteStmt& stmt, int index, const std::optional<Time>& t) {
  if (t.has_value()) {
    stmt.Bind(index, ToNanos(*t));
  } else {
    stmt.BindNull(index);
  }
}

}  // namespace

int64_t ToNanos(Time t) {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(t.time_since_epoch()).count();
}

Time FromNanos(int64_t nanos) {
  return Time(std::chrono::duration_cast<Time::duration>(std::chrono::nanoseconds(nanos)));
}

Result<StoredRun> ParseRunRow(const SqliteStmt& stmt) {
  RowReader r(stmt);
  StoredRun out;
  RunRecord& run = out.record;
  run.id = r.Text(kId);
  run.agent = r.Text(kAgent);
  run.agent_dir = r.Text(kAgentDir);
  run.task = r.Text(kTask);
  std::string status = r.Text(kStatus);
  Result<RunStatus> parsed = ParseRunStatus(status);
  if (parsed.ok()) run.status = *parsed;
  if (!parsed.ok()) r.Fail(kStatus, "unknown status \"" + status + "\"");
  run.step = r.Int(kStep);
  out.message_count = r.Int(kMessageCount);
  if (run.step < 0 || out.message_count < 0) r.Fail(kStep, "negative");
  run.attempts = r.Int(kAttempts);
  if (!r.Null(kNextAttemptAt)) run.next_attempt_at = FromNanos(r.Int(kNextAttemptAt));
  run.waiting = r.Text(kWaiting);
  ReadError(r, run);
  run.parent_id = r.Text(kParentId);
  run.parent_step = r.Int(kParentStep);
  run.metadata = r.Text(kMetadata);
  run.created_at = FromNanos(r.Int(kCreatedAt));
  run.updated_at = FromNanos(r.Int(kUpdatedAt));
  run.epoch = r.Int(kEpoch);
  ReadLease(r, run);
  if (!r.error().ok()) return r.error();
  return out;
}

RunRecord CorruptRunMarker(const SqliteStmt& stmt, const Status& why) {
  RunRecord run;
  run.id = stmt.Text(kId);
  run.status = RunStatus::kFailed;
  if (stmt.ColumnType(kCreatedAt) == SQLITE_INTEGER)
    run.created_at = FromNanos(stmt.Int(kCreatedAt));
  run.updated_at = run.created_at;
  run.last_error = RunError{std::string(StatusCodeName(why.code())), std::string(why.message()),
                            "internal", false};
  return run;
}

void BindRun(SqliteStmt& stmt, const StoredRun& stored) {
  const RunRecord& run = stored.record;
  stmt.BindText(kId + 1, run.id).BindText(kAgent + 1, run.agent);
  stmt.BindText(kAgentDir + 1, run.agent_dir).BindText(kTask + 1, run.task);
  stmt.BindText(kStatus + 1, RunStatusName(run.status)).Bind(kStep + 1, run.step);
  stmt.Bind(kMessageCount + 1, stored.message_count).Bind(kAttempts + 1, run.attempts);
  BindOptionalTime(stmt, kNextAttemptAt + 1, run.next_attempt_at);
  stmt.BindText(kWaiting + 1, run.waiting);
  if (run.last_error.has_value()) {
    stmt.BindText(kErrorCode + 1, run.last_error->code);
    stmt.BindText(kErrorMessage + 1, run.last_error->message);
    stmt.BindText(kErrorClass + 1, run.last_error->error_class);
    stmt.Bind(kErrorRetryable + 1, run.last_error->retryable ? 1 : 0);
  } else {
    for (int c : {kErrorCode, kErrorMessage, kErrorClass, kErrorRetryable}) stmt.BindNull(c + 1);
  }
  stmt.BindText(kParentId + 1, run.parent_id).Bind(kParentStep + 1, run.parent_step);
  stmt.BindText(kMetadata + 1, run.metadata);
  stmt.Bind(kCreatedAt + 1, ToNanos(run.created_at)).Bind(kUpdatedAt + 1, ToNanos(run.updated_at));
  stmt.Bind(kEpoch + 1, run.epoch);
  if (run.lease_holder.has_value() && run.lease_expires_at.has_value()) {
    stmt.BindText(kLeaseId + 1, run.lease_holder->id);
    stmt.BindText(kLeaseHost + 1, run.lease_holder->host);
    stmt.BindText(kLeaseBootId + 1, run.lease_holder->boot_id);
    stmt.Bind(kLeasePid + 1, run.lease_holder->pid);
    stmt.Bind(kLeaseExpiresAt + 1, ToNanos(*run.lease_expires_at));
  } else {
    for (int c : {kLeaseId, kLeaseHost, kLeaseBootId, kLeasePid, kLeaseExpiresAt}) {
      stmt.BindNull(c + 1);
    }
  }
}

Status ApplyUpdate(const RunUpdate& update, RunRecord& run) {
  if (update.status.has_value()) {
    MEND_RETURN_IF_ERROR(CheckRunTransition(run.status, *update.status));
    run.status = *update.status;
  }
  if (update.waiting.has_value()) run.waiting = *update.waiting;
  if (update.last_error.has_value()) run.last_error = *update.last_error;
  if (update.attempts.has_value()) run.attempts = *update.attempts;
  if (update.next_attempt_at.has_value()) run.next_attempt_at = *update.next_attempt_at;
  if (update.metadata.has_value()) run.metadata = *update.metadata;
  return OkStatus();
}

bool IsEmpty(const RunUpdate& u) {
  return !u.status && !u.waiting && !u.last_error && !u.attempts && !u.next_attempt_at &&
         !u.metadata;
}

}  // namespace mend::store::internal
