// Batches of the PostgreSQL lesson queue: one statement claims several jobs and completes the jobs
// finished since; claims take jobs ahead only while attempts are fast; a stopping queue completes
// what it finished and hands back what it held, at once.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <chrono>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "lessonq/pg_job_table.h"
#include "tests/lessonq/pg_queue_test_util.h"
#include "tests/support/status_matchers.h"

namespace mend::lessonq {
namespace {

using ::mend::testing::IsOkAndHolds;
using ::mend::testing::StatusIs;
using std::chrono::seconds;
using ::testing::AllOf;
using ::testing::Each;
using ::testing::ElementsAre;
using ::testing::Field;
using ::testing::IsEmpty;
using testing::PgOptions;
using testing::PgQueueTest;
using testing::RawQuery;
using testing::Request;
using testing::ScriptedProcessor;
using ::testing::SizeIs;
using testing::TestOptions;
using ::testing::UnorderedElementsAre;

std::vector<std::string> IdsOf(const std::vector<ClaimedJob>& jobs) {
  std::vector<std::string> ids;
  for (const ClaimedJob& claimed : jobs) ids.push_back(claimed.job.id);
  return ids;
}

class PgBatchTest : public PgQueueTest {
 protected:
  void SetUp() override {
    PgQueueTest::SetUp();
    if (IsSkipped()) return;
    auto table = PgJobTable::Open(PgOptions(schema_), 1);
    ASSERT_TRUE(table.ok()) << table.status();
    table_ = std::move(table).value();
  }

  std::vector<ClaimedJob> Claim(const std::vector<ClaimedJob>& completed = {}) {
    const Time now = world_.clock.Now();
    auto claimed =
        table_->Claim(now, now + seconds(10), 10, "claim expired", ClaimFilter{}, completed);
    EXPECT_TRUE(claimed.ok()) << claimed.status();
    return claimed.ok() ? *claimed : std::vector<ClaimedJob>{};
  }

  // Rows whose claim is held right now.
  std::string Claimed() {
    return RawQuery("SELECT count(*) FROM \"" + schema_ +
                    "\".lesson_jobs WHERE claim_token IS NOT NULL");
  }

