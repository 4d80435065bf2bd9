// The background work of `mend serve` and `mend recover`, and the signals that stop them.
#include "mend/app/daemon.h"

#include <pthread.h>

#include <string>
#include <utility>

#include "mend/app/lessons.h"
#include "mend/app/runtime.h"

namespace mend::app {
namespace {

void LogRecoveryTo(heal::RecoveryOptions& options, std::ostream& log) {
  options.on_recovered = [&log](const std::string& id) { log << "recovered " << id << "\n"; };
  options.on_quarantined = [&log, counted = options.on_quarantined](const std::string& id) {
    if (counted) counted(id);
    log << "quarantined " << id << "\n";
  };
  options.on_outage = [&log](const heal::OutageChange& change) {
    const std::string where = heal::DescribeEndpoint(change.endpoint);
    if (change.in_outage) {
      log << "provider outage at " << where << ": its runs wait; probing one at a time\n";
    } else {
      log << "provider back at " << where << ": its runs resume\n";
    }
  };
  options.on_error = [&log](const Status& error) {
    log << "recover: " << error.ToString() << "\n";
  };
}

}  // namespace

ProcessStopSignal::ProcessStopSignal() {
  sigemptyset(&signals_);
  sigaddset(&signals_, SIGINT);
  sigaddset(&signals_, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &signals_, nullptr);
}

void ProcessStopSignal::Wait() {
  int received = 0;
  sigwait(&signals_, &received);
}

void ManualStopSignal::Raise() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    raised_ = true;
  }
  raised_cv_.notify_all();
}

void ManualStopSignal::Wait() {
  std::unique_lock<std::mutex> lock(mu_);
  raised_cv_.wait(lock, [this] { return raised_; });
}

Daemon::Daemon(Runtime& runtime, DaemonOptions options)
    : runtime_(runtime),
      options_(options),
      driver_(runtime, &stopping_),
      recovery_options_(RecoveryOptionsFor(runtime)) {}

Result<std::unique_ptr<Daemon>> Daemon::Create(Runtime& runtime, DaemonOptions options) {
  std::unique_ptr<Daemon> daemon(new Daemon(runtime, options));
  daemon->recovery_options_.driver = &daemon->driver_;
  if (options.log != nullptr) LogRecoveryTo(daemon->recovery_options_, *options.log);
  MEND_ASSIGN_OR_RETURN(daemon->recovery_, heal::Recovery::Create(daemon->recovery_options_));
  return daemon;
}

Daemon::~Daemon() { Stop(); }

Result<heal::TickReport> Daemon::Tick() { return recovery_->Tick(); }

void Daemon::Start() {
  started_ = true;
  StartBackgroundWork(runtime_);
  if (options_.recovery) recovery_->Start();
  const auto keep = runtime_.config.GetDuration("observe.retention");
  if (keep.count() <= 0) return;  // 0s: never
  std::ostream* log = options_.log;
  retention_ = std::make_unique<RetentionLoop>(
      runtime_, keep, kRetentionInterval, [log](const Result<RetentionReport>& r) {
        if (!r.ok() && log != nullptr) *log << "prune: " << r.status().ToString() << "\n";
      });
  retention_->Start();
}

void Daemon::RequestStop() { stopping_.store(true); }

void Daemon::Stop() {
  if (!started_ || stopped_) return;
  stopped_ = true;
  if (retention_ != nullptr) retention_->Stop();
  if (options_.recovery) recovery_->Stop();
  if (options_.lesson_drain == LessonDrain::kNone) return;
  Status lessons =
      StopLessonWorkers(runtime_, runtime_.config.GetDuration("reflexion.queue.drain_timeout"));
  if (!lessons.ok() && options_.log != nullptr) {
    *options_.log << "lessons: " << lessons.ToString() << "\n";
  }
}

}  // namespace mend::app
