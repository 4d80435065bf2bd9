#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <httplib.h>

#include <nlohmann/json.hpp>

#include "tests/support/fake_llm_server.h"
#include "tests/support/fake_llm_test_client.h"

namespace mend::testing {
namespace {

using ::testing::HasSubstr;
using Json = nlohmann::json;

struct StatusCase {
  int status;
  const char* openai_type;
  const char* anthropic_type;
};

class FakeLlmStatusTest : public FakeLlmServerFixture,
                          public ::testing::WithParamInterface<StatusCase> {};

TEST_P(FakeLlmStatusTest, ChatErrorHasOpenAiShape) {
  FakeResponse r;
  r.status = GetParam().status;
  r.error_message = "scripted failure";
  server_->Enqueue(r);
  auto res = Post("/v1/chat/completions", "{}");
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, GetParam().status);
  EXPECT_FALSE(res->has_header("Retry-After"));
  Json error = Json::parse(res->body)["error"];
  EXPECT_EQ(error["message"], "scripted failure");
  EXPECT_EQ(error["type"], GetParam().openai_type);
  EXPECT_TRUE(error["param"].is_null());
  EXPECT_TRUE(error.contains("code"));
}

TEST_P(FakeLlmStatusTest, MessagesErrorHasAnthropicShape) {
  FakeResponse r;
  r.status = GetParam().status;
  r.error_message = "scripted failure";
  server_->Enqueue(r);
  auto res = Post("/v1/messages", "{}");
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, GetParam().status);
  Json body = Json::parse(res->body);
  EXPECT_EQ(body["type"], "error");
  EXPECT_EQ(body["error"]["type"], GetParam().anthropic_type);
  EXPECT_EQ(body["error"]["message"], "scripted failure");
}

TEST_P(FakeLlmStatusTest, EmbeddingsErrorHasOpenAiShape) {
  FakeResponse r;
  r.status = GetParam().status;
  server_->Enqueue(r);
  auto res = Post("/v1/embeddings", R"({"input":"x"})");
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, GetParam().status);
  EXPECT_EQ(Json::parse(res->body)["error"]["type"], GetParam().openai_type);
}

INSTANTIATE_TEST_SUITE_P(
    AllStatuses, FakeLlmStatusTest,
    ::testing::Values(StatusCase{400, "invalid_request_error", "invalid_request_error"},
                      StatusCase{401, "invalid_request_error", "authentication_error"},
                      StatusCase{403, "invalid_request_error", "permission_error"},
                      StatusCase{404, "invalid_request_error", "not_found_error"},
                      StatusCase{413, "invalid_request_error", "request_too_large"},
                      StatusCase{429, "requests", "rate_limit_error"},
                      StatusCase{500, "server_error", "api_error"},
                      StatusCase{502, "server_error", "api_error"},
                      StatusCase{503, "server_error", "api_error"},
                      StatusCase{529, "server_error", "overloaded_error"}),
    [](const ::testing::TestParamInfo<StatusCase>& info) {
      return "Http" + std::to_string(info.param.status);
    });

class FakeLlmErrorTest : public FakeLlmServerFixture {};

TEST_F(FakeLlmErrorTest, RateLimitCarriesRetryAfter) {
  FakeResponse r;
  r.status = 429;
  r.retry_after_seconds = 2;
  server_->Enqueue(r);
  auto res = Post("/v1/chat/completions", "{}");
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 429);
  EXPECT_EQ(res->get_header_value("Retry-After"), "2");
  EXPECT_EQ(Json::parse(res->body)["error"]["code"], "rate_limit_exceeded");
}

TEST_F(FakeLlmErrorTest, ErrorTypeOverridesTheDefault) {
  FakeResponse r;
  r.status = 400;
  r.error_type = "context_length_exceeded";
  server_->Enqueue(r);
  r.status = 529;
  r.error_type = "overloaded_error";
  server_->Enqueue(r);
  auto chat = Post("/v1/chat/completions", "{}");
  auto messages = Post("/v1/messages", "{}");
  ASSERT_TRUE(chat && messages);
  Json chat_error = Json::parse(chat->body)["error"];
  EXPECT_EQ(chat_error["code"], "context_length_exceeded");
  EXPECT_EQ(chat_error["type"], "invalid_request_error");
  EXPECT_EQ(Json::parse(messages->body)["error"]["type"], "overloaded_error");
}

FakeResponse WithFault(FakeResponse::Fault fault) {
  FakeResponse r;
  r.fault = fault;
  return r;
}

TEST_F(FakeLlmErrorTest, MalformedJsonIsNotParseable) {
  server_->Enqueue(WithFault(FakeResponse::Fault::kMalformedJson));
  auto res = Post("/v1/chat/completions", "{}");
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 200);
  EXPECT_FALSE(res->body.empty());
  EXPECT_TRUE(Json::parse(res->body, nullptr, false).is_discarded());
}

TEST_F(FakeLlmErrorTest, TruncatedBodyFailsTheRead) {
  server_->Enqueue(WithFault(FakeResponse::Fault::kTruncatedBody));
  auto res = Post("/v1/chat/completions", "{}");
  EXPECT_FALSE(res);
  EXPECT_EQ(res.error(), httplib::Error::Read);
  EXPECT_EQ(PostStatus("/v1/chat/completions", "{}"), 200);
}

