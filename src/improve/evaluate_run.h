#pragma once

// One (case, repeat) run of candidate evaluation: copies, the shadow run, the check. Not a public
// API.

#include <nlohmann/json_fwd.hpp>
#include <string>
#include <vector>

#include "mend/agent/run_view.h"
#include "mend/improve/cases.h"
#include "mend/improve/evaluate.h"
#include "mend/store/checkpoint_store.h"

namespace mend::improve::internal {

// What every run of one arm shares. Immutable while runs use it.
struct ArmContext {
  const EvaluateOptions* options = nullptr;
  store::CheckpointStore* store = nullptr;  // the arm's scratch store, shared by concurrent runs
  std::string agent_dir;                    // the agent folder with the candidate's text
  std::string runs_dir;                     // absolute; each run's copies go below it
};

// The conversation as CaseRun::transcript's JSON array.
nlohmann::json TranscriptJson(const std::vector<agent::TranscriptEntry>& transcript);

// Runs `c` once as repeat `repeat` in fresh copies below ctx.runs_dir ("<case_index>-<repeat>"),
// gives it to the check command and removes the copies (best effort: a copy that cannot be
// removed is left for the arm's final cleanup). Never fails: a failure of mend is a run with
// status "error". Thread-safe for different (case_index, repeat).
CaseRun RunCase(const ArmContext& ctx, const Case& c, size_t case_index, int repeat);

}  // namespace mend::improve::internal
