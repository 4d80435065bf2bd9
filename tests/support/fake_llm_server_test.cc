#include "tests/support/fake_llm_server.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <httplib.h>

#include <nlohmann/json.hpp>

#include "tests/support/fake_llm_test_client.h"

namespace mend::testing {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using Json = nlohmann::json;

class FakeLlmServerTest : public FakeLlmServerFixture {};

TEST_F(FakeLlmServerTest, ChatCompletionHasOpenAiShape) {
  auto res = Post("/v1/chat/completions", R"({"model":"gpt-test","messages":[]})");
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 200);
  EXPECT_EQ(res->get_header_value("Content-Type"), "application/json");
  Json body = Json::parse(res->body);
  EXPECT_THAT(body["id"].get<std::string>(), ::testing::StartsWith("chatcmpl-"));
  EXPECT_EQ(body["object"], "chat.completion");
  EXPECT_TRUE(body["created"].is_number_integer());
  EXPECT_EQ(body["model"], "gpt-test");
  const Json& choice = body["choices"][0];
  EXPECT_EQ(choice["index"], 0);
  EXPECT_EQ(choice["message"]["role"], "assistant");
  EXPECT_EQ(choice["message"]["content"], "ok");
  EXPECT_FALSE(choice["message"].contains("tool_calls"));
  EXPECT_EQ(choice["finish_reason"], "stop");
  EXPECT_EQ(body["usage"],
            Json({{"prompt_tokens", 10}, {"completion_tokens", 5}, {"total_tokens", 15}}));
}

TEST_F(FakeLlmServerTest, ChatCompletionRendersToolCalls) {
  FakeResponse r;
  r.tool_calls = {{"c1", "read_file", R"({"path":"a"})"}, {"c2", "ls", "{}"}};
  r.input_tokens = 3;
  r.output_tokens = 4;
  server_->Enqueue(r);
  Json body = PostJson("/v1/chat/completions", R"({"model":"m"})");
  const Json& message = body["choices"][0]["message"];
  EXPECT_TRUE(message["content"].is_null());
  ASSERT_EQ(message["tool_calls"].size(), 2u);
  EXPECT_EQ(message["tool_calls"][0],
            Json({{"id", "c1"},
                  {"type", "function"},
                  {"function", {{"name", "read_file"}, {"arguments", R"({"path":"a"})"}}}}));
  EXPECT_EQ(message["tool_calls"][1]["function"]["name"], "ls");
  EXPECT_EQ(body["choices"][0]["finish_reason"], "tool_calls");
  EXPECT_EQ(body["usage"]["total_tokens"], 7);
}

TEST_F(FakeLlmServerTest, MessagesHaveAnthropicShape) {
  FakeResponse r;
  r.text = "let me look";
  r.tool_calls = {{"toolu_1", "read_file", R"({"path":"a"})"}};
  server_->Enqueue(r);
  Json body = PostJson("/v1/messages", R"({"model":"claude-test","max_tokens":10})");
  EXPECT_THAT(body["id"].get<std::string>(), ::testing::StartsWith("msg_"));
  EXPECT_EQ(body["type"], "message");
  EXPECT_EQ(body["role"], "assistant");
  EXPECT_EQ(body["model"], "claude-test");
  ASSERT_EQ(body["content"].size(), 2u);
  EXPECT_EQ(body["content"][0], Json({{"type", "text"}, {"text", "let me look"}}));
  EXPECT_EQ(body["content"][1], Json({{"type", "tool_use"},
                                      {"id", "toolu_1"},
                                      {"name", "read_file"},
                                      {"input", {{"path", "a"}}}}));
  EXPECT_EQ(body["stop_reason"], "tool_use");
  EXPECT_EQ(body["usage"], Json({{"input_tokens", 10}, {"output_tokens", 5}}));
}

TEST_F(FakeLlmServerTest, FinishReasonIsTranslatedPerApi) {
  FakeResponse r;
  r.finish_reason = "length";
  server_->Enqueue(r);
  server_->Enqueue(r);
  EXPECT_EQ(PostJson("/v1/messages", "{}")["stop_reason"], "max_tokens");
  EXPECT_EQ(PostJson("/v1/chat/completions", "{}")["choices"][0]["finish_reason"], "length");
}

