#include "mend/app/retention.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <stdlib.h>

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <filesystem>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "mend/app/runtime.h"
#include "mend/base/manual_clock.h"
#include "mend/base/time_format.h"
#include "tests/support/status_matchers.h"

namespace mend::app {
namespace {

using ::mend::testing::IsOk;
using ::mend::testing::StatusIs;
using std::chrono::hours;
using ::testing::ElementsAre;

namespace fs = std::filesystem;

constexpr auto kDay = hours(24);
const auto kPrivate = fs::perms::owner_read | fs::perms::owner_write;

fs::perms ModeOf(const std::string& path) {
  return fs::status(path).permissions() & fs::perms::all;
}

class RetentionTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string pattern = (fs::temp_directory_path() / "mend-retention-XXXXXX").string();
    ASSERT_NE(mkdtemp(pattern.data()), nullptr);
    dir_ = pattern;
    home_ = dir_ + "/home";
    clock_.Set(ParseRfc3339("2025-03-01T12:00:00Z").value());
    env_ = Env::Default();
    env_.clock = &clock_;
    MEND_ASSERT_OK(env_.fs->CreateDirs(home_));
  }
  void TearDown() override { fs::remove_all(dir_); }

  std::unique_ptr<Runtime> Open(std::map<std::string, std::string> flags = {}) {
    ConfigSources sources;
    sources.flags = std::move(flags);
    sources.flags["home"] = home_;
    Result<Config> config = LoadConfig(sources, *env_.fs);
    EXPECT_THAT(config, IsOk());
    if (!config.ok()) return nullptr;
    Result<std::unique_ptr<Runtime>> runtime = OpenRuntime(*config, env_);
    EXPECT_THAT(runtime, IsOk());
    return runtime.ok() ? std::move(runtime).value() : nullptr;
  }

  void Write(const std::string& name, const std::string& text) {
    MEND_ASSERT_OK(WriteFileAtomically(*env_.fs, home_ + "/" + name, text));
  }

  std::vector<std::string> EventLogs() {
    std::vector<std::string> names;
    for (const auto& entry : fs::directory_iterator(home_)) {
      const std::string name = entry.path().filename().string();
      if (name.starts_with("events")) names.push_back(name);
    }
    std::sort(names.begin(), names.end());
    return names;
  }

  std::string dir_, home_;
  ManualClock clock_;
  Env env_;
};

TEST_F(RetentionTest, ALargeEventLogIsRotatedWhenTheRuntimeOpens) {
  const std::string old_events(5000, 'x');
  Write("events.jsonl", old_events);
  std::unique_ptr<Runtime> runtime = Open({{"observe.events.max_bytes", "4096"}});
  ASSERT_NE(runtime, nullptr);
  EXPECT_THAT(EventLogs(), ElementsAre("events-20250301T120000Z.jsonl", "events.jsonl"));
  EXPECT_EQ(ReadFileToString(*env_.fs, home_ + "/events-20250301T120000Z.jsonl").value(),
            old_events);
  EXPECT_EQ(ModeOf(home_ + "/events-20250301T120000Z.jsonl"), kPrivate);
  EXPECT_EQ(ModeOf(home_ + "/events.jsonl"), kPrivate);
  runtime.reset();

  // The same second again: the name gets a counter rather than replacing the first log.
  Write("events.jsonl", old_events);
  runtime = Open({{"observe.events.max_bytes", "4096"}});
  EXPECT_THAT(EventLogs(), ElementsAre("events-20250301T120000Z-1.jsonl",
                                       "events-20250301T120000Z.jsonl", "events.jsonl"));
}

TEST_F(RetentionTest, ASmallEventLogStays) {
  Write("events.jsonl", std::string(4096, 'x'));
  std::unique_ptr<Runtime> runtime = Open({{"observe.events.max_bytes", "4096"}});
  ASSERT_NE(runtime, nullptr);
  EXPECT_THAT(EventLogs(), ElementsAre("events.jsonl"));
}

