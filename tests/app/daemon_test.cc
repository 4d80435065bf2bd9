#include "mend/app/daemon.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <map>
#include <memory>
#include <sstream>
#include <string>
#include <thread>

#include "mend/app/runtime.h"
#include "tests/app/agent_home_test.h"
#include "tests/support/status_matchers.h"

namespace mend::app {
namespace {

using ::mend::testing::IsOk;
using ::testing::IsEmpty;

class DaemonTest : public AgentHomeTest {
 protected:
  std::unique_ptr<Runtime> Open(std::map<std::string, std::string> flags = {}) {
    ConfigSources sources;
    sources.flags = std::move(flags);
    sources.flags["home"] = dir_ + "/home";
    Result<Config> config = LoadConfig(sources, *env_.fs);
    EXPECT_THAT(config, IsOk());
    if (!config.ok()) return nullptr;
    RuntimeOptions options;
    options.event_log = EventLog::kNone;
    Result<std::unique_ptr<Runtime>> runtime = OpenRuntime(*config, env_, std::move(options));
    EXPECT_THAT(runtime, IsOk());
    return runtime.ok() ? std::move(runtime).value() : nullptr;
  }
};

TEST(ManualStopSignalTest, WaitReturnsOnceRaised) {
  ManualStopSignal before;
  before.Raise();
  before.Wait();  // returns at once

  ManualStopSignal later;
  std::thread raiser([&later] { later.Raise(); });
  later.Wait();
  raiser.join();
}

TEST_F(DaemonTest, TickMakesOnePassOverAnEmptyStore) {
  std::unique_ptr<Runtime> runtime = Open();
  ASSERT_NE(runtime, nullptr);
  std::ostringstream log;
  DaemonOptions options;
  options.log = &log;
  Result<std::unique_ptr<Daemon>> daemon = Daemon::Create(*runtime, options);
  ASSERT_THAT(daemon, IsOk());
  Result<heal::TickReport> report = (*daemon)->Tick();
  ASSERT_THAT(report, IsOk());
  EXPECT_THAT(report->resumed, IsEmpty());
  EXPECT_THAT(report->failed, IsEmpty());
  EXPECT_EQ(log.str(), "");
}

TEST_F(DaemonTest, StartsAndStopsOnTheStopSignal) {
  std::unique_ptr<Runtime> runtime = Open({{"observe.retention", "24h"}});
  ASSERT_NE(runtime, nullptr);
  std::ostringstream log;
  DaemonOptions options;
  options.log = &log;
  options.lesson_drain = LessonDrain::kDrain;
  Result<std::unique_ptr<Daemon>> created = Daemon::Create(*runtime, options);
  ASSERT_THAT(created, IsOk());
  Daemon& daemon = **created;
  ManualStopSignal stop;
  daemon.Start();
  std::thread raiser([&stop] { stop.Raise(); });
  stop.Wait();
  raiser.join();
  daemon.RequestStop();
  daemon.Stop();
  daemon.Stop();  // idempotent
  EXPECT_EQ(log.str(), "");
}

TEST_F(DaemonTest, StopWithoutStartDoesNothing) {
  std::unique_ptr<Runtime> runtime = Open();
  ASSERT_NE(runtime, nullptr);
  Result<std::unique_ptr<Daemon>> daemon = Daemon::Create(*runtime, DaemonOptions{});
  ASSERT_THAT(daemon, IsOk());
  (*daemon)->Stop();
}

}  // namespace
}  // namespace mend::app
