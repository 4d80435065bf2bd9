#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "mend/heal/recovery.h"
#include "tests/heal/recovery_test_support.h"

namespace mend::heal::testing {
namespace {

using std::chrono::minutes;
using std::chrono::seconds;
using ::testing::ElementsAre;
using ::testing::IsEmpty;

class RecoveryOutageTest : public RecoveryFixture {
 protected:
  // Advances to one second before `wait` has passed and checks that no probe runs, then to `wait`
  // and checks that a probe runs. Returns that pass's report.
  TickReport ProbeAfter(Recovery& recovery, Duration wait) {
    size_t before = driver.calls().size();
    clock.Advance(wait - seconds(1));
    TickReport early = MustTick(recovery);
    EXPECT_THAT(early.resumed, IsEmpty());
    EXPECT_TRUE(early.outage);
    EXPECT_EQ(driver.calls().size(), before);
    clock.Advance(seconds(1));
    TickReport probe = MustTick(recovery);
    EXPECT_GT(driver.calls().size(), before);
    return probe;
  }
};

TEST_F(RecoveryOutageTest, ThreeProviderFailuresPauseThenProbeAtGrowingIntervals) {
  for (const char* id : {"r1", "r2", "r3", "r4"}) AddRun(id);
  driver.SetDefault(Fail(ProviderDown()));
  driver.Always("r2", Fail(RateLimited()));
  auto recovery = Make(Options());

  TickReport first = MustTick(*recovery);
  EXPECT_THAT(first.resumed, ElementsAre("r1", "r2", "r3"));  // r4 is not tried in the outage
  EXPECT_TRUE(first.outage);
  EXPECT_THAT(outages, ElementsAre(true));
  EXPECT_EQ(CountEvents("recovery.outage"), 1);
  // The failures before the outage was known are charged; the one that revealed it is not.
  EXPECT_EQ(Get("r1").attempts, 1);
  EXPECT_EQ(Get("r2").attempts, 1);
  EXPECT_EQ(Get("r3").attempts, 0);
  EXPECT_EQ(Get("r4").attempts, 0);

  // Probes: one run each, after 30 s, then 60 s, 120 s, 240 s, ...
  for (Duration wait : {Duration(seconds(30)), Duration(seconds(60)), Duration(seconds(120)),
                        Duration(seconds(240))}) {
    TickReport probe = ProbeAfter(*recovery, wait);
    EXPECT_EQ(probe.resumed.size(), 1u);
    EXPECT_TRUE(probe.outage);
  }
  EXPECT_THAT(outages, ElementsAre(true));
  EXPECT_EQ(Get("r1").attempts, 1);  // probes are not charged

  // The provider is back: the next probe succeeds, the outage ends and the pass goes on.
  driver.SetDefault(Complete());
  driver.Always("r2", Complete());
  TickReport back = ProbeAfter(*recovery, seconds(480));
  EXPECT_FALSE(back.outage);
  EXPECT_THAT(outages, ElementsAre(true, false));
  EXPECT_THAT(back.completed, ElementsAre("r1", "r2", "r3", "r4"));
}

TEST_F(RecoveryOutageTest, ProbeIntervalIsCappedAtMaxBackoff) {
  RecoveryOptions o = Options();
  o.outage_threshold = 1;
  AddRun("r1");
  driver.Always("r1", Fail(ProviderDown()));
  auto recovery = Make(o);
  EXPECT_TRUE(MustTick(*recovery).outage);
  for (Duration wait : {Duration(seconds(30)), Duration(seconds(60)), Duration(seconds(120)),
                        Duration(seconds(240)), Duration(seconds(480)), Duration(minutes(15)),
                        Duration(minutes(15))}) {
    ProbeAfter(*recovery, wait);
  }
}

TEST_F(RecoveryOutageTest, NoRunIsQuarantinedOrChargedDuringTheOutage) {
  RecoveryOptions o = Options();
  o.max_attempts = 2;
  for (const char* id : {"a", "b", "c"}) AddRun(id);
  driver.SetDefault(Fail(ProviderDown()));
  auto recovery = Make(o);
  MustTick(*recovery);  // a and b charged once each, c opens the outage
  for (int i = 0; i < 12; ++i) {
    clock.Advance(minutes(15));
    TickReport probe = MustTick(*recovery);
    EXPECT_EQ(probe.resumed.size(), 1u);
    EXPECT_THAT(probe.quarantined, IsEmpty());
  }
  EXPECT_THAT(quarantined, IsEmpty());
  EXPECT_EQ(Get("a").attempts, 1);
  EXPECT_EQ(Get("b").attempts, 1);
  EXPECT_EQ(Get("c").attempts, 0);
  for (const char* id : {"a", "b", "c"}) EXPECT_EQ(Get(id).status, store::RunStatus::kFailed);
}

TEST_F(RecoveryOutageTest, AuthFailuresNeverOpenAnOutage) {
  for (const char* id : {"a", "b", "c", "d", "e"}) AddRun(id);
  driver.SetDefault(Fail(AuthFailed()));
  auto recovery = Make(Options());
  TickReport report = MustTick(*recovery);
  EXPECT_THAT(report.resumed, ElementsAre("a", "b", "c", "d", "e"));
  EXPECT_FALSE(report.outage);
  EXPECT_THAT(outages, IsEmpty());
  // A 401 is not retryable: the runs are left alone from now on.
  clock.Advance(minutes(20));
  EXPECT_EQ(MustTick(*recovery).skipped.non_retryable, 5);
}

TEST_F(RecoveryOutageTest, AnyOtherResultResetsTheConsecutiveCount) {
  for (const char* id : {"a", "b", "c", "d", "e"}) AddRun(id);
  driver.SetDefault(Fail(ProviderDown()));
  driver.Always("c", Fail(ToolBroke()));
  auto recovery = Make(Options());
  TickReport report = MustTick(*recovery);
  EXPECT_THAT(report.resumed, ElementsAre("a", "b", "c", "d", "e"));
  EXPECT_FALSE(report.outage);
  EXPECT_THAT(outages, IsEmpty());
}

TEST_F(RecoveryOutageTest, ProbeFailingForAnotherReasonEndsTheOutage) {
  RecoveryOptions o = Options();
  o.outage_threshold = 2;
  AddRun("a");
  AddRun("b");
  driver.Script("a", {Fail(ProviderDown()), Fail(ToolBroke())});
  driver.Script("b", {Fail(ProviderDown())});
  auto recovery = Make(o);
  EXPECT_TRUE(MustTick(*recovery).outage);
  clock.Advance(seconds(30));
  TickReport probe = MustTick(*recovery);
  EXPECT_FALSE(probe.outage);
  EXPECT_THAT(outages, ElementsAre(true, false));
  EXPECT_THAT(probe.resumed, ElementsAre("a", "b"));  // the probe, then the normal pass
  EXPECT_EQ(Get("a").attempts, 2);                    // the tool failure is charged
  EXPECT_THAT(probe.completed, ElementsAre("b"));
}

TEST_F(RecoveryOutageTest, LeasedRunIsNotAProbe) {
  RecoveryOptions o = Options();
  o.outage_threshold = 1;
  AddRun("a");
  AddRun("b");
  driver.Script("a", {Fail(ProviderDown()), Leased()});
  auto recovery = Make(o);
  EXPECT_TRUE(MustTick(*recovery).outage);
  clock.Advance(seconds(30));
  TickReport probe = MustTick(*recovery);
  EXPECT_EQ(probe.skipped.leased, 1);
  EXPECT_THAT(probe.resumed, ElementsAre("b"));  // a was busy elsewhere: b probed
  EXPECT_THAT(probe.completed, ElementsAre("b"));
  EXPECT_FALSE(probe.outage);
}

}  // namespace
}  // namespace mend::heal::testing
