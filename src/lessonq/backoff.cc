#include "lessonq/backoff.h"

#include <algorithm>
#include <cmath>

namespace mend::lessonq {

Duration RetryDelay(const BackoffPolicy& policy, int64_t attempt, double unit) {
  // Computed in floating point: multiplier^(attempt − 1) overflows integers after a few dozen
  // attempts, and the cap must apply before the conversion back to a Duration.
  const double initial = static_cast<double>(policy.initial_delay.count());
  const double cap = static_cast<double>(policy.max_delay.count());
  const double exponent = static_cast<double>(std::max<int64_t>(attempt, 1) - 1);
  double base = initial * std::pow(policy.multiplier, exponent);
  if (!std::isfinite(base) || base > cap) base = cap;
  const double factor = 1.0 - policy.jitter + 2.0 * policy.jitter * unit;
  const double delay = std::max(0.0, base * factor);
  return Duration(static_cast<Duration::rep>(std::llround(delay)));
}

}  // namespace mend::lessonq
