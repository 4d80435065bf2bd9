#include "store/group_commit.h"

#include <algorithm>
#include <cstddef>
#include <vector>

namespace mend::store::internal {

Status GroupCommit::Submit(const std::function<Status()>& body) {
  PendingWrite me;
  me.body = &body;
  std::unique_lock<std::mutex> lock(mu_);
  queue_.push_back(&me);
  while (!me.done) {
    if (running_) {
      me.cv.wait(lock);
      continue;
    }
    // Lead one batch. Our own write may sit beyond max_batch_; then we lead again afterwards
    // (or the waiter first in the queue does).
    running_ = true;
    size_t n = std::min(max_batch_, queue_.size());
    std::vector<PendingWrite*> batch(queue_.begin(), queue_.begin() + static_cast<ptrdiff_t>(n));
    queue_.erase(queue_.begin(), queue_.begin() + static_cast<ptrdiff_t>(n));
    lock.unlock();
    run_batch_(batch);
    lock.lock();
    running_ = false;
    // Waiters are notified while mu_ is held, so none can return (and destroy its PendingWrite)
    // before the loop is done with it.
    for (PendingWrite* w : batch) {
      w->done = true;
      if (w != &me) w->cv.notify_one();
    }
    if (!queue_.empty()) queue_.front()->cv.notify_one();  // the next leader
  }
  return me.result;
}

size_t GroupCommit::Queued() {
  std::lock_guard<std::mutex> lock(mu_);
  return queue_.size();
}

}  // namespace mend::store::internal
