#include "store/run_row.h"

#include <chrono>
#include <string>
#include <utility>

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

static_assert(sizeof(kColumnNames) / sizeof(kColumnNames[0]) == kRunColumnCount);

// Reads columns with checks; the first problem is remembered as a kDataLoss.
class RowReader {
 public:
  explicit RowReader(const RunRowSource& row) : row_(row) {}

  std::string Text(int col) {
    std::optional<std::string> v = row_.Text(col);
    if (!v.has_value()) Fail(col, row_.IsNull(col) ? "unexpected NULL" : "not text");
    return v.value_or("");
  }
  int64_t Int(int col) {
    std::optional<int64_t> v = row_.Int(col);
    if (!v.has_value()) Fail(col, row_.IsNull(col) ? "unexpected NULL" : "not an integer");
    return v.value_or(0);
  }
  bool Null(int col) const { return row_.IsNull(col); }

  void Fail(int col, const std::string& why) {
    if (!error_.ok()) return;
    error_ = DataLossError("run \"" + row_.Text(kId).value_or("?") +
                           "\": corrupt runs row (column " + kColumnNames[col] + ": " + why + ")");
  }
  const Status& error() const { return error_; }

 private:
  const RunRowSource& row_;
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

void WriteOptionalTime(RunRowSink& sink, int col, const std::optional<Time>& t) {
  if (t.has_value()) {
    sink.Int(col, ToNanos(*t));
  } else {
    sink.Null(col);
  }
}

}  // namespace

int64_t ToNanos(Time t) {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(t.time_since_epoch()).count();
}

Time FromNanos(int64_t nanos) {
  return Time(std::chrono::duration_cast<Time::duration>(std::chrono::nanoseconds(nanos)));
}

Result<StoredRun> ParseRunColumns(const RunRowSource& row) {
  RowReader r(row);
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

RunRecord CorruptRunMarker(const RunRowSource& row, const Status& why) {
  RunRecord run;
  run.id = row.Text(kId).value_or("");
  run.status = RunStatus::kFailed;
  run.created_at = FromNanos(row.Int(kCreatedAt).value_or(0));
  run.updated_at = run.created_at;
  run.last_error = RunError{std::string(StatusCodeName(why.code())), std::string(why.message()),
                            "internal", false};
  return run;
}

void WriteRunColumns(const StoredRun& stored, RunRowSink& sink) {
  const RunRecord& run = stored.record;
  sink.Text(kId, run.id);
  sink.Text(kAgent, run.agent);
  sink.Text(kAgentDir, run.agent_dir);
  sink.Text(kTask, run.task);
  sink.Text(kStatus, RunStatusName(run.status));
  sink.Int(kStep, run.step);
  sink.Int(kMessageCount, stored.message_count);
  sink.Int(kAttempts, run.attempts);
  WriteOptionalTime(sink, kNextAttemptAt, run.next_attempt_at);
  sink.Text(kWaiting, run.waiting);
  if (run.last_error.has_value()) {
    sink.Text(kErrorCode, run.last_error->code);
    sink.Text(kErrorMessage, run.last_error->message);
    sink.Text(kErrorClass, run.last_error->error_class);
    sink.Int(kErrorRetryable, run.last_error->retryable ? 1 : 0);
  } else {
    for (int c : {kErrorCode, kErrorMessage, kErrorClass, kErrorRetryable}) sink.Null(c);
  }
  sink.Text(kParentId, run.parent_id);
  sink.Int(kParentStep, run.parent_step);
  sink.Text(kMetadata, run.metadata);
  sink.Int(kCreatedAt, ToNanos(run.created_at));
  sink.Int(kUpdatedAt, ToNanos(run.updated_at));
  sink.Int(kEpoch, run.epoch);
  if (run.lease_holder.has_value() && run.lease_expires_at.has_value()) {
    sink.Text(kLeaseId, run.lease_holder->id);
    sink.Text(kLeaseHost, run.lease_holder->host);
    sink.Text(kLeaseBootId, run.lease_holder->boot_id);
    sink.Int(kLeasePid, run.lease_holder->pid);
    sink.Int(kLeaseExpiresAt, ToNanos(*run.lease_expires_at));
  } else {
    for (int c : {kLeaseId, kLeaseHost, kLeaseBootId, kLeasePid, kLeaseExpiresAt}) sink.Null(c);
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
