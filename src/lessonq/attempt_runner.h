#pragma once

#include <atomic>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>

#include "mend/base/clock.h"
#include "mend/lessonq/durable_queue.h"

namespace mend::lessonq {

// How one processing attempt ended, as a worker acts on it.
enum class Verdict {
  kSuccess,    // a lesson was stored: acknowledge
  kSkipped,    // nothing actionable: acknowledge
  kTransient,  // retry with backoff, or dead-letter once max_attempts is reached
  kPermanent,  // dead-letter at once
  kAbandoned,  // shutdown gave up on the attempt: the job stays pending as it was
};

// The outcome label of mend_lessonq_attempts_total and processing_duration_seconds: a cancelled
// attempt counts as transient, since it failed for a reason outside the job.
std::string_view VerdictLabel(Verdict verdict);

// Runs processing attempts for one queue's workers, whatever holds the jobs: each attempt gets a
// deadline (start + job_timeout) and a cancellation flag, the processor's outcome (or exception)
// becomes a Verdict. Thread-safe; `clock` must outlive it.
class AttemptRunner {
 public:
  AttemptRunner(Clock& clock, Duration job_timeout) : clock_(clock), job_timeout_(job_timeout) {}

  // Runs `processor` on `job` (whose `attempts` already counts this attempt), started at `start`.
  // Sets *last_error to the failure (unchanged on success). Attempts of one job id must not
  // overlap in one runner.
  Verdict Run(const Processor& processor, const Job& job, Time start, std::string* last_error);

  // Sets the cancellation flag of every attempt past its deadline.
  void CancelOverdue();
  // Sets the flag of every attempt, now and later: their failures become kAbandoned.
  void CancelAll();

 private:
  Verdict Judge(const std::optional<Result<ProcessResult>>& result, bool late,
                std::string* last_error) const;

  struct Running {
    Time deadline;
    std::shared_ptr<std::atomic<bool>> cancel;
  };
  void Cancel(bool all);

  Clock& clock_;
  const Duration job_timeout_;
  std::atomic<bool> cancelled_{false};
  std::mutex mu_;
  std::map<std::string, Running> running_;  // by job id
};

}  // namespace mend::lessonq
