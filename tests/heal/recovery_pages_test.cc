// A pass reads the runs it acts on in bounded pages (max_runs_per_pass): the runs it does not
// reach come first in the next pass, and the skipped counts stay those of every unfinished run.

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdio>
#include <optional>
#include <string>

#include "mend/heal/recovery.h"
#include "tests/heal/recovery_test_support.h"
#include "tests/support/status_matchers.h"

namespace mend::heal::testing {
namespace {

using ::mend::testing::StatusIs;
using std::chrono::minutes;
using std::chrono::seconds;
using ::testing::ElementsAre;
using ::testing::IsEmpty;

class RecoveryPagesTest : public RecoveryFixture {
 protected:
  // Runs r1..rN, one second apart (the fake store stamps created_at with the clock).
  void AddRuns(int n) {
    for (int i = 1; i <= n; ++i) {
      clock.Advance(seconds(1));
      AddRun("r" + std::to_string(i));
    }
  }
  RecoveryOptions Bounded(size_t max_runs_per_pass) {
    RecoveryOptions o = Options();
    o.max_runs_per_pass = max_runs_per_pass;
    return o;
  }
};

TEST_F(RecoveryPagesTest, MaxRunsPerPassMustBePositive) {
  EXPECT_THAT(Recovery::Create(Bounded(0)), StatusIs(StatusCode::kInvalidArgument));
}

TEST_F(RecoveryPagesTest, TheNextPassGetsTheRunsThisOneDidNotReach) {
  AddRuns(7);
  auto recovery = Make(Bounded(3));
  TickReport first = MustTick(*recovery);
  EXPECT_THAT(first.resumed, ElementsAre("r1", "r2", "r3"));
  EXPECT_EQ(first.skipped.deferred, 4);
  TickReport second = MustTick(*recovery);
  EXPECT_THAT(second.resumed, ElementsAre("r4", "r5", "r6"));
  EXPECT_EQ(second.skipped.deferred, 1);
  // The last one; the pass goes round, finds nothing left before where it began, and the next
  // pass starts at the oldest run again.
  TickReport third = MustTick(*recovery);
  EXPECT_THAT(third.resumed, ElementsAre("r7"));
  EXPECT_EQ(third.skipped.deferred, 0);
  EXPECT_THAT(third.completed, ElementsAre("r7"));
  AddRun("late");
  EXPECT_THAT(MustTick(*recovery).resumed, ElementsAre("late"));
  for (int i = 1; i <= 7; ++i) EXPECT_EQ(driver.CallsOf("r" + std::to_string(i)), 1);
}

TEST_F(RecoveryPagesTest, AProcessStartedLaterGoesOnWhereTheLastOneStopped) {
  AddRuns(7);
  {
    auto once = Make(Bounded(3));  // `mend recover --once`, then the process ends
    EXPECT_THAT(MustTick(*once).resumed, ElementsAre("r1", "r2", "r3"));
  }
  auto next = Make(Bounded(3));
  EXPECT_THAT(MustTick(*next).resumed, ElementsAre("r4", "r5", "r6"));
  auto last = Make(Bounded(3));
  EXPECT_THAT(MustTick(*last).resumed, ElementsAre("r7"));
  // That pass went round: the position is cleared, and the next process starts at the oldest.
  EXPECT_THAT(store.RecoveryCursor(), ::mend::testing::IsOkAndHolds(std::nullopt));
  AddRun("late");
  EXPECT_THAT(MustTick(*Make(Bounded(3))).resumed, ElementsAre("late"));
  for (int i = 1; i <= 7; ++i) EXPECT_EQ(driver.CallsOf("r" + std::to_string(i)), 1);
}

TEST_F(RecoveryPagesTest, APassThatLeavesThePositionWhereItWasWritesNothing) {
  AddRuns(2);
  auto recovery = Make(Bounded(5));
  MustTick(*recovery);
  MustTick(*recovery);
  EXPECT_EQ(store.recovery_cursor_writes(), 0);
}

TEST_F(RecoveryPagesTest, APassReadsSeveralStorePagesUpToItsBound) {
  // More than one store page (at most 1000 runs each) in one pass, and the bound inside a page.
  const int n = 2100;
  for (int i = 0; i < n; ++i) {
    char id[16];
    std::snprintf(id, sizeof id, "r%05d", i);
    AddRun(id);
  }
  auto recovery = Make(Bounded(1500));
  TickReport first = MustTick(*recovery);
  ASSERT_EQ(first.resumed.size(), 1500u);
  EXPECT_EQ(first.resumed.front(), "r00000");
  EXPECT_EQ(first.resumed.back(), "r01499");
  EXPECT_EQ(first.skipped.deferred, n - 1500);
  TickReport second = MustTick(*recovery);
  ASSERT_EQ(second.resumed.size(), static_cast<size_t>(n - 1500));
  EXPECT_EQ(second.resumed.front(), "r01500");
  EXPECT_EQ(second.skipped.deferred, 0);
  EXPECT_EQ(driver.calls().size(), static_cast<size_t>(n));
}

TEST_F(RecoveryPagesTest, RunsThatStayDueAreTakenInTurns) {
  // Held by another replica every time: the runs stay due, and each pass takes the next ones, going
  // round to the oldest, so no run waits behind the same first ones for ever.
  AddRuns(5);
  driver.SetDefault(Leased());
  auto recovery = Make(Bounded(2));
  for (int i = 0; i < 5; ++i) {
    TickReport report = MustTick(*recovery);
    EXPECT_EQ(report.skipped.leased, 2);
    EXPECT_EQ(report.skipped.deferred, 3);
  }
  EXPECT_THAT(driver.calls(),
              ElementsAre("r1", "r2", "r3", "r4", "r5", "r1", "r2", "r3", "r4", "r5"));
}

TEST_F(RecoveryPagesTest, RunsCreatedAtOneInstantArePagedById) {
  for (const char* id : {"c", "a", "d", "b"}) AddRun(id);  // one instant: ordered by id
  driver.SetDefault(Leased());
  auto recovery = Make(Bounded(3));
  MustTick(*recovery);
  MustTick(*recovery);
  EXPECT_THAT(driver.calls(), ElementsAre("a", "b", "c", "d", "a", "b"));
}

TEST_F(RecoveryPagesTest, SkippedCountsCoverRunsThePassDidNotRead) {
  clock.Advance(seconds(1));
  AddRun("waiting", store::RunStatus::kWaiting);
  clock.Advance(seconds(1));
  AddRun("no-progress", store::RunStatus::kFailed, NoProgress());
  AddRuns(4);
  clock.Advance(seconds(1));
  AddRun("backoff", store::RunStatus::kFailed, ToolBroke(), /*attempts=*/2);
  store::RunUpdate later;
  later.next_attempt_at = std::optional<Time>(clock.Now() + minutes(5));
  ASSERT_TRUE(store.UpdateUnleased("backoff", later).ok());
  clock.Advance(seconds(1));
  AddRun("parked", store::RunStatus::kQuarantined, ToolBroke(), /*attempts=*/10);

  auto recovery = Make(Bounded(1));
  TickReport report = MustTick(*recovery);
  EXPECT_THAT(report.resumed, ElementsAre("r1"));
  // The counts are of every unfinished run, wherever it sits: none of them was read.
  EXPECT_EQ(report.skipped.waiting, 1);
  EXPECT_EQ(report.skipped.non_retryable, 1);
  EXPECT_EQ(report.skipped.backoff, 1);
  EXPECT_EQ(report.skipped.leased, 0);
  EXPECT_EQ(report.skipped.deferred, 3);
  EXPECT_THAT(report.quarantined, IsEmpty());
}

TEST_F(RecoveryPagesTest, ARunAProbeTookOutOfBackoffIsNotAlsoSkipped) {
  RecoveryOptions o = Bounded(10);
  o.outage_threshold = 1;
  // "a" failed before and backs off for 4 minutes after its next failure; "b" reveals the outage.
  AddRun("a", store::RunStatus::kFailed, ToolBroke(), /*attempts=*/3);
  clock.Advance(seconds(1));
  AddRun("b");
  driver.Script("a", {Fail(ToolBroke()), Complete()});
  driver.Script("b", {Fail(ProviderDown()), Complete()});
  auto recovery = Make(o);
  TickReport first = MustTick(*recovery);
  EXPECT_THAT(first.resumed, ElementsAre("a", "b"));
  EXPECT_TRUE(first.outage);
  ASSERT_EQ(Get("a").attempts, 4);

  // The probe is due after one interval, while "a" still backs off: it probes anyway, completes,
  // and the rest of the pass is a normal one.
  clock.Advance(seconds(30));
  TickReport probe = MustTick(*recovery);
  EXPECT_FALSE(probe.outage);
  EXPECT_THAT(probe.resumed, ElementsAre("a", "b"));
  EXPECT_THAT(probe.completed, ElementsAre("a", "b"));
  EXPECT_EQ(probe.skipped.backoff, 0);
}

// A pass during an outage is a whole pass: the runs it leaves alone are counted as in any other
// (TickReport counts every run once).
TEST_F(RecoveryPagesTest, APassThatProbesStillCountsTheRunsItLeavesAlone) {
  RecoveryOptions o = Options();
  o.outage_threshold = 1;
  AddRun("down");
  clock.Advance(seconds(1));
  AddRun("waiting", store::RunStatus::kWaiting);
  driver.Always("down", Fail(ProviderDown()));
  auto recovery = Make(o);
  EXPECT_TRUE(MustTick(*recovery).outage);
  clock.Advance(seconds(30));
  TickReport probe = MustTick(*recovery);
  EXPECT_TRUE(probe.outage);
  EXPECT_THAT(probe.resumed, ElementsAre("down"));
  EXPECT_EQ(probe.skipped.waiting, 1);
}

}  // namespace
}  // namespace mend::heal::testing
