#include "store/group_commit.h"

#include <gtest/gtest.h>

#include <condition_variable>
#include <mutex>
#include <thread>
#include <vector>

#include "tests/support/status_matchers.h"

namespace mend::store::internal {
namespace {

using ::mend::testing::IsOk;
using ::mend::testing::StatusIs;

// Records the batches it is given; the first batch can be held until the test lets it go, so
// that later writes queue up behind it.
class RecordingRunner {
 public:
  void Run(std::span<PendingWrite* const> batch) {
    for (PendingWrite* w : batch) w->result = (*w->body)();
    std::unique_lock<std::mutex> lock(mu_);
    sizes_.push_back(batch.size());
    bool first = sizes_.size() == 1;
    cv_.wait(lock, [&] { return !first || !hold_; });
  }
  void Release() {
    std::lock_guard<std::mutex> lock(mu_);
    hold_ = false;
    cv_.notify_all();
  }
  std::vector<size_t> sizes() {
    std::lock_guard<std::mutex> lock(mu_);
    return sizes_;
  }

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  bool hold_ = true;
  std::vector<size_t> sizes_;
};

// Spins until `n` writes wait in the queue (they are blocked behind the held first batch).
void AwaitQueued(GroupCommit& commit, size_t n) {
  while (commit.Queued() != n) std::this_thread::yield();
}

// Starts writer `i` (whose body appends i to `order`) and returns once it is queued.
std::thread StartWriter(GroupCommit& commit, int i, std::mutex& mu, std::vector<int>& order,
                        size_t queued_after) {
  std::thread t([&commit, &mu, &order, i] {
    std::function<Status()> body = [&mu, &order, i]() -> Status {
      std::lock_guard<std::mutex> lock(mu);
      order.push_back(i);
      return i == 3 ? AbortedError("stale") : OkStatus();
    };
    Status s = commit.Submit(body);
    EXPECT_EQ(s.ok(), i != 3) << i;
  });
  AwaitQueued(commit, queued_after);
  return t;
}

TEST(GroupCommitTest, LoneWriteGetsItsOwnResult) {
  RecordingRunner runner;
  runner.Release();
  GroupCommit commit(8, [&](std::span<PendingWrite* const> b) { runner.Run(b); });
  std::function<Status()> fail = [] { return AbortedError("stale epoch"); };
  std::function<Status()> pass = [] { return OkStatus(); };
  EXPECT_THAT(commit.Submit(fail), StatusIs(StatusCode::kAborted));
  EXPECT_THAT(commit.Submit(pass), IsOk());
  EXPECT_EQ(runner.sizes(), (std::vector<size_t>{1, 1}));
}

TEST(GroupCommitTest, WritesQueuedDuringABatchRunTogetherInSubmissionOrder) {
  RecordingRunner runner;
  GroupCommit commit(8, [&](std::span<PendingWrite* const> b) { runner.Run(b); });
  std::mutex mu;
  std::vector<int> order;
  std::vector<std::thread> threads;
  threads.push_back(std::thread([&] {
    std::function<Status()> body = [] { return OkStatus(); };
    EXPECT_THAT(commit.Submit(body), IsOk());
  }));
  // The first writer leads a batch of one and is held there; wait until it has left the queue.
  while (runner.sizes().empty()) std::this_thread::yield();
  for (int i = 1; i <= 5; ++i) {
    threads.push_back(StartWriter(commit, i, mu, order, static_cast<size_t>(i)));
  }
  runner.Release();
  for (std::thread& t : threads) t.join();
  EXPECT_EQ(runner.sizes(), (std::vector<size_t>{1, 5}));
  EXPECT_EQ(order, (std::vector<int>{1, 2, 3, 4, 5}));  // writer 3 failed alone
}

TEST(GroupCommitTest, BatchSizeIsBounded) {
  RecordingRunner runner;
  GroupCommit commit(2, [&](std::span<PendingWrite* const> b) { runner.Run(b); });
  std::mutex mu;
  std::vector<int> order;
  std::vector<std::thread> threads;
  threads.push_back(std::thread([&] {
    std::function<Status()> body = [] { return OkStatus(); };
    EXPECT_THAT(commit.Submit(body), IsOk());
  }));
  while (runner.sizes().empty()) std::this_thread::yield();
  for (int i = 1; i <= 5; ++i) {
    threads.push_back(StartWriter(commit, i, mu, order, static_cast<size_t>(i)));
  }
  runner.Release();
  for (std::thread& t : threads) t.join();
  EXPECT_EQ(runner.sizes(), (std::vector<size_t>{1, 2, 2, 1}));
  EXPECT_EQ(order, (std::vector<int>{1, 2, 3, 4, 5}));
}

TEST(GroupCommitTest, WithTwoRunningASecondBatchStartsWhileTheFirstIsHeld) {
  RecordingRunner runner;
  GroupCommit commit(
      8, [&](std::span<PendingWrite* const> b) { runner.Run(b); }, /*max_running=*/2);
  std::thread first([&] {
    std::function<Status()> body = [] { return OkStatus(); };
    EXPECT_THAT(commit.Submit(body), IsOk());
  });
  while (runner.sizes().empty()) std::this_thread::yield();
  // The first batch is held; this write leads a batch of its own and returns.
  std::function<Status()> body = [] { return AbortedError("stale"); };
  EXPECT_THAT(commit.Submit(body), StatusIs(StatusCode::kAborted));
  EXPECT_EQ(runner.sizes(), (std::vector<size_t>{1, 1}));
  runner.Release();
  first.join();
}

}  // namespace
}  // namespace mend::store::internal
