#include "mend/reflexion/generator.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>

#include "mend/base/manual_clock.h"
#include "mend/base/utf8.h"
#include "mend/llm/scripted_provider.h"
#include "tests/support/status_matchers.h"

namespace mend::reflexion {
namespace {

using ::mend::testing::StatusIs;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;

const Time kNow = Time{} + std::chrono::hours(500000);

constexpr std::string_view kSeedReply =
    "<situation>Refactoring large Go files (>1000 lines)</situation>\n"
    "<mistake>Attempted full rewrite via @coder write</mistake>\n"
    "<correction>Use @coder patch or Edit tool for surgical changes</correction>\n"
    "<tags>go, refactor, large-file, edit-tool</tags>\n";

std::string Repeat(std::string_view s, int n) {
  std::string out;
  for (int i = 0; i < n; ++i) out += s;
  return out;
}

TEST(LessonSystemPromptTest, StatesTheRulesAndTheBlocks) {
  std::string_view prompt = LessonSystemPrompt();
  EXPECT_THAT(std::string(prompt), HasSubstr("<skip>nothing actionable</skip>"));
  EXPECT_THAT(std::string(prompt), HasSubstr("GENERAL"));
  EXPECT_THAT(std::string(prompt), HasSubstr("ONE line"));
  EXPECT_THAT(std::string(prompt), HasSubstr("2-5"));
  for (std::string_view block : {"situation", "mistake", "correction", "tags"}) {
    EXPECT_THAT(std::string(prompt), HasSubstr("<" + std::string(block) + ">")) << block;
  }
  EXPECT_THAT(std::string(prompt), HasSubstr("OUTPUT:\n<situation>"));
}

TEST(LessonUserMessageTest, ExactLayout) {
  lessonq::LessonRequest request{"Edit main.go", "used full rewrite", "ERROR: file too large",
                                 "error"};
  EXPECT_EQ(LessonUserMessage(request),
            "TASK:\nEdit main.go\n\nATTEMPT:\nused full rewrite\n\n"
            "OUTCOME (why we are reflecting):\nERROR: file too large\n\nTRIGGER: error");
}

TEST(LessonUserMessageTest, CutsAttemptAndOutcomeOnCodePoints) {
  // Three-byte and four-byte characters: a byte cut would split them.
  std::string attempt = Repeat("\u20ac", 1499) + "\U0001F600" + Repeat("x", 50);
  std::string outcome = Repeat("\u00e9", 799) + "\U0001F600" + "tail";
  std::string task = Repeat("t", 3000);  // the task is never cut
  lessonq::LessonRequest request{task, attempt, outcome, "error"};
  std::string want = "TASK:\n" + task + "\n\nATTEMPT:\n" + Repeat("\u20ac", 1499) + "\U0001F600" +
                     "\n\nOUTCOME (why we are reflecting):\n" + Repeat("\u00e9", 799) +
                     "\U0001F600" + "\n\nTRIGGER: error";
  std::string got = LessonUserMessage(request);
  EXPECT_EQ(got, want);
  EXPECT_TRUE(IsValidUtf8(got));
}

TEST(ParseLessonReplyTest, SeedExample) {
  auto parsed = ParseLessonReply(kSeedReply, "error", kNow);
  ASSERT_TRUE(parsed.ok()) << parsed.status();
  ASSERT_TRUE(parsed->has_value());
  const Lesson& lesson = **parsed;
  EXPECT_EQ(lesson.situation, "Refactoring large Go files (>1000 lines)");
  EXPECT_EQ(lesson.mistake, "Attempted full rewrite via @coder write");
  EXPECT_EQ(lesson.correction, "Use @coder patch or Edit tool for surgical changes");
  EXPECT_THAT(lesson.tags, ElementsAre("go", "refactor", "large-file", "edit-tool"));
  EXPECT_EQ(lesson.trigger, "error");
  EXPECT_EQ(lesson.created_at, kNow);
}

TEST(ParseLessonReplyTest, SkipAnywhereMeansNothingToStore) {
  for (std::string reply :
       {std::string("<skip>nothing actionable</skip>"),
        std::string("Thinking...\n<SKIP>nothing actionable</SKIP> done"),
        std::string(kSeedReply) + "\n<skip>nothing actionable</skip>", std::string("<skip>")}) {
    auto parsed = ParseLessonReply(reply, "error", kNow);
    ASSERT_TRUE(parsed.ok()) << reply;
    EXPECT_FALSE(parsed->has_value()) << reply;
  }
}

TEST(ParseLessonReplyTest, NoBlockIsInvalidAndQuotesTheReply) {
  EXPECT_THAT(ParseLessonReply("I could not think of a lesson.", "error", kNow),
              StatusIs(StatusCode::kInvalidArgument,
                       HasSubstr("reply: \"I could not think of a lesson.\"")));
  EXPECT_THAT(ParseLessonReply("", "error", kNow), StatusIs(StatusCode::kInvalidArgument));
}

TEST(ParseLessonReplyTest, MissingSituationOrCorrectionIsInvalid) {
  EXPECT_THAT(ParseLessonReply("<mistake>m</mistake><correction>c</correction>", "error", kNow),
              StatusIs(StatusCode::kInvalidArgument, HasSubstr("missing <situation>")));
  EXPECT_THAT(ParseLessonReply("<situation>s</situation><tags>a, b</tags>", "error", kNow),
              StatusIs(StatusCode::kInvalidArgument, HasSubstr("missing <correction>")));
  EXPECT_THAT(ParseLessonReply("<situation> </situation><correction>c</correction>", "e", kNow),
              StatusIs(StatusCode::kInvalidArgument, HasSubstr("empty <situation>")));
  EXPECT_THAT(ParseLessonReply("<tags>a</tags>", "error", kNow),
              StatusIs(StatusCode::kInvalidArgument,
                       HasSubstr("missing <situation> and is missing <correction>")));
}

TEST(ParseLessonReplyTest, MistakeAndTagsMayBeAbsent) {
  auto parsed = ParseLessonReply("<situation>s</situation><correction>c</correction>", "e", kNow);
  ASSERT_TRUE(parsed.ok()) << parsed.status();
  ASSERT_TRUE(parsed->has_value());
  EXPECT_EQ((*parsed)->mistake, "");
  EXPECT_THAT((*parsed)->tags, IsEmpty());
}

TEST(ParseLessonReplyTest, TagsAreSplitTrimmedLoweredAndEmptiesDropped) {
  auto parsed = ParseLessonReply(
      "<situation>s</situation><correction>c</correction><tags>Go,  ,Refactor ,</tags>", "e", kNow);
  ASSERT_TRUE(parsed.ok()) << parsed.status();
  EXPECT_THAT((*parsed)->tags, ElementsAre("go", "refactor"));
}

TEST(ParseLessonReplyTest, TagsAreDeduplicatedAndCappedAtEight) {
  auto parsed = ParseLessonReply(
      "<situation>s</situation><correction>c</correction>"
      "<tags>a, A, b, c, d, e, f, g, h, i, j</tags>",
      "e", kNow);
  ASSERT_TRUE(parsed.ok()) << parsed.status();
  EXPECT_THAT((*parsed)->tags, ElementsAre("a", "b", "c", "d", "e", "f", "g", "h"));
}

TEST(ParseLessonReplyTest, BlocksOutOfOrderWithProseAndLineBreaks) {
  auto parsed = ParseLessonReply(
      "Sure! Here is the lesson.\n<Tags>shell</Tags>\n<correction>quote\n  every\tpath"
      "</correction> and then <situation>\n  running shell commands on paths\n</situation>"
      "<situation>second one is ignored</situation>",
      "hallucination", kNow);
  ASSERT_TRUE(parsed.ok()) << parsed.status();
  EXPECT_EQ((*parsed)->situation, "running shell commands on paths");
  EXPECT_EQ((*parsed)->correction, "quote every path");
  EXPECT_THAT((*parsed)->tags, ElementsAre("shell"));
  EXPECT_EQ((*parsed)->trigger, "hallucination");
}

TEST(ParseLessonReplyTest, UnclosedBlockIsReported) {
  EXPECT_THAT(ParseLessonReply("<situation>s<correction>c</correction>", "e", kNow),
              StatusIs(StatusCode::kInvalidArgument, HasSubstr("unclosed <situation>")));
}

TEST(ParseLessonReplyTest, NestedTagsEndAtTheFirstClosingTag) {
  auto parsed = ParseLessonReply(
      "<situation>a<situation>b</situation>c</situation><correction>d</correction>", "e", kNow);
  ASSERT_TRUE(parsed.ok()) << parsed.status();
  EXPECT_EQ((*parsed)->situation, "a<situation>b");
  EXPECT_EQ((*parsed)->correction, "d");
}

TEST(ParseLessonReplyTest, HugeReplyIsBoundedAndExcerptIsShort) {
  std::string huge =
      "<situation>" + Repeat("word ", 200000) + "</situation>" + "<correction>c</correction>";
  auto parsed = ParseLessonReply(huge, "e", kNow);
  ASSERT_TRUE(parsed.ok()) << parsed.status();
  EXPECT_EQ(CountUtf8Chars((*parsed)->situation), 1000u);

  auto bad = ParseLessonReply(Repeat("x", 1 << 20), "e", kNow);
  ASSERT_THAT(bad, StatusIs(StatusCode::kInvalidArgument));
  EXPECT_LT(bad.status().message().size(), 300u);
}

TEST(ParseLessonReplyTest, InvalidUtf8IsReplaced) {
  auto parsed = ParseLessonReply("<situation>a\xff\xfe b</situation><correction>\xc3</correction>",
                                 "e", kNow);
  ASSERT_TRUE(parsed.ok()) << parsed.status();
  EXPECT_TRUE(IsValidUtf8((*parsed)->situation));
  EXPECT_EQ((*parsed)->situation, "a\ufffd\ufffd b");
  EXPECT_EQ((*parsed)->correction, "\ufffd");
  EXPECT_THAT(ParseLessonReply("\xff\xfe\xfd", "e", kNow), StatusIs(StatusCode::kInvalidArgument));
}

TEST(LessonGeneratorTest, OneCompletionWithSystemAndUserMessage) {
  ManualClock clock(kNow);
  llm::ScriptedProvider provider({llm::ScriptedStep{.text = std::string(kSeedReply)}});
  LessonGenerator generator(provider, "small-model", clock);
  lessonq::LessonRequest request{"Edit main.go", "used full rewrite", "ERROR: too large", "error"};
  auto lesson = generator.Generate(request);
  ASSERT_TRUE(lesson.ok()) << lesson.status();
  ASSERT_TRUE(lesson->has_value());
  EXPECT_EQ((*lesson)->trigger, "error");
  EXPECT_EQ((*lesson)->created_at, kNow);

  std::vector<llm::CompletionRequest> calls = provider.requests();
  ASSERT_EQ(calls.size(), 1u);
  EXPECT_EQ(calls[0].model, "small-model");
  ASSERT_EQ(calls[0].messages.size(), 2u);
  EXPECT_EQ(calls[0].messages[0].role, llm::Role::kSystem);
  EXPECT_EQ(calls[0].messages[0].content, LessonSystemPrompt());
  EXPECT_EQ(calls[0].messages[1].role, llm::Role::kUser);
  EXPECT_EQ(calls[0].messages[1].content, LessonUserMessage(request));
  EXPECT_EQ(calls[0].temperature, 0.2);
  EXPECT_EQ(calls[0].max_tokens, 400);
}

TEST(LessonGeneratorTest, TheRecordedModelUnlessALessonModelIsConfigured) {
  ManualClock clock(kNow);
  llm::ScriptedProvider provider({llm::ScriptedStep{.text = std::string(kSeedReply)},
                                  llm::ScriptedStep{.text = std::string(kSeedReply)}});
  lessonq::LessonRequest request{"t", "a", "o", "error"};
  request.provider = "openai";
  request.model = "llama3";
  LessonGenerator recorded(provider, "", clock);
  MEND_ASSERT_OK(recorded.Generate(request).status());
  LessonGenerator configured(provider, "small-model", clock);
  MEND_ASSERT_OK(configured.Generate(request).status());
  std::vector<llm::CompletionRequest> calls = provider.requests();
  ASSERT_EQ(calls.size(), 2u);
  EXPECT_EQ(calls[0].model, "llama3");
  EXPECT_EQ(calls[1].model, "small-model");
}

TEST(LessonGeneratorTest, ProviderErrorsComeBackUnchanged) {
  ManualClock clock(kNow);
  Status outage = UnavailableError("upstream 503").WithDetailCode("http_503");
  llm::ScriptedProvider provider({llm::ScriptedStep{.error = outage}});
  LessonGenerator generator(provider, "", clock);
  auto lesson = generator.Generate({"t", "a", "o", "error"});
  EXPECT_EQ(lesson.status(), outage);
}

}  // namespace
}  // namespace mend::reflexion
