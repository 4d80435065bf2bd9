#pragma once

// ManualClock, the Clock of tests: time moves only when the test calls Advance or Set, so queues,
// retries and leases are tested in virtual time without real sleeps (docs/testing.md). Thread-safe.

#include <mutex>
#include <vector>

#include "mend/base/clock.h"

namespace mend {

/// A clock that only moves when told to. Advance() and Set() wake every thread blocked in
/// WaitUntil()/SleepUntil() so that it re-checks its deadline against the new time: queues, retry
/// loops and leases are tested in virtual time, without real sleeps. Thread-safe.
///
/// A waiter never misses an Advance(): Advance() takes each waiter's mutex before notifying it.
/// Consequently Advance() must not be called while holding a mutex that a waiter waits with.
class ManualClock final : public Clock {
 public:
  /// A clock that reads `start` (by default a date in 2026) until moved.
  explicit ManualClock(Time start = Time{} + std::chrono::hours(24 * 365 * 56));

  Time Now() override;
  std::cv_status WaitUntil(std::condition_variable& cv, std::unique_lock<std::mutex>& lock,
                           Time deadline) override;
  using Clock::WaitUntil;
  void SleepUntil(Time deadline) override;

  /// Moves time forward by `d` and wakes every waiter.
  void Advance(Duration d);
  void Set(Time t);  ///< Moving backwards is allowed (tests of clock skew).

  /// How many threads are blocked in WaitUntil()/SleepUntil() right now. Lets a test wait until a
  /// worker is parked before advancing time (poll it with BlockUntilWaiters).
  int waiters() const;
  /// Blocks (on a real condition variable, no sleeping) until at least `n` threads are waiting.
  void BlockUntilWaiters(int n);

 private:
  struct Waiter;
  void NotifyAll();

  mutable std::mutex mu_;
  std::condition_variable waiters_changed_;
  Time now_;
  std::vector<Waiter*> waiters_;
};

}  // namespace mend