TEST_F(FakeLlmErrorTest, TruncatedBodySendsHeadersAndHalfTheBody) {
  server_->Enqueue(WithFault(FakeResponse::Fault::kTruncatedBody));
  httplib::Client client(server_->base_url());
  std::string received;
  int status = 0;
  httplib::Request req;
  req.method = "POST";
  req.path = "/v1/chat/completions";
  req.body = "{}";
  req.set_header("Content-Type", "application/json");
  req.response_handler = [&](const httplib::Response& r) {
    status = r.status;
    return true;
  };
  req.content_receiver = [&](const char* data, size_t n, uint64_t, uint64_t) {
    received.append(data, n);
    return true;
  };
  auto truncated = client.send(req);
  EXPECT_FALSE(truncated);
  EXPECT_EQ(status, 200);
  EXPECT_THAT(received, ::testing::StartsWith(R"({"choices":)"));
  EXPECT_TRUE(Json::parse(received, nullptr, false).is_discarded());
}

// The event names (empty for chat completion chunks).
std::vector<std::string> Names(const std::vector<SseEvent>& events) {
  std::vector<std::string> names;
  for (const SseEvent& event : events) names.push_back(event.name);
  return names;
}

TEST_F(FakeLlmErrorTest, StreamCutSendsTheFirstHalfOfTheEventsThenEndsTheTransfer) {
  FakeResponse r;
  r.text = "a stream that will not reach its end";
  r.tool_calls = {{"c1", "ls", "{}"}};
  FakeResponse cut = r;
  cut.fault = FakeResponse::Fault::kStreamCut;
  for (const char* path : {"/v1/chat/completions", "/v1/messages", "/v1/responses"}) {
    server_->Enqueue(r);
    server_->Enqueue(cut);
    const std::string request = R"({"model":"m","stream":true})";
    Received whole = PostAndReceive(server_->base_url(), path, request);
    ASSERT_EQ(whole.error, httplib::Error::Success) << path;
    std::vector<SseEvent> all = ParseSse(whole.body);
    ASSERT_GE(all.size(), 4u) << path;

    Received part = PostAndReceive(server_->base_url(), path, request);
    EXPECT_EQ(part.status, 200) << path;
    // The chunked body ends without its terminator: the client sees a read error.
    EXPECT_EQ(part.error, httplib::Error::Read) << path;
    EXPECT_TRUE(part.body.ends_with("\n\n")) << path;
    std::vector<SseEvent> received = ParseSse(part.body);
    EXPECT_EQ(received.size(), all.size() / 2) << path;
    all.resize(all.size() / 2);
    EXPECT_EQ(Names(received), Names(all)) << path;
  }
  EXPECT_EQ(PostStatus("/v1/chat/completions", "{}"), 200);
}

TEST_F(FakeLlmErrorTest, StreamCutWithoutStreamingIsATruncatedBody) {
  server_->Enqueue(WithFault(FakeResponse::Fault::kStreamCut));
  Received part = PostAndReceive(server_->base_url(), "/v1/chat/completions", "{}");
  EXPECT_EQ(part.status, 200);
  EXPECT_EQ(part.error, httplib::Error::Read);
  EXPECT_THAT(part.body, ::testing::StartsWith(R"({"choices":)"));
  EXPECT_TRUE(Json::parse(part.body, nullptr, false).is_discarded());
}

TEST_F(FakeLlmErrorTest, HtmlErrorPageIsAProxyPage) {
  server_->Enqueue(WithFault(FakeResponse::Fault::kHtmlErrorPage));
  FakeResponse unavailable = WithFault(FakeResponse::Fault::kHtmlErrorPage);
  unavailable.status = 503;
  server_->Enqueue(unavailable);
  auto bad_gateway = Post("/v1/messages", "{}");
  auto service_unavailable = Post("/v1/chat/completions", "{}");
  ASSERT_TRUE(bad_gateway && service_unavailable);
  EXPECT_EQ(bad_gateway->status, 502);
  EXPECT_EQ(bad_gateway->get_header_value("Content-Type"), "text/html");
  EXPECT_THAT(bad_gateway->body, HasSubstr("<h1>502 Bad Gateway</h1>"));
  EXPECT_EQ(service_unavailable->status, 503);
  EXPECT_THAT(service_unavailable->body, HasSubstr("503 Service Unavailable"));
}

TEST_F(FakeLlmErrorTest, DroppedConnectionGetsNoResponse) {
  server_->Enqueue(WithFault(FakeResponse::Fault::kDropConnection));
  auto res = Post("/v1/chat/completions", "{}");
  EXPECT_FALSE(res);
  EXPECT_EQ(res.error(), httplib::Error::Read);
  EXPECT_EQ(server_->request_count(), 1u);
  EXPECT_EQ(PostStatus("/v1/chat/completions", "{}"), 200);
}

TEST_F(FakeLlmErrorTest, EmptyBodyIsEmpty) {
  server_->Enqueue(WithFault(FakeResponse::Fault::kEmptyBody));
  auto res = Post("/v1/chat/completions", "{}");
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 200);
  EXPECT_EQ(res->body, "");
}

TEST_F(FakeLlmErrorTest, NonUtf8BytesAreInsideTheText) {
  FakeResponse r = WithFault(FakeResponse::Fault::kNonUtf8);
  r.text = "hello ";
  server_->Enqueue(r);
  auto res = Post("/v1/chat/completions", "{}");
  ASSERT_TRUE(res);
  EXPECT_THAT(res->body, HasSubstr("\"hello caf\xC3 \xFF\xFE\""));
  EXPECT_TRUE(Json::parse(res->body, nullptr, false).is_discarded());
}

TEST_F(FakeLlmErrorTest, OversizedBodyHasTheRequestedSizeAndIsValid) {
  FakeResponse r = WithFault(FakeResponse::Fault::kOversizedBody);
  r.oversize_bytes = 256 << 10;
  server_->Enqueue(r);
  auto res = Post("/v1/messages", "{}");
  ASSERT_TRUE(res);
  EXPECT_EQ(res->body.size(), size_t{256} << 10);
  EXPECT_EQ(Json::parse(res->body)["type"], "message");
}

}  // namespace
}  // namespace mend::testing
