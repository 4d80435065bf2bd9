#include "agent/step_loop.h"

#include <algorithm>
#include <nlohmann/json.hpp>
#include <string>

#include "agent/message_codec.h"
#include "mend/base/json.h"

namespace mend::agent {
namespace {

constexpr size_t kAttemptExcerptBytes = 4000;
constexpr size_t kExcerptLineBytes = 300;

// A permanent, non-retryable run failure: a limit reached, or a hook that stopped the run.
Status LimitError(std::string_view code, const std::string& message) {
  return FailedPreconditionError(message).WithDetailCode(code).WithClass(ErrorClass::kPermanent);
}

std::string Clip(std::string_view text, size_t max) {
  if (text.size() <= max) return std::string(text);
  return std::string(text.substr(0, max)) + "...";
}

// A transcript excerpt of the newest messages (for lessons): what the agent did, newest last.
std::string AttemptExcerpt(const std::vector<llm::Message>& messages) {
  std::vector<std::string> lines;
  size_t used = 0;
  for (auto it = messages.rbegin(); it != messages.rend() && used < kAttemptExcerptBytes; ++it) {
    if (it->role == llm::Role::kSystem) break;
    std::string line;
    if (it->role == llm::Role::kUser) line = "user: " + Clip(it->content, kExcerptLineBytes);
    if (it->role == llm::Role::kTool) {
      line = std::string(it->is_error ? "tool error " : "tool ") + it->name + ": " +
             Clip(it->content, kExcerptLineBytes);
    }
    if (it->role == llm::Role::kAssistant) {
      line = "assistant: " + Clip(it->content, kExcerptLineBytes);
      for (const llm::ToolCall& c : it->tool_calls) {
        line += "\n  call " + c.name + " " + Clip(c.arguments, kExcerptLineBytes);
      }
    }
    used += line.size();
    lines.push_back(std::move(line));
  }
  std::string out;
  for (auto it = lines.rbegin(); it != lines.rend(); ++it) out += *it + "\n";
  return out;
}

// The question of an ask_human call, or nullopt when the arguments do not carry one.
std::optional<std::string> QuestionOf(const llm::ToolCall& call) {
  Result<nlohmann::json> args = ParseJson(call.arguments);
  if (!args.ok()) return std::nullopt;
  Result<std::string> question = GetString(*args, "question");
  if (!question.ok() || question->empty()) return std::nullopt;
  return std::move(question).value();
}

}  // namespace

store::RunError ToRunError(const Status& error) {
  store::RunError e;
  std::string_view detail = error.detail_code();
  e.code = detail.rfind("MEND_", 0) == 0 ? std::string(detail)
                                         : std::string(StatusCodeName(error.code()));
  std::string message(error.message());
  std::replace(message.begin(), message.end(), '\n', ' ');
  e.message = std::move(message);
  e.error_class = std::string(ErrorClassName(ClassOf(error)));
  e.retryable = IsRetryable(error);
  return e;
}

void StepLoop::Emit(obs::Event event) {
  if (deps_.options->events != nullptr) deps_.options->events->Publish(std::move(event));
}

Status StepLoop::Checkpoint(std::vector<llm::Message> added, const store::RunUpdate& update,
                            const MessageMeta& meta) {
  store::Checkpoint cp;
  cp.step = run_.checkpoint_step + 1;
  for (const llm::Message& m : added) cp.new_messages.push_back(EncodeMessage(m, meta));
  run_.state.active = ActiveTime();
  cp.state = EncodeRunState(run_.state);
  cp.created_at = deps_.options->env.clock->Now();
  if (Status saved = deps_.options->store->Save(run_.lease, cp, update); !saved.ok()) {
    // A full disk is the one failure the user fixes outside mend; say what to do once it is fixed
    // (docs/reliability.md, "A full disk").
    if (saved.code() != StatusCode::kResourceExhausted) return saved;
    return ResourceExhaustedError(std::string(saved.message()) + "; run " + run_.info.run_id +
                                  " stopped at checkpoint " + std::to_string(run_.checkpoint_step) +
                                  ", and `mend resume " + run_.info.run_id +
                                  "` continues it once the store can write again");
  }
  run_.checkpoint_step = cp.step;
  for (llm::Message& m : added) run_.messages.push_back(std::move(m));
  return OkStatus();
}

Status StepLoop::Renew() {
  Duration ttl = deps_.options->lease_ttl;
  // The loop cannot renew the lease while a tool runs, so before a tool call the lease must
  // outlive the longest the tool may take; otherwise a slow tool would lose the run.
  if (!run_.state.pending.empty()) ttl += ContextFor(run_.state.pending.front()).timeout;
  MEND_ASSIGN_OR_RETURN(run_.lease, deps_.options->store->Renew(run_.lease, ttl));
  return OkStatus();
}

Result<RunResult> StepLoop::Drive() {
  const std::atomic<bool>* stop = deps_.options->stop;
  while (true) {
    // Every pass starts right after a checkpoint (the first one, a decision's, a model turn's or a
    // tool result's), so stopping here loses nothing and repeats nothing.
    if (stop != nullptr && stop->load()) return Stopped();
    MEND_RETURN_IF_ERROR(Renew());
    if (!run_.state.pending.empty()) {
      MEND_ASSIGN_OR_RETURN(CallOutcome outcome, NextToolCall());
      if (outcome == CallOutcome::kWaiting) return WaitingResult();
      if (outcome == CallOutcome::kStopped) return Fail(stop_error_);
      // The call stays pending after the last checkpoint: it runs again on resume.
      if (outcome == CallOutcome::kInterrupted) return Stopped();
      continue;
    }
    if (Status limit = CheckLimits(); !limit.ok()) return Fail(limit);
    MEND_ASSIGN_OR_RETURN(std::optional<RunResult> ended, ModelTurn());
    if (ended.has_value()) return std::move(ended).value();
  }
}

Status StepLoop::CheckLimits() {
  const AgentLimits& limits = deps_.spec->limits;
  const RunState& s = run_.state;
  if (limits.max_steps > 0 && s.steps >= limits.max_steps) {
    return LimitError("MEND_RUN_MAX_STEPS",
                      "run reached max_steps (" + std::to_string(limits.max_steps) + ")");
  }
  if (limits.max_cost_usd > 0 && s.cost_usd >= limits.max_cost_usd) {
    return LimitError("MEND_RUN_MAX_COST",
                      "run reached max_cost_usd (" + std::to_string(limits.max_cost_usd) + ")");
  }
  if (limits.max_wall.count() > 0 && ActiveTime() >= limits.max_wall) {
    return LimitError("MEND_RUN_MAX_WALL", "run reached max_wall_seconds (" +
                                               std::to_string(limits.max_wall.count()) + ")");
  }
  return OkStatus();
}

Duration StepLoop::ActiveTime() {
  const Time now = deps_.options->env.clock->Now();
  if (!attempt_started_.has_value()) {
    attempt_started_ = now;
    active_at_start_ = run_.state.active;
  }
  const Duration ran = now - *attempt_started_ - retry_waits_;
  return active_at_start_ + (ran.count() > 0 ? ran : Duration(0));
}

std::optional<Duration> StepLoop::RetryPause(const Status& error, int retry) const {
  const ModelRetry& policy = deps_.options->model_retry;
  if (retry > policy.retries || ClassOf(error) != ErrorClass::kTransient) return std::nullopt;
  Duration pause = policy.first_delay;
  for (int i = 1; i < retry && pause < policy.max_delay; ++i) pause *= 2;
  pause = std::min(pause, policy.max_delay);
  if (const auto after = error.retry_after(); after.has_value()) {
    // A server that asks for a longer pause than a run waits is better served by recovery.
    if (*after > policy.max_delay) return std::nullopt;
    pause = std::max<Duration>(pause, *after);
  }
  return pause;
}

bool StepLoop::PauseBeforeRetry(Duration pause) {
  Clock& clock = *deps_.options->env.clock;
  const std::atomic<bool>* stop = deps_.options->stop;
  // The lease must outlive the pause and the request after it.
  if (!deps_.options->store->Renew(run_.lease, deps_.options->lease_ttl + pause).ok()) {
    return false;
  }
  const Time begin = clock.Now();
  const Time deadline = begin + pause;
  // Slept in slices so that a stop request ends the pause within a second.
  while (clock.Now() < deadline && (stop == nullptr || !stop->load())) {
    clock.SleepUntil(std::min(deadline, clock.Now() + std::chrono::seconds(1)));
  }
  retry_waits_ += clock.Now() - begin;
  return stop == nullptr || !stop->load();
}

Result<llm::Completion> StepLoop::CompleteWithRetries(llm::CompletionRequest& request) {
  for (int retry = 1;; ++retry) {
    obs::Span chat = StartChatSpan(request);
    Result<llm::Completion> completion = deps_.options->provider->Complete(request);
    if (completion.ok()) {
      EndChatSpan(chat, *completion);
      return completion;
    }
    store::RunError error = ToRunError(completion.status());
    chat.SetError(error.code, error.message);
    chat.End();
    const std::optional<Duration> pause = RetryPause(completion.status(), retry);
    if (!pause.has_value()) return completion;
    obs::Event e("model.retry");
    e.AddString("run", run_.info.run_id)
        .AddInt("step", run_.state.steps + 1)
        .AddInt("retry", retry)
        .AddString("error", error.code)
        .AddInt("delay_ms", std::chrono::duration_cast<std::chrono::milliseconds>(*pause).count());
    Emit(std::move(e));
    if (!PauseBeforeRetry(*pause)) return completion;
  }
}

Result<std::optional<RunResult>> StepLoop::ModelTurn() {
  llm::CompletionRequest request;
  request.model = deps_.options->model.empty() ? deps_.spec->model : deps_.options->model;
  request.messages = run_.messages;
  request.tools = deps_.tools->Definitions();
  Result<llm::Completion> completion = CompleteWithRetries(request);
  // The turn was not checkpointed, so a later Resume asks the model again.
  if (!completion.ok()) {
    const std::atomic<bool>* stop = deps_.options->stop;
    if (stop != nullptr && stop->load() && IsRetryable(completion.status())) {
      MEND_ASSIGN_OR_RETURN(RunResult stopped, Stopped());
      return std::optional<RunResult>(std::move(stopped));
    }
    MEND_ASSIGN_OR_RETURN(RunResult failed, Fail(completion.status()));
    return std::optional<RunResult>(std::move(failed));
  }
  RunState& s = run_.state;
  s.steps++;
  s.input_tokens += completion->usage.input_tokens;
  s.output_tokens += completion->usage.output_tokens;
  s.cost_usd += completion->cost_usd;
  std::vector<llm::ToolCall> calls = std::move(completion->tool_calls);
  for (size_t i = 0; i < calls.size(); ++i) {
    // Results are matched to calls by id, so a call without one gets a stable id here, before
    // the turn is checkpointed.
    if (calls[i].id.empty())
      calls[i].id = "call-" + std::to_string(s.steps) + "-" + std::to_string(i);
  }
  s.pending = calls;
  store::RunUpdate update;
  bool final_answer = calls.empty();
  if (final_answer) {
    s.output = completion->text;
    update.status = store::RunStatus::kCompleted;
    update.waiting = "";
    update.last_error = std::optional<store::RunError>();
  }
  MEND_RETURN_IF_ERROR(
      Checkpoint({llm::Message::Assistant(std::move(completion->text), std::move(calls))}, update));
  obs::Event e("step.completed");
  e.AddString("run", run_.info.run_id).AddInt("step", s.steps);
  Emit(std::move(e));
  if (!final_answer) return std::optional<RunResult>();
  MEND_ASSIGN_OR_RETURN(RunResult completed, Finish());
  return std::optional<RunResult>(std::move(completed));
}

Result<StepLoop::CallOutcome> StepLoop::NextToolCall() {
  const llm::ToolCall call = run_.state.pending.front();
  // Heal actions taken on this call become events of its span (the span is active meanwhile).
  obs::Span span = obs::StartSpan("execute_tool " + call.name);
  span.SetAttribute("gen_ai.operation.name", "execute_tool")
      .SetAttribute("gen_ai.tool.name", call.name)
      .SetAttribute("gen_ai.tool.call.id", call.id)
      .SetAttribute("mend.step", run_.state.steps)
      .SetContent("gen_ai.tool.call.arguments", call.arguments);
  obs::ActiveSpanScope scope(span);
  tool_span_ = &span;
  Result<CallOutcome> outcome = ToolCallTraced(call);
  tool_span_ = nullptr;
  return outcome;
}

Result<StepLoop::CallOutcome> StepLoop::ToolCallTraced(const llm::ToolCall& call) {
  ToolCallInfo info{&run_.info, run_.state.steps, call.id,
                    call.name,  call.arguments,   deps_.tools->Find(call.name)};
  if (run_.state.approved_call_id != call.id) {
    PreToolDecision decision = hooks_.BeforeTool(info);
    switch (decision.kind) {
      case PreToolDecision::Kind::kDeny:
        MEND_RETURN_IF_ERROR(RecordResult(call, ToolResult::Error(decision.text), "denied"));
        return CallOutcome::kRecorded;
      case PreToolDecision::Kind::kSupply:
        MEND_RETURN_IF_ERROR(
            RecordResult(call, hooks_.AfterTool(info, ToolResult::Ok(decision.text)), "supplied"));
        return CallOutcome::kRecorded;
      case PreToolDecision::Kind::kAskHuman:
        return Wait("approval", call.id, decision.text);
      case PreToolDecision::Kind::kStopRun:
        // The call gets an error result first so the conversation stays well-formed for a
        // person who resumes the failed run later.
        stop_error_ = LimitError(decision.detail_code, decision.text);
        MEND_RETURN_IF_ERROR(RecordResult(call, ToolResult::Error(decision.text), "stopped"));
        return CallOutcome::kStopped;
      case PreToolDecision::Kind::kAllow:
        break;
    }
    if (info.spec != nullptr && info.spec->requires_approval) {
      return Wait("approval", call.id, "run " + call.name + " " + call.arguments);
    }
  }
  if (info.spec != nullptr && call.name == kAskHumanTool) {
    std::optional<std::string> question = QuestionOf(call);
    if (question.has_value()) return Wait("question", call.id, *question);
    MEND_RETURN_IF_ERROR(
        RecordResult(call, ToolResult::Error("ask_human needs arguments {\"question\": \"...\"}")));
    return CallOutcome::kRecorded;
  }
  ToolResult result = Execute(call, info);
  if (result.interrupted) return CallOutcome::kInterrupted;
  MEND_RETURN_IF_ERROR(RecordResult(call, result));
  return CallOutcome::kRecorded;
}

ToolContext StepLoop::ContextFor(const llm::ToolCall& call) const {
  ToolContext ctx;
  ctx.workspace = run_.info.workspace;
  ctx.run_id = run_.info.run_id;
  ctx.call_id = call.id;
  ctx.env = deps_.options->env;
  ctx.stop = deps_.options->stop;
  // A command tool's own timeout (tools/*.toml) applies unless agent.toml's tool_options sets one.
  for (const CommandToolSpec& command : deps_.spec->command_tools) {
    if (command.spec.name == call.name && command.timeout.has_value()) {
      ctx.timeout = *command.timeout;
    }
  }
  auto options = deps_.spec->tool_options.find(call.name);
  if (options != deps_.spec->tool_options.end()) {
    if (options->second.timeout.has_value()) ctx.timeout = *options->second.timeout;
    if (options->second.max_output_bytes.has_value()) {
      ctx.max_output_bytes = *options->second.max_output_bytes;
    }
  }
  return ctx;
}

ToolResult StepLoop::Execute(const llm::ToolCall& call, const ToolCallInfo& info) {
  ToolContext ctx = ContextFor(call);
  obs::Event called("tool.called");
  called.AddString("run", run_.info.run_id)
      .AddInt("step", info.step)
      .AddString("tool", call.name)
      .AddString("call_id", call.id);
  Emit(std::move(called));
  ToolResult raw = deps_.tools->Invoke(call, ctx);
  // A call given up for a stop is not a result: no hook sees it.
  if (raw.interrupted && ctx.stop != nullptr && ctx.stop->load()) return raw;
  raw.interrupted = false;
  ToolResult result = hooks_.AfterTool(info, std::move(raw));
  if (result.is_error) {
    obs::Event failed("tool.failed");
    failed.AddString("run", run_.info.run_id)
        .AddInt("step", info.step)
        .AddString("tool", call.name)
        .AddString("call_id", call.id)
        .AddString("error", Clip(result.content, kExcerptLineBytes));
    Emit(std::move(failed));
  }
  return result;
}

Status StepLoop::RecordResult(const llm::ToolCall& call, const ToolResult& result,
                              const std::string& hook_decision) {
  auto& pending = run_.state.pending;
  pending.erase(std::remove_if(pending.begin(), pending.end(),
                               [&](const llm::ToolCall& c) { return c.id == call.id; }),
                pending.end());
  run_.state.approved_call_id.clear();
  MEND_RETURN_IF_ERROR(
      Checkpoint({llm::Message::ToolResult(call.id, call.name, result.content, result.is_error)},
                 {}, MessageMeta{result.replaced_by_hook, hook_decision}));
  TraceToolResult(result, hook_decision);
  if (result.replaced_by_hook) {
    obs::Event replaced("tool.replaced");
    replaced.AddString("run", run_.info.run_id)
        .AddInt("step", run_.state.steps)
        .AddString("tool", call.name)
        .AddString("call_id", call.id)
        .AddBool("mend.tool.replaced_by_hook", true);
    Emit(std::move(replaced));
  }
  return OkStatus();
}

obs::Span StepLoop::StartChatSpan(llm::CompletionRequest& request) {
  std::string model = request.model;
  if (model.empty()) model = deps_.options->run_model.model;
  obs::Span span = obs::StartSpan(model.empty() ? "chat" : "chat " + model, obs::SpanKind::kClient);
  if (!span.recording()) return span;
  span.SetAttribute("gen_ai.operation.name", "chat")
      .SetAttribute("gen_ai.provider.name", std::string(deps_.options->provider->name()))
      .SetAttribute("mend.step", run_.state.steps + 1);
  if (!model.empty()) span.SetAttribute("gen_ai.request.model", model);
  if (!run_.messages.empty())
    span.SetContent("gen_ai.input.messages", run_.messages.back().content);
  request.traceparent = obs::FormatTraceparent(span.context());
  return span;
}

void StepLoop::EndChatSpan(obs::Span& span, const llm::Completion& completion) {
  if (!span.recording()) return;
  if (!completion.model.empty()) span.SetAttribute("gen_ai.response.model", completion.model);
  if (!completion.id.empty()) span.SetAttribute("gen_ai.response.id", completion.id);
  span.SetAttribute("gen_ai.usage.input_tokens", completion.usage.input_tokens)
      .SetAttribute("gen_ai.usage.output_tokens", completion.usage.output_tokens)
      .SetAttribute(
          "gen_ai.response.finish_reasons",
          std::vector<std::string>{std::string(FinishReasonName(completion.finish_reason))})
      .SetAttribute("mend.cost_usd", completion.cost_usd)
      .SetAttribute("mend.tool_calls", static_cast<int64_t>(completion.tool_calls.size()))
      .SetContent("gen_ai.output.messages", completion.text);
  span.SetOk();
  span.End();
}

void StepLoop::TraceToolResult(const ToolResult& result, const std::string& hook_decision) {
  if (tool_span_ == nullptr || !tool_span_->recording()) return;
  obs::Span& span = *tool_span_;
  if (result.replaced_by_hook) span.SetAttribute("mend.tool.replaced_by_hook", true);
  if (!hook_decision.empty()) span.SetAttribute("mend.tool.hook_decision", hook_decision);
  span.SetContent("gen_ai.tool.call.result", result.content);
  if (hook_decision == "stopped") {
    std::string_view code = stop_error_.detail_code();
    span.SetError(code.empty() ? "stopped" : code, Clip(result.content, kExcerptLineBytes));
  } else if (hook_decision == "denied") {
    span.SetError("denied", Clip(result.content, kExcerptLineBytes));
  } else if (result.is_error) {
    span.SetError("tool_error", Clip(result.content, kExcerptLineBytes));
  } else {
    span.SetOk();
  }
}

Result<StepLoop::CallOutcome> StepLoop::Wait(const std::string& kind, const std::string& call_id,
                                             const std::string& question) {
  if (tool_span_ != nullptr) tool_span_->SetAttribute("mend.run.waiting", kind);
  run_.state.waiting = kind;
  run_.state.waiting_call_id = call_id;
  run_.state.question = question;
  run_.state.waiting_since = deps_.options->env.clock->Now();
  store::RunUpdate update;
  update.status = store::RunStatus::kWaiting;
  update.waiting = kind;
  MEND_RETURN_IF_ERROR(Checkpoint({}, update));
  deps_.options->store->Release(run_.lease).IgnoreError();
  obs::Event e("run.waiting");
  e.AddString("run", run_.info.run_id).AddString("waiting", kind);
  Emit(std::move(e));
  return CallOutcome::kWaiting;
}

RunResult StepLoop::BaseResult() const {
  RunResult r;
  r.run_id = run_.info.run_id;
  r.steps = run_.state.steps;
  r.input_tokens = run_.state.input_tokens;
  r.output_tokens = run_.state.output_tokens;
  r.cost_usd = run_.state.cost_usd;
  return r;
}

RunResult StepLoop::WaitingResult() const {
  RunResult r = BaseResult();
  r.status = store::RunStatus::kWaiting;
  r.waiting = run_.state.waiting;
  r.question = run_.state.question;
  return r;
}

RunOutcome StepLoop::RunPostRunHooks(const Status& error) {
  RunOutcome outcome;
  outcome.run = &run_.info;
  outcome.output = error.ok() ? run_.state.output : "";
  outcome.error = error;
  outcome.attempt = AttemptExcerpt(run_.messages);
  outcome.steps = run_.state.steps;
  outcome.cost_usd = run_.state.cost_usd;
  outcome.input_tokens = run_.state.input_tokens;
  outcome.output_tokens = run_.state.output_tokens;
  hooks_.AfterRun(outcome);
  return outcome;
}

void StepLoop::SaveFlags(const std::map<std::string, bool>& flags) {
  Result<nlohmann::json> parsed = ParseJson(run_.metadata.empty() ? "{}" : run_.metadata);
  nlohmann::json metadata = parsed.ok() && parsed->is_object() ? *parsed : nlohmann::json::object();
  nlohmann::json stored = nlohmann::json::object();
  for (const auto& [name, value] : flags) stored[name] = value;
  nlohmann::json before = metadata.contains("flags") ? metadata["flags"] : nlohmann::json::object();
  if (stored == before) return;  // nothing new: spare the store a write
  metadata["flags"] = std::move(stored);
  store::RunUpdate update;
  update.metadata = DumpJson(metadata);
  // Flags are advice for later readers (mend pending, heal); the run's outcome is already
  // durable, so a failed write does not turn it into an error.
  if (deps_.options->store->Update(run_.lease, update).ok()) run_.metadata = *update.metadata;
}

Result<RunResult> StepLoop::Finish() {
  RunOutcome outcome = RunPostRunHooks(OkStatus());
  SaveFlags(outcome.flags);
  deps_.options->store->Release(run_.lease).IgnoreError();
  RunResult r = BaseResult();
  r.status = store::RunStatus::kCompleted;
  r.output = outcome.output;
  r.flags = outcome.flags;
  obs::Event e("run.completed");
  e.AddString("run", r.run_id).AddInt("steps", r.steps).AddDouble("cost_usd", r.cost_usd);
  Emit(std::move(e));
  return r;
}

Result<RunResult> StepLoop::Stopped() {
  MEND_RETURN_IF_ERROR(deps_.options->store->Release(run_.lease));
  obs::Event e("run.stopped");
  e.AddString("run", run_.info.run_id)
      .AddInt("step", run_.state.steps)
      .AddInt("checkpoint", run_.checkpoint_step);
  Emit(std::move(e));
  RunResult r = BaseResult();
  r.status = store::RunStatus::kRunning;
  return r;
}

Result<RunResult> StepLoop::Fail(const Status& error) {
  store::RunError run_error = ToRunError(error);
  // The post-run hooks see the failure before it is recorded. Once the run is recorded failed,
  // nothing comes back to it (recovery leaves a non-retryable failure alone, and a retried one
  // may complete), so a process killed between the two would lose the reflexion hook's lesson
  // job for good. In this order a kill leaves the run running: recovery resumes it, and a failure
  // that happens again gives a job with the same id (deduplicated) or the same lesson
  // (reinforced). The lease is renewed first, so the hooks do not run once it is lost.
  MEND_RETURN_IF_ERROR(Renew());
  RunOutcome outcome = RunPostRunHooks(error);
  store::RunUpdate update;
  update.status = store::RunStatus::kFailed;
  update.waiting = "";
  update.last_error = run_error;
  MEND_RETURN_IF_ERROR(deps_.options->store->Update(run_.lease, update));
  SaveFlags(outcome.flags);
  deps_.options->store->Release(run_.lease).IgnoreError();
  RunResult r = BaseResult();
  r.status = store::RunStatus::kFailed;
  r.error = run_error;
  r.flags = outcome.flags;
  obs::Event e("run.failed");
  e.AddString("run", r.run_id)
      .AddString("code", run_error.code)
      .AddString("class", run_error.error_class);
  Emit(std::move(e));
  return r;
}

}  // namespace mend::agent
