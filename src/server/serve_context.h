#pragma once

#include <atomic>
#include <condition_variable>
#include <functional>
#include <map>
#include <mutex>
#include <string>
#include <thread>

#include "mend/base/clock.h"
#include "mend/base/result.h"
#include "mend/server/server.h"
#include "server/event_streams.h"
#include "server/improve_jobs.h"

namespace mend::app {
struct Runtime;
}  // namespace mend::app

namespace mend::server {

// The runs the server drives on its own threads (a run started, resumed, approved or answered
// through the API continues after the response). One thread per run; a run id is driven by at
// most one thread at a time. Thread-safe.
class BackgroundRuns {
 public:
  BackgroundRuns() = default;
  ~BackgroundRuns();  // waits for every thread (Drain first to bound the wait)
  BackgroundRuns(const BackgroundRuns&) = delete;
  BackgroundRuns& operator=(const BackgroundRuns&) = delete;

  // Runs `work` for `run_id` on a new thread. kAlreadyExists when that run is already driven
  // here; kUnavailable once Drain began.
  Status Start(const std::string& run_id, std::function<void()> work);
  bool IsDriving(const std::string& run_id) const;
  size_t size() const;
  // Set once Drain began: runs driven here stop at their next checkpoint (AgentOptions::stop).
  const std::atomic<bool>& stopping() const { return stopping_; }
  // Stops taking work, raises stopping(), and waits until every run returned or `timeout`
  // passed (measured on `clock`). Returns how many were still running.
  int Drain(Clock& clock, Duration timeout);
  // Waits until no run is driven here or `timeout` passed (on `clock`), without stopping
  // anything. Returns how many still are.
  int WaitIdle(Clock& clock, Duration timeout);

 private:
  void Finished(const std::string& run_id);

  mutable std::mutex mu_;
  std::condition_variable done_;
  std::map<std::string, std::thread> threads_;  // guarded by mu_
  std::vector<std::thread> finished_;           // joined by the next Start or the destructor
  std::atomic<bool> stopping_{false};
};

// What every route group shares: the runtime (borrowed), the options, the runs in flight, the open
// event streams and the improve attempt in the background.
class ServeContext {
 public:
  ServeContext(app::Runtime& runtime, ServerOptions options);

  app::Runtime& runtime() { return runtime_; }
  const ServerOptions& options() const { return options_; }
  BackgroundRuns& runs() { return runs_; }
  EventStreams& events() { return events_; }
  ImproveJobs& improve() { return improve_; }

 private:
  app::Runtime& runtime_;
  const ServerOptions options_;
  BackgroundRuns runs_;
  EventStreams events_;
  ImproveJobs improve_;  // last: its thread uses the rest, so it is joined first
};

}  // namespace mend::server
