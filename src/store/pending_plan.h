#pragma once

#include <array>
#include <cstdint>
#include <functional>
#include <limits>
#include <optional>
#include <string>
#include <vector>

#include "mend/base/result.h"
#include "mend/store/run_page.h"
#include "mend/store/run_record.h"

namespace mend::store::internal {

// How the SQL stores answer ListPending (docs/store_schema.md, "Pages of pending runs").
//
// Without a filter a page walks runs_unfinished (created_at, id) backwards from the cursor, or
// runs_created for RunScope::kAll. With a status or agent filter, it is the merge of one branch
// per status (four unfinished ones at most, plus completed for kAll), each walking
// runs_pending_status (status, created_at, id) or runs_pending_agent (agent, status, created_at,
// id), or for completed runs runs_completed_status / runs_completed_agent, backwards: every
// branch reads at most `limit` index entries whatever the filter matches. The counts step through
// the same indexes without reading a row.

// A PendingQuery in the form the statements bind.
struct PendingPlan {
  RunScope scope = RunScope::kUnfinished;
  // A status or agent filter: the per-status statements. Otherwise the unfiltered ones.
  bool filtered = false;
  // The unfinished status names of the branches; an unset slot binds NULL, which matches nothing.
  std::array<std::optional<std::string>, 4> statuses;
  // RunScope::kAll: whether the completed branch lists anything (it binds "completed" or NULL).
  bool completed = false;
  std::optional<std::string> agent;  // set: the by-agent statements
  // Rows strictly before (older than) this key are listed. Without a cursor the key is after every
  // run: (INT64_MAX, "").
  int64_t before_nanos = std::numeric_limits<int64_t>::max();
  std::string before_id;
  int64_t limit = 0;
};

// Validates `query` (ValidatePendingQuery) and binds it.
Result<PendingPlan> PlanPending(const PendingQuery& query);

// The key that no run precedes, for counting every matching run with the "at or after" statements.
inline constexpr int64_t kFirstKeyNanos = std::numeric_limits<int64_t>::min();

// Counts the runs matching the plan whose key is at or after `from` (newer or equal), or all of
// them when `from` is unset. Runs inside the store's read transaction.
using PendingCounter = std::function<Result<int64_t>(const std::optional<RunCursor>& from)>;

// Completes a page from its rows (newest first, at most the limit): total, more and next. Counts
// at most twice, and not at all for `more` when the rows show nothing older can match.
Result<PendingPage> FinishPendingPage(const PendingQuery& query, std::vector<RunRecord> rows,
                                      const PendingCounter& count);

}  // namespace mend::store::internal
