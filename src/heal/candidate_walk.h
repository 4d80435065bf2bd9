#pragma once

#include <cstddef>
#include <functional>
#include <optional>

#include "mend/base/result.h"
#include "mend/store/checkpoint_store.h"

namespace mend::heal {

// The runs one recovery pass visits, read page by page with store::ListRecoveryCandidates: oldest
// first from just after `start`, then, once past the newest, from the oldest again up to `start`,
// so a pass that starts where the previous one stopped still reaches every candidate once. At most
// `budget` runs are visited; the rest are left to the next pass. Not thread-safe.
class CandidateWalk {
 public:
  enum class Step { kNext, kStop };
  enum class End {
    kWentRound,   // every candidate was visited (or there were none)
    kBudgetUsed,  // `budget` runs were visited; last() is the last of them
    kStopped,     // the visitor returned kStop; last() is that run
  };

  // `query` says which runs and whether the first page carries counts; its `after` and `limit`
  // are the walk's. `store` must outlive the walk; `budget` is at least 1.
  CandidateWalk(store::CheckpointStore& store, store::RecoveryQuery query,
                std::optional<store::RunCursor> start, size_t budget);

  // Calls `visit` with each run in the order above. Store errors end the walk and are returned.
  Result<End> Run(const std::function<Step(const store::RunRecord&)>& visit);

  // The counts of the first page, when the query asked for them.
  const std::optional<store::RecoveryCounts>& counts() const { return counts_; }
  const std::optional<store::RunCursor>& last() const { return last_; }
  size_t visited() const { return visited_; }

 private:
  store::CheckpointStore& store_;
  store::RecoveryQuery query_;
  const std::optional<store::RunCursor> start_;
  const size_t budget_;
  std::optional<store::RecoveryCounts> counts_;
  std::optional<store::RunCursor> last_;
  size_t visited_ = 0;
};

}  // namespace mend::heal
