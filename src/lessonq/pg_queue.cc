#include "lessonq/pg_queue.h"

#include <algorithm>
#include <chrono>
#include <utility>

#include "lessonq/queue_options.h"
#include "mend/obs/metrics.h"

namespace mend::lessonq {
namespace {

// The most one claim takes: enough that the statement's own cost is small beside that of its
// rows, few enough that the claim stays short.
constexpr int kMaxClaimBatch = 64;

// How soon a job claimed ahead must be expected to start (ClaimSizer): a quarter of the claim's
// margin, so that its claim still outlasts a whole attempt, and at most a second, so that one
// process does not hold back jobs other processes' idle workers could take.
Duration ClaimAheadHorizon(Duration claim_margin) {
  return std::min<Duration>(claim_margin / 4, std::chrono::seconds(1));
}

Status CheckId(const std::string& id) {
  if (!IsJobId(id)) return InvalidArgumentError("not a lesson job id: \"" + id + "\"");
  return OkStatus();
}

}  // namespace

Result<std::unique_ptr<DurableLessonQueue>> OpenPostgresLessonQueue(Env env, QueueOptions options,
                                                                    PgQueueOptions pg,
                                                                    obs::MetricsRegistry* metrics) {
  MEND_RETURN_IF_ERROR(ValidateQueueOptions(options));
  if (pg.claim_margin.count() < 0) {
    return InvalidArgumentError("lesson queue: claim_margin must not be negative");
  }
  const int pool_size = pg.pool_size > 0 ? pg.pool_size : options.workers + 2;
  MEND_ASSIGN_OR_RETURN(std::unique_ptr<PgJobTable> table, PgJobTable::Open(pg, pool_size));
  return std::unique_ptr<DurableLessonQueue>(
      new PgLessonQueue(env, std::move(options), std::move(pg), metrics, std::move(table)));
}

PgLessonQueue::PgLessonQueue(Env env, QueueOptions options, PgQueueOptions pg,
                             obs::MetricsRegistry* metrics, std::unique_ptr<PgJobTable> table)
    : env_(env),
      options_(std::move(options)),
      pg_(std::move(pg)),
      claim_for_(options_.job_timeout + pg_.claim_margin),
      owned_metrics_(metrics == nullptr ? std::make_unique<obs::MetricsRegistry>() : nullptr),
      metrics_(metrics == nullptr ? *owned_metrics_ : *metrics),
      table_(std::move(table)),
      runner_(*env.clock, options_.job_timeout),
      sizer_(ClaimAheadHorizon(pg_.claim_margin), kMaxClaimBatch) {}

PgLessonQueue::~PgLessonQueue() { Shutdown(Duration::zero()).IgnoreError(); }

void PgLessonQueue::CountEnqueue(EnqueueOutcome outcome) {
  metrics_.enqueue_total.WithLabels({std::string(EnqueueOutcomeName(outcome))}).Inc();
}

Result<EnqueueResult> PgLessonQueue::Enqueue(const LessonRequest& request) {
  const Time now = env_.clock->Now();
  Job job{JobIdFor(request), request, now, now, 0, ""};
  {
    std::lock_guard<std::mutex> lock(own_mu_);
    own_ids_.insert(job.id);
  }
  MEND_ASSIGN_OR_RETURN(bool created, table_->Insert(job, JobState::kPending));
  EnqueueResult result{job.id, created,
                       created ? EnqueueOutcome::kAccepted : EnqueueOutcome::kDeduped};
  CountEnqueue(result.outcome);
  // Workers elsewhere find the row at their next poll; this process's own are woken at once (a
  // deduped row may have just become theirs).
  if (owner()) Wake();
  return result;
}

ClaimFilter PgLessonQueue::Filter() {
  ClaimFilter filter{scope_.endpoint, std::nullopt};
  if (scope_.jobs == JobsTaken::kOwn) {
    std::lock_guard<std::mutex> lock(own_mu_);
    filter.ids.emplace(own_ids_.begin(), own_ids_.end());
  }
  return filter;
}

Status PgLessonQueue::Start(Processor processor, WorkerScope scope) {
  std::lock_guard<std::mutex> lock(state_mu_);
  if (started_) return FailedPreconditionError("the lesson queue was already started");
  started_ = true;
  processor_ = std::move(processor);
  scope_ = std::move(scope);
  owner_.store(true);
  // The poller discards stale jobs before it first waits; workers that claim one first discard it
  // themselves.
  workers_.reserve(static_cast<size_t>(options_.workers));
  for (int i = 0; i < options_.workers; ++i) workers_.emplace_back([this] { WorkerLoop(); });
  poller_ = std::thread([this] { PollerLoop(); });
  return OkStatus();
}

Result<QueueStats> PgLessonQueue::Stats() {
  MEND_ASSIGN_OR_RETURN(PgJobTable::Counts counts, table_->Count());
  QueueStats stats;
  {
    std::lock_guard<std::mutex> lock(mu_);
    stats.queue_depth = in_flight_;
  }
  stats.wal_records = counts.pending;
  stats.dlq_size = counts.dead;
  return stats;
}

Result<std::vector<Job>> PgLessonQueue::Pending() { return table_->List(JobState::kPending); }
Result<std::vector<Job>> PgLessonQueue::DeadLetters() { return table_->List(JobState::kDead); }

Status PgLessonQueue::RetryDeadLetter(const std::string& id) {
  MEND_RETURN_IF_ERROR(CheckId(id));
  MEND_RETURN_IF_ERROR(table_->Revive(id, env_.clock->Now()));
  if (owner()) Wake();
  RefreshGauges();
  return OkStatus();
}

Status PgLessonQueue::PurgeDeadLetter(const std::string& id) {
  MEND_RETURN_IF_ERROR(CheckId(id));
  MEND_RETURN_IF_ERROR(table_->Purge(id));
  RefreshGauges();
  return OkStatus();
}

// Serialized, so that a count read before a change never overwrites one read after it.
void PgLessonQueue::RefreshGauges() {
  std::lock_guard<std::mutex> lock(gauge_mu_);
  Result<PgJobTable::Counts> counts = table_->Count();
  if (!counts.ok()) return;  // the next poll tries again
  metrics_.wal_segments.Set(static_cast<double>(counts->pending));
  metrics_.dlq_size.Set(static_cast<double>(counts->dead));
}

}  // namespace mend::lessonq
