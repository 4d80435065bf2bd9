#include "mend/heal/recovery.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <stdexcept>

#include "tests/heal/recovery_test_support.h"
#include "tests/support/status_matchers.h"

namespace mend::heal::testing {
namespace {

using ::mend::testing::StatusIs;
using std::chrono::minutes;
using std::chrono::seconds;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;

using RecoveryTest = RecoveryFixture;

TEST_F(RecoveryTest, CreateNeedsStoreDriverAndClock) {
  RecoveryOptions o = Options();
  o.store = nullptr;
  EXPECT_THAT(Recovery::Create(o), StatusIs(StatusCode::kInvalidArgument));
  o = Options();
  o.driver = nullptr;
  EXPECT_THAT(Recovery::Create(o), StatusIs(StatusCode::kInvalidArgument));
  o = Options();
  o.clock = nullptr;
  EXPECT_THAT(Recovery::Create(o), StatusIs(StatusCode::kInvalidArgument));
  EXPECT_TRUE(Recovery::Create(Options()).ok());
}

TEST_F(RecoveryTest, InterruptedRunIsResumedAndCompletes) {
  AddRun("r1", store::RunStatus::kRunning, std::nullopt, /*attempts=*/3);
  auto recovery = Make(Options());
  TickReport report = MustTick(*recovery);
  EXPECT_THAT(report.resumed, ElementsAre("r1"));
  EXPECT_THAT(report.completed, ElementsAre("r1"));
  EXPECT_THAT(report.failed, IsEmpty());
  EXPECT_FALSE(report.outage);
  store::RunRecord r1 = Get("r1");
  EXPECT_EQ(r1.status, store::RunStatus::kCompleted);
  EXPECT_EQ(r1.attempts, 3);  // kept as a record: a completed run is never listed again
  EXPECT_FALSE(r1.next_attempt_at.has_value());
  EXPECT_THAT(recovered, ElementsAre("r1"));
  EXPECT_THAT(EventTypes(), ElementsAre("recovery.resumed", "recovery.completed"));
  // Completed runs are not listed any more.
  EXPECT_THAT(MustTick(*recovery).resumed, IsEmpty());
  EXPECT_EQ(driver.CallsOf("r1"), 1);
}

TEST_F(RecoveryTest, BackoffDoublesFromTheIntervalUpToFifteenMinutesThenQuarantines) {
  AddRun("r1");
  driver.Always("r1", Fail(ToolBroke()));
  auto recovery = Make(Options());
  std::vector<Duration> delays;
  for (int attempt = 1; attempt <= 9; ++attempt) {
    TickReport report = MustTick(*recovery);
    ASSERT_THAT(report.failed, ElementsAre("r1")) << "attempt " << attempt;
    store::RunRecord r1 = Get("r1");
    ASSERT_EQ(r1.attempts, attempt);
    ASSERT_TRUE(r1.next_attempt_at.has_value());
    Duration delay = *r1.next_attempt_at - clock.Now();
    delays.push_back(delay);
    // One second early the run is still backing off.
    clock.Advance(delay - seconds(1));
    TickReport early = MustTick(*recovery);
    EXPECT_EQ(early.skipped.backoff, 1);
    EXPECT_THAT(early.resumed, IsEmpty());
    clock.Advance(seconds(1));
  }
  std::vector<Duration> expected = {seconds(30),  seconds(60),  seconds(120),
                                    seconds(240), seconds(480), minutes(15),
                                    minutes(15),  minutes(15),  minutes(15)};
  EXPECT_EQ(delays, expected);
  EXPECT_THAT(quarantined, IsEmpty());

  TickReport tenth = MustTick(*recovery);  // attempt 10 = max_attempts
  EXPECT_THAT(tenth.failed, ElementsAre("r1"));
  EXPECT_THAT(tenth.quarantined, ElementsAre("r1"));
  EXPECT_EQ(Get("r1").status, store::RunStatus::kQuarantined);
  EXPECT_EQ(Get("r1").attempts, 10);
  EXPECT_THAT(quarantined, ElementsAre("r1"));

  // Quarantined runs stay pending but are not resumed again, and the callback fired once.
  clock.Advance(std::chrono::hours(2));
  TickReport later = MustTick(*recovery);
  EXPECT_THAT(later.resumed, IsEmpty());
  EXPECT_THAT(later.quarantined, IsEmpty());
  EXPECT_EQ(driver.CallsOf("r1"), 10);
  EXPECT_THAT(quarantined, ElementsAre("r1"));
  EXPECT_EQ(CountEvents("recovery.quarantined"), 1);
}

TEST_F(RecoveryTest, ProgressDuringAnAttemptResetsTheCounter) {
  AddRun("stuck", store::RunStatus::kFailed, ToolBroke(), /*attempts=*/5);
  AddRun("moving", store::RunStatus::kFailed, ToolBroke(), /*attempts=*/5);
  driver.Always("stuck", Fail(ToolBroke()));
  driver.Always("moving", Fail(ToolBroke(), /*progress=*/true));
  auto recovery = Make(Options());
  TickReport report = MustTick(*recovery);
  EXPECT_THAT(report.failed, ElementsAre("moving", "stuck"));
  store::RunRecord moving = Get("moving");
  EXPECT_EQ(moving.attempts, 1);
  EXPECT_EQ(*moving.next_attempt_at - clock.Now(), seconds(30));
  store::RunRecord stuck = Get("stuck");
  EXPECT_EQ(stuck.attempts, 6);
  EXPECT_EQ(*stuck.next_attempt_at - clock.Now(), minutes(15));  // 30 s × 2^5, capped
}

TEST_F(RecoveryTest, NonRetryableWaitingAndQuarantinedRunsAreLeftAlone) {
  AddRun("no-progress", store::RunStatus::kFailed, NoProgress());
  AddRun("bad-request", store::RunStatus::kFailed,
         store::RunError{"INVALID_ARGUMENT", "openai HTTP 400: bad", "permanent", false});
  AddRun("waiting", store::RunStatus::kWaiting);
  AddRun("parked", store::RunStatus::kQuarantined, ToolBroke(), /*attempts=*/10);
  auto recovery = Make(Options());
  TickReport report = MustTick(*recovery);
  EXPECT_THAT(report.resumed, IsEmpty());
  EXPECT_EQ(report.skipped.non_retryable, 2);
  EXPECT_EQ(report.skipped.waiting, 1);
  EXPECT_EQ(report.skipped.backoff, 0);
  EXPECT_EQ(report.skipped.leased, 0);
  EXPECT_THAT(driver.calls(), IsEmpty());
  EXPECT_EQ(Get("waiting").status, store::RunStatus::kWaiting);
  EXPECT_EQ(Get("waiting").attempts, 0);
  EXPECT_EQ(Get("parked").status, store::RunStatus::kQuarantined);
  EXPECT_THAT(quarantined, IsEmpty());
}

TEST_F(RecoveryTest, RunThatStopsToWaitIsLeftForAPersonWithoutCharge) {
  AddRun("r1");
  driver.Script("r1", {Wait()});
  auto recovery = Make(Options());
  TickReport report = MustTick(*recovery);
  EXPECT_THAT(report.resumed, ElementsAre("r1"));
  EXPECT_THAT(report.completed, IsEmpty());
  EXPECT_EQ(Get("r1").attempts, 0);
  clock.Advance(minutes(1));
  EXPECT_EQ(MustTick(*recovery).skipped.waiting, 1);
  EXPECT_EQ(driver.CallsOf("r1"), 1);
}

TEST_F(RecoveryTest, AttemptStoppedByShutdownIsNotCharged) {
  AddRun("r1", store::RunStatus::kFailed);
  driver.Script("r1", {Stopped()});
  auto recovery = Make(Options());
  TickReport report = MustTick(*recovery);
  EXPECT_THAT(report.resumed, ElementsAre("r1"));
  EXPECT_THAT(report.failed, IsEmpty());
  EXPECT_THAT(report.completed, IsEmpty());
  EXPECT_EQ(Get("r1").attempts, 0);
  EXPECT_FALSE(Get("r1").next_attempt_at.has_value());
  EXPECT_THAT(quarantined, IsEmpty());
  // The next process (or pass) picks the run up where it stopped.
  TickReport next = MustTick(*recovery);
  EXPECT_THAT(next.completed, ElementsAre("r1"));
}

TEST_F(RecoveryTest, LeasedRunIsSkippedWithoutCharge) {
  AddRun("r1");
  AddRun("r2");
  driver.Script("r1", {Leased()});
  auto recovery = Make(Options());
  TickReport report = MustTick(*recovery);
  EXPECT_EQ(report.skipped.leased, 1);
  EXPECT_THAT(report.resumed, ElementsAre("r2"));
  EXPECT_THAT(report.failed, IsEmpty());
  EXPECT_EQ(Get("r1").attempts, 0);
  EXPECT_FALSE(Get("r1").next_attempt_at.has_value());
  EXPECT_THAT(errors, IsEmpty());
  // Next pass, the holder is gone and the run comes back.
  TickReport next = MustTick(*recovery);
  EXPECT_THAT(next.completed, ElementsAre("r1"));
}

TEST_F(RecoveryTest, DriverErrorIsReportedAndThePassGoesOn) {
  AddRun("r1");
  AddRun("r2");
  driver.Script("r1", {Broken(DataLossError("corrupt checkpoint row"))});
  auto recovery = Make(Options());
  TickReport report = MustTick(*recovery);
  EXPECT_THAT(report.resumed, ElementsAre("r2"));
  EXPECT_THAT(report.completed, ElementsAre("r2"));
  ASSERT_EQ(errors.size(), 1u);
  EXPECT_THAT(errors[0], StatusIs(StatusCode::kDataLoss, HasSubstr("r1")));
  EXPECT_EQ(CountEvents("recovery.error"), 1);
  EXPECT_EQ(Get("r1").attempts, 0);
  EXPECT_EQ(Get("r1").status, store::RunStatus::kRunning);
}

TEST_F(RecoveryTest, ThrowingCallbacksNeverStopThePass) {
  RecoveryOptions o = Options();
  o.max_attempts = 1;
  o.on_quarantined = [](const std::string&) { throw std::runtime_error("pager down"); };
  o.on_recovered = [](const std::string&) { throw 42; };
  o.on_error = [](const Status&) { throw std::runtime_error("log full"); };
  AddRun("a");
  AddRun("b");
  AddRun("c");
  driver.Always("a", Fail(ToolBroke()));
  driver.Always("c", Fail(ToolBroke()));
  auto recovery = Make(o);
  TickReport report = MustTick(*recovery);
  EXPECT_THAT(report.resumed, ElementsAre("a", "b", "c"));
  EXPECT_THAT(report.completed, ElementsAre("b"));
  EXPECT_THAT(report.quarantined, ElementsAre("a", "c"));
  // Each throw became an error event; on_error throwing too became one more.
  std::vector<std::string> messages;
  for (const obs::Event& e : sink->events()) {
    if (e.type() == "recovery.error") messages.emplace_back(*e.Find("message"));
  }
  ASSERT_EQ(messages.size(), 6u);
  EXPECT_THAT(messages[0], HasSubstr("on_quarantined threw: pager down"));
  EXPECT_THAT(messages[1], HasSubstr("on_error threw: log full"));
  EXPECT_THAT(messages[2], HasSubstr("on_recovered threw"));
}

TEST_F(RecoveryTest, OutageCallbackThrowingDoesNotStopTheLoop) {
  RecoveryOptions o = Options();
  o.outage_threshold = 1;
  o.on_outage = [](const OutageChange&) { throw std::runtime_error("no"); };
  AddRun("r1");
  driver.Script("r1", {Fail(ProviderDown())});
  auto recovery = Make(o);
  EXPECT_TRUE(MustTick(*recovery).outage);
  clock.Advance(seconds(30));
  TickReport probe = MustTick(*recovery);
  EXPECT_THAT(probe.completed, ElementsAre("r1"));
  EXPECT_FALSE(probe.outage);
  ASSERT_EQ(errors.size(), 2u);
  EXPECT_THAT(errors[0], StatusIs(StatusCode::kInternal, HasSubstr("on_outage")));
}

TEST_F(RecoveryTest, StartTicksEveryIntervalOnTheClockAndStopJoins) {
  AddRun("r1");
  driver.Always("r1", Leased());  // stays pending: every pass resumes it
  auto recovery = Make(Options());
  recovery->Start();
  recovery->Start();  // a second Start is a no-op
  driver.WaitForCalls(1);
  clock.BlockUntilWaiters(1);  // the loop is parked until the next interval
  clock.Advance(seconds(29));
  clock.Advance(seconds(1));
  driver.WaitForCalls(2);
  recovery->Stop();
  recovery->Stop();  // idempotent
  EXPECT_EQ(driver.CallsOf("r1"), 2);
  clock.Advance(minutes(5));  // nothing ticks after Stop
  EXPECT_EQ(driver.CallsOf("r1"), 2);
}

// Forwards to a store but fails ListRuns.
class UnlistableStore final : public store::CheckpointStore {
 public:
  explicit UnlistableStore(store::CheckpointStore& inner) : inner_(inner) {}
  Status CreateRun(const store::RunRecord& r) override { return inner_.CreateRun(r); }
  Result<store::RunRecord> GetRun(const std::string& id) override { return inner_.GetRun(id); }
  Result<std::vector<store::RunRecord>> ListRuns(const store::ListOptions&) override {
    return InternalError("database is locked");
  }
  Result<store::PendingPage> ListPending(const store::PendingQuery&) override {
    return InternalError("database is locked");
  }
  Status DeleteRun(const std::string& id) override { return inner_.DeleteRun(id); }
  Result<store::Lease> Claim(const std::string& id, const store::LeaseHolder& h,
                             Duration ttl) override {
    return inner_.Claim(id, h, ttl);
  }
  Result<store::Lease> Renew(const store::Lease& l, Duration ttl) override {
    return inner_.Renew(l, ttl);
  }
  Status Release(const store::Lease& l) override { return inner_.Release(l); }
  Status Save(const store::Lease& l, const store::Checkpoint& c,
              const store::RunUpdate& u) override {
    return inner_.Save(l, c, u);
  }
  Status Update(const store::Lease& l, const store::RunUpdate& u) override {
    return inner_.Update(l, u);
  }
  Status UpdateUnleased(const std::string& id, const store::RunUpdate& u) override {
    return inner_.UpdateUnleased(id, u);
  }
  Result<store::RunSnapshot> Load(const std::string& id, std::optional<int64_t> step) override {
    return inner_.Load(id, step);
  }
  Result<std::vector<store::CheckpointInfo>> History(const std::string& id) override {
    return inner_.History(id);
  }
  Result<store::RunRecord> Fork(const std::string& id, int64_t step,
                                const std::string& new_id) override {
    return inner_.Fork(id, step, new_id);
  }
  Result<store::PruneReport> Prune(const store::PruneRequest& r) override {
    return inner_.Prune(r);
  }

 private:
  store::CheckpointStore& inner_;
};

TEST_F(RecoveryTest, StoreErrorListingRunsIsReturnedAndTheLoopReportsIt) {
  UnlistableStore broken(store);
  RecoveryOptions o = Options();
  o.store = &broken;
  auto recovery = Make(o);
  EXPECT_THAT(recovery->Tick(), StatusIs(StatusCode::kInternal, HasSubstr("locked")));
  recovery->Start();
  {
    // The background pass hands the same error to on_error; wait for it without sleeping.
    clock.BlockUntilWaiters(1);
  }
  recovery->Stop();
  ASSERT_FALSE(errors.empty());
  EXPECT_THAT(errors[0], StatusIs(StatusCode::kInternal, HasSubstr("locked")));
}

}  // namespace
}  // namespace mend::heal::testing
