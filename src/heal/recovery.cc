#include "mend/heal/recovery.h"

#include <exception>
#include <utility>

#include "heal/recovery_impl.h"

namespace mend::heal {

Result<std::unique_ptr<Recovery>> Recovery::Create(RecoveryOptions options) {
  if (options.store == nullptr) return InvalidArgumentError("recovery needs a checkpoint store");
  if (options.driver == nullptr) return InvalidArgumentError("recovery needs a run driver");
  if (options.clock == nullptr) return InvalidArgumentError("recovery needs a clock");
  if (options.interval <= Duration::zero()) {
    return InvalidArgumentError("recovery interval must be positive");
  }
  if (options.max_attempts < 1) return InvalidArgumentError("max_attempts must be at least 1");
  if (options.max_runs_per_pass < 1) {
    return InvalidArgumentError("max_runs_per_pass must be at least 1");
  }
  return std::unique_ptr<Recovery>(new RecoveryImpl(std::move(options)));
}

RecoveryImpl::RecoveryImpl(RecoveryOptions options) : options_(std::move(options)) {}

RecoveryImpl::~RecoveryImpl() { Stop(); }

Result<TickReport> RecoveryImpl::Tick() {
  std::lock_guard<std::mutex> pass(pass_mu_);
  Time now = options_.clock->Now();
  TickReport report;
  attempted_.clear();
  Status s = Pass(now, report);
  attempted_.clear();
  ReportOutages(report);
  MEND_RETURN_IF_ERROR(s);
  return report;
}

Status RecoveryImpl::Pass(Time now, TickReport& report) {
  PassCounts counts;
  // The probes come first: an endpoint whose probe shows it is back has its other runs resumed in
  // the normal pass that follows, so they do not wait another interval. The normal pass leaves
  // the runs of the endpoints still in an outage alone and handles every other run.
  std::set<ProviderEndpoint> due = ProbesDue(now);
  if (!due.empty()) MEND_RETURN_IF_ERROR(ProbePass(now, std::move(due), report, counts));
  return NormalPass(now, report, counts);
}

store::RecoveryQuery RecoveryImpl::Query(Time now, store::RecoveryBackoff backoff) const {
  store::RecoveryQuery query;
  query.now = now;
  query.max_attempts = options_.max_attempts;
  query.backoff = backoff;
  query.counting = store::RecoveryCounting::kInclude;
  return query;
}

void RecoveryImpl::Start() {
  std::lock_guard<std::mutex> lock(loop_mu_);
  if (thread_.joinable()) return;
  stopping_ = false;
  thread_ = std::thread([this] { Loop(); });
}

void RecoveryImpl::Stop() {
  std::thread thread;
  {
    std::lock_guard<std::mutex> lock(loop_mu_);
    stopping_ = true;
    thread = std::move(thread_);
  }
  loop_cv_.notify_all();
  if (thread.joinable()) thread.join();
}

void RecoveryImpl::Loop() {
  std::unique_lock<std::mutex> lock(loop_mu_);
  while (!stopping_) {
    lock.unlock();
    Result<TickReport> report = Tick();
    if (!report.ok()) ReportError(report.status(), "");
    lock.lock();
    // The deadline is taken after the pass, so a slow pass never makes the next one start at once.
    Time deadline = options_.clock->Now() + options_.interval;
    options_.clock->WaitUntil(loop_cv_, lock, deadline, [this] { return stopping_; });
  }
}

void RecoveryImpl::Publish(obs::Event event) {
  if (options_.events != nullptr) options_.events->Publish(std::move(event));
}

void RecoveryImpl::ReportError(const Status& error, const std::string& run_id) {
  obs::Event event("recovery.error");
  if (!run_id.empty()) event.AddString("run", run_id);
  event.AddString("code", StatusCodeName(error.code())).AddString("message", error.message());
  Publish(std::move(event));
  SafeOnError(error);
}

// on_error is the channel for every other failure, so its own failure can only become an event.
void RecoveryImpl::SafeOnError(const Status& error) {
  if (!options_.on_error) return;
  std::string what;
  try {
    options_.on_error(error);
    return;
  } catch (const std::exception& e) {
    what = e.what();
  } catch (...) {
    what = "an unknown exception";
  }
  obs::Event event("recovery.error");
  event.AddString("code", StatusCodeName(StatusCode::kInternal))
      .AddString("message", "recovery callback on_error threw: " + what);
  Publish(std::move(event));
}

template <typename F>
void RecoveryImpl::Guarded(std::string_view name, F&& f) {
  std::string what;
  try {
    f();
    return;
  } catch (const std::exception& e) {
    what = e.what();
  } catch (...) {
    what = "an unknown exception";
  }
  ReportError(InternalError("recovery callback " + std::string(name) + " threw: " + what), "");
}

void RecoveryImpl::NotifyRecovered(const std::string& run_id) {
  if (options_.on_recovered) Guarded("on_recovered", [&] { options_.on_recovered(run_id); });
}

void RecoveryImpl::NotifyQuarantined(const std::string& run_id) {
  if (options_.on_quarantined) Guarded("on_quarantined", [&] { options_.on_quarantined(run_id); });
}

void RecoveryImpl::NotifyOutage(const ProviderEndpoint& endpoint, bool in_outage) {
  OutageChange change;
  change.endpoint = endpoint;
  change.in_outage = in_outage;
  for (const auto& [e, breaker] : breakers_) change.endpoints_in_outage += breaker.open() ? 1 : 0;
  obs::Event event("recovery.outage");
  event.AddBool("in_outage", in_outage)
      .AddString("provider", endpoint.provider)
      .AddString("base_url", endpoint.base_url)
      .AddInt("endpoints_in_outage", static_cast<int64_t>(change.endpoints_in_outage));
  auto it = breakers_.find(endpoint);
  if (it != breakers_.end()) change.next_probe_at = it->second.next_probe_at();
  if (change.next_probe_at.has_value()) {
    event.AddInt("next_probe_in_ms", std::chrono::duration_cast<std::chrono::milliseconds>(
                                         *change.next_probe_at - options_.clock->Now())
                                         .count());
  }
  Publish(std::move(event));
  if (options_.on_outage) Guarded("on_outage", [&] { options_.on_outage(change); });
}

}  // namespace mend::heal
