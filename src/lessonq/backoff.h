#pragma once

#include <cstdint>

#include "mend/base/clock.h"

namespace mend::lessonq {

// How long to wait before retrying a job whose attempt number `attempt` (1-based) failed
// transiently:
//
//   base  = min(initial × multiplier^(attempt − 1), max_delay)
//   delay = base × (1 − jitter + 2 × jitter × unit)
//
// `unit` is a uniform sample in [0, 1) (Random::Uniform01), so the delay lies in
// [base × (1 − jitter), base × (1 + jitter)). Attempts below 1 count as 1; a negative result is
// clamped to zero. Pure.
struct BackoffPolicy {
  Duration initial_delay;
  Duration max_delay;
  double multiplier = 2.0;
  double jitter = 0.0;
};
Duration RetryDelay(const BackoffPolicy& policy, int64_t attempt, double unit);

}  // namespace mend::lessonq
