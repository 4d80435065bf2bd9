#include <gtest/gtest.h>

#include <atomic>
#include <nlohmann/json.hpp>
#include <thread>

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

class OpenAiProviderTest : public test::HttpProviderTest {
 protected:
  OpenAiProviderTest() : HttpProviderTest("openai", "gpt-4o-mini") {}
};

TEST_F(OpenAiProviderTest, TextCompletionWithUsageAndCost) {
  FakeResponse r;
  r.text = "Hello there";
  r.input_tokens = 1000;
  r.output_tokens = 500;
  server_->Enqueue(r);
  CompletionRequest req = UserAsks("hi");
  req.max_tokens = 77;
  req.temperature = 0.25;
  req.stop = {"END"};
  Result<Completion> c = provider_->Complete(req);
  MEND_ASSERT_OK(c);
  EXPECT_EQ(c->text, "Hello there");
  EXPECT_EQ(c->finish_reason, FinishReason::kStop);
  EXPECT_TRUE(c->usage_reported);
  EXPECT_EQ(c->usage.input_tokens, 1000);
  EXPECT_EQ(c->usage.output_tokens, 500);
  EXPECT_DOUBLE_EQ(c->cost_usd, (1000 * 0.15 + 500 * 0.60) / 1e6);
  EXPECT_FALSE(c->id.empty());
  EXPECT_EQ(provider_->name(), "openai");

  auto requests = server_->requests();
  ASSERT_EQ(requests.size(), 1u);
  EXPECT_EQ(requests[0].path, "/v1/chat/completions");
  EXPECT_EQ(requests[0].Header("authorization"), std::string("Bearer ") + kSecretKey);
  Json body = Json::parse(requests[0].body);
  EXPECT_EQ(body["model"], "gpt-4o-mini");
  EXPECT_EQ(body["messages"][0], Json({{"role", "user"}, {"content", "hi"}}));
  EXPECT_EQ(body["max_tokens"], 77);
  EXPECT_EQ(body["temperature"], 0.25);
  EXPECT_EQ(body["stop"], Json::array({"END"}));
}

TEST_F(OpenAiProviderTest, NegativeTokenCountsCountAsNoneAndTheCostStaysPositive) {
  FakeResponse r;
  r.raw_body = R"({"id":"c1","object":"chat.completion","model":"gpt-4o-mini",
      "choices":[{"index":0,"message":{"role":"assistant","content":"ok"},"finish_reason":"stop"}],
      "usage":{"prompt_tokens":-3,"completion_tokens":7}})";
  server_->Enqueue(r);
  Result<Completion> c = provider_->Complete(UserAsks("hi"));
  MEND_ASSERT_OK(c);
  EXPECT_EQ(c->usage.input_tokens, 0);
  EXPECT_EQ(c->usage.output_tokens, 7);
  EXPECT_GE(c->cost_usd, 0.0);
}

TEST_F(OpenAiProviderTest, ToolCallsInBothDirections) {
  FakeResponse r;
  r.tool_calls = {{"call_9", "read_file", R"({"path":"a.txt"})"}};
  server_->Enqueue(r);
  CompletionRequest req;
  req.messages = {Message::System("be brief"), Message::User("read a.txt"),
                  Message::Assistant("", {{"call_1", "list_dir", R"({"dir":"."})"}}),
                  Message::ToolResult("call_1", "list_dir", "a.txt\nb.txt")};
  req.tools = {{"read_file", "Reads a file",
                R"({"type":"object","properties":{"path":{"type":"string"}}})"}};
  Result<Completion> c = provider_->Complete(req);
  MEND_ASSERT_OK(c);
  ASSERT_EQ(c->tool_calls.size(), 1u);
  EXPECT_EQ(c->tool_calls[0].id, "call_9");
  EXPECT_EQ(c->tool_calls[0].name, "read_file");
  EXPECT_EQ(Json::parse(c->tool_calls[0].arguments), Json({{"path", "a.txt"}}));
  EXPECT_EQ(c->finish_reason, FinishReason::kToolCalls);

  Json body = LastRequestBody();
  ASSERT_EQ(body["messages"].size(), 4u);
  EXPECT_EQ(body["messages"][0], Json({{"role", "system"}, {"content", "be brief"}}));
  const Json& assistant = body["messages"][2];
  EXPECT_EQ(assistant["role"], "assistant");
  EXPECT_TRUE(assistant["content"].is_null());
  EXPECT_EQ(assistant["tool_calls"][0], Json::parse(R"({"id":"call_1","type":"function",
                            "function":{"name":"list_dir","arguments":"{\"dir\":\".\"}"}})"));
  EXPECT_EQ(body["messages"][3],
            Json({{"role", "tool"}, {"tool_call_id", "call_1"}, {"content", "a.txt\nb.txt"}}));
  EXPECT_EQ(body["tools"][0], Json::parse(R"({"type":"function","function":{"name":"read_file",
      "description":"Reads a file",
      "parameters":{"type":"object","properties":{"path":{"type":"string"}}}}})"));
}

TEST_F(OpenAiProviderTest, InvalidToolSchemaIsRejectedBeforeSending) {
  CompletionRequest req = UserAsks("x");
  req.tools = {{"t", "d", "{not json"}};
  EXPECT_THAT(provider_->Complete(req), StatusIs(StatusCode::kInvalidArgument, HasSubstr("\"t\"")));
  EXPECT_EQ(server_->request_count(), 0u);
}

