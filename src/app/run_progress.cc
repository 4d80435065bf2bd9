#include "mend/app/run_progress.h"

#include "mend/agent/run_view.h"
#include "mend/app/runtime.h"

namespace mend::app {

Result<std::map<std::string, std::optional<RunProgress>>> ProgressOf(
    Runtime& runtime, const std::vector<store::RunRecord>& runs) {
  std::vector<std::string> ids;
  ids.reserve(runs.size());
  for (const store::RunRecord& run : runs) ids.push_back(run.id);
  MEND_ASSIGN_OR_RETURN(std::vector<store::CheckpointState> states,
                        runtime.store->LatestStates(ids));
  std::map<std::string, std::optional<RunProgress>> progress;
  for (const std::string& id : ids) progress[id] = RunProgress{};
  for (const store::CheckpointState& s : states) {
    std::optional<RunProgress>& p = progress[s.run_id];
    p.reset();
    if (!s.status.ok()) continue;
    Result<agent::RunUsage> usage = agent::DecodeRunUsage(s.state, s.run_id);
    if (!usage.ok()) continue;
    p = RunProgress{usage->steps, usage->input_tokens, usage->output_tokens, usage->cost_usd};
  }
  return progress;
}

}  // namespace mend::app
