// Streams relayed event by event: nothing buffered, the known failures of gateways avoided (usage
// chunk dropped or given choices, argument deltas bunched, tool-call indexes not advanced, a
// stream error swallowed, role missing), a broken upstream ending in an error event, a client
// that goes away cancelling the upstream request.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <condition_variable>
#include <future>
#include <mutex>

#include "tests/proxy/proxy_fixture.h"
#include "tests/support/fake_llm_test_client.h"

namespace mend::proxy {
namespace {

using ::testing::HasSubstr;
using Json = nlohmann::json;

constexpr auto kWait = std::chrono::seconds(30);

const char kStreamChat[] =
    R"({"model":"gpt-4o","stream":true,"stream_options":{"include_usage":true},"messages":[{"role":"user","content":"hi"}]})";

class StreamTest : public ProxyTest {
 protected:
  std::string ProxyUrl() const { return "http://127.0.0.1:" + std::to_string(listener_->port()); }

  // The events the client received, parsed.
  std::vector<testing::SseEvent> Events(const std::string& body) { return testing::ParseSse(body); }
};

TEST_F(StreamTest, ChatUsageChunkRoleAndDoneArriveAsTheUpstreamSentThem) {
  Start();
  testing::FakeResponse answer;
  answer.text = "Hello there, general.";
  answer.input_tokens = 42;
  answer.output_tokens = 7;
  upstream_->Enqueue(answer);
  testing::Received got = testing::PostAndReceive(ProxyUrl(), "/v1/chat/completions", kStreamChat);
  ASSERT_EQ(got.error, httplib::Error::Success);
  ASSERT_EQ(got.status, 200);
  std::vector<testing::SseEvent> events = Events(got.body);
  ASSERT_GE(events.size(), 4u);
  EXPECT_EQ(Json::parse(events[0].data)["choices"][0]["delta"]["role"], "assistant");
  const Json usage = Json::parse(events[events.size() - 2].data);
  EXPECT_TRUE(usage["choices"].empty());
  EXPECT_EQ(usage["usage"]["prompt_tokens"], 42);
  EXPECT_EQ(events.back().data, "[DONE]");
  // The same bytes the upstream gives a direct client, but for the answer's id and timestamp.
  upstream_->Enqueue(answer);
  testing::Received direct =
      testing::PostAndReceive(upstream_->base_url(), "/v1/chat/completions", kStreamChat);
  std::string relayed = got.body;
  for (std::string* body : {&relayed, &direct.body}) {
    for (const char* id : {"chatcmpl-fake1", "chatcmpl-fake2"}) {
      for (size_t at = body->find(id); at != std::string::npos; at = body->find(id)) {
        body->replace(at, strlen(id), "ID");
      }
    }
    for (const char* created : {"1700000001", "1700000002"}) {
      for (size_t at = body->find(created); at != std::string::npos; at = body->find(created)) {
        body->replace(at, strlen(created), "T");
      }
    }
  }
  EXPECT_EQ(relayed, direct.body);
}

TEST_F(StreamTest, EventsAreRelayedAsTheyArriveNotWhenTheReplyEnds) {
  Start();
  testing::FakeResponse answer;
  answer.text = "one two three four five six seven eight";
  answer.pause_after_events = 2;
  upstream_->Enqueue(answer);
  std::mutex mu;
  std::condition_variable cv;
  size_t seen = 0;
  std::future<testing::Received> got = std::async(std::launch::async, [&] {
    return testing::PostAndReceive(ProxyUrl(), "/v1/chat/completions", kStreamChat,
                                   [&](const std::string& body) {
                                     std::lock_guard<std::mutex> lock(mu);
                                     seen = testing::ParseSse(body).size();
                                     cv.notify_all();
                                     return true;
                                   });
  });
  ASSERT_TRUE(upstream_->WaitForPausedStreams(1, kWait));
  {
    // The upstream holds the rest back: the two events must reach the client without it.
    std::unique_lock<std::mutex> lock(mu);
    EXPECT_TRUE(cv.wait_for(lock, kWait, [&] { return seen >= 2; }));
    EXPECT_EQ(seen, 2u);
  }
  upstream_->ResumeStreams();
  testing::Received done = got.get();
  EXPECT_EQ(done.error, httplib::Error::Success);
  EXPECT_EQ(testing::ParseSse(done.body).back().data, "[DONE]");
}

TEST_F(StreamTest, ToolCallDeltasKeepTheirIndexesAndArriveOneByOne) {
  Start();
  testing::FakeResponse calls;
  calls.tool_calls = {{"c1", "read_file", R"({"path":"/a/long/path/one"})"},
                      {"c2", "list_dir", R"({"path":"/another/long/path"})"},
                      {"c3", "grep", R"({"pattern":"needle","path":"/hay"})"}};
  calls.argument_pieces = 3;
  upstream_->Enqueue(calls);
  testing::Received got = testing::PostAndReceive(ProxyUrl(), "/v1/chat/completions", kStreamChat);
  ASSERT_EQ(got.status, 200);
  std::map<int, int> argument_events;
  std::map<int, std::string> arguments;
  for (const testing::SseEvent& e : Events(got.body)) {
    if (e.data == "[DONE]") continue;
    const Json chunk = Json::parse(e.data);
    if (chunk["choices"].empty()) continue;
    const Json& delta = chunk["choices"][0]["delta"];
    if (!delta.contains("tool_calls")) continue;
    ASSERT_EQ(delta["tool_calls"].size(), 1u);
    const Json& call = delta["tool_calls"][0];
    const int index = call["index"];
    const std::string piece = call["function"].value("arguments", "");
    if (!piece.empty()) ++argument_events[index];
    arguments[index] += piece;
  }
  EXPECT_EQ(argument_events, (std::map<int, int>{{0, 3}, {1, 3}, {2, 3}}));
  EXPECT_EQ(arguments[2], R"({"pattern":"needle","path":"/hay"})");
}

TEST_F(StreamTest, AnUpstreamThatBreaksOffEndsTheClientsStreamWithAnError) {
  Start();
  testing::FakeResponse cut;
  cut.text = "this answer will not finish because the upstream goes away";
  cut.fault = testing::FakeResponse::Fault::kStreamCut;
  upstream_->Enqueue(cut);
  testing::Received got = testing::PostAndReceive(ProxyUrl(), "/v1/chat/completions", kStreamChat);
  EXPECT_EQ(got.status, 200);
  EXPECT_EQ(got.error, httplib::Error::Success);  // the proxy ends its own stream properly
  std::vector<testing::SseEvent> events = Events(got.body);
  ASSERT_FALSE(events.empty());
  EXPECT_NE(events.back().data, "[DONE]");
  const Json error = Json::parse(events.back().data);
  EXPECT_EQ(error["error"]["type"], "server_error");
  EXPECT_THAT(error["error"]["message"].get<std::string>(), HasSubstr("upstream"));
  // Nothing that follows a cut is retried: the client already had bytes.
  EXPECT_EQ(upstream_->request_count(), 1u);
}

TEST_F(StreamTest, AClientThatGoesAwayCancelsTheUpstreamRequest) {
  Start();
  testing::FakeResponse slow;
  slow.text = std::string(400, 'x');  // many events
  slow.pause_after_events = 2;
  slow.pause_again_after_events = 6;
  upstream_->Enqueue(slow);
  testing::Received got = testing::PostAndReceive(ProxyUrl(), "/v1/chat/completions", kStreamChat,
                                                  [](const std::string& body) {
                                                    // Hang up once the two events before the first
                                                    // pause are in.
                                                    return testing::ParseSse(body).size() < 2;
                                                  });
  EXPECT_EQ(testing::ParseSse(got.body).size(), 2u);
  ASSERT_TRUE(upstream_->WaitForPausedStreams(1, kWait));
  // The relay writes the next events to the closed connection, notices, and cancels the upstream
  // request (closing its connection) before the upstream gets past its second pause.
  upstream_->ResumeStreams();
  ASSERT_TRUE(WaitForMetric("mend_proxy_client_aborts_total", 1));
  // The upstream either failed a write already or waits at its second pause; then it goes on.
  const auto bound = std::chrono::steady_clock::now() + kWait;
  while (upstream_->paused_streams() == 0 && upstream_->aborted_streams() == 0 &&
         std::chrono::steady_clock::now() < bound) {
    std::this_thread::yield();
  }
  upstream_->ResumeStreams();
  // The upstream's next writes then fail: its request was cancelled, not read to the end.
  EXPECT_TRUE(upstream_->WaitForAbortedStreams(1, kWait));
  EXPECT_EQ(Metric("mend_proxy_open_streams"), 0);
  EXPECT_EQ(Metric(R"(mend_proxy_requests_total{route="/v1/chat/completions",status="499"})"), 1);
}

TEST_F(StreamTest, MessagesStreamIsRelayedWithPingAndTheSectionInSystem) {
  options_.upstream_kind = UpstreamKind::kAnthropic;
  Start();
  testing::FakeResponse answer;
  answer.text = "Sure.";
  answer.tool_calls = {{"tu1", "grep", R"({"q":"x"})"}};
  answer.argument_pieces = 2;
  upstream_->Enqueue(answer);
  testing::Received got = testing::PostAndReceive(
      ProxyUrl(), "/v1/messages",
      R"({"model":"claude","max_tokens":50,"stream":true,"system":"S","messages":[{"role":"user","content":"hi"}]})");
  ASSERT_EQ(got.status, 200);
  std::vector<std::string> names;
  for (const testing::SseEvent& e : Events(got.body)) names.push_back(e.name);
  ASSERT_GE(names.size(), 6u);
  EXPECT_EQ(names.front(), "message_start");
  EXPECT_EQ(names[1], "ping");
  EXPECT_EQ(names.back(), "message_stop");
  EXPECT_EQ(std::count(names.begin(), names.end(), "content_block_delta"), 3);  // text + 2 pieces
  EXPECT_EQ(LastUpstreamBody()["system"], "S\n\n## Long-term Memory\n- fact 1");
}

TEST_F(StreamTest, ResponsesStreamIsRelayedAndInstructionsCarryTheSection) {
  Start();
  testing::FakeResponse answer;
  answer.text = "All good.";
  upstream_->Enqueue(answer);
  testing::Received got = testing::PostAndReceive(
      ProxyUrl(), "/v1/responses",
      R"({"model":"gpt-4o","stream":true,"instructions":"Be brief.","input":"status?"})");
  ASSERT_EQ(got.status, 200);
  std::vector<testing::SseEvent> events = Events(got.body);
  ASSERT_FALSE(events.empty());
  EXPECT_EQ(events.front().name, "response.created");
  EXPECT_EQ(events.back().name, "response.completed");
  EXPECT_EQ(LastUpstreamBody()["instructions"], "Be brief.\n\n## Long-term Memory\n- fact 1");
  // A span for the streamed call, with its usage.
  ASSERT_TRUE(tracer_->Flush(std::chrono::seconds(5)).ok());
}

TEST_F(StreamTest, ResponsesNonStreamedPassesThrough) {
  Start();
  testing::FakeResponse answer;
  answer.text = "Fine.";
  upstream_->Enqueue(answer);
  Reply reply = Post("/v1/responses", R"({"model":"gpt-4o","input":"status?"})");
  ASSERT_EQ(reply.status, 200);
  EXPECT_EQ(reply.Json()["object"], "response");
  EXPECT_EQ(LastUpstreamBody()["instructions"], "## Long-term Memory\n- fact 1");
}

}  // namespace
}  // namespace mend::proxy
