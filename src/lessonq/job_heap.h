#pragma once

#include <condition_variable>
#include <cstddef>
#include <map>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <utility>

#include "mend/base/clock.h"
#include "mend/lessonq/job.h"

namespace mend::obs {
class Gauge;
}  // namespace mend::obs

namespace mend::lessonq {

enum class PushOutcome {
  kPushed,
  kDuplicate,  // a job of this id is queued or in flight
  kFull,       // no room (and the caller's policy does not make room)
  kClosed,     // Close() was called; nothing more is accepted
};

// The in-memory part of the lesson queue: jobs ordered by next attempt time (then by enqueue
// time, then by id), with a capacity, dedupe by id over queued and in-flight jobs, and a blocking
// pop that waits in virtual time on a Clock. A popped job is "in flight" until Finish() or
// Requeue(). Every wait goes through the Clock, so ManualClock drives it in tests. Thread-safe.
//
// `clock` (and `depth`, which receives the number of queued jobs after every change; may be null)
// must outlive the heap.
class JobHeap {
 public:
  JobHeap(Clock& clock, size_t capacity, obs::Gauge* depth);

  // Adds `job` when there is room. Never waits.
  PushOutcome TryPush(Job job);
  // Adds `job`; when full, first removes the queued job with the oldest enqueued_at and stores it
  // in `*evicted`. kFull only with a capacity of 0.
  PushOutcome PushEvictingOldest(Job job, std::optional<Job>* evicted);
  // Adds `job`, waiting until `deadline` for room (woken when a job leaves the queue).
  PushOutcome PushWaiting(Job job, Time deadline);

  // Takes the queued job with the smallest next_attempt_at once that time has come, waiting for
  // it (woken by earlier jobs arriving, by the clock and by Close()). The job is then in flight.
  // Nullopt once the heap is closed.
  std::optional<Job> PopDue();
  // The in-flight job `id` is done (acknowledged or moved elsewhere): it leaves the id set.
  void Finish(const std::string& id);
  // The in-flight `job` goes back into the queue (a retry). Ignores the capacity so a retry never
  // waits; the queue may thus exceed it by at most the number of jobs in flight.
  void Requeue(Job job);

  // Makes every queued job due at `now`.
  void MakeAllDue(Time now);
  // Stops pops and pushes; wakes every waiter. Jobs in flight can still Finish() or Requeue().
  void Close();

  // Waits until nothing is in flight; false when `deadline` passed first.
  bool WaitNoneInFlight(Time deadline);
  // Waits until no queued job is due and nothing is in flight, or the heap is closed; false when
  // `deadline` passed first.
  bool WaitIdle(Time deadline);

  bool Knows(const std::string& id) const;  // queued or in flight
  bool HasRoom() const;
  size_t queued() const;
  size_t in_flight() const;

 private:
  using Key = std::pair<Time, std::pair<Time, std::string>>;  // next, enqueued, id
  static Key KeyOf(const Job& job);

  PushOutcome CheckPush(const Job& job) const;  // kPushed when it may go in
  void Insert(Job job);                         // with mu_ held
  Job Extract(const std::string& id);           // with mu_ held
  void Changed();                               // with mu_ held: gauge + wake waiters

  Clock& clock_;
  const size_t capacity_;
  obs::Gauge* const depth_;
  mutable std::mutex mu_;
  std::condition_variable cv_;
  std::map<std::string, Job> queued_;  // by id
  std::set<Key> order_;
  std::set<std::string> in_flight_;
  bool closed_ = false;
};

}  // namespace mend::lessonq
