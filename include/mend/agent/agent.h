#pragma once

// Agent, the durable agent loop (docs/runs.md): Send starts a run; Resume, Approve, Deny, Answer
// and the forks continue one; every model turn and tool result is checkpointed before the loop goes
// on. AgentOptions, SendOptions and RunResult go with it. Thread-safe across runs.

#include <atomic>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "mend/agent/agent_spec.h"
#include "mend/agent/hooks.h"
#include "mend/agent/run_origin.h"
#include "mend/base/env.h"
#include "mend/base/result.h"
#include "mend/llm/provider.h"
#include "mend/obs/trace.h"
#include "mend/store/checkpoint_store.h"

namespace mend::obs {
class EventBus;
}

namespace mend::agent {

/// How a run asks the model again after a transient error (docs/runs.md, "Model errors"): up to
/// `retries` more times, pausing `first_delay`, doubling, at most `max_delay`, and at least the
/// server's Retry-After. A Retry-After longer than max_delay ends the retries at once: the run
/// fails with the transient error and recovery resumes it when the server is back.
struct ModelRetry {
  int retries = 2;                                 ///< retries after the first request
  Duration first_delay = std::chrono::seconds(1);  ///< the first pause; each next one doubles
  Duration max_delay = std::chrono::seconds(30);   ///< the longest pause
};

/// What an Agent runs with: its provider, store and seams, and how it drives runs.
struct AgentOptions {
  Env env;                                  ///< borrowed seams; env.clock is required
  llm::LlmProvider* provider = nullptr;     ///< not owned; must outlive the Agent
  store::CheckpointStore* store = nullptr;  ///< not owned; must outlive the Agent
  obs::EventBus* events = nullptr;          ///< optional, not owned
  /// Optional, not owned: every attempt on a run becomes spans of the run's trace
  /// (docs/observe.md). Null: nothing is traced.
  obs::Tracer* tracer = nullptr;
  std::string model;                              ///< overrides the agent's model when not empty
  store::LeaseHolder holder;                      ///< who this process is, for leases
  Duration lease_ttl = std::chrono::seconds(30);  ///< how long a claim holds between renewals
  std::string workspace;                          ///< overrides the spec's workspace when not empty
  /// The workspace of new runs whose agent folder names none: the caller's current directory
  /// (absolute). A run records its resolved workspace; resuming it uses the recorded one.
  std::string caller_dir;
  /// The model new runs record (never a key). When a run being resumed, approved, answered or
  /// forked recorded another model, the run's record switches to this one, keeps the change in its
  /// metadata and a `run.model_changed` event says so: the caller chose it (a command flag).
  /// Empty: nothing is recorded or compared.
  RunModel run_model;
  bool shadow = false;  ///< recorded in new runs; the caller registers the shadow hook itself
  /// The canary arm new runs record (RunOrigin::arm); empty: none.
  std::string arm;
  /// The canary new runs record (RunOrigin::canary): the proposal id; empty: none.
  std::string canary;
  /// Tools offered to the model in addition to those the spec enables (embedding and tests). A
  /// tool here wins over a same-named one from the spec. Shared by every run of the Agent.
  std::vector<std::shared_ptr<Tool>> extra_tools;
  /// Optional, not owned, must outlive the Agent (a server's shutdown flag). Once it reads true,
  /// every run the Agent drives stops at its next checkpoint: the lease is released, the run stays
  /// `running` at that checkpoint, and Send, Resume, Approve, Deny and Answer return a RunResult
  /// with status running. Recovery or a later Resume continues it; nothing is lost or repeated.
  const std::atomic<bool>* stop = nullptr;
  ModelRetry model_retry;  ///< retries of a model request after a transient error
};

/// How Send starts a run.
struct SendOptions {
  std::string run_id;         ///< empty: a new unique id
  std::string continue_from;  ///< session turns (mend chat): start from that run's conversation
  /// The caller's span (W3C traceparent): the new run's trace continues it. Without one, the run
  /// joins the thread's active span's trace, or starts a trace of its own.
  std::optional<obs::SpanContext> trace_parent;
  /// Called once with the run's id as soon as its record exists, before the model is asked (for a
  /// caller that answers while the run goes on, e.g. `mend serve`); not called when Send fails
  /// before creating the record. Runs on Send's thread.
  std::function<void(const std::string& run_id)> on_created;
};

/// The result of driving a run until it completes, fails or waits for a person, or until
/// AgentOptions::stop stopped it at a checkpoint (status running). A run that fails
/// is a RunResult with `error` set, not an error Status: Status errors are for failures of mend
/// itself (the store is unreachable, the lease was lost, the run does not exist).
struct RunResult {
  std::string run_id;  ///< the run
  /// completed, failed, waiting, or running when stopped
  store::RunStatus status = store::RunStatus::kRunning;
  std::string output;  ///< the final answer of a completed run
  int64_t steps = 0;   ///< model turns taken
  ///@{
  /// Tokens and cost of the whole run so far.
  int64_t input_tokens = 0;
  int64_t output_tokens = 0;
  double cost_usd = 0;
  ///@}
  std::optional<store::RunError> error;  ///< why the run failed
  std::string waiting;                   ///< "" | "approval" | "question"
  /// What the person is asked (the tool call awaiting approval, or the question).
  std::string question;
  std::map<std::string, bool> flags;  ///< set by post-run hooks (RunOutcome::flags)
  std::string trace_id;               ///< the run's trace (docs/observe.md); "" when not traced
};

/// A new run id, "run-<16 hex digits>", from env.random (the clock's time when there is none): what
/// Send gives a run when SendOptions::run_id is empty, for a caller that needs the id first.
std::string NewRunId(const Env& env);

/// Runs one agent durably (docs/runs.md). Every model turn and every tool result is checkpointed
/// before the loop moves on; Resume() continues from the newest checkpoint without regenerating a
/// checkpointed model turn or re-running a recorded tool result (a tool that was in flight at the
/// crash runs again with the same call id). Thread-safe: different runs may be driven concurrently.
class Agent {
 public:
  /// kInvalidArgument when options.provider, options.store or options.env.clock is missing, or
  /// when a tool the spec enables is unknown or does not register (see ToolRegistry::Register).
  static Result<std::unique_ptr<Agent>> Create(AgentSpec spec, AgentOptions options);
  virtual ~Agent() = default;

