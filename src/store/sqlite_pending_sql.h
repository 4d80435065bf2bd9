#pragma once

// The statements of SqliteStore::ListPending (sqlite_pending.cc), here so that a test can check
// their query plans. Inline variables: one address in every translation unit, which the statement
// cache keys on.

#include "store/run_row.h"

namespace mend::store::internal::pending_sql {

// Parameters: ?1..?4 the statuses of the branches (NULL: none), ?5 ?6 the key rows must precede
// (page) or reach (count), ?7 the limit, ?8 the agent.

// The WHERE clauses repeat `status <> 'completed'`: SQLite uses a partial index only when the
// query states its condition.
inline constexpr char kPageAll[] =
    "SELECT " MEND_STORE_RUN_COLUMNS
    " FROM runs WHERE status <> 'completed' AND (created_at, id) < (?5, ?6)"
    " ORDER BY created_at DESC, id DESC LIMIT ?7";

// One branch per status, each reading at most ?7 entries of its index backwards; the merge sorts
// at most 4 × ?7 rows.
#define MEND_PENDING_BRANCH(filter)                                                          \
  "SELECT * FROM (SELECT " MEND_STORE_RUN_COLUMNS " FROM runs WHERE " filter                 \
  " AND status <> 'completed' AND (created_at, id) < (?5, ?6) ORDER BY created_at DESC, id " \
  "DESC LIMIT ?7)"
#define MEND_PENDING_PAGE(prefix) \
  "SELECT " MEND_STORE_RUN_COLUMNS " FROM (" MEND_PENDING_BRANCH(prefix "status = ?1")      \
  " UNION ALL " MEND_PENDING_BRANCH(prefix "status = ?2") " UNION ALL " MEND_PENDING_BRANCH( \
      prefix "status = ?3") " UNION ALL " MEND_PENDING_BRANCH(prefix "status = ?4")          \
  ") ORDER BY created_at DESC, id DESC LIMIT ?7"

inline constexpr char kPageByStatus[] = MEND_PENDING_PAGE("");
inline constexpr char kPageByAgent[] = MEND_PENDING_PAGE("agent = ?8 AND ");

#undef MEND_PENDING_PAGE
#undef MEND_PENDING_BRANCH

// runs_pending_status holds exactly the unfinished runs and their status, so counting all of them
// reads no table row. Counting from a key walks runs_unfinished from that key instead: only the
// runs of the pages before this one and any created since.
inline constexpr char kCountAll[] =
    "SELECT COUNT(*) FROM runs INDEXED BY runs_pending_status WHERE status <> 'completed'";
inline constexpr char kCountAllFrom[] =
    "SELECT COUNT(*) FROM runs INDEXED BY runs_unfinished WHERE status <> 'completed' AND "
    "(created_at, id) >= (?5, ?6)";
inline constexpr char kCountByStatus[] =
    "SELECT COUNT(*) FROM runs WHERE status IN (?1, ?2, ?3, ?4) AND status <> 'completed' AND "
    "(created_at, id) >= (?5, ?6)";
inline constexpr char kCountByAgent[] =
    "SELECT COUNT(*) FROM runs WHERE agent = ?8 AND status IN (?1, ?2, ?3, ?4) AND "
    "status <> 'completed' AND (created_at, id) >= (?5, ?6)";

}  // namespace mend::store::internal::pending_sql
