#include "mend/reflexion/lesson_sink.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <stdlib.h>

#include <algorithm>
#include <cerrno>
#include <filesystem>
#include <memory>
#include <string>

#include "mend/base/fault_injection_file_system.h"
#include "mend/base/manual_clock.h"
#include "mend/base/memory_file_system.h"
#include "mend/obs/events.h"
#include "tests/support/status_matchers.h"

namespace mend::reflexion {
namespace {

using ::mend::testing::IsOk;
using ::mend::testing::StatusIs;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;

const Time kNow = Time{} + std::chrono::hours(24 * 365 * 56);  // 2025-12-18T00:00:00Z

Lesson SeedLesson() {
  Lesson lesson;
  lesson.situation = "Refactoring large Go files (>1000 lines)";
  lesson.mistake = "Attempted full rewrite via @coder write";
  lesson.correction = "Use @coder patch or Edit tool for surgical changes";
  lesson.tags = {"go", "refactor"};
  lesson.trigger = "error";
  lesson.created_at = kNow;
  return lesson;
}

class LessonSinkTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string pattern = ::testing::TempDir() + "mend_lessons_XXXXXX";
    ASSERT_NE(mkdtemp(pattern.data()), nullptr);
    dir_ = pattern;
    auto store = memory::FactStore::Open(dir_ + "/mend.db", memory::FactStoreOptions{&clock_});
    ASSERT_THAT(store.status(), IsOk());
    facts_ = std::move(store).value();
    bus_.Subscribe(events_);
  }
  void TearDown() override {
    facts_.reset();
    std::filesystem::remove_all(dir_);
  }
  Env env() { return Env{&fs_, &clock_, nullptr}; }
  LessonSinkOptions Options(bool persist = true) {
    LessonSinkOptions options;
    options.persist = persist;
    options.lessons_file = "reflexion/LESSONS.md";
    return options;
  }
  std::string LessonsFile() {
    auto text = ReadFileToString(mem_fs_, "reflexion/LESSONS.md");
    return text.ok() ? *text : "<" + text.status().ToString() + ">";
  }
  std::vector<std::string> EventTypes() {
    std::vector<std::string> types;
    for (const obs::Event& e : events_->events()) types.push_back(e.type());
    return types;
  }

  ManualClock clock_{kNow};
  MemoryFileSystem mem_fs_;
  FaultInjectionFileSystem fs_{&mem_fs_};
  obs::EventBus bus_{clock_};
  std::shared_ptr<obs::MemorySink> events_ = std::make_shared<obs::MemorySink>();
  std::string dir_;
  std::unique_ptr<memory::FactStore> facts_;
};

TEST_F(LessonSinkTest, PersistStoresTheFactWithProvenanceAndLogsIt) {
  LessonSink sink(facts_.get(), env(), &bus_, Options());
  lessonq::LessonRequest request{"Edit main.go", "full rewrite", "ERROR: file too large", "error"};
  Result<std::string> id = sink.Persist(SeedLesson(), &request);
  ASSERT_TRUE(id.ok()) << id.status();
  ASSERT_FALSE(id->empty());

  Result<memory::Fact> fact = facts_->Get(*id);
  ASSERT_TRUE(fact.ok()) << fact.status();
  EXPECT_EQ(fact->content, LessonFactContent(SeedLesson()));
  EXPECT_EQ(fact->category, "lesson");
  EXPECT_EQ(fact->source, "reflexion");
  EXPECT_THAT(fact->tags, ElementsAre("go", "refactor", "reflexion", "trigger:error"));
  ASSERT_EQ(fact->provenance.size(), 1u);
  EXPECT_EQ(fact->provenance[0].task, "Edit main.go");
  EXPECT_EQ(fact->provenance[0].outcome, "ERROR: file too large");

  EXPECT_EQ(LessonsFile(),
            "# Lessons\n\n- 2025-12-18T00:00:00Z"
            " [error] Refactoring large Go files (>1000 lines) \u2192 Use @coder patch or "
            "Edit tool for surgical changes (fact " +
                *id + "; tags: go, refactor)\n");
  ASSERT_THAT(EventTypes(), ElementsAre("reflexion.lesson_stored"));
  EXPECT_EQ(events_->events()[0].Find("fact"), "\"" + *id + "\"");
  EXPECT_EQ(events_->events()[0].Find("trigger"), "\"error\"");
  EXPECT_EQ(events_->events()[0].Find("kind"), "\"added\"");
}

TEST_F(LessonSinkTest, ARequestsWorkspaceIsWhereTheLessonIsStored) {
  LessonSinkOptions options = Options();
  options.workspace = "/srv/runs";
  LessonSink sink(facts_.get(), env(), &bus_, options);
  lessonq::LessonRequest scoped{"Edit main.go", "full rewrite", "ERROR: too large", "error"};
  scoped.workspace = "proxy-team-a";
  Result<std::string> id = sink.Persist(SeedLesson(), &scoped);
  ASSERT_TRUE(id.ok()) << id.status();
  EXPECT_EQ(facts_->Get(*id)->workspace, "proxy-team-a");
  // Without one, the sink's own.
  Lesson other = SeedLesson();
  other.situation = "Another situation entirely";
  other.correction = "Something else to do";
  lessonq::LessonRequest plain{"Edit x.go", "rewrite", "ERROR", "error"};
  Result<std::string> own = sink.Persist(other, &plain);
  ASSERT_TRUE(own.ok()) << own.status();
  EXPECT_EQ(facts_->Get(*own)->workspace, "/srv/runs");
}

