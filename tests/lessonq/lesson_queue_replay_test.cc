#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cerrno>
#include <chrono>
#include <string>

#include "mend/base/fault_injection_file_system.h"
#include "mend/lessonq/lesson_queue.h"
#include "mend/lessonq/wal_dir.h"
#include "mend/obs/metrics.h"
#include "tests/lessonq/queue_test_util.h"
#include "tests/support/status_matchers.h"

namespace mend::lessonq {
namespace {

using ::mend::testing::IsOkAndHolds;
using ::mend::testing::StatusIs;
using std::chrono::hours;
using std::chrono::seconds;
using ::testing::ElementsAre;
using ::testing::Field;
using ::testing::HasSubstr;
using ::testing::IsEmpty;
using testing::QueueWorld;
using testing::Request;
using testing::ScriptedProcessor;
using testing::TestOptions;
using ::testing::UnorderedElementsAre;

std::unique_ptr<LessonQueue> OpenQueue(QueueWorld& world, obs::MetricsRegistry* registry) {
  auto queue = LessonQueue::Open(world.env(), TestOptions(), registry);
  EXPECT_TRUE(queue.ok()) << queue.status();
  return queue.ok() ? std::move(queue).value() : nullptr;
}

TEST(LessonQueueReplayTest, StartProcessesRecordsLeftByAnEarlierQueue) {
  QueueWorld world;
  {
    auto earlier = OpenQueue(world, nullptr);
    ASSERT_TRUE(earlier->Enqueue(Request(1)).ok());
    ASSERT_TRUE(earlier->Enqueue(Request(2)).ok());
  }
  auto queue = OpenQueue(world, nullptr);
  ScriptedProcessor processor;
  MEND_ASSERT_OK(queue->Start(processor.processor()));
  processor.WaitForCalls(2);
  world.clock.BlockUntilWaiters(2);
  EXPECT_THAT(processor.ids(), UnorderedElementsAre(JobIdFor(Request(1)), JobIdFor(Request(2))));
  EXPECT_THAT(queue->Pending(), IsOkAndHolds(IsEmpty()));
}

TEST(LessonQueueReplayTest, OneMegabyteAttemptSurvivesReplay) {
  QueueWorld world;
  LessonRequest big = Request(7);
  big.attempt.assign(1 << 20, 'x');
  big.attempt += " and then the tool timed out";
  {
    auto earlier = OpenQueue(world, nullptr);
    ASSERT_TRUE(earlier->Enqueue(big).ok());
  }
  world.fs.CutPower();  // only what was synced survives
  auto queue = OpenQueue(world, nullptr);
  ScriptedProcessor processor;
  MEND_ASSERT_OK(queue->Start(processor.processor()));
  processor.WaitForCalls(1);
  ASSERT_EQ(processor.calls().size(), 1u);
  EXPECT_EQ(processor.calls()[0].request, big);
  EXPECT_EQ(processor.calls()[0].id, JobIdFor(big));
}

TEST(LessonQueueReplayTest, StaleRecordsAreDiscardedAndCounted) {
  QueueWorld world;
  {
    auto earlier = OpenQueue(world, nullptr);
    ASSERT_TRUE(earlier->Enqueue(Request(1)).ok());
    world.clock.Advance(hours(24 * 8));
    ASSERT_TRUE(earlier->Enqueue(Request(2)).ok());
  }
  obs::MetricsRegistry registry;
  auto queue = OpenQueue(world, &registry);
  ScriptedProcessor processor;
  MEND_ASSERT_OK(queue->Start(processor.processor()));
  processor.WaitForCalls(1);
  world.clock.BlockUntilWaiters(2);
  EXPECT_THAT(processor.ids(), ElementsAre(JobIdFor(Request(2))));
  EXPECT_EQ(registry.counter("mend_lessonq_stale_discarded_total", "").value(), 1.0);
  EXPECT_THAT(queue->Pending(), IsOkAndHolds(IsEmpty()));
}

TEST(LessonQueueReplayTest, CorruptRecordIsRemovedAndCounted) {
  QueueWorld world;
  obs::MetricsRegistry registry;
  auto queue = OpenQueue(world, &registry);
  const std::string path = "/q/wal/0123456789abcdef.wal";
  MEND_ASSERT_OK(WriteFileAtomically(world.fs, path, "LSN1 this is not a record"));
  ScriptedProcessor processor;
  MEND_ASSERT_OK(queue->Start(processor.processor()));
  EXPECT_EQ(registry.counter("mend_lessonq_wal_corruption_total", "").value(), 1.0);
  EXPECT_FALSE(world.fs.Exists(path));
  EXPECT_TRUE(processor.calls().empty());
}

// A crash between the two writes of a move between wal/ and dlq/ leaves a job in both (the
// destination is written first). `wal_copy` and `dead_copy` are what each directory then holds.
void LeaveInBoth(QueueWorld& world, const Job& wal_copy, const Job& dead_copy) {
  auto wal = WalDir::Open(world.fs, "/q/wal");
  MEND_ASSERT_OK(wal);
  auto dlq = WalDir::Open(world.fs, "/q/dlq");
  MEND_ASSERT_OK(dlq);
  MEND_ASSERT_OK((*wal)->Update(wal_copy));
  MEND_ASSERT_OK((*dlq)->Update(dead_copy));
}

Job JobOf(QueueWorld& world, int i, int64_t attempts, std::string error) {
  Job job;
  job.request = Request(i);
  job.id = JobIdFor(job.request);
  job.enqueued_at = world.clock.Now();
  job.next_attempt_at = world.clock.Now();
  job.attempts = attempts;
  job.last_error = std::move(error);
  return job;
}

TEST(LessonQueueReplayTest, ADeadLetterAlsoLeftInTheWalIsNotProcessedAgain) {
  QueueWorld world;
  const Job dead = JobOf(world, 1, 3, "the model refused");
  ASSERT_NO_FATAL_FAILURE(LeaveInBoth(world, JobOf(world, 1, 2, "timeout"), dead));
  auto queue = OpenQueue(world, nullptr);
  ScriptedProcessor processor;
  MEND_ASSERT_OK(queue->Start(processor.processor()));
  ASSERT_TRUE(queue->Enqueue(Request(2)).ok());
  processor.WaitForCalls(1);
  world.clock.BlockUntilWaiters(2);  // the job is acknowledged and the workers wait again
  EXPECT_THAT(processor.ids(), ElementsAre(JobIdFor(Request(2))));
  EXPECT_THAT(queue->DeadLetters(), IsOkAndHolds(ElementsAre(dead)));
  EXPECT_THAT(queue->Pending(), IsOkAndHolds(IsEmpty()));
}

TEST(LessonQueueReplayTest, ARetriedDeadLetterAlsoLeftInTheDlqIsProcessedAndNoLongerDead) {
  QueueWorld world;
  ASSERT_NO_FATAL_FAILURE(
      LeaveInBoth(world, JobOf(world, 1, 0, ""), JobOf(world, 1, 3, "the model refused")));
  auto queue = OpenQueue(world, nullptr);
  ScriptedProcessor processor;
  MEND_ASSERT_OK(queue->Start(processor.processor()));
  processor.WaitForCalls(1);
  EXPECT_THAT(processor.ids(), ElementsAre(JobIdFor(Request(1))));
  EXPECT_THAT(queue->DeadLetters(), IsOkAndHolds(IsEmpty()));
}

TEST(LessonQueueReplayTest, APurgedDeadLetterDoesNotComeBackFromItsWalCopy) {
  QueueWorld world;
  const Job dead = JobOf(world, 1, 3, "the model refused");
  ASSERT_NO_FATAL_FAILURE(LeaveInBoth(world, JobOf(world, 1, 2, "timeout"), dead));
  {
    auto admin = OpenQueue(world, nullptr);  // e.g. `mend reflect purge`: never started
    MEND_ASSERT_OK(admin->PurgeDeadLetter(dead.id));
    EXPECT_THAT(admin->Pending(), IsOkAndHolds(IsEmpty()));
  }
  auto queue = OpenQueue(world, nullptr);
  ScriptedProcessor processor;
  MEND_ASSERT_OK(queue->Start(processor.processor()));
  ASSERT_TRUE(queue->Enqueue(Request(2)).ok());
  processor.WaitForCalls(1);
  EXPECT_THAT(processor.ids(), ElementsAre(JobIdFor(Request(2))));
  EXPECT_THAT(queue->DeadLetters(), IsOkAndHolds(IsEmpty()));
}

TEST(LessonQueueReplayTest, PurgingADeadLetterKeepsAWalCopyRetriedByHand) {
  QueueWorld world;
  const Job dead = JobOf(world, 1, 3, "the model refused");
  ASSERT_NO_FATAL_FAILURE(LeaveInBoth(world, JobOf(world, 1, 0, ""), dead));
  auto admin = OpenQueue(world, nullptr);
  MEND_ASSERT_OK(admin->PurgeDeadLetter(dead.id));
  EXPECT_THAT(admin->Pending(), IsOkAndHolds(ElementsAre(Field(&Job::id, dead.id))));
}

TEST(LessonQueueOwnerTest, SecondOwnerIsUnavailableAndItsRecordsArePickedUp) {
  QueueWorld world;
  auto owner = OpenQueue(world, nullptr);
  auto other = OpenQueue(world, nullptr);
  ScriptedProcessor processor;
  ScriptedProcessor unused;
  MEND_ASSERT_OK(owner->Start(processor.processor()));
  EXPECT_THAT(other->Start(unused.processor()), StatusIs(StatusCode::kUnavailable));
  EXPECT_FALSE(other->owner());
  EXPECT_THAT(other->DrainNow(seconds(1)), StatusIs(StatusCode::kFailedPrecondition));

  Result<EnqueueResult> result = other->Enqueue(Request(1));
  ASSERT_TRUE(result.ok());
  EXPECT_EQ(result->outcome, EnqueueOutcome::kAccepted);
  world.clock.BlockUntilWaiters(2);
  EXPECT_THAT(owner->Stats(), IsOkAndHolds(AllOf(Field(&QueueStats::queue_depth, 0),
                                                 Field(&QueueStats::wal_records, 1))));
  world.clock.Advance(TestOptions().poll_interval);
  processor.WaitForCalls(1);
  EXPECT_EQ(processor.calls()[0].id, result->id);
  EXPECT_TRUE(unused.calls().empty());
}

TEST(LessonQueueMetricsTest, TheTenMetricsAreExported) {
  QueueWorld world;
  obs::MetricsRegistry registry;
  auto queue = OpenQueue(world, &registry);
  ScriptedProcessor processor;
  // Enqueued before Start, so the second call is deduped against the pending record.
  ASSERT_TRUE(queue->Enqueue(Request(1)).ok());
  ASSERT_TRUE(queue->Enqueue(Request(1)).ok());
  MEND_ASSERT_OK(queue->Start(processor.processor()));
  processor.WaitForCalls(1);
  world.clock.BlockUntilWaiters(2);
  MEND_EXPECT_OK(registry.status());
  const std::string text = registry.RenderPrometheus();
  for (const char* name :
       {"mend_lessonq_enqueue_total", "mend_lessonq_queue_depth",
        "mend_lessonq_processing_duration_seconds", "mend_lessonq_attempts_total",
        "mend_lessonq_retry_total", "mend_lessonq_dlq_size", "mend_lessonq_wal_segments",
        "mend_lessonq_wal_corruption_total", "mend_lessonq_stale_discarded_total",
        "mend_lessonq_persist_failures_total"}) {
    EXPECT_THAT(text, HasSubstr(name));
  }
  EXPECT_THAT(text, HasSubstr("mend_lessonq_enqueue_total{outcome=\"accepted\"} 1"));
  EXPECT_THAT(text, HasSubstr("mend_lessonq_enqueue_total{outcome=\"deduped\"} 1"));
  EXPECT_THAT(text, HasSubstr("mend_lessonq_attempts_total{outcome=\"success\"} 1"));
  EXPECT_THAT(text,
              HasSubstr("mend_lessonq_processing_duration_seconds_count{outcome=\"success\"} 1"));
}

TEST(LessonQueueFaultTest, FailedWalWriteFailsTheEnqueueAndQueuesNothing) {
  QueueWorld world;
  FaultInjectionFileSystem faulty(&world.fs);
  Env env{&faulty, &world.clock, &world.random};
  // Declared before the queue, so it outlives the workers: the last job may still be in their
  // hands when the test ends.
  ScriptedProcessor processor;
  auto queue = LessonQueue::Open(env, TestOptions(), nullptr);
  ASSERT_TRUE(queue.ok());
  MEND_ASSERT_OK((*queue)->Start(processor.processor()));
  faulty.FailNext(FsOp::kSync, ENOSPC);
  EXPECT_THAT((*queue)->Enqueue(Request(1)), StatusIs(StatusCode::kResourceExhausted));
  EXPECT_THAT((*queue)->Stats(), IsOkAndHolds(AllOf(Field(&QueueStats::queue_depth, 0),
                                                    Field(&QueueStats::wal_records, 0))));
  EXPECT_TRUE(processor.calls().empty());
  // The next enqueue of the same request succeeds: nothing was left behind.
  Result<EnqueueResult> again = (*queue)->Enqueue(Request(1));
  ASSERT_TRUE(again.ok()) << again.status();
  EXPECT_TRUE(again->created);
}

TEST(DetachedLessonRunnerTest, ProcessesEachRequestOnceInTheBackground) {
  QueueWorld world;
  ScriptedProcessor processor([](const Job& job, const JobContext&) -> Result<ProcessResult> {
    if (job.request == Request(2)) return UnavailableError("not retried in legacy mode");
    return ProcessResult::kSuccess;
  });
  {
    DetachedLessonRunner runner(world.env(), processor.processor(), seconds(120));
    for (int i = 1; i <= 3; ++i) {
      Result<EnqueueResult> result = runner.Enqueue(Request(i));
      ASSERT_TRUE(result.ok());
      EXPECT_EQ(result->id, JobIdFor(Request(i)));
      EXPECT_TRUE(result->created);
      EXPECT_EQ(result->outcome, EnqueueOutcome::kAccepted);
    }
    runner.WaitIdle();
    EXPECT_EQ(processor.calls().size(), 3u);
    EXPECT_EQ(processor.contexts()[0].deadline, world.clock.Now() + seconds(120));
  }
  EXPECT_EQ(processor.calls().size(), 3u);
  EXPECT_TRUE(world.fs.List("/").value_or(std::vector<std::string>{}).empty());
}

TEST(DetachedLessonRunnerTest, ThrowingProcessorDoesNotEscape) {
  QueueWorld world;
  ScriptedProcessor processor([](const Job&, const JobContext&) -> Result<ProcessResult> {
    throw std::runtime_error("boom");
  });
  DetachedLessonRunner runner(world.env(), processor.processor(), seconds(1));
  ASSERT_TRUE(runner.Enqueue(Request(1)).ok());
  runner.WaitIdle();
  EXPECT_EQ(processor.calls().size(), 1u);
}

}  // namespace
}  // namespace mend::lessonq
