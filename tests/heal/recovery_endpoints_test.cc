// Provider outages per endpoint (docs/heal.md, "Provider outages"): an endpoint that keeps failing
// pauses only its own runs and is probed on its own schedule, while the runs of every other
// endpoint are resumed as usual; every run of a pass is counted once.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <optional>
#include <string>

#include "mend/heal/provider_endpoint.h"
#include "mend/heal/recovery.h"
#include "tests/heal/recovery_test_support.h"
#include "tests/support/status_matchers.h"

namespace mend::heal::testing {
namespace {

using std::chrono::seconds;
using ::testing::ElementsAre;
using ::testing::IsEmpty;

constexpr char kDead[] = "http://127.0.0.1:9";
constexpr char kLive[] = "http://127.0.0.1:8080";
constexpr char kOther[] = "http://127.0.0.1:7070";

class RecoveryEndpointsTest : public RecoveryFixture {
 protected:
  // A run whose recorded model talks to openai at `base_url`.
  void AddRunOn(const std::string& id, const std::string& base_url,
                store::RunStatus status = store::RunStatus::kFailed,
                std::optional<store::RunError> error = ProviderDown()) {
    store::RunRecord r;
    r.id = id;
    r.agent = "helper";
    r.task = "task of " + id;
    r.status = status;
    r.last_error = std::move(error);
    r.metadata = R"({"kind":"send","model":{"name":"openai","base_url":")" + base_url +
                 R"(","model":"gpt-test"}})";
    ASSERT_TRUE(store.CreateRun(r).ok());
  }

  // How many runs the report accounts for, each once (TickReport's contract).
  static int Accounted(const TickReport& r) {
    int quarantined_unresumed = 0;
    for (const std::string& id : r.quarantined) {
      quarantined_unresumed += std::count(r.resumed.begin(), r.resumed.end(), id) == 0;
    }
    const TickReport::Skipped& s = r.skipped;
    return static_cast<int>(r.resumed.size()) + quarantined_unresumed + s.backoff + s.waiting +
           s.non_retryable + s.leased + s.deferred + s.outage + s.error + s.healing;
  }

  static ProviderEndpoint Openai(const std::string& url) { return {"openai", url}; }
};

TEST_F(RecoveryEndpointsTest, AnOutageOfOneEndpointLeavesTheRunsOfAnotherToBeResumed) {
  for (const char* id : {"d1", "d2", "d3"}) AddRunOn(id, kDead);
  AddRunOn("l1", kLive);
  AddRunOn("n1", kDead, store::RunStatus::kFailed, AuthFailed());
  AddRunOn("n2", kLive, store::RunStatus::kFailed, NoProgress());
  driver.SetDefault(Fail(ProviderDown()));
  driver.Always("l1", Complete());
  auto recovery = Make(Options());

  TickReport report = MustTick(*recovery);
  // d3 revealed the dead endpoint's outage; the live endpoint's run is resumed all the same.
  EXPECT_THAT(report.resumed, ElementsAre("d1", "d2", "d3", "l1"));
  EXPECT_THAT(report.completed, ElementsAre("l1"));
  EXPECT_THAT(report.failed, ElementsAre("d1", "d2", "d3"));
  EXPECT_EQ(report.skipped.non_retryable, 2);
  EXPECT_EQ(Accounted(report), 6);
  EXPECT_TRUE(report.outage);
  ASSERT_EQ(report.outages.size(), 1u);
  EXPECT_EQ(report.outages[0].endpoint, Openai(kDead));
  EXPECT_EQ(report.outages[0].since, clock.Now());
  EXPECT_EQ(report.outages[0].next_probe_at, clock.Now() + seconds(30));
  EXPECT_THAT(recovered, ElementsAre("l1"));

  // The callback and the event say which endpoint.
  ASSERT_EQ(outage_changes.size(), 1u);
  EXPECT_EQ(outage_changes[0].endpoint, Openai(kDead));
  EXPECT_TRUE(outage_changes[0].in_outage);
  EXPECT_EQ(outage_changes[0].endpoints_in_outage, 1u);
  EXPECT_EQ(outage_changes[0].next_probe_at, clock.Now() + seconds(30));
  std::optional<obs::Event> outage;
  for (const obs::Event& e : sink->events()) {
    if (e.type() == "recovery.outage") outage = e;
  }
  ASSERT_TRUE(outage.has_value());
  EXPECT_EQ(outage->Find("provider"), "\"openai\"");
  EXPECT_EQ(outage->Find("base_url"), std::string("\"") + kDead + "\"");
  EXPECT_EQ(outage->Find("endpoints_in_outage"), "1");
  EXPECT_EQ(outage->Find("in_outage"), "true");
}

