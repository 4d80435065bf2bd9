#include "mend/llm/outage_breaker.h"

namespace mend::llm {
namespace {

// interval, 2x, 4x, ... for the n-th wait, capped at `max`.
Duration ProbeDelay(Duration interval, Duration max, int64_t n) {
  Duration delay = interval;
  for (int64_t k = 1; k < n && delay < max; ++k) delay *= 2;
  return delay < max ? delay : max;
}

}  // namespace

OutageBreaker::Change OutageBreaker::OnProviderFailure(Time now) {
  ++consecutive_;
  if (open_) {
    // The probes back off like a failing run does: interval, 2×, 4×, ... up to the cap.
    ++failed_probes_;
    next_probe_at_ = now + ProbeDelay(interval_, max_wait_, failed_probes_ + 1);
    return Change::kNone;
  }
  if (consecutive_ < threshold_) return Change::kNone;
  open_ = true;
  failed_probes_ = 0;
  opened_at_ = now;
  next_probe_at_ = now + ProbeDelay(interval_, max_wait_, 1);
  return Change::kOpened;
}

OutageBreaker::Change OutageBreaker::OnOtherResult() {
  consecutive_ = 0;
  if (!open_) return Change::kNone;
  open_ = false;
  failed_probes_ = 0;
  return Change::kClosed;
}

}  // namespace mend::llm
