#include "mend/base/manual_clock.h"

#include <algorithm>

namespace mend {

// A thread blocked in WaitUntil(). It lives on that thread's stack. Advance() must notify it with
// the waiter's own mutex held (otherwise a notification sent after the waiter registered but
// before it blocked would be lost), and it cannot take that mutex while holding mu_ (the waiter
// takes mu_ with its mutex held: the lock order is waiter mutex → mu_). So Advance() pins the
// waiters under mu_, notifies them without mu_, and unpins them; a waiter leaving WaitUntil()
// waits until nobody has it pinned, because its mutex and condition variable may die right after.
struct ManualClock::Waiter {
  std::condition_variable* cv;
  std::mutex* mu;
  int pins = 0;
};

ManualClock::ManualClock(Time start) : now_(start) {}

Time ManualClock::Now() {
  std::lock_guard<std::mutex> guard(mu_);
  return now_;
}

std::cv_status ManualClock::WaitUntil(std::condition_variable& cv,
                                      std::unique_lock<std::mutex>& lock, Time deadline) {
  Waiter self{&cv, lock.mutex()};
  {
    std::lock_guard<std::mutex> guard(mu_);
    if (now_ >= deadline) return std::cv_status::timeout;
    waiters_.push_back(&self);
    waiters_changed_.notify_all();
  }
  cv.wait(lock);
  // Leave with the caller's mutex released so that an Advance() that pinned us can take it.
  lock.unlock();
  std::cv_status result;
  {
    std::unique_lock<std::mutex> guard(mu_);
    waiters_.erase(std::find(waiters_.begin(), waiters_.end(), &self));
    waiters_changed_.wait(guard, [&] { return self.pins == 0; });
    result = now_ >= deadline ? std::cv_status::timeout : std::cv_status::no_timeout;
  }
  lock.lock();
  return result;
}

void ManualClock::SleepUntil(Time deadline) {
  std::mutex mu;
  std::condition_variable cv;
  std::unique_lock<std::mutex> lock(mu);
  while (WaitUntil(cv, lock, deadline) != std::cv_status::timeout) {
  }
}

void ManualClock::Advance(Duration d) {
  {
    std::lock_guard<std::mutex> guard(mu_);
    now_ += std::chrono::duration_cast<Time::duration>(d);
  }
  NotifyAll();
}

void ManualClock::Set(Time t) {
  {
    std::lock_guard<std::mutex> guard(mu_);
    now_ = t;
  }
  NotifyAll();
}

void ManualClock::NotifyAll() {
  std::vector<Waiter*> pinned;
  {
    std::lock_guard<std::mutex> guard(mu_);
    pinned = waiters_;
    for (Waiter* w : pinned) ++w->pins;
  }
  for (Waiter* w : pinned) {
    // A waiter holds its mutex from registering until cv.wait() releases it, so once we hold it
    // the waiter is blocked (or already leaving) and the notification cannot be lost.
    std::lock_guard<std::mutex> waiter_guard(*w->mu);
    w->cv->notify_all();
  }
  std::lock_guard<std::mutex> guard(mu_);
  for (Waiter* w : pinned) --w->pins;
  waiters_changed_.notify_all();
}

int ManualClock::waiters() const {
  std::lock_guard<std::mutex> guard(mu_);
  return static_cast<int>(waiters_.size());
}

void ManualClock::BlockUntilWaiters(int n) {
  std::unique_lock<std::mutex> guard(mu_);
  waiters_changed_.wait(guard, [&] { return static_cast<int>(waiters_.size()) >= n; });
}

}  // namespace mend
