// The improve attempt the server runs in the background (improve_jobs.h).
#include "server/improve_jobs.h"

#include <utility>

#include "mend/base/time_format.h"

namespace mend::server {

std::string_view ImproveJobStateName(ImproveJob::State state) {
  switch (state) {
    case ImproveJob::State::kRunning:
      return "running";
    case ImproveJob::State::kSucceeded:
      return "succeeded";
    case ImproveJob::State::kFailed:
      return "failed";
  }
  return "running";
}

ImproveJobs::~ImproveJobs() {
  stopping_.store(true);
  std::thread thread;
  {
    std::lock_guard<std::mutex> lock(mu_);
    thread.swap(thread_);
  }
  if (thread.joinable()) thread.join();
}

Result<ImproveJob> ImproveJobs::Start(ImproveJob job, std::function<void(int64_t id)> work) {
  std::thread previous;
  ImproveJob started;
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (stopping_.load()) return UnavailableError("the server is shutting down");
    if (running_ && latest_.has_value()) {
      const ImproveJob& r = *latest_;
      return FailedPreconditionError(
          "an improve attempt is already running on this server (job " + std::to_string(r.id) +
          ", agent " + r.agent + (r.attempt_id.empty() ? "" : ", attempt " + r.attempt_id) +
          ", since " + r.started_at +
          "): one attempt at a time; GET /api/v1/improve/job says when it is done");
    }
    job.id = next_id_++;
    job.state = ImproveJob::State::kRunning;
    latest_ = job;
    running_ = true;
    started = job;
    previous.swap(thread_);
    thread_ = std::thread([this, id = job.id, work = std::move(work)] {
      work(id);
      std::lock_guard<std::mutex> lock(mu_);
      if (latest_.has_value() && latest_->id == id &&
          latest_->state == ImproveJob::State::kRunning) {
        // A work function that forgot to Finish: the job is over all the same.
        latest_->state = ImproveJob::State::kFailed;
        latest_->error = InternalError("the improve job ended without a result");
      }
      running_ = false;
      done_.notify_all();
    });
  }
  if (previous.joinable()) previous.join();  // it has finished: running_ was false
  return started;
}

void ImproveJobs::Update(int64_t id, const std::function<void(ImproveJob&)>& change) {
  std::lock_guard<std::mutex> lock(mu_);
  if (latest_.has_value() && latest_->id == id) change(*latest_);
}

void ImproveJobs::Finish(int64_t id, Time now, const std::function<void(ImproveJob&)>& change) {
  std::lock_guard<std::mutex> lock(mu_);
  if (!latest_.has_value() || latest_->id != id) return;
  change(*latest_);
  latest_->finished_at = FormatRfc3339(now);
}

Result<ImproveJob> ImproveJobs::Latest() const {
  std::lock_guard<std::mutex> lock(mu_);
  if (!latest_.has_value()) {
    return NotFoundError("no improve attempt was started on this server since it started");
  }
  return *latest_;
}

void ImproveJobs::RequestStop() {
  std::lock_guard<std::mutex> lock(mu_);
  stopping_.store(true);
}

int ImproveJobs::Drain(Clock& clock, Duration timeout) {
  RequestStop();
  return WaitIdle(clock, timeout);
}

int ImproveJobs::WaitIdle(Clock& clock, Duration timeout) {
  std::unique_lock<std::mutex> lock(mu_);
  const Time deadline = clock.Now() + timeout;
  while (running_) {
    if (clock.WaitUntil(done_, lock, deadline) == std::cv_status::timeout) break;
  }
  return running_ ? 1 : 0;
}

}  // namespace mend::server
