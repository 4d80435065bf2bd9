#pragma once

#include <optional>

#include "mend/base/clock.h"

namespace mend::lessonq {

// How many jobs one claim of the PostgreSQL queue takes (docs/lesson_queue.md, "Claims"). A claim
// may take jobs ahead of the workers, which start them one after another from memory: that saves
// a statement per job while attempts are fast, but a job taken ahead is held from every other
// process while it waits, and its claim runs meanwhile. So a claim takes ahead only as many jobs
// as the workers are expected to start within `horizon`, judged by the mean duration of the recent
// attempts: every worker claims for itself alone until the first attempt has ended, and again
// once attempts are slow (a model's answer takes seconds). Not thread-safe.
class ClaimSizer {
 public:
  // `max_batch` (at least 1) caps every claim.
  ClaimSizer(Duration horizon, int max_batch);

  // Records how long one attempt took.
  void Record(Duration took);
  // The jobs the next claim may take: horizon divided by the mean attempt (an exponentially
  // weighted mean, weight 1/4 for the newest), between 1 and max_batch; 1 before any attempt was
  // recorded or when the horizon is not positive.
  int Limit() const;

 private:
  const Duration horizon_;
  const int max_batch_;
  std::optional<double> mean_nanos_;
};

}  // namespace mend::lessonq
