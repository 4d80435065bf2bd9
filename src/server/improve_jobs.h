#pragma once

// The improve attempt `mend serve` runs in the background (POST /api/v1/improve, docs/http_api.md
// "Improve"): one at a time, since app::RunImproveAttempt is not for concurrent calls on one
// runtime. The latest job's state stays readable (GET /api/v1/improve/job) until the next one
// starts. Thread-safe.
#include <atomic>
#include <condition_variable>
#include <functional>
#include <mutex>
#include <optional>
#include <string>
#include <thread>

#include "mend/base/clock.h"
#include "mend/base/result.h"

namespace mend::server {

// One improve job: what it was asked, where it is, and what it came to.
struct ImproveJob {
  enum class State { kRunning, kSucceeded, kFailed };
  int64_t id = 0;         // 1, 2, ... in this server's life
  std::string agent;      // the agent's name in serve.agents_dir
  std::string agent_dir;  // its folder
  State state = State::kRunning;
  std::string started_at;   // RFC 3339
  std::string finished_at;  // RFC 3339; empty while running
  std::string progress;     // the latest progress line; empty before the first
  std::string attempt_id;   // once the attempt is recorded
  std::string outcome;      // once done: "proposal", "no_improvement" or "rejected"
  std::string gate;         // once done, for a rejected outcome: "worse_case" or "cost"
  std::string proposal;     // once done: the proposal's status; empty without one
  Status error;             // a failed job's error
};

// "running", "succeeded", "failed".
std::string_view ImproveJobStateName(ImproveJob::State state);

class ImproveJobs {
 public:
  ImproveJobs() = default;
  ~ImproveJobs();  // raises stopping() and waits for the job's thread
  ImproveJobs(const ImproveJobs&) = delete;
  ImproveJobs& operator=(const ImproveJobs&) = delete;

  // Runs `work` on a new thread as the job `job` (the caller sets what was asked and started_at;
  // its id and state are set here) and returns the job as started. `work` reports through Update
  // and ends with Finish. kFailedPrecondition naming the running job while one runs; kUnavailable
  // once RequestStop was called.
  Result<ImproveJob> Start(ImproveJob job, std::function<void(int64_t id)> work);
  // Changes the job `id` while it runs (progress, attempt id); nothing for another job.
  void Update(int64_t id, const std::function<void(ImproveJob&)>& change);
  // The job `id` ended: `change` records what it came to (state, outcome or error), finished_at
  // is set.
  void Finish(int64_t id, Time now, const std::function<void(ImproveJob&)>& change);
  // The latest job; kNotFound when none was started since the server started.
  Result<ImproveJob> Latest() const;
  // Set once Drain began: the running attempt stops (app::ImproveRequest::stop).
  const std::atomic<bool>& stopping() const { return stopping_; }
  // Raises stopping() and refuses new jobs, without waiting.
  void RequestStop();
  // RequestStop, then waits until no job runs or `timeout` passed on `clock`. Returns 1 when one
  // still runs, else 0.
  int Drain(Clock& clock, Duration timeout);
  // Waits until no job runs or `timeout` passed, without stopping it. Returns 1 when one still
  // runs, else 0.
  int WaitIdle(Clock& clock, Duration timeout);

 private:
  mutable std::mutex mu_;
  std::condition_variable done_;
  std::optional<ImproveJob> latest_;  // guarded by mu_
  bool running_ = false;              // guarded by mu_
  int64_t next_id_ = 1;               // guarded by mu_
  std::thread thread_;                // the latest job's; joined by the next Start or the end
  std::atomic<bool> stopping_{false};
};

}  // namespace mend::server
