// CheckpointStore::LatestStates for stores without a query of their own (the fake, decorators
// that do not forward it): one GetRun and one Load per run.
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "mend/store/checkpoint_store.h"

namespace mend::store {

Result<std::vector<CheckpointState>> CheckpointStore::LatestStates(
    const std::vector<std::string>& run_ids) {
  std::vector<CheckpointState> out;
  std::set<std::string> seen;
  for (const std::string& id : run_ids) {
    if (!seen.insert(id).second) continue;
    Result<RunRecord> run = GetRun(id);
    // Gone since it was listed, or never there: nothing to say about it.
    if (!run.ok() && run.status().code() == StatusCode::kNotFound) continue;
    if (!run.ok() && run.status().code() == StatusCode::kDataLoss) {
      out.push_back({id, 0, "", run.status()});
      continue;
    }
    MEND_RETURN_IF_ERROR(run.status());
    if (run->step == 0) continue;
    Result<RunSnapshot> snapshot = Load(id);
    if (!snapshot.ok() && snapshot.status().code() == StatusCode::kNotFound) continue;
    if (!snapshot.ok() && snapshot.status().code() == StatusCode::kDataLoss) {
      out.push_back({id, run->step, "", snapshot.status()});
      continue;
    }
    MEND_RETURN_IF_ERROR(snapshot.status());
    out.push_back({id, snapshot->step, std::move(snapshot->state), OkStatus()});
  }
  return out;
}

}  // namespace mend::store
