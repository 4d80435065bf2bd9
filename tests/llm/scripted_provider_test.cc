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