TEST_F(FakeLlmServerTest, EmbeddingsAreDerivedDeterministically) {
  Json one = PostJson("/v1/embeddings", R"({"model":"e","input":"alpha"})");
  Json many = PostJson("/v1/embeddings", R"({"model":"e","input":["alpha","beta"]})");
  EXPECT_EQ(one["object"], "list");
  EXPECT_EQ(one["model"], "e");
  ASSERT_EQ(one["data"].size(), 1u);
  EXPECT_EQ(one["data"][0]["object"], "embedding");
  EXPECT_EQ(one["data"][0]["index"], 0);
  EXPECT_EQ(one["data"][0]["embedding"].size(), 8u);
  ASSERT_EQ(many["data"].size(), 2u);
  EXPECT_EQ(many["data"][1]["index"], 1);
  EXPECT_EQ(many["data"][0]["embedding"], one["data"][0]["embedding"]);
  EXPECT_NE(many["data"][1]["embedding"], one["data"][0]["embedding"]);
  EXPECT_EQ(one["usage"], Json({{"prompt_tokens", 10}, {"total_tokens", 10}}));
}

TEST_F(FakeLlmServerTest, EmbeddingsUseScriptedVectors) {
  FakeResponse r;
  r.embeddings = {{1.0f, 0.0f}, {0.0f, 1.0f}};
  server_->Enqueue(r);
  Json body = PostJson("/v1/embeddings", R"({"input":["a","b"]})");
  EXPECT_EQ(body["data"][0]["embedding"], Json({1.0, 0.0}));
  EXPECT_EQ(body["data"][1]["embedding"], Json({0.0, 1.0}));
}

TEST_F(FakeLlmServerTest, ModelsAreListedWithoutUsingTheScript) {
  FakeResponse r;
  r.text = "scripted";
  server_->Enqueue(r);
  auto res = Get("/v1/models");
  ASSERT_TRUE(res);
  Json models = Json::parse(res->body);
  EXPECT_EQ(models["object"], "list");
  ASSERT_FALSE(models["data"].empty());
  EXPECT_EQ(models["data"][0]["object"], "model");
  EXPECT_EQ(PostJson("/v1/chat/completions", "{}")["choices"][0]["message"]["content"], "scripted");
}

TEST_F(FakeLlmServerTest, ScriptIsAnsweredInOrderThenTheDefault) {
  FakeResponse a, b, fallback;
  a.text = "a";
  b.text = "b";
  fallback.text = "default";
  server_->Enqueue(a);
  server_->Enqueue(b);
  server_->SetDefault(fallback);
  std::vector<std::string> texts;
  for (int i = 0; i < 4; ++i) {
    texts.push_back(PostJson("/v1/chat/completions", "{}")["choices"][0]["message"]["content"]);
  }
  EXPECT_THAT(texts, ElementsAre("a", "b", "default", "default"));
}

TEST_F(FakeLlmServerTest, UsageCanBeOmitted) {
  FakeResponse r;
  r.omit_usage = true;
  server_->Enqueue(r);
  server_->Enqueue(r);
  EXPECT_FALSE(PostJson("/v1/chat/completions", "{}").contains("usage"));
  EXPECT_FALSE(PostJson("/v1/messages", "{}").contains("usage"));
}

TEST_F(FakeLlmServerTest, RawBodyIsSentVerbatim) {
  FakeResponse r;
  r.status = 418;
  r.raw_body = R"({"weird":true})";
  server_->Enqueue(r);
  auto res = Post("/v1/chat/completions", "{}");
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 418);
  EXPECT_EQ(res->body, R"({"weird":true})");
}

