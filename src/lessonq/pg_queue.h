#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "lessonq/attempt_runner.h"
#include "lessonq/claim_sizer.h"
#include "lessonq/pg_job_table.h"
#include "lessonq/queue_metrics.h"
#include "mend/base/env.h"
#include "mend/lessonq/postgres_queue.h"

namespace mend::lessonq {

// The PostgreSQL lesson queue (postgres_queue.h). pg_queue.cc holds the producer side, start,
// inspection and the operator actions; pg_queue_workers.cc the workers, the poller, drain and
// shutdown. A worker with nothing to do claims a batch of due jobs (ClaimSizer says how many) and
// completes, in the same statement, the jobs this process's workers finished since; the jobs it
// claimed wait in memory until a worker of this process starts them. When nothing is due, workers
// wait on the Clock (woken by this process's enqueues).
class PgLessonQueue final : public DurableLessonQueue {
 public:
  PgLessonQueue(Env env, QueueOptions options, PgQueueOptions pg, obs::MetricsRegistry* metrics,
                std::unique_ptr<PgJobTable> table);
  ~PgLessonQueue() override;

  Result<EnqueueResult> Enqueue(const LessonRequest& request) override;
  Status Start(Processor processor, WorkerScope scope) override;
  using DurableLessonQueue::Start;
  bool owner() const override { return owner_.load(); }
  Result<DrainReport> DrainNow(Duration timeout) override;
  Status Shutdown(Duration timeout) override;
  Result<QueueStats> Stats() override;
  Result<std::vector<Job>> Pending() override;
  Result<std::vector<Job>> DeadLetters() override;
  Status RetryDeadLetter(const std::string& id) override;
  Status PurgeDeadLetter(const std::string& id) override;
  const QueueOptions& options() const override { return options_; }
  std::string location() const override { return table_->location(); }
  std::string_view backend() const override { return "postgres"; }

 private:
  // pg_queue_workers.cc
  // A claim a worker is about to make: the finished jobs it completes and how many it may take.
  struct ClaimTicket {
    std::vector<ClaimedJob> completed;
    int limit = 1;
    int64_t seen = 0;     // wake_seq_ before the claim
    int64_t started = 0;  // seq_ at its start
  };
  // What an attempt left for the worker to record.
  struct Outcome {
    std::optional<ClaimedJob> finished;  // to be completed by the next claim
    std::optional<Duration> took;        // how long the attempt ran
  };
  void WorkerLoop();
  void PollerLoop();
  // Runs the claim (with in_flight_ counting it) and returns the first job it took, for the
  // calling worker; the others wait in held_ for any worker. nullopt when nothing was due (or the
  // server failed: the completions then wait for the next claim).
  std::optional<ClaimedJob> ClaimBatch(ClaimTicket& ticket);
  // Where a worker's job comes from: its own claim, or held_.
  enum class Source { kOwnClaim, kHeld };
  // Processes a claimed job (with in_flight_ counting it), then takes it off in_flight_. A job
  // that waited in held_ until its claim no longer covers a whole attempt goes back instead, due
  // at once: another process may already have taken it over.
  void RunJob(ClaimedJob claimed, Source source);
  Outcome Process(ClaimedJob claimed);
  Outcome Finish(const ClaimedJob& claimed, Verdict verdict);
  // Waits until something may be due (an enqueue here, the earliest due time, poll_interval) or
  // jobs are held for the workers; `seen` as in ClaimTicket.
  void WaitForWork(int64_t seen);
  // A stopping worker completes the finished jobs and hands back the held ones, due at once, so
  // that any process may take them up without waiting for their claims to end.
  void ReturnHeld();
  void Wake();
  void RefreshGauges();
  // Waits until this process holds no job and a claim that began after `since` (a value of seq_)
  // and after the last job finished found nothing due, or `deadline` passes; false then. A claim
  // that began earlier may have read the table before the jobs the waiter expects were due.
  bool WaitIdle(int64_t since, Time deadline);
  void CountEnqueue(EnqueueOutcome outcome);
  // The rows this process's workers may claim: the scope of Start, with kOwn the ids enqueued
  // here so far.
  ClaimFilter Filter();

  Env env_;
  const QueueOptions options_;
  const PgQueueOptions pg_;
  const Duration claim_for_;                             // job_timeout + claim_margin
  std::unique_ptr<obs::MetricsRegistry> owned_metrics_;  // when the caller passed none
  QueueMetrics metrics_;
  std::unique_ptr<PgJobTable> table_;
  AttemptRunner runner_;

  std::mutex state_mu_;  // serializes Start and Shutdown; guards the members below it
  bool started_ = false;
  bool shut_down_ = false;
  Processor processor_;  // set before the threads start; read-only afterwards
  WorkerScope scope_;    // likewise
  std::vector<std::thread> workers_;
  std::thread poller_;
  std::atomic<bool> owner_{false};

  std::mutex mu_;
  std::condition_variable cv_;  // wakes workers, the poller and idle waiters
  bool stop_claims_ = false;    // shutdown: no more claims
  bool stopping_ = false;       // shutdown: the poller stops too
  int64_t wake_seq_ = 0;        // bumped by enqueues and drains
  // Claims under way, jobs held for the workers and jobs being processed.
  int64_t in_flight_ = 0;
  std::deque<ClaimedJob> held_;       // claimed, waiting for a worker, oldest first
  std::vector<ClaimedJob> finished_;  // succeeded or skipped; deleted by the next claim
  ClaimSizer sizer_;
  int64_t seq_ = 0;          // orders the events below
  int64_t last_empty_ = 0;   // seq_ at the start of the latest claim that found nothing due
  int64_t last_finish_ = 0;  // seq_ of the latest job finished

  // Totals since start, so that DrainNow can report what happened during it.
  std::atomic<int64_t> succeeded_{0};
  std::atomic<int64_t> skipped_{0};
  std::atomic<int64_t> retried_{0};
  std::atomic<int64_t> dead_lettered_{0};
  std::mutex own_mu_;
  std::set<std::string> own_ids_;  // jobs enqueued through this object
  std::mutex gauge_mu_;            // RefreshGauges
  std::mutex drain_mu_;
  DrainReport reported_;  // the totals at the previous drain
};

}  // namespace mend::lessonq
