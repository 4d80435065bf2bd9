#include "lessonq/job_heap.h"

#include <gtest/gtest.h>

#include <chrono>
#include <optional>
#include <string>
#include <thread>

#include "mend/base/manual_clock.h"
#include "mend/obs/metrics.h"

namespace mend::lessonq {
namespace {

using std::chrono::seconds;

Job MakeJob(const std::string& id, Time enqueued, Time next) {
  Job job;
  job.id = id;
  job.enqueued_at = enqueued;
  job.next_attempt_at = next;
  return job;
}

TEST(JobHeapTest, PopsInOrderOfNextAttempt) {
  ManualClock clock;
  const Time t = clock.Now();
  JobHeap heap(clock, 10, nullptr);
  ASSERT_EQ(heap.TryPush(MakeJob("b", t, t - seconds(1))), PushOutcome::kPushed);
  ASSERT_EQ(heap.TryPush(MakeJob("a", t, t - seconds(3))), PushOutcome::kPushed);
  ASSERT_EQ(heap.TryPush(MakeJob("c", t, t - seconds(2))), PushOutcome::kPushed);
  EXPECT_EQ(heap.PopDue()->id, "a");
  EXPECT_EQ(heap.PopDue()->id, "c");
  EXPECT_EQ(heap.PopDue()->id, "b");
  EXPECT_EQ(heap.queued(), 0u);
  EXPECT_EQ(heap.in_flight(), 3u);
}

TEST(JobHeapTest, DedupesQueuedAndInFlightIds) {
  ManualClock clock;
  const Time t = clock.Now();
  JobHeap heap(clock, 10, nullptr);
  ASSERT_EQ(heap.TryPush(MakeJob("a", t, t)), PushOutcome::kPushed);
  EXPECT_EQ(heap.TryPush(MakeJob("a", t, t)), PushOutcome::kDuplicate);
  ASSERT_TRUE(heap.PopDue().has_value());
  EXPECT_TRUE(heap.Knows("a"));
  EXPECT_EQ(heap.TryPush(MakeJob("a", t, t)), PushOutcome::kDuplicate);
  heap.Finish("a");
  EXPECT_FALSE(heap.Knows("a"));
  EXPECT_EQ(heap.TryPush(MakeJob("a", t, t)), PushOutcome::kPushed);
}

TEST(JobHeapTest, CapacityRejectsTryPushAndGaugeFollowsDepth) {
  ManualClock clock;
  obs::MetricsRegistry registry;
  obs::Gauge& depth = registry.gauge("depth", "test");
  const Time t = clock.Now();
  JobHeap heap(clock, 2, &depth);
  ASSERT_EQ(heap.TryPush(MakeJob("a", t, t)), PushOutcome::kPushed);
  ASSERT_EQ(heap.TryPush(MakeJob("b", t, t)), PushOutcome::kPushed);
  EXPECT_FALSE(heap.HasRoom());
  EXPECT_EQ(heap.TryPush(MakeJob("c", t, t)), PushOutcome::kFull);
  EXPECT_EQ(depth.value(), 2.0);
  ASSERT_TRUE(heap.PopDue().has_value());
  EXPECT_EQ(depth.value(), 1.0);
}

TEST(JobHeapTest, EvictsTheOldestEnqueuedJobWhenFull) {
  ManualClock clock;
  const Time t = clock.Now();
  JobHeap heap(clock, 2, nullptr);
  ASSERT_EQ(heap.TryPush(MakeJob("young", t, t - seconds(9))), PushOutcome::kPushed);
  ASSERT_EQ(heap.TryPush(MakeJob("old", t - seconds(5), t)), PushOutcome::kPushed);
  std::optional<Job> evicted;
  EXPECT_EQ(heap.PushEvictingOldest(MakeJob("new", t, t), &evicted), PushOutcome::kPushed);
  ASSERT_TRUE(evicted.has_value());
  EXPECT_EQ(evicted->id, "old");
  EXPECT_FALSE(heap.Knows("old"));
  EXPECT_EQ(heap.queued(), 2u);
}

TEST(JobHeapTest, BlockingPushTimesOutInVirtualTime) {
  ManualClock clock;
  const Time t = clock.Now();
  JobHeap heap(clock, 1, nullptr);
  ASSERT_EQ(heap.TryPush(MakeJob("a", t, t + seconds(100))), PushOutcome::kPushed);
  PushOutcome outcome = PushOutcome::kPushed;
  std::thread pusher([&] { outcome = heap.PushWaiting(MakeJob("b", t, t), t + seconds(5)); });
  clock.BlockUntilWaiters(1);
  clock.Advance(seconds(4));
  clock.BlockUntilWaiters(1);
  clock.Advance(seconds(1));
  pusher.join();
  EXPECT_EQ(outcome, PushOutcome::kFull);
  EXPECT_FALSE(heap.Knows("b"));
}

TEST(JobHeapTest, RoomAppearingWakesABlockedPush) {
  ManualClock clock;
  const Time t = clock.Now();
  JobHeap heap(clock, 1, nullptr);
  ASSERT_EQ(heap.TryPush(MakeJob("a", t, t)), PushOutcome::kPushed);
  PushOutcome outcome = PushOutcome::kFull;
  std::thread pusher([&] { outcome = heap.PushWaiting(MakeJob("b", t, t), t + seconds(5)); });
  clock.BlockUntilWaiters(1);
  ASSERT_EQ(heap.PopDue()->id, "a");  // makes room without moving the clock
  pusher.join();
  EXPECT_EQ(outcome, PushOutcome::kPushed);
  EXPECT_TRUE(heap.Knows("b"));
}

TEST(JobHeapTest, PopWaitsUntilTheJobIsDue) {
  ManualClock clock;
  const Time t = clock.Now();
  JobHeap heap(clock, 4, nullptr);
  ASSERT_EQ(heap.TryPush(MakeJob("a", t, t + seconds(10))), PushOutcome::kPushed);
  std::optional<Job> popped;
  std::thread worker([&] { popped = heap.PopDue(); });
  clock.BlockUntilWaiters(1);
  clock.Advance(seconds(9));
  clock.BlockUntilWaiters(1);
  EXPECT_EQ(heap.queued(), 1u);  // still waiting: not due yet
  clock.Advance(seconds(1));
  worker.join();
  ASSERT_TRUE(popped.has_value());
  EXPECT_EQ(popped->id, "a");
}

TEST(JobHeapTest, AnEarlierJobWakesAWaitingPop) {
  ManualClock clock;
  const Time t = clock.Now();
  JobHeap heap(clock, 4, nullptr);
  ASSERT_EQ(heap.TryPush(MakeJob("late", t, t + seconds(60))), PushOutcome::kPushed);
  std::optional<Job> popped;
  std::thread worker([&] { popped = heap.PopDue(); });
  clock.BlockUntilWaiters(1);
  ASSERT_EQ(heap.TryPush(MakeJob("now", t, t)), PushOutcome::kPushed);
  worker.join();
  EXPECT_EQ(popped->id, "now");
}

TEST(JobHeapTest, CloseEndsWaitingPopsAndRefusesPushes) {
  ManualClock clock;
  JobHeap heap(clock, 4, nullptr);
  std::optional<Job> popped = Job{};
  std::thread worker([&] { popped = heap.PopDue(); });
  clock.BlockUntilWaiters(1);
  heap.Close();
  worker.join();
  EXPECT_FALSE(popped.has_value());
  EXPECT_EQ(heap.TryPush(MakeJob("a", clock.Now(), clock.Now())), PushOutcome::kClosed);
}

TEST(JobHeapTest, RequeueIgnoresCapacityAndMakeAllDueReorders) {
  ManualClock clock;
  const Time t = clock.Now();
  JobHeap heap(clock, 1, nullptr);
  ASSERT_EQ(heap.TryPush(MakeJob("a", t, t)), PushOutcome::kPushed);
  Job a = *heap.PopDue();
  ASSERT_EQ(heap.TryPush(MakeJob("b", t - seconds(1), t + seconds(50))), PushOutcome::kPushed);
  a.next_attempt_at = t + seconds(40);
  heap.Requeue(a);
  EXPECT_EQ(heap.queued(), 2u);
  EXPECT_EQ(heap.in_flight(), 0u);
  EXPECT_TRUE(heap.WaitIdle(t));  // nothing due and nothing in flight
  heap.MakeAllDue(t);
  EXPECT_FALSE(heap.WaitIdle(t));     // due jobs queued, and the deadline has passed
  EXPECT_EQ(heap.PopDue()->id, "b");  // ties on next attempt: the older enqueue first
  EXPECT_EQ(heap.PopDue()->id, "a");
}

}  // namespace
}  // namespace mend::lessonq