TEST_F(FakeLlmServerTest, MalformedRequestIsRejectedInTheEndpointShape) {
  auto chat = Post("/v1/chat/completions", "{not json");
  auto messages = Post("/v1/messages", "{not json");
  ASSERT_TRUE(chat && messages);
  EXPECT_EQ(chat->status, 400);
  EXPECT_EQ(Json::parse(chat->body)["error"]["type"], "invalid_request_error");
  EXPECT_EQ(messages->status, 400);
  EXPECT_EQ(Json::parse(messages->body)["error"]["type"], "invalid_request_error");
}

TEST_F(FakeLlmServerTest, UnknownPathIsNotFound) {
  auto res = Post("/v1/completions", "{}");
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 404);
  EXPECT_TRUE(Json::parse(res->body)["error"].contains("message"));
}

TEST_F(FakeLlmServerTest, ApiKeyIsRequiredWhenSet) {
  server_->RequireApiKey("sk-test");
  auto none = Post("/v1/chat/completions", "{}");
  ASSERT_TRUE(none);
  EXPECT_EQ(none->status, 401);
  EXPECT_EQ(Json::parse(none->body)["error"]["code"], "invalid_api_key");
  auto wrong = Post("/v1/messages", "{}", {{"x-api-key", "sk-other"}});
  ASSERT_TRUE(wrong);
  EXPECT_EQ(wrong->status, 401);
  EXPECT_EQ(Json::parse(wrong->body)["error"]["type"], "authentication_error");
  EXPECT_EQ(PostStatus("/v1/chat/completions", "{}", {{"Authorization", "Bearer sk-test"}}), 200);
  EXPECT_EQ(PostStatus("/v1/messages", "{}", {{"x-api-key", "sk-test"}}), 200);
  auto models = Get("/v1/models");
  ASSERT_TRUE(models);
  EXPECT_EQ(models->status, 401);
}

TEST_F(FakeLlmServerTest, RequestsAreRecordedInOrder) {
  std::vector<std::string> observed;
  std::mutex mu;
  server_->SetRequestObserver([&](const RecordedRequest& r) {
    std::lock_guard<std::mutex> lock(mu);
    observed.push_back(r.path);
  });
  ASSERT_TRUE(Post("/v1/chat/completions", R"({"a":1})", {{"X-Trace", "t1"}}));
  ASSERT_TRUE(Post("/v1/messages", R"({"b":2})"));
  std::vector<RecordedRequest> requests = server_->requests();
  ASSERT_EQ(requests.size(), 2u);
  EXPECT_EQ(server_->request_count(), 2u);
  EXPECT_EQ(requests[0].method, "POST");
  EXPECT_EQ(requests[0].path, "/v1/chat/completions");
  EXPECT_EQ(requests[0].body, R"({"a":1})");
  EXPECT_EQ(requests[0].Header("x-trace"), "t1");
  EXPECT_EQ(requests[0].Header("content-type"), "application/json");
  EXPECT_EQ(requests[0].Header("REMOTE_PORT"), "");
  EXPECT_GT(requests[0].connection_id, 0);
  EXPECT_EQ(requests[1].path, "/v1/messages");
  EXPECT_THAT(observed, ElementsAre("/v1/chat/completions", "/v1/messages"));
  server_->ClearRequests();
  EXPECT_EQ(server_->request_count(), 0u);
}

TEST(RecordedRequestTest, JsonLineRedactsSecrets) {
  RecordedRequest r;
  r.method = "POST";
  r.path = "/v1/messages";
  r.body = "{}";
  r.connection_id = 3;
  r.headers = {{"Authorization", "Bearer sk-secret"}, {"x-api-key", "sk-secret"}, {"X-A", "b"}};
  std::string line = RecordedRequestToJsonLine(r);
  EXPECT_THAT(line, ::testing::Not(HasSubstr("sk-secret")));
  EXPECT_THAT(line, ::testing::Not(HasSubstr("\n")));
  Json json = Json::parse(line);
  EXPECT_EQ(json["path"], "/v1/messages");
  EXPECT_EQ(json["connection_id"], 3);
  EXPECT_EQ(json["headers"]["x-a"], "b");
  EXPECT_EQ(json["headers"]["authorization"], "<redacted>");
}

}  // namespace
}  // namespace mend::testing