  std::unique_ptr<PgJobTable> table_;
};

TEST_F(PgBatchTest, AClaimTakesSeveralJobsAndCompletesTheFinishedOnesInTheSameStatement) {
  auto queue = Open();
  ASSERT_NE(queue, nullptr);
  for (int i = 1; i <= 3; ++i) ASSERT_TRUE(queue->Enqueue(Request(i)).ok());
  std::vector<ClaimedJob> claimed = Claim();
  ASSERT_THAT(claimed, SizeIs(3));
  EXPECT_THAT(claimed, Each(Field(&ClaimedJob::locked_until, world_.clock.Now() + seconds(10))));

  EXPECT_THAT(Claim({claimed[0], claimed[1]}), IsEmpty());  // nothing else is due
  EXPECT_THAT(queue->Pending(), IsOkAndHolds(ElementsAre(Field(&Job::id, claimed[2].job.id))));
  EXPECT_THAT(table_->CompleteAll({claimed[2]}), IsOkAndHolds(1));
  EXPECT_THAT(table_->CompleteAll({claimed[2]}), IsOkAndHolds(0));
  EXPECT_THAT(queue->Pending(), IsOkAndHolds(IsEmpty()));
}

TEST_F(PgBatchTest, ManyCompletionsOrReleasesChangeOnlyTheClaimsStillHeld) {
  auto queue = Open();
  ASSERT_NE(queue, nullptr);
  for (int i = 1; i <= 2; ++i) ASSERT_TRUE(queue->Enqueue(Request(i)).ok());
  std::vector<ClaimedJob> late = Claim();
  ASSERT_THAT(late, SizeIs(2));
  world_.clock.Advance(seconds(11));
  std::vector<ClaimedJob> current = Claim();
  ASSERT_THAT(current, SizeIs(2));

  EXPECT_THAT(table_->CompleteAll(late), IsOkAndHolds(0));
  EXPECT_THAT(table_->ReleaseAll(late, world_.clock.Now()), IsOkAndHolds(0));
  EXPECT_THAT(Claim(late), IsEmpty());
  EXPECT_EQ(Claimed(), "2");
  // One of the current claims, paired with the other's token, is no claim at all.
  ClaimedJob mixed = current[0];
  mixed.token = late[1].token;
  EXPECT_THAT(table_->CompleteAll({mixed}), IsOkAndHolds(0));

  EXPECT_THAT(table_->ReleaseAll(current, world_.clock.Now()), IsOkAndHolds(2));
  EXPECT_EQ(Claimed(), "0");
  std::vector<ClaimedJob> again = Claim();
  EXPECT_THAT(IdsOf(again), UnorderedElementsAre(current[0].job.id, current[1].job.id));
  EXPECT_THAT(again, Each(Field(&ClaimedJob::job, Field(&Job::attempts, 1))));  // the expiry
}

TEST_F(PgBatchTest, FastAttemptsAreClaimedInBatches) {
  std::mutex mu;
  std::vector<std::string> claimed_during;  // rows claimed while each attempt ran
  ScriptedProcessor processor([&](const Job&, const JobContext&) -> Result<ProcessResult> {
    const std::string claimed = Claimed();
    std::lock_guard<std::mutex> lock(mu);
    claimed_during.push_back(claimed);
    return ProcessResult::kSuccess;
  });
  auto queue = Open();
  ASSERT_NE(queue, nullptr);
  for (int i = 1; i <= 5; ++i) ASSERT_TRUE(queue->Enqueue(Request(i)).ok());
  MEND_ASSERT_OK(queue->Start(processor.processor()));
  processor.WaitForCalls(5);
  world_.clock.BlockUntilWaiters(2);
  // The first claim takes one job; the attempt took no time, so the next claim takes the other
  // four and completes the first. The jobs finished meanwhile keep their claims until the next
  // claim completes them.
  std::lock_guard<std::mutex> lock(mu);
  EXPECT_THAT(claimed_during, ElementsAre("1", "4", "4", "4", "4"));
  EXPECT_THAT(queue->Pending(), IsOkAndHolds(IsEmpty()));
}

TEST_F(PgBatchTest, SlowAttemptsAreClaimedOneAtATime) {
  std::mutex mu;
  std::vector<std::string> claimed_during;
  ScriptedProcessor processor([&](const Job&, const JobContext&) -> Result<ProcessResult> {
    const std::string claimed = Claimed();
    {
      std::lock_guard<std::mutex> lock(mu);
      claimed_during.push_back(claimed);
    }
    world_.clock.Advance(seconds(10));  // a model's answer takes its time
    return ProcessResult::kSuccess;
  });
  auto queue = Open();
  ASSERT_NE(queue, nullptr);
  for (int i = 1; i <= 3; ++i) ASSERT_TRUE(queue->Enqueue(Request(i)).ok());
  MEND_ASSERT_OK(queue->Start(processor.processor()));
  processor.WaitForCalls(3);
  world_.clock.BlockUntilWaiters(2);
  std::lock_guard<std::mutex> lock(mu);
  EXPECT_THAT(claimed_during, ElementsAre("1", "1", "1"));
  EXPECT_THAT(queue->Pending(), IsOkAndHolds(IsEmpty()));
}

TEST_F(PgBatchTest, AJobHeldUntilItsClaimCannotCoverAnAttemptGoesBackUncharged) {
  std::vector<std::string> ids;
  for (int i = 1; i <= 4; ++i) ids.push_back(JobIdFor(Request(i)));
  std::mutex mu;
  std::vector<std::string> claimed_during;
  ScriptedProcessor processor([&](const Job& job, const JobContext&) -> Result<ProcessResult> {
    const std::string claimed = Claimed();
    {
      std::lock_guard<std::mutex> lock(mu);
      claimed_during.push_back(claimed);
    }
    // The second job outlasts the claim margin (10 s) while the third and fourth wait for it.
    if (job.id == ids[1]) world_.clock.Advance(seconds(11));
    return ProcessResult::kSuccess;
  });
  auto queue = Open();
  ASSERT_NE(queue, nullptr);
  for (int i = 1; i <= 4; ++i) {
    ASSERT_TRUE(queue->Enqueue(Request(i)).ok());
    world_.clock.Advance(seconds(1));  // claimed in this order
  }
  MEND_ASSERT_OK(queue->Start(processor.processor()));
  processor.WaitForCalls(4);
  world_.clock.BlockUntilWaiters(2);
  EXPECT_THAT(processor.ids(), ElementsAre(ids[0], ids[1], ids[2], ids[3]));
  // The held jobs went back and were claimed again, one at a time now that attempts are slow; the
  // handing back cost them no attempt.
  std::lock_guard<std::mutex> lock(mu);
  EXPECT_THAT(claimed_during, ElementsAre("1", "3", "1", "1"));
  EXPECT_THAT(processor.calls(),
              Each(AllOf(Field(&Job::attempts, 1), Field(&Job::last_error, ""))));
  EXPECT_THAT(queue->Pending(), IsOkAndHolds(IsEmpty()));
}

TEST_F(PgBatchTest, ShutdownCompletesFinishedJobsAndHandsBackHeldOnesAtOnce) {
  std::vector<std::string> ids;
  for (int i = 1; i <= 5; ++i) ids.push_back(JobIdFor(Request(i)));
  ScriptedProcessor blocking(
      [&](const Job& job, const JobContext& context) -> Result<ProcessResult> {
        // The second job runs until shutdown cancels it, and succeeds all the same.
        if (job.id == ids[1]) context.cancelled->wait(false);
        return ProcessResult::kSuccess;
      });
  auto queue = Open();
  ASSERT_NE(queue, nullptr);
  for (int i = 1; i <= 5; ++i) {
    ASSERT_TRUE(queue->Enqueue(Request(i)).ok());
    world_.clock.Advance(seconds(1));  // claimed in this order
  }
  MEND_ASSERT_OK(queue->Start(blocking.processor()));
  blocking.WaitForCalls(2);
  EXPECT_EQ(Claimed(), "4");  // the second, and three held for the worker
  EXPECT_THAT(queue->Shutdown(Duration::zero()), StatusIs(StatusCode::kDeadlineExceeded));
  EXPECT_THAT(blocking.ids(), ElementsAre(ids[0], ids[1]));

  // The second job is done; the held ones are due at once, unclaimed and uncharged.
  EXPECT_EQ(Claimed(), "0");
  std::vector<ClaimedJob> rest = Claim();
  EXPECT_THAT(IdsOf(rest), ElementsAre(ids[2], ids[3], ids[4]));
  EXPECT_THAT(rest, Each(Field(&ClaimedJob::job, Field(&Job::attempts, 0))));
}

}  // namespace
}  // namespace mend::lessonq
