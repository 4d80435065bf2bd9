#include "mend/llm/scripted_provider.h"

#include <gtest/gtest.h>

#include "mend/base/memory_file_system.h"
#include "tests/support/status_matchers.h"

namespace mend::llm {
namespace {

using ::mend::testing::StatusIs;
using ::testing::HasSubstr;

CompletionRequest Ask(std::string text) {
  CompletionRequest r;
  r.messages.push_back(Message::User(std::move(text)));
  return r;
}

TEST(ScriptedProviderTest, ReplaysStepsInOrderThenExhausts) {
  auto p = ScriptedProvider::FromJson(R"([
      {"text": "hello", "input_tokens": 12, "output_tokens": 3},
      {"tool_calls": [{"id": "c1", "name": "search", "arguments": {"q": "x"}}]},
      {"error": {"code": "unavailable", "message": "down", "retry_after_ms": 1500}}
  ])");
  MEND_ASSERT_OK(p);
  Result<Completion> a = (*p)->Complete(Ask("hi"));
  MEND_ASSERT_OK(a);
  EXPECT_EQ(a->text, "hello");
  EXPECT_EQ(a->usage.input_tokens, 12);
  EXPECT_EQ(a->usage.output_tokens, 3);
  EXPECT_EQ(a->finish_reason, FinishReason::kStop);

  Result<Completion> b = (*p)->Complete(Ask("again"));
  MEND_ASSERT_OK(b);
  ASSERT_EQ(b->tool_calls.size(), 1u);
  EXPECT_EQ(b->tool_calls[0].id, "c1");
  EXPECT_EQ(b->tool_calls[0].name, "search");
  EXPECT_EQ(b->tool_calls[0].arguments, R"({"q":"x"})");
  EXPECT_EQ(b->finish_reason, FinishReason::kToolCalls);

  Result<Completion> c = (*p)->Complete(Ask("3"));
  EXPECT_THAT(c, StatusIs(StatusCode::kUnavailable, "down"));
  EXPECT_EQ(c.status().retry_after(), std::chrono::milliseconds(1500));
  EXPECT_TRUE(IsRetryable(c.status()));

  EXPECT_THAT((*p)->Complete(Ask("4")),
              StatusIs(StatusCode::kFailedPrecondition, "script exhausted after 3 responses"));
  std::vector<CompletionRequest> seen = (*p)->requests();
  ASSERT_EQ(seen.size(), 4u);
  EXPECT_EQ(seen[1].messages[0].content, "again");
  EXPECT_EQ((*p)->remaining(), 0u);
}

// A request in a conversation that has had `turns` assistant answers.
CompletionRequest AtTurn(size_t turns) {
  CompletionRequest r = Ask("task");
  for (size_t i = 0; i < turns; ++i) {
    r.messages.push_back(Message::Assistant("", {{"c" + std::to_string(i), "look", "{}"}}));
    r.messages.push_back(Message::ToolResult("c" + std::to_string(i), "look", "seen"));
  }
  return r;
}

std::string TextOf(const Result<Completion>& c) { return c.ok() ? c->text : c.status().ToString(); }

TEST(ScriptedProviderTest, AConversationResumedByAFreshProviderGetsItsTurnsAnswer) {
  constexpr char kScript[] = R"([{"text": "answer 0"}, {"text": "answer 1"},
      {"error": {"code": "unavailable", "message": "blip at turn 2"}}, {"text": "answer 2"},
      {"text": "answer 3"}, {"text": "answer 4"}])";
  auto first = ScriptedProvider::FromJson(kScript);
  MEND_ASSERT_OK(first);
  EXPECT_EQ(TextOf((*first)->Complete(AtTurn(0))), "answer 0");
  EXPECT_EQ(TextOf((*first)->Complete(AtTurn(1))), "answer 1");

  // Another process picks the conversation up after its third answer.
  auto resumed = ScriptedProvider::FromJson(kScript);
  MEND_ASSERT_OK(resumed);
  EXPECT_EQ(TextOf((*resumed)->Complete(AtTurn(3))), "answer 3");
  EXPECT_EQ((*resumed)->remaining(), 1u);
  EXPECT_EQ(TextOf((*resumed)->Complete(AtTurn(4))), "answer 4");
  EXPECT_EQ((*resumed)->remaining(), 0u);
}

