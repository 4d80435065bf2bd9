// Printing of `mend improve` results and the subcommands that work on recorded attempts.
#include "cli/improve_cli.h"

#include <CLI/CLI.hpp>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "mend/app/canary.h"
#include "mend/app/improve_view.h"
#include "mend/app/runtime.h"
#include "mend/base/home_layout.h"
#include "mend/base/json.h"
#include "mend/improve/audit.h"
#include "mend/improve/card.h"
#include "mend/improve/failures.h"
#include "mend/obs/span_store.h"

namespace mend::cli {
namespace {

// Text from files (messages, folder names) printed as one line a terminal cannot be driven by:
// control characters become '?'.
std::string OneLine(std::string_view text) {
  std::string line(text);
  for (char& c : line) {
    const auto byte = static_cast<unsigned char>(c);
    if (byte < 0x20 || byte == 0x7f) c = c == '\n' || c == '\r' || c == '\t' ? ' ' : '?';
  }
  return line;
}

nlohmann::json DecisionJson(const improve::GateDecision& d) {
  nlohmann::json cases = nlohmann::json::array();
  for (const improve::CaseResult& c : d.cases) cases.push_back(app::DecisionCaseJson(c));
  nlohmann::json gate = nullptr;
  if (d.refused_by.has_value()) gate = improve::GateName(*d.refused_by);
  return {{"outcome", improve::GateOutcomeName(d.outcome)},
          {"gate", gate},
          {"reason", d.reason},
          {"cases", cases},
          {"cost", app::DecisionCostJson(d.baseline_cost, d.candidate_cost, d.max_cost_increase,
                                         d.cost_limit_usd)}};
}

void PrintProposalLine(std::ostream& out, const improve::Proposal& p) {
  if (p.status == improve::ProposalStatus::kApplied) {
    out << "applied to " << p.agent_dir << " (the old files are in improve/" << p.attempt_id
        << "/backup/)\n";
    return;
  }
  if (p.status == improve::ProposalStatus::kRejected) {
    out << "rejected" << (p.note.empty() ? "" : ": " + p.note) << "\n";
    return;
  }
  if (!p.note.empty()) out << p.note << "\n";
  out << "queued: mend improve apply " << p.attempt_id << "  (or: mend improve reject "
      << p.attempt_id << ")\n";
}

Status List(CliContext& ctx) {
  MEND_ASSIGN_OR_RETURN(std::unique_ptr<app::Runtime> runtime, OpenCliRuntime(ctx));
  MEND_ASSIGN_OR_RETURN(improve::AttemptStore * store, runtime->Attempts());
  MEND_ASSIGN_OR_RETURN(std::vector<improve::AttemptSummary> attempts, store->List());
  if (ctx.json) {
    ctx.out << DumpJson(app::AttemptListJson(attempts)) << "\n";
    return OkStatus();
  }
  if (attempts.empty()) {
    ctx.out << "no improve attempts yet\n";
    return OkStatus();
  }
  for (const improve::AttemptSummary& a : attempts) {
    std::string outcome = a.outcome;
    if (!a.gate.empty()) outcome += " (" + a.gate + ")";
    std::string proposal = a.proposal.has_value()
                               ? std::string(improve::ProposalStatusName(*a.proposal))
                               : std::string("-");
    ctx.out << a.attempt_id << "  " << outcome << "  proposal: " << proposal << "  " << a.agent_dir;
    if (!a.host.empty()) ctx.out << "  (on " << a.host << ")";
    ctx.out << "\n";
  }
  return OkStatus();
}

Status Show(CliContext& ctx, const std::string& id) {
  MEND_ASSIGN_OR_RETURN(std::unique_ptr<app::Runtime> runtime, OpenCliRuntime(ctx));
  MEND_ASSIGN_OR_RETURN(improve::AttemptStore * store, runtime->Attempts());
  MEND_ASSIGN_OR_RETURN(app::AttemptDetail detail,
                        app::ReadAttemptDetail(ctx.fs, *store, runtime->home, id));
  if (ctx.json) {
    ctx.out << DumpJson(app::AttemptDetailJson(detail)) << "\n";
    return OkStatus();
  }
  const improve::AuditRecord& record = detail.record;
  ctx.out << "attempt " << record.attempt_id << " of " << record.inputs.agent_dir << "\n";
  if (!detail.location.here) {
    std::string outcome = detail.summary.outcome;
    if (!detail.summary.gate.empty()) outcome += " (" + detail.summary.gate + ")";
    ctx.out << "outcome: " << outcome << "\n"
            << "its audit folder is on " << detail.location.host << ": "
            << detail.location.audit_dir << "\n";
  } else if (record.card.has_value()) {
    ctx.out << *record.card;
  } else if (record.error.has_value()) {
    ctx.out << "failed: " << record.error->code << ": " << OneLine(record.error->message) << "\n";
  } else {
    ctx.out << "unfinished: no decision was recorded\n";
  }
  if (detail.recomputed_matches.has_value()) {
    if (*detail.recomputed_matches) {
      ctx.out << "audit: the recorded scores give the recorded decision\n";
    } else {
      ctx.out << "audit: the recorded scores do NOT give the recorded decision: "
              << OneLine(detail.recomputed_mismatch) << "\n";
    }
  }
  if (detail.proposal.has_value()) PrintProposalLine(ctx.out, *detail.proposal);
  return OkStatus();
}

struct ApplyArgs {
  std::string id;
  double canary = 0;  // percent; 0: apply to every run
  bool canary_given = false;
  bool auto_decide = false;
};

void PrintCanary(CliContext& ctx, app::Runtime& runtime, const std::string& id) {
  Result<app::CanaryReport> report = app::ReadCanary(runtime, id);
  if (!report.ok()) {
    ctx.err << "mend: " << report.status().ToString() << "\n";
    return;
  }
  if (ctx.json) {
    ctx.out << DumpJson(app::CanaryReportJson(*report)) << "\n";
  } else {
    ctx.out << app::CanaryReportText(*report);
  }
}

Status StartCanary(CliContext& ctx, const ApplyArgs& args) {
  if (!(args.canary > 0 && args.canary <= 100)) {
    return UsageError(InvalidArgumentError("--canary must be a percent in (0, 100], got " +
                                           std::to_string(args.canary)));
  }
  MEND_ASSIGN_OR_RETURN(std::unique_ptr<app::Runtime> runtime, OpenCliRuntime(ctx));
  MEND_RETURN_IF_ERROR(improve::ValidateCanaryRule(app::CanaryRuleFromConfig(*runtime)));
  MEND_RETURN_IF_ERROR(app::StartCanary(*runtime, args.id, args.canary, args.auto_decide).status());
  PrintCanary(ctx, *runtime, args.id);
  return OkStatus();
}

Status Apply(CliContext& ctx, const ApplyArgs& args) {
  if (args.auto_decide && !args.canary_given) {
    return UsageError(InvalidArgumentError("--auto needs --canary PERCENT"));
  }
  if (args.canary_given) return StartCanary(ctx, args);
  const std::string& id = args.id;
  MEND_ASSIGN_OR_RETURN(std::unique_ptr<app::Runtime> runtime, OpenCliRuntime(ctx));
  MEND_ASSIGN_OR_RETURN(improve::AttemptStore * store, runtime->Attempts());
  MEND_ASSIGN_OR_RETURN(improve::Proposal queued, store->GetProposal(id));
  MEND_RETURN_IF_ERROR(app::RefuseWhileCanary(*runtime, queued.agent_dir, id));
  MEND_ASSIGN_OR_RETURN(improve::Proposal p, improve::ApplyProposal(ctx.fs, *runtime->env.clock,
                                                                    *store, runtime->home, id));
  if (ctx.json) {
    ctx.out << DumpJson(app::ProposalDecisionJson(p)) << "\n";
  } else {
    PrintProposalLine(ctx.out, p);
  }
  return OkStatus();
}

enum class CanaryAction { kShow, kPromote, kRollBack };

Status Canary(CliContext& ctx, const std::string& id, CanaryAction action) {
  MEND_ASSIGN_OR_RETURN(std::unique_ptr<app::Runtime> runtime, OpenCliRuntime(ctx));
  if (action == CanaryAction::kPromote) {
    MEND_RETURN_IF_ERROR(app::PromoteCanary(*runtime, id).status());
  } else if (action == CanaryAction::kRollBack) {
    MEND_RETURN_IF_ERROR(app::RollbackCanary(*runtime, id).status());
  }
  MEND_ASSIGN_OR_RETURN(app::CanaryReport report, app::ReadCanary(*runtime, id));
  if (ctx.json) {
    ctx.out << DumpJson(app::CanaryReportJson(report)) << "\n";
  } else {
    ctx.out << app::CanaryReportText(report);
  }
  return OkStatus();
}

Status Reject(CliContext& ctx, const std::string& id, const std::string& reason) {
  MEND_ASSIGN_OR_RETURN(std::unique_ptr<app::Runtime> runtime, OpenCliRuntime(ctx));
  MEND_ASSIGN_OR_RETURN(improve::AttemptStore * store, runtime->Attempts());
  MEND_ASSIGN_OR_RETURN(improve::Proposal p,
                        improve::RejectProposal(*runtime->env.clock, *store, id,
                                                reason.empty() ? "rejected by hand" : reason));
  if (ctx.json) {
    ctx.out << DumpJson(app::ProposalDecisionJson(p)) << "\n";
  } else {
    PrintProposalLine(ctx.out, p);
  }
  return OkStatus();
}

}  // namespace

void PrintImproveOutcome(CliContext& ctx, const ImproveOutcome& outcome) {
  const improve::ImproveReport& r = outcome.report;
  if (ctx.json) {
    nlohmann::json j = DecisionJson(r.result.decision);
    j["attempt_id"] = r.attempt_id;
    j["audit_dir"] = r.audit_dir;
    j["rationale"] = r.result.rationale;
    std::string diff;
    for (const improve::FileDiff& d : r.result.diffs) diff += d.diff;
    j["diff"] = diff;
    nlohmann::json refused = nlohmann::json::array();
    for (const improve::RefusedEdit& e : r.result.refused_edits) {
      refused.push_back({{"path", e.path},
                         {"refusal", improve::EditRefusalName(e.refusal)},
                         {"reason", e.reason}});
    }
    j["refused"] = refused;
    j["proposal"] = app::ProposalJson(outcome.proposal);
    j["candidates"] = r.candidates.size();
    j["runs"] = r.runs;
    j["editor_errors"] = r.editor_errors;
    nlohmann::json identical = nlohmann::json::array();
    for (const improve::IdenticalCandidate& i : r.result.identical) {
      identical.push_back({{"round", i.round},
                           {"request", i.request},
                           {"same_as", i.same_as},
                           {"same_as_round", i.same_as_round},
                           {"same_as_request", i.same_as_request}});
    }
    j["identical_candidates"] = identical;
    if (outcome.failures.has_value()) j["from_failures"] = FailureMatchJson(*outcome.failures);
    ctx.out << DumpJson(j) << "\n";
    return;
  }
  if (outcome.failures.has_value()) ctx.out << DescribeFailureMatch(*outcome.failures) << "\n";
  ctx.out << r.card;
  for (const std::string& e : r.editor_errors) ctx.out << "editor: " << e << "\n";
  ctx.out << "audit: " << r.audit_dir << "\n";
  if (outcome.proposal.has_value()) PrintProposalLine(ctx.out, *outcome.proposal);
}

void AddImproveSubcommands(CLI::App& improve, CliContext& ctx) {
  CLI::App* list = improve.add_subcommand(
      "list", "improve attempts, newest first (every host's, when store.url is postgres://)");
  list->callback([&ctx] { ctx.action = [&ctx] { return List(ctx); }; });

  auto show_id = std::make_shared<std::string>();
  CLI::App* show = improve.add_subcommand("show", "an attempt's card, audit check and proposal");
  show->add_option("ID", *show_id, "the attempt id (imp-...)")->required();
  show->callback([&ctx, show_id] { ctx.action = [&ctx, show_id] { return Show(ctx, *show_id); }; });

  auto apply_args = std::make_shared<ApplyArgs>();
  CLI::App* apply = improve.add_subcommand(
      "apply",
      "write a queued proposal into its agent folder on this host, if the files are unchanged; "
      "with --canary, try it on a share of new runs first");
  apply->add_option("ID", apply_args->id, "the attempt id (imp-...)")->required();
  CLI::Option* canary_option = apply->add_option(
      "--canary", apply_args->canary,
      "percent of the agent's new runs that take the proposal, in (0, 100]; the agent folder is "
      "not changed until the canary is promoted");
  apply->add_flag("--auto", apply_args->auto_decide,
                  "with --canary: promote or roll back on its own as soon as the rule decides "
                  "(improve.canary.*)");
  apply->callback([&ctx, apply_args, canary_option] {
    apply_args->canary_given = canary_option->count() > 0;
    ctx.action = [&ctx, apply_args] { return Apply(ctx, *apply_args); };
  });

  auto canary_id = std::make_shared<std::string>();
  CLI::App* canary = improve.add_subcommand(
      "canary", "a canary's arms, counts, failure rates with intervals, and what the rule says");
  canary->add_option("ID", *canary_id, "the attempt id of the canaried proposal")->required();
  canary->callback([&ctx, canary_id] {
    ctx.action = [&ctx, canary_id] { return Canary(ctx, *canary_id, CanaryAction::kShow); };
  });
  auto promote_id = std::make_shared<std::string>();
  CLI::App* promote = improve.add_subcommand(
      "promote", "end a running canary by writing its proposal into the agent folder");
  promote->add_option("ID", *promote_id, "the attempt id of the canaried proposal")->required();
  promote->callback([&ctx, promote_id] {
    ctx.action = [&ctx, promote_id] { return Canary(ctx, *promote_id, CanaryAction::kPromote); };
  });
  auto rollback_id = std::make_shared<std::string>();
  CLI::App* rollback = improve.add_subcommand(
      "rollback", "end a running canary: no new run takes the proposal, which is rejected");
  rollback->add_option("ID", *rollback_id, "the attempt id of the canaried proposal")->required();
  rollback->callback([&ctx, rollback_id] {
    ctx.action = [&ctx, rollback_id] { return Canary(ctx, *rollback_id, CanaryAction::kRollBack); };
  });

  auto reject_id = std::make_shared<std::string>();
  auto reason = std::make_shared<std::string>();
  CLI::App* reject = improve.add_subcommand("reject", "mark a queued proposal rejected");
  reject->add_option("ID", *reject_id, "the attempt id (imp-...)")->required();
  reject->add_option("--reason", *reason, "why (recorded as the proposal's note)");
  reject->callback([&ctx, reject_id, reason] {
    ctx.action = [&ctx, reject_id, reason] { return Reject(ctx, *reject_id, *reason); };
  });
}

Result<FailureCases> LoadFailureCases(app::Runtime& runtime, const agent::AgentSpec& spec,
                                      const std::string& agent_dir) {
  // observe.db adds what each run's trace says; without it (observe off, nothing traced yet) the
  // run store alone gives the cases.
  std::unique_ptr<obs::SpanStore> spans;
  Result<std::unique_ptr<obs::SpanStore>> opened =
      obs::SpanStore::OpenReadOnly(home::ObserveFile(runtime.home));
  if (opened.ok()) {
    spans = std::move(*opened);
  } else if (opened.status().code() != StatusCode::kNotFound) {
    return opened.status();
  }
  improve::FailureOptions options;
  options.agent_dir = agent_dir;
  options.agent_name = spec.name;
  options.agent_toml_sha256 = spec.agent_toml_sha256;
  MEND_ASSIGN_OR_RETURN(improve::FailureCases found,
                        improve::CasesFromFailures(*runtime.store, spans.get(), options));
  FailureCases out;
  out.match.agent = spec.name;
  out.match.agent_toml_sha256 = spec.agent_toml_sha256;
  out.match.runs_matched = found.runs_matched;
  out.match.runs_in_folder = found.runs_in_folder;
  out.match.runs_by_fingerprint = found.runs_by_fingerprint;
  out.match.other_folders = found.other_folders;
  out.match.left_out_agent_toml = found.left_out_agent_toml;
  out.match.tasks = found.tasks;
  out.match.skipped = static_cast<int64_t>(found.skipped.size());
  for (improve::FailureCase& f : found.cases) {
    out.match.run_ids.push_back(f.run_id);
    out.reports[f.c.id] = std::move(f.report);
    out.cases.push_back(std::move(f.c));
  }
  out.skipped = static_cast<int>(found.skipped.size());
  return out;
}

std::string DescribeFailureMatch(const FailureMatch& m) {
  auto runs = [](int64_t n) { return std::to_string(n) + (n == 1 ? " run" : " runs"); };
  std::string out = "improve: " + runs(m.runs_matched) + " of agent `" + m.agent +
                    "` failed, quarantined or made no progress";
  if (!m.agent_toml_sha256.empty()) {
    out += " (agent.toml " + m.agent_toml_sha256.substr(0, 12) + ")";
  }
  out += ": " + std::to_string(m.runs_in_folder) + " in this folder";
  if (m.runs_by_fingerprint > 0) {
    out += ", " + std::to_string(m.runs_by_fingerprint) + " in ";
    for (std::size_t i = 0; i < m.other_folders.size(); ++i) {
      out += (i == 0 ? "" : ", ") + m.other_folders[i];
    }
    out += " with the same agent.toml";
  }
  out += "; " + std::to_string(m.tasks) + (m.tasks == 1 ? " task" : " tasks");
  if (m.left_out_agent_toml > 0) {
    out += "; left out " + runs(m.left_out_agent_toml) + " of `" + m.agent +
           "` in other folders with another agent.toml";
  }
  return OneLine(out);
}

nlohmann::json FailureMatchJson(const FailureMatch& m) {
  return {{"agent", m.agent},
          {"agent_toml_sha256", m.agent_toml_sha256},
          {"runs_matched", m.runs_matched},
          {"runs_in_folder", m.runs_in_folder},
          {"runs_by_fingerprint", m.runs_by_fingerprint},
          {"other_folders", m.other_folders},
          {"left_out_agent_toml", m.left_out_agent_toml},
          {"tasks", m.tasks},
          {"skipped", m.skipped},
          {"run_ids", m.run_ids}};
}

}  // namespace mend::cli
