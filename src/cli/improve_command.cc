// `mend improve`: tested proposals for an agent's instructions and skills (docs/cli.md,
// docs/improve.md). `mend improve AGENT_DIR --check CMD ...` runs one attempt; `list`, `show`,
// `apply` and `reject` work on the attempts and proposals under <home>/improve/.
#include <signal.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <cerrno>
#include <cmath>
#include <filesystem>
#include <iostream>
#include <map>
#include <memory>
#include <mutex>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "cli/command.h"
#include "cli/improve_cli.h"
#include "cli/progress_line.h"
#include "mend/agent/agent_spec.h"
#include "mend/app/check_hooks.h"
#include "mend/app/runtime.h"
#include "mend/base/json.h"
#include "mend/base/time_format.h"
#include "mend/heal/progress_guard.h"
#include "mend/improve/attempt_store.h"
#include "mend/improve/audit.h"
#include "mend/improve/evaluate.h"
#include "mend/improve/improve.h"
#include "mend/improve/proposal.h"

namespace mend::cli {
namespace {

struct ImproveArgs {
  std::string agent_dir;
  std::string check;
  std::string cases_file;
  bool from_failures = false;
  double held_out = 0.25;
  std::string mode = "manual";
  double max_cost_increase = 0.5;
  int candidates = 2;
  int rounds = 2;
  int repeats = 3;
  int concurrency = 4;
  std::string check_timeout = "60s";
  std::int64_t seed = -1;
  std::string id;      // list/show/apply/reject
  std::string reason;  // reject
};

Status ValidateArgs(const ImproveArgs& a) {
  if (a.check.empty()) return UsageError(InvalidArgumentError("--check CMD is required"));
  if (a.cases_file.empty() == !a.from_failures) {
    return UsageError(InvalidArgumentError("give exactly one of --cases FILE and --from-failures"));
  }
  if (!(a.held_out >= 0 && a.held_out < 1)) {
    return UsageError(InvalidArgumentError("--held-out must be at least 0 and below 1"));
  }
  if (a.mode != "auto" && a.mode != "manual") {
    return UsageError(InvalidArgumentError("--mode must be auto or manual"));
  }
  if (!std::isfinite(a.max_cost_increase) || a.max_cost_increase < 0) {
    return UsageError(InvalidArgumentError("--max-cost-increase must be a number >= 0"));
  }
  if (a.candidates < 1 || a.candidates > 20) {
    return UsageError(InvalidArgumentError("--candidates must be between 1 and 20"));
  }
  if (a.rounds < 1 || a.rounds > 20) {
    return UsageError(InvalidArgumentError("--rounds must be between 1 and 20"));
  }
  if (a.repeats < 2 || a.repeats > 100) {
    return UsageError(InvalidArgumentError(
        "--repeats must be between 2 and 100 (one run per case cannot tell a fix from noise)"));
  }
  if (a.concurrency < 1 || a.concurrency > 64) {
    return UsageError(InvalidArgumentError("--concurrency must be between 1 and 64"));
  }
  return OkStatus();
}

constexpr char kScratchPrefix[] = "improve-scratch-";

// Removes the scratch folders that attempts killed meanwhile left in `home`
// (improve-scratch-<pid> of a process that no longer exists). Best effort: what cannot be read or
// removed stays, and a pid now used by another process keeps its folder until that one ends.
void RemoveStaleScratch(const std::string& home) {
  std::error_code error;
  for (const auto& entry : std::filesystem::directory_iterator(home, error)) {
    const std::string name = entry.path().filename().string();
    if (name.rfind(kScratchPrefix, 0) != 0) continue;
    const std::string digits = name.substr(sizeof(kScratchPrefix) - 1);
    if (digits.empty() || digits.size() > 9 ||
        digits.find_first_not_of("0123456789") != std::string::npos) {
      continue;
    }
    const pid_t pid = static_cast<pid_t>(std::stol(digits));
    if (pid == ::getpid() || kill(pid, 0) == 0 || errno != ESRCH) continue;
    std::error_code ignored;
    std::filesystem::remove_all(entry.path(), ignored);
  }
}

Status RunImprove(CliContext& ctx, const ImproveArgs& args) {
  MEND_RETURN_IF_ERROR(ValidateArgs(args));
  Result<std::chrono::milliseconds> check_timeout = ParseDuration(args.check_timeout);
  if (!check_timeout.ok() || *check_timeout <= std::chrono::milliseconds::zero()) {
    return UsageError(
        InvalidArgumentError("--check-timeout must be a positive duration, e.g. 60s"));
  }
  const std::string agent_dir = AbsoluteAgentDir(args.agent_dir);
  MEND_ASSIGN_OR_RETURN(agent::AgentSpec spec, agent::LoadAgentFolder(ctx.fs, agent_dir));
  MEND_ASSIGN_OR_RETURN(std::unique_ptr<app::Runtime> runtime, OpenCliRuntime(ctx));
  // Opened before the attempt, so a store that cannot be reached costs no model calls.
  MEND_ASSIGN_OR_RETURN(improve::AttemptStore * attempts, runtime->Attempts());
  if (Status s = app::PrepareProvider(*runtime, spec.model); !s.ok()) return UsageError(s);

  improve::ImproveOptions options;
  options.env = runtime->env;
  options.home = runtime->home;
  options.agent_dir = agent_dir;
  options.held_out_fraction = args.held_out;
  options.seed =
      args.seed >= 0 ? static_cast<std::uint64_t>(args.seed) : runtime->env.random->Next64();
  options.editor = runtime->provider.get();
  options.editor_model = runtime->config.GetString("improve.editor_model");
  if (options.editor_model.empty()) options.editor_model = spec.model;
  options.candidates = args.candidates;
  options.rounds = args.rounds;
  options.repeats = args.repeats;
  options.gates.max_cost_increase = args.max_cost_increase;

  std::optional<FailureMatch> failure_match;
  if (args.from_failures) {
    MEND_ASSIGN_OR_RETURN(FailureCases failures, LoadFailureCases(*runtime, spec, agent_dir));
    if (failures.cases.empty()) {
      std::string message = "no failed, quarantined or no-progress run of agent `" + spec.name +
                            "` in " + agent_dir +
                            " (or of that name elsewhere with the same agent.toml) to learn from";
      if (failures.match.left_out_agent_toml > 0) {
        message += "; " + std::to_string(failures.match.left_out_agent_toml) + " run(s) of `" +
                   spec.name + "` in other folders have another agent.toml";
      }
      return FailedPreconditionError(message + "; give cases with --cases FILE");
    }
    if (failures.skipped > 0 && !ctx.json) {
      ctx.err << "improve: " << failures.skipped
              << " failed run(s) could not be read; older runs of their tasks were used\n";
    }
    options.cases = std::move(failures.cases);
    options.failure_reports = std::move(failures.reports);
    failure_match = std::move(failures.match);
  } else {
    MEND_ASSIGN_OR_RETURN(options.cases, improve::LoadCasesFile(ctx.fs, args.cases_file));
  }

  const bool terminal = !ctx.json && &ctx.err == &std::cerr && isatty(STDERR_FILENO) == 1;
  ProgressLine line(ctx.err, terminal);
  std::mutex progress_mu;
  int runs_done = 0;
  int best = 0;
  int training_runs = 0;
  const int arm_runs = static_cast<int>(options.cases.size()) * args.repeats;
  std::string arm_label = "baseline";

  improve::EvaluateOptions eval;
  eval.env = runtime->env;
  eval.provider = runtime->provider.get();
  eval.agent_dir = agent_dir;
  // Each arm's copies go here and are removed when the arm ends; a process killed meanwhile
  // leaves the folder behind (private, under the home) for the next attempt to remove.
  RemoveStaleScratch(runtime->home);
  eval.scratch_dir = JoinPath(runtime->home, kScratchPrefix + std::to_string(::getpid()));
  eval.check_command = {"/bin/sh", "-c", args.check + " \"$@\"", "mend-check"};
  eval.check_timeout = *check_timeout;
  eval.repeats = args.repeats;
  eval.concurrency = args.concurrency;
  // Evaluation runs get the folder's [[checks]] and the progress guard, as `mend run` does; not
  // long-term memory or the quality hooks, whose state changes between runs.
  app::Runtime& rt = *runtime;
  eval.add_run_hooks = [&rt](agent::Agent& agent, const agent::AgentSpec& run_spec) -> Status {
    MEND_RETURN_IF_ERROR(app::AddCheckHooks(rt, agent, run_spec, app::ShadowMode::kOff));
    if (rt.config.GetBool("heal.progress_guard")) {
      heal::ProgressGuardOptions guard_options;
      guard_options.max_denials = static_cast<int>(rt.config.GetInt("heal.max_denials"));
      auto guard = std::make_shared<heal::ProgressGuard>(guard_options);
      agent.AddPreToolHook(guard);
      agent.AddPostToolHook(guard);
    }
    return OkStatus();
  };
  eval.on_run = [&](const improve::CaseRun&) {
    std::lock_guard<std::mutex> lock(progress_mu);
    ++runs_done;
    line.Show("improve: " + arm_label + " " + std::to_string(runs_done) + "/" +
              std::to_string(arm_runs) + " runs; best so far " + std::to_string(best) + "/" +
              std::to_string(training_runs) + " training runs pass");
  };
  options.evaluate = [&](const improve::AgentText& text, const std::vector<improve::Case>& cases) {
    {
      std::lock_guard<std::mutex> lock(progress_mu);
      runs_done = 0;
    }
    return improve::EvaluateArm(text, cases, eval);
  };
  options.on_progress = [&](const improve::ImproveProgress& p) {
    std::lock_guard<std::mutex> lock(progress_mu);
    best = p.best_training_passes;
    training_runs = p.training_runs;
    arm_label = "candidate";  // the baseline is judged first; every later arm is a candidate
    if (p.kind == improve::ImproveProgress::Kind::kEditorAsked) line.Show("improve: " + p.message);
  };

  // Bad inputs (a case's workspace that is not a folder, an agent.toml whose workspace no copy can
  // resolve) are refused before the attempt is recorded or any model is called.
  options.check_inputs = [&eval](const improve::AgentText& text,
                                 const std::vector<improve::Case>& cases) -> Status {
    Status checked = improve::CheckEvaluation(text, cases, eval);
    if (checked.code() == StatusCode::kInvalidArgument) return UsageError(checked);
    return checked;
  };
  std::string attempt_id;
  options.on_started = [&attempt_id](const std::string& id) { attempt_id = id; };

  Result<improve::ImproveReport> report = improve::ImproveAgent(options);
  line.Finish();
  if (!report.ok() && !attempt_id.empty()) {
    // The audit folder says why it stopped (error.json); a shared store lists it as failed.
    attempts->RecordAttempt(attempt_id).IgnoreError();
    return Status(report.status().code(), "improve attempt " + attempt_id +
                                              " failed: " + std::string(report.status().message()));
  }
  MEND_RETURN_IF_ERROR(report.status());

  ImproveOutcome outcome;
  outcome.report = std::move(*report);
  outcome.failures = std::move(failure_match);
  MEND_RETURN_IF_ERROR(attempts->RecordAttempt(outcome.report.attempt_id));
  if (outcome.report.result.decision.outcome == improve::GateOutcome::kProposal &&
      outcome.report.chosen.has_value()) {
    improve::Proposal proposal =
        improve::MakeProposal(outcome.report.attempt_id, agent_dir, outcome.report.base,
                              outcome.report.chosen->text, runtime->env.clock->Now());
    MEND_RETURN_IF_ERROR(attempts->PutProposal(proposal));
    if (args.mode == "auto") {
      Result<improve::Proposal> applied = improve::ApplyProposal(
          ctx.fs, *runtime->env.clock, *attempts, runtime->home, outcome.report.attempt_id);
      if (applied.ok()) {
        proposal = *applied;
      } else if (applied.status().code() == StatusCode::kFailedPrecondition) {
        proposal.note = "auto mode did not apply it: " + std::string(applied.status().message());
        MEND_RETURN_IF_ERROR(attempts->PutProposal(proposal));
      } else {
        return applied.status();
      }
    }
    outcome.proposal = proposal;
  }
  PrintImproveOutcome(ctx, outcome);
  return OkStatus();
}

}  // namespace

void AddImproveCommand(CLI::App& app, CliContext& ctx) {
  auto args = std::make_shared<ImproveArgs>();
  CLI::App* improve = app.add_subcommand(
      "improve", "propose tested changes to an agent's instructions and skills (docs/improve.md)");
  improve->group("Commands");
  improve->add_option("AGENT_DIR", args->agent_dir, "the agent folder to improve");
  improve->add_option("--check", args->check,
                      "shell command that scores one run: gets the run as JSON on stdin, prints "
                      "{\"pass\":bool,\"score\":number}; a case's check_args are appended");
  improve->add_option("--cases", args->cases_file, "cases JSONL file (docs/improve.md)");
  improve->add_flag("--from-failures", args->from_failures,
                    "use the agent's failed, quarantined and no-progress runs as cases");
  improve->add_option("--held-out", args->held_out,
                      "fraction of cases held out from the editor, in [0, 1) (default 0.25)");
  improve->add_option("--mode", args->mode,
                      "manual: queue a proposal for `mend improve apply`; auto: apply it when the "
                      "files are unchanged since the attempt started (default manual)");
  improve->add_option("--max-cost-increase", args->max_cost_increase,
                      "allowed growth of cost per successful run (default 0.5 = +50%)");
  improve->add_option("--candidates", args->candidates, "candidates per round (default 2)");
  improve->add_option("--rounds", args->rounds, "editor rounds (default 2)");
  improve->add_option("--repeats", args->repeats, "runs per case and candidate, >= 2 (default 3)");
  improve->add_option("--concurrency", args->concurrency, "runs at the same time (default 4)");
  improve->add_option("--check-timeout", args->check_timeout,
                      "time one check may take; longer counts as failed (default 60s)");
  improve->add_option("--seed", args->seed, "seed of the held-out split (default: random)");
  AddConfigFlags(*improve, ctx, "improve.");
  AddProviderFlags(*improve, ctx);
  improve->footer(
      "Only instructions.md and skills/*.md can change. A candidate becomes a proposal only when "
      "it is better on at least one training case by a majority of --repeats runs, worse on no "
      "case (held-out included) and its cost per successful run stays within the limit. "
      "Every attempt writes <home>/improve/<attempt-id>/. Subcommands: list, show ID, apply ID, "
      "reject ID.");
  improve->require_subcommand(0, 1);
  AddImproveSubcommands(*improve, ctx);
  improve->callback([&ctx, args, improve] {
    if (improve->get_subcommands().empty()) {
      ctx.action = [&ctx, args] {
        if (args->agent_dir.empty()) {
          return UsageError(InvalidArgumentError(
              "improve needs AGENT_DIR (or one of list, show ID, apply ID, reject ID)"));
        }
        return RunImprove(ctx, *args);
      };
    }
  });
}

}  // namespace mend::cli
