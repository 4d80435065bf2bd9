// Claims of the PostgreSQL lesson queue: a claim that is never finished (its worker died) expires
// after job_timeout + claim_margin and counts as a failed attempt; a worker whose claim expired
// and was taken over changes nothing; workers of two queue objects ("replicas") on one table
// never hold the same job at once.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <chrono>
#include <map>
#include <mutex>
#include <set>
#include <string>
#include <thread>

#include "lessonq/pg_job_table.h"
#include "tests/lessonq/pg_queue_test_util.h"
#include "tests/support/status_matchers.h"

namespace mend::lessonq {
namespace {

using ::mend::testing::IsOkAndHolds;
using std::chrono::seconds;
using ::testing::ElementsAre;
using ::testing::Field;
using ::testing::HasSubstr;
using ::testing::IsEmpty;
using testing::PgOptions;
using testing::PgQueueTest;
using testing::Request;
using testing::ScriptedProcessor;
using ::testing::SizeIs;
using testing::TestOptions;

class PgClaimTest : public PgQueueTest {
 protected:
  void SetUp() override {
    PgQueueTest::SetUp();
    if (IsSkipped()) return;
    auto table = PgJobTable::Open(PgOptions(schema_), 1);
    ASSERT_TRUE(table.ok()) << table.status();
    table_ = std::move(table).value();
  }

  // What a worker of another process does: claims the due jobs for `claim_for`.
  std::vector<ClaimedJob> ClaimAs(Duration claim_for) {
    const Time now = world_.clock.Now();
    auto claimed = table_->Claim(now, now + claim_for, 10, "claim expired", ClaimFilter{});
    EXPECT_TRUE(claimed.ok()) << claimed.status();
    return claimed.ok() ? *claimed : std::vector<ClaimedJob>{};
  }

