// A run decoded for people: its record, origin, state, conversation and checkpoints.
#include "mend/agent/run_view.h"

#include <utility>

#include "agent/message_codec.h"
#include "agent/run_state.h"

namespace mend::agent {

Result<RunUsage> DecodeRunUsage(std::string_view state, std::string_view run_id) {
  MEND_ASSIGN_OR_RETURN(RunState decoded, DecodeRunState(state, run_id));
  return RunUsage{decoded.steps, decoded.input_tokens, decoded.output_tokens, decoded.cost_usd};
}

Result<RunView> ReadRunView(store::CheckpointStore& store, const std::string& run_id) {
  RunView view;
  MEND_ASSIGN_OR_RETURN(view.run, store.GetRun(run_id));
  MEND_ASSIGN_OR_RETURN(view.origin, ParseRunOrigin(view.run.metadata, run_id));
  if (view.run.step == 0) return view;
  MEND_ASSIGN_OR_RETURN(store::RunSnapshot snapshot, store.Load(run_id));
  view.run = std::move(snapshot.run);
  MEND_ASSIGN_OR_RETURN(RunState state, DecodeRunState(snapshot.state, run_id));
  view.steps = state.steps;
  view.input_tokens = state.input_tokens;
  view.output_tokens = state.output_tokens;
  view.cost_usd = state.cost_usd;
  view.output = std::move(state.output);
  view.question = std::move(state.question);
  view.pending = std::move(state.pending);
  for (const std::string& text : snapshot.messages) {
    TranscriptEntry entry;
    MessageMeta meta;
    MEND_ASSIGN_OR_RETURN(entry.message, DecodeMessage(text, run_id, &meta));
    entry.replaced_by_hook = meta.replaced_by_hook;
    entry.hook_decision = std::move(meta.hook_decision);
    view.transcript.push_back(std::move(entry));
  }
  MEND_ASSIGN_OR_RETURN(view.checkpoints, store.History(run_id));
  return view;
}

}  // namespace mend::agent
