#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <httplib.h>

#include <future>
#include <set>
#include <thread>

#include "tests/support/fake_llm_server.h"
#include "tests/support/fake_llm_test_client.h"

namespace mend::testing {
namespace {

class FakeLlmConnectionsTest : public FakeLlmServerFixture {};

TEST_F(FakeLlmConnectionsTest, OneKeepAliveClientReusesItsConnection) {
  httplib::Client client(server_->base_url());
  client.set_keep_alive(true);
  client.set_tcp_nodelay(true);
  ASSERT_TRUE(client.Post("/v1/chat/completions", "{}", "application/json"));
  ASSERT_TRUE(client.Post("/v1/messages", "{}", "application/json"));
  std::vector<RecordedRequest> requests = server_->requests();
  ASSERT_EQ(requests.size(), 2u);
  EXPECT_EQ(requests[0].connection_id, requests[1].connection_id);
  EXPECT_EQ(server_->connection_count(), 1);
}

TEST_F(FakeLlmConnectionsTest, TwoClientsUseTwoConnections) {
  httplib::Client first(server_->base_url());
  httplib::Client second(server_->base_url());
  first.set_keep_alive(true);
  first.set_tcp_nodelay(true);
  second.set_keep_alive(true);
  second.set_tcp_nodelay(true);
  ASSERT_TRUE(first.Post("/v1/chat/completions", "{}", "application/json"));
  ASSERT_TRUE(second.Post("/v1/chat/completions", "{}", "application/json"));
  std::vector<RecordedRequest> requests = server_->requests();
  ASSERT_EQ(requests.size(), 2u);
  EXPECT_NE(requests[0].connection_id, requests[1].connection_id);
  EXPECT_EQ(server_->connection_count(), 2);
}

TEST_F(FakeLlmConnectionsTest, ADroppedConnectionIsReplacedByANewOne) {
  FakeResponse drop;
  drop.fault = FakeResponse::Fault::kDropConnection;
  server_->Enqueue(drop);
  httplib::Client client(server_->base_url());
  client.set_keep_alive(true);
  client.set_tcp_nodelay(true);
  EXPECT_FALSE(client.Post("/v1/chat/completions", "{}", "application/json"));
  auto res = client.Post("/v1/chat/completions", "{}", "application/json");
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 200);
  std::vector<RecordedRequest> requests = server_->requests();
  ASSERT_EQ(requests.size(), 2u);
  EXPECT_NE(requests[0].connection_id, requests[1].connection_id);
}

TEST_F(FakeLlmConnectionsTest, EightConcurrentKeepAliveClientsAreServed) {
  constexpr int kClients = 8;
  constexpr int kRequestsEach = 5;
  // Each answer waits a little so that the clients' connections overlap in time.
  FakeResponse slow;
  slow.latency = std::chrono::milliseconds(5);
  server_->SetDefault(slow);
  std::vector<std::future<int>> ok_counts;
  for (int c = 0; c < kClients; ++c) {
    ok_counts.push_back(std::async(std::launch::async, [this] {
      httplib::Client client(server_->base_url());
      client.set_keep_alive(true);
      client.set_tcp_nodelay(true);
      int ok = 0;
      for (int i = 0; i < kRequestsEach; ++i) {
        auto res = client.Post("/v1/chat/completions", "{}", "application/json");
        ok += (res && res->status == 200) ? 1 : 0;
      }
      return ok;
    }));
  }
  for (auto& f : ok_counts) EXPECT_EQ(f.get(), kRequestsEach);
  std::set<int> ids;
  for (const RecordedRequest& r : server_->requests()) ids.insert(r.connection_id);
  EXPECT_EQ(ids.size(), size_t{kClients});
  EXPECT_EQ(server_->connection_count(), kClients);
}

TEST(FakeLlmServerLifetimeTest, StoppingCutsALongLatencyShort) {
  auto started = FakeLlmServer::Start();
  ASSERT_TRUE(started.ok());
  std::unique_ptr<FakeLlmServer> server = std::move(started).value();
  FakeResponse slow;
  slow.latency = std::chrono::hours(1);
  server->Enqueue(slow);
  std::promise<void> arrived;
  server->SetRequestObserver([&](const RecordedRequest&) { arrived.set_value(); });
  std::string url = server->base_url();
  auto answer = std::async(std::launch::async, [url] {
    httplib::Client client(url);
    return static_cast<bool>(client.Post("/v1/chat/completions", "{}", "application/json"));
  });
  arrived.get_future().wait();
  server.reset();  // would hang for an hour if the wait were not interrupted
  answer.get();
  SUCCEED();
}

TEST(FakeLlmServerLifetimeTest, StopClosesOpenKeepAliveConnections) {
  auto started = FakeLlmServer::Start();
  ASSERT_TRUE(started.ok());
  std::unique_ptr<FakeLlmServer> server = std::move(started).value();
  httplib::Client client(server->base_url());
  client.set_keep_alive(true);
  client.set_tcp_nodelay(true);
  ASSERT_TRUE(client.Post("/v1/chat/completions", "{}", "application/json"));
  server.reset();
  auto after = client.Post("/v1/chat/completions", "{}", "application/json");
  EXPECT_FALSE(after);
}

TEST(FakeLlmServerLifetimeTest, TakenFixedPortIsUnavailable) {
  auto first = FakeLlmServer::Start();
  ASSERT_TRUE(first.ok());
  FakeLlmServerOptions options;
  options.port = (*first)->port();
  // The port is taken by the first server, so the second cannot bind it.
  auto second = FakeLlmServer::Start(options);
  EXPECT_FALSE(second.ok());
  EXPECT_EQ(second.status().code(), StatusCode::kUnavailable);
}

}  // namespace
}  // namespace mend::testing