TEST_F(OpenAiProviderTest, MissingUsageIsNotAnError) {
  FakeResponse r;
  r.text = "ok";
  r.omit_usage = true;
  server_->Enqueue(r);
  Result<Completion> c = provider_->Complete(UserAsks("hi"));
  MEND_ASSERT_OK(c);
  EXPECT_FALSE(c->usage_reported);
  EXPECT_EQ(c->cost_usd, 0.0);
}

TEST_F(OpenAiProviderTest, UnknownFieldsAreIgnored) {
  FakeResponse r;
  r.raw_body = R"({"id":"x1","model":"gpt-4o","system_fingerprint":"fp","extra":{"a":[1,2]},
    "choices":[{"index":0,"logprobs":null,"new_field":true,"finish_reason":"length",
      "message":{"role":"assistant","content":"partial","refusal":null,"annotations":[]}}],
    "usage":{"prompt_tokens":3,"completion_tokens":4,"total_tokens":7,
      "prompt_tokens_details":{"cached_tokens":0}}})";
  server_->Enqueue(r);
  Result<Completion> c = provider_->Complete(UserAsks("hi"));
  MEND_ASSERT_OK(c);
  EXPECT_EQ(c->text, "partial");
  EXPECT_EQ(c->finish_reason, FinishReason::kLength);
  EXPECT_EQ(c->model, "gpt-4o");
  EXPECT_EQ(c->id, "x1");
  EXPECT_EQ(c->usage.output_tokens, 4);
}

TEST_F(OpenAiProviderTest, NonUtf8TextIsSanitized) {
  FakeResponse r;
  r.text = "menu: ";
  r.fault = FakeResponse::Fault::kNonUtf8;
  server_->Enqueue(r);
  Result<Completion> c = provider_->Complete(UserAsks("hi"));
  MEND_ASSERT_OK(c);
  EXPECT_THAT(c->text, HasSubstr("menu: caf\xEF\xBF\xBD"));
}

TEST_F(OpenAiProviderTest, BaseUrlWithV1SuffixIsAccepted) {
  auto options = HttpOptions("openai", *server_, "m");
  options.base_url = server_->base_url() + "/v1/";
  auto p = MakeProvider(options);
  ASSERT_NE(p, nullptr);
  MEND_ASSERT_OK(p->Complete(UserAsks("hi")));
  EXPECT_EQ(server_->requests().back().path, "/v1/chat/completions");
}

TEST_F(OpenAiProviderTest, NoAuthorizationHeaderWithoutKey) {
  server_->RequireApiKey("");
  auto options = HttpOptions("openai", *server_, "llama3");
  options.api_key.clear();
  auto p = MakeProvider(options);
  MEND_ASSERT_OK(p->Complete(UserAsks("hi")));
  EXPECT_EQ(server_->requests().back().Header("Authorization"), "");
}

TEST_F(OpenAiProviderTest, TraceparentIsSentOnlyWhenSet) {
  auto p = MakeProvider(HttpOptions("openai", *server_, "m"));
  ASSERT_NE(p, nullptr);
  MEND_ASSERT_OK(p->Complete(UserAsks("hi")));
  EXPECT_EQ(server_->requests().back().Header("traceparent"), "");
  CompletionRequest request = UserAsks("hi");
  request.traceparent = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01";
  MEND_ASSERT_OK(p->Complete(request));
  EXPECT_EQ(server_->requests().back().Header("traceparent"), request.traceparent);
}

TEST_F(OpenAiProviderTest, ConcurrentCompletions) {
  std::vector<std::thread> threads;
  std::atomic<int> ok{0};
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&] {
      for (int i = 0; i < 5; ++i) ok += provider_->Complete(UserAsks("hi")).ok() ? 1 : 0;
    });
  }
  for (auto& t : threads) t.join();
  EXPECT_EQ(ok.load(), 20);
  EXPECT_EQ(server_->request_count(), 20u);
}

}  // namespace
}  // namespace mend::llm

namespace mend::llm {
namespace {

class OpenAiCancelTest : public test::HttpProviderTest {
 protected:
  OpenAiCancelTest() : HttpProviderTest("openai", "gpt-4o-mini") {}
};

TEST_F(OpenAiCancelTest, RequestCancelledWhileWaitingIsAbandoned) {
  FakeResponse slow;
  slow.text = "too late";
  slow.latency = std::chrono::seconds(30);
  server_->Enqueue(slow);
  std::atomic<bool> cancel{false};
  // The server holds its answer; the caller gives up as soon as the request has arrived.
  server_->SetRequestObserver([&cancel](const testing::RecordedRequest&) { cancel.store(true); });
  CompletionRequest req = UserAsks("hi");
  req.cancel = &cancel;
  Result<Completion> c = provider_->Complete(req);
  EXPECT_THAT(c, StatusIs(StatusCode::kCancelled, HasSubstr("cancelled")));
  EXPECT_EQ(server_->request_count(), 1u);
}

TEST_F(OpenAiCancelTest, RequestCancelledBeforeItStartsIsNotSent) {
  std::atomic<bool> cancel{true};
  CompletionRequest req = UserAsks("hi");
  req.cancel = &cancel;
  EXPECT_THAT(provider_->Complete(req), StatusIs(StatusCode::kCancelled));
  EXPECT_EQ(server_->request_count(), 0u);
}

}  // namespace
}  // namespace mend::llm
