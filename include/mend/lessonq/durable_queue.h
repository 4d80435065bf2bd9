#pragma once

// The durable lesson queue's contract, shared by its two backends: the WAL directory
// (LessonQueue, lesson_queue.h) and PostgreSQL (OpenPostgresLessonQueue, postgres_queue.h).
#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "mend/base/clock.h"
#include "mend/base/result.h"
#include "mend/lessonq/job.h"

namespace mend::lessonq {

/// What became of a job after an attempt (QueueOptions::on_job).
enum class JobFate {
  kStored,        ///< processed: a lesson was stored
  kSkipped,       ///< processed: nothing actionable
  kRetrying,      ///< failed transiently; attempted again after its backoff
  kDeadLettered,  ///< failed permanently or out of attempts: in the dead-letter queue
};
std::string_view JobFateName(JobFate fate);  ///< "stored", "skipped", "retrying", "dead_lettered"

/// The defaults are docs/lesson_queue.md's (the seed's CHATCLI_QUALITY_REFLEXION_QUEUE_* defaults).
struct QueueOptions {
  /// The WAL queue's directory, required there: holds wal/, dlq/ and the owner lock `owner.lock`.
  /// The PostgreSQL queue does not use it.
  std::string base_dir;
  int workers = 2;  ///< threads processing jobs
  /// Jobs held in memory (WAL queue); the WAL holds every pending job regardless.
  size_t capacity = 1000;
  bool drop_oldest = false;  ///< full: drop the oldest queued job instead of waiting
  Duration block_timeout = std::chrono::seconds(5);  ///< how long Enqueue waits when full
  int max_attempts = 5;                              ///< then the job is dead-lettered
  Duration initial_delay = std::chrono::seconds(1);  ///< the first retry delay
  Duration max_delay = std::chrono::minutes(5);      ///< cap of the retry delay
  double multiplier = 2.0;                           ///< growth of the retry delay
  double jitter = 0.2;                               ///< [0, 0.5]
  Duration job_timeout = std::chrono::minutes(2);    ///< the deadline of one attempt
  Duration stale_after = std::chrono::hours(168);    ///< older pending jobs are discarded at replay
  /// How often the owner looks for records written by other processes (and for free room to
  /// reload records it had to leave in the WAL).
  Duration poll_interval = std::chrono::seconds(1);
  /// Cut the texts of a record that chatcli's reader could not take whole (FitWalRecord with
  /// kChatcliMaxRecordBytes), so a directory chatcli also reads keeps its jobs; the job in this
  /// process keeps its full texts.
  bool chatcli_safe = false;
  /// Optional: told what became of each job a worker of this process attempted, once the queue
  /// has recorded it, on that worker's thread (for live displays: app publishes events). Must not
  /// block or call the queue. A job an attempt abandoned at shutdown is not reported.
  std::function<void(const Job& job, JobFate fate)> on_job;
};

/// The context of one processing attempt.
struct JobContext {
  Time deadline{};  ///< enqueue-independent per-job timeout: start of the attempt + job_timeout
  /// Becomes true when the deadline has passed (the owner checks every poll_interval) or when
  /// shutdown gives up waiting. A processor that can stop early should (the lesson processor hands
  /// it to the model request, which is then abandoned).
  const std::atomic<bool>* cancelled = nullptr;
};

/// How a processed job ended.
enum class ProcessResult {
  kSuccess,  ///< a lesson was stored
  kSkipped,  ///< nothing actionable; nothing stored
};

/// Processes one job. OK (success or skipped) acknowledges it: its record is removed. An error
/// that IsRetryable() is retried later with backoff until max_attempts; any other error is
/// permanent and moves the job to the dead-letter queue at once, as does an exception thrown by
/// the processor. A processor that returns after its deadline counts as a transient timeout
/// unless it succeeded. Called on worker threads, concurrently.
using Processor = std::function<Result<ProcessResult>(const Job& job, const JobContext& context)>;

/// What Enqueue did with a request.
enum class EnqueueOutcome {
  kAccepted,  ///< a new record; queued for the workers
  kDeduped,   ///< a record of this id was already pending; nothing written
  /// the in-memory queue stayed full for block_timeout; the record waits in the WAL
  kRejectedFull,
  /// accepted, and the oldest queued job left memory (its record stays in the WAL)
  kDroppedOldest,
};
std::string_view EnqueueOutcomeName(EnqueueOutcome outcome);  ///< "accepted", "deduped", ...

/// The answer of Enqueue.
struct EnqueueResult {
  std::string id;                                      ///< the job id (JobIdFor)
  bool created = false;                                ///< a record was written by this call
  EnqueueOutcome outcome = EnqueueOutcome::kAccepted;  ///< what happened
};

/// Where a trigger sends a lesson request. DurableLessonQueue's implementations are the durable
/// ones; DetachedLessonRunner the legacy one.
class LessonEnqueuer {
 public:
  virtual ~LessonEnqueuer() = default;
  /// Hands over one request; durable on return for the durable queues.
  virtual Result<EnqueueResult> Enqueue(const LessonRequest& request) = 0;
};

/// The names are the WAL queue's; the PostgreSQL queue fills them with its own counts.
struct QueueStats {
  /// Jobs held in memory by this process (0 unless it runs the workers); for the PostgreSQL
  /// queue, the jobs its workers have claimed and not yet finished.
  int64_t queue_depth = 0;
  int64_t wal_records = 0;  ///< pending jobs: records in wal/, or rows in the pending state
  int64_t dlq_size = 0;     ///< dead letters: records in dlq/, or rows in the dead state
};

/// What the workers did since the previous DrainNow (since Start for the first one): jobs taken up
/// between Start and the drain count too.
struct DrainReport {
  int64_t succeeded = 0;      ///< lessons stored
  int64_t skipped = 0;        ///< nothing actionable
  int64_t retried = 0;        ///< failed transiently; rescheduled with backoff (still pending)
  int64_t dead_lettered = 0;  ///< moved to the DLQ
  int64_t remaining = 0;      ///< jobs still pending afterwards
};

/// Which pending jobs a process's workers take up (docs/lesson_queue.md, "Which process takes a
/// job"). A job outside the scope is not attempted: it stays pending, as it was, for a process
/// whose scope holds it; it costs no attempt and never becomes a dead letter here.
enum class JobsTaken {
  kAll,  ///< every pending job the endpoint fits
  /// Only the jobs enqueued through this queue object (Enqueue, also when it deduped onto a
  /// pending job): what a short command such as `mend run` uses so that it generates its own
  /// runs' lessons and leaves everything else for long-lived processes.
  kOwn,
};

/// Which jobs this process's workers take up.
struct WorkerScope {
  /// The provider this process generates lessons with: a job that recorded another provider kind
  /// or base URL (JobFitsEndpoint) is left for a process that has it. Empty: no restriction.
  LessonEndpoint endpoint;
  JobsTaken jobs = JobsTaken::kAll;  ///< all jobs, or only those this process enqueued
};

/// A durable lesson queue: the job of a request is stored when Enqueue returns, processed at least
/// once by the workers of some process that called Start, retried with capped exponential backoff
/// and jitter until max_attempts, then kept as a dead letter for an operator. Jobs are deduped by
/// id (JobIdFor) while pending. Everything runs on the Env's clock. Implementations are
/// thread-safe; the destructor shuts down (Shutdown(0)) and joins every thread.
class DurableLessonQueue : public LessonEnqueuer {
 public:
  /// Starts the workers with `processor` on the jobs of `scope`, after discarding pending jobs
  /// older than stale_after. kFailedPrecondition when already started (a queue object starts at
  /// most once). The WAL queue also answers kUnavailable when another process owns its directory.
  virtual Status Start(Processor processor, WorkerScope scope) = 0;
  /// Start with no restriction: every pending job.
  Status Start(Processor processor) { return Start(std::move(processor), WorkerScope{}); }
  /// True while this object runs workers (between a successful Start and Shutdown).
  virtual bool owner() const = 0;
  /// Workers only (kFailedPrecondition otherwise): makes every pending job of the workers' scope
  /// that is not being processed due now and waits until no due job of the scope is left and none
  /// is in flight here, or `timeout` passes. Jobs rescheduled by a transient failure meanwhile are
  /// not waited for.
  virtual Result<DrainReport> DrainNow(Duration timeout) = 0;
  /// Until `timeout`, keeps taking up due jobs and waits for the jobs in flight; then stops,
  /// signals cancellation (JobContext::cancelled) and joins the workers. Jobs not done stay
  /// pending. kDeadlineExceeded when jobs were still in flight at the deadline. Idempotent; OK
  /// when never started.
  virtual Status Shutdown(Duration timeout) = 0;

  /// Inspection and operator actions; they work in any process.
  virtual Result<QueueStats> Stats() = 0;
  virtual Result<std::vector<Job>> Pending() = 0;      ///< oldest enqueue first
  virtual Result<std::vector<Job>> DeadLetters() = 0;  ///< oldest enqueue first
  /// Makes a dead letter pending again with attempts 0, due now. kNotFound when absent.
  virtual Status RetryDeadLetter(const std::string& id) = 0;
  /// Deletes a dead letter. kNotFound when absent.
  virtual Status PurgeDeadLetter(const std::string& id) = 0;

  /// The options the queue was opened with.
  virtual const QueueOptions& options() const = 0;
  /// "wal" or "postgres": the value of reflexion.queue.backend that selects this implementation.
  virtual std::string_view backend() const = 0;
  /// Where the jobs live, for messages: "the WAL at DIR" or "PostgreSQL at URL (schema S)", the
  /// password masked.
  virtual std::string location() const = 0;
};

}  // namespace mend::lessonq
