#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "mend/base/clock.h"
#include "mend/base/result.h"
#include "mend/llm/types.h"

namespace mend::agent {

// The small state saved with every checkpoint beside the new messages (docs/runs.md). The
// conversation itself lives in the checkpoint's messages; this records what the messages alone
// do not say.
struct RunState {
  int64_t steps = 0;  // model turns taken
  int64_t input_tokens = 0;
  int64_t output_tokens = 0;
  double cost_usd = 0;
  // When the run started (informative; the wall-time limit counts `active`).
  Time started_at;
  // The time the run has spent running, up to its newest checkpoint: the sum of its attempts,
  // without the time it lay crashed, waited for a person or for a retry, or sat in recovery's
  // backoff. What limits.max_wall_seconds counts. Runs saved before it was kept start from 0.
  Duration active{0};
  // Tool calls of the last assistant turn without a recorded result, in the model's order.
  std::vector<llm::ToolCall> pending;
  std::string waiting;          // "" | "approval" | "question"
  std::string waiting_call_id;  // the pending call the person is asked about
  std::string question;         // what the person is asked
  Time waiting_since;
  // A pending call a person approved: it runs without asking the pre-tool hooks again.
  std::string approved_call_id;
  std::string output;  // the final answer once the run completed
};

// JSON text of `state`; never fails.
std::string EncodeRunState(const RunState& state);

// kDataLoss naming `run_id` for text that is not a run state.
Result<RunState> DecodeRunState(std::string_view text, std::string_view run_id);

}  // namespace mend::agent