TEST(ScriptedProviderTest, ErrorsBeforeAnAnswerComeInOrderAndAreNotReplayedForALaterTurn) {
  constexpr char kScript[] = R"([{"text": "answer 0"},
      {"error": {"code": "unavailable", "message": "first"}},
      {"error": {"code": "resource_exhausted", "message": "second", "retry_after_ms": 250}},
      {"text": "answer 1"},
      {"error": {"code": "deadline_exceeded", "message": "third"}},
      {"text": "answer 2"}])";
  auto p = ScriptedProvider::FromJson(kScript);
  MEND_ASSERT_OK(p);
  EXPECT_EQ(TextOf((*p)->Complete(AtTurn(0))), "answer 0");
  // Retries of turn 1 get its error steps in order, then its answer.
  EXPECT_THAT((*p)->Complete(AtTurn(1)), StatusIs(StatusCode::kUnavailable, "first"));
  Result<Completion> second = (*p)->Complete(AtTurn(1));
  EXPECT_THAT(second, StatusIs(StatusCode::kResourceExhausted, "second"));
  EXPECT_EQ(second.status().retry_after(), std::chrono::milliseconds(250));
  EXPECT_EQ(TextOf((*p)->Complete(AtTurn(1))), "answer 1");

  // A fresh provider continuing the conversation at turn 2 answers it: turn 2's error was for an
  // attempt an earlier process made (the run failed on it and is being resumed).
  auto fresh = ScriptedProvider::FromJson(kScript);
  MEND_ASSERT_OK(fresh);
  EXPECT_EQ(TextOf((*fresh)->Complete(AtTurn(2))), "answer 2");
  EXPECT_EQ((*fresh)->remaining(), 0u);

  // The same at turn 1, past both of its errors.
  auto again = ScriptedProvider::FromJson(kScript);
  MEND_ASSERT_OK(again);
  EXPECT_EQ(TextOf((*again)->Complete(AtTurn(1))), "answer 1");
  // A conversation starting at turn 0 does not jump: its errors come as written.
  auto start = ScriptedProvider::FromJson(
      R"([{"error": {"code": "unavailable", "message": "down"}}, {"text": "answer 0"}])");
  MEND_ASSERT_OK(start);
  EXPECT_THAT((*start)->Complete(AtTurn(0)), StatusIs(StatusCode::kUnavailable, "down"));
  EXPECT_EQ(TextOf((*start)->Complete(AtTurn(0))), "answer 0");
}

TEST(ScriptedProviderTest, ConversationsServedInSequenceShareTheScriptInOrder) {
  // Conversation A (a tool call, then its answer), a one-shot request, conversation B.
  auto p = ScriptedProvider::FromJson(R"([
      {"tool_calls": [{"id": "a1", "name": "look"}]}, {"text": "A done"},
      {"text": "one-shot"},
      {"error": {"code": "unavailable"}}, {"tool_calls": [{"id": "b1", "name": "look"}]},
      {"text": "B done"}])");
  MEND_ASSERT_OK(p);
  Result<Completion> a0 = (*p)->Complete(AtTurn(0));
  MEND_ASSERT_OK(a0);
  ASSERT_EQ(a0->tool_calls.size(), 1u);
  EXPECT_EQ(a0->tool_calls[0].id, "a1");
  EXPECT_EQ(TextOf((*p)->Complete(AtTurn(1))), "A done");
  EXPECT_EQ(TextOf((*p)->Complete(Ask("summarise"))), "one-shot");
  // B starts at turn 0 behind the cursor: the cursor never moves back.
  EXPECT_THAT((*p)->Complete(AtTurn(0)), StatusIs(StatusCode::kUnavailable));
  Result<Completion> b0 = (*p)->Complete(AtTurn(0));
  MEND_ASSERT_OK(b0);
  ASSERT_EQ(b0->tool_calls.size(), 1u);
  EXPECT_EQ(b0->tool_calls[0].id, "b1");
  EXPECT_EQ(TextOf((*p)->Complete(AtTurn(1))), "B done");
  EXPECT_EQ((*p)->remaining(), 0u);
  EXPECT_EQ((*p)->requests().size(), 6u);
}

TEST(ScriptedProviderTest, AConversationPastTheScriptFindsItExhausted) {
  auto p = ScriptedProvider::FromJson(R"([{"text": "answer 0"}, {"text": "answer 1"}])");
  MEND_ASSERT_OK(p);
  EXPECT_THAT((*p)->Complete(AtTurn(5)),
              StatusIs(StatusCode::kFailedPrecondition,
                       "script exhausted after 2 responses; the conversation is at turn 5 and the "
                       "script has 2 answers"));
  EXPECT_EQ((*p)->remaining(), 0u);
  // The cursor went past the end: an earlier turn does not bring the answers back.
  EXPECT_THAT((*p)->Complete(AtTurn(0)),
              StatusIs(StatusCode::kFailedPrecondition, "script exhausted after 2 responses"));
  EXPECT_EQ((*p)->requests().size(), 2u);
}

TEST(ScriptedProviderTest, ErrorStepsAfterTheLastAnswerServeTheNextTurn) {
  constexpr char kScript[] =
      R"([{"text": "answer 0"}, {"error": {"code": "unavailable", "message": "gone"}}])";
  auto p = ScriptedProvider::FromJson(kScript);
  MEND_ASSERT_OK(p);
  EXPECT_THAT(p.value()->Complete(AtTurn(1)), StatusIs(StatusCode::kUnavailable, "gone"));
  EXPECT_THAT(p.value()->Complete(AtTurn(1)), StatusIs(StatusCode::kFailedPrecondition));
}

