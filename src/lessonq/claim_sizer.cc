#include "lessonq/claim_sizer.h"

#include <algorithm>

namespace mend::lessonq {

ClaimSizer::ClaimSizer(Duration horizon, int max_batch)
    : horizon_(horizon), max_batch_(std::max(max_batch, 1)) {}

void ClaimSizer::Record(Duration took) {
  const double nanos = static_cast<double>(std::max(took.count(), Duration::rep{0}));
  mean_nanos_ = mean_nanos_.has_value() ? 0.75 * *mean_nanos_ + 0.25 * nanos : nanos;
}

int ClaimSizer::Limit() const {
  if (!mean_nanos_.has_value() || horizon_.count() <= 0) return 1;
  // Computed in floating point: the quotient of a long horizon and a mean of zero (an attempt
  // shorter than the clock's resolution) is infinite, and the cap applies before the conversion.
  const double n = static_cast<double>(horizon_.count()) / *mean_nanos_;
  if (!(n < static_cast<double>(max_batch_))) return max_batch_;
  return std::max(1, static_cast<int>(n));
}

}  // namespace mend::lessonq
