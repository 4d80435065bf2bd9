#pragma once

// The statements of SqliteStore::ListPending (sqlite_pending.cc), here so that a test can check
// their query plans. Inline variables: one address in every translation unit, which the statement
// cache keys on.

#include "store/run_row.h"

namespace mend::store::internal::pending_sql {

// Parameters: ?1..?4 the unfinished statuses of the branches (NULL: none), ?5 ?6 the key rows must
// precede (page) or reach (count), ?7 the limit, ?8 the agent, ?9 (RunScope::kAll only)
// 'completed' when the completed branch lists anything, else NULL.

// The WHERE clauses repeat `status <> 'completed'` (or `status = 'completed'`): SQLite uses a
// partial index only when the query states its condition.
inline constexpr char kPageAll[] =
    "SELECT " MEND_STORE_RUN_COLUMNS
    " FROM runs WHERE status <> 'completed' AND (created_at, id) < (?5, ?6)"
    " ORDER BY created_at DESC, id DESC LIMIT ?7";

#define MEND_NEWEST_FIRST " ORDER BY created_at DESC, id DESC LIMIT ?7"
#define MEND_PENDING_KEY_BEFORE " AND (created_at, id) < (?5, ?6)" MEND_NEWEST_FIRST ")"
// One branch per status, each reading at most ?7 entries of its index backwards; the merge sorts
// at most 5 × ?7 rows.
#define MEND_PENDING_BRANCH(filter)                                          \
  "SELECT * FROM (SELECT " MEND_STORE_RUN_COLUMNS " FROM runs WHERE " filter \
  " AND status <> 'completed'" MEND_PENDING_KEY_BEFORE
#define MEND_COMPLETED_BRANCH(prefix)                                        \
  "SELECT * FROM (SELECT " MEND_STORE_RUN_COLUMNS " FROM runs WHERE " prefix \
  "status = ?9 AND status = 'completed'" MEND_PENDING_KEY_BEFORE
#define MEND_PENDING_BRANCHES(prefix)                                                        \
  MEND_PENDING_BRANCH(prefix "status = ?1")                                                  \
  " UNION ALL " MEND_PENDING_BRANCH(prefix "status = ?2") " UNION ALL " MEND_PENDING_BRANCH( \
      prefix "status = ?3") " UNION ALL " MEND_PENDING_BRANCH(prefix "status = ?4")
#define MEND_MERGED_PAGE(branches) \
  "SELECT " MEND_STORE_RUN_COLUMNS " FROM (" branches ")" MEND_NEWEST_FIRST

inline constexpr char kPageByStatus[] = MEND_MERGED_PAGE(MEND_PENDING_BRANCHES(""));
inline constexpr char kPageByAgent[] = MEND_MERGED_PAGE(MEND_PENDING_BRANCHES("agent = ?8 AND "));

// runs_pending_status holds exactly the unfinished runs and their status, so counting all of them
// reads no table row. Counting from a key walks runs_unfinished from that key instead: only the
// runs of the pages before this one and any created since.
inline constexpr char kCountAll[] =
    "SELECT COUNT(*) FROM runs INDEXED BY runs_pending_status WHERE status <> 'completed'";
inline constexpr char kCountAllFrom[] =
    "SELECT COUNT(*) FROM runs INDEXED BY runs_unfinished WHERE status <> 'completed' AND "
    "(created_at, id) >= (?5, ?6)";
#define MEND_COUNT_BY_STATUS(prefix)        \
  "SELECT COUNT(*) FROM runs WHERE " prefix \
  "status IN (?1, ?2, ?3, ?4) AND status <> 'completed' AND (created_at, id) >= (?5, ?6)"
#define MEND_COUNT_COMPLETED(prefix)        \
  "SELECT COUNT(*) FROM runs WHERE " prefix \
  "status = ?9 AND status = 'completed' AND (created_at, id) >= (?5, ?6)"
inline constexpr char kCountByStatus[] = MEND_COUNT_BY_STATUS("");
inline constexpr char kCountByAgent[] = MEND_COUNT_BY_STATUS("agent = ?8 AND ");

// RunScope::kAll. Without a filter a page walks runs_created backwards; with one, the unfinished
// branches above merge with one over runs_completed_status (runs_completed_agent), which together
// with the pending indexes index every run once by (status, created_at, id).
inline constexpr char kRunsPage[] = "SELECT " MEND_STORE_RUN_COLUMNS
                                    " FROM runs WHERE (created_at, id) < (?5, ?6)"
                                    " ORDER BY created_at DESC, id DESC LIMIT ?7";
inline constexpr char kRunsPageByStatus[] =
    MEND_MERGED_PAGE(MEND_PENDING_BRANCHES("") " UNION ALL " MEND_COMPLETED_BRANCH(""));
inline constexpr char kRunsPageByAgent[] = MEND_MERGED_PAGE(MEND_PENDING_BRANCHES(
    "agent = ?8 AND ") " UNION ALL " MEND_COMPLETED_BRANCH("agent = ?8 AND "));
// Without a WHERE clause SQLite counts the entries of its smallest index.
inline constexpr char kRunsCount[] = "SELECT COUNT(*) FROM runs";
inline constexpr char kRunsCountFrom[] =
    "SELECT COUNT(*) FROM runs INDEXED BY runs_created WHERE (created_at, id) >= (?5, ?6)";
inline constexpr char kRunsCountByStatus[] =
    "SELECT (" MEND_COUNT_BY_STATUS("") ") + (" MEND_COUNT_COMPLETED("") ")";
inline constexpr char kRunsCountByAgent[] = "SELECT (" MEND_COUNT_BY_STATUS(
    "agent = ?8 AND ") ") + (" MEND_COUNT_COMPLETED("agent = ?8 AND ") ")";

#undef MEND_COUNT_COMPLETED
#undef MEND_COUNT_BY_STATUS
#undef MEND_MERGED_PAGE
#undef MEND_PENDING_BRANCHES
#undef MEND_COMPLETED_BRANCH
#undef MEND_PENDING_BRANCH
#undef MEND_PENDING_KEY_BEFORE
#undef MEND_NEWEST_FIRST

// The statements of one scope.
struct PageStatements {
  const char* page;
  const char* page_by_status;
  const char* page_by_agent;
  const char* count;
  const char* count_from;
  const char* count_by_status;
  const char* count_by_agent;
};

inline constexpr PageStatements kUnfinished = {
    kPageAll, kPageByStatus, kPageByAgent, kCountAll, kCountAllFrom, kCountByStatus, kCountByAgent};
inline constexpr PageStatements kEveryRun = {
    kRunsPage,      kRunsPageByStatus,  kRunsPageByAgent, kRunsCount,
    kRunsCountFrom, kRunsCountByStatus, kRunsCountByAgent};

}  // namespace mend::store::internal::pending_sql
