#pragma once

#include <condition_variable>
#include <cstddef>
#include <deque>
#include <functional>
#include <mutex>
#include <span>
#include <utility>

#include "mend/base/status.h"

namespace mend::store::internal {

// What a store may attach to a write besides its body (PendingWrite::work): a description of the
// write that lets its batch runner do it another way, e.g. as one statement of a pipeline. The
// runner knows the concrete type, since only its own store submits writes.
class WriteWork {
 public:
  virtual ~WriteWork() = default;
};

// One write waiting in a GroupCommit queue. `body` (and `work`, when set) belong to the submitting
// thread, which blocks until `done`; the batch runner sets `result`.
struct PendingWrite {
  const std::function<Status()>* body = nullptr;
  const WriteWork* work = nullptr;  // optional; see WriteWork
  Status result;
  bool done = false;  // guarded by the GroupCommit's mutex
  // Signalled when this write is done, or when it is first in the queue and may lead a batch.
  // One condition variable per waiter: a finished batch wakes exactly its members and the next
  // leader, not every thread blocked in Submit.
  std::condition_variable cv;
};

// Group commit: concurrent writers queue their work, and one of them (the leader: the first to
// find fewer than `max_running` batches running, by default none) hands up to `max_batch` queued
// writes, oldest first, to `run_batch`, which runs them in one transaction and sets each write's
// result. Everyone else waits; while a batch commits, the next one fills up. Writes within a batch
// are in the order they were submitted, so two writes to one run keep their order; with one batch
// at a time (the default), so are all writes.
//
// With `max_running` above 1, a batch may start while others run. Its writes were all submitted
// before the running batches finished, so each of them is concurrent with theirs: a store that
// makes every write atomic stays linearizable, but two writes to one run in different batches may
// be applied in either order.
//
// Thread-safe. `run_batch` is called by at most `max_running` threads at a time, never with the
// queue's lock held.
class GroupCommit {
 public:
  using RunBatch = std::function<void(std::span<PendingWrite* const> batch)>;

  GroupCommit(size_t max_batch, RunBatch run_batch, size_t max_running = 1)
      : max_batch_(max_batch == 0 ? 1 : max_batch),
        max_running_(max_running == 0 ? 1 : max_running),
        run_batch_(std::move(run_batch)) {}
  GroupCommit(const GroupCommit&) = delete;
  GroupCommit& operator=(const GroupCommit&) = delete;

  // Queues `body` and returns the result `run_batch` gave it, once the batch containing it has
  // finished (for a store: committed). `body` must stay valid until then, which it does since
  // the caller blocks.
  Status Submit(const std::function<Status()>& body) { return Submit(body, nullptr); }
  // The same, with `work` handed to `run_batch` in PendingWrite::work; it must stay valid as
  // `body` must.
  Status Submit(const std::function<Status()>& body, const WriteWork* work);

  // How many submitted writes wait for a batch (not counting one being run). For metrics/tests.
  size_t Queued();

 private:
  const size_t max_batch_;
  const size_t max_running_;
  const RunBatch run_batch_;
  std::mutex mu_;
  std::deque<PendingWrite*> queue_;  // guarded by mu_
  size_t running_ = 0;               // batches leaders are running; guarded by mu_
};

}  // namespace mend::store::internal
