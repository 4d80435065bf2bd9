// The server's own behaviour: health, errors, limits and who may call it.
#include "mend/server/server.h"

#include <gmock/gmock.h>

#include "tests/server/server_fixture.h"
#include "tests/support/raw_http.h"

namespace mend::server {
namespace {

using ::testing::HasSubstr;

TEST(ListenTest, ParsesHostAndPort) {
  ServerOptions options;
  MEND_ASSERT_OK(ParseListen("0.0.0.0:8080", options));
  EXPECT_EQ(options.host, "0.0.0.0");
  EXPECT_EQ(options.port, 8080);
  MEND_ASSERT_OK(ParseListen("[::1]:9", options));
  EXPECT_EQ(options.host, "::1");
  MEND_ASSERT_OK(ParseListen(":7", options));
  EXPECT_EQ(options.host, "127.0.0.1");
  EXPECT_FALSE(ParseListen("localhost", options).ok());
  EXPECT_FALSE(ParseListen("h:70000", options).ok());
  EXPECT_FALSE(ParseListen("h:x", options).ok());
}

TEST(ListenTest, KnowsLoopback) {
  EXPECT_TRUE(IsLoopbackHost("127.0.0.1"));
  EXPECT_TRUE(IsLoopbackHost("127.3.2.1"));
  EXPECT_TRUE(IsLoopbackHost("localhost"));
  EXPECT_TRUE(IsLoopbackHost("::1"));
  EXPECT_TRUE(IsLoopbackHost("[::1]"));
  EXPECT_FALSE(IsLoopbackHost("0.0.0.0"));
  EXPECT_FALSE(IsLoopbackHost("10.0.0.1"));
  EXPECT_FALSE(IsLoopbackHost("evil.example"));
}

TEST_F(ServerTest, RefusesANonLoopbackAddressWithoutAToken) {
  StartServer();
  ServerOptions options;
  options.host = "0.0.0.0";
  auto created = Server::Create(*runtime_, options);
  ASSERT_FALSE(created.ok());
  EXPECT_EQ(created.status().code(), StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(created.status().message()), HasSubstr("serve.token"));
  options.token = "s3cret";
  EXPECT_TRUE(Server::Create(*runtime_, options).ok());
}

TEST_F(ServerTest, HealthAndReadiness) {
  StartServer();
  Reply health = Get("/healthz");
  EXPECT_EQ(health.status, 200);
  EXPECT_EQ(health.body["status"], "ok");
  Reply ready = Get("/readyz");
  EXPECT_EQ(ready.status, 200) << ready.text;
  EXPECT_EQ(ready.body["status"], "ready");
  EXPECT_EQ(ready.body["checks"]["store"], "ok");
  EXPECT_EQ(ready.body["checks"]["memory"], "ok");
}

TEST_F(ServerTest, UnknownEndpointIsAJsonNotFound) {
  StartServer();
  Reply reply = Get("/api/v1/nothing-here");
  EXPECT_EQ(reply.status, 404);
  EXPECT_EQ(reply.body["error"]["code"], "NOT_FOUND");
  EXPECT_THAT(reply.body["error"]["message"].get<std::string>(), HasSubstr("/api/v1/nothing-here"));
}

TEST_F(ServerTest, BodyOverTheLimitIsRefused) {
  ServerOptions options;
  options.max_body_bytes = 2048;
  StartServer({}, options);
  nlohmann::json big = {{"text", std::string(4096, 'x')}};
  Reply reply = Post("/api/v1/memory", big);
  EXPECT_EQ(reply.status, 413);
  EXPECT_EQ(reply.body["error"]["code"], "RESOURCE_EXHAUSTED");
}

// The serve.* connection limits reach the listener (docs/security.md, "Hostile networks").
TEST_F(ServerTest, SlowOversizedAndAmbiguousHeadsAreRefused) {
  ServerOptions options;
  options.header_timeout = std::chrono::milliseconds(300);
  options.max_header_bytes = 2048;
  StartServer({}, options);
  const int port = server_->port();
  const std::string late =
      testing::RawExchange(port, "GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n");
  EXPECT_THAT(late, ::testing::StartsWith("HTTP/1.1 408"));
  EXPECT_THAT(late, HasSubstr("\"code\":\"DEADLINE_EXCEEDED\""));
  EXPECT_THAT(testing::RawExchange(port, "GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Big: " +
                                             std::string(4096, 'a') + "\r\n\r\n"),
              ::testing::StartsWith("HTTP/1.1 431"));
  const std::string smuggled = testing::RawExchange(
      port,
      "POST /api/v1/memory HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
      "Content-Length: 5\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n"
      "DELETE /api/v1/memory/1 HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n");
  EXPECT_THAT(smuggled, ::testing::StartsWith("HTTP/1.1 400"));
  EXPECT_EQ(smuggled.find("HTTP/1.1", 1), std::string::npos) << smuggled;
  EXPECT_EQ(Get("/healthz").status, 200);

  options.max_connections = 0;
  auto refused = Server::Create(*runtime_, options);
  EXPECT_THAT(refused.status().message(), HasSubstr("serve.max_connections"));
}

TEST_F(ServerTest, TokenIsRequiredWhenSet) {
  ServerOptions options;
  options.token = "tok-123";
  StartServer({}, options);
  Reply none = Get("/metrics");
  EXPECT_EQ(none.status, 401);
  EXPECT_EQ(none.body["error"]["code"], "UNAUTHENTICATED");
  EXPECT_EQ(Get("/metrics", {{"Authorization", "Bearer wrong"}}).status, 401);
  EXPECT_EQ(Get("/metrics", {{"Authorization", "Bearer tok-123"}}).status, 200);
  EXPECT_EQ(Get("/metrics", {{"Authorization", "bearer tok-123"}}).status, 200);
  // Without proxy.upstream no proxy route is mounted, so /v1/ paths need serve.token too.
  EXPECT_EQ(Get("/v1/models").status, 401);
  EXPECT_EQ(Get("/v1/models", {{"Authorization", "Bearer tok-123"}}).status, 404);
  // Probes of orchestrators need no token and learn nothing from it.
  EXPECT_EQ(Get("/healthz").status, 200);
  EXPECT_EQ(Get("/readyz").status, 200);
}

TEST_F(ServerTest, CrossSiteStateChangesAreRefused) {
  StartServer();
  const std::string self = "http://127.0.0.1:" + std::to_string(server_->port());
  Reply other = Post("/api/v1/memory", {{"text", "x"}}, {{"Origin", "http://evil.example"}});
  EXPECT_EQ(other.status, 403);
  EXPECT_EQ(other.body["error"]["code"], "PERMISSION_DENIED");
  Reply fetch = Post("/api/v1/memory", {{"text", "x"}}, {{"Sec-Fetch-Site", "cross-site"}});
  EXPECT_EQ(fetch.status, 403);
  // A form post (text/plain) is refused even without an Origin.
  auto form = client_->Post("/api/v1/memory", "text=x", "text/plain");
  ASSERT_TRUE(form);
  EXPECT_EQ(form->status, 403);
  // Reads from another origin are not state changes (and carry no CORS grant anyway).
  Reply read = Get("/healthz", {{"Origin", "http://evil.example"}});
  EXPECT_EQ(read.status, 200);
  EXPECT_EQ(read.headers.count("Access-Control-Allow-Origin"), 0u);
}

TEST_F(ServerTest, DnsRebindingHostIsRefusedOnLoopback) {
  StartServer();
  Reply reply = Get("/metrics", {{"Host", "evil.example:7070"}});
  EXPECT_EQ(reply.status, 403);
}

TEST_F(ServerTest, BodyThatIsNotJsonIsABadRequest) {
  StartServer();
  auto result = client_->Post("/api/v1/memory", "{not json", "application/json");
  ASSERT_TRUE(result);
  EXPECT_EQ(result->status, 400);
  EXPECT_THAT(result->body, HasSubstr("\"INVALID_ARGUMENT\""));
}

TEST_F(ServerTest, MetricsAreServedInPrometheusFormat) {
  StartServer();
  auto result = client_->Get("/metrics");
  ASSERT_TRUE(result);
  EXPECT_EQ(result->status, 200);
  EXPECT_THAT(result->get_header_value("Content-Type"), HasSubstr("text/plain; version=0.0.4"));
  EXPECT_THAT(result->body, HasSubstr("mend_lessonq_queue_depth"));
}

TEST_F(ServerTest, StopIsIdempotentAndRefusesNewConnections) {
  StartServer();
  EXPECT_EQ(server_->Stop(), 0);
  EXPECT_EQ(server_->Stop(), 0);
  EXPECT_FALSE(client_->Get("/healthz"));
}

}  // namespace
}  // namespace mend::server
