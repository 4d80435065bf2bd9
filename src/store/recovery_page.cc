#include "mend/store/recovery_page.h"

#include <algorithm>
#include <string>
#include <utility>

#include "mend/store/checkpoint_store.h"
#include "store/recovery_sql.h"

namespace mend::store {
namespace {

bool After(const RunRecord& run, const RunCursor& cursor) {
  if (run.created_at != cursor.created_at) return run.created_at > cursor.created_at;
  return run.id.compare(cursor.id) > 0;  // std::string compares as unsigned bytes
}

bool IsCandidate(RecoveryClass c, RecoveryBackoff backoff) {
  return c == RecoveryClass::kGiveUp || c == RecoveryClass::kDue ||
         (c == RecoveryClass::kBackoff && backoff == RecoveryBackoff::kInclude);
}

void Count(RecoveryClass c, RecoveryCounts& counts) {
  switch (c) {
    case RecoveryClass::kWaiting:
      ++counts.waiting;
      break;
    case RecoveryClass::kNonRetryable:
      ++counts.non_retryable;
      break;
    case RecoveryClass::kBackoff:
      ++counts.backoff;
      break;
    case RecoveryClass::kGiveUp:
    case RecoveryClass::kDue:
      ++counts.candidates;
      break;
    case RecoveryClass::kLeftAlone:
      break;
  }
}

}  // namespace

RecoveryClass ClassifyForRecovery(const RunRecord& run, Time now, int64_t max_attempts) {
  if (run.status == RunStatus::kWaiting || !run.waiting.empty()) return RecoveryClass::kWaiting;
  if (run.status == RunStatus::kQuarantined || run.status == RunStatus::kCompleted) {
    return RecoveryClass::kLeftAlone;
  }
  if (run.attempts >= max_attempts) return RecoveryClass::kGiveUp;
  if (run.status == RunStatus::kFailed && run.last_error.has_value() &&
      !run.last_error->retryable) {
    return RecoveryClass::kNonRetryable;
  }
  if (run.next_attempt_at.has_value() && now < *run.next_attempt_at) {
    return RecoveryClass::kBackoff;
  }
  return RecoveryClass::kDue;
}

Status ValidateRecoveryQuery(const RecoveryQuery& query) {
  if (query.max_attempts < 1) return InvalidArgumentError("max_attempts must be at least 1");
  if (query.limit < 1 || query.limit > kMaxRecoveryPageSize) {
    return InvalidArgumentError("a page of recovery candidates holds 1 to " +
                                std::to_string(kMaxRecoveryPageSize) + " runs, not " +
                                std::to_string(query.limit));
  }
  return OkStatus();
}

RecoveryPage RecoveryPageOf(const RecoveryQuery& query, const std::vector<RunRecord>& unfinished) {
  RecoveryPage page;
  RecoveryCounts counts;
  for (const RunRecord& run : unfinished) {
    RecoveryClass c = ClassifyForRecovery(run, query.now, query.max_attempts);
    Count(c, counts);
    if (!IsCandidate(c, query.backoff)) continue;
    if (query.after.has_value() && !After(run, *query.after)) continue;
    if (page.runs.size() == query.limit) {
      page.next = RunCursor{page.runs.back().created_at, page.runs.back().id};
      if (query.counting == RecoveryCounting::kOmit) break;
      continue;
    }
    page.runs.push_back(run);
  }
  if (query.counting == RecoveryCounting::kInclude) page.counts = counts;
  return page;
}

Result<std::optional<RunCursor>> CheckpointStore::RecoveryCursor() {
  return std::optional<RunCursor>();
}

Status CheckpointStore::SetRecoveryCursor(const std::optional<RunCursor>&) { return OkStatus(); }

Result<RecoveryPage> CheckpointStore::ListRecoveryCandidates(const RecoveryQuery& query) {
  MEND_RETURN_IF_ERROR(ValidateRecoveryQuery(query));
  ListOptions unfinished;
  unfinished.unfinished_only = true;
  MEND_ASSIGN_OR_RETURN(std::vector<RunRecord> runs, ListRuns(unfinished));
  return RecoveryPageOf(query, runs);
}

}  // namespace mend::store

namespace mend::store::internal {

RecoveryCounts CombineRecoveryCounts(const RecoveryCountParts& p) {
  RecoveryCounts counts;
  counts.waiting = p.waiting_status + p.waiting_kind;
  const int64_t unreadable =
      p.unfinished - p.waiting_status - p.waiting_kind - p.quarantined - p.active;
  counts.non_retryable = p.non_retryable + std::max<int64_t>(0, unreadable);
  counts.backoff = p.backoff;
  counts.candidates = p.active - p.non_retryable - p.backoff;
  return counts;
}

}  // namespace mend::store::internal
