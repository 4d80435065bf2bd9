#pragma once

// Retention of finished runs (`mend prune`, docs/cli.md; docs/store_schema.md, "Pruning"):
// PruneRequest and PruneReport of CheckpointStore::Prune, and OldEnoughToPrune, the rule every
// store applies.

#include <cstdint>

#include "mend/base/clock.h"
#include "mend/store/run_record.h"

namespace mend::store {

/// What pruning removes from a run it may prune.
enum class PruneScope {
  kHistory,    ///< every checkpoint but the newest; the run, its conversation and final state stay
  kWholeRuns,  ///< the run itself: its row, messages, checkpoints and lease
};

/// Whether a prune changes anything.
enum class PruneMode {
  kApply,   ///< remove what qualifies
  kDryRun,  ///< count what would go and change nothing
};

/// What CheckpointStore::Prune removes.
struct PruneRequest {
  /// Runs whose last update (updated_at) is strictly before this are old enough.
  Time cutoff;
  PruneScope scope = PruneScope::kHistory;  ///< what goes of each run
  PruneMode mode = PruneMode::kApply;       ///< kDryRun: count only
};

/// What a prune removed (or, in a dry run, would remove).
struct PruneReport {
  int64_t runs = 0;          ///< runs that lost checkpoints or were deleted
  int64_t runs_deleted = 0;  ///< of those, deleted whole (kWholeRuns)
  int64_t checkpoints = 0;   ///< checkpoint rows removed
  int64_t messages = 0;      ///< message rows removed (only with kWholeRuns)
  /// The stored bytes of the removed checkpoint states and message bodies.
  int64_t bytes = 0;
};

/// Whether `run` is finished (completed or failed) and was last updated before `cutoff`. A store
/// prunes such a run only when, besides, no live holder has its lease; running, waiting and
/// quarantined runs are never pruned.
bool OldEnoughToPrune(const RunRecord& run, Time cutoff);

}  // namespace mend::store
