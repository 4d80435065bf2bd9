#pragma once

// ProgressOf: how far runs got (steps, tokens, cost), read from their newest checkpoints in one
// store query, for lists of runs.

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "mend/base/result.h"
#include "mend/store/run_record.h"

namespace mend::app {

struct Runtime;

/// How far a run got, as its newest checkpoint's state says: its steps (model turns, docs/runs.md,
/// "Steps and checkpoints"), tokens and cost.
struct RunProgress {
  int64_t steps = 0;          ///< model turns
  int64_t input_tokens = 0;   ///< summed over the turns
  int64_t output_tokens = 0;  ///< summed over the turns
  double cost_usd = 0;        ///< at the price table of the run
};

/// The progress of each of `runs`, by run id, read in one store query (CheckpointStore::
/// LatestStates) without the conversations. A run without a checkpoint has made no progress (all
/// zero); a run whose state cannot be read maps to nullopt, and the others are unaffected. Store
/// errors as they are.
Result<std::map<std::string, std::optional<RunProgress>>> ProgressOf(
    Runtime& runtime, const std::vector<store::RunRecord>& runs);

}  // namespace mend::app
