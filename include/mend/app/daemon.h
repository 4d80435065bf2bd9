#pragma once

// Daemon, the background work of long-lived processes (`mend serve`, `mend recover`; docs/serve.md,
// docs/heal.md): the recovery loop, the lesson workers, the embedding backfill and retention,
// stopped in order when a StopSignal (SIGINT or SIGTERM, or a manual one) arrives.

#include <signal.h>

#include <atomic>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <ostream>

#include "mend/app/recovery.h"
#include "mend/app/retention.h"
#include "mend/base/result.h"
#include "mend/heal/recovery.h"

namespace mend::app {

struct Runtime;

/// What a long-lived process waits for before it stops: SIGINT or SIGTERM in production, a call
/// in tests.
class StopSignal {
 public:
  virtual ~StopSignal() = default;
  /// Blocks until the stop was asked for. Returns at once when it was asked for before.
  virtual void Wait() = 0;
};

/// SIGINT and SIGTERM. The constructor blocks both in the calling thread, so construct it before
/// any thread starts: every thread started later inherits the mask and leaves the signals to
/// Wait()'s sigwait. For one owner thread.
class ProcessStopSignal final : public StopSignal {
 public:
  ProcessStopSignal();
  void Wait() override;

 private:
  sigset_t signals_;
};

/// A stop asked for by Raise() (from any thread): tests and embedders.
class ManualStopSignal final : public StopSignal {
 public:
  /// Asks the waiting owner to stop; later calls do nothing more.
  void Raise();
  void Wait() override;

 private:
  std::mutex mu_;
  std::condition_variable raised_cv_;
  bool raised_ = false;  // guarded by mu_
};

/// Whether Stop waits for the lesson queue to drain.
enum class LessonDrain {
  kNone,   ///< the runtime stops its workers when it goes away
  kDrain,  ///< StopLessonWorkers within reflexion.queue.drain_timeout
};

/// How a Daemon runs.
struct DaemonOptions {
  /// Where the recovery loop's and retention's lines go ("recovered <id>", "prune: ...").
  /// Borrowed; must outlive the daemon.
  std::ostream* log = nullptr;
  LessonDrain lesson_drain = LessonDrain::kNone;  ///< what Stop does with the lesson queue
  /// false: no recovery loop (`mend proxy`, whose clients are not mend runs).
  bool recovery = true;
};

/// The background work of a long-lived process (`mend serve`, `mend recover`; docs/heal.md,
/// docs/serve.md): the recovery loop (RecoveryOptionsFor, driven by a RuntimeRunDriver whose runs
/// stop at their next checkpoint once RequestStop was called), the lesson workers and embedding
/// backfill (StartBackgroundWork) and the retention loop (observe.retention; none when it is 0s).
/// The Runtime must outlive the daemon. Start, RequestStop and Stop are for one owner thread.
class Daemon {
 public:
  /// Builds the recovery loop without starting anything: errors of heal::Recovery::Create.
  static Result<std::unique_ptr<Daemon>> Create(Runtime& runtime, DaemonOptions options);
  ~Daemon();  ///< Stop()
  Daemon(const Daemon&) = delete;
  Daemon& operator=(const Daemon&) = delete;

  /// One pass of the recovery loop on the calling thread (`mend recover --once`).
  Result<heal::TickReport> Tick();
  /// The recovery loop's options as Create built them (its interval, say).
  const heal::RecoveryOptions& recovery_options() const { return recovery_options_; }

  /// Starts the background work, then the recovery loop, then retention. Call it once.
  void Start();
  /// From now on runs the recovery loop resumes stop at their next checkpoint, as a server's own
  /// runs do when it stops.
  void RequestStop();
  /// Stops retention and the recovery loop (which finishes its pass; after RequestStop its runs
  /// stop at their next checkpoint), then, with LessonDrain::kDrain, the lesson workers (a drain
  /// that fails is logged as "lessons: ..."). Idempotent; nothing when Start was not called.
  void Stop();

 private:
  Daemon(Runtime& runtime, DaemonOptions options);

  Runtime& runtime_;
  DaemonOptions options_;
  std::atomic<bool> stopping_{false};
  RuntimeRunDriver driver_;
  heal::RecoveryOptions recovery_options_;
  std::unique_ptr<heal::Recovery> recovery_;
  std::unique_ptr<RetentionLoop> retention_;
  bool started_ = false;
  bool stopped_ = false;
};

}  // namespace mend::app