TEST_F(RecoveryEndpointsTest, WhileOneEndpointIsPausedANewRunOfAnotherIsResumed) {
  for (const char* id : {"d1", "d2", "d3"}) AddRunOn(id, kDead);
  driver.SetDefault(Fail(ProviderDown()));
  auto recovery = Make(Options());
  EXPECT_TRUE(MustTick(*recovery).outage);

  clock.Advance(seconds(10));  // the dead endpoint's probe is not due yet
  AddRunOn("l1", kLive);
  driver.Always("l1", Complete());
  TickReport report = MustTick(*recovery);
  EXPECT_THAT(report.resumed, ElementsAre("l1"));
  EXPECT_THAT(report.completed, ElementsAre("l1"));
  // d1 and d2 were charged and wait out their backoff; d3, due, waits for its endpoint.
  EXPECT_EQ(report.skipped.backoff, 2);
  EXPECT_EQ(report.skipped.outage, 1);
  EXPECT_EQ(Accounted(report), 4);
  EXPECT_EQ(driver.CallsOf("d3"), 1);
  EXPECT_TRUE(report.outage);
}

TEST_F(RecoveryEndpointsTest, EachEndpointInAnOutageIsProbedOnItsOwnSchedule) {
  RecoveryOptions o = Options();
  o.outage_threshold = 1;
  AddRunOn("a1", kDead);
  AddRunOn("a2", kDead);
  AddRunOn("b1", kOther);
  driver.Script("a1", {Fail(ProviderDown())});
  driver.Script("b1", {Leased()});
  driver.Always("a2", Fail(ProviderDown()));
  auto recovery = Make(o);
  TickReport first = MustTick(*recovery);  // a1 opens the dead endpoint's outage
  EXPECT_THAT(first.resumed, ElementsAre("a1"));
  EXPECT_EQ(first.skipped.outage, 1);  // a2
  EXPECT_EQ(first.skipped.leased, 1);  // b1

  clock.Advance(seconds(10));
  driver.Script("b1", {Fail(ProviderDown())});
  TickReport second = MustTick(*recovery);  // b1 opens the other endpoint's outage
  EXPECT_THAT(second.resumed, ElementsAre("b1"));
  ASSERT_EQ(second.outages.size(), 2u);
  EXPECT_EQ(second.outages[0].endpoint, Openai(kOther));
  EXPECT_EQ(second.outages[0].next_probe_at, clock.Now() + seconds(30));
  EXPECT_EQ(second.outages[1].endpoint, Openai(kDead));
  EXPECT_EQ(second.outages[1].next_probe_at, clock.Now() + seconds(20));

  // 30 s after it began, the dead endpoint gets its probe; the other one waits for its own.
  clock.Advance(seconds(20));
  driver.Script("a1", {Complete()});
  TickReport third = MustTick(*recovery);
  EXPECT_THAT(third.resumed, ElementsAre("a1", "a2"));  // the probe, then the rest of its runs
  EXPECT_THAT(third.completed, ElementsAre("a1"));
  EXPECT_EQ(driver.CallsOf("b1"), 2);
  EXPECT_EQ(third.skipped.outage, 1);  // b1 waits for its own endpoint's probe
  // a2 failed again at once: one failure of a closed breaker opens it again (threshold 1).
  ASSERT_EQ(third.outages.size(), 2u);
  EXPECT_THAT(outages, ElementsAre(true, true, false, true));
  EXPECT_EQ(outage_changes[2].endpoint, Openai(kDead));
  EXPECT_EQ(outage_changes[2].endpoints_in_outage, 1u);

  clock.Advance(seconds(10));
  driver.Script("b1", {Complete()});
  TickReport fourth = MustTick(*recovery);
  EXPECT_THAT(fourth.completed, ElementsAre("b1"));
  ASSERT_EQ(fourth.outages.size(), 1u);
  EXPECT_EQ(fourth.outages[0].endpoint, Openai(kDead));
}

TEST_F(RecoveryEndpointsTest, FailuresOfDifferentEndpointsDoNotAddUp) {
  AddRunOn("a1", kDead);
  AddRunOn("a2", kDead);
  AddRunOn("b1", kOther);
  AddRunOn("b2", kOther);
  driver.SetDefault(Fail(ProviderDown()));
  auto recovery = Make(Options());
  TickReport report = MustTick(*recovery);
  // Two failures of each endpoint: below the threshold of 3 for both, so all four are charged.
  EXPECT_THAT(report.resumed, ElementsAre("a1", "a2", "b1", "b2"));
  EXPECT_FALSE(report.outage);
  EXPECT_THAT(outages, IsEmpty());
  for (const char* id : {"a1", "b1", "a2", "b2"}) EXPECT_EQ(Get(id).attempts, 1) << id;
}

