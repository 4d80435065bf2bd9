#include "mend/base/manual_clock.h"

#include <gtest/gtest.h>

#include <atomic>
#include <thread>
#include <vector>

namespace mend {
namespace {

using std::chrono::hours;
using std::chrono::milliseconds;
using std::chrono::seconds;

TEST(ManualClockTest, MovesOnlyWhenTold) {
  const Time start = Time{} + hours(1);
  ManualClock clock(start);
  EXPECT_EQ(clock.Now(), start);
  EXPECT_EQ(clock.Now(), start);
  clock.Advance(seconds(5));
  EXPECT_EQ(clock.Now(), start + seconds(5));
  clock.Set(start - hours(1));  // Backwards is allowed.
  EXPECT_EQ(clock.Now(), start - hours(1));
}

TEST(ManualClockTest, WaitUntilAPassedDeadlineTimesOutAtOnce) {
  ManualClock clock;
  std::mutex mu;
  std::condition_variable cv;
  std::unique_lock<std::mutex> lock(mu);
  EXPECT_EQ(clock.WaitUntil(cv, lock, clock.Now()), std::cv_status::timeout);
  EXPECT_TRUE(lock.owns_lock());
  EXPECT_EQ(clock.waiters(), 0);
}

// A worker waits for `deadline` and records every return of WaitUntil.
struct TimedWaiter {
  std::mutex mu;
  std::condition_variable cv;        // The worker waits on this one.
  std::condition_variable progress;  // The test waits on this one.
  std::vector<std::cv_status> returns;

  void Run(ManualClock& clock, Time deadline) {
    std::unique_lock<std::mutex> lock(mu);
    while (true) {
      const std::cv_status s = clock.WaitUntil(cv, lock, deadline);
      EXPECT_TRUE(lock.owns_lock());
      returns.push_back(s);
      progress.notify_all();
      if (s == std::cv_status::timeout) return;
    }
  }
};

TEST(ManualClockTest, AdvancePastTheDeadlineWakesTheWaiterWithTimeout) {
  ManualClock clock;
  TimedWaiter w;
  const Time deadline = clock.Now() + seconds(10);
  std::thread worker([&] { w.Run(clock, deadline); });
  clock.BlockUntilWaiters(1);

  clock.Advance(seconds(5));
  {
    std::unique_lock<std::mutex> lock(w.mu);
    w.progress.wait(lock, [&] { return !w.returns.empty(); });
    // Woken to re-check, but not as a timeout: the deadline is still ahead.
    for (std::cv_status s : w.returns) EXPECT_EQ(s, std::cv_status::no_timeout);
    // The worker re-registered before releasing its mutex.
    EXPECT_EQ(clock.waiters(), 1);
  }

  clock.Advance(seconds(5));
  worker.join();
  ASSERT_FALSE(w.returns.empty());
  EXPECT_EQ(w.returns.back(), std::cv_status::timeout);
  EXPECT_GE(clock.Now(), deadline);
  EXPECT_EQ(clock.waiters(), 0);
}

TEST(ManualClockTest, PredicateWaitReturnsWhenNotifiedWithoutTimePassing) {
  ManualClock clock;
  std::mutex mu;
  std::condition_variable cv;
  bool ready = false;
  bool result = false;
  std::thread worker([&] {
    std::unique_lock<std::mutex> lock(mu);
    result = clock.WaitUntil(cv, lock, clock.Now() + hours(1), [&] { return ready; });
  });
  clock.BlockUntilWaiters(1);
  {
    std::lock_guard<std::mutex> guard(mu);
    ready = true;
  }
  cv.notify_all();
  worker.join();
  EXPECT_TRUE(result);
}

TEST(ManualClockTest, PredicateWaitReturnsFalseAtTheDeadline) {
  ManualClock clock;
  std::mutex mu;
  std::condition_variable cv;
  bool result = true;
  std::thread worker([&] {
    std::unique_lock<std::mutex> lock(mu);
    result = clock.WaitUntil(cv, lock, clock.Now() + seconds(30), [] { return false; });
  });
  clock.BlockUntilWaiters(1);
  clock.Advance(seconds(30));
  worker.join();
  EXPECT_FALSE(result);
}

TEST(ManualClockTest, SleepUntilReturnsOnlyOnceTheDeadlineIsReached) {
  ManualClock clock;
  const Time deadline = clock.Now() + hours(1);
  std::atomic<bool> woke{false};
  Time woke_at{};
  std::thread sleeper([&] {
    clock.SleepUntil(deadline);
    woke_at = clock.Now();
    woke = true;
  });
  clock.BlockUntilWaiters(1);
  clock.Advance(std::chrono::minutes(59));
  clock.BlockUntilWaiters(1);
  EXPECT_FALSE(woke);
  clock.Advance(std::chrono::minutes(1));
  sleeper.join();
  EXPECT_TRUE(woke);
  EXPECT_GE(woke_at, deadline);
}

TEST(ManualClockTest, OneAdvanceWakesEveryWaiterSharingAMutex) {
  ManualClock clock;
  std::mutex mu;
  std::condition_variable cv;
  const Time deadline = clock.Now() + seconds(1);
  std::atomic<int> timed_out{0};
  std::vector<std::thread> workers;
  for (int i = 0; i < 4; ++i) {
    workers.emplace_back([&] {
      std::unique_lock<std::mutex> lock(mu);
      if (!clock.WaitUntil(cv, lock, deadline, [] { return false; })) ++timed_out;
    });
  }
  clock.BlockUntilWaiters(4);
  EXPECT_EQ(clock.waiters(), 4);
  clock.Advance(seconds(1));
  for (std::thread& t : workers) t.join();
  EXPECT_EQ(timed_out, 4);
}

// Waiters whose mutex and condition variable live on their stack come and go while another thread
// advances time; a notification must never touch a waiter that already left (run under ASan).
TEST(ManualClockTest, ShortLivedWaitersSurviveConcurrentAdvances) {
  ManualClock clock;
  std::atomic<bool> done{false};
  std::thread sleeper([&] {
    for (int i = 0; i < 300; ++i) clock.SleepFor(milliseconds(1));
    done = true;
  });
  const Time start = clock.Now();
  while (!done) clock.Advance(milliseconds(1));
  sleeper.join();
  EXPECT_GE(clock.Now() - start, milliseconds(300));
}

TEST(SystemClockTest, WaitUntilAPassedDeadlineTimesOut) {
  SystemClock* clock = SystemClock::Default();
  EXPECT_EQ(clock, SystemClock::Default());
  std::mutex mu;
  std::condition_variable cv;
  std::unique_lock<std::mutex> lock(mu);
  EXPECT_EQ(clock->WaitUntil(cv, lock, clock->Now() - seconds(1)), std::cv_status::timeout);
}

}  // namespace
}  // namespace mend
