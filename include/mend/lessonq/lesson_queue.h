#pragma once

// LessonQueue, the durable lesson queue on a WAL directory (docs/lesson_queue.md), and
// DetachedLessonRunner, the legacy mode without a WAL. Both are thread-safe.

#include <memory>
#include <string>
#include <vector>

#include "mend/base/clock.h"
#include "mend/base/env.h"
#include "mend/base/result.h"
#include "mend/lessonq/durable_queue.h"
#include "mend/lessonq/job.h"

namespace mend::obs {
class MetricsRegistry;
}  // namespace mend::obs

namespace mend::lessonq {

/// The durable lesson queue (docs/lesson_queue.md): one WAL record per pending job in
/// `<base_dir>/wal`, dead letters in `<base_dir>/dlq`, an in-memory min-heap by next attempt time
/// with dedupe and capacity, N workers, retries with capped exponential backoff and jitter, replay
/// at start with stale discard, drain and shutdown with a deadline.
///
/// Any process may Open a queue and Enqueue: the record is durable when Enqueue returns. Start()
/// makes this process the owner of the directory's workers (an exclusive file lock); only the
/// owner processes jobs, and it picks up records other processes write within poll_interval.
/// Everything runs on env.clock, so tests drive it with a ManualClock. Thread-safe.
class LessonQueue final : public DurableLessonQueue {
 public:
  /// Creates the directories. `metrics` (may be null: a private registry) receives the ten
  /// mend_lessonq_* metrics and must outlive the queue. The Env's pointers must outlive it.
  static Result<std::unique_ptr<LessonQueue>> Open(Env env, QueueOptions options,
                                                   obs::MetricsRegistry* metrics);
  /// Shutdown(0) if still running, then joins every thread (a processor still running is waited
  /// for).
  ~LessonQueue() override;

  /// Writes the job's record (tmp → fsync → rename → fsync dir) unless one with its id is pending,
  /// then hands it to the workers when this process owns them. Never waits for processing.
  Result<EnqueueResult> Enqueue(const LessonRequest& request) override;

  /// Takes the owner lock, replays the WAL (records older than stale_after are removed and
  /// counted; corrupt ones are removed and counted) and starts the workers with `processor` on
  /// the jobs of `scope` (the others stay in the WAL, untouched). kUnavailable when another
  /// process owns the directory (the queue stays a producer; Start may be tried again later);
  /// kFailedPrecondition when already started (a queue object starts at most once, also after
  /// Shutdown).
  Status Start(Processor processor, WorkerScope scope) override;
  using DurableLessonQueue::Start;
  bool owner() const override;

  /// Owner only (kFailedPrecondition otherwise): rescans the WAL, makes every queued job due now
  /// and waits until no due job is queued or in flight, or `timeout` passes. Jobs rescheduled by
  /// a transient failure meanwhile are not waited for.
  Result<DrainReport> DrainNow(Duration timeout) override;

  /// Until `timeout`, keeps handing out due jobs (not those waiting for a retry) and waits for the
  /// jobs in flight; then stops dequeuing, signals cancellation and
  /// joins the workers (a processor that ignores JobContext::cancelled is waited for). Jobs not
  /// done stay in the WAL for the next start; an attempt that fails after the cancellation leaves
  /// its record unchanged. kDeadlineExceeded when jobs were still in flight at the deadline.
  /// Releases the owner lock; the queue is then a producer. Idempotent; OK when never started.
  Status Shutdown(Duration timeout) override;

  /// Inspection and operator actions; they work in any process (they read the directories).
  Result<QueueStats> Stats() override;
  Result<std::vector<Job>> Pending() override;      ///< WAL records, oldest enqueue first
  Result<std::vector<Job>> DeadLetters() override;  ///< DLQ records, oldest enqueue first
  /// Moves a dead letter back to the WAL with attempts 0, due now. kNotFound when absent.
  Status RetryDeadLetter(const std::string& id) override;
  /// Deletes a dead letter. kNotFound when absent.
  Status PurgeDeadLetter(const std::string& id) override;

  const QueueOptions& options() const override;
  std::string location() const override;  ///< "the WAL at <base_dir>"
  std::string_view backend() const override { return "wal"; }

 private:
  class Impl;
  explicit LessonQueue(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

/// Legacy mode (reflexion.queue.enabled = false): each request is processed on a background thread
/// of this object, without a WAL. Not durable: a request in flight when the process dies is lost.
/// No retries, no DLQ. The destructor waits for the threads.
class DetachedLessonRunner final : public LessonEnqueuer {
 public:
  /// Processes each request with `processor` on a thread of its own, within `job_timeout`.
  DetachedLessonRunner(Env env, Processor processor, Duration job_timeout);
  ~DetachedLessonRunner() override;
  /// Starts processing `request` and returns.
  Result<EnqueueResult> Enqueue(const LessonRequest& request) override;
  /// Blocks until every request handed in so far has been processed (tests, shutdown).
  void WaitIdle();

 private:
  class Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace mend::lessonq
