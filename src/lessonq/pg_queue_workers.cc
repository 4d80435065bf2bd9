// The consuming side of the PostgreSQL lesson queue: workers, the poller, drain and shutdown.

#include <algorithm>
#include <chrono>
#include <iterator>
#include <optional>
#include <string>
#include <utility>

#include "lessonq/backoff.h"
#include "lessonq/pg_queue.h"

namespace mend::lessonq {
namespace {

constexpr char kExpiredClaim[] =
    "the claim expired before the attempt ended (the worker died or overran job_timeout)";

}  // namespace

void PgLessonQueue::WorkerLoop() {
  for (;;) {
    std::optional<ClaimedJob> job;
    ClaimTicket ticket;
    {
      std::lock_guard<std::mutex> lock(mu_);
      if (stop_claims_) break;
      if (!held_.empty()) {
        job.emplace(std::move(held_.front()));
        held_.pop_front();
      } else {
        // Read before the claim: an enqueue after it then still wakes this worker.
        ticket.seen = wake_seq_;
        ticket.started = ++seq_;
        ticket.completed.swap(finished_);
        ticket.limit = sizer_.Limit();
        ++in_flight_;
        metrics_.queue_depth.Set(static_cast<double>(in_flight_));
      }
    }
    if (job.has_value()) {
      RunJob(std::move(*job), Source::kHeld);
      continue;
    }
    job = ClaimBatch(ticket);
    if (job.has_value()) {
      RunJob(std::move(*job), Source::kOwnClaim);
      continue;
    }
    // Nothing due: wait for the next due time, an enqueue here or the poll interval. An error of
    // the server waits the poll interval too, and the claim is tried again.
    WaitForWork(ticket.seen);
  }
  ReturnHeld();
}

std::optional<ClaimedJob> PgLessonQueue::ClaimBatch(ClaimTicket& ticket) {
  const Time now = env_.clock->Now();
  Result<std::vector<ClaimedJob>> claimed =
      table_->Claim(now, now + claim_for_, ticket.limit, kExpiredClaim, Filter(), ticket.completed);
  std::optional<ClaimedJob> first;
  std::vector<ClaimedJob> back;
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (!claimed.ok()) {
      // Nothing was committed: the completions go with the next claim.
      for (ClaimedJob& done : ticket.completed) finished_.push_back(std::move(done));
    } else if (claimed->empty()) {
      // Only as of the claim's start: a claim that began before a drain may have read the table
      // before the drain's jobs were due, so its empty answer says nothing about them.
      last_empty_ = std::max(last_empty_, ticket.started);
    } else if (stop_claims_) {
      back = std::move(*claimed);
    } else {
      // The claim's place in in_flight_ passes to the first job; the others join it.
      first.emplace(std::move(claimed->front()));
      for (size_t i = 1; i < claimed->size(); ++i) held_.push_back(std::move((*claimed)[i]));
      in_flight_ += static_cast<int64_t>(claimed->size()) - 1;
    }
    if (!first.has_value() && back.empty()) --in_flight_;
    metrics_.queue_depth.Set(static_cast<double>(in_flight_));
  }
  cv_.notify_all();
  if (!back.empty()) {
    // Shutdown began during the claim: the jobs go back, due at once, for any worker.
    table_->ReleaseAll(back, now).status().IgnoreError();
    std::lock_guard<std::mutex> lock(mu_);
    --in_flight_;
    metrics_.queue_depth.Set(static_cast<double>(in_flight_));
    cv_.notify_all();
  }
  return first;
}

void PgLessonQueue::RunJob(ClaimedJob claimed, Source source) {
  Outcome outcome;
  const Time now = env_.clock->Now();
  if (source == Source::kHeld && now + options_.job_timeout > claimed.locked_until) {
    table_->Release(claimed, now).status().IgnoreError();
  } else {
    outcome = Process(std::move(claimed));
  }
  std::lock_guard<std::mutex> lock(mu_);
  if (outcome.finished.has_value()) finished_.push_back(std::move(*outcome.finished));
  if (outcome.took.has_value()) sizer_.Record(*outcome.took);
  --in_flight_;
  last_finish_ = ++seq_;
  metrics_.queue_depth.Set(static_cast<double>(in_flight_));
  cv_.notify_all();
}

