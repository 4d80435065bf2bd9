#include "lessonq/job_heap.h"

#include <algorithm>
#include <chrono>

#include "mend/obs/metrics.h"

namespace mend::lessonq {
namespace {

// An idle worker re-checks at this interval even without a notification. Waiting on a far but
// finite deadline avoids the overflow some condition-variable implementations hit when converting
// Time::max() to another clock.
constexpr Duration kIdleRecheck = std::chrono::hours(24);

}  // namespace

JobHeap::JobHeap(Clock& clock, size_t capacity, obs::Gauge* depth)
    : clock_(clock), capacity_(capacity), depth_(depth) {}

JobHeap::Key JobHeap::KeyOf(const Job& job) {
  return {job.next_attempt_at, {job.enqueued_at, job.id}};
}

PushOutcome JobHeap::CheckPush(const Job& job) const {
  if (closed_) return PushOutcome::kClosed;
  if (queued_.count(job.id) > 0 || in_flight_.count(job.id) > 0) return PushOutcome::kDuplicate;
  if (queued_.size() >= capacity_) return PushOutcome::kFull;
  return PushOutcome::kPushed;
}

void JobHeap::Insert(Job job) {
  order_.insert(KeyOf(job));
  std::string id = job.id;
  queued_.insert_or_assign(std::move(id), std::move(job));
  Changed();
}

Job JobHeap::Extract(const std::string& id) {
  auto it = queued_.find(id);
  Job job = std::move(it->second);
  queued_.erase(it);
  order_.erase(KeyOf(job));
  return job;
}

void JobHeap::Changed() {
  if (depth_ != nullptr) depth_->Set(static_cast<double>(queued_.size()));
  cv_.notify_all();
}

PushOutcome JobHeap::TryPush(Job job) {
  std::lock_guard<std::mutex> lock(mu_);
  PushOutcome outcome = CheckPush(job);
  if (outcome == PushOutcome::kPushed) Insert(std::move(job));
  return outcome;
}

PushOutcome JobHeap::PushEvictingOldest(Job job, std::optional<Job>* evicted) {
  std::lock_guard<std::mutex> lock(mu_);
  PushOutcome outcome = CheckPush(job);
  if (outcome == PushOutcome::kFull && !queued_.empty()) {
    auto oldest =
        std::min_element(queued_.begin(), queued_.end(), [](const auto& a, const auto& b) {
          return std::pair(a.second.enqueued_at, a.first) <
                 std::pair(b.second.enqueued_at, b.first);
        });
    *evicted = Extract(oldest->first);
    outcome = PushOutcome::kPushed;
  }
  if (outcome == PushOutcome::kPushed) Insert(std::move(job));
  return outcome;
}

PushOutcome JobHeap::PushWaiting(Job job, Time deadline) {
  std::unique_lock<std::mutex> lock(mu_);
  PushOutcome outcome = CheckPush(job);
  while (outcome == PushOutcome::kFull) {
    if (clock_.WaitUntil(cv_, lock, deadline) == std::cv_status::timeout) {
      outcome = CheckPush(job);
      break;
    }
    outcome = CheckPush(job);
  }
  if (outcome == PushOutcome::kPushed) Insert(std::move(job));
  return outcome;
}

std::optional<Job> JobHeap::PopDue() {
  std::unique_lock<std::mutex> lock(mu_);
  while (!closed_) {
    Time now = clock_.Now();
    if (!order_.empty() && order_.begin()->first <= now) {
      Job job = Extract(order_.begin()->second.second);
      in_flight_.insert(job.id);
      Changed();
      return job;
    }
    Time deadline = order_.empty() ? now + kIdleRecheck : order_.begin()->first;
    clock_.WaitUntil(cv_, lock, deadline);
  }
  return std::nullopt;
}

void JobHeap::Finish(const std::string& id) {
  std::lock_guard<std::mutex> lock(mu_);
  in_flight_.erase(id);
  cv_.notify_all();
}

void JobHeap::Requeue(Job job) {
  std::lock_guard<std::mutex> lock(mu_);
  in_flight_.erase(job.id);
  if (queued_.count(job.id) > 0) {
    cv_.notify_all();
    return;
  }
  Insert(std::move(job));
}

void JobHeap::MakeAllDue(Time now) {
  std::lock_guard<std::mutex> lock(mu_);
  order_.clear();
  for (auto& [id, job] : queued_) {
    job.next_attempt_at = now;
    order_.insert(KeyOf(job));
  }
  Changed();
}

void JobHeap::Close() {
  std::lock_guard<std::mutex> lock(mu_);
  closed_ = true;
  cv_.notify_all();
}

bool JobHeap::WaitNoneInFlight(Time deadline) {
  std::unique_lock<std::mutex> lock(mu_);
  return clock_.WaitUntil(cv_, lock, deadline, [&] { return in_flight_.empty(); });
}

bool JobHeap::WaitIdle(Time deadline) {
  std::unique_lock<std::mutex> lock(mu_);
  return clock_.WaitUntil(cv_, lock, deadline, [&] {
    if (closed_) return true;  // nothing will be popped any more
    bool due = !order_.empty() && order_.begin()->first <= clock_.Now();
    return in_flight_.empty() && !due;
  });
}

bool JobHeap::Knows(const std::string& id) const {
  std::lock_guard<std::mutex> lock(mu_);
  return queued_.count(id) > 0 || in_flight_.count(id) > 0;
}

bool JobHeap::HasRoom() const {
  std::lock_guard<std::mutex> lock(mu_);
  return !closed_ && queued_.size() < capacity_;
}

size_t JobHeap::queued() const {
  std::lock_guard<std::mutex> lock(mu_);
  return queued_.size();
}

size_t JobHeap::in_flight() const {
  std::lock_guard<std::mutex> lock(mu_);
  return in_flight_.size();
}

}  // namespace mend::lessonq
