// The threads of runs driven by the server (serve_context.h).
#include <chrono>
#include <utility>
#include <vector>

#include "server/serve_context.h"

namespace mend::server {

BackgroundRuns::~BackgroundRuns() {
  std::map<std::string, std::thread> running;
  std::vector<std::thread> finished;
  {
    std::lock_guard<std::mutex> lock(mu_);
    stopping_.store(true);
    running.swap(threads_);
    finished.swap(finished_);
  }
  for (auto& [id, thread] : running) thread.join();
  for (std::thread& thread : finished) thread.join();
}

Status BackgroundRuns::Start(const std::string& run_id, std::function<void()> work) {
  std::vector<std::thread> finished;
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (stopping_.load()) return UnavailableError("the server is shutting down");
    if (threads_.count(run_id) != 0) {
      return AlreadyExistsError("run " + run_id + " is already being driven by this server");
    }
    finished.swap(finished_);
    threads_.emplace(run_id, std::thread([this, run_id, work = std::move(work)] {
                       work();
                       Finished(run_id);
                     }));
  }
  for (std::thread& thread : finished) thread.join();
  return OkStatus();
}

void BackgroundRuns::Finished(const std::string& run_id) {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = threads_.find(run_id);
  if (it != threads_.end()) {
    finished_.push_back(std::move(it->second));
    threads_.erase(it);
  }
  done_.notify_all();
}

bool BackgroundRuns::IsDriving(const std::string& run_id) const {
  std::lock_guard<std::mutex> lock(mu_);
  return threads_.count(run_id) != 0;
}

size_t BackgroundRuns::size() const {
  std::lock_guard<std::mutex> lock(mu_);
  return threads_.size();
}

int BackgroundRuns::Drain(Clock& clock, Duration timeout) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stopping_.store(true);
  }
  return WaitIdle(clock, timeout);
}

int BackgroundRuns::WaitIdle(Clock& clock, Duration timeout) {
  std::unique_lock<std::mutex> lock(mu_);
  const Time deadline = clock.Now() + timeout;
  while (!threads_.empty()) {
    if (clock.WaitUntil(done_, lock, deadline) == std::cv_status::timeout) break;
  }
  return static_cast<int>(threads_.size());
}

}  // namespace mend::server
