// Bad requests get a clear error in the API's shape and never reach the upstream; other paths
// answer 404 in the upstream's shape; models and embeddings pass through.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "tests/proxy/proxy_fixture.h"
#include "tests/support/raw_http.h"

namespace mend::proxy {
namespace {

using ::testing::HasSubstr;

TEST_F(ProxyTest, MalformedBodiesAre400sThatNeverReachTheUpstream) {
  Start();
  struct Case {
    std::string body;
    std::string says;
  };
  const Case cases[] = {
      {R"({"model":"m","messages":[)", "not valid JSON"},
      {"[1,2]", "not a JSON object"},
      {std::string("{\"messages\":[{\"role\":\"user\",\"content\":\"caf\xC3\"}]}"), "UTF-8"},
      {R"({"model":"m"})", "'messages' is a required property"},
      {R"({"messages":"hi"})", "'messages' must be an array"},
      {R"({"messages":[{"content":"no role"}]})", "messages[0]"},
      {std::string(300, '[') + std::string(300, ']'), "not valid JSON"},
  };
  for (const Case& c : cases) {
    Reply r = Post("/v1/chat/completions", c.body);
    EXPECT_EQ(r.status, 400) << c.body;
    EXPECT_EQ(r.Json()["error"]["type"], "invalid_request_error") << c.body;
    EXPECT_THAT(r.Json()["error"]["message"].get<std::string>(), HasSubstr(c.says)) << c.body;
  }
  EXPECT_EQ(upstream_->request_count(), 0u);
}

// The proxy.* connection limits reach the listener (docs/security.md, "Hostile networks"); a
// smuggled request never reaches the upstream.
TEST_F(ProxyTest, SlowOversizedAndAmbiguousHeadsAreRefusedBeforeTheUpstream) {
  listener_options_.header_timeout = std::chrono::milliseconds(300);
  listener_options_.max_header_bytes = 2048;
  Start();
  const int port = listener_->port();
  EXPECT_THAT(testing::RawExchange(port, "POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\n"),
              ::testing::StartsWith("HTTP/1.1 408"));
  EXPECT_THAT(testing::RawExchange(port, "GET /v1/models HTTP/1.1\r\nHost: x\r\nX-Big: " +
                                             std::string(4096, 'a') + "\r\n\r\n"),
              ::testing::StartsWith("HTTP/1.1 431"));
  const std::string chat = R"({"model":"gpt-4o","messages":[{"role":"user","content":"hi"}]})";
  const std::string smuggled = testing::RawExchange(
      port,
      "POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
      "Content-Length: " +
          std::to_string(chat.size()) + "\r\nTransfer-Encoding: chunked\r\n\r\n" + chat);
  EXPECT_THAT(smuggled, ::testing::StartsWith("HTTP/1.1 400"));
  EXPECT_EQ(upstream_->request_count(), 0u);

  ListenerOptions zero = listener_options_;
  zero.max_connections = 0;
  EXPECT_THAT(ProxyListener::Start(*service_, zero).status().message(),
              HasSubstr("proxy.max_connections"));
}

TEST_F(ProxyTest, MessagesErrorsComeInAnthropicsShape) {
  options_.upstream_kind = UpstreamKind::kAnthropic;
  Start();
  Reply r = Post("/v1/messages", R"({"model":"c","max_tokens":5})");
  EXPECT_EQ(r.status, 400);
  EXPECT_EQ(r.Json()["type"], "error");
  EXPECT_EQ(r.Json()["error"]["type"], "invalid_request_error");
  Reply missing = Post("/v1/nope", "{}");
  EXPECT_EQ(missing.status, 404);
  EXPECT_EQ(missing.Json()["type"], "error");
  EXPECT_EQ(missing.Json()["error"]["type"], "not_found_error");
}

TEST_F(ProxyTest, ABodyOverMaxBodyIs413) {
  options_.max_body = 2048;
  Start();
  const std::string big =
      R"({"messages":[{"role":"user","content":")" + std::string(4096, 'x') + R"("}]})";
  Reply r = Post("/v1/chat/completions", big);
  EXPECT_EQ(r.status, 413);
  EXPECT_EQ(upstream_->request_count(), 0u);
}

TEST_F(ProxyTest, UnknownPathsAre404InOpenAisShape) {
  Start();
  Reply r = Post("/v1/fine_tuning/jobs", "{}");
  EXPECT_EQ(r.status, 404);
  EXPECT_EQ(r.Json()["error"]["type"], "not_found_error");
  EXPECT_THAT(r.Json()["error"]["message"].get<std::string>(), HasSubstr("/v1/fine_tuning/jobs"));
  EXPECT_EQ(Get("/v1/files").status, 404);
  EXPECT_EQ(upstream_->request_count(), 0u);
}

TEST_F(ProxyTest, ModelsAndEmbeddingsPassThrough) {
  Start();
  Reply models = Get("/v1/models");
  ASSERT_EQ(models.status, 200);
  EXPECT_EQ(models.Json()["data"][0]["id"], "fake-model");
  Reply embeddings = Post("/v1/embeddings", R"({"model":"fake-embedding","input":["a","b"]})");
  ASSERT_EQ(embeddings.status, 200);
  EXPECT_EQ(embeddings.Json()["data"].size(), 2u);
  EXPECT_EQ(upstream_->requests().back().body, R"({"model":"fake-embedding","input":["a","b"]})");
  EXPECT_EQ(upstream_->requests().back().Header("Authorization"), "Bearer sk-upstream");
}

TEST_F(ProxyTest, RequestsAreCountedByRouteAndStatus) {
  Start();
  Post("/v1/chat/completions", R"({"messages":[{"role":"user","content":"hi"}]})");
  Post("/v1/chat/completions", "nope");
  EXPECT_EQ(Metric(R"(mend_proxy_requests_total{route="/v1/chat/completions",status="200"})"), 1);
  EXPECT_EQ(Metric(R"(mend_proxy_requests_total{route="/v1/chat/completions",status="400"})"), 1);
}

}  // namespace
}  // namespace mend::proxy
