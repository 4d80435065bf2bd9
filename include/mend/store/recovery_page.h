#pragma once

// The runs a recovery pass acts on (docs/heal.md), read in pages so that a pass costs about the
// runs it handles, not every unfinished run: ClassifyForRecovery, and the RecoveryQuery and
// RecoveryPage of CheckpointStore::ListRecoveryCandidates.

#include <cstddef>
#include <cstdint>
#include <optional>
#include <vector>

#include "mend/base/clock.h"
#include "mend/base/result.h"
#include "mend/store/run_page.h"
#include "mend/store/run_record.h"

namespace mend::store {

/// What recovery does with a run, decided from its record alone at time `now`. The rules apply in
/// the order of the enumerators: a waiting run is kWaiting whatever its attempts.
enum class RecoveryClass {
  kWaiting,       ///< status waiting, or a waiting kind set: left for a person
  kLeftAlone,     ///< quarantined or completed
  kGiveUp,        ///< running or failed with attempts >= max_attempts: recovery gives up on it
  kNonRetryable,  ///< failed with a last error that is not retryable
  kBackoff,       ///< next_attempt_at is after `now`
  kDue,           ///< anything else (running, or failed with a retryable error): resumed now
};
/// The class of `run` at `now` for a pass that quarantines at `max_attempts`. Pure.
RecoveryClass ClassifyForRecovery(const RunRecord& run, Time now, int64_t max_attempts);

/// The most runs one page of candidates may hold.
inline constexpr size_t kMaxRecoveryPageSize = 1000;

/// The unfinished runs at `now` by class: those a pass leaves alone and those it acts on. A row
/// whose status the store cannot read counts as not retryable, as ListRuns lists it (failed with a
/// DATA_LOSS error that is not retryable); any other unreadable column counts as what the readable
/// ones say.
struct RecoveryCounts {
  int64_t waiting = 0;        ///< kWaiting
  int64_t non_retryable = 0;  ///< kNonRetryable
  int64_t backoff = 0;        ///< kBackoff
  int64_t candidates = 0;     ///< kGiveUp and kDue: what ListRecoveryCandidates lists with kSkip
};

/// Whether the runs still in backoff are candidates too (a probe during an outage may take one).
enum class RecoveryBackoff { kSkip, kInclude };

/// Whether a page carries RecoveryCounts.
enum class RecoveryCounting { kOmit, kInclude };

/// The candidates are the unfinished runs classified kGiveUp or kDue (and kBackoff with
/// RecoveryBackoff::kInclude), oldest first: created_at ascending, then id ascending (ids compare
/// as bytes). A page continues after the position of the previous page's last run (a keyset
/// cursor); created_at and id never change, so runs that change class meanwhile never shift it.
struct RecoveryQuery {
  Time now;                   ///< a run is due when next_attempt_at is unset or not after it
  int64_t max_attempts = 10;  ///< at least 1
  RecoveryBackoff backoff = RecoveryBackoff::kSkip;  ///< whether runs in backoff are listed
  /// Only runs after this position. Unset: from the oldest.
  std::optional<RunCursor> after;
  size_t limit = 100;                                   ///< 1..kMaxRecoveryPageSize
  RecoveryCounting counting = RecoveryCounting::kOmit;  ///< whether the page carries counts
};

/// One page of ListRecoveryCandidates.
struct RecoveryPage {
  /// Oldest first. A row the store cannot read is listed as ListRuns lists it.
  std::vector<RunRecord> runs;
  /// The position of the last run of this page; set exactly when more candidates follow it.
  std::optional<RunCursor> next;
  /// With RecoveryCounting::kInclude: the counts over every unfinished run, from the snapshot the
  /// page was read from.
  std::optional<RecoveryCounts> counts;
};

/// OK when `query` is valid; kInvalidArgument for max_attempts below 1 or a limit outside
/// 1..kMaxRecoveryPageSize. Every store checks queries with it.
Status ValidateRecoveryQuery(const RecoveryQuery& query);

/// The page of `query` over `unfinished` (every unfinished run in created_at, id order, as ListRuns
/// returns them): what a store without an index of its own answers.
RecoveryPage RecoveryPageOf(const RecoveryQuery& query, const std::vector<RunRecord>& unfinished);

}  // namespace mend::store
