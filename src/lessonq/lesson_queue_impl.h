#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "lessonq/attempt_runner.h"
#include "lessonq/job_heap.h"
#include "lessonq/queue_metrics.h"
#include "mend/lessonq/lesson_queue.h"
#include "mend/lessonq/wal_dir.h"

namespace mend::lessonq {

// The state behind LessonQueue. lesson_queue.cc holds the producer side, start, inspection and
// the operator actions; queue_workers.cc the workers, the poller, drain and shutdown.
class LessonQueue::Impl {
 public:
  Impl(Env env, QueueOptions options, obs::MetricsRegistry* metrics, std::unique_ptr<WalDir> wal,
       std::unique_ptr<WalDir> dlq);
  ~Impl();

  Result<EnqueueResult> Enqueue(const LessonRequest& request);
  Status Start(Processor processor, WorkerScope scope);
  bool owner() const { return owner_.load(); }
  Result<DrainReport> DrainNow(Duration timeout);
  Status Shutdown(Duration timeout);
  Result<QueueStats> Stats();
  Result<std::vector<Job>> Pending();
  Result<std::vector<Job>> DeadLetters();
  Status RetryDeadLetter(const std::string& id);
  Status PurgeDeadLetter(const std::string& id);
  const QueueOptions& options() const { return options_; }

 private:
  // lesson_queue.cc
  EnqueueOutcome Hand(Job job);  // the owner's push under the overflow policy
  Status Replay();
  void CountEnqueue(EnqueueOutcome outcome);
  static Result<std::vector<Job>> SortedScan(WalDir& dir);
  // Whether this process's workers take up `job` (the scope of Start); an id this object enqueued
  // is its own. Not taking it leaves the job pending, as it is, for another process.
  bool Takes(const Job& job);
  bool IsOwn(const std::string& id);
  // The owner loads the record of `id` when it takes it and does not hold it yet (an enqueue that
  // deduped onto a record this process did not hold).
  void LoadOne(const std::string& id);

  // queue_workers.cc
  void StartThreads();
  void WorkerLoop();
  void PollerLoop();
  // Reads records this process does not hold while there is room; `due_at` overrides their next
  // attempt time.
  void LoadUnknown(std::optional<Time> due_at);
  void RefreshGauges();
  void Process(Job job);
  void Acknowledge(const Job& job, Verdict verdict);
  void Reschedule(Job job);
  bool MoveToDeadLetters(const Job& job);  // false: the dead-letter record was not written
  void JoinThreads();

  Env env_;
  const QueueOptions options_;
  std::unique_ptr<obs::MetricsRegistry> owned_metrics_;  // when the caller passed none
  QueueMetrics metrics_;
  std::unique_ptr<WalDir> wal_;
  std::unique_ptr<WalDir> dlq_;
  JobHeap heap_;

  std::mutex state_mu_;  // serializes Start and Shutdown; guards the members below it
  bool started_ = false;
  bool shut_down_ = false;
  std::unique_ptr<FileLock> owner_lock_;
  Processor processor_;  // set before the threads start; read-only afterwards
  WorkerScope scope_;    // likewise
  std::vector<std::thread> workers_;
  std::thread poller_;

  std::atomic<bool> owner_{false};
  // Attempts in flight: their deadlines and cancellation flags (JobContext::cancelled).
  AttemptRunner runner_;

  std::mutex scope_mu_;
  std::set<std::string> own_ids_;   // jobs enqueued through this object
  std::set<std::string> declined_;  // records read and found outside the scope

  std::mutex poll_mu_;
  std::condition_variable poll_cv_;
  bool stopping_ = false;  // under poll_mu_

  // RefreshGauges runs on the poller and on the workers at once. Each call takes a ticket before
  // it lists the directories; a count is set only when no call holding a later ticket has set it,
  // so the counts a slow listing read before a move never replace the ones read after it.
  std::atomic<uint64_t> gauge_tickets_{0};
  std::mutex gauge_mu_;
  uint64_t wal_gauge_ticket_ = 0;  // under gauge_mu_
  uint64_t dlq_gauge_ticket_ = 0;  // under gauge_mu_

  // Totals since start, so that DrainNow can report what happened during it.
  std::atomic<int64_t> succeeded_{0};
  std::atomic<int64_t> skipped_{0};
  std::atomic<int64_t> retried_{0};
  std::atomic<int64_t> dead_lettered_{0};
  // The counters when the previous DrainNow returned (0 before the first): a drain reports the
  // jobs finished since then, including those the workers took up between Start and the drain.
  std::mutex drain_mu_;
  int64_t reported_succeeded_ = 0, reported_skipped_ = 0, reported_retried_ = 0, reported_dead_ = 0;
};

}  // namespace mend::lessonq
