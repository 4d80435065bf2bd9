// Retention: one call prunes the store, the rotated event logs and the spans, and a small loop
// repeats it for long-lived processes.
#include "mend/app/retention.h"

#include <string>
#include <utility>
#include <vector>

#include "app/event_log.h"

namespace mend::app {
namespace {

// Removes (or, in a dry run, counts) the rotated event logs of `home` rotated before `cutoff`.
// The live log has no time in its name, so it is never a candidate.
Status PruneEventLogs(FileSystem& fs, const std::string& home, Time cutoff, store::PruneMode mode,
                      RetentionReport& report) {
  MEND_ASSIGN_OR_RETURN(std::vector<std::string> names, fs.List(home));
  for (const std::string& name : names) {
    std::optional<Time> rotated = internal::RotatedEventLogTime(name);
    if (!rotated.has_value() || *rotated >= cutoff) continue;
    const std::string path = JoinPath(home, name);
    MEND_ASSIGN_OR_RETURN(FileInfo info, fs.Stat(path));
    if (info.is_directory) continue;
    if (mode == store::PruneMode::kApply) MEND_RETURN_IF_ERROR(fs.Unlink(path));
    report.event_logs += 1;
    report.event_log_bytes += static_cast<int64_t>(info.size);
  }
  if (report.event_logs > 0 && mode == store::PruneMode::kApply) {
    MEND_RETURN_IF_ERROR(fs.SyncDir(home));
  }
  return OkStatus();
}

}  // namespace

Result<RetentionReport> PruneOlderThan(Runtime& runtime, const RetentionOptions& options) {
  if (options.older_than <= Duration::zero()) {
    return InvalidArgumentError("the retention limit must be positive");
  }
  RetentionReport report;
  report.cutoff = runtime.env.clock->Now() - options.older_than;
  MEND_ASSIGN_OR_RETURN(report.store,
                        runtime.store->Prune({report.cutoff, options.scope, options.mode}));
  MEND_RETURN_IF_ERROR(
      PruneEventLogs(*runtime.env.fs, runtime.home, report.cutoff, options.mode, report));
  if (runtime.prune_spans) {
    MEND_ASSIGN_OR_RETURN(report.spans, runtime.prune_spans(report.cutoff, options.mode));
  }
  return report;
}

RetentionLoop::RetentionLoop(Runtime& runtime, Duration retention, Duration interval,
                             OnPass on_pass)
    : runtime_(runtime), retention_(retention), interval_(interval), on_pass_(std::move(on_pass)) {}

RetentionLoop::~RetentionLoop() { Stop(); }

void RetentionLoop::Start() {
  std::lock_guard<std::mutex> lock(mu_);
  if (thread_.joinable() || stop_) return;
  thread_ = std::thread([this] { Loop(); });
}

void RetentionLoop::Stop() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stop_ = true;
  }
  wake_.notify_all();
  if (thread_.joinable()) thread_.join();
}

void RetentionLoop::Loop() {
  Clock& clock = *runtime_.env.clock;
  std::unique_lock<std::mutex> lock(mu_);
  while (!stop_) {
    lock.unlock();
    Result<RetentionReport> pass = PruneOlderThan(runtime_, {retention_});
    if (on_pass_) on_pass_(pass);
    lock.lock();
    // The next pass is an interval after this one ended, so a slow pass never runs back to back.
    const Time next = clock.Now() + interval_;
    clock.WaitUntil(wake_, lock, next, [this] { return stop_; });
  }
}

}  // namespace mend::app
