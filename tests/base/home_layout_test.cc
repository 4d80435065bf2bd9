#include "mend/base/home_layout.h"

#include <gtest/gtest.h>

namespace mend::home {
namespace {

TEST(HomeLayoutTest, NamesTheFilesOfTheHome) {
  EXPECT_EQ(ConfigFile("/h"), "/h/config.toml");
  EXPECT_EQ(DatabaseFile("/h"), "/h/mend.db");
  EXPECT_EQ(ObserveFile("/h/"), "/h/observe.db");
  EXPECT_EQ(EventLogFile("/h"), "/h/events.jsonl");
  EXPECT_EQ(LessonQueueDir("/h"), "/h/reflexion");
  EXPECT_EQ(LessonWalDir("/q"), "/q/wal");
  EXPECT_EQ(LessonDlqDir("/q"), "/q/dlq");
  EXPECT_EQ(LessonsFile("/q"), "/q/LESSONS.md");
  EXPECT_EQ(LessonQueueLockFile("/q"), "/q/owner.lock");
  EXPECT_EQ(ImproveDir("/h"), "/h/improve");
  EXPECT_EQ(AttemptDir("/h", "a1"), "/h/improve/a1");
  EXPECT_EQ(ImproveScratchDir("/h", 42), "/h/improve-scratch-42");
  EXPECT_EQ(ScratchAgentDir("/s"), "/s/agent");
  EXPECT_EQ(ScratchStoreFile("/s"), "/s/store.db");
  EXPECT_EQ(ScratchRunsDir("/s"), "/s/runs");
  EXPECT_EQ(DemoAgentDir("/h"), "/h/demo-agent");
}

TEST(HomeLayoutTest, TheDefaultsAreThoseTheConfigurationExpands) {
  EXPECT_STREQ(kDefaultHome, "{user_home}/.mend");
  EXPECT_STREQ(kDefaultLessonQueueDir, "{home}/reflexion");
}

TEST(HomeLayoutTest, RotatedEventLogNamesRoundTrip) {
  EXPECT_EQ(RotatedEventLogName("20250102T030405Z", 0), "events-20250102T030405Z.jsonl");
  EXPECT_EQ(RotatedEventLogName("20250102T030405Z", 3), "events-20250102T030405Z-3.jsonl");
  EXPECT_EQ(RotatedEventLogStamp("events-20250102T030405Z.jsonl"), "20250102T030405Z");
  EXPECT_EQ(RotatedEventLogStamp("events-20250102T030405Z-3.jsonl"), "20250102T030405Z");
}

TEST(HomeLayoutTest, OtherNamesAreNotRotatedEventLogs) {
  EXPECT_EQ(RotatedEventLogStamp("events.jsonl"), std::nullopt);
  EXPECT_EQ(RotatedEventLogStamp("events-2025.jsonl"), std::nullopt);
  EXPECT_EQ(RotatedEventLogStamp("events-20250102T030405Z-x.jsonl"), std::nullopt);
  EXPECT_EQ(RotatedEventLogStamp("events-20250102T030405Z-.jsonl"), std::nullopt);
  EXPECT_EQ(RotatedEventLogStamp("events-20250102T030405Z.json"), std::nullopt);
}

TEST(HomeLayoutTest, ScratchOwnerIsThePidInTheName) {
  EXPECT_EQ(ScratchOwner("improve-scratch-123"), 123);
  EXPECT_EQ(ScratchOwner("improve-scratch-"), std::nullopt);
  EXPECT_EQ(ScratchOwner("improve-scratch-12a"), std::nullopt);
  EXPECT_EQ(ScratchOwner("improve-scratch-1234567890"), std::nullopt);  // more than 9 digits
  EXPECT_EQ(ScratchOwner("improve-scratch"), std::nullopt);
  EXPECT_EQ(ScratchOwner("mend.db"), std::nullopt);
}

}  // namespace
}  // namespace mend::home
