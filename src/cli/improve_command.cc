// `mend improve`: tested proposals for an agent's instructions and skills (docs/cli.md,
// docs/improve.md). `mend improve AGENT_DIR --check CMD ...` runs one attempt; `list`, `show`,
// `apply` and `reject` work on the attempts and proposals under <home>/improve/.
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <iostream>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "cli/command.h"
#include "cli/improve_cli.h"
#include "cli/progress_line.h"
#include "mend/agent/agent_spec.h"
#include "mend/app/improve_attempt.h"
#include "mend/app/runtime.h"
#include "mend/base/time_format.h"
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
  std::string check_timeout;  // empty: the [improve] table's timeout_seconds, else 60s
  std::int64_t seed = -1;
  std::string id;      // list/show/apply/reject
  std::string reason;  // reject
};

// The request's numbers and mode from the flags: usage errors (exit 2) before anything is read.
Result<app::ImproveRequest> RequestFromFlags(const ImproveArgs& a) {
  if (!a.cases_file.empty() && a.from_failures) {
    return UsageError(
        InvalidArgumentError("give one of --cases FILE and --from-failures, not both"));
  }
  if (a.mode != "auto" && a.mode != "manual") {
    return UsageError(InvalidArgumentError("--mode must be auto or manual"));
  }
  app::ImproveRequest request;
  request.held_out_fraction = a.held_out;
  if (a.seed >= 0) request.seed = static_cast<std::uint64_t>(a.seed);
  request.candidates = a.candidates;
  request.rounds = a.rounds;
  request.repeats = a.repeats;
  request.concurrency = a.concurrency;
  request.max_cost_increase = a.max_cost_increase;
  request.mode = a.mode == "auto" ? app::ProposalMode::kAuto : app::ProposalMode::kManual;
  if (!a.check_timeout.empty()) {
    Result<std::chrono::milliseconds> timeout = ParseDuration(a.check_timeout);
    if (!timeout.ok() || *timeout <= std::chrono::milliseconds::zero()) {
      return UsageError(
          InvalidArgumentError("--check-timeout must be a positive duration, e.g. 60s"));
    }
    request.check_timeout = *timeout;
  }
  if (Status s = app::ValidateImproveRequest(request, app::ImproveFieldNames::kFlags); !s.ok()) {
    return UsageError(s);
  }
  return request;
}

Status RunImprove(CliContext& ctx, const ImproveArgs& args) {
  MEND_ASSIGN_OR_RETURN(app::ImproveRequest request, RequestFromFlags(args));
  const std::string agent_dir = AbsoluteAgentDir(args.agent_dir);
  request.agent_dir = agent_dir;
  MEND_ASSIGN_OR_RETURN(agent::AgentSpec spec, agent::LoadAgentFolder(ctx.fs, agent_dir));
  // What the flags leave out comes from the folder's [improve] table, as the server takes it.
  if (!args.check.empty()) {
    request.check_command = app::ShellCheckCommand(args.check);
  } else if (!spec.improve.check.empty()) {
    MEND_ASSIGN_OR_RETURN(request.check_command, app::ImproveTableCheck(spec, agent_dir));
    if (args.check_timeout.empty()) request.check_timeout = spec.improve.timeout;
  } else {
    return UsageError(InvalidArgumentError(
        "--check CMD is required (or `check` in the [improve] table of the folder's agent.toml)"));
  }
  if (!args.from_failures && args.cases_file.empty() && spec.improve.cases.empty()) {
    return UsageError(InvalidArgumentError(
        "give one of --cases FILE and --from-failures (or `cases` in the [improve] table of the "
        "folder's agent.toml)"));
  }
  MEND_ASSIGN_OR_RETURN(std::unique_ptr<app::Runtime> runtime, OpenCliRuntime(ctx));
  // Opened before the attempt, so a store that cannot be reached costs no model calls.
  MEND_RETURN_IF_ERROR(runtime->Attempts().status());
  if (Status s = app::PrepareProvider(*runtime, spec.model); !s.ok()) return UsageError(s);

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
    request.cases = std::move(failures.cases);
    request.failure_reports = std::move(failures.reports);
    failure_match = std::move(failures.match);
  } else if (!args.cases_file.empty()) {
    MEND_ASSIGN_OR_RETURN(request.cases, improve::LoadCasesFile(ctx.fs, args.cases_file));
  } else {
    MEND_ASSIGN_OR_RETURN(request.cases, app::ImproveTableCases(ctx.fs, spec, agent_dir));
  }

  const bool terminal = !ctx.json && &ctx.err == &std::cerr && isatty(STDERR_FILENO) == 1;
  ProgressLine line(ctx.err, terminal);
  request.on_progress = [&line](const std::string& text) { line.Show(text); };
  Result<app::ImproveAttempt> attempt = app::RunImproveAttempt(*runtime, spec, request);
  line.Finish();
  if (!attempt.ok()) {
    if (attempt.status().detail_code() == app::kImproveInputRefusedDetail) {
      return UsageError(attempt.status());
    }
    return attempt.status();
  }

  ImproveOutcome outcome;
  outcome.report = std::move(attempt->report);
  outcome.proposal = std::move(attempt->proposal);
  outcome.failures = std::move(failure_match);
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
                      "{\"pass\":bool,\"score\":number}; a case's check_args are appended "
                      "(default: the [improve] table's check)");
  improve->add_option("--cases", args->cases_file,
                      "cases JSONL file (docs/improve.md; default: the [improve] table's cases)");
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
      "Every attempt writes <home>/improve/<attempt-id>/. Subcommands: list, show ID, apply ID "
      "[--canary PERCENT [--auto]], reject ID, canary ID, promote ID, rollback ID.");
  improve->require_subcommand(0, 1);
  AddImproveSubcommands(*improve, ctx);
  improve->callback([&ctx, args, improve] {
    if (improve->get_subcommands().empty()) {
      ctx.action = [&ctx, args] {
        if (args->agent_dir.empty()) {
          return UsageError(InvalidArgumentError(
              "improve needs AGENT_DIR (or one of list, show ID, apply ID, reject ID, canary ID, "
              "promote ID, rollback ID)"));
        }
        return RunImprove(ctx, *args);
      };
    }
  });
}

}  // namespace mend::cli
