// MigrateWalToPostgres: pending WAL jobs and dead letters move into the PostgreSQL queue with
// their ids, times, attempts and errors; a job already there is not inserted twice; a corrupt
// record is reported and left in place; a second run is harmless; a WAL whose workers run is
// left alone.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <chrono>
#include <memory>

#include "mend/lessonq/lesson_queue.h"
#include "mend/lessonq/postgres_queue.h"
#include "mend/lessonq/wal_dir.h"
#include "tests/lessonq/pg_queue_test_util.h"
#include "tests/support/status_matchers.h"

namespace mend::lessonq {
namespace {

using ::mend::testing::IsOkAndHolds;
using ::mend::testing::StatusIs;
using std::chrono::seconds;
using ::testing::ElementsAre;
using ::testing::Field;
using ::testing::IsEmpty;
using testing::PgOptions;
using testing::PgQueueTest;
using testing::Request;
using testing::TestOptions;
using ::testing::UnorderedElementsAre;

class PgMigrateTest : public PgQueueTest {
 protected:
  // Two pending jobs in the WAL (the second enqueued a second later) and one dead letter.
  void FillWal() {
    auto wal = LessonQueue::Open(world_.env(), TestOptions(), nullptr);
    ASSERT_TRUE(wal.ok()) << wal.status();
    ASSERT_TRUE((*wal)->Enqueue(Request(1)).ok());
    world_.clock.Advance(seconds(1));
    ASSERT_TRUE((*wal)->Enqueue(Request(2)).ok());
    auto dlq = WalDir::Open(world_.fs, "/q/dlq");
    ASSERT_TRUE(dlq.ok()) << dlq.status();
    const Time at = world_.clock.Now();
    dead_ = Job{JobIdFor(Request(3)), Request(3), at - seconds(60), at, 5, "model said no"};
    MEND_ASSERT_OK((*dlq)->Update(dead_));
  }

  Result<MigrateReport> Migrate() {
    return MigrateWalToPostgres(world_.env(), "/q", PgOptions(schema_));
  }

  std::vector<std::string> Ids(const std::string& dir) {
    auto wal = WalDir::Open(world_.fs, dir);
    EXPECT_TRUE(wal.ok()) << wal.status();
    auto ids = (*wal)->ListIds();
    EXPECT_TRUE(ids.ok()) << ids.status();
    return ids.ok() ? *ids : std::vector<std::string>{};
  }

  Job dead_;
};

TEST_F(PgMigrateTest, MovesPendingJobsAndDeadLettersAndEmptiesTheWal) {
  ASSERT_NO_FATAL_FAILURE(FillWal());
  const Time first = world_.clock.Now() - seconds(1);
  auto report = Migrate();
  ASSERT_TRUE(report.ok()) << report.status();
  EXPECT_EQ(report->moved, 2);
  EXPECT_EQ(report->already_present, 0);
  EXPECT_EQ(report->dead_letters, 1);
  EXPECT_THAT(report->corrupt, IsEmpty());
  EXPECT_THAT(Ids("/q/wal"), IsEmpty());
  EXPECT_THAT(Ids("/q/dlq"), IsEmpty());

  auto queue = Open();
  ASSERT_NE(queue, nullptr);
  EXPECT_THAT(queue->Pending(),
              IsOkAndHolds(ElementsAre(
                  AllOf(Field(&Job::id, JobIdFor(Request(1))), Field(&Job::request, Request(1)),
                        Field(&Job::enqueued_at, first), Field(&Job::attempts, 0)),
                  Field(&Job::id, JobIdFor(Request(2))))));
  EXPECT_THAT(queue->DeadLetters(), IsOkAndHolds(ElementsAre(dead_)));

  // Nothing is left to move; running it again changes nothing.
  auto again = Migrate();
  ASSERT_TRUE(again.ok()) << again.status();
  EXPECT_EQ(again->moved + again->already_present + again->dead_letters, 0);
  EXPECT_THAT(queue->Pending(), IsOkAndHolds(::testing::SizeIs(2)));
}

TEST_F(PgMigrateTest, AJobAlreadyInPostgresIsNotInsertedTwiceAndItsRecordGoes) {
  ASSERT_NO_FATAL_FAILURE(FillWal());
  // As after a crash between an insert and the removal of its record.
  auto queue = Open();
  ASSERT_NE(queue, nullptr);
  ASSERT_TRUE(queue->Enqueue(Request(1)).ok());
  auto report = Migrate();
  ASSERT_TRUE(report.ok()) << report.status();
  EXPECT_EQ(report->moved, 1);
  EXPECT_EQ(report->already_present, 1);
  EXPECT_THAT(Ids("/q/wal"), IsEmpty());
  EXPECT_THAT(queue->Pending(), IsOkAndHolds(::testing::SizeIs(2)));
}

TEST_F(PgMigrateTest, ACorruptRecordIsReportedAndKeptAndTheOthersMove) {
  ASSERT_NO_FATAL_FAILURE(FillWal());
  const std::string bad_id = JobIdFor(Request(4));
  const std::string bad_path = "/q/wal/" + bad_id + ".wal";
  {
    auto file = world_.fs.OpenWritable(bad_path, WriteMode::kTruncate);
    ASSERT_TRUE(file.ok()) << file.status();
    MEND_ASSERT_OK((*file)->Append("LSN1 torn"));
    MEND_ASSERT_OK((*file)->Close());
  }
  auto report = Migrate();
  ASSERT_TRUE(report.ok()) << report.status();
  EXPECT_EQ(report->moved, 2);
  EXPECT_EQ(report->dead_letters, 1);
  EXPECT_THAT(report->corrupt, ElementsAre(bad_path));
  EXPECT_THAT(Ids("/q/wal"), ElementsAre(bad_id));
  EXPECT_TRUE(world_.fs.Exists(bad_path));
}

TEST_F(PgMigrateTest, AWalWhoseWorkersRunIsLeftAlone) {
  ASSERT_NO_FATAL_FAILURE(FillWal());
  testing::Gate gate;  // outlives the owner, whose destructor waits for the processor
  auto owner = LessonQueue::Open(world_.env(), TestOptions(), nullptr);
  ASSERT_TRUE(owner.ok()) << owner.status();
  MEND_ASSERT_OK((*owner)->Start([&](const Job&, const JobContext&) -> Result<ProcessResult> {
    gate.Wait();
    return ProcessResult::kSuccess;
  }));
  EXPECT_THAT(Migrate(), StatusIs(StatusCode::kUnavailable));
  gate.Open();
}

}  // namespace
}  // namespace mend::lessonq
