#pragma once

// The rules of ClassifyForRecovery (recovery_page.h) as SQL over the `runs` columns, shared by the
// SQLite and PostgreSQL statements of ListRecoveryCandidates, which differ only in how parameters
// are written and in SQLite's INDEXED BY. error_retryable is NULL exactly when the run has no last
// error, which counts as retryable.

#include <cstdint>

#include "mend/store/recovery_page.h"

// Running or failed and not waiting: the runs recovery may act on. The predicate of the partial
// index runs_recovery, which a page walks in (created_at, id) order.
#define MEND_RECOVERY_ACTIVE "status IN ('running', 'failed') AND waiting = ''"
// An active run recovery acts on: kGiveUp or kDue; with `due` NULL also kBackoff
// (RecoveryBackoff::kInclude). Every column it reads is in runs_recovery.
#define MEND_RECOVERY_CANDIDATE(max, due)                                                        \
  "(attempts >= " max " OR ((status = 'running' OR COALESCE(error_retryable, 1) <> 0) AND (" due \
  " IS NULL OR next_attempt_at IS NULL OR next_attempt_at <= " due ")))"

// The parts RecoveryCounts is made of, each a COUNT over a range of the index runs_recovery_class
// (status, waiting, error_retryable, next_attempt_at, attempts), in this order (see
// CombineRecoveryCounts). `from` is the FROM clause with any index hint, `max` and `now` the
// parameters.
#define MEND_RECOVERY_COUNT(from, where) \
  "(SELECT COUNT(*) " from " WHERE status <> 'completed' AND " where ")"
#define MEND_RECOVERY_BACKOFF_BRANCH(from, statuses, retryable, max, now)                        \
  MEND_RECOVERY_COUNT(from,                                                                      \
                      "status IN (" statuses ") AND waiting = '' AND error_retryable " retryable \
                      " AND next_attempt_at > " now " AND attempts < " max)
#define MEND_RECOVERY_COUNTS(from, max, now) \
  "SELECT " MEND_RECOVERY_COUNT(from, "status = 'waiting'") ", " MEND_RECOVERY_COUNT(            \
      from, "status IN ('running', 'failed', 'quarantined') AND waiting > ''") ", "              \
      MEND_RECOVERY_COUNT(from, "status = 'quarantined' AND waiting = ''") ", "                  \
      MEND_RECOVERY_COUNT(from, MEND_RECOVERY_ACTIVE) ", " MEND_RECOVERY_COUNT(                  \
          from, "status = 'failed' AND waiting = '' AND error_retryable = 0 AND attempts < " max) \
      ", " MEND_RECOVERY_BACKOFF_BRANCH(from, "'running', 'failed'", "IS NULL", max, now)         \
      " + " MEND_RECOVERY_BACKOFF_BRANCH(from, "'running', 'failed'", "= 1", max, now)           \
      " + " MEND_RECOVERY_BACKOFF_BRANCH(from, "'running'", "= 0", max, now)                      \
      ", (SELECT COUNT(*) " from " WHERE status <> 'completed')"

namespace mend::store::internal {

// The columns of MEND_RECOVERY_COUNTS.
struct RecoveryCountParts {
  int64_t waiting_status = 0;  // status waiting
  int64_t waiting_kind = 0;    // running, failed or quarantined with a waiting kind set
  int64_t quarantined = 0;     // quarantined, no waiting kind
  int64_t active = 0;          // running or failed, no waiting kind
  int64_t non_retryable = 0;   // active, failed, not retryable, below max attempts
  int64_t backoff = 0;         // active, retryable (or running), below max attempts, not due
  int64_t unfinished = 0;      // every unfinished row
};

// The classes of ClassifyForRecovery from the parts: the active runs are candidates unless not
// retryable or in backoff, and a row counted in none of the first four parts has a status the
// store cannot read (or a waiting kind that is no text) and counts as not retryable.
store::RecoveryCounts CombineRecoveryCounts(const RecoveryCountParts& parts);

}  // namespace mend::store::internal
