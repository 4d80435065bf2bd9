#pragma once

// Pages of runs, newest first: the unfinished ones (`mend pending`, docs/runs.md) or every run,
// completed ones included (GET /api/v1/runs). The order is created_at descending, then id
// descending (ids compare as bytes), and a page continues after the last run of the previous one (a
// keyset cursor), so runs created meanwhile never shift a later page: no run is listed twice or
// skipped while paging. RunCursor with its text form, and PendingQuery and PendingPage of
// CheckpointStore::ListPending.

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "mend/base/clock.h"
#include "mend/base/result.h"
#include "mend/store/run_record.h"

namespace mend::store {

/// A position in that order: the created_at and id of a listed run.
struct RunCursor {
  Time created_at;  ///< the run's creation time
  std::string id;   ///< the run's id

  /// Field by field.
  bool operator==(const RunCursor&) const = default;
};

/// The text form of a cursor, for `--before` of `mend pending` and `mend runs` and the `next` field
/// of their JSON: the created_at in nanoseconds since the Unix epoch, ':', then the id with every
/// byte other than A-Z, a-z, 0-9, '.', '_' and '-' written as %XX
/// ("1700000000000000000:run-7%20b"). It holds only characters a shell passes through unquoted.
std::string FormatRunCursor(const RunCursor& cursor);
/// Reads FormatRunCursor's form back; kInvalidArgument for anything else.
Result<RunCursor> ParseRunCursor(std::string_view text);

/// The most runs one page may hold.
inline constexpr size_t kMaxPendingPageSize = 1000;

/// Which runs a page may list.
enum class RunScope {
  kUnfinished,  ///< every status but completed (`mend pending`)
  kAll,         ///< every run, completed ones included
};

/// What CheckpointStore::ListPending lists.
struct PendingQuery {
  RunScope scope = RunScope::kUnfinished;  ///< which runs may be listed
  /// Only runs in one of these statuses (repeats are ignored; completed only with RunScope::kAll).
  /// Empty: every run of the scope, including a row whose stored status is unreadable (listed as
  /// failed with a DATA_LOSS error, as ListRuns lists it).
  std::vector<RunStatus> statuses;
  /// Only runs of the agent with exactly this name. Empty: every agent.
  std::string agent;
  /// At most this many runs, 1..kMaxPendingPageSize.
  size_t limit = 20;
  /// Only runs after this position (older): the `next` of the previous page. Unset: the newest.
  std::optional<RunCursor> before;
};

/// One page of CheckpointStore::ListPending.
struct PendingPage {
  std::vector<RunRecord> runs;  ///< newest first
  /// Every run matching the filters (wherever `before` is), and those of them after the last run
  /// of this page, not listed yet. All three figures and `runs` come from one snapshot.
  int64_t total = 0;
  int64_t more = 0;  ///< see total
  /// Where the next page starts (the last run of this one); set exactly when `more` > 0.
  std::optional<RunCursor> next;
};

/// OK when `query` is valid; kInvalidArgument for a limit outside 1..kMaxPendingPageSize or, in
/// RunScope::kUnfinished, a status filter naming completed. Every store checks queries with it.
Status ValidatePendingQuery(const PendingQuery& query);

}  // namespace mend::store
