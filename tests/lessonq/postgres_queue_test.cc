// The PostgreSQL lesson queue through DurableLessonQueue: enqueue and dedupe, processing, retries
// with backoff, dead letters and the operator actions, stale discard, schema versions and
// connection errors. Virtual time (ManualClock) throughout.
#include "mend/lessonq/postgres_queue.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <mutex>
#include <utility>
#include <vector>

#include "mend/obs/metrics.h"
#include "tests/lessonq/pg_queue_test_util.h"
#include "tests/support/status_matchers.h"

namespace mend::lessonq {
namespace {

using ::mend::testing::IsOkAndHolds;
using ::mend::testing::StatusIs;
using std::chrono::hours;
using std::chrono::milliseconds;
using std::chrono::seconds;
using ::testing::ElementsAre;
using ::testing::Field;
using ::testing::HasSubstr;
using ::testing::IsEmpty;
using testing::PgOptions;
using testing::PgQueueTest;
using testing::RawExec;
using testing::Request;
using testing::ScriptedProcessor;
using testing::TestOptions;

TEST_F(PgQueueTest, EnqueueStoresTheJobAndDedupesItsId) {
  auto queue = Open();
  ASSERT_NE(queue, nullptr);
  auto first = queue->Enqueue(Request(1));
  ASSERT_TRUE(first.ok()) << first.status();
  EXPECT_EQ(first->id, JobIdFor(Request(1)));
  EXPECT_TRUE(first->created);
  EXPECT_EQ(first->outcome, EnqueueOutcome::kAccepted);
  auto again = queue->Enqueue(Request(1));
  ASSERT_TRUE(again.ok()) << again.status();
  EXPECT_FALSE(again->created);
  EXPECT_EQ(again->outcome, EnqueueOutcome::kDeduped);

  const Time now = world_.clock.Now();
  EXPECT_THAT(queue->Pending(),
              IsOkAndHolds(ElementsAre(
                  AllOf(Field(&Job::id, first->id), Field(&Job::request, Request(1)),
                        Field(&Job::enqueued_at, now), Field(&Job::next_attempt_at, now),
                        Field(&Job::attempts, 0), Field(&Job::last_error, "")))));
  EXPECT_THAT(queue->Stats(), IsOkAndHolds(AllOf(Field(&QueueStats::wal_records, 1),
                                                 Field(&QueueStats::dlq_size, 0),
                                                 Field(&QueueStats::queue_depth, 0))));
  EXPECT_FALSE(queue->owner());
  EXPECT_THAT(queue->location(), HasSubstr("(schema " + schema_ + ")"));
}

TEST_F(PgQueueTest, WorkersProcessEachJobOnceAndDeleteIt) {
  obs::MetricsRegistry registry;
  auto queue = Open(TestOptions(), &registry);
  ASSERT_NE(queue, nullptr);
  ScriptedProcessor processor;
  MEND_ASSERT_OK(queue->Start(processor.processor()));
  EXPECT_TRUE(queue->owner());
  EXPECT_THAT(queue->Start(processor.processor()), StatusIs(StatusCode::kFailedPrecondition));
  ASSERT_TRUE(queue->Enqueue(Request(1)).ok());
  ASSERT_TRUE(queue->Enqueue(Request(2)).ok());
  processor.WaitForCalls(2);
  world_.clock.BlockUntilWaiters(2);  // the worker waits for work again, and the poller
  EXPECT_THAT(processor.ids(), ElementsAre(JobIdFor(Request(1)), JobIdFor(Request(2))));
  EXPECT_EQ(processor.calls()[0].attempts, 1);
  EXPECT_THAT(queue->Pending(), IsOkAndHolds(IsEmpty()));
  auto& attempts = registry.counter_family("mend_lessonq_attempts_total", "", {"outcome"});
  EXPECT_EQ(attempts.WithLabels({"success"}).value(), 2.0);
  auto& enqueued = registry.counter_family("mend_lessonq_enqueue_total", "", {"outcome"});
  EXPECT_EQ(enqueued.WithLabels({"accepted"}).value(), 2.0);

  auto drained = queue->DrainNow(seconds(5));
  ASSERT_TRUE(drained.ok()) << drained.status();
  EXPECT_EQ(drained->succeeded, 2);
  EXPECT_EQ(drained->remaining, 0);
  MEND_EXPECT_OK(queue->Shutdown(seconds(5)));
  EXPECT_FALSE(queue->owner());
}

TEST_F(PgQueueTest, TransientFailureIsRetriedAfterTheDelayNotBefore) {
  obs::MetricsRegistry registry;
  auto queue = Open(TestOptions(), &registry);
  ASSERT_NE(queue, nullptr);
  const std::string marker = JobIdFor(Request(99));
  ScriptedProcessor processor([&](const Job& job, const JobContext&) -> Result<ProcessResult> {
    if (job.id != marker && job.attempts == 1) return UnavailableError("provider 503");
    return ProcessResult::kSuccess;
  });
  MEND_ASSERT_OK(queue->Start(processor.processor()));
  ASSERT_TRUE(queue->Enqueue(Request(1)).ok());
  processor.WaitForCalls(1);
  world_.clock.BlockUntilWaiters(2);
  ASSERT_THAT(
      queue->Pending(),
      IsOkAndHolds(ElementsAre(AllOf(Field(&Job::attempts, 1),
                                     Field(&Job::next_attempt_at, world_.clock.Now() + seconds(1)),
                                     Field(&Job::last_error, HasSubstr("provider 503"))))));

  // Half the delay later the job is not due: a job enqueued now is processed first.
  world_.clock.Advance(milliseconds(500));
  ASSERT_TRUE(queue->Enqueue(Request(99)).ok());
  processor.WaitForCalls(2);
  EXPECT_EQ(processor.calls()[1].id, marker);

  world_.clock.Advance(milliseconds(500));
  processor.WaitForCalls(3);
  world_.clock.BlockUntilWaiters(2);
  EXPECT_EQ(processor.calls()[2].request, Request(1));
  EXPECT_EQ(processor.calls()[2].attempts, 2);
  EXPECT_THAT(queue->Pending(), IsOkAndHolds(IsEmpty()));
  EXPECT_EQ(registry.counter_family("mend_lessonq_retry_total", "", {"attempt"})
                .WithLabels({"1"})
                .value(),
            1.0);
}

TEST_F(PgQueueTest, ExhaustedRetriesDeadLetterAndRetryBringsTheJobBack) {
  obs::MetricsRegistry registry;
  QueueOptions options = TestOptions();
  options.max_attempts = 2;
  std::mutex mu;
  std::vector<std::pair<int, JobFate>> fates;  // (attempts, fate)
  options.on_job = [&](const Job& job, JobFate fate) {
    std::lock_guard<std::mutex> lock(mu);
    fates.emplace_back(job.attempts, fate);
  };
  auto queue = Open(options, &registry);
  ASSERT_NE(queue, nullptr);
  std::atomic<bool> fail{true};
  ScriptedProcessor processor([&](const Job&, const JobContext&) -> Result<ProcessResult> {
    if (fail.load()) return ResourceExhaustedError("rate limited");
    return ProcessResult::kSuccess;
  });
  MEND_ASSERT_OK(queue->Start(processor.processor()));
  ASSERT_TRUE(queue->Enqueue(Request(1)).ok());
  processor.WaitForCalls(1);
  world_.clock.BlockUntilWaiters(2);
  world_.clock.Advance(seconds(1));
  processor.WaitForCalls(2);
  world_.clock.BlockUntilWaiters(2);
  EXPECT_THAT(queue->Pending(), IsOkAndHolds(IsEmpty()));
  EXPECT_THAT(queue->DeadLetters(),
              IsOkAndHolds(ElementsAre(AllOf(
                  Field(&Job::id, JobIdFor(Request(1))), Field(&Job::request, Request(1)),
                  Field(&Job::attempts, 2), Field(&Job::last_error, HasSubstr("rate limited"))))));
  EXPECT_THAT(queue->Stats(), IsOkAndHolds(AllOf(Field(&QueueStats::wal_records, 0),
                                                 Field(&QueueStats::dlq_size, 1))));
  EXPECT_EQ(registry.gauge("mend_lessonq_dlq_size", "").value(), 1.0);

  fail.store(false);
  MEND_ASSERT_OK(queue->RetryDeadLetter(JobIdFor(Request(1))));
  processor.WaitForCalls(3);
  world_.clock.BlockUntilWaiters(2);
  EXPECT_EQ(processor.calls()[2].attempts, 1);  // attempts reset
  EXPECT_THAT(queue->DeadLetters(), IsOkAndHolds(IsEmpty()));
  EXPECT_THAT(queue->Pending(), IsOkAndHolds(IsEmpty()));
  EXPECT_THAT(queue->RetryDeadLetter(JobIdFor(Request(1))), StatusIs(StatusCode::kNotFound));
  {
    std::lock_guard<std::mutex> lock(mu);
    EXPECT_THAT(fates,
                ElementsAre(std::pair(1, JobFate::kRetrying), std::pair(2, JobFate::kDeadLettered),
                            std::pair(1, JobFate::kStored)));
  }
  EXPECT_THAT(queue->RetryDeadLetter("../etc/passwd"), StatusIs(StatusCode::kInvalidArgument));
}

TEST_F(PgQueueTest, PermanentErrorDeadLettersAtOnceAndPurgeDeletesIt) {
  auto queue = Open();
  ASSERT_NE(queue, nullptr);
  ScriptedProcessor processor([](const Job&, const JobContext&) -> Result<ProcessResult> {
    return InvalidArgumentError("no <situation> block");
  });
  MEND_ASSERT_OK(queue->Start(processor.processor()));
  ASSERT_TRUE(queue->Enqueue(Request(1)).ok());
  processor.WaitForCalls(1);
  world_.clock.BlockUntilWaiters(2);
  EXPECT_THAT(queue->DeadLetters(), IsOkAndHolds(ElementsAre(Field(&Job::attempts, 1))));
  MEND_ASSERT_OK(queue->Shutdown(seconds(1)));

  // As in the WAL queue, a dead letter does not hold back a new job of the same id.
  auto again = queue->Enqueue(Request(1));
  ASSERT_TRUE(again.ok()) << again.status();
  EXPECT_TRUE(again->created);
  EXPECT_THAT(queue->Stats(), IsOkAndHolds(AllOf(Field(&QueueStats::wal_records, 1),
                                                 Field(&QueueStats::dlq_size, 1))));
  MEND_ASSERT_OK(queue->PurgeDeadLetter(JobIdFor(Request(1))));
  EXPECT_THAT(queue->DeadLetters(), IsOkAndHolds(IsEmpty()));
  EXPECT_THAT(queue->Pending(), IsOkAndHolds(ElementsAre(Field(&Job::attempts, 0))));
  EXPECT_THAT(queue->PurgeDeadLetter(JobIdFor(Request(1))), StatusIs(StatusCode::kNotFound));
}

TEST_F(PgQueueTest, StaleJobsAreDiscardedAtStart) {
  obs::MetricsRegistry registry;
  QueueOptions options = TestOptions();
  options.stale_after = hours(1);
  auto queue = Open(options, &registry);
  ASSERT_NE(queue, nullptr);
  ASSERT_TRUE(queue->Enqueue(Request(1)).ok());
  world_.clock.Advance(hours(2));
  ASSERT_TRUE(queue->Enqueue(Request(2)).ok());
  ScriptedProcessor processor;
  MEND_ASSERT_OK(queue->Start(processor.processor()));
  processor.WaitForCalls(1);
  world_.clock.BlockUntilWaiters(2);
  EXPECT_THAT(processor.ids(), ElementsAre(JobIdFor(Request(2))));
  EXPECT_EQ(registry.counter("mend_lessonq_stale_discarded_total", "").value(), 1.0);
  EXPECT_THAT(queue->Pending(), IsOkAndHolds(IsEmpty()));
}

TEST_F(PgQueueTest, AJobThatTurnsStaleWhileWaitingForItsRetryIsDiscardedWhenClaimed) {
  obs::MetricsRegistry registry;
  QueueOptions options = TestOptions();
  options.stale_after = hours(2);
  options.initial_delay = hours(3);
  options.max_delay = hours(3);
  auto queue = Open(options, &registry);
  ASSERT_NE(queue, nullptr);
  ScriptedProcessor processor([](const Job&, const JobContext&) -> Result<ProcessResult> {
    return UnavailableError("provider 503");
  });
  MEND_ASSERT_OK(queue->Start(processor.processor()));
  ASSERT_TRUE(queue->Enqueue(Request(1)).ok());
  processor.WaitForCalls(1);
  world_.clock.BlockUntilWaiters(2);
  world_.clock.Advance(hours(3));
  world_.clock.BlockUntilWaiters(2);
  auto drained = queue->DrainNow(seconds(5));
  ASSERT_TRUE(drained.ok()) << drained.status();
  EXPECT_EQ(drained->remaining, 0);
  EXPECT_EQ(processor.calls().size(), 1u);
  EXPECT_EQ(registry.counter("mend_lessonq_stale_discarded_total", "").value(), 1.0);
}

TEST_F(PgQueueTest, TablesOfANewerMendAreRefused) {
  ASSERT_NE(Open(), nullptr);
  RawExec("UPDATE \"" + schema_ + "\".lesson_queue_meta SET value = '" +
          std::to_string(PostgresLessonQueueSchemaVersion() + 1) +
          "' WHERE key = 'lessonq.schema_version'");
  auto queue = OpenPostgresLessonQueue(world_.env(), TestOptions(), PgOptions(schema_), nullptr);
  EXPECT_THAT(queue, StatusIs(StatusCode::kFailedPrecondition, HasSubstr("newer mend")));
}

TEST_F(PgQueueTest, DrainNeedsTheWorkers) {
  auto queue = Open();
  ASSERT_NE(queue, nullptr);
  EXPECT_THAT(queue->DrainNow(seconds(1)), StatusIs(StatusCode::kFailedPrecondition));
  MEND_EXPECT_OK(queue->Shutdown(seconds(1)));  // never started: nothing to do
}

TEST(PgQueueOpenTest, AServerThatCannotBeReachedIsUnavailableAndThePasswordStaysHidden) {
  testing::QueueWorld world;
  PgQueueOptions pg;
  pg.url = "postgres://mend:s3cret-pw@127.0.0.1:1/mend";
  pg.connect_timeout = seconds(2);
  auto queue = OpenPostgresLessonQueue(world.env(), TestOptions(), pg, nullptr);
  EXPECT_THAT(queue, StatusIs(StatusCode::kUnavailable, ::testing::Not(HasSubstr("s3cret-pw"))));
}

TEST(PgQueueOpenTest, BadOptionsAreInvalid) {
  testing::QueueWorld world;
  PgQueueOptions pg;
  pg.url = "postgres://127.0.0.1:notaport/mend";
  EXPECT_THAT(OpenPostgresLessonQueue(world.env(), TestOptions(), pg, nullptr),
              StatusIs(StatusCode::kInvalidArgument));
  QueueOptions options = TestOptions();
  options.workers = 0;
  EXPECT_THAT(OpenPostgresLessonQueue(world.env(), options, pg, nullptr),
              StatusIs(StatusCode::kInvalidArgument, HasSubstr("workers")));
}

}  // namespace
}  // namespace mend::lessonq
