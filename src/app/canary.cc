// Canaries of accepted proposals (mend/app/canary.h, docs/improve.md "Canary").
#include "mend/app/canary.h"

#include <cmath>
#include <cstdio>
#include <functional>
#include <memory>
#include <mutex>
#include <nlohmann/json.hpp>
#include <optional>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "app/runtime_parts.h"
#include "mend/agent/run_origin.h"
#include "mend/app/run_json.h"
#include "mend/app/runtime.h"
#include "mend/base/file_system.h"
#include "mend/base/home_layout.h"
#include "mend/base/json.h"
#include "mend/base/time_format.h"
#include "mend/improve/attempt_store.h"
#include "mend/improve/proposal.h"
#include "mend/obs/events.h"
#include "mend/store/postgres_store.h"

namespace mend::app {
namespace {

using nlohmann::json;

// The Wilson score interval of k failures in n runs at 95%.
void WilsonInterval(int64_t k, int64_t n, double& low, double& high) {
  if (n <= 0) {
    low = 0;
    high = 1;
    return;
  }
  const double z = 1.959963984540054;
  const double p = static_cast<double>(k) / static_cast<double>(n);
  const double nn = static_cast<double>(n);
  const double denom = 1 + z * z / nn;
  const double center = (p + z * z / (2 * nn)) / denom;
  const double half = z * std::sqrt(p * (1 - p) / nn + z * z / (4 * nn * nn)) / denom;
  low = std::max(0.0, center - half);
  high = std::min(1.0, center + half);
}

CanaryArmReport ArmReport(std::string arm, const improve::ArmOutcomes& o) {
  CanaryArmReport r;
  r.arm = std::move(arm);
  r.outcomes = o;
  const int64_t failures = o.runs - o.successes;
  r.failure_rate = o.runs > 0 ? static_cast<double>(failures) / static_cast<double>(o.runs) : 0;
  WilsonInterval(failures, o.runs, r.failure_low, r.failure_high);
  r.cost_per_success = o.successes > 0 ? o.cost_usd / static_cast<double>(o.successes) : 0;
  return r;
}

// One line of improve/<id>/canary.jsonl in this home, the proposal's audit folder created when
// the attempt ran on another replica (as `improve apply` does for its backup), so the home that
// started or decided a canary holds the line. Best effort: the store holds the canary itself.
void AppendAuditLine(Runtime& runtime, std::string_view proposal_id, const json& line) {
  FileSystem& fs = *runtime.env.fs;
  const std::string dir = home::AttemptDir(runtime.home, proposal_id);
  if (!fs.CreateDirs(dir).ok()) return;
  Result<std::unique_ptr<WritableFile>> file =
      fs.OpenWritable(JoinPath(dir, "canary.jsonl"), WriteMode::kAppend);
  if (!file.ok()) return;
  if ((*file)->Append(DumpJson(line) + "\n").ok()) (*file)->Sync().IgnoreError();
  (*file)->Close().IgnoreError();
}

json CountsJson(const improve::ArmOutcomes& o) {
  return {{"runs", o.runs},
          {"successes", o.successes},
          {"completed", o.completed},
          {"checks_failed", o.checks_failed},
          {"failed", o.failed},
          {"no_progress", o.no_progress},
          {"quarantined", o.quarantined},
          {"steps", o.steps},
          {"input_tokens", o.input_tokens},
          {"output_tokens", o.output_tokens},
          {"cost_usd", o.cost_usd}};
}

json RuleJson(const improve::CanaryRule& rule) {
  return {{"min_runs", rule.min_runs},
          {"max_runs", rule.max_runs},
          {"confidence", rule.confidence},
          {"max_cost_increase", rule.max_cost_increase}};
}

// Publishes the decision as `canary.decided` and as a heal action, and writes its audit line.
void RecordDecision(Runtime& runtime, const improve::Canary& c,
                    const improve::ArmOutcomes& baseline, const improve::ArmOutcomes& proposal) {
  if (runtime.events != nullptr) {
    obs::Event e("canary.decided");
    e.AddString("proposal", c.proposal_id)
        .AddString("agent_dir", c.agent_dir)
        .AddString("state", improve::CanaryStateName(c.state))
        .AddString("verdict", c.verdict)
        .AddString("reason", c.reason)
        .AddInt("baseline_runs", baseline.runs)
        .AddInt("proposal_runs", proposal.runs);
    runtime.events->Publish(std::move(e));
    obs::Event h("heal.action");
    h.AddString("run", "")
        .AddInt("step", 0)
        .AddString("tool", "")
        .AddString("action", c.state == improve::CanaryState::kPromoted ? "canary_promote"
                                                                        : "canary_rollback")
        .AddString("reason", c.reason);
    runtime.events->Publish(std::move(h));
  }
  AppendAuditLine(runtime, c.proposal_id,
                  {{"at", c.decided_at},
                   {"event", "decided"},
                   {"state", improve::CanaryStateName(c.state)},
                   {"verdict", c.verdict},
                   {"reason", c.reason},
                   {"rule", RuleJson(c.rule)},
                   {"baseline", CountsJson(baseline)},
                   {"proposal", CountsJson(proposal)}});
}

enum class Direction { kPromote, kRollBack };

// What a decision does and says.
struct Choice {
  Direction direction = Direction::kRollBack;
  std::string verdict;
  std::string reason;
};

// Picks the decision from a running canary and its arms' counts; std::nullopt leaves it running.
using Chooser = std::function<Result<std::optional<Choice>>(const improve::Canary&,
                                                            const improve::ArmOutcomes& baseline,
                                                            const improve::ArmOutcomes& proposal)>;

// Decides a running canary in one store transaction, on the outcomes recorded when it runs:
// promotion writes the proposal's files as `improve apply` does, a rollback rejects the proposal.
// std::nullopt when `choose` left it running.
Result<std::optional<improve::Canary>> DecideWith(Runtime& runtime, std::string_view proposal_id,
                                                  const Chooser& choose) {
  MEND_ASSIGN_OR_RETURN(improve::CanaryStore * canaries, Canaries(runtime));
  MEND_ASSIGN_OR_RETURN(improve::AttemptStore * attempts, runtime.Attempts());
  improve::ArmOutcomes baseline;
  improve::ArmOutcomes proposal;
  bool declined = false;
  Result<improve::Canary> decided = canaries->Decide(
      proposal_id,
      [&](improve::Canary& c, const std::vector<improve::CanaryRunOutcome>& outcomes) -> Status {
        improve::SumOutcomes(outcomes, baseline, proposal);
        MEND_ASSIGN_OR_RETURN(std::optional<Choice> choice, choose(c, baseline, proposal));
        if (!choice.has_value()) {
          declined = true;
          return FailedPreconditionError("canary " + c.proposal_id + " is not settled");
        }
        if (choice->direction == Direction::kPromote) {
          MEND_RETURN_IF_ERROR(improve::ApplyProposal(*runtime.env.fs, *runtime.env.clock,
                                                      *attempts, runtime.home, c.proposal_id)
                                   .status());
          c.state = improve::CanaryState::kPromoted;
        } else {
          Result<improve::Proposal> rejected =
              improve::RejectProposal(*runtime.env.clock, *attempts, c.proposal_id,
                                      "canary rolled back: " + choice->reason);
          // A proposal someone rejected meanwhile is rolled back all the same.
          if (!rejected.ok() && rejected.status().code() != StatusCode::kFailedPrecondition) {
            return rejected.status();
          }
          c.state = improve::CanaryState::kRolledBack;
        }
        c.decided_at = FormatRfc3339(runtime.env.clock->Now());
        c.verdict = std::move(choice->verdict);
        c.reason = std::move(choice->reason);
        return OkStatus();
      });
  if (declined) return std::optional<improve::Canary>();
  MEND_RETURN_IF_ERROR(decided.status());
  RecordDecision(runtime, *decided, baseline, proposal);
  return std::optional<improve::Canary>(*std::move(decided));
}

// A person's decision: the rule's verdict when it agrees, `manual_verdict` when it does not.
Result<improve::Canary> DecideByHand(Runtime& runtime, std::string_view proposal_id,
                                     Direction direction) {
  MEND_ASSIGN_OR_RETURN(
      std::optional<improve::Canary> decided,
      DecideWith(
          runtime, proposal_id,
          [direction](const improve::Canary& c, const improve::ArmOutcomes& baseline,
                      const improve::ArmOutcomes& proposal) -> Result<std::optional<Choice>> {
            MEND_ASSIGN_OR_RETURN(improve::CanaryDecision rule,
                                  improve::DecideCanary(baseline, proposal, c.rule));
            const bool promote = direction == Direction::kPromote;
            const bool agrees = promote
                                    ? rule.verdict == improve::CanaryVerdict::kPromote
                                    : rule.verdict == improve::CanaryVerdict::kRollBack ||
                                          rule.verdict == improve::CanaryVerdict::kRollBackUnproven;
            const std::string done = promote ? "promoted by hand" : "rolled back by hand";
            Choice choice;
            choice.direction = direction;
            if (agrees) {
              choice.verdict = std::string(improve::CanaryVerdictName(rule.verdict));
              choice.reason = done + ", as the rule said: " + rule.reason;
            } else {
              choice.verdict = promote ? "promote_manual" : "roll_back_manual";
              choice.reason = done + "; the rule said " +
                              std::string(improve::CanaryVerdictName(rule.verdict)) + ": " +
                              rule.reason;
            }
            return std::optional<Choice>(std::move(choice));
          }));
  return *std::move(decided);  // a person's choice never leaves the canary running
}

}  // namespace

Result<improve::CanaryStore*> Canaries(Runtime& runtime) {
  internal::RuntimeParts& parts = internal::PartsOf(runtime);
  std::lock_guard<std::mutex> lock(parts.canaries_mu);
  if (parts.canaries != nullptr) return parts.canaries.get();
  const std::string& url = runtime.config.GetString("store.url");
  if (store::IsPostgresUrl(url)) {
    improve::PostgresCanaryStoreOptions options;
    options.url = url;
    options.connections = parts.postgres_connections;
    Result<std::unique_ptr<improve::CanaryStore>> opened =
        improve::OpenPostgresCanaryStore(options, *runtime.env.clock);
    if (!opened.ok()) return opened.status().Annotate("canaries");
    parts.canaries = *std::move(opened);
  } else {
    Result<std::unique_ptr<improve::CanaryStore>> opened =
        improve::OpenSqliteCanaryStore(home::DatabaseFile(runtime.home), *runtime.env.clock);
    if (!opened.ok()) return opened.status().Annotate("canaries");
    parts.canaries = *std::move(opened);
  }
  return parts.canaries.get();
}

improve::CanaryRule CanaryRuleFromConfig(const Runtime& runtime) {
  improve::CanaryRule rule;
  rule.min_runs = runtime.config.GetInt("improve.canary.min_runs");
  rule.max_runs = runtime.config.GetInt("improve.canary.max_runs");
  rule.confidence = runtime.config.GetDouble("improve.canary.confidence");
  rule.max_cost_increase = runtime.config.GetDouble("improve.canary.max_cost_increase");
  return rule;
}

Result<improve::Canary> StartCanary(Runtime& runtime, std::string_view proposal_id, double percent,
                                    bool auto_decide) {
  if (!(percent > 0 && percent <= 100)) {
    return InvalidArgumentError("the canary's share must be a percent in (0, 100], got " +
                                std::to_string(percent));
  }
  MEND_ASSIGN_OR_RETURN(improve::AttemptStore * attempts, runtime.Attempts());
  MEND_ASSIGN_OR_RETURN(improve::CanaryStore * canaries, Canaries(runtime));
  MEND_ASSIGN_OR_RETURN(improve::Proposal p, attempts->GetProposal(proposal_id));
  if (p.status != improve::ProposalStatus::kQueued) {
    return FailedPreconditionError("proposal " + p.attempt_id + " was already " +
                                   std::string(improve::ProposalStatusName(p.status)) +
                                   ": only a queued proposal can be canaried");
  }
  improve::Canary c;
  c.proposal_id = p.attempt_id;
  c.agent_dir = NormalizePath(p.agent_dir);
  c.percent = percent;
  c.auto_decide = auto_decide;
  c.rule = CanaryRuleFromConfig(runtime);
  MEND_RETURN_IF_ERROR(canaries->Start(c));
  MEND_ASSIGN_OR_RETURN(c, canaries->Get(p.attempt_id));
  // The proposal's files beside the audit record, for a person to read; runs take them from the
  // store, so a replica without this folder runs the same files.
  FileSystem& fs = *runtime.env.fs;
  const std::string dir = home::AttemptDir(runtime.home, p.attempt_id);
  if (fs.Exists(dir)) {
    for (const auto& [path, text] : p.files) {
      const std::string target = JoinPath(JoinPath(dir, "canary"), path);
      if (fs.CreateDirs(DirName(target)).ok()) WriteFileAtomically(fs, target, text).IgnoreError();
    }
  }
  AppendAuditLine(runtime, c.proposal_id,
                  {{"at", c.started_at},
                   {"event", "started"},
                   {"agent_dir", c.agent_dir},
                   {"percent", c.percent},
                   {"auto", c.auto_decide},
                   {"rule", RuleJson(c.rule)}});
  if (runtime.events != nullptr) {
    obs::Event e("canary.started");
    e.AddString("proposal", c.proposal_id)
        .AddString("agent_dir", c.agent_dir)
        .AddDouble("percent", c.percent)
        .AddBool("auto", c.auto_decide);
    runtime.events->Publish(std::move(e));
  }
  return c;
}

Result<CanaryReport> ReadCanary(Runtime& runtime, std::string_view proposal_id) {
  MEND_ASSIGN_OR_RETURN(improve::CanaryStore * canaries, Canaries(runtime));
  CanaryReport report;
  MEND_ASSIGN_OR_RETURN(report.canary, canaries->Get(proposal_id));
  MEND_ASSIGN_OR_RETURN(std::vector<improve::CanaryRunOutcome> outcomes,
                        canaries->Outcomes(proposal_id));
  improve::ArmOutcomes baseline;
  improve::ArmOutcomes proposal;
  improve::SumOutcomes(outcomes, baseline, proposal);
  report.baseline = ArmReport(std::string(improve::kBaselineArm), baseline);
  report.proposal = ArmReport(report.canary.proposal_id, proposal);
  MEND_ASSIGN_OR_RETURN(report.rule, improve::DecideCanary(baseline, proposal, report.canary.rule));
  return report;
}

json CanaryReportJson(const CanaryReport& r) {
  auto arm = [](const CanaryArmReport& a) {
    json j = CountsJson(a.outcomes);
    j["arm"] = a.arm;
    j["failure_rate"] = a.failure_rate;
    j["failure_interval"] = {a.failure_low, a.failure_high};
    j["cost_per_success"] = a.cost_per_success;
    return j;
  };
  const improve::Canary& c = r.canary;
  return {{"proposal", c.proposal_id},
          {"agent_dir", c.agent_dir},
          {"percent", c.percent},
          {"auto", c.auto_decide},
          {"state", improve::CanaryStateName(c.state)},
          {"started_at", c.started_at},
          {"decided_at", NullIfEmpty(c.decided_at)},
          {"verdict", NullIfEmpty(c.verdict)},
          {"reason", NullIfEmpty(c.reason)},
          {"rule", RuleJson(c.rule)},
          {"arms", json::array({arm(r.baseline), arm(r.proposal)})},
          {"recommendation",
           {{"verdict", improve::CanaryVerdictName(r.rule.verdict)},
            {"probability_worse", r.rule.probability_worse},
            {"reason", r.rule.reason}}}};
}

std::string CanaryReportText(const CanaryReport& r) {
  const improve::Canary& c = r.canary;
  std::ostringstream out;
  char buf[256];
  out << "canary of proposal " << c.proposal_id << " on " << c.agent_dir << "\n";
  std::snprintf(buf, sizeof(buf), "%g%% of new runs take the proposal; %s\n", c.percent,
                c.auto_decide ? "decides on its own (--auto)" : "waits for promote or rollback");
  out << buf;
  out << "state: " << improve::CanaryStateName(c.state);
  if (c.state != improve::CanaryState::kRunning) {
    out << " at " << c.decided_at << " (" << c.verdict << "): " << c.reason;
  }
  out << "\n";
  out << "arm         runs  success  failure rate (95% interval)  no-progress  quarantined  "
         "checks failed  cost/success\n";
  for (const CanaryArmReport* a : {&r.baseline, &r.proposal}) {
    const improve::ArmOutcomes& o = a->outcomes;
    std::snprintf(buf, sizeof(buf),
                  "%-10s %5lld  %7lld  %5.1f%% (%4.1f%%-%5.1f%%)  %17lld  %11lld  %13lld  $%.4f\n",
                  a == &r.baseline ? "baseline" : "proposal", static_cast<long long>(o.runs),
                  static_cast<long long>(o.successes), 100 * a->failure_rate, 100 * a->failure_low,
                  100 * a->failure_high, static_cast<long long>(o.no_progress),
                  static_cast<long long>(o.quarantined), static_cast<long long>(o.checks_failed),
                  a->cost_per_success);
    out << buf;
  }
  std::snprintf(buf, sizeof(buf), "P(the proposal fails more often) = %.4f\n",
                r.rule.probability_worse);
  out << buf;
  out << "rule says: " << improve::CanaryVerdictName(r.rule.verdict) << ": " << r.rule.reason
      << "\n";
  if (c.state == improve::CanaryState::kRunning && !c.auto_decide &&
      r.rule.verdict != improve::CanaryVerdict::kContinue) {
    out << "next: mend improve "
        << (r.rule.verdict == improve::CanaryVerdict::kPromote ? "promote " : "rollback ")
        << c.proposal_id << "\n";
  }
  return out.str();
}

Result<improve::Canary> PromoteCanary(Runtime& runtime, std::string_view proposal_id) {
  return DecideByHand(runtime, proposal_id, Direction::kPromote);
}

Result<improve::Canary> RollbackCanary(Runtime& runtime, std::string_view proposal_id) {
  return DecideByHand(runtime, proposal_id, Direction::kRollBack);
}

Result<std::optional<improve::Canary>> SettleCanary(Runtime& runtime,
                                                    std::string_view proposal_id) {
  MEND_ASSIGN_OR_RETURN(improve::CanaryStore * canaries, Canaries(runtime));
  MEND_ASSIGN_OR_RETURN(improve::Canary canary, canaries->Get(proposal_id));
  if (!canary.auto_decide || canary.state != improve::CanaryState::kRunning) {
    return std::optional<improve::Canary>();
  }
  Result<std::optional<improve::Canary>> decided = DecideWith(
      runtime, proposal_id,
      [](const improve::Canary& c, const improve::ArmOutcomes& baseline,
         const improve::ArmOutcomes& proposal) -> Result<std::optional<Choice>> {
        MEND_ASSIGN_OR_RETURN(improve::CanaryDecision rule,
                              improve::DecideCanary(baseline, proposal, c.rule));
        if (rule.verdict == improve::CanaryVerdict::kContinue) return std::optional<Choice>();
        Choice choice;
        choice.direction = rule.verdict == improve::CanaryVerdict::kPromote ? Direction::kPromote
                                                                            : Direction::kRollBack;
        choice.verdict = std::string(improve::CanaryVerdictName(rule.verdict));
        choice.reason = std::move(rule.reason);
        return std::optional<Choice>(std::move(choice));
      });
  // Another process decided it first: nothing is left to do here.
  if (!decided.ok() && decided.status().code() == StatusCode::kFailedPrecondition) {
    Result<improve::Canary> now = canaries->Get(proposal_id);
    if (now.ok() && now->state != improve::CanaryState::kRunning) {
      return std::optional<improve::Canary>();
    }
  }
  return decided;
}

Status RecordCanaryRun(Runtime& runtime, const improve::CanaryRunOutcome& outcome) {
  MEND_ASSIGN_OR_RETURN(improve::CanaryStore * canaries, Canaries(runtime));
  Status recorded = canaries->RecordOutcome(outcome);
  if (recorded.code() == StatusCode::kFailedPrecondition) return OkStatus();  // decided already
  MEND_RETURN_IF_ERROR(recorded);
  if (runtime.events != nullptr) {
    obs::Event e("canary.run");
    e.AddString("proposal", outcome.proposal_id)
        .AddString("run", outcome.run_id)
        .AddString("arm", outcome.arm)
        .AddString("status", store::RunStatusName(outcome.run.status))
        .AddBool("checks_passed", outcome.run.checks_passed);
    runtime.events->Publish(std::move(e));
  }
  return SettleCanary(runtime, outcome.proposal_id).status();
}

Status RecordQuarantinedCanaryRun(Runtime& runtime, const std::string& run_id) {
  MEND_ASSIGN_OR_RETURN(store::RunRecord run, runtime.store->GetRun(run_id));
  MEND_ASSIGN_OR_RETURN(agent::RunOrigin origin, agent::ParseRunOrigin(run.metadata, run_id));
  if (origin.canary.empty() || origin.arm.empty()) return OkStatus();
  MEND_ASSIGN_OR_RETURN(improve::CanaryStore * canaries, Canaries(runtime));
  MEND_ASSIGN_OR_RETURN(std::vector<improve::CanaryRunOutcome> recorded,
                        canaries->Outcomes(origin.canary));
  improve::CanaryRunOutcome outcome;
  for (const improve::CanaryRunOutcome& o : recorded) {
    if (o.run_id == run_id) outcome = o;
  }
  outcome.proposal_id = origin.canary;
  outcome.run_id = run_id;
  outcome.arm = origin.arm;
  outcome.run.status = store::RunStatus::kQuarantined;
  if (run.last_error.has_value()) outcome.run.error_code = run.last_error->code;
  return RecordCanaryRun(runtime, outcome);
}

Status RefuseWhileCanary(Runtime& runtime, const std::string& agent_dir,
                         std::string_view proposal_id) {
  MEND_ASSIGN_OR_RETURN(improve::CanaryStore * canaries, Canaries(runtime));
  MEND_ASSIGN_OR_RETURN(std::optional<improve::Canary> running,
                        canaries->Running(NormalizePath(agent_dir)));
  if (!running.has_value()) return OkStatus();
  if (running->proposal_id == proposal_id) {
    return FailedPreconditionError("proposal " + running->proposal_id +
                                   " is being canaried: promote it with `mend improve promote " +
                                   running->proposal_id +
                                   "` or roll it back with `mend improve "
                                   "rollback " +
                                   running->proposal_id + "`");
  }
  return FailedPreconditionError(
      "agent folder " + running->agent_dir + " has a running canary of proposal " +
      running->proposal_id + "; promote or roll it back first (`mend improve promote|rollback " +
      running->proposal_id + "`)");
}

}  // namespace mend::app
