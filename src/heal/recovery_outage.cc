// Provider outages, one breaker per endpoint (docs/heal.md, "Provider outages"): an endpoint
// that keeps failing pauses its own runs and is probed with one of them at growing intervals,
// while the runs of every other endpoint are resumed as usual.

#include <algorithm>
#include <exception>
#include <set>
#include <string>

#include "heal/recovery_impl.h"

namespace mend::heal {

// The default reads the run's record; it is here because the breakers are what it is for.
ProviderEndpoint RunDriver::EndpointFor(const store::RunRecord& run) {
  Result<agent::RunOrigin> origin = agent::ParseRunOrigin(run.metadata, run.id);
  return origin.ok() ? heal::EndpointOf(origin->model) : ProviderEndpoint{};
}

// The driver is implemented outside this module; a throw from it must not end the loop. A run
// whose endpoint cannot be told shares the breaker of the runs that recorded none.
ProviderEndpoint RecoveryImpl::EndpointOf(const store::RunRecord& run) {
  std::string what;
  try {
    return options_.driver->EndpointFor(run);
  } catch (const std::exception& e) {
    what = e.what();
  } catch (...) {
    what = "an unknown exception";
  }
  ReportError(InternalError("the run driver threw: " + what), run.id);
  return ProviderEndpoint{};
}

bool RecoveryImpl::InOutage(const ProviderEndpoint& endpoint) const {
  auto it = breakers_.find(endpoint);
  return it != breakers_.end() && it->second.open();
}

std::set<ProviderEndpoint> RecoveryImpl::ProbesDue(Time now) const {
  std::set<ProviderEndpoint> due;
  for (const auto& [endpoint, breaker] : breakers_) {
    if (breaker.ProbeDue(now)) due.insert(endpoint);
  }
  return due;
}

Status RecoveryImpl::ProbePass(Time now, std::set<ProviderEndpoint> due, TickReport& report,
                               PassCounts& counts) {
  // Any run that would be resumed may probe, also one still in backoff: its backoff most likely
  // comes from the outage itself.
  CandidateWalk walk(*options_.store, Query(now, store::RecoveryBackoff::kInclude), std::nullopt,
                     options_.max_runs_per_pass);
  MEND_RETURN_IF_ERROR(walk.Run([&](const store::RunRecord& run) {
                             return ProbeWith(run, now, due, report, counts);
                           })
                           .status());
  // The counts of the state the pass began with, before any probe changed it.
  counts.counts = walk.counts();
  return OkStatus();
}

CandidateWalk::Step RecoveryImpl::ProbeWith(const store::RunRecord& run, Time now,
                                            std::set<ProviderEndpoint>& due, TickReport& report,
                                            PassCounts& counts) {
  store::RecoveryClass c = Classify(run, now);
  if (c != store::RecoveryClass::kDue && c != store::RecoveryClass::kBackoff) {
    return CandidateWalk::Step::kNext;
  }
  const ProviderEndpoint endpoint = EndpointOf(run);
  if (due.count(endpoint) == 0) return CandidateWalk::Step::kNext;
  if (c == store::RecoveryClass::kBackoff) ++counts.probed_in_backoff;
  Outcome outcome = ResumeOne(run, endpoint, report);
  if (outcome == Outcome::kLeased || outcome == Outcome::kError || outcome == Outcome::kStopped) {
    return CandidateWalk::Step::kNext;  // not a probe: the endpoint's next run tries
  }
  due.erase(endpoint);
  return due.empty() ? CandidateWalk::Step::kStop : CandidateWalk::Step::kNext;
}

bool RecoveryImpl::RecordProviderFailure(const store::RunRecord& run,
                                         const ProviderEndpoint& endpoint,
                                         const store::RunError& error, TickReport& report) {
  auto [it, added] = breakers_.try_emplace(endpoint, options_.outage_threshold, options_.interval,
                                           options_.max_backoff);
  OutageBreaker& breaker = it->second;
  const bool was_open = breaker.open();
  const OutageBreaker::Change change = breaker.OnProviderFailure(options_.clock->Now());
  if (!was_open && change != OutageBreaker::Change::kOpened) return false;
  // Provider failures during an outage (and the one that reveals it) are the endpoint's, not the
  // run's: no attempt is charged and nobody is quarantined for them.
  report.failed.push_back(run.id);
  obs::Event event("recovery.failed");
  event.AddString("run", run.id)
      .AddString("code", error.code)
      .AddBool("outage", true)
      .AddString("provider", endpoint.provider)
      .AddString("base_url", endpoint.base_url);
  Publish(std::move(event));
  if (change == OutageBreaker::Change::kOpened) NotifyOutage(endpoint, true);
  return true;
}

void RecoveryImpl::RecordOtherResult(const ProviderEndpoint& endpoint) {
  auto it = breakers_.find(endpoint);
  if (it == breakers_.end()) return;  // nothing failed there: nothing to reset
  if (it->second.OnOtherResult() == OutageBreaker::Change::kClosed) NotifyOutage(endpoint, false);
}

void RecoveryImpl::ReportOutages(TickReport& report) {
  std::erase_if(breakers_, [](const auto& entry) {
    return !entry.second.open() && entry.second.consecutive_failures() == 0;
  });
  for (const auto& [endpoint, breaker] : breakers_) {
    if (!breaker.open()) continue;
    report.outages.push_back({endpoint, breaker.opened_at(), *breaker.next_probe_at()});
  }
  report.outage = !report.outages.empty();
}

}  // namespace mend::heal
