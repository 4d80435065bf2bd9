#include "mend/reflexion/lesson.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <chrono>
#include <string>

#include "tests/support/status_matchers.h"

namespace mend::reflexion {
namespace {

using ::mend::testing::StatusIs;
using ::testing::ElementsAre;

const Time kNow = Time{} + std::chrono::hours(500000);

Lesson SeedLesson() {
  Lesson lesson;
  lesson.situation = "Refactoring large Go files (>1000 lines)";
  lesson.mistake = "Attempted full rewrite via @coder write";
  lesson.correction = "Use @coder patch or Edit tool for surgical changes";
  lesson.tags = {"go", "refactor", "large-file", "edit-tool"};
  lesson.trigger = "error";
  lesson.created_at = kNow;
  return lesson;
}

TEST(LessonFactContentTest, FourLinesInOrder) {
  EXPECT_EQ(LessonFactContent(SeedLesson()),
            "LESSON: Refactoring large Go files (>1000 lines)\n"
            "MISTAKE: Attempted full rewrite via @coder write\n"
            "CORRECTION: Use @coder patch or Edit tool for surgical changes\n"
            "TRIGGER: error");
}

TEST(LessonFactContentTest, EmptyFieldsAreUnknownAndWhitespaceCollapses) {
  Lesson lesson;
  lesson.situation = "  editing\n\n big \t files ";
  lesson.mistake = " \n ";
  lesson.correction = "use\u00a0patches";  // a no-break space is white space too
  EXPECT_EQ(LessonFactContent(lesson),
            "LESSON: editing big files\n"
            "MISTAKE: (unknown)\n"
            "CORRECTION: use patches\n"
            "TRIGGER: (unknown)");
}

TEST(LessonFactTest, CategorySourceAndComposedTags) {
  Lesson lesson = SeedLesson();
  lesson.tags = {"Go", "refactor", "reflexion", "go"};
  memory::NewFact fact = LessonFact(lesson, nullptr, "ws1");
  EXPECT_EQ(fact.category, "lesson");
  EXPECT_EQ(fact.source, "reflexion");
  EXPECT_EQ(fact.workspace, "ws1");
  EXPECT_DOUBLE_EQ(fact.confidence, 1.0);
  EXPECT_EQ(fact.content, LessonFactContent(lesson));
  EXPECT_THAT(fact.tags, ElementsAre("go", "refactor", "reflexion", "trigger:error"));
  EXPECT_FALSE(fact.episode.has_value());
}

TEST(LessonFactTest, ProvenanceKeepsTaskAndBoundedOutcome) {
  lessonq::LessonRequest request;
  request.task = "Edit main.go";
  // 900 two-byte characters: the excerpt keeps 800 whole ones.
  std::string outcome;
  for (int i = 0; i < 900; ++i) outcome += "\u00e9";
  request.outcome = outcome;
  memory::NewFact fact = LessonFact(SeedLesson(), &request, "");
  ASSERT_TRUE(fact.episode.has_value());
  EXPECT_EQ(fact.episode->task, "Edit main.go");
  EXPECT_EQ(fact.episode->outcome, outcome.substr(0, 1600));
  EXPECT_EQ(fact.episode->at, kNow);
}

TEST(ManualLessonTest, TextBecomesSituationAndCorrection) {
  Result<Lesson> lesson =
      ManualLesson("  when editing big Go files\n use Edit,  not a rewrite ", kNow);
  ASSERT_TRUE(lesson.ok()) << lesson.status();
  EXPECT_EQ(lesson->situation, "when editing big Go files use Edit, not a rewrite");
  EXPECT_EQ(lesson->correction, lesson->situation);
  EXPECT_EQ(lesson->mistake, kManualMistake);
  EXPECT_EQ(lesson->trigger, "manual");
  EXPECT_EQ(lesson->created_at, kNow);
  memory::NewFact fact = LessonFact(*lesson, nullptr, "");
  EXPECT_EQ(fact.content,
            "LESSON: when editing big Go files use Edit, not a rewrite\n"
            "MISTAKE: (user-supplied lesson; no automatic mistake detection)\n"
            "CORRECTION: when editing big Go files use Edit, not a rewrite\n"
            "TRIGGER: manual");
  EXPECT_THAT(fact.tags, ElementsAre("user-supplied", "reflexion", "trigger:manual"));
}

TEST(ManualLessonTest, EmptyTextIsInvalid) {
  EXPECT_THAT(ManualLesson("", kNow), StatusIs(StatusCode::kInvalidArgument));
  EXPECT_THAT(ManualLesson(" \n\t ", kNow), StatusIs(StatusCode::kInvalidArgument));
}

}  // namespace
}  // namespace mend::reflexion
