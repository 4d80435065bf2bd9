#include "mend/lessonq/lesson_queue.h"

#include <algorithm>
#include <utility>

#include "lessonq/lesson_queue_impl.h"
#include "lessonq/queue_options.h"
#include "mend/base/home_layout.h"
#include "mend/lessonq/wal_codec.h"
#include "mend/obs/metrics.h"

namespace mend::lessonq {
namespace {

Status ValidateOptions(const QueueOptions& o) {
  if (o.base_dir.empty()) return InvalidArgumentError("lesson queue: base_dir is required");
  return ValidateQueueOptions(o);
}

Status CheckId(const std::string& id) {
  if (!IsJobId(id)) return InvalidArgumentError("not a lesson job id: \"" + id + "\"");
  return OkStatus();
}

}  // namespace

std::string_view JobFateName(JobFate fate) {
  switch (fate) {
    case JobFate::kStored:
      return "stored";
    case JobFate::kSkipped:
      return "skipped";
    case JobFate::kRetrying:
      return "retrying";
    case JobFate::kDeadLettered:
      return "dead_lettered";
  }
  return "unknown";
}

std::string_view EnqueueOutcomeName(EnqueueOutcome outcome) {
  switch (outcome) {
    case EnqueueOutcome::kAccepted:
      return "accepted";
    case EnqueueOutcome::kDeduped:
      return "deduped";
    case EnqueueOutcome::kRejectedFull:
      return "rejected_full";
    case EnqueueOutcome::kDroppedOldest:
      return "dropped_oldest";
  }
  return "unknown";
}

LessonQueue::Impl::Impl(Env env, QueueOptions options, obs::MetricsRegistry* metrics,
                        std::unique_ptr<WalDir> wal, std::unique_ptr<WalDir> dlq)
    : env_(env),
      options_(std::move(options)),
      owned_metrics_(metrics == nullptr ? std::make_unique<obs::MetricsRegistry>() : nullptr),
      metrics_(metrics == nullptr ? *owned_metrics_ : *metrics),
      wal_(std::move(wal)),
      dlq_(std::move(dlq)),
      heap_(*env.clock, options_.capacity, &metrics_.queue_depth),
      runner_(*env.clock, options_.job_timeout) {}

LessonQueue::Impl::~Impl() { Shutdown(Duration::zero()).IgnoreError(); }

void LessonQueue::Impl::CountEnqueue(EnqueueOutcome outcome) {
  metrics_.enqueue_total.WithLabels({std::string(EnqueueOutcomeName(outcome))}).Inc();
}

Result<EnqueueResult> LessonQueue::Impl::Enqueue(const LessonRequest& request) {
  const Time now = env_.clock->Now();
  Job job{JobIdFor(request), request, now, now, 0, ""};
  EnqueueResult result{job.id, false, EnqueueOutcome::kDeduped};
  {
    // Before the record exists, so the poller never finds it foreign.
    std::lock_guard<std::mutex> lock(scope_mu_);
    own_ids_.insert(job.id);
  }
  // A job this process already holds has a record too; skip the write.
  if (owner() && heap_.Knows(job.id)) {
    CountEnqueue(result.outcome);
    return result;
  }
  MEND_ASSIGN_OR_RETURN(result.created, wal_->Append(job));
  if (result.created) {
    result.outcome = owner() && Takes(job) ? Hand(std::move(job)) : EnqueueOutcome::kAccepted;
  } else if (owner()) {
    LoadOne(job.id);  // the pending record is this process's own now
  }
  CountEnqueue(result.outcome);
  return result;
}

bool LessonQueue::Impl::IsOwn(const std::string& id) {
  std::lock_guard<std::mutex> lock(scope_mu_);
  return own_ids_.count(id) > 0;
}

bool LessonQueue::Impl::Takes(const Job& job) {
  if (!JobFitsEndpoint(job.request, scope_.endpoint)) return false;
  return scope_.jobs == JobsTaken::kAll || IsOwn(job.id);
}

void LessonQueue::Impl::LoadOne(const std::string& id) {
  if (heap_.Knows(id)) return;
  Result<Job> job = wal_->Read(id);
  if (!job.ok()) {
    if (job.status().code() == StatusCode::kDataLoss) metrics_.wal_corruption_total.Inc();
    return;
  }
  if (Takes(*job)) heap_.TryPush(std::move(job).value());  // no room: the poller loads it later
}

// The record is already durable, so a job that does not fit in memory is not lost: the poller
// reloads it when there is room again, or the next start replays it.
EnqueueOutcome LessonQueue::Impl::Hand(Job job) {
  if (options_.drop_oldest) {
    std::optional<Job> evicted;
    heap_.PushEvictingOldest(std::move(job), &evicted);
    return evicted.has_value() ? EnqueueOutcome::kDroppedOldest : EnqueueOutcome::kAccepted;
  }
  const Time deadline = env_.clock->Now() + options_.block_timeout;
  switch (heap_.PushWaiting(std::move(job), deadline)) {
    case PushOutcome::kFull:
      return EnqueueOutcome::kRejectedFull;
    case PushOutcome::kPushed:
    case PushOutcome::kDuplicate:  // the poller found the record first
    case PushOutcome::kClosed:     // shutting down: the record waits for the next start
      break;
  }
  return EnqueueOutcome::kAccepted;
}

Status LessonQueue::Impl::Start(Processor processor, WorkerScope scope) {
  std::lock_guard<std::mutex> lock(state_mu_);
  if (started_) return FailedPreconditionError("the lesson queue was already started");
  MEND_ASSIGN_OR_RETURN(owner_lock_, env_.fs->Lock(home::LessonQueueLockFile(options_.base_dir)));
  scope_ = std::move(scope);  // before Replay, which reads it
  if (Status s = Replay(); !s.ok()) {
    owner_lock_.reset();
    return s;
  }
  started_ = true;
  processor_ = std::move(processor);
  owner_.store(true);
  StartThreads();
  return OkStatus();
}

namespace {

// A job in both wal/ and dlq/ is what a crash between the two writes of a move leaves (both moves
// write the destination first). A WAL copy with no attempt and no error is a dead letter retried
// by hand (RetryDeadLetter), so it is the newer; any other WAL copy is the state before the job
// became a dead letter. (A job dead-lettered at its first attempt also has such a WAL copy: it is
// then processed once more, which at-least-once allows.)
bool IsRetriedCopy(const Job& wal_copy) {
  return wal_copy.attempts == 0 && wal_copy.last_error.empty();
}

}  // namespace

Status LessonQueue::Impl::Replay() {
  MEND_ASSIGN_OR_RETURN(WalScan scan, wal_->Scan());
  // Settle the jobs a crash left in both directories, so a dead letter is not processed again
  // (nor comes back after a purge) and a retried one is not listed dead as well.
  MEND_ASSIGN_OR_RETURN(std::vector<std::string> dead_ids, dlq_->ListIds());
  if (!dead_ids.empty()) {
    std::sort(dead_ids.begin(), dead_ids.end());
    std::vector<std::string> superseded;
    std::vector<Job> live;
    live.reserve(scan.jobs.size());
    for (Job& job : scan.jobs) {
      const bool in_both = std::binary_search(dead_ids.begin(), dead_ids.end(), job.id);
      if (in_both && !IsRetriedCopy(job)) {
        superseded.push_back(job.id);
        continue;
      }
      if (in_both) dlq_->Remove(job.id).IgnoreError();  // a failure leaves it for the next start
      live.push_back(std::move(job));
    }
    scan.jobs = std::move(live);
    wal_->RemoveMany(superseded).IgnoreError();
  }
  metrics_.wal_corruption_total.Inc(static_cast<double>(scan.corrupt_removed));
  std::sort(scan.jobs.begin(), scan.jobs.end(),
            [](const Job& a, const Job& b) { return a.enqueued_at < b.enqueued_at; });
  const Time cutoff = env_.clock->Now() - options_.stale_after;
  std::vector<std::string> stale;
  for (Job& job : scan.jobs) {
    if (job.enqueued_at < cutoff) {
      stale.push_back(job.id);
      continue;
    }
    if (!Takes(job)) {
      std::lock_guard<std::mutex> lock(scope_mu_);
      declined_.insert(job.id);
      continue;
    }
    // Oldest first; what does not fit stays in the WAL for the poller.
    if (heap_.TryPush(std::move(job)) == PushOutcome::kFull) break;
  }
  // One directory sync for all of them; a failure leaves them for the next start to discard.
  if (wal_->RemoveMany(stale).ok()) {
    metrics_.stale_discarded_total.Inc(static_cast<double>(stale.size()));
  }
  RefreshGauges();
  return OkStatus();
}

Result<QueueStats> LessonQueue::Impl::Stats() {
  QueueStats stats;
  stats.queue_depth = static_cast<int64_t>(heap_.queued());
  MEND_ASSIGN_OR_RETURN(std::vector<std::string> wal_ids, wal_->ListIds());
  MEND_ASSIGN_OR_RETURN(std::vector<std::string> dlq_ids, dlq_->ListIds());
  stats.wal_records = static_cast<int64_t>(wal_ids.size());
  stats.dlq_size = static_cast<int64_t>(dlq_ids.size());
  return stats;
}

Result<std::vector<Job>> LessonQueue::Impl::SortedScan(WalDir& dir) {
  MEND_ASSIGN_OR_RETURN(WalScan scan, dir.Scan());
  std::stable_sort(scan.jobs.begin(), scan.jobs.end(),
                   [](const Job& a, const Job& b) { return a.enqueued_at < b.enqueued_at; });
  return std::move(scan.jobs);
}

Result<std::vector<Job>> LessonQueue::Impl::Pending() { return SortedScan(*wal_); }
Result<std::vector<Job>> LessonQueue::Impl::DeadLetters() { return SortedScan(*dlq_); }

Status LessonQueue::Impl::RetryDeadLetter(const std::string& id) {
  MEND_RETURN_IF_ERROR(CheckId(id));
  MEND_ASSIGN_OR_RETURN(Job job, dlq_->Read(id));
  job.attempts = 0;
  job.last_error.clear();
  job.next_attempt_at = env_.clock->Now();
  // WAL first: a crash between the two writes leaves the job in both places, never in neither.
  MEND_RETURN_IF_ERROR(wal_->Update(job));
  MEND_RETURN_IF_ERROR(dlq_->Remove(id));
  // No room: the poller reloads it later.
  if (owner() && Takes(job)) heap_.TryPush(std::move(job));
  RefreshGauges();
  return OkStatus();
}

Status LessonQueue::Impl::PurgeDeadLetter(const std::string& id) {
  MEND_RETURN_IF_ERROR(CheckId(id));
  MEND_RETURN_IF_ERROR(dlq_->Remove(id));
  // A WAL copy left by a crash while the job became a dead letter would bring the purged job back
  // at the next start; one retried by hand is a job of its own now and stays.
  if (Result<Job> wal_copy = wal_->Read(id); wal_copy.ok() && !IsRetriedCopy(*wal_copy)) {
    MEND_RETURN_IF_ERROR(wal_->Remove(id));
  }
  RefreshGauges();
  return OkStatus();
}

// ---- LessonQueue: forwarding ----

Result<std::unique_ptr<LessonQueue>> LessonQueue::Open(Env env, QueueOptions options,
                                                       obs::MetricsRegistry* metrics) {
  MEND_RETURN_IF_ERROR(ValidateOptions(options));
  const size_t max_record = options.chatcli_safe ? kChatcliMaxRecordBytes : 0;
  MEND_ASSIGN_OR_RETURN(std::unique_ptr<WalDir> wal,
                        WalDir::Open(*env.fs, home::LessonWalDir(options.base_dir), max_record));
  MEND_ASSIGN_OR_RETURN(std::unique_ptr<WalDir> dlq,
                        WalDir::Open(*env.fs, home::LessonDlqDir(options.base_dir), max_record));
  auto impl =
      std::make_unique<Impl>(env, std::move(options), metrics, std::move(wal), std::move(dlq));
  return std::unique_ptr<LessonQueue>(new LessonQueue(std::move(impl)));
}

LessonQueue::LessonQueue(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
LessonQueue::~LessonQueue() = default;

Result<EnqueueResult> LessonQueue::Enqueue(const LessonRequest& request) {
  return impl_->Enqueue(request);
}
Status LessonQueue::Start(Processor processor, WorkerScope scope) {
  return impl_->Start(std::move(processor), std::move(scope));
}
bool LessonQueue::owner() const { return impl_->owner(); }
Result<DrainReport> LessonQueue::DrainNow(Duration timeout) { return impl_->DrainNow(timeout); }
Status LessonQueue::Shutdown(Duration timeout) { return impl_->Shutdown(timeout); }
Result<QueueStats> LessonQueue::Stats() { return impl_->Stats(); }
Result<std::vector<Job>> LessonQueue::Pending() { return impl_->Pending(); }
Result<std::vector<Job>> LessonQueue::DeadLetters() { return impl_->DeadLetters(); }
Status LessonQueue::RetryDeadLetter(const std::string& id) { return impl_->RetryDeadLetter(id); }
Status LessonQueue::PurgeDeadLetter(const std::string& id) { return impl_->PurgeDeadLetter(id); }
const QueueOptions& LessonQueue::options() const { return impl_->options(); }
std::string LessonQueue::location() const { return "the WAL at " + impl_->options().base_dir; }

}  // namespace mend::lessonq
