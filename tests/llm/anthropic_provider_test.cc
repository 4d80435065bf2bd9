#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "tests/llm/llm_test_util.h"

namespace mend::llm {
namespace {

using ::mend::llm::test::ExpectNoSecret;
using ::mend::llm::test::HttpOptions;
using ::mend::llm::test::kSecretKey;
using ::mend::llm::test::MakeProvider;
using ::mend::llm::test::StartServer;
using ::mend::llm::test::UserAsks;
using ::mend::testing::FakeLlmServer;
using ::mend::testing::FakeResponse;
using ::mend::testing::StatusIs;
using ::testing::HasSubstr;
using Json = nlohmann::json;

class AnthropicProviderTest : public test::HttpProviderTest {
 protected:
  AnthropicProviderTest() : HttpProviderTest("anthropic", "claude-sonnet-4-20250514") {}
};

TEST_F(AnthropicProviderTest, TraceparentHeader) {
  server_->Enqueue(FakeResponse{});
  CompletionRequest request = UserAsks("hi");
  request.traceparent = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01";
  MEND_ASSERT_OK(provider_->Complete(request));
  EXPECT_EQ(server_->requests().back().Header("traceparent"), request.traceparent);
}

TEST_F(AnthropicProviderTest, TextCompletionWithUsageAndCost) {
  FakeResponse r;
  r.text = "Bonjour";
  r.input_tokens = 2000;
  r.output_tokens = 100;
  server_->Enqueue(r);
  Result<Completion> c = provider_->Complete(UserAsks("hi"));
  MEND_ASSERT_OK(c);
  EXPECT_EQ(c->text, "Bonjour");
  EXPECT_EQ(c->finish_reason, FinishReason::kStop);
  EXPECT_TRUE(c->usage_reported);
  EXPECT_EQ(c->usage.input_tokens, 2000);
  EXPECT_EQ(c->usage.output_tokens, 100);
  EXPECT_DOUBLE_EQ(c->cost_usd, (2000 * 3.0 + 100 * 15.0) / 1e6);
  EXPECT_EQ(provider_->name(), "anthropic");

  auto req = server_->requests().back();
  EXPECT_EQ(req.path, "/v1/messages");
  EXPECT_EQ(req.Header("x-api-key"), kSecretKey);
  EXPECT_EQ(req.Header("anthropic-version"), "2023-06-01");
  EXPECT_EQ(req.Header("authorization"), "");
  Json body = Json::parse(req.body);
  EXPECT_EQ(body["max_tokens"], 4096);
  EXPECT_EQ(body["model"], "claude-sonnet-4-20250514");
}

// provider_response_fuzz: "output_tokens": -9.23 made the cost negative.
TEST_F(AnthropicProviderTest, NegativeTokenCountsCountAsNoneAndTheCostStaysPositive) {
  FakeResponse r;
  r.raw_body =
      R"({"id":"msg_1","type":"message","role":"assistant","model":"claude-sonnet-4-20250514",
      "content":[{"type":"text","text":"ok"}],"stop_reason":"end_turn",
      "usage":{"input_tokens":93,"output_tokens":-9.2337,"cache_read_input_tokens":-5}})";
  server_->Enqueue(r);
  Result<Completion> c = provider_->Complete(UserAsks("hi"));
  MEND_ASSERT_OK(c);
  EXPECT_EQ(c->usage.input_tokens, 93);
  EXPECT_EQ(c->usage.output_tokens, 0);
  EXPECT_DOUBLE_EQ(c->cost_usd, 93 * 3.0 / 1e6);
}