TEST_F(LessonSinkTest, SameLessonTwiceReinforcesAndAddsAnEpisode) {
  LessonSink sink(facts_.get(), env(), &bus_, Options());
  lessonq::LessonRequest first{"Edit main.go", "a", "ERROR: too large", "error"};
  lessonq::LessonRequest second{"Edit util.go", "b", "ERROR: timeout", "error"};
  Result<std::string> id1 = sink.Persist(SeedLesson(), &first);
  Result<std::string> id2 = sink.Persist(SeedLesson(), &second);
  ASSERT_TRUE(id1.ok() && id2.ok());
  EXPECT_EQ(*id1, *id2);
  Result<memory::Fact> fact = facts_->Get(*id1);
  ASSERT_TRUE(fact.ok());
  ASSERT_EQ(fact->provenance.size(), 2u);
  EXPECT_EQ(fact->provenance[1].task, "Edit util.go");
  EXPECT_EQ(events_->events()[1].Find("kind"), "\"reinforced\"");
  std::string file = LessonsFile();
  EXPECT_EQ(file.rfind("# Lessons\n\n", 0), 0u);
  EXPECT_EQ(std::count(file.begin(), file.end(), '\n'), 4);  // header, blank, two entries
  EXPECT_EQ(file.find("# Lessons", 1), std::string::npos);
}

TEST_F(LessonSinkTest, OnStoredIsCalledForEveryStoredLessonOnly) {
  int stored = 0;
  LessonSinkOptions options = Options();
  options.on_stored = [&] { ++stored; };
  LessonSink sink(facts_.get(), env(), &bus_, options);
  ASSERT_THAT(sink.Persist(SeedLesson(), nullptr).status(), IsOk());
  ASSERT_THAT(sink.Persist(SeedLesson(), nullptr).status(), IsOk());  // reinforced: stored too
  EXPECT_EQ(stored, 2);
  options.persist = false;
  LessonSink log_only(facts_.get(), env(), &bus_, options);
  ASSERT_THAT(log_only.Persist(SeedLesson(), nullptr).status(), IsOk());
  EXPECT_EQ(stored, 2);
}

TEST_F(LessonSinkTest, PersistOffStoresNoFactButLogs) {
  LessonSink sink(facts_.get(), env(), &bus_, Options(/*persist=*/false));
  Result<std::string> id = sink.Persist(SeedLesson(), nullptr);
  ASSERT_TRUE(id.ok()) << id.status();
  EXPECT_EQ(*id, "");
  EXPECT_THAT(facts_->Count(), ::mend::testing::IsOkAndHolds(0));
  EXPECT_THAT(LessonsFile(), HasSubstr("(not stored; tags: go, refactor)\n"));
  EXPECT_EQ(events_->events().at(0).Find("kind"), "\"log_only\"");
}

TEST_F(LessonSinkTest, PersistOffWithoutAStoreIsAllowed) {
  LessonSink sink(nullptr, env(), nullptr, Options(/*persist=*/false));
  EXPECT_THAT(sink.Persist(SeedLesson(), nullptr), ::mend::testing::IsOkAndHolds(""));
}

TEST_F(LessonSinkTest, LessonsFileFailureAfterTheFactIsOnlyAnEvent) {
  LessonSink sink(facts_.get(), env(), &bus_, Options());
  fs_.FailNext(FsOp::kWrite, EIO);
  Result<std::string> id = sink.Persist(SeedLesson(), nullptr);
  ASSERT_TRUE(id.ok()) << id.status();
  EXPECT_THAT(facts_->Count(), ::mend::testing::IsOkAndHolds(1));
  EXPECT_THAT(EventTypes(),
              ElementsAre("reflexion.lesson_stored", "reflexion.lessons_file_failed"));
}

TEST_F(LessonSinkTest, LessonsFileFailureWithPersistOffIsReturned) {
  LessonSink sink(facts_.get(), env(), &bus_, Options(/*persist=*/false));
  fs_.FailNext(FsOp::kSync, ENOSPC);
  EXPECT_THAT(sink.Persist(SeedLesson(), nullptr), StatusIs(StatusCode::kResourceExhausted));
}

TEST_F(LessonSinkTest, NoLessonsFileConfigured) {
  LessonSinkOptions options = Options();
  options.lessons_file = "";
  LessonSink sink(facts_.get(), env(), nullptr, options);
  MEND_ASSERT_OK(sink.Persist(SeedLesson(), nullptr).status());
  EXPECT_FALSE(mem_fs_.Exists("reflexion/LESSONS.md"));
}

}  // namespace
}  // namespace mend::reflexion
