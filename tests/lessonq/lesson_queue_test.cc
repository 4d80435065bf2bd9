#include "mend/lessonq/lesson_queue.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <chrono>
#include <thread>

#include "tests/lessonq/queue_test_util.h"
#include "tests/support/status_matchers.h"

namespace mend::lessonq {
namespace {

using ::mend::testing::IsOkAndHolds;
using ::mend::testing::StatusIs;
using ::testing::ElementsAre;
using ::testing::Field;
using testing::Gate;
using testing::QueueWorld;
using testing::Request;
using testing::ScriptedProcessor;
using testing::TestOptions;

std::unique_ptr<LessonQueue> OpenQueue(QueueWorld& world, QueueOptions options = TestOptions()) {
  Result<std::unique_ptr<LessonQueue>> queue = LessonQueue::Open(world.env(), options, nullptr);
  EXPECT_TRUE(queue.ok()) << queue.status();
  return queue.ok() ? std::move(queue).value() : nullptr;
}

TEST(LessonQueueTest, OpenRejectsInvalidOptions) {
  QueueWorld world;
  QueueOptions options = TestOptions();
  options.base_dir = "";
  EXPECT_THAT(LessonQueue::Open(world.env(), options, nullptr),
              StatusIs(StatusCode::kInvalidArgument));
  options = TestOptions();
  options.jitter = 0.7;
  EXPECT_THAT(LessonQueue::Open(world.env(), options, nullptr),
              StatusIs(StatusCode::kInvalidArgument));
}

TEST(LessonQueueTest, ProcessesAnEnqueuedJobAndAcknowledgesIt) {
  QueueWorld world;
  auto queue = OpenQueue(world);
  ScriptedProcessor processor;
  MEND_ASSERT_OK(queue->Start(processor.processor()));
  EXPECT_TRUE(queue->owner());
  const Time enqueued = world.clock.Now();

  Result<EnqueueResult> result = queue->Enqueue(Request(1));
  ASSERT_TRUE(result.ok()) << result.status();
  EXPECT_EQ(result->id, JobIdFor(Request(1)));
  EXPECT_TRUE(result->created);
  EXPECT_EQ(result->outcome, EnqueueOutcome::kAccepted);

  processor.WaitForCalls(1);
  world.clock.BlockUntilWaiters(2);  // the worker is back waiting, and the poller
  const Job job = processor.calls()[0];
  EXPECT_EQ(job.request, Request(1));
  EXPECT_EQ(job.attempts, 1);
  EXPECT_EQ(job.enqueued_at, enqueued);
  EXPECT_EQ(processor.contexts()[0].deadline, enqueued + TestOptions().job_timeout);
  EXPECT_NE(processor.contexts()[0].cancelled, nullptr);
  EXPECT_THAT(queue->Stats(), IsOkAndHolds(AllOf(Field(&QueueStats::wal_records, 0),
                                                 Field(&QueueStats::queue_depth, 0))));
  EXPECT_FALSE(world.fs.Exists("/q/wal/" + job.id + ".wal"));
}

TEST(LessonQueueTest, StartTwiceFails) {
  QueueWorld world;
  auto queue = OpenQueue(world);
  ScriptedProcessor processor;
  MEND_ASSERT_OK(queue->Start(processor.processor()));
  EXPECT_THAT(queue->Start(processor.processor()), StatusIs(StatusCode::kFailedPrecondition));
}

TEST(LessonQueueTest, ProducerWritesTheRecordOnlyAndDedupesPendingRequests) {
  QueueWorld world;
  auto queue = OpenQueue(world);
  ASSERT_FALSE(queue->owner());
  Result<EnqueueResult> first = queue->Enqueue(Request(1));
  ASSERT_TRUE(first.ok());
  EXPECT_EQ(first->outcome, EnqueueOutcome::kAccepted);
  EXPECT_TRUE(first->created);

  Result<EnqueueResult> again = queue->Enqueue(Request(1));
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(again->id, first->id);
  EXPECT_FALSE(again->created);
  EXPECT_EQ(again->outcome, EnqueueOutcome::kDeduped);

  EXPECT_THAT(queue->Stats(), IsOkAndHolds(AllOf(Field(&QueueStats::wal_records, 1),
                                                 Field(&QueueStats::queue_depth, 0))));
  EXPECT_THAT(queue->Pending(), IsOkAndHolds(ElementsAre(Field(&Job::id, first->id))));
}

TEST(LessonQueueTest, OwnerDedupesAJobInFlight) {
  QueueWorld world;
  auto queue = OpenQueue(world);
  Gate gate;
  ScriptedProcessor processor([&](const Job&, const JobContext&) -> Result<ProcessResult> {
    gate.Wait();
    return ProcessResult::kSuccess;
  });
  MEND_ASSERT_OK(queue->Start(processor.processor()));
  ASSERT_TRUE(queue->Enqueue(Request(1)).ok());
  processor.WaitForCalls(1);
  Result<EnqueueResult> again = queue->Enqueue(Request(1));
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(again->outcome, EnqueueOutcome::kDeduped);
  EXPECT_FALSE(again->created);
  gate.Open();
  world.clock.BlockUntilWaiters(2);
  EXPECT_EQ(processor.calls().size(), 1u);
}

TEST(LessonQueueTest, WorkersProcessJobsConcurrently) {
  QueueWorld world;
  QueueOptions options = TestOptions();
  options.workers = 2;
  auto queue = OpenQueue(world, options);
  Gate gate;
  ScriptedProcessor processor([&](const Job&, const JobContext&) -> Result<ProcessResult> {
    gate.Wait();
    return ProcessResult::kSuccess;
  });
  MEND_ASSERT_OK(queue->Start(processor.processor()));
  ASSERT_TRUE(queue->Enqueue(Request(1)).ok());
  ASSERT_TRUE(queue->Enqueue(Request(2)).ok());
  // Neither call returns before the gate opens, so two calls mean two jobs in flight at once.
  processor.WaitForCalls(2);
  EXPECT_THAT(queue->Stats(), IsOkAndHolds(Field(&QueueStats::wal_records, 2)));
  gate.Open();
  world.clock.BlockUntilWaiters(3);
  EXPECT_THAT(queue->Stats(), IsOkAndHolds(Field(&QueueStats::wal_records, 0)));
}

// One worker stuck on job 1 (in flight), job 2 queued: a capacity of 1 is reached.
class FullQueueTest : public ::testing::Test {
 protected:
  void StartFull(bool drop_oldest) {
    QueueOptions options = TestOptions();
    options.capacity = 1;
    options.drop_oldest = drop_oldest;
    options.block_timeout = std::chrono::seconds(5);
    queue_ = OpenQueue(world_, options);
    MEND_ASSERT_OK(queue_->Start(processor_.processor()));
    ASSERT_TRUE(queue_->Enqueue(Request(1)).ok());
    processor_.WaitForCalls(1);
    ASSERT_TRUE(queue_->Enqueue(Request(2)).ok());
    ASSERT_THAT(queue_->Stats(), IsOkAndHolds(Field(&QueueStats::queue_depth, 1)));
  }
  void TearDown() override { gate_.Open(); }

