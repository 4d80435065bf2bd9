#pragma once

// Time in mend: the Time and Duration types, the Clock seam (Now, timed waits, sleeps) and
// SystemClock. Every wait, retry, backoff and expiry goes through a Clock, so tests run in virtual
// time with ManualClock (manual_clock.h, docs/testing.md). Clocks are thread-safe.

#include <chrono>
#include <condition_variable>
#include <mutex>

namespace mend {

/// Wall-clock time; RFC 3339 in files and on the wire (see time_format.h).
using Time = std::chrono::system_clock::time_point;
using Duration = std::chrono::nanoseconds;  ///< a span of time; std::chrono converts to it

/// The source of time and of timed waits. Every component that waits, retries, backs off or
/// expires something takes a Clock so tests can run it in virtual time with ManualClock.
/// Implementations are thread-safe.
class Clock {
 public:
  virtual ~Clock() = default;

  /// The current time.
  virtual Time Now() = 0;

  /// Blocks on `cv` (with `lock` held on entry and on return, like condition_variable::wait_until)
  /// until notified or until Now() >= deadline. May return spuriously: callers re-check their
  /// condition in a loop. Returns std::cv_status::timeout when Now() >= deadline on return.
  virtual std::cv_status WaitUntil(std::condition_variable& cv, std::unique_lock<std::mutex>& lock,
                                   Time deadline) = 0;

  /// Waits until `pred()` holds or the deadline passes; returns pred() at the end.
  template <typename Pred>
  bool WaitUntil(std::condition_variable& cv, std::unique_lock<std::mutex>& lock, Time deadline,
                 Pred pred) {
    while (!pred()) {
      if (WaitUntil(cv, lock, deadline) == std::cv_status::timeout) return pred();
    }
    return true;
  }

  /// Blocks the calling thread until Now() >= deadline.
  virtual void SleepUntil(Time deadline) = 0;
  /// Blocks the calling thread for `d`.
  void SleepFor(Duration d) { SleepUntil(Now() + d); }
};

/// The real clock: std::chrono::system_clock for Now(), real timed waits.
class SystemClock final : public Clock {
 public:
  Time Now() override;
  std::cv_status WaitUntil(std::condition_variable& cv, std::unique_lock<std::mutex>& lock,
                           Time deadline) override;
  using Clock::WaitUntil;
  void SleepUntil(Time deadline) override;

  /// A process-wide instance; only main() and defaults should use it.
  static SystemClock* Default();
};

}  // namespace mend
