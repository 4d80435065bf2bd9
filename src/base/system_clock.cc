#include <thread>

#include "mend/base/clock.h"

namespace mend {

Time SystemClock::Now() { return std::chrono::system_clock::now(); }

std::cv_status SystemClock::WaitUntil(std::condition_variable& cv,
                                      std::unique_lock<std::mutex>& lock, Time deadline) {
  return cv.wait_until(lock, deadline);
}

void SystemClock::SleepUntil(Time deadline) { std::this_thread::sleep_until(deadline); }

SystemClock* SystemClock::Default() {
  static SystemClock* clock = new SystemClock();
  return clock;
}

}  // namespace mend