  QueueWorld world_;
  Gate gate_;
  ScriptedProcessor processor_{[this](const Job& job, const JobContext&) -> Result<ProcessResult> {
    if (job.request == Request(1)) gate_.Wait();
    return ProcessResult::kSuccess;
  }};
  std::unique_ptr<LessonQueue> queue_;
};

TEST_F(FullQueueTest, BlockingEnqueueTimesOutAndLeavesTheRecordInTheWal) {
  StartFull(/*drop_oldest=*/false);
  Result<EnqueueResult> result = InternalError("not run");
  std::thread producer([&] { result = queue_->Enqueue(Request(3)); });
  world_.clock.BlockUntilWaiters(2);  // the poller and the blocked producer
  world_.clock.Advance(std::chrono::seconds(5));
  producer.join();
  ASSERT_TRUE(result.ok()) << result.status();
  EXPECT_EQ(result->outcome, EnqueueOutcome::kRejectedFull);
  EXPECT_TRUE(result->created);
  EXPECT_THAT(queue_->Stats(), IsOkAndHolds(AllOf(Field(&QueueStats::wal_records, 3),
                                                  Field(&QueueStats::queue_depth, 1))));

  // Once there is room, the poller reloads the record left in the WAL.
  gate_.Open();
  processor_.WaitForCalls(2);
  world_.clock.BlockUntilWaiters(2);
  world_.clock.Advance(std::chrono::seconds(1));
  processor_.WaitForCalls(3);
  EXPECT_EQ(processor_.calls()[2].request, Request(3));
}

TEST_F(FullQueueTest, RoomAppearingWakesABlockedEnqueue) {
  StartFull(/*drop_oldest=*/false);
  Result<EnqueueResult> result = InternalError("not run");
  std::thread producer([&] { result = queue_->Enqueue(Request(3)); });
  world_.clock.BlockUntilWaiters(2);
  gate_.Open();  // job 1 finishes, job 2 leaves the queue: room without moving the clock
  producer.join();
  ASSERT_TRUE(result.ok()) << result.status();
  EXPECT_EQ(result->outcome, EnqueueOutcome::kAccepted);
  processor_.WaitForCalls(3);
}

TEST_F(FullQueueTest, DropOldestEvictsFromMemoryButKeepsTheRecord) {
  StartFull(/*drop_oldest=*/true);
  Result<EnqueueResult> result = queue_->Enqueue(Request(3));
  ASSERT_TRUE(result.ok()) << result.status();
  EXPECT_EQ(result->outcome, EnqueueOutcome::kDroppedOldest);
  EXPECT_TRUE(result->created);
  EXPECT_THAT(queue_->Stats(), IsOkAndHolds(AllOf(Field(&QueueStats::wal_records, 3),
                                                  Field(&QueueStats::queue_depth, 1))));
  gate_.Open();
  processor_.WaitForCalls(2);
  EXPECT_EQ(processor_.calls()[1].request, Request(3));  // job 2 was evicted
  world_.clock.BlockUntilWaiters(2);
  world_.clock.Advance(std::chrono::seconds(1));  // the poller brings job 2 back
  processor_.WaitForCalls(3);
  EXPECT_EQ(processor_.calls()[2].request, Request(2));
}

}  // namespace
}  // namespace mend::lessonq
