#include "lessonq/attempt_runner.h"

#include <exception>
#include <utility>

#include "lessonq/queue_metrics.h"

namespace mend::lessonq {

std::string_view VerdictLabel(Verdict verdict) {
  switch (verdict) {
    case Verdict::kSuccess:
      return kOutcomeSuccess;
    case Verdict::kSkipped:
      return kOutcomeSkipped;
    case Verdict::kPermanent:
      return kOutcomePermanent;
    case Verdict::kTransient:
    case Verdict::kAbandoned:
      break;
  }
  return kOutcomeTransient;
}

Verdict AttemptRunner::Run(const Processor& processor, const Job& job, Time start,
                           std::string* last_error) {
  auto cancel = std::make_shared<std::atomic<bool>>(cancelled_.load());
  const JobContext context{start + job_timeout_, cancel.get()};
  {
    std::lock_guard<std::mutex> lock(mu_);
    running_[job.id] = Running{context.deadline, cancel};
  }
  std::optional<Result<ProcessResult>> result;
  std::string thrown;
  // The processor is the one piece of code here that may throw (it calls into user and library
  // code); an exception is a bug that retrying will not fix, so it dead-letters the job.
  try {
    result.emplace(processor(job, context));
  } catch (const std::exception& e) {
    thrown = e.what();
  } catch (...) {
    thrown = "unknown exception";
  }
  {
    std::lock_guard<std::mutex> lock(mu_);
    running_.erase(job.id);
  }
  const bool late = clock_.Now() >= context.deadline;
  std::string error = "processor threw: " + thrown;
  const Verdict verdict = Judge(result, late, &error);
  if (verdict != Verdict::kSuccess && verdict != Verdict::kSkipped) *last_error = std::move(error);
  return verdict;
}

Verdict AttemptRunner::Judge(const std::optional<Result<ProcessResult>>& result, bool late,
                             std::string* last_error) const {
  if (!result.has_value()) return Verdict::kPermanent;
  if (result->ok()) {
    return **result == ProcessResult::kSkipped ? Verdict::kSkipped : Verdict::kSuccess;
  }
  *last_error = result->status().ToString();
  // Shutdown gave up on this attempt; its failure says nothing about the job.
  if (cancelled_.load()) return Verdict::kAbandoned;
  if (late && !IsRetryable(result->status())) {
    *last_error = "job timeout exceeded: " + *last_error;
    return Verdict::kTransient;
  }
  return IsRetryable(result->status()) ? Verdict::kTransient : Verdict::kPermanent;
}

void AttemptRunner::CancelOverdue() { Cancel(false); }

void AttemptRunner::CancelAll() {
  cancelled_.store(true);
  Cancel(true);
}

void AttemptRunner::Cancel(bool all) {
  const Time now = clock_.Now();
  std::lock_guard<std::mutex> lock(mu_);
  for (auto& [id, running] : running_) {
    if (!all && now < running.deadline) continue;
    running.cancel->store(true);
    running.cancel->notify_all();
  }
}

}  // namespace mend::lessonq
