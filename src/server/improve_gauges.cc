// The improve gauges of /metrics (improve_gauges.h).
#include "server/improve_gauges.h"

#include <map>
#include <string>
#include <utility>
#include <vector>

#include "mend/app/canary.h"
#include "mend/app/runtime.h"
#include "mend/base/file_system.h"
#include "mend/improve/canary_store.h"
#include "mend/improve/proposal.h"

namespace mend::server {

ImproveGauges::ImproveGauges(app::Runtime& runtime, Duration refresh)
    : runtime_(runtime),
      refresh_(refresh),
      attempts_(runtime.metrics->gauge_family(
          "mend_improve_attempts_recorded",
          "Improve attempts recorded under the home's improve folder, by outcome.", {"outcome"})),
      proposals_(runtime.metrics->gauge_family(
          "mend_improve_proposals", "Improve proposals recorded, by status.", {"status"})),
      canary_runs_(runtime.metrics->gauge_family(
          "mend_canary_runs",
          "Finished runs of each running canary, by agent, arm (baseline or proposal) and outcome "
          "(success, checks_failed, failed, no_progress, quarantined).",
          {"agent", "arm", "outcome"})),
      canaries_(runtime.metrics->gauge_family(
          "mend_canaries", "Canaries recorded, by state (running, promoted, rolled_back).",
          {"state"})),
      errors_(runtime.metrics->counter("mend_improve_collect_errors_total",
                                       "Scrapes that could not list the improve attempts (the "
                                       "improve gauges keep their previous values).")),
      collector_(runtime.metrics->AddCollector([this] { Collect(); })) {}

ImproveGauges::~ImproveGauges() { runtime_.metrics->RemoveCollector(collector_).IgnoreError(); }

void ImproveGauges::Collect() {
  std::lock_guard<std::mutex> lock(mu_);
  const Time now = runtime_.env.clock->Now();
  if (counted_ && now - last_ < refresh_) return;
  last_ = now;
  counted_ = true;
  Result<improve::AttemptStore*> store = runtime_.Attempts();
  Result<std::vector<improve::AttemptSummary>> attempts =
      store.ok() ? (*store)->List() : Result<std::vector<improve::AttemptSummary>>(store.status());
  if (!attempts.ok()) {
    errors_.Inc();
    return;
  }
  // Every status and the usual outcomes are always exported, so a query sees zeros, not gaps.
  std::map<std::string, double> by_outcome = {
      {"proposal", 0}, {"no_improvement", 0}, {"rejected", 0}, {"failed", 0}, {"unfinished", 0}};
  std::map<std::string, double> by_status = {{"queued", 0}, {"applied", 0}, {"rejected", 0}};
  for (const improve::AttemptSummary& a : *attempts) {
    // Outcomes come from files on disk: only names of letters and underscores become labels.
    bool plain = !a.outcome.empty() && a.outcome.size() <= 32;
    for (char c : a.outcome) plain = plain && ((c >= 'a' && c <= 'z') || c == '_');
    by_outcome[plain ? a.outcome : "other"] += 1;
    if (a.proposal.has_value()) {
      by_status[std::string(improve::ProposalStatusName(*a.proposal))] += 1;
    }
  }
  for (const auto& [outcome, n] : by_outcome) attempts_.WithLabels({outcome}).Set(n);
  for (const auto& [status, n] : by_status) proposals_.WithLabels({status}).Set(n);
  if (!CollectCanaries()) errors_.Inc();
}

bool ImproveGauges::CollectCanaries() {
  Result<improve::CanaryStore*> store = app::Canaries(runtime_);
  if (!store.ok()) return false;
  Result<std::vector<improve::Canary>> canaries = (*store)->List();
  if (!canaries.ok()) return false;
  std::map<std::string, double> by_state = {{"running", 0}, {"promoted", 0}, {"rolled_back", 0}};
  std::map<std::vector<std::string>, double> runs;
  // A canary that ended drops to zero rather than keeping its last counts.
  for (const std::vector<std::string>& labels : canary_runs_seen_) runs[labels] = 0;
  for (const improve::Canary& c : *canaries) {
    by_state[std::string(improve::CanaryStateName(c.state))] += 1;
    if (c.state != improve::CanaryState::kRunning) continue;
    Result<std::vector<improve::CanaryRunOutcome>> outcomes = (*store)->Outcomes(c.proposal_id);
    if (!outcomes.ok()) return false;
    improve::ArmOutcomes baseline;
    improve::ArmOutcomes proposal;
    improve::SumOutcomes(*outcomes, baseline, proposal);
    const std::string agent = BaseName(c.agent_dir);
    for (const auto& [arm, o] : {std::pair<std::string, improve::ArmOutcomes>{"baseline", baseline},
                                 {"proposal", proposal}}) {
      runs[{agent, arm, "success"}] += static_cast<double>(o.successes);
      runs[{agent, arm, "checks_failed"}] += static_cast<double>(o.checks_failed);
      runs[{agent, arm, "failed"}] += static_cast<double>(o.failed);
      runs[{agent, arm, "no_progress"}] += static_cast<double>(o.no_progress);
      runs[{agent, arm, "quarantined"}] += static_cast<double>(o.quarantined);
    }
  }
  for (const auto& [state, n] : by_state) canaries_.WithLabels({state}).Set(n);
  for (const auto& [labels, n] : runs) {
    canary_runs_.WithLabels(labels).Set(n);
    canary_runs_seen_.insert(labels);
  }
  return true;
}

}  // namespace mend::server
