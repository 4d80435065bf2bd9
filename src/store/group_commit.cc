#include "store/group_commit.h"

#include <algorithm>
#include <cstddef>
#include <vector>

namespace mend::store::internal {

Status GroupCommit::Submit(const std::function<Status()>& body, const WriteWork* work) {
  PendingWrite me;
  me.body = &body;
  me.work = work;
  std::unique_lock<std::mutex> lock(mu_);
  queue_.push_back(&me);
  while (!me.done) {
    if (running_ >= max_running_ || queue_.empty()) {
      me.cv.wait(lock);
      continue;
    }
    // Lead one batch. Our own write may sit beyond max_batch_, or in a batch another leader
    // took; then we lead again afterwards (or the waiter first in the queue does).
    running_ += 1;
    size_t n = std::min(max_batch_, queue_.size());
    std::vector<PendingWrite*> batch(queue_.begin(), queue_.begin() + static_cast<ptrdiff_t>(n));
    queue_.erase(queue_.begin(), queue_.begin() + static_cast<ptrdiff_t>(n));
    if (running_ < max_running_ && !queue_.empty()) queue_.front()->cv.notify_one();
    lock.unlock();
    run_batch_(batch);
    lock.lock();
    running_ -= 1;
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