PgLessonQueue::Outcome PgLessonQueue::Process(ClaimedJob claimed) {
  Job& job = claimed.job;
  const Time start = env_.clock->Now();
  if (job.attempts >= options_.max_attempts) {
    // Expired claims used up the attempts: a job that kills its workers ends as a dead letter.
    job.next_attempt_at = start;
    if (Result<bool> buried = table_->Bury(claimed); buried.ok() && *buried) {
      ++dead_lettered_;
      if (options_.on_job) options_.on_job(job, JobFate::kDeadLettered);
    }
    RefreshGauges();
    return {};
  }
  if (job.enqueued_at < start - options_.stale_after) {
    if (Result<bool> gone = table_->Complete(claimed); gone.ok() && *gone) {
      metrics_.stale_discarded_total.Inc();
    }
    return {};
  }
  job.attempts += 1;
  const Verdict verdict = runner_.Run(processor_, job, start, &job.last_error);
  Outcome outcome = Finish(claimed, verdict);
  const std::string label(VerdictLabel(verdict));
  metrics_.attempts_total.WithLabels({label}).Inc();
  const Duration took = env_.clock->Now() - start;
  metrics_.processing_duration_seconds.WithLabels({label}).Observe(
      std::chrono::duration<double>(took).count());
  outcome.took = took;
  return outcome;
}

// A change that fails (the server went away) or finds the claim taken over leaves the row to the
// claim's expiry: the job is then attempted again, at least once in all.
PgLessonQueue::Outcome PgLessonQueue::Finish(const ClaimedJob& claimed, Verdict verdict) {
  ClaimedJob next = claimed;
  Job& job = next.job;
  const Time now = env_.clock->Now();
  job.next_attempt_at = now;
  if (verdict == Verdict::kTransient && job.attempts >= options_.max_attempts) {
    verdict = Verdict::kPermanent;
  }
  Outcome outcome;
  std::optional<JobFate> fate;
  switch (verdict) {
    case Verdict::kSuccess:
    case Verdict::kSkipped:
      if (options_.on_job) {
        options_.on_job(job, verdict == Verdict::kSkipped ? JobFate::kSkipped : JobFate::kStored);
      }
      outcome.finished = std::move(next);  // deleted by the next claim
      ++(verdict == Verdict::kSkipped ? skipped_ : succeeded_);
      break;
    case Verdict::kTransient: {
      const BackoffPolicy policy{options_.initial_delay, options_.max_delay, options_.multiplier,
                                 options_.jitter};
      job.next_attempt_at = now + RetryDelay(policy, job.attempts, env_.random->Uniform01());
      if (Result<bool> moved = table_->Reschedule(next); moved.ok() && *moved) {
        fate = JobFate::kRetrying;
      }
      metrics_.retry_total.WithLabels({std::to_string(job.attempts)}).Inc();
      ++retried_;
      break;
    }
    case Verdict::kPermanent:
      if (Result<bool> buried = table_->Bury(next); buried.ok() && *buried) {
        ++dead_lettered_;
        fate = JobFate::kDeadLettered;
      }
      RefreshGauges();
      break;
    case Verdict::kAbandoned:
      // Unchanged but for the claim; due at once.
      table_->Release(claimed, now).status().IgnoreError();
      break;
  }
  if (fate.has_value() && options_.on_job) options_.on_job(job, *fate);
  return outcome;
}

void PgLessonQueue::WaitForWork(int64_t seen) {
  const Time now = env_.clock->Now();
  Time deadline = now + options_.poll_interval;
  Result<std::optional<Time>> earliest = table_->EarliestDue(Filter());
  if (earliest.ok() && earliest->has_value()) deadline = std::min(deadline, **earliest);
  std::unique_lock<std::mutex> lock(mu_);
  env_.clock->WaitUntil(cv_, lock, deadline,
                        [&] { return stop_claims_ || wake_seq_ != seen || !held_.empty(); });
}