  ///@{
  /// Registers a hook for every later run of this Agent, after those already registered
  /// (docs/hooks.md). Call them before driving runs.
  virtual void AddPreRunHook(std::shared_ptr<PreRunHook> hook) = 0;
  virtual void AddPreToolHook(std::shared_ptr<PreToolHook> hook) = 0;
  virtual void AddPostToolHook(std::shared_ptr<PostToolHook> hook) = 0;
  virtual void AddPostRunHook(std::shared_ptr<PostRunHook> hook) = 0;
  ///@}

  /// Starts a run for `task` and drives it until it completes, fails or waits.
  virtual Result<RunResult> Send(const std::string& task, const SendOptions& options = {}) = 0;
  /// Continues an interrupted, failed or quarantined run from its newest checkpoint, in the
  /// workspace it recorded. kFailedPrecondition for a completed run or one waiting for a person.
  ///
  /// When the agent changed since the run started (docs/runs.md) a `run.agent_changed` event says
  /// what changed; changed instructions or skills replace the old ones in the system prompt the
  /// model sees from now on (the stored conversation keeps the original). A tool the run already
  /// called that is gone or has another definition stops it: kFailedPrecondition naming the tool,
  /// and the run is left as it was. The same holds for Approve, Deny, Answer and ForkWithNote.
  virtual Result<RunResult> Resume(const std::string& run_id) = 0;
  /// Every unfinished run (running, waiting, failed, quarantined) of the store.
  virtual Result<std::vector<store::RunRecord>> Pending() = 0;
  /// A new run "<id>.fork-<n>" (n = 1, 2, ...) from checkpoint `step` (default: the newest); it is
  /// not driven: Resume() it.
  virtual Result<std::string> Fork(const std::string& run_id,
                                   std::optional<int64_t> step = std::nullopt) = 0;
  /// Recovery's retry-with-diagnosis (docs/heal.md): forks the run at its newest checkpoint into
  /// `new_id` and appends `note` to the fork's conversation as a user message, without driving it
  /// (Resume() it). When the run stopped with tool calls pending, the note is not added (it would
  /// come between a call and its result) and the fork resumes the calls. kAlreadyExists when
  /// `new_id` exists.
  virtual Result<std::string> ForkWithNote(const std::string& run_id, const std::string& new_id,
                                           const std::string& note) = 0;
  /// Answers a run waiting for approval: the tool runs (approve) or returns `reason` as a tool
  /// error (deny); then the run continues.
  virtual Result<RunResult> Approve(const std::string& run_id) = 0;
  /// See Approve.
  virtual Result<RunResult> Deny(const std::string& run_id, const std::string& reason) = 0;
  /// Answers a run waiting on ask_human; the answer is the tool's result; the run continues.
  virtual Result<RunResult> Answer(const std::string& run_id, const std::string& answer) = 0;
};

}  // namespace mend::agent
