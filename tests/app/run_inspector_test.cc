// Whether a `running` run is interrupted (app::InterruptionOf), judged at the runtime's clock as
// a claim would judge it: a lease that expired, a holder whose process is gone, no lease at all.
#include "mend/app/run_inspector.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <stdlib.h>

#include <filesystem>
#include <memory>
#include <string>

#include "mend/app/runtime.h"
#include "mend/base/manual_clock.h"
#include "mend/base/time_format.h"
#include "tests/support/status_matchers.h"

namespace mend::app {
namespace {

using ::mend::testing::IsOk;
using std::chrono::seconds;

class InterruptionTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string pattern =
        (std::filesystem::temp_directory_path() / "mend-interrupted-XXXXXX").string();
    ASSERT_NE(mkdtemp(pattern.data()), nullptr);
    dir_ = pattern;
    env_ = Env::Default();
    env_.clock = &clock_;
    ConfigSources sources;
    sources.flags["home"] = dir_ + "/home";
    Result<Config> config = LoadConfig(sources, *env_.fs);
    MEND_ASSERT_OK(config);
    RuntimeOptions options;
    options.event_log = EventLog::kNone;
    auto runtime = OpenRuntime(*config, env_, std::move(options));
    MEND_ASSERT_OK(runtime);
    runtime_ = std::move(runtime).value();
  }
  void TearDown() override {
    runtime_.reset();
    std::filesystem::remove_all(dir_);
  }

  void AddRun(const std::string& id) {
    store::RunRecord r;
    r.id = id;
    r.agent = "helper";
    MEND_ASSERT_OK(runtime_->store->CreateRun(r));
  }
  store::RunRecord Get(const std::string& id) {
    Result<store::RunRecord> run = runtime_->store->GetRun(id);
    EXPECT_THAT(run, IsOk());
    return run.ok() ? *run : store::RunRecord{};
  }

  ManualClock clock_;
  Env env_;
  std::string dir_;
  std::unique_ptr<Runtime> runtime_;
};

TEST_F(InterruptionTest, ARunWhoseLeaseExpiredIsInterrupted) {
  AddRun("r1");
  const store::LeaseHolder elsewhere{"replica-b", "host-b", "boot-b", 77};
  MEND_ASSERT_OK(runtime_->store->Claim("r1", elsewhere, seconds(30)).status());
  const Time expires = clock_.Now() + seconds(30);
  EXPECT_EQ(InterruptionOf(*runtime_, Get("r1")), std::nullopt);  // replica-b drives it
  clock_.Advance(seconds(29));
  EXPECT_EQ(InterruptionOf(*runtime_, Get("r1")), std::nullopt);
  clock_.Advance(seconds(1));
  std::optional<Interruption> interrupted = InterruptionOf(*runtime_, Get("r1"));
  ASSERT_TRUE(interrupted.has_value());
  EXPECT_EQ(interrupted->lease, store::LeaseState::kExpired);
  ASSERT_TRUE(interrupted->holder.has_value());
  EXPECT_EQ(interrupted->holder->id, "replica-b");
  EXPECT_EQ(interrupted->lease_expires_at, expires);
  EXPECT_EQ(interrupted->Describe(), "its lease expired at " + FormatRfc3339Seconds(expires));
  // What `pending` and `show` see through the inspector.
  RunInspector inspector(*runtime_);
  EXPECT_TRUE(inspector.Inspect(Get("r1")).interruption.has_value());
}

TEST_F(InterruptionTest, AReleasedRunIsInterruptedAndAFreshForkOrAWaitingRunIsNot) {
  AddRun("stopped");
  Result<store::Lease> lease = runtime_->store->Claim("stopped", runtime_->holder, seconds(30));
  MEND_ASSERT_OK(lease);
  EXPECT_EQ(InterruptionOf(*runtime_, Get("stopped")), std::nullopt);  // this process holds it
  MEND_ASSERT_OK(runtime_->store->Release(*lease));
  std::optional<Interruption> stopped = InterruptionOf(*runtime_, Get("stopped"));
  ASSERT_TRUE(stopped.has_value());
  EXPECT_EQ(stopped->lease, store::LeaseState::kNone);
  EXPECT_EQ(stopped->Describe(), "no process holds it");

  AddRun("fork");  // never claimed
  EXPECT_EQ(InterruptionOf(*runtime_, Get("fork")), std::nullopt);
  AddRun("waiting");
  MEND_ASSERT_OK(runtime_->store->Claim("waiting", runtime_->holder, seconds(30)).status());
  store::RunUpdate wait;
  wait.status = store::RunStatus::kWaiting;
  wait.waiting = "approval";
  MEND_ASSERT_OK(runtime_->store->UpdateUnleased("waiting", wait));
  clock_.Advance(seconds(60));
  EXPECT_EQ(InterruptionOf(*runtime_, Get("waiting")), std::nullopt);
}

TEST_F(InterruptionTest, AHolderOnThisHostWhoseProcessIsGoneInterruptsAtOnce) {
  AddRun("r1");
  store::LeaseHolder gone = runtime_->holder;
  gone.id = "mend-gone@" + gone.host;
  gone.pid = int64_t{1} << 30;  // no such process
  MEND_ASSERT_OK(runtime_->store->Claim("r1", gone, seconds(30)).status());
  std::optional<Interruption> interrupted = InterruptionOf(*runtime_, Get("r1"));
  if (runtime_->holder.boot_id.empty()) GTEST_SKIP() << "no boot id: only expiry can tell";
  ASSERT_TRUE(interrupted.has_value());
  EXPECT_EQ(interrupted->lease, store::LeaseState::kHolderGone);
  EXPECT_EQ(interrupted->Describe(),
            "its process (pid " + std::to_string(gone.pid) + " on " + gone.host + ") is gone");
}

}  // namespace
}  // namespace mend::app
