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

// One write waiting in a GroupCommit queue. `body` belongs to the submitting thread, which blocks
// until `done`; the batch runner sets `result`.
struct PendingWrite {
  const std::function<Status()>* body = nullptr;
  Status result;
  bool done = false;  // guarded by the GroupCommit's mutex
  // Signalled when this write is done, or when it is first in the queue and may lead a batch.
  // One condition variable per waiter: a finished batch wakes exactly its members and the next
  // leader, not every thread blocked in Submit.
  std::condition_variable cv;
};

// Group commit: concurrent writers queue their work, and one of them (the leader: the first to
// find no batch running) hands up to `max_batch` queued writes, oldest first, to `run_batch`,
// which runs them in one transaction and sets each write's result. Everyone else waits; while a
// batch commits, the next one fills up. Writes run in the order they were submitted, so two
// writes to one run keep their order.
//
// Thread-safe. `run_batch` is called by one thread at a time, never with the queue's lock held.
class GroupCommit {
 public:
  using RunBatch = std::function<void(std::span<PendingWrite* const> batch)>;

  GroupCommit(size_t max_batch, RunBatch run_batch)
      : max_batch_(max_batch == 0 ? 1 : max_batch), run_batch_(std::move(run_batch)) {}
  GroupCommit(const GroupCommit&) = delete;
  GroupCommit& operator=(const GroupCommit&) = delete;

  // Queues `body` and returns the result `run_batch` gave it, once the batch containing it has
  // finished (for a store: committed). `body` must stay valid until then, which it does since
  // the caller blocks.
  Status Submit(const std::function<Status()>& body);

  // How many submitted writes wait for a batch (not counting one being run). For metrics/tests.
  size_t Queued();

 private:
  const size_t max_batch_;
  const RunBatch run_batch_;
  std::mutex mu_;
  std::deque<PendingWrite*> queue_;  // guarded by mu_
  bool running_ = false;             // a leader is running a batch; guarded by mu_
};

}  // namespace mend::store::internal