TEST(ScriptedProviderTest, ErrorStepsCarryDetailCodeAndClass) {
  auto p = ScriptedProvider::FromJson(R"([
      {"error": {"code": "resource_exhausted", "message": "no credit",
                 "detail_code": "insufficient_quota", "class": "permanent"}},
      {"error": {"code": "cancelled"}}])");
  MEND_ASSERT_OK(p);
  Status quota = (*p)->Complete(Ask("a")).status();
  EXPECT_THAT(quota, StatusIs(StatusCode::kResourceExhausted, "no credit"));
  EXPECT_EQ(quota.detail_code(), "insufficient_quota");
  EXPECT_EQ(ClassOf(quota), ErrorClass::kPermanent);
  EXPECT_THAT((*p)->Complete(Ask("b")), StatusIs(StatusCode::kCancelled, "scripted cancelled"));

  EXPECT_THAT(ScriptedProvider::FromJson(R"([{"error": {"code": "internal", "class": "odd"}}])"),
              StatusIs(StatusCode::kInvalidArgument,
                       HasSubstr("script step 0: unknown error class \"odd\"")));
  EXPECT_THAT(
      ScriptedProvider::FromJson(R"([{"error": {"code": "internal", "detail_code": 7}}])"),
      StatusIs(StatusCode::kInvalidArgument, HasSubstr("\"detail_code\" must be a string")));
  EXPECT_THAT(ScriptedProvider::FromJson(R"([{"error": {"code": "internal", "class": 1}}])"),
              StatusIs(StatusCode::kInvalidArgument, HasSubstr("\"class\" must be a string")));
}

TEST(ScriptedProviderTest, CostFromPriceTable) {
  auto prices = std::make_shared<const PriceTable>(PriceTable::Defaults());
  ScriptedProvider p({ScriptedStep{"x", {}, 1'000'000, 0, OkStatus()}}, prices);
  CompletionRequest r = Ask("q");
  r.model = "gpt-4o";
  Result<Completion> c = p.Complete(r);
  MEND_ASSERT_OK(c);
  EXPECT_DOUBLE_EQ(c->cost_usd, 2.50);
  EXPECT_EQ(c->model, "gpt-4o");
}

TEST(ScriptedProviderTest, ErrorClassesFromScript) {
  auto p = ScriptedProvider::FromJson(R"({"steps": [
      {"error": {"code": "unauthenticated"}},
      {"error": {"code": "invalid_argument", "message": "too long"}},
      {"error": {"code": "resource_exhausted"}}]})");
  MEND_ASSERT_OK(p);
  Status auth = (*p)->Complete(Ask("a")).status();
  EXPECT_EQ(ClassOf(auth), ErrorClass::kAuth);
  EXPECT_EQ(ClassOf((*p)->Complete(Ask("b")).status()), ErrorClass::kPermanent);
  EXPECT_EQ(ClassOf((*p)->Complete(Ask("c")).status()), ErrorClass::kTransient);
}

TEST(ScriptedProviderTest, MalformedScriptsNameTheStep) {
  EXPECT_THAT(ScriptedProvider::FromJson("nope"), StatusIs(StatusCode::kInvalidArgument));
  EXPECT_THAT(ScriptedProvider::FromJson(R"({"a": 1})"), StatusIs(StatusCode::kInvalidArgument));
  EXPECT_THAT(ScriptedProvider::FromJson(R"([{"text": "ok"}, {"bogus": 1}])"),
              StatusIs(StatusCode::kInvalidArgument, HasSubstr("script step 1")));
  EXPECT_THAT(ScriptedProvider::FromJson(R"([{"text": 5}])"),
              StatusIs(StatusCode::kInvalidArgument, HasSubstr("\"text\" must be a string")));
  EXPECT_THAT(ScriptedProvider::FromJson(R"([{"error": {"code": "teapot"}}])"),
              StatusIs(StatusCode::kInvalidArgument, HasSubstr("teapot")));
  EXPECT_THAT(ScriptedProvider::FromJson(R"([{"tool_calls": [{"id": "x"}]}])"),
              StatusIs(StatusCode::kInvalidArgument, HasSubstr("\"name\"")));
  EXPECT_THAT(ScriptedProvider::FromJson(R"([{"text": "a", "input_tokens": -4}])"),
              StatusIs(StatusCode::kInvalidArgument, HasSubstr("input_tokens")));
}

TEST(ScriptedProviderTest, FromFileReadsThroughFileSystem) {
  MemoryFileSystem fs;
  MEND_ASSERT_OK(WriteFileAtomically(fs, "/s.json", R"([{"text": "from file"}])"));
  auto p = ScriptedProvider::FromFile(fs, "/s.json");
  MEND_ASSERT_OK(p);
  EXPECT_EQ((*p)->Complete(Ask("x"))->text, "from file");
  EXPECT_THAT(ScriptedProvider::FromFile(fs, "/missing.json"),
              StatusIs(StatusCode::kNotFound, HasSubstr("/missing.json")));
}

}  // namespace
}  // namespace mend::llm
