#pragma once

// The rules of ClassifyForRecovery (recovery_page.h) as SQL over the `runs` columns, shared by the
// SQLite and PostgreSQL statements of ListRecoveryCandidates, which differ only in how parameters
// are written. Every column named is in the index runs_recovery, so the conditions are checked on
// index entries. error_retryable is NULL exactly when the run has no last error, which counts as
// retryable (COALESCE to 1): the same rule in both dialects.

// A status ClassifyForRecovery knows of among the unfinished ones; a row with any other cannot be
// read and is listed (and counted) as failed and not retryable.
#define MEND_RECOVERY_KNOWN_STATUS "status IN ('running', 'waiting', 'failed', 'quarantined')"
#define MEND_RECOVERY_WAITING \
  "(" MEND_RECOVERY_KNOWN_STATUS " AND (status = 'waiting' OR waiting <> ''))"
// Running or failed and not waiting: the runs recovery may act on, below or at max attempts.
#define MEND_RECOVERY_ACTIVE "status IN ('running', 'failed') AND waiting = ''"
#define MEND_RECOVERY_RETRYABLE "(status = 'running' OR COALESCE(error_retryable, 1) <> 0)"
#define MEND_RECOVERY_NON_RETRYABLE(max)                                                           \
  "(NOT " MEND_RECOVERY_KNOWN_STATUS " OR (status = 'failed' AND waiting = '' AND attempts < " max \
  " AND COALESCE(error_retryable, 1) = 0))"
#define MEND_RECOVERY_BACKOFF(max, now)                                           \
  "(" MEND_RECOVERY_ACTIVE " AND attempts < " max " AND " MEND_RECOVERY_RETRYABLE \
  " AND next_attempt_at > " now ")"
// kGiveUp or kDue; with `due` NULL also kBackoff (RecoveryBackoff::kInclude).
#define MEND_RECOVERY_CANDIDATE(max, due)                                                        \
  "(" MEND_RECOVERY_ACTIVE " AND (attempts >= " max " OR (" MEND_RECOVERY_RETRYABLE " AND (" due \
  " IS NULL OR next_attempt_at IS NULL OR next_attempt_at <= " due "))))"
