// `mend mcp serve --http`'s transport (src/server/mcp_http.cc): sessions, status codes and the
// guards, with a small McpServer behind it and cpp-httplib as the client.
#include "mend/server/mcp_http.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <httplib.h>

#include <nlohmann/json.hpp>

#include "mend/mcp/jsonrpc.h"
#include "tests/support/status_matchers.h"

namespace mend::server {
namespace {

using ::mend::testing::StatusIs;
using json = nlohmann::json;

class McpHttpTest : public ::testing::Test {
 protected:
  void Start(ServerOptions options = {}) {
    options.port = 0;
    auto created = McpHttpServer::Create(mcp_, options);
    MEND_ASSERT_OK(created);
    server_ = std::move(created).value();
    MEND_ASSERT_OK(server_->Start());
    client_ = std::make_unique<httplib::Client>("127.0.0.1", server_->port());
  }
  void TearDown() override {
    if (server_ != nullptr) server_->Stop();
  }

  httplib::Result Post(const json& message, httplib::Headers headers = {}) {
    return client_->Post("/mcp", headers, message.dump(), "application/json");
  }
  std::string Initialize() {
    auto res =
        Post({{"jsonrpc", "2.0"},
              {"id", 1},
              {"method", "initialize"},
              {"params", {{"protocolVersion", "2025-06-18"}, {"capabilities", json::object()}}}});
    EXPECT_TRUE(res);
    if (!res) return "";
    EXPECT_EQ(res->status, 200);
    EXPECT_EQ(json::parse(res->body)["result"]["protocolVersion"], "2025-06-18");
    return res->get_header_value("Mcp-Session-Id");
  }

  mcp::McpServer mcp_{mcp::ServerIdentity{}, {}, mcp::ServedResources{}};
  std::unique_ptr<McpHttpServer> server_;
  std::unique_ptr<httplib::Client> client_;
};

TEST_F(McpHttpTest, ASessionIsGivenAtInitializeAndRequiredAfter) {
  Start();
  const std::string session = Initialize();
  ASSERT_EQ(session.size(), 32u);
  const json ping = {{"jsonrpc", "2.0"}, {"id", 2}, {"method", "ping"}};
  auto ok = Post(ping, {{"Mcp-Session-Id", session}});
  ASSERT_TRUE(ok);
  EXPECT_EQ(ok->status, 200);
  EXPECT_EQ(json::parse(ok->body)["result"], json::object());
  // A notification is accepted without a body.
  auto note = Post({{"jsonrpc", "2.0"}, {"method", "notifications/initialized"}},
                   {{"Mcp-Session-Id", session}});
  ASSERT_TRUE(note);
  EXPECT_EQ(note->status, 202);
  EXPECT_EQ(note->body, "");
  // Without a session, or with one the server does not know.
  auto missing = Post(ping);
  ASSERT_TRUE(missing);
  EXPECT_EQ(missing->status, 400);
  auto unknown = Post(ping, {{"Mcp-Session-Id", "not-a-session"}});
  ASSERT_TRUE(unknown);
  EXPECT_EQ(unknown->status, 404);
  // DELETE ends the session; it is unknown afterwards.
  auto ended = client_->Delete("/mcp", {{"Mcp-Session-Id", session}});
  ASSERT_TRUE(ended);
  EXPECT_EQ(ended->status, 204);
  auto after = Post(ping, {{"Mcp-Session-Id", session}});
  ASSERT_TRUE(after);
  EXPECT_EQ(after->status, 404);
}

TEST_F(McpHttpTest, NoServerStreamAndOnlyJsonBodies) {
  Start();
  auto get = client_->Get("/mcp");
  ASSERT_TRUE(get);
  EXPECT_EQ(get->status, 405);
  auto text = client_->Post("/mcp", "{}", "text/plain");
  ASSERT_TRUE(text);
  // serve's cross-site guard or the endpoint's own check refuses it; either way no handler runs.
  EXPECT_GE(text->status, 400);
  auto garbage = client_->Post("/mcp", "{nope", "application/json");
  ASSERT_TRUE(garbage);
  EXPECT_EQ(json::parse(garbage->body)["error"]["code"], mcp::kInvalidRequest);
}

TEST_F(McpHttpTest, TheTokenRuleIsServes) {
  ServerOptions open;
  open.host = "0.0.0.0";
  EXPECT_THAT(McpHttpServer::Create(mcp_, open), StatusIs(StatusCode::kInvalidArgument));
  ServerOptions guarded;
  guarded.token = "tok-mcp-123";
  Start(guarded);
  const json init = {
      {"jsonrpc", "2.0"}, {"id", 1}, {"method", "initialize"}, {"params", json::object()}};
  auto refused = Post(init);
  ASSERT_TRUE(refused);
  EXPECT_EQ(refused->status, 401);
  EXPECT_EQ(refused->get_header_value("WWW-Authenticate"), "Bearer");
  auto allowed = Post(init, {{"Authorization", "Bearer tok-mcp-123"}});
  ASSERT_TRUE(allowed);
  EXPECT_EQ(allowed->status, 200);
  // A page of another site cannot reach it through the browser.
  auto cross =
      Post(init, {{"Authorization", "Bearer tok-mcp-123"}, {"Origin", "http://evil.example"}});
  ASSERT_TRUE(cross);
  EXPECT_EQ(cross->status, 403);
}

}  // namespace
}  // namespace mend::server
