// The wiring of one improve attempt (docs/improve.md): what `mend improve` and `mend demo` share.
#include "mend/app/improve_attempt.h"

#include <signal.h>
#include <unistd.h>

#include <cerrno>
#include <cmath>
#include <filesystem>
#include <memory>
#include <mutex>
#include <string>
#include <utility>

#include "mend/agent/command_vars.h"
#include "mend/app/canary.h"
#include "mend/app/mcp_tools.h"
#include "mend/app/runtime.h"
#include "mend/base/home_layout.h"
#include "mend/heal/progress_guard.h"
#include "mend/improve/attempt_store.h"
#include "mend/improve/evaluate.h"

namespace mend::app {
namespace {

// Removes the scratch folders that attempts killed meanwhile left in `home`
// (home::ImproveScratchDir of a process that no longer exists). Best effort: what cannot be read or
// removed stays, and a pid now used by another process keeps its folder until that one ends.
void RemoveStaleScratch(const std::string& home) {
  std::error_code error;
  for (const auto& entry : std::filesystem::directory_iterator(home, error)) {
    const std::string name = entry.path().filename().string();
    const std::optional<long> owner = home::ScratchOwner(name);
    if (!owner.has_value()) continue;
    const pid_t pid = static_cast<pid_t>(*owner);
    if (pid == ::getpid() || kill(pid, 0) == 0 || errno != ESRCH) continue;
    std::error_code ignored;
    std::filesystem::remove_all(entry.path(), ignored);
  }
}

// Evaluation runs get the progress guard as `mend run` does (EvaluateArm adds the folder's
// [[checks]] itself).
void AddProgressGuard(const Runtime& runtime, agent::Agent& agent) {
  if (!runtime.config.GetBool("heal.progress_guard")) return;
  heal::ProgressGuardOptions guard_options;
  guard_options.max_denials = static_cast<int>(runtime.config.GetInt("heal.max_denials"));
  guard_options.repeat_threshold =
      static_cast<int>(runtime.config.GetInt("heal.progress.hint_after"));
  auto guard = std::make_shared<heal::ProgressGuard>(guard_options);
  agent.AddPreToolHook(guard);
  agent.AddPostToolHook(guard);
}

// The progress lines of one attempt: runs done in the current arm, and the best arm so far.
class ProgressLines {
 public:
  ProgressLines(std::function<void(const std::string&)> show, int arm_runs)
      : show_(std::move(show)), arm_runs_(arm_runs) {}

  void ArmStarted() {
    std::lock_guard<std::mutex> lock(mu_);
    runs_done_ = 0;
  }
  void RunDone() {
    std::lock_guard<std::mutex> lock(mu_);
    ++runs_done_;
    if (!show_) return;
    show_("improve: " + arm_label_ + " " + std::to_string(runs_done_) + "/" +
          std::to_string(arm_runs_) + " runs; best so far " + std::to_string(best_) + "/" +
          std::to_string(training_runs_) + " training runs pass");
  }
  void Progress(const improve::ImproveProgress& p) {
    std::lock_guard<std::mutex> lock(mu_);
    best_ = p.best_training_passes;
    training_runs_ = p.training_runs;
    arm_label_ = "candidate";  // the baseline is judged first; every later arm is a candidate
    if (show_ && p.kind == improve::ImproveProgress::Kind::kEditorAsked) {
      show_("improve: " + p.message);
    }
  }

