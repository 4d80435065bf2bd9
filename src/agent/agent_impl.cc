#include "agent/agent_impl.h"

#include <algorithm>
#include <cstdio>
#include <nlohmann/json.hpp>
#include <string>

#include "agent/held_run.h"
#include "agent/message_codec.h"
#include "agent/run_trace.h"
#include "mend/base/file_system.h"
#include "mend/base/json.h"
#include "mend/base/time_format.h"
#include "mend/obs/events.h"

namespace mend::agent {
namespace {

// How many "<id>.fork-<n>" names Fork tries before giving up.
constexpr int kMaxForks = 10000;

Status CheckResumable(const store::RunRecord& record) {
  if (record.status == store::RunStatus::kCompleted) {
    return FailedPreconditionError("run " + record.id + " is completed");
  }
  if (record.status == store::RunStatus::kWaiting) {
    return FailedPreconditionError("run " + record.id +
                                   (record.waiting == "question"
                                        ? " is waiting for an answer; use answer"
                                        : " is waiting for approval; use approve/deny"));
  }
  return OkStatus();
}

store::RunUpdate RunningUpdate() {
  store::RunUpdate update;
  update.status = store::RunStatus::kRunning;
  update.waiting = "";
  return update;
}

// The person answered: the wait ends. The time spent waiting is not in the run's active time
// (the attempt that asked ended when it started waiting).
void ClearWait(RunState& state) {
  state.waiting.clear();
  state.question.clear();
}

// Records the person's `result` for the call the run waits on.
Status ResolveWaitingCall(ActiveRun& run, StepLoop& loop, ToolResult result) {
  std::string call_id = run.state.waiting_call_id;
  auto& pending = run.state.pending;
  auto it = std::find_if(pending.begin(), pending.end(),
                         [&](const llm::ToolCall& c) { return c.id == call_id; });
  if (it == pending.end()) {
    return DataLossError("run " + run.info.run_id + ": the call " + call_id +
                         " it waits on is not pending");
  }
  std::string tool = it->name;
  pending.erase(it);
  ClearWait(run.state);
  run.state.waiting_call_id.clear();
  return loop.Checkpoint(
      {llm::Message::ToolResult(call_id, tool, std::move(result.content), result.is_error)},
      RunningUpdate());
}

}  // namespace

std::string NewRunId(const Env& env) {
  const uint64_t bits = env.random != nullptr
                            ? env.random->Next64()
                            : static_cast<uint64_t>(env.clock->Now().time_since_epoch().count());
  char buf[24];
  std::snprintf(buf, sizeof(buf), "%016llx", static_cast<unsigned long long>(bits));
  return "run-" + std::string(buf);
}

Result<std::unique_ptr<Agent>> Agent::Create(AgentSpec spec, AgentOptions options) {
  if (options.provider == nullptr) return InvalidArgumentError("agent options need a provider");
  if (options.store == nullptr) return InvalidArgumentError("agent options need a store");
  if (options.env.clock == nullptr) return InvalidArgumentError("agent options need a clock");
  MEND_ASSIGN_OR_RETURN(std::shared_ptr<const RunTools> tools,
                        RunTools::Build(spec, options.extra_tools));
  return std::unique_ptr<Agent>(
      new AgentImpl(std::move(spec), std::move(options), std::move(tools)));
}

AgentImpl::AgentImpl(AgentSpec spec, AgentOptions options, std::shared_ptr<const RunTools> tools)
    : spec_(std::move(spec)),
      options_(std::move(options)),
      tools_(std::move(tools)),
      fingerprint_(FingerprintAgent(spec_, tools_->Definitions())) {
  deps_.spec = &spec_;
  deps_.options = &options_;
  deps_.tools = tools_.get();
}

void AgentImpl::AddPreRunHook(std::shared_ptr<PreRunHook> hook) {
  std::lock_guard<std::mutex> lock(mu_);
  hooks_.pre_run.push_back(std::move(hook));
}
void AgentImpl::AddPreToolHook(std::shared_ptr<PreToolHook> hook) {
  std::lock_guard<std::mutex> lock(mu_);
  hooks_.pre_tool.push_back(std::move(hook));
}
void AgentImpl::AddPostToolHook(std::shared_ptr<PostToolHook> hook) {
  std::lock_guard<std::mutex> lock(mu_);
  hooks_.post_tool.push_back(std::move(hook));
}
void AgentImpl::AddPostRunHook(std::shared_ptr<PostRunHook> hook) {
  std::lock_guard<std::mutex> lock(mu_);
  hooks_.post_run.push_back(std::move(hook));
}

HooksRunner AgentImpl::MakeHooksRunner() {
  std::lock_guard<std::mutex> lock(mu_);
  return HooksRunner(hooks_, options_.events);
}

std::string AgentImpl::NewRunWorkspace() const {
  if (!options_.workspace.empty()) return NormalizePath(options_.workspace);
  if (!spec_.workspace.empty()) return NormalizePath(spec_.workspace);
  return NormalizePath(options_.caller_dir);
}

RunInfo AgentImpl::MakeInfo(const std::string& run_id, const std::string& task,
                            const RunOrigin& origin) const {
  RunInfo info;
  info.run_id = run_id;
  info.task = task;
  info.agent = &spec_;
  // A run keeps the workspace it started in, whoever resumes it and from wherever; runs recorded
  // before workspaces were kept take today's.
  info.workspace = origin.workspace.empty() ? NewRunWorkspace() : origin.workspace;
  return info;
}

Result<std::vector<llm::Message>> AgentImpl::PriorConversation(const std::string& run_id) {
  MEND_ASSIGN_OR_RETURN(store::RunSnapshot snapshot, options_.store->Load(run_id));
  std::vector<llm::Message> prior;
  for (const std::string& text : snapshot.messages) {
    MEND_ASSIGN_OR_RETURN(llm::Message m, DecodeMessage(text, run_id));
    if (m.role != llm::Role::kSystem) prior.push_back(std::move(m));
  }
  return prior;
}

// The system prompt is computed once, here, and saved as the first message: a resumed run sees
// the prompt it started with (changed instructions and skills aside, see AdoptHeld) and pre-run
// hooks are not asked again. The same checkpoint records how much of the prompt the instructions
// and skills make up.
Status AgentImpl::StartConversation(ActiveRun& run, StepLoop& loop, HooksRunner& hooks,
                                    std::vector<llm::Message> prior) {
  MEND_ASSIGN_OR_RETURN(RunOrigin origin, ParseRunOrigin(run.metadata, run.info.run_id));
  origin.prompt_prefix_bytes = SystemPrompt(spec_, {}).size();
  if (!options_.run_model.empty()) origin.model = options_.run_model;
  AdoptTrace(origin, obs::ActiveSpan(), run.info.run_id);
  store::RunUpdate update;
  MEND_ASSIGN_OR_RETURN(update.metadata, WriteRunOrigin(run.metadata, origin, run.info.run_id));
  std::vector<llm::Message> first;
  first.push_back(llm::Message::System(SystemPrompt(spec_, hooks.ContextSections(run.info))));
  for (llm::Message& m : prior) first.push_back(std::move(m));
  first.push_back(llm::Message::User(run.info.task));
  MEND_RETURN_IF_ERROR(loop.Checkpoint(std::move(first), update));
  run.metadata = *update.metadata;
  if (options_.events != nullptr) {
    obs::Event e("run.started");
    e.AddString("run", run.info.run_id)
        .AddString("agent", spec_.name)
        .AddString("task", run.info.task)
        .AddString("workspace", run.info.workspace);
    options_.events->Publish(std::move(e));
  }
  return OkStatus();
}

Result<RunResult> AgentImpl::Send(const std::string& task, const SendOptions& options) {
  std::vector<llm::Message> prior;
  if (!options.continue_from.empty()) {
    MEND_ASSIGN_OR_RETURN(prior, PriorConversation(options.continue_from));
  }
  Time now = options_.env.clock->Now();
  store::RunRecord record;
  record.id = options.run_id.empty() ? NewRunId(options_.env) : options.run_id;
  record.agent = spec_.name;
  record.agent_dir = spec_.dir;
  record.task = task;
  nlohmann::json metadata = nlohmann::json::object();
  if (!options.continue_from.empty()) metadata["continue_from"] = options.continue_from;
  RunOrigin origin;
  origin.kind = options.continue_from.empty() ? "send" : "session";
  origin.workspace = NewRunWorkspace();
  origin.model = options_.run_model;
  origin.fingerprint = fingerprint_;
  origin.shadow = options_.shadow;
  origin.arm = options_.arm;
  origin.canary = options_.canary;
  obs::Span attempt =
      StartAttemptSpan(options_, spec_, record.id, origin, origin.kind, "", options.trace_parent);
  AdoptTrace(origin, &attempt, record.id);
  obs::ActiveSpanScope scope(attempt);
  Result<RunResult> result =
      SendTraced(record, origin, DumpJson(metadata), std::move(prior), now, options.on_created);
  EndAttemptSpan(attempt, result);
  return result;
}

Result<RunResult> AgentImpl::SendTraced(store::RunRecord& record, const RunOrigin& origin,
                                        const std::string& metadata,
                                        std::vector<llm::Message> prior, Time now,
                                        const std::function<void(const std::string&)>& on_created) {
  const std::string& task = record.task;
  MEND_ASSIGN_OR_RETURN(record.metadata, WriteRunOrigin(metadata, origin, record.id));
  record.created_at = now;
  record.updated_at = now;
  MEND_RETURN_IF_ERROR(options_.store->CreateRun(record));
  if (on_created) on_created(record.id);
  MEND_ASSIGN_OR_RETURN(store::Lease lease,
                        options_.store->Claim(record.id, options_.holder, options_.lease_ttl));
  HooksRunner hooks = MakeHooksRunner();
  ActiveRun run;
  run.lease = lease;
  run.info = MakeInfo(record.id, task, origin);
  run.state.started_at = now;
  run.metadata = record.metadata;
  StepLoop loop(deps_, hooks, run);
  if (Status s = StartConversation(run, loop, hooks, std::move(prior)); !s.ok()) {
    options_.store->Release(run.lease).IgnoreError();
    return s;
  }
  return DriveReleasingOnError(loop, run);
}

Result<RunResult> AgentImpl::DriveReleasingOnError(StepLoop& loop, ActiveRun& run) {
  Result<RunResult> result = loop.Drive();
  // After kAborted another holder owns the run: nothing more may be written, not even a release.
  if (!result.ok() && result.status().code() != StatusCode::kAborted) {
    options_.store->Release(run.lease).IgnoreError();
  }
  return result;
}

Result<ActiveRun> AgentImpl::LoadHeld(const std::string& run_id, const store::Lease& lease) {
  MEND_ASSIGN_OR_RETURN(store::RunSnapshot snapshot, options_.store->Load(run_id));
  ActiveRun run;
  run.lease = lease;
  run.checkpoint_step = snapshot.step;
  run.metadata = snapshot.run.metadata;
  Result<RunOrigin> origin = ParseRunOrigin(run.metadata, run_id);
  Result<RunState> state =
      origin.ok() ? DecodeRunState(snapshot.state, run_id) : Result<RunState>(origin.status());
  for (size_t i = 0; i < snapshot.messages.size() && state.ok(); ++i) {
    Result<llm::Message> m = DecodeMessage(snapshot.messages[i], run_id);
    if (!m.ok()) state = m.status();
    if (m.ok()) run.messages.push_back(std::move(m).value());
  }
  if (!state.ok()) {
    // A corrupt row ends this run with a clear, permanent error; other runs are untouched.
    store::RunUpdate update;
    update.status = store::RunStatus::kFailed;
    update.last_error = ToRunError(state.status());
    options_.store->Update(lease, update).IgnoreError();
    options_.store->Release(lease).IgnoreError();
    return state.status();
  }
  run.state = std::move(state).value();
  run.info = MakeInfo(run_id, snapshot.run.task, *origin);
  if (Status s = AdoptHeld(run, *origin); !s.ok()) {
    if (s.code() != StatusCode::kAborted) options_.store->Release(lease).IgnoreError();
    return s;
  }
  return run;
}

Status AgentImpl::AdoptHeld(ActiveRun& run, RunOrigin& origin) {
  const std::string& run_id = run.info.run_id;
  AgentChanges changes = CompareFingerprints(origin.fingerprint, fingerprint_);
  MEND_RETURN_IF_ERROR(
      CheckUsedTools(run_id, run.messages, *tools_, origin.fingerprint, fingerprint_));
  if ((changes.instructions || changes.skills) && origin.prompt_prefix_bytes.has_value() &&
      !run.messages.empty() && run.messages.front().role == llm::Role::kSystem) {
    std::string& prompt = run.messages.front().content;
    prompt = RefreshSystemPrompt(prompt, *origin.prompt_prefix_bytes, SystemPrompt(spec_, {}));
  }
  if (changes.any() && options_.events != nullptr) {
    obs::Event e("run.agent_changed");
    e.AddString("run", run_id).AddString("changed", changes.Describe());
    options_.events->Publish(std::move(e));
  }
  // A run from before traces were recorded keeps the trace its first traced attempt starts.
  bool trace_adopted = AdoptTrace(origin, obs::ActiveSpan(), run_id);
  bool model_changed = !options_.run_model.empty() && options_.run_model != origin.model;
  if (!model_changed && !trace_adopted) return OkStatus();
  // The caller chose another model (a flag on this command): the run continues with it, and the
  // record says so for every later command.
  const RunModel previous = origin.model;
  if (model_changed && !previous.empty()) {
    origin.model_changes.push_back(
        {previous, options_.run_model, FormatRfc3339(options_.env.clock->Now())});
  }
  if (model_changed) origin.model = options_.run_model;
  store::RunUpdate update;
  MEND_ASSIGN_OR_RETURN(update.metadata, WriteRunOrigin(run.metadata, origin, run_id));
  MEND_RETURN_IF_ERROR(options_.store->Update(run.lease, update));
  run.metadata = *update.metadata;
  if (model_changed && !previous.empty() && options_.events != nullptr) {
    obs::Event e("run.model_changed");
    e.AddString("run", run_id)
        .AddString("from", DescribeRunModel(previous))
        .AddString("to", DescribeRunModel(options_.run_model));
    options_.events->Publish(std::move(e));
  }
  return OkStatus();
}

Result<RunResult> AgentImpl::Resume(const std::string& run_id) {
  MEND_ASSIGN_OR_RETURN(store::RunRecord record, options_.store->GetRun(run_id));
  MEND_RETURN_IF_ERROR(CheckResumable(record));
  obs::Span attempt = StartAttemptSpan(
      options_, spec_, run_id, ParseRunOrigin(record.metadata, run_id).value_or(RunOrigin{}),
      "resume", record.parent_id, std::nullopt);
  obs::ActiveSpanScope scope(attempt);
  Result<RunResult> result = ResumeTraced(std::move(record));
  EndAttemptSpan(attempt, result);
  return result;
}

Result<RunResult> AgentImpl::ResumeTraced(store::RunRecord record) {
  const std::string run_id = record.id;
  MEND_ASSIGN_OR_RETURN(store::Lease lease,
                        options_.store->Claim(run_id, options_.holder, options_.lease_ttl));
  // Another process may have saved progress between the read above and the claim.
  if (Result<store::RunRecord> claimed = options_.store->GetRun(run_id); claimed.ok()) {
    record = std::move(claimed).value();
  }
  HooksRunner hooks = MakeHooksRunner();
  if (record.step == 0) {
    // Interrupted before its first checkpoint: nothing was saved, so the run starts over.
    Result<RunOrigin> origin = ParseRunOrigin(record.metadata, run_id);
    if (!origin.ok()) {
      options_.store->Release(lease).IgnoreError();
      return origin.status();
    }
    ActiveRun run;
    run.lease = lease;
    run.metadata = record.metadata;
    run.info = MakeInfo(run_id, record.task, *origin);
    run.state.started_at = options_.env.clock->Now();
    StepLoop loop(deps_, hooks, run);
    if (Status s = StartConversation(run, loop, hooks, {}); !s.ok()) {
      options_.store->Release(run.lease).IgnoreError();
      return s;
    }
    return DriveReleasingOnError(loop, run);
  }
  MEND_ASSIGN_OR_RETURN(ActiveRun run, LoadHeld(run_id, lease));
  return DriveHeld(run, hooks, [&](ActiveRun& held, StepLoop&) -> Status {
    if (Status s = CheckResumable(options_.store->GetRun(run_id).value_or(record)); !s.ok()) {
      return s;
    }
    if (record.status == store::RunStatus::kRunning) return OkStatus();
    store::RunUpdate update;
    update.status = store::RunStatus::kRunning;
    return options_.store->Update(held.lease, update);
  });
}

Result<RunResult> AgentImpl::DriveHeld(ActiveRun& run, HooksRunner& hooks,
                                       const Decision& decision) {
  StepLoop loop(deps_, hooks, run);
  if (Status s = decision(run, loop); !s.ok()) {
    if (s.code() != StatusCode::kAborted) options_.store->Release(run.lease).IgnoreError();
    return s;
  }
  return DriveReleasingOnError(loop, run);
}

Result<RunResult> AgentImpl::ContinueWaiting(const std::string& run_id, std::string_view kind,
                                             std::string_view attempt_name,
                                             const Decision& decision) {
  MEND_ASSIGN_OR_RETURN(store::RunRecord record, options_.store->GetRun(run_id));
  Status not_waiting = FailedPreconditionError("run " + run_id + " is not waiting for " +
                                               (kind == "question" ? "an answer" : "approval"));
  if (record.status != store::RunStatus::kWaiting || record.waiting != kind) return not_waiting;
  obs::Span attempt = StartAttemptSpan(
      options_, spec_, run_id, ParseRunOrigin(record.metadata, run_id).value_or(RunOrigin{}),
      attempt_name, record.parent_id, std::nullopt);
  obs::ActiveSpanScope scope(attempt);
  Result<RunResult> result = [&]() -> Result<RunResult> {
    MEND_ASSIGN_OR_RETURN(store::Lease lease,
                          options_.store->Claim(run_id, options_.holder, options_.lease_ttl));
    MEND_ASSIGN_OR_RETURN(ActiveRun run, LoadHeld(run_id, lease));
    if (run.state.waiting != kind) {
      options_.store->Release(lease).IgnoreError();
      return not_waiting;
    }
    HooksRunner hooks = MakeHooksRunner();
    return DriveHeld(run, hooks, decision);
  }();
  EndAttemptSpan(attempt, result);
  return result;
}

Result<RunResult> AgentImpl::Approve(const std::string& run_id) {
  return ContinueWaiting(run_id, "approval", "approve", [](ActiveRun& run, StepLoop& loop) {
    run.state.approved_call_id = run.state.waiting_call_id;
    run.state.waiting_call_id.clear();
    ClearWait(run.state);
    return loop.Checkpoint({}, RunningUpdate());
  });
}

Result<RunResult> AgentImpl::Deny(const std::string& run_id, const std::string& reason) {
  return ContinueWaiting(run_id, "approval", "deny", [&reason](ActiveRun& run, StepLoop& loop) {
    std::string text = "denied by a person";
    if (!reason.empty()) text += ": " + reason;
    return ResolveWaitingCall(run, loop, ToolResult::Error(text));
  });
}

Result<RunResult> AgentImpl::Answer(const std::string& run_id, const std::string& answer) {
  return ContinueWaiting(run_id, "question", "answer", [&answer](ActiveRun& run, StepLoop& loop) {
    return ResolveWaitingCall(run, loop, ToolResult::Ok(answer));
  });
}

Result<std::vector<store::RunRecord>> AgentImpl::Pending() {
  store::ListOptions options;
  options.unfinished_only = true;
  return options_.store->ListRuns(options);
}

Result<std::string> AgentImpl::Fork(const std::string& run_id, std::optional<int64_t> step) {
  MEND_ASSIGN_OR_RETURN(store::RunRecord record, options_.store->GetRun(run_id));
  int64_t at = step.value_or(record.step);
  for (int n = 1; n <= kMaxForks; ++n) {
    std::string fork_id = run_id + ".fork-" + std::to_string(n);
    Result<store::RunRecord> existing = options_.store->GetRun(fork_id);
    if (existing.ok()) continue;
    if (existing.status().code() != StatusCode::kNotFound) return existing.status();
    Result<store::RunRecord> forked = options_.store->Fork(run_id, at, fork_id);
    if (forked.ok()) return fork_id;
    // Another process took this name between the look-up and the fork: try the next one.
    if (forked.status().code() != StatusCode::kAlreadyExists) return forked.status();
  }
  return ResourceExhaustedError("run " + run_id + " has too many forks");
}

Result<std::string> AgentImpl::ForkWithNote(const std::string& run_id, const std::string& new_id,
                                            const std::string& note) {
  MEND_ASSIGN_OR_RETURN(store::RunRecord record, options_.store->GetRun(run_id));
  MEND_RETURN_IF_ERROR(options_.store->Fork(run_id, record.step, new_id).status());
  if (note.empty()) return new_id;
  MEND_ASSIGN_OR_RETURN(store::Lease lease,
                        options_.store->Claim(new_id, options_.holder, options_.lease_ttl));
  Result<ActiveRun> held = LoadHeld(new_id, lease);
  if (!held.ok()) {
    options_.store->Release(lease).IgnoreError();
    return held.status();
  }
  ActiveRun run = std::move(held).value();
  Status saved = OkStatus();
  if (run.state.pending.empty()) {
    HooksRunner hooks = MakeHooksRunner();
    StepLoop loop(deps_, hooks, run);
    saved = loop.Checkpoint({llm::Message::User(note)}, {});
  }
  options_.store->Release(run.lease).IgnoreError();
  MEND_RETURN_IF_ERROR(saved);
  return new_id;
}

}  // namespace mend::agent
