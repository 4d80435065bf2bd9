#pragma once

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "agent/hooks_runner.h"
#include "agent/message_codec.h"
#include "agent/run_state.h"
#include "agent/run_tools.h"
#include "mend/agent/agent.h"
#include "mend/llm/types.h"
#include "mend/obs/events.h"
#include "mend/obs/trace.h"
#include "mend/store/checkpoint_store.h"

namespace mend::agent {

// What every run of one Agent shares; not owned, outlives the loop.
struct LoopDeps {
  const AgentSpec* spec = nullptr;
  const AgentOptions* options = nullptr;
  const RunTools* tools = nullptr;
};

// A run this process holds the lease of, as loaded from (or about to be saved to) the store.
struct ActiveRun {
  store::Lease lease;
  RunInfo info;
  int64_t checkpoint_step = 0;  // the step of the newest saved checkpoint
  std::vector<llm::Message> messages;
  RunState state;
  std::string metadata;  // the record's metadata JSON
};

// Drives one held run through the step loop of docs/runs.md: model turn →
// checkpoint → each tool call (pre-tool hooks, approval, execution, post-tool hooks) →
// checkpoint → ... → final answer → post-run hooks. Single-threaded; one loop per run.
class StepLoop {
 public:
  StepLoop(const LoopDeps& deps, HooksRunner& hooks, ActiveRun& run)
      : deps_(deps), hooks_(hooks), run_(run) {}

  // Saves checkpoint run.checkpoint_step + 1 holding `added` (each encoded with `meta`) and the
  // current state, applying `update` atomically; appends `added` to the conversation when durable.
  // Store errors as is.
  Status Checkpoint(std::vector<llm::Message> added, const store::RunUpdate& update,
                    const MessageMeta& meta = {});

  // Runs until the run completes, fails or waits, or until AgentOptions::stop reads true at a
  // checkpoint (a RunResult with status running), and releases the lease. A failing run is a
  // RunResult with `error`; a Status error means the store failed or the lease was lost (kAborted:
  // another holder owns the run; nothing more was written).
  Result<RunResult> Drive();

  // Marks the run failed with `error` (persisted as its last error), runs the post-run hooks and
  // releases the lease.
  Result<RunResult> Fail(const Status& error);

 private:
  // kInterrupted: the tool gave up because the run is stopping; nothing was recorded.
  enum class CallOutcome { kRecorded, kWaiting, kStopped, kInterrupted };

  // Renews the lease for lease_ttl, plus the next tool call's timeout when one is pending.
  Status Renew();
  // The run's active time (RunState::active) as of now: what it had when this attempt began
  // (the first call starts the attempt) plus the attempt's time, less its pauses before retries.
  Duration ActiveTime();
  // The model request with the retries of AgentOptions::model_retry; each try is a `chat` span.
  // Returns the last error when the retries are spent, the error is not transient, its
  // Retry-After is too long, or a stop was requested during a pause.
  Result<llm::Completion> CompleteWithRetries(llm::CompletionRequest& request);
  // The pause before retry number `retry` (1-based) after `error`; nullopt when it must not retry.
  std::optional<Duration> RetryPause(const Status& error, int retry) const;
  // Renews the lease and waits `pause` on the clock; false when the lease could not be renewed
  // or a stop was requested.
  bool PauseBeforeRetry(Duration pause);
  Status CheckLimits();
  // A result when the run ended (final answer or failure); nullopt when tool calls follow.
  Result<std::optional<RunResult>> ModelTurn();
  // kStopped: a pre-tool hook stopped the run; the error to fail it with is in stop_error_.
  Result<CallOutcome> NextToolCall();
  Result<CallOutcome> ToolCallTraced(const llm::ToolCall& call);
  // The `chat` span of a model turn; sets the request's traceparent to it.
  obs::Span StartChatSpan(llm::CompletionRequest& request);
  void EndChatSpan(obs::Span& span, const llm::Completion& completion);
  // Marks the current tool span with how the call ended (docs/observe.md).
  void TraceToolResult(const ToolResult& result, const std::string& hook_decision);
  Result<CallOutcome> Wait(const std::string& kind, const std::string& call_id,
                           const std::string& question);
  // The context of `call`: the run's workspace and env, with the agent's tool_options for the tool.
  ToolContext ContextFor(const llm::ToolCall& call) const;
  // Runs the tool with its context and then the post-tool hooks.
  ToolResult Execute(const llm::ToolCall& call, const ToolCallInfo& info);
  // Checkpoints `result` as the call's tool message; `hook_decision` as in MessageMeta.
  Status RecordResult(const llm::ToolCall& call, const ToolResult& result,
                      const std::string& hook_decision = "");
  Result<RunResult> Finish();
  // AgentOptions::stop was raised: releases the lease and leaves the run running.
  Result<RunResult> Stopped();
  RunResult WaitingResult() const;
  RunResult BaseResult() const;
  RunOutcome RunPostRunHooks(const Status& error);
  // Records the post-run flags under "flags" in the run's metadata when they changed.
  void SaveFlags(const std::map<std::string, bool>& flags);
  void Emit(obs::Event event);

  const LoopDeps& deps_;
  HooksRunner& hooks_;
  ActiveRun& run_;
  Status stop_error_;
  obs::Span* tool_span_ = nullptr;       // the span of the tool call in progress
  std::optional<Time> attempt_started_;  // set by the first ActiveTime()
  Duration active_at_start_{0};          // RunState::active when the attempt began
  Duration retry_waits_{0};              // this attempt's pauses before retries
};

// The RunError recorded for `error` (code: a MEND_ detail code or the StatusCode name).
store::RunError ToRunError(const Status& error);

}  // namespace mend::agent
