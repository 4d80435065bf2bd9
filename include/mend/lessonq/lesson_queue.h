#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "mend/base/clock.h"
#include "mend/base/env.h"
#include "mend/base/result.h"
#include "mend/lessonq/job.h"

namespace mend::obs {
class MetricsRegistry;
}  // namespace mend::obs

namespace mend::lessonq {

// The defaults are DESIGN.md §8's (the seed's CHATCLI_QUALITY_REFLEXION_QUEUE_* defaults).
struct QueueOptions {
  std::string base_dir;  // required: holds wal/, dlq/ and the owner lock `owner.lock`
  int workers = 2;
  size_t capacity = 1000;  // jobs held in memory; the WAL holds every pending job regardless
  bool drop_oldest = false;
  Duration block_timeout = std::chrono::seconds(5);
  int max_attempts = 5;
  Duration initial_delay = std::chrono::seconds(1);
  Duration max_delay = std::chrono::minutes(5);
  double multiplier = 2.0;
  double jitter = 0.2;  // [0, 0.5]
  Duration job_timeout = std::chrono::minutes(2);
  Duration stale_after = std::chrono::hours(168);
  // How often the owner looks for records written by other processes (and for free room to
  // reload records it had to leave in the WAL).
  Duration poll_interval = std::chrono::seconds(1);
  // Cut the texts of a record that chatcli's reader could not take whole (FitWalRecord with
  // kChatcliMaxRecordBytes), so a directory chatcli also reads keeps its jobs; the job in this
  // process keeps its full texts.
  bool chatcli_safe = false;
};

// The context of one processing attempt.
struct JobContext {
  Time deadline{};  // enqueue-independent per-job timeout: start of the attempt + job_timeout
  // Becomes true when the deadline has passed (the owner checks every poll_interval) or when
  // shutdown gives up waiting. A processor that can stop early should (the lesson processor hands
  // it to the model request, which is then abandoned).
  const std::atomic<bool>* cancelled = nullptr;
};

enum class ProcessResult {
  kSuccess,  // a lesson was stored
  kSkipped,  // nothing actionable; nothing stored
};

// Processes one job. OK (success or skipped) acknowledges it: its record is removed. An error
// that IsRetryable() is retried later with backoff until max_attempts; any other error is
// permanent and moves the job to the dead-letter queue at once, as does an exception thrown by
// the processor. A processor that returns after its deadline counts as a transient timeout
// unless it succeeded. Called on worker threads, concurrently.
using Processor = std::function<Result<ProcessResult>(const Job& job, const JobContext& context)>;

enum class EnqueueOutcome {
  kAccepted,       // a new record; queued for the workers
  kDeduped,        // a record of this id was already pending; nothing written
  kRejectedFull,   // the in-memory queue stayed full for block_timeout; the record waits in the WAL
  kDroppedOldest,  // accepted, and the oldest queued job left memory (its record stays in the WAL)
};
std::string_view EnqueueOutcomeName(EnqueueOutcome outcome);  // "accepted", "deduped", ...

struct EnqueueResult {
  std::string id;
  bool created = false;  // a record was written by this call
  EnqueueOutcome outcome = EnqueueOutcome::kAccepted;
};

// Where a trigger sends a lesson request. LessonQueue is the durable one; DetachedLessonRunner
// the legacy one.
class LessonEnqueuer {
 public:
  virtual ~LessonEnqueuer() = default;
  virtual Result<EnqueueResult> Enqueue(const LessonRequest& request) = 0;
};

struct QueueStats {
  int64_t queue_depth = 0;  // jobs held in memory by this process (0 unless it owns the workers)
  int64_t wal_records = 0;  // records in wal/
  int64_t dlq_size = 0;     // records in dlq/
};

// What the workers did since the previous DrainNow (since Start for the first one): jobs taken up
// between Start and the drain count too.
struct DrainReport {
  int64_t succeeded = 0;
  int64_t skipped = 0;
  int64_t retried = 0;        // failed transiently; rescheduled with backoff (still in the WAL)
  int64_t dead_lettered = 0;  // moved to the DLQ
  int64_t remaining = 0;      // records still in the WAL afterwards
};

// The durable lesson queue (DESIGN.md §8, docs/reflexion.md): one WAL record per pending job in
// <base_dir>/wal, dead letters in <base_dir>/dlq, an in-memory min-heap by next attempt time with
// dedupe and capacity, N workers, retries with capped exponential backoff and jitter, replay at
// start with stale discard, drain and shutdown with a deadline.
//
// Any process may Open a queue and Enqueue: the record is durable when Enqueue returns. Start()
// makes this process the owner of the directory's workers (an exclusive file lock); only the
// owner processes jobs, and it picks up records other processes write within poll_interval.
// Everything runs on env.clock, so tests drive it with a ManualClock. Thread-safe.
class LessonQueue final : public LessonEnqueuer {
 public:
  // Creates the directories. `metrics` (may be null: a private registry) receives the ten
  // mend_lessonq_* metrics and must outlive the queue. The Env's pointers must outlive it.
  static Result<std::unique_ptr<LessonQueue>> Open(Env env, QueueOptions options,
                                                   obs::MetricsRegistry* metrics);
  // Shutdown(0) if still running, then joins every thread (a processor still running is waited
  // for).
  ~LessonQueue() override;

