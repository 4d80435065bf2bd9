#pragma once

// OutageBreaker, the provider outage breaker of recovery and the proxy (docs/heal.md, "Provider
// outages"; docs/proxy.md): it opens after consecutive provider failures and spaces out the probes
// that close it. Not thread-safe: its owner serialises it.

#include <cstdint>
#include <optional>

#include "mend/base/clock.h"

namespace mend::llm {

/// What recovery and the proxy know about the health of one provider endpoint (docs/heal.md,
/// "Provider outages"; docs/proxy.md). After `threshold` consecutive provider failures across the
/// endpoint's runs it opens: recovery pauses the endpoint's runs and probes one at a time, the
/// first probe `interval` after opening and each later one after twice the previous wait, capped at
/// `max_wait`. Any result that is not a provider failure closes it. Not thread-safe (the recovery
/// pass that owns it is serialised; the proxy holds a lock around it).
class OutageBreaker {
 public:
  /// A closed breaker; `threshold` below 1 counts as 1.
  OutageBreaker(int threshold, Duration interval, Duration max_wait)
      : threshold_(threshold < 1 ? 1 : threshold), interval_(interval), max_wait_(max_wait) {}

  /// What the caller must do after reporting a result.
  enum class Change { kNone, kOpened, kClosed };

  /// A resumed run failed because of the provider. Opens the breaker at the threshold; while open,
  /// a failed probe schedules the next one.
  Change OnProviderFailure(Time now);
  /// A resumed run completed, waits, or failed for another reason: the provider answered.
  Change OnOtherResult();

  /// Whether the endpoint is in its outage pause.
  bool open() const { return open_; }
  /// While open: whether a probe may run now.
  bool ProbeDue(Time now) const { return open_ && now >= next_probe_at_; }
  /// While open: when the next probe may run; nullopt when closed.
  std::optional<Time> next_probe_at() const {
    return open_ ? std::optional<Time>(next_probe_at_) : std::nullopt;
  }
  /// While open: when it opened.
  Time opened_at() const { return opened_at_; }
  /// Provider failures in a row so far.
  int consecutive_failures() const { return consecutive_; }

 private:
  const int threshold_;
  const Duration interval_;
  const Duration max_wait_;
  int consecutive_ = 0;
  bool open_ = false;
  int failed_probes_ = 0;
  Time next_probe_at_{};
  Time opened_at_{};
};

}  // namespace mend::llm
