#include "heal/outage_breaker.h"

#include "heal/recovery_policy.h"

namespace mend::heal {

OutageBreaker::Change OutageBreaker::OnProviderFailure(Time now) {
  ++consecutive_;
  if (open_) {
    // The probes back off like a failing run does: interval, 2×, 4×, ... up to the cap.
    ++failed_probes_;
    next_probe_at_ = now + BackoffDelay(interval_, max_wait_, failed_probes_ + 1);
    return Change::kNone;
  }
  if (consecutive_ < threshold_) return Change::kNone;
  open_ = true;
  failed_probes_ = 0;
  opened_at_ = now;
  next_probe_at_ = now + BackoffDelay(interval_, max_wait_, 1);
  return Change::kOpened;
}

OutageBreaker::Change OutageBreaker::OnOtherResult() {
  consecutive_ = 0;
  if (!open_) return Change::kNone;
  open_ = false;
  failed_probes_ = 0;
  return Change::kClosed;
}

}  // namespace mend::heal
