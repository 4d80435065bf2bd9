// The improve gauges of /metrics (improve_gauges.h).
#include "server/improve_gauges.h"

#include <map>
#include <string>

#include "mend/app/runtime.h"
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
}

}  // namespace mend::server
