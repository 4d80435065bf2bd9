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

RecoveryImpl::RecoveryImpl(RecoveryOptions options)
    : options_(std::move(options)),
      breaker_(options_.outage_threshold, options_.interval, options_.max_backoff) {}

RecoveryImpl::~RecoveryImpl() { Stop(); }

Result<TickReport> RecoveryImpl::Tick() {
  std::lock_guard<std::mutex> pass(pass_mu_);
  Time now = options_.clock->Now();
  TickReport report;
  attempted_.clear();
  Status s = Pass(now, report);
  attempted_.clear();
  MEND_RETURN_IF_ERROR(s);
  report.outage = breaker_.open();
  return report;
}

Status RecoveryImpl::Pass(Time now, TickReport& report) {
  PassCounts counts;
  // During an outage a pass only probes; a probe that shows the provider is back turns the rest
  // of the pass into a normal one, so runs that are due do not wait another interval.
  if (breaker_.open()) {
    if (!breaker_.ProbeDue(now)) return OkStatus();
    MEND_ASSIGN_OR_RETURN(bool ended, ProbePass(now, report, counts));
    if (!ended) return OkStatus();
  }
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

void RecoveryImpl::NotifyOutage(bool in_outage) {
  obs::Event event("recovery.outage");
  event.AddBool("in_outage", in_outage);
  if (std::optional<Time> probe = breaker_.next_probe_at(); probe.has_value()) {
    event.AddInt("next_probe_in_ms", std::chrono::duration_cast<std::chrono::milliseconds>(
                                         *probe - options_.clock->Now())
                                         .count());
  }
  Publish(std::move(event));
  if (options_.on_outage) Guarded("on_outage", [&] { options_.on_outage(in_outage); });
}

}  // namespace mend::heal