void PgLessonQueue::ReturnHeld() {
  std::vector<ClaimedJob> held;
  std::vector<ClaimedJob> finished;
  {
    std::lock_guard<std::mutex> lock(mu_);
    held.assign(std::make_move_iterator(held_.begin()), std::make_move_iterator(held_.end()));
    held_.clear();
    finished.swap(finished_);
  }
  if (!finished.empty()) table_->CompleteAll(finished).status().IgnoreError();
  if (held.empty()) return;
  table_->ReleaseAll(held, env_.clock->Now()).status().IgnoreError();
  std::lock_guard<std::mutex> lock(mu_);
  in_flight_ -= static_cast<int64_t>(held.size());
  metrics_.queue_depth.Set(static_cast<double>(in_flight_));
  cv_.notify_all();
}

void PgLessonQueue::Wake() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    ++wake_seq_;
  }
  cv_.notify_all();
}

// Stale jobs are discarded here rather than in Start: the statement reads every pending row, and
// the workers need not wait for it.
void PgLessonQueue::PollerLoop() {
  const Time now = env_.clock->Now();
  if (Result<int64_t> stale = table_->DiscardStale(now - options_.stale_after, now); stale.ok()) {
    metrics_.stale_discarded_total.Inc(static_cast<double>(*stale));
  }
  RefreshGauges();
  std::unique_lock<std::mutex> lock(mu_);
  while (!stopping_) {
    const Time deadline = env_.clock->Now() + options_.poll_interval;
    if (env_.clock->WaitUntil(cv_, lock, deadline, [this] { return stopping_; })) break;
    lock.unlock();
    runner_.CancelOverdue();
    RefreshGauges();
    lock.lock();
  }
}

bool PgLessonQueue::WaitIdle(int64_t since, Time deadline) {
  std::unique_lock<std::mutex> lock(mu_);
  return env_.clock->WaitUntil(cv_, lock, deadline, [&] {
    return stop_claims_ || (in_flight_ == 0 && last_empty_ > std::max(since, last_finish_));
  });
}

Result<DrainReport> PgLessonQueue::DrainNow(Duration timeout) {
  if (!owner()) return FailedPreconditionError("this process does not run the lesson workers");
  const Time deadline = env_.clock->Now() + timeout;
  std::lock_guard<std::mutex> drain_lock(drain_mu_);
  MEND_RETURN_IF_ERROR(table_->MakeAllDue(env_.clock->Now(), Filter()));
  int64_t since = 0;
  {
    std::lock_guard<std::mutex> lock(mu_);
    since = ++seq_;
    ++wake_seq_;
  }
  cv_.notify_all();
  WaitIdle(since, deadline);
  DrainReport now{succeeded_, skipped_, retried_, dead_lettered_, 0};
  DrainReport report{now.succeeded - reported_.succeeded, now.skipped - reported_.skipped,
                     now.retried - reported_.retried, now.dead_lettered - reported_.dead_lettered,
                     0};
  reported_ = now;
  MEND_ASSIGN_OR_RETURN(PgJobTable::Counts counts, table_->Count());
  report.remaining = counts.pending;
  RefreshGauges();
  return report;
}

Status PgLessonQueue::Shutdown(Duration timeout) {
  std::lock_guard<std::mutex> state_lock(state_mu_);
  if (!started_ || shut_down_) return OkStatus();
  shut_down_ = true;
  const Time deadline = env_.clock->Now() + timeout;
  // Drain, then shut down, as the WAL queue does: jobs already due are still taken up until the
  // deadline; jobs waiting for a retry are not.
  int64_t since = 0;
  {
    std::lock_guard<std::mutex> lock(mu_);
    since = ++seq_;
    ++wake_seq_;
  }
  cv_.notify_all();
  WaitIdle(since, deadline);
  bool finished = false;
  {
    std::unique_lock<std::mutex> lock(mu_);
    stop_claims_ = true;
    stopping_ = true;
    cv_.notify_all();
    // Jobs held for the workers are not in flight: the stopping workers hand them back.
    finished = env_.clock->WaitUntil(
        cv_, lock, deadline, [this] { return in_flight_ == static_cast<int64_t>(held_.size()); });
  }
  runner_.CancelAll();
  for (std::thread& worker : workers_) worker.join();
  workers_.clear();
  if (poller_.joinable()) poller_.join();
  owner_.store(false);
  if (!finished) {
    return DeadlineExceededError("lesson jobs were still in flight at the shutdown deadline");
  }
  return OkStatus();
}

}  // namespace mend::lessonq
