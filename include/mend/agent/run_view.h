#pragma once

// A run read back for people: ReadRunView decodes a run's record, transcript and counters at its
// newest checkpoint (what `mend show` prints); DecodeRunUsage decodes the counters of a checkpoint
// state alone.

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "mend/agent/run_origin.h"
#include "mend/base/result.h"
#include "mend/llm/types.h"
#include "mend/store/checkpoint_store.h"

namespace mend::agent {

/// One message of a run's conversation with what the checkpoint keeps about it beyond what the
/// model sees (docs/runs.md).
struct TranscriptEntry {
  llm::Message message;           ///< as the model sees it
  bool replaced_by_hook = false;  ///< a post-tool hook replaced the tool's result
  /// "denied" | "supplied" | "stopped": a pre-tool hook decided instead of the tool; "" otherwise.
  std::string hook_decision;
};

/// Everything the store knows about one run, decoded: what `mend show` prints.
struct RunView {
  store::RunRecord run;  ///< the run's record
  RunOrigin origin;      ///< what its metadata records
  int64_t steps = 0;     ///< model turns taken
  ///@{
  /// Tokens and cost up to the newest checkpoint.
  int64_t input_tokens = 0;
  int64_t output_tokens = 0;
  double cost_usd = 0;
  ///@}
  std::string output;                       ///< the final answer of a completed run
  std::string question;                     ///< what a waiting run asks
  std::vector<llm::ToolCall> pending;       ///< calls of the last model turn without a result
  std::vector<TranscriptEntry> transcript;  ///< the whole conversation, oldest first
  std::vector<store::CheckpointInfo> checkpoints;  ///< the kept history, oldest first
};

/// What a run has used up to a checkpoint: RunView's counters, decoded from that checkpoint's
/// state alone (store::CheckpointState::state), for lists that show many runs' progress.
struct RunUsage {
  int64_t steps = 0;  ///< model turns taken
  ///@{
  /// Tokens and cost up to the checkpoint.
  int64_t input_tokens = 0;
  int64_t output_tokens = 0;
  double cost_usd = 0;
  ///@}
};

/// kDataLoss naming `run_id` for a state that does not decode.
Result<RunUsage> DecodeRunUsage(std::string_view state, std::string_view run_id);

/// Reads run `run_id` at its newest checkpoint. A run without checkpoints yet has an empty
/// transcript. Errors: the store's (kNotFound for no such run); kDataLoss naming the run for a
/// message, state or metadata that does not decode.
Result<RunView> ReadRunView(store::CheckpointStore& store, const std::string& run_id);

}  // namespace mend::agent
