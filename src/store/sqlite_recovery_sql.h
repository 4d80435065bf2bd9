#pragma once

// The statements of SqliteStore::ListRecoveryCandidates (sqlite_recovery.cc), here so that a test
// can check their query plans. Inline variables: one address in every translation unit, which the
// statement cache keys on.

#include "store/recovery_sql.h"
#include "store/run_row.h"

namespace mend::store::internal::recovery_sql {

// The index of version 4 of the schema: every unfinished run in (created_at, id) order with the
// columns the rules read, so a page walks it from the cursor and checks each entry without reading
// its row, and the counts read nothing else. The statements repeat `status <> 'completed'`: SQLite
// uses a partial index only when the query states its condition.
inline constexpr char kCreateIndex[] =
    "CREATE INDEX IF NOT EXISTS runs_recovery ON runs "
    "(created_at, id, status, waiting, attempts, next_attempt_at, error_retryable) "
    "WHERE status <> 'completed'";

// ?1 ?2: the key runs must follow; ?3: max_attempts; ?4: now, or NULL to take runs in backoff
// too; ?5: the limit.
inline constexpr char kPage[] =
    "SELECT " MEND_STORE_RUN_COLUMNS
    " FROM runs INDEXED BY runs_recovery WHERE status <> 'completed' AND (created_at, id) > (?1, "
    "?2) AND " MEND_RECOVERY_CANDIDATE("?3", "?4") " ORDER BY created_at, id LIMIT ?5";

// ?1: max_attempts; ?2: now.
inline constexpr char kCounts[] =
    "SELECT COUNT(*) FILTER (WHERE " MEND_RECOVERY_WAITING "), COUNT(*) FILTER (WHERE "
    MEND_RECOVERY_NON_RETRYABLE("?1") "), COUNT(*) FILTER (WHERE " MEND_RECOVERY_BACKOFF(
        "?1", "?2") "), COUNT(*) FILTER (WHERE " MEND_RECOVERY_CANDIDATE("?1", "?2") ") "
    "FROM runs INDEXED BY runs_recovery WHERE status <> 'completed'";

}  // namespace mend::store::internal::recovery_sql
