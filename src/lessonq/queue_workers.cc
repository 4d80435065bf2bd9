// The consuming side of LessonQueue: workers, the poller, drain and shutdown.

#include <chrono>
#include <exception>
#include <optional>
#include <set>
#include <string>
#include <utility>

#include "lessonq/backoff.h"
#include "lessonq/lesson_queue_impl.h"

namespace mend::lessonq {

void LessonQueue::Impl::StartThreads() {
  workers_.reserve(static_cast<size_t>(options_.workers));
  for (int i = 0; i < options_.workers; ++i) workers_.emplace_back([this] { WorkerLoop(); });
  poller_ = std::thread([this] { PollerLoop(); });
}

void LessonQueue::Impl::WorkerLoop() {
  while (std::optional<Job> job = heap_.PopDue()) Process(std::move(*job));
}

void LessonQueue::Impl::PollerLoop() {
  std::unique_lock<std::mutex> lock(poll_mu_);
  while (!stopping_) {
    const Time deadline = env_.clock->Now() + options_.poll_interval;
    if (env_.clock->WaitUntil(poll_cv_, lock, deadline, [this] { return stopping_; })) break;
    lock.unlock();
    runner_.CancelOverdue();
    LoadUnknown(std::nullopt);
    RefreshGauges();
    lock.lock();
  }
}

// Records this process does not hold were written by another process, or left in the WAL when
// memory was full. Jobs in flight count as held, so a job is never loaded twice. Records outside
// the workers' scope are read once and then skipped (kOwn: never read at all).
void LessonQueue::Impl::LoadUnknown(std::optional<Time> due_at) {
  Result<std::vector<std::string>> ids = wal_->ListIds();
  if (!ids.ok()) return;  // retried at the next poll
  {
    // Forget declined records that are gone (processed by another process, or purged).
    std::lock_guard<std::mutex> lock(scope_mu_);
    std::set<std::string> present(ids->begin(), ids->end());
    std::erase_if(declined_, [&](const std::string& id) { return present.count(id) == 0; });
  }
  for (const std::string& id : *ids) {
    if (!heap_.HasRoom()) return;
    if (heap_.Knows(id)) continue;
    {
      std::lock_guard<std::mutex> lock(scope_mu_);
      if (declined_.count(id) > 0) continue;
      if (scope_.jobs == JobsTaken::kOwn && own_ids_.count(id) == 0) continue;
    }
    Result<Job> job = wal_->Read(id);
    if (!job.ok()) {
      // Read removed a record that failed a check; kNotFound means it was acknowledged meanwhile.
      if (job.status().code() == StatusCode::kDataLoss) metrics_.wal_corruption_total.Inc();
      continue;
    }
    if (!Takes(*job)) {
      std::lock_guard<std::mutex> lock(scope_mu_);
      declined_.insert(id);
      continue;
    }
    if (due_at.has_value()) job->next_attempt_at = *due_at;
    heap_.TryPush(std::move(job).value());
  }
}

void LessonQueue::Impl::RefreshGauges() {
  const uint64_t ticket = ++gauge_tickets_;
  Result<std::vector<std::string>> wal_ids = wal_->ListIds();
  Result<std::vector<std::string>> dlq_ids = dlq_->ListIds();
  std::lock_guard<std::mutex> lock(gauge_mu_);
  if (wal_ids.ok() && ticket > wal_gauge_ticket_) {
    wal_gauge_ticket_ = ticket;
    metrics_.wal_segments.Set(static_cast<double>(wal_ids->size()));
  }
  if (dlq_ids.ok() && ticket > dlq_gauge_ticket_) {
    dlq_gauge_ticket_ = ticket;
    metrics_.dlq_size.Set(static_cast<double>(dlq_ids->size()));
  }
}

void LessonQueue::Impl::Process(Job job) {
  const Time start = env_.clock->Now();
  job.attempts += 1;
  const Verdict verdict = runner_.Run(processor_, job, start, &job.last_error);
  std::optional<JobFate> fate;
  switch (verdict) {
    case Verdict::kSuccess:
    case Verdict::kSkipped:
      Acknowledge(job, verdict);
      fate = verdict == Verdict::kSkipped ? JobFate::kSkipped : JobFate::kStored;
      break;
    case Verdict::kTransient:
      if (job.attempts >= options_.max_attempts) {
        if (MoveToDeadLetters(job)) fate = JobFate::kDeadLettered;
      } else {
        Reschedule(job);
        fate = JobFate::kRetrying;
      }
      break;
    case Verdict::kPermanent:
      if (MoveToDeadLetters(job)) fate = JobFate::kDeadLettered;
      break;
    case Verdict::kAbandoned:
      heap_.Finish(job.id);  // the record stays as it was, for the next start
      break;
  }
  if (fate.has_value() && options_.on_job) options_.on_job(job, *fate);
  const std::string label(VerdictLabel(verdict));
  metrics_.attempts_total.WithLabels({label}).Inc();
  const std::chrono::duration<double> took = env_.clock->Now() - start;
  metrics_.processing_duration_seconds.WithLabels({label}).Observe(took.count());
}

// The record is removed before the job leaves the in-flight set: otherwise the poller could see
// the record of a job nobody holds and load it again.
void LessonQueue::Impl::Acknowledge(const Job& job, Verdict verdict) {
  wal_->Remove(job.id).IgnoreError();  // kNotFound: already gone; otherwise at-least-once
  ++(verdict == Verdict::kSkipped ? skipped_ : succeeded_);
  heap_.Finish(job.id);
}

void LessonQueue::Impl::Reschedule(Job job) {
  const BackoffPolicy policy{options_.initial_delay, options_.max_delay, options_.multiplier,
                             options_.jitter};
  job.next_attempt_at =
      env_.clock->Now() + RetryDelay(policy, job.attempts, env_.random->Uniform01());
  // When the update fails the record keeps its previous state; the retry still happens here.
  wal_->Update(job).IgnoreError();
  metrics_.retry_total.WithLabels({std::to_string(job.attempts)}).Inc();
  ++retried_;
  heap_.Requeue(std::move(job));
}

bool LessonQueue::Impl::MoveToDeadLetters(const Job& job) {
  // DLQ first: a crash between the two steps leaves the job in both directories, never in none.
  const bool moved = dlq_->Update(job).ok();
  if (moved) {
    wal_->Remove(job.id).IgnoreError();
    ++dead_lettered_;
  }
  heap_.Finish(job.id);
  RefreshGauges();
  return moved;
}

Result<DrainReport> LessonQueue::Impl::DrainNow(Duration timeout) {
  if (!owner()) return FailedPreconditionError("this process does not own the lesson workers");
  const Time deadline = env_.clock->Now() + timeout;
  std::lock_guard<std::mutex> drain_lock(drain_mu_);
  // Queued jobs first, then the ones read now: made due in the other order, a job that failed and
  // was rescheduled in between would be made due (and retried) again.
  const Time now = env_.clock->Now();
  heap_.MakeAllDue(now);
  LoadUnknown(now);
  heap_.WaitIdle(deadline);
  DrainReport report;
  const int64_t succeeded = succeeded_, skipped = skipped_, retried = retried_,
                dead = dead_lettered_;
  report.succeeded = succeeded - reported_succeeded_;
  report.skipped = skipped - reported_skipped_;
  report.retried = retried - reported_retried_;
  report.dead_lettered = dead - reported_dead_;
  reported_succeeded_ = succeeded;
  reported_skipped_ = skipped;
  reported_retried_ = retried;
  reported_dead_ = dead;
  MEND_ASSIGN_OR_RETURN(std::vector<std::string> ids, wal_->ListIds());
  report.remaining = static_cast<int64_t>(ids.size());
  RefreshGauges();
  return report;
}

Status LessonQueue::Impl::Shutdown(Duration timeout) {
  std::lock_guard<std::mutex> lock(state_mu_);
  if (!started_ || shut_down_) return OkStatus();
  shut_down_ = true;
  const Time deadline = env_.clock->Now() + timeout;
  // Drain, then shut down (docs/lesson_queue.md): jobs already due — the lesson of the run that
  // just failed, say — are still handed out until the deadline; jobs waiting for a retry are not.
  heap_.WaitIdle(deadline);
  heap_.Close();
  {
    std::lock_guard<std::mutex> poll_lock(poll_mu_);
    stopping_ = true;
  }
  poll_cv_.notify_all();
  const bool finished = heap_.WaitNoneInFlight(deadline);
  runner_.CancelAll();
  JoinThreads();
  owner_.store(false);
  owner_lock_.reset();
  if (!finished) {
    return DeadlineExceededError("lesson jobs were still in flight at the shutdown deadline");
  }
  return OkStatus();
}

// A processor that ignores cancellation is waited for here: its thread cannot be abandoned while
// it uses this object. The lesson processor honours it (its model request is abandoned).
void LessonQueue::Impl::JoinThreads() {
  for (std::thread& worker : workers_) worker.join();
  workers_.clear();
  if (poller_.joinable()) poller_.join();
}

}  // namespace mend::lessonq