  std::unique_ptr<PgJobTable> table_;
};

TEST_F(PgClaimTest, AJobWhoseWorkerDiedIsClaimableAgainAfterTheVisibilityTimeout) {
  auto queue = Open();
  ASSERT_NE(queue, nullptr);
  ASSERT_TRUE(queue->Enqueue(Request(1)).ok());
  // Claimed as the queue's own workers would claim it, and then never finished.
  const Duration claim_for = TestOptions().job_timeout + PgOptions(schema_).claim_margin;
  ASSERT_THAT(ClaimAs(claim_for), SizeIs(1));

  ScriptedProcessor processor;
  MEND_ASSERT_OK(queue->Start(processor.processor()));
  world_.clock.BlockUntilWaiters(2);
  world_.clock.Advance(claim_for - seconds(1));
  EXPECT_THAT(ClaimAs(claim_for), IsEmpty());  // still held by the dead worker
  world_.clock.BlockUntilWaiters(2);
  EXPECT_THAT(processor.calls(), IsEmpty());

  world_.clock.Advance(seconds(1));
  processor.WaitForCalls(1);
  world_.clock.BlockUntilWaiters(2);
  // The expired claim counts as the first attempt.
  EXPECT_EQ(processor.calls()[0].attempts, 2);
  EXPECT_THAT(processor.calls()[0].last_error, HasSubstr("claim expired"));
  EXPECT_THAT(queue->Pending(), IsOkAndHolds(IsEmpty()));
}

TEST_F(PgClaimTest, ALateWorkerCannotFinishAJobAnotherWorkerClaimedSince) {
  auto queue = Open();
  ASSERT_NE(queue, nullptr);
  ASSERT_TRUE(queue->Enqueue(Request(1)).ok());
  std::vector<ClaimedJob> late = ClaimAs(seconds(10));
  ASSERT_THAT(late, SizeIs(1));
  world_.clock.Advance(seconds(11));
  std::vector<ClaimedJob> current = ClaimAs(seconds(10));
  ASSERT_THAT(current, SizeIs(1));
  EXPECT_NE(current[0].token, late[0].token);
  EXPECT_EQ(current[0].job.attempts, 1);

  // Every change by the late worker finds its claim gone and changes nothing.
  EXPECT_THAT(table_->Complete(late[0]), IsOkAndHolds(false));
  EXPECT_THAT(table_->Reschedule(late[0]), IsOkAndHolds(false));
  EXPECT_THAT(table_->Bury(late[0]), IsOkAndHolds(false));
  EXPECT_THAT(table_->Release(late[0], world_.clock.Now()), IsOkAndHolds(false));
  EXPECT_THAT(queue->Pending(), IsOkAndHolds(ElementsAre(Field(&Job::id, JobIdFor(Request(1))))));
  EXPECT_THAT(queue->DeadLetters(), IsOkAndHolds(IsEmpty()));
  EXPECT_THAT(ClaimAs(seconds(10)), IsEmpty());  // the current claim still holds

  EXPECT_THAT(table_->Complete(current[0]), IsOkAndHolds(true));
  EXPECT_THAT(queue->Pending(), IsOkAndHolds(IsEmpty()));
}

TEST_F(PgClaimTest, AJobEnqueuedAgainAfterItWasDoneGetsANewToken) {
  auto queue = Open();
  ASSERT_NE(queue, nullptr);
  ASSERT_TRUE(queue->Enqueue(Request(1)).ok());
  std::vector<ClaimedJob> first = ClaimAs(seconds(10));
  ASSERT_THAT(first, SizeIs(1));
  ASSERT_THAT(table_->Complete(first[0]), IsOkAndHolds(true));
  ASSERT_TRUE(queue->Enqueue(Request(1)).ok());
  std::vector<ClaimedJob> second = ClaimAs(seconds(10));
  ASSERT_THAT(second, SizeIs(1));
  EXPECT_THAT(table_->Complete(first[0]), IsOkAndHolds(false));
  EXPECT_THAT(queue->Pending(), IsOkAndHolds(SizeIs(1)));
}

TEST_F(PgClaimTest, TwoReplicasNeverProcessTheSameJobAtOnce) {
  QueueOptions options = TestOptions();
  options.workers = 3;
  auto a = Open(options);
  auto b = Open(options);
  ASSERT_NE(a, nullptr);
  ASSERT_NE(b, nullptr);
  std::mutex mu;
  std::set<std::string> running;
  std::map<std::string, int> runs;
  bool overlap = false;
  auto process = [&](const Job& job, const JobContext&) -> Result<ProcessResult> {
    {
      std::lock_guard<std::mutex> lock(mu);
      overlap = overlap || !running.insert(job.id).second;
      ++runs[job.id];
    }
    std::this_thread::yield();
    std::lock_guard<std::mutex> lock(mu);
    running.erase(job.id);
    return ProcessResult::kSuccess;
  };
  MEND_ASSERT_OK(a->Start(process));
  MEND_ASSERT_OK(b->Start(process));
  constexpr int kJobs = 200;
  for (int i = 0; i < kJobs; ++i) {
    ASSERT_TRUE((i % 2 == 0 ? a : b)->Enqueue(Request(i)).ok());
  }
  Result<DrainReport> drained_a = InternalError("not run");
  Result<DrainReport> drained_b = InternalError("not run");
  std::thread drain_a([&] { drained_a = a->DrainNow(seconds(60)); });
  std::thread drain_b([&] { drained_b = b->DrainNow(seconds(60)); });
  drain_a.join();
  drain_b.join();
  ASSERT_TRUE(drained_a.ok()) << drained_a.status();
  ASSERT_TRUE(drained_b.ok()) << drained_b.status();
  EXPECT_EQ(drained_a->succeeded + drained_b->succeeded, kJobs);
  EXPECT_FALSE(overlap);
  ASSERT_EQ(runs.size(), static_cast<size_t>(kJobs));
  for (const auto& [id, count] : runs) EXPECT_EQ(count, 1) << id;
  EXPECT_THAT(a->Pending(), IsOkAndHolds(IsEmpty()));
}

}  // namespace
}  // namespace mend::lessonq
