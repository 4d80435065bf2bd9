// The rule every store applies to choose the runs a prune may touch.
#include "mend/store/prune.h"

namespace mend::store {

bool OldEnoughToPrune(const RunRecord& run, Time cutoff) {
  // Only finished runs: a running, waiting or quarantined run still has work (or a person's
  // decision) ahead of it, and its history is what a resume or a fork needs.
  const bool finished = run.status == RunStatus::kCompleted || run.status == RunStatus::kFailed;
  return finished && run.updated_at < cutoff;
}

}  // namespace mend::store
