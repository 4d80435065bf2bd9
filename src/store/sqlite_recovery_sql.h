#pragma once

// The statements of SqliteStore::ListRecoveryCandidates (sqlite_recovery.cc), here so that a test
// can check their query plans. Inline variables: one address in every translation unit, which the
// statement cache keys on.

#include "store/recovery_sql.h"
#include "store/run_row.h"

namespace mend::store::internal::recovery_sql {

// The indexes of version 4 of the schema. runs_recovery holds the runs recovery may act on in
// (created_at, id) order with the columns its rules read, so a page walks it from the cursor and
// checks each entry without reading the row of one it does not list. runs_recovery_class orders
// every unfinished run by the columns that decide its class, so each count is a range of it.
inline constexpr char kCreateIndexes[] =
    "CREATE INDEX IF NOT EXISTS runs_recovery ON runs "
    "(created_at, id, status, attempts, next_attempt_at, error_retryable) "
    "WHERE " MEND_RECOVERY_ACTIVE
    ";\n"
    "CREATE INDEX IF NOT EXISTS runs_recovery_class ON runs "
    "(status, waiting, error_retryable, next_attempt_at, attempts) WHERE status <> 'completed';";

// ?1 ?2: the key runs must follow; ?3: max_attempts; ?4: now, or NULL to take runs in backoff
// too; ?5: the limit. SQLite uses a partial index only when the query states its condition.
inline constexpr char kPage[] = "SELECT " MEND_STORE_RUN_COLUMNS
                                " FROM runs INDEXED BY runs_recovery WHERE " MEND_RECOVERY_ACTIVE
                                " AND (created_at, id) > (?1, ?2) AND " MEND_RECOVERY_CANDIDATE(
                                    "?3", "?4") " ORDER BY created_at, id LIMIT ?5";

// ?1: max_attempts; ?2: now.
inline constexpr char kCounts[] =
    MEND_RECOVERY_COUNTS("FROM runs INDEXED BY runs_recovery_class", "?1", "?2");

}  // namespace mend::store::internal::recovery_sql
