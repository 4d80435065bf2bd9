#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "lessonq/attempt_runner.h"
#include "lessonq/pg_job_table.h"
#include "lessonq/queue_metrics.h"
#include "mend/base/env.h"
#include "mend/lessonq/postgres_queue.h"

namespace mend::lessonq {

// The PostgreSQL lesson queue (postgres_queue.h). pg_queue.cc holds the producer side, start,
// inspection and the operator actions; pg_queue_workers.cc the workers, the poller, drain and
// shutdown. Each worker claims one job at a time when it is idle and waits on the Clock (woken by
// this process's enqueues) when nothing is due.
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
  void WorkerLoop();
  void PollerLoop();
  // Claims one job and processes it, completing `done` (the worker's previous job) in the same
  // statement; false when nothing was due (or the server failed). A job that succeeds becomes
  // `done`.
  // `started` is the seq_ taken when the claim began (with in_flight_ counting it).
  bool ClaimAndProcess(std::optional<ClaimedJob>& done, int64_t started);
  void Process(ClaimedJob claimed, std::optional<ClaimedJob>& done);
  void Finish(const ClaimedJob& claimed, Verdict verdict, std::optional<ClaimedJob>& done);
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
  int64_t in_flight_ = 0;       // claims under way and jobs being processed
  int64_t seq_ = 0;             // orders the events below
  int64_t last_empty_ = 0;      // seq_ at the start of the latest claim that found nothing due
  int64_t last_finish_ = 0;     // seq_ of the latest job finished

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
