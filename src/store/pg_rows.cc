#include "store/pg_rows.h"

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

// Reads columns of one row with checks; the first problem is remembered as a kDataLoss.
class PgRowReader {
 public:
  PgRowReader(const PgResult& res, int row) : res_(res), row_(row) {}

  std::string Text(int col) {
    if (res_.IsNull(row_, col)) Fail(col, "unexpected NULL");
    return res_.Text(row_, col);
  }
  int64_t Int(int col) {
    std::optional<int64_t> v = res_.Int(row_, col);
    if (!v.has_value()) Fail(col, "not an integer");
    return v.value_or(0);
  }
  bool Null(int col) const { return res_.IsNull(row_, col); }

  void Fail(int col, const std::string& why) {
    if (!error_.ok()) return;
    error_ = DataLossError("run \"" + res_.Text(row_, kId) + "\": corrupt runs row (column " +
                           res_.ColumnName(col) + ": " + why + ")");
  }
  const Status& error() const { return error_; }

 private:
  const PgResult& res_;
  int row_;
  Status error_;
};

void ReadError(PgRowReader& r, RunRecord& run) {
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

void ReadLease(PgRowReader& r, RunRecord& run) {
  if (r.Null(kLeaseId)) return;
  LeaseHolder h;
  h.id = r.Text(kLeaseId);
  h.host = r.Text(kLeaseHost);
  h.boot_id = r.Text(kLeaseBootId);
  h.pid = r.Int(kLeasePid);
  run.lease_holder = std::move(h);
  run.lease_expires_at = FromNanos(r.Int(kLeaseExpiresAt));
}

PgParam TimeParam(const std::optional<Time>& t) {
  return t.has_value() ? PgParam::Int(ToNanos(*t)) : PgParam::Null();
}

}  // namespace

Result<StoredRun> ParsePgRunRow(const PgResult& res, int row) {
  PgRowReader r(res, row);
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

RunRecord PgCorruptRunMarker(const PgResult& res, int row, const Status& why) {
  RunRecord run;
  run.id = res.Text(row, kId);
  run.status = RunStatus::kFailed;
  run.created_at = FromNanos(res.Int(row, kCreatedAt).value_or(0));
  run.updated_at = run.created_at;
  run.last_error = RunError{std::string(StatusCodeName(why.code())), std::string(why.message()),
                            "internal", false};
  return run;
}

std::vector<PgParam> PgRunParams(const StoredRun& stored) {
  const RunRecord& run = stored.record;
  std::vector<PgParam> p;
  p.reserve(25);
  p.push_back(PgParam::Text(run.id));
  p.push_back(PgParam::Text(run.agent));
  p.push_back(PgParam::Text(run.agent_dir));
  p.push_back(PgParam::Text(run.task));
  p.push_back(PgParam::Text(RunStatusName(run.status)));
  p.push_back(PgParam::Int(run.step));
  p.push_back(PgParam::Int(stored.message_count));
  p.push_back(PgParam::Int(run.attempts));
  p.push_back(TimeParam(run.next_attempt_at));
  p.push_back(PgParam::Text(run.waiting));
  const std::optional<RunError>& e = run.last_error;
  p.push_back(e ? PgParam::Text(e->code) : PgParam::Null());
  p.push_back(e ? PgParam::Text(e->message) : PgParam::Null());
  p.push_back(e ? PgParam::Text(e->error_class) : PgParam::Null());
  p.push_back(e ? PgParam::Int(e->retryable ? 1 : 0) : PgParam::Null());
  p.push_back(PgParam::Text(run.parent_id));
  p.push_back(PgParam::Int(run.parent_step));
  p.push_back(PgParam::Text(run.metadata));
  p.push_back(PgParam::Int(ToNanos(run.created_at)));
  p.push_back(PgParam::Int(ToNanos(run.updated_at)));
  p.push_back(PgParam::Int(run.epoch));
  bool leased = run.lease_holder.has_value() && run.lease_expires_at.has_value();
  p.push_back(leased ? PgParam::Text(run.lease_holder->id) : PgParam::Null());
  p.push_back(leased ? PgParam::Text(run.lease_holder->host) : PgParam::Null());
  p.push_back(leased ? PgParam::Text(run.lease_holder->boot_id) : PgParam::Null());
  p.push_back(leased ? PgParam::Int(run.lease_holder->pid) : PgParam::Null());
  p.push_back(leased ? TimeParam(run.lease_expires_at) : PgParam::Null());
  return p;
}

}  // namespace mend::store::internal