TEST_F(RetentionTest, PrunesRotatedLogsOlderThanTheLimitOnly) {
  std::unique_ptr<Runtime> runtime = Open();
  ASSERT_NE(runtime, nullptr);
  Write("events-20250115T000000Z.jsonl", "old\n");     // 45 days
  Write("events-20250130T115959Z-2.jsonl", "old2\n");  // 30 days and 1 s
  Write("events-20250130T120001Z.jsonl", "new\n");     // 1 s short of 30 days
  Write("events-garbage.jsonl", "keep\n");
  Write("events-20251399T000000Z.jsonl", "keep\n");  // not a time
  Write("events.jsonl", "live\n");

  RetentionOptions dry{30 * kDay, store::PruneScope::kHistory, store::PruneMode::kDryRun};
  Result<RetentionReport> report = PruneOlderThan(*runtime, dry);
  MEND_ASSERT_OK(report);
  EXPECT_EQ(report->event_logs, 2);
  EXPECT_EQ(report->event_log_bytes, 4 + 5);
  EXPECT_EQ(report->bytes_reclaimed(), 9);
  EXPECT_EQ(EventLogs().size(), 6u);

  report = PruneOlderThan(*runtime, {30 * kDay});
  MEND_ASSERT_OK(report);
  EXPECT_EQ(report->event_logs, 2);
  EXPECT_THAT(EventLogs(),
              ElementsAre("events-20250130T120001Z.jsonl", "events-20251399T000000Z.jsonl",
                          "events-garbage.jsonl", "events.jsonl"));
}

TEST_F(RetentionTest, SpansGoThroughTheRuntimesSpanPruner) {
  std::unique_ptr<Runtime> runtime = Open();
  ASSERT_NE(runtime, nullptr);
  std::vector<Time> cutoffs;
  std::vector<store::PruneMode> modes;
  runtime->prune_spans = [&](Time cutoff, store::PruneMode mode) -> Result<int64_t> {
    cutoffs.push_back(cutoff);
    modes.push_back(mode);
    return 7;
  };
  Result<RetentionReport> report =
      PruneOlderThan(*runtime, {kDay, store::PruneScope::kHistory, store::PruneMode::kDryRun});
  MEND_ASSERT_OK(report);
  EXPECT_EQ(report->spans, 7);
  EXPECT_EQ(report->cutoff, clock_.Now() - kDay);
  EXPECT_THAT(cutoffs, ElementsAre(clock_.Now() - kDay));
  EXPECT_THAT(modes, ElementsAre(store::PruneMode::kDryRun));

  runtime->prune_spans = [](Time, store::PruneMode) -> Result<int64_t> {
    return UnavailableError("observe.db is locked");
  };
  EXPECT_THAT(PruneOlderThan(*runtime, {kDay}), StatusIs(StatusCode::kUnavailable));
}

TEST_F(RetentionTest, ALimitMustBePositive) {
  std::unique_ptr<Runtime> runtime = Open();
  ASSERT_NE(runtime, nullptr);
  EXPECT_THAT(PruneOlderThan(*runtime, {Duration::zero()}), StatusIs(StatusCode::kInvalidArgument));
  EXPECT_THAT(PruneOlderThan(*runtime, {-kDay}), StatusIs(StatusCode::kInvalidArgument));
}

TEST_F(RetentionTest, TheLoopPrunesAtStartAndThenEveryInterval) {
  // Without observe.db's span writer, whose thread also waits on the clock: BlockUntilWaiters(1)
  // must mean the loop is parked, or time could move before the loop reads it and the second
  // pass would never come.
  std::unique_ptr<Runtime> runtime = Open({{"observe.enabled", "false"}});
  ASSERT_NE(runtime, nullptr);
  std::mutex mu;
  std::condition_variable passed;
  std::vector<Time> cutoffs;
  RetentionLoop loop(*runtime, 30 * kDay, hours(1), [&](const Result<RetentionReport>& r) {
    std::lock_guard<std::mutex> lock(mu);
    cutoffs.push_back(r.ok() ? r->cutoff : Time{});
    passed.notify_all();
  });
  auto wait_for_passes = [&](size_t n) {
    std::unique_lock<std::mutex> lock(mu);
    passed.wait(lock, [&] { return cutoffs.size() >= n; });
  };
  const Time start = clock_.Now();
  loop.Start();
  wait_for_passes(1);
  clock_.BlockUntilWaiters(1);
  clock_.Advance(hours(1) - std::chrono::seconds(1));
  clock_.Advance(std::chrono::seconds(1));
  wait_for_passes(2);
  loop.Stop();
  loop.Stop();               // idempotent
  clock_.Advance(hours(5));  // nothing runs after Stop
  std::lock_guard<std::mutex> lock(mu);
  EXPECT_THAT(cutoffs, ElementsAre(start - 30 * kDay, start + hours(1) - 30 * kDay));
}

}  // namespace
}  // namespace mend::app