 private:
  std::function<void(const std::string&)> show_;
  const int arm_runs_;
  std::mutex mu_;
  int runs_done_ = 0;  // guarded by mu_, as the rest below
  int best_ = 0;
  int training_runs_ = 0;
  std::string arm_label_ = "baseline";
};

// Queues the attempt's proposal, if the gates made one, and applies it in kAuto.
Result<std::optional<improve::Proposal>> Propose(Runtime& runtime, improve::AttemptStore& attempts,
                                                 const ImproveRequest& request,
                                                 const improve::ImproveReport& report) {
  if (report.result.decision.outcome != improve::GateOutcome::kProposal ||
      !report.chosen.has_value()) {
    return std::optional<improve::Proposal>();
  }
  improve::Proposal proposal =
      improve::MakeProposal(report.attempt_id, request.agent_dir, report.base, report.chosen->text,
                            runtime.env.clock->Now());
  MEND_RETURN_IF_ERROR(attempts.PutProposal(proposal));
  if (request.mode == ProposalMode::kAuto) {
    // With improve.canary.share, auto mode canaries the proposal and lets the canary promote it.
    const double share = runtime.config.GetDouble("improve.canary.share");
    Status refused = RefuseWhileCanary(runtime, request.agent_dir, report.attempt_id);
    if (refused.ok() && share > 0) {
      refused = StartCanary(runtime, report.attempt_id, share, /*auto_decide=*/true).status();
      if (refused.ok()) {
        return std::optional<improve::Proposal>(std::move(proposal));
      }
    }
    Result<improve::Proposal> applied =
        !refused.ok() ? Result<improve::Proposal>(refused)
                      : improve::ApplyProposal(*runtime.env.fs, *runtime.env.clock, attempts,
                                               runtime.home, report.attempt_id);
    if (applied.ok()) {
      proposal = *applied;
    } else if (applied.status().code() == StatusCode::kFailedPrecondition ||
               applied.status().code() == StatusCode::kAlreadyExists) {
      proposal.note = "auto mode did not apply it: " + std::string(applied.status().message());
      MEND_RETURN_IF_ERROR(attempts.PutProposal(proposal));
    } else {
      return applied.status();
    }
  }
  return std::optional<improve::Proposal>(std::move(proposal));
}

}  // namespace

Status ValidateImproveRequest(const ImproveRequest& r, ImproveFieldNames names) {
  const bool flags = names == ImproveFieldNames::kFlags;
  auto name = [flags](std::string_view flag, std::string_view field) {
    return std::string(flags ? flag : field);
  };
  auto between = [&](std::string_view flag, std::string_view field, int value, int low, int high,
                     std::string_view why = "") -> Status {
    if (value >= low && value <= high) return OkStatus();
    return InvalidArgumentError(name(flag, field) + " must be between " + std::to_string(low) +
                                " and " + std::to_string(high) + std::string(why));
  };
  if (!(r.held_out_fraction >= 0 && r.held_out_fraction < 1)) {
    return InvalidArgumentError(name("--held-out", "held_out_fraction") +
                                " must be at least 0 and below 1");
  }
  if (!std::isfinite(r.max_cost_increase) || r.max_cost_increase < 0) {
    return InvalidArgumentError(name("--max-cost-increase", "max_cost_increase") +
                                " must be a number >= 0");
  }
  MEND_RETURN_IF_ERROR(between("--candidates", "candidates", r.candidates, 1, 20));
  MEND_RETURN_IF_ERROR(between("--rounds", "rounds", r.rounds, 1, 20));
  MEND_RETURN_IF_ERROR(between("--repeats", "repeats", r.repeats, 2, 100,
                               " (one run per case cannot tell a fix from noise)"));
  MEND_RETURN_IF_ERROR(between("--concurrency", "concurrency", r.concurrency, 1, 64));
  if (r.check_timeout <= std::chrono::milliseconds::zero()) {
    return InvalidArgumentError(name("--check-timeout", "improve.timeout_seconds") +
                                " must be a positive duration");
  }
  return OkStatus();
}

Result<std::vector<std::string>> ImproveTableCheck(const agent::AgentSpec& spec,
                                                   const std::string& agent_dir) {
  if (spec.improve.check.empty()) {
    return InvalidArgumentError("agent folder " + agent_dir +
                                " has no check command for improve: add `check = [\"...\"]` to "
                                "the [improve] table of its agent.toml (docs/agent_folder.md)");
  }
  return agent::ExpandCommand(spec.improve.check, agent_dir, "");
}

Result<std::vector<improve::Case>> ImproveTableCases(FileSystem& fs, const agent::AgentSpec& spec,
                                                     const std::string& agent_dir) {
  if (spec.improve.cases.empty()) {
    return InvalidArgumentError("agent folder " + agent_dir +
                                " has no cases for improve: add `cases = \"cases.jsonl\"` to the "
                                "[improve] table of its agent.toml (docs/agent_folder.md)");
  }
  return improve::LoadCasesFile(fs, JoinPath(agent_dir, spec.improve.cases));
}

Status UseImproveTable(FileSystem& fs, const agent::AgentSpec& spec, ImproveRequest& request) {
  MEND_ASSIGN_OR_RETURN(request.check_command, ImproveTableCheck(spec, request.agent_dir));
  MEND_ASSIGN_OR_RETURN(request.cases, ImproveTableCases(fs, spec, request.agent_dir));
  request.check_timeout = spec.improve.timeout;
  return OkStatus();
}

std::vector<std::string> ShellCheckCommand(const std::string& command) {
  return {"/bin/sh", "-c", command + " \"$@\"", "mend-check"};
}

Result<ImproveAttempt> RunImproveAttempt(Runtime& runtime, const agent::AgentSpec& spec,
                                         const ImproveRequest& request) {
  MEND_ASSIGN_OR_RETURN(improve::AttemptStore * attempts, runtime.Attempts());
  llm::LlmProvider* model = request.model != nullptr ? request.model : runtime.provider.get();

  improve::ImproveOptions options;
  options.env = runtime.env;
  options.home = runtime.home;
  options.agent_dir = request.agent_dir;
  options.cases = request.cases;
  options.failure_reports = request.failure_reports;
  options.held_out_fraction = request.held_out_fraction;
  options.seed = request.seed.has_value() ? *request.seed : runtime.env.random->Next64();
  options.editor = request.editor != nullptr ? request.editor : runtime.provider.get();
  options.editor_model = runtime.config.GetString("improve.editor_model");
  if (options.editor_model.empty()) options.editor_model = spec.model;
  options.candidates = request.candidates;
  options.rounds = request.rounds;
  options.repeats = request.repeats;
  options.gates.max_cost_increase = request.max_cost_increase;

  ProgressLines lines(request.on_progress,
                      static_cast<int>(options.cases.size()) * request.repeats);
  improve::EvaluateOptions eval;
  eval.env = runtime.env;
  eval.provider = model;
  eval.agent_dir = request.agent_dir;
  // Each arm's copies go here and are removed when the arm ends; a process killed meanwhile
  // leaves the folder behind (private, under the home) for the next attempt to remove.
  RemoveStaleScratch(runtime.home);
  eval.scratch_dir = home::ImproveScratchDir(runtime.home, ::getpid());
  eval.check_command = request.check_command;
  eval.check_timeout = request.check_timeout;
  eval.repeats = request.repeats;
  eval.concurrency = request.concurrency;
  eval.events = runtime.events.get();
  eval.stop = request.stop;
  if (request.hooks == EvaluationHooks::kAsRun) {
    eval.add_run_hooks = [&runtime](agent::Agent& agent, const agent::AgentSpec&) -> Status {
      AddProgressGuard(runtime, agent);
      return OkStatus();
    };
  }
  eval.extra_tools =
      [&runtime](const agent::AgentSpec& spec,
                 const std::string& workspace) -> Result<improve::EvaluateOptions::RunTools> {
    McpToolsOptions mcp_options;
    mcp_options.workspace = workspace;
    mcp_options.events = runtime.events.get();
    MEND_ASSIGN_OR_RETURN(McpTools mcp, StartMcpTools(spec, std::move(mcp_options)));
    return improve::EvaluateOptions::RunTools{std::move(mcp.tools), std::move(mcp.read_only)};
  };
  eval.on_run = [&lines](const improve::CaseRun&) { lines.RunDone(); };
  options.evaluate = [&](const improve::AgentText& text,
                         const std::vector<improve::Case>& cases) -> Result<improve::ArmRuns> {
    if (request.stop != nullptr && request.stop->load()) {
      return CancelledError("the attempt was stopped before its next arm");
    }
    lines.ArmStarted();
    return improve::EvaluateArm(text, cases, eval);
  };
  options.on_progress = [&lines](const improve::ImproveProgress& p) { lines.Progress(p); };
  // Bad inputs are refused before the attempt is recorded or any model is called.
  options.check_inputs = [&eval](const improve::AgentText& text,
                                 const std::vector<improve::Case>& cases) -> Status {
    Status checked = improve::CheckEvaluation(text, cases, eval);
    if (checked.code() == StatusCode::kInvalidArgument) {
      return checked.WithDetailCode(kImproveInputRefusedDetail);
    }
    return checked;
  };
  std::string attempt_id;
  options.on_started = [&attempt_id, &request](const std::string& id) {
    attempt_id = id;
    if (request.on_started) request.on_started(id);
  };

  Result<improve::ImproveReport> report = improve::ImproveAgent(options);
  if (!report.ok() && !attempt_id.empty()) {
    // The audit folder says why it stopped (error.json); a shared store lists it as failed.
    attempts->RecordAttempt(attempt_id).IgnoreError();
    return Status(report.status().code(), "improve attempt " + attempt_id +
                                              " failed: " + std::string(report.status().message()));
  }
  MEND_RETURN_IF_ERROR(report.status());

  ImproveAttempt attempt;
  attempt.report = std::move(*report);
  MEND_RETURN_IF_ERROR(attempts->RecordAttempt(attempt.report.attempt_id));
  MEND_ASSIGN_OR_RETURN(attempt.proposal, Propose(runtime, *attempts, request, attempt.report));
  return attempt;
}

}  // namespace mend::app
