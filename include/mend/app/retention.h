#pragma once

// Retention (`mend prune`, observe.retention; docs/observe.md, "Retention"): PruneOlderThan prunes
// once; RetentionLoop prunes every hour in long-lived processes.

#include <condition_variable>
#include <cstdint>
#include <functional>
#include <mutex>
#include <thread>

#include "mend/app/runtime.h"
#include "mend/base/clock.h"
#include "mend/base/result.h"
#include "mend/store/prune.h"

namespace mend::app {

/// What PruneOlderThan removes.
struct RetentionOptions {
  /// Everything older than this goes: must be positive.
  Duration older_than;
  /// kHistory keeps each finished run and its final checkpoint; kWholeRuns deletes the runs.
  store::PruneScope scope = store::PruneScope::kHistory;
  store::PruneMode mode = store::PruneMode::kApply;  ///< kDryRun: count only
};

/// What PruneOlderThan removed (with kDryRun: would remove).
struct RetentionReport {
  Time cutoff;                  ///< now minus older_than
  store::PruneReport store;     ///< runs and checkpoints (CheckpointStore::Prune)
  int64_t event_logs = 0;       ///< rotated event logs removed
  int64_t event_log_bytes = 0;  ///< their size
  int64_t spans = 0;            ///< spans removed (0 without a span store)

  /// The stored bytes of what went: checkpoint states, message bodies and rotated logs.
  int64_t bytes_reclaimed() const { return store.bytes + event_log_bytes; }
};

/// Removes, as of runtime.env.clock's now minus options.older_than: the history (or, with
/// kWholeRuns, the whole) of finished runs last updated before that (CheckpointStore::Prune: never
/// running, waiting, quarantined or leased runs), the rotated event logs of the home directory
/// whose name says they were rotated before it (never the live events.jsonl, nor files of other
/// names), and, when runtime.prune_spans is set, the spans that ended before it. kDryRun counts the
/// same and changes nothing. Errors: kInvalidArgument for older_than <= 0; the store's, the file
/// system's and the span store's errors as they come (what was pruned before stays pruned).
Result<RetentionReport> PruneOlderThan(Runtime& runtime, const RetentionOptions& options);

/// Runs PruneOlderThan(kHistory, kApply) for `retention` at Start() and then every `interval` on
/// a thread of its own, timed by runtime.env.clock (a ManualClock drives it in tests). For
/// long-lived processes: `mend recover` without --once, and `mend serve`. `on_pass` (optional) is
/// called on that thread with every pass's result; a failed pass is reported there and the loop
/// goes on. The Runtime must outlive the loop. Start and Stop are for one owner thread.
class RetentionLoop {
 public:
  /// Called with every pass's result, on the loop's thread.
  using OnPass = std::function<void(const Result<RetentionReport>&)>;

  /// Prunes what is older than `retention` every `interval` once started. `runtime` is borrowed.
  RetentionLoop(Runtime& runtime, Duration retention, Duration interval, OnPass on_pass);
  ~RetentionLoop();  ///< Stop()
  RetentionLoop(const RetentionLoop&) = delete;
  RetentionLoop& operator=(const RetentionLoop&) = delete;

  /// Runs the first pass now and starts the thread.
  void Start();
  /// Waits for a pass in progress to end; idempotent.
  void Stop();

 private:
  void Loop();

  Runtime& runtime_;
  const Duration retention_;
  const Duration interval_;
  const OnPass on_pass_;
  std::mutex mu_;
  std::condition_variable wake_;
  bool stop_ = false;  // guarded by mu_
  std::thread thread_;
};

/// How often long-lived processes prune when observe.retention is set.
inline constexpr Duration kRetentionInterval = std::chrono::hours(1);

}  // namespace mend::app