TEST_F(AnthropicProviderTest, ToolUseAndToolResultShapes) {
  FakeResponse r;
  r.text = "Let me look.";
  r.tool_calls = {{"toolu_2", "read_file", R"({"path":"b.txt"})"}};
  server_->Enqueue(r);
  CompletionRequest req;
  req.messages = {Message::System("be brief"), Message::User("read both"),
                  Message::Assistant("", {{"toolu_a", "read_file", R"({"path":"a.txt"})"},
                                          {"toolu_b", "read_file", "{broken"}}),
                  Message::ToolResult("toolu_a", "read_file", "AAA"),
                  Message::ToolResult("toolu_b", "read_file", "bad arguments", true)};
  req.tools = {{"read_file", "Reads a file", R"({"type":"object","properties":{}})"}};
  req.max_tokens = 100;
  req.stop = {"STOP"};
  Result<Completion> c = provider_->Complete(req);
  MEND_ASSERT_OK(c);
  EXPECT_EQ(c->text, "Let me look.");
  ASSERT_EQ(c->tool_calls.size(), 1u);
  EXPECT_EQ(c->tool_calls[0].id, "toolu_2");
  EXPECT_EQ(Json::parse(c->tool_calls[0].arguments), Json({{"path", "b.txt"}}));
  EXPECT_EQ(c->finish_reason, FinishReason::kToolCalls);

  Json body = LastRequestBody();
  EXPECT_EQ(body["system"], "be brief");
  EXPECT_EQ(body["max_tokens"], 100);
  EXPECT_EQ(body["stop_sequences"], Json::array({"STOP"}));
  EXPECT_EQ(body["tools"][0], Json::parse(R"({"name":"read_file","description":"Reads a file",
      "input_schema":{"type":"object","properties":{}}})"));
  ASSERT_EQ(body["messages"].size(), 3u);
  EXPECT_EQ(body["messages"][0],
            Json::parse(R"({"role":"user","content":[{"type":"text","text":"read both"}]})"));
  const Json& assistant = body["messages"][1];
  EXPECT_EQ(assistant["role"], "assistant");
  ASSERT_EQ(assistant["content"].size(), 2u);
  EXPECT_EQ(assistant["content"][0], Json::parse(R"({"type":"tool_use","id":"toolu_a",
      "name":"read_file","input":{"path":"a.txt"}})"));
  EXPECT_EQ(assistant["content"][1]["input"], Json({{"_raw", "{broken"}}));
  // Both tool results merge into one user message.
  EXPECT_EQ(body["messages"][2], Json::parse(R"({"role":"user","content":[
      {"type":"tool_result","tool_use_id":"toolu_a","content":"AAA","is_error":false},
      {"type":"tool_result","tool_use_id":"toolu_b","content":"bad arguments","is_error":true}]})"));
}

TEST_F(AnthropicProviderTest, MaxTokensStopReason) {
  FakeResponse r;
  r.text = "cut";
  r.finish_reason = "max_tokens";
  server_->Enqueue(r);
  Result<Completion> c = provider_->Complete(UserAsks("hi"));
  MEND_ASSERT_OK(c);
  EXPECT_EQ(c->finish_reason, FinishReason::kLength);
}

TEST_F(AnthropicProviderTest, ErrorsByClass) {
  server_->RequireApiKey("another-key");
  // A rejected key is answered before the script is consumed, so nothing is enqueued here.
  Status auth = provider_->Complete(UserAsks("hi")).status();
  ExpectNoSecret(auth);
  EXPECT_THAT(auth, StatusIs(StatusCode::kUnauthenticated, HasSubstr("anthropic HTTP 401")));
  EXPECT_THAT(auth, StatusIs(StatusCode::kUnauthenticated,
                             HasSubstr("the API key was refused: check MEND_API_KEY (or "
                                       "ANTHROPIC_API_KEY)")));
  EXPECT_EQ(ClassOf(auth), ErrorClass::kAuth);
  server_->RequireApiKey(kSecretKey);

  FakeResponse overloaded;
  overloaded.status = 529;
  overloaded.error_message = "Overloaded";
  Status o = FailWith(overloaded);
  EXPECT_THAT(o, StatusIs(StatusCode::kUnavailable, "anthropic HTTP 529: Overloaded"));
  EXPECT_EQ(ClassOf(o), ErrorClass::kTransient);
  EXPECT_EQ(o.detail_code(), "http_529");

  FakeResponse too_long;
  too_long.status = 400;
  too_long.error_message = "prompt is too long: 300000 tokens > 200000 maximum";
  Status t = FailWith(too_long);
  EXPECT_THAT(t, StatusIs(StatusCode::kInvalidArgument));
  EXPECT_EQ(t.detail_code(), "context_length_exceeded");

  FakeResponse limited;
  limited.status = 429;
  limited.retry_after_seconds = 9;
  EXPECT_EQ(FailWith(limited).retry_after(), std::chrono::seconds(9));

  FakeResponse malformed;
  malformed.fault = FakeResponse::Fault::kMalformedJson;
  EXPECT_THAT(FailWith(malformed), StatusIs(StatusCode::kUnavailable));
  FakeResponse no_content;
  no_content.raw_body = R"({"id":"msg_1","type":"message"})";
  EXPECT_THAT(FailWith(no_content), StatusIs(StatusCode::kUnavailable, HasSubstr("no content")));
}

}  // namespace
}  // namespace mend::llm