  // Writes the job's record (tmp → fsync → rename → fsync dir) unless one with its id is pending,
  // then hands it to the workers when this process owns them. Never waits for processing.
  Result<EnqueueResult> Enqueue(const LessonRequest& request) override;

  // Takes the owner lock, replays the WAL (records older than stale_after are removed and
  // counted; corrupt ones are removed and counted) and starts the workers with `processor`.
  // kUnavailable when another process owns the directory (the queue stays a producer; Start may
  // be tried again later); kFailedPrecondition when already started (a queue object starts at
  // most once, also after Shutdown).
  Status Start(Processor processor);
  bool owner() const;

  // Owner only (kFailedPrecondition otherwise): rescans the WAL, makes every queued job due now
  // and waits until no due job is queued or in flight, or `timeout` passes. Jobs rescheduled by
  // a transient failure meanwhile are not waited for.
  Result<DrainReport> DrainNow(Duration timeout);

  // Until `timeout`, keeps handing out due jobs (not those waiting for a retry) and waits for the
  // jobs in flight; then stops dequeuing, signals cancellation and
  // joins the workers (a processor that ignores JobContext::cancelled is waited for). Jobs not
  // done stay in the WAL for the next start; an attempt that fails after the cancellation leaves
  // its record unchanged. kDeadlineExceeded when jobs were still in flight at the deadline.
  // Releases the owner lock; the queue is then a producer. Idempotent; OK when never started.
  Status Shutdown(Duration timeout);

  // Inspection and operator actions; they work in any process (they read the directories).
  Result<QueueStats> Stats();
  Result<std::vector<Job>> Pending();      // WAL records, oldest enqueue first
  Result<std::vector<Job>> DeadLetters();  // DLQ records, oldest enqueue first
  // Moves a dead letter back to the WAL with attempts 0, due now. kNotFound when absent.
  Status RetryDeadLetter(const std::string& id);
  // Deletes a dead letter. kNotFound when absent.
  Status PurgeDeadLetter(const std::string& id);

  const QueueOptions& options() const;

 private:
  class Impl;
  explicit LessonQueue(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

// Legacy mode (reflexion.queue.enabled = false): each request is processed on a background thread
// of this object, without a WAL. Not durable: a request in flight when the process dies is lost.
// No retries, no DLQ. The destructor waits for the threads.
class DetachedLessonRunner final : public LessonEnqueuer {
 public:
  DetachedLessonRunner(Env env, Processor processor, Duration job_timeout);
  ~DetachedLessonRunner() override;
  Result<EnqueueResult> Enqueue(const LessonRequest& request) override;
  // Blocks until every request handed in so far has been processed (tests, shutdown).
  void WaitIdle();

 private:
  class Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace mend::lessonq