TEST_F(RecoveryEndpointsTest, RunsThatRecordedCredentialsInTheirUrlShareOneKeyWithout) {
  EXPECT_EQ(
      EndpointOf({"openai", "https://user:sk-recovery-SECRET-1@gw.example/v1/?key=sk-2", "m"}),
      (ProviderEndpoint{"openai", "https://gw.example/v1"}));
  EXPECT_EQ(EndpointOf({"anthropic", "", "claude"}), (ProviderEndpoint{"anthropic", ""}));
  EXPECT_EQ(DescribeEndpoint({"anthropic", ""}), "anthropic (default URL)");
  EXPECT_EQ(DescribeEndpoint({"openai", kDead}), std::string("openai at ") + kDead);

  AddRunOn("k1", "http://alice:sk-recovery-SECRET-2@127.0.0.1:9");
  AddRunOn("k2", "http://bob:sk-recovery-SECRET-3@127.0.0.1:9/");
  AddRunOn("k3", kDead);
  AddRunOn("k4", kDead);
  driver.SetDefault(Fail(ProviderDown()));
  auto recovery = Make(Options());
  TickReport report = MustTick(*recovery);
  EXPECT_THAT(report.resumed, ElementsAre("k1", "k2", "k3"));  // one endpoint: k3 opens it
  EXPECT_EQ(report.skipped.outage, 1);
  ASSERT_EQ(report.outages.size(), 1u);
  EXPECT_EQ(report.outages[0].endpoint, Openai(kDead));
  for (const obs::Event& e : sink->events()) {
    for (const obs::EventField& f : e.fields()) {
      EXPECT_EQ(f.json.find("SECRET"), std::string::npos) << e.type() << " " << f.key;
    }
  }
}

TEST_F(RecoveryEndpointsTest, ReportsTheRunsItFoundInterruptedAndCountsEveryRunOnce) {
  // i1 was claimed by a process that stopped renewing; f1 failed; n1 is a fork never started;
  // q1 is at the limit; h1 is held by a live process; w1 waits for a person; e1 breaks the driver.
  AddRunOn("i1", kLive, store::RunStatus::kRunning, std::nullopt);
  MEND_ASSERT_OK(store.Claim("i1", {"mend-4242@host", "host", "", 4242}, seconds(30)).status());
  AddRunOn("f1", kLive, store::RunStatus::kFailed, ToolBroke());
  AddRunOn("n1", kLive, store::RunStatus::kRunning, std::nullopt);
  AddRun("q1", store::RunStatus::kFailed, ToolBroke(), /*attempts=*/10);
  AddRun("h1");
  AddRun("w1", store::RunStatus::kWaiting);
  AddRun("e1");
  AddRun("quarantined-before", store::RunStatus::kQuarantined);
  driver.Always("h1", Leased());
  driver.Always("e1", Broken(InternalError("the agent folder is gone")));
  clock.Advance(seconds(31));
  auto recovery = Make(Options());
  TickReport report = MustTick(*recovery);
  EXPECT_THAT(report.resumed, ElementsAre("f1", "i1", "n1"));
  EXPECT_THAT(report.interrupted, ElementsAre("i1"));
  EXPECT_THAT(report.quarantined, ElementsAre("q1"));
  EXPECT_EQ(report.skipped.leased, 1);
  EXPECT_EQ(report.skipped.waiting, 1);
  EXPECT_EQ(report.skipped.error, 1);
  EXPECT_EQ(Accounted(report), 7);  // every run but the one quarantined before the pass
}

TEST_F(RecoveryEndpointsTest, ADriverMayPutARunOnAnotherEndpointThanItRecorded) {
  // A driver that moves every run to kLive (as `--override-recorded` does).
  class MovingDriver final : public RunDriver {
   public:
    explicit MovingDriver(FakeDriver& inner) : inner_(inner) {}
    Result<agent::RunResult> Resume(const store::RunRecord& run) override {
      return inner_.Resume(run);
    }
    Status ForkWithNote(const store::RunRecord& run, const std::string& new_id,
                        const std::string& note) override {
      return inner_.ForkWithNote(run, new_id, note);
    }
    ProviderEndpoint EndpointFor(const store::RunRecord&) override { return {"openai", kLive}; }

   private:
    FakeDriver& inner_;
  } moving(driver);
  RecoveryOptions o = Options();
  o.driver = &moving;
  o.outage_threshold = 1;
  AddRunOn("a", kDead);
  AddRunOn("b", kOther);
  driver.SetDefault(Fail(ProviderDown()));
  auto recovery = Make(o);
  TickReport report = MustTick(*recovery);
  EXPECT_THAT(report.resumed, ElementsAre("a"));
  EXPECT_EQ(report.skipped.outage, 1);
  ASSERT_EQ(report.outages.size(), 1u);
  EXPECT_EQ(report.outages[0].endpoint, Openai(kLive));
  EXPECT_EQ(outage_changes.size(), 1u);
}

}  // namespace
}  // namespace mend::heal::testing
