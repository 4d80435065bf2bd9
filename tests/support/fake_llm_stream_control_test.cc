#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <httplib.h>

#include <chrono>
#include <condition_variable>
#include <future>
#include <mutex>
#include <nlohmann/json.hpp>
#include <string>

#include "tests/support/fake_llm_server.h"
#include "tests/support/fake_llm_test_client.h"

// Paused streams, stream_cut and the count of aborted streams, observed from the client side.
namespace mend::testing {
namespace {

using Json = nlohmann::json;

// Generous: only a broken server makes a test wait this long, and then it fails.
constexpr std::chrono::seconds kTimeout(10);
constexpr char kChat[] = "/v1/chat/completions";
constexpr char kStream[] = R"({"model":"m","stream":true})";

// A streaming request on its own thread whose events the test can wait for as they arrive.
class StreamingClient {
 public:
  // With `cancel_after` > 0 the client hangs up once that many whole events have arrived.
  // `server`, when set, is resumed should the test end with this client still waiting, so that a
  // failing test does not hang.
  StreamingClient(FakeLlmServer* server, const std::string& path, size_t cancel_after = 0)
      : server_(server) {
    result_ = std::async(std::launch::async, [this, url = server->base_url(), path, cancel_after] {
      return PostAndReceive(url, path, kStream, [this, cancel_after](const std::string& body) {
        const size_t events = ParseSse(body).size();
        std::lock_guard<std::mutex> lock(mu_);
        events_ = events;
        cv_.notify_all();
        return cancel_after == 0 || events < cancel_after;
      });
    });
  }
  ~StreamingClient() {
    if (!finished() && server_ != nullptr) server_->ResumeStreams();
  }

  // Forgets the server (when the test destroys it first).
  void ForgetServer() { server_ = nullptr; }

  // True once at least `n` whole events have arrived; false after kTimeout.
  bool WaitForEvents(size_t n) {
    std::unique_lock<std::mutex> lock(mu_);
    return cv_.wait_for(lock, kTimeout, [&] { return events_ >= n; });
  }
  size_t events() {
    std::lock_guard<std::mutex> lock(mu_);
    return events_;
  }
  // Whether the request has ended; does not wait.
  bool finished() {
    return !result_.valid() ||
           result_.wait_for(std::chrono::seconds(0)) == std::future_status::ready;
  }
  // What arrived, once the request has ended; a failure when it does not end within kTimeout.
  Received Finish() {
    if (result_.wait_for(kTimeout) != std::future_status::ready) {
      ADD_FAILURE() << "the streaming request did not end";
      return Received{};
    }
    return result_.get();
  }

 private:
  FakeLlmServer* server_;
  std::mutex mu_;
  std::condition_variable cv_;
  size_t events_ = 0;
  std::future<Received> result_;
};

FakeResponse Paused(int after_events, std::string text = "paused in the middle of a sentence") {
  FakeResponse r;
  r.text = std::move(text);
  r.pause_after_events = after_events;
  return r;
}

class FakeLlmStreamControlTest : public FakeLlmServerFixture {};

TEST_F(FakeLlmStreamControlTest, PausedStreamsWaitForResume) {
  server_->Enqueue(Paused(2));
  server_->Enqueue(Paused(2));
  StreamingClient chat(server_.get(), kChat);
  StreamingClient messages(server_.get(), "/v1/messages");
  ASSERT_TRUE(server_->WaitForPausedStreams(2, kTimeout));
  EXPECT_EQ(server_->paused_streams(), 2u);
  ASSERT_TRUE(chat.WaitForEvents(2));
  ASSERT_TRUE(messages.WaitForEvents(2));
  EXPECT_EQ(chat.events(), 2u);
  EXPECT_EQ(messages.events(), 2u);
  EXPECT_FALSE(chat.finished());
  EXPECT_FALSE(messages.finished());

  server_->ResumeStreams();
  EXPECT_EQ(server_->paused_streams(), 0u);
  Received chat_body = chat.Finish();
  EXPECT_EQ(chat_body.error, httplib::Error::Success);
  ASSERT_GT(ParseSse(chat_body.body).size(), 2u);
  EXPECT_EQ(ParseSse(chat_body.body).back().data, "[DONE]");
  Received messages_body = messages.Finish();
  EXPECT_EQ(messages_body.error, httplib::Error::Success);
  ASSERT_GT(ParseSse(messages_body.body).size(), 2u);
  EXPECT_EQ(ParseSse(messages_body.body).back().name, "message_stop");
}

TEST_F(FakeLlmStreamControlTest, ASecondPauseHoldsTheStreamAgain) {
  FakeResponse r = Paused(1, "a sentence long enough for many events to follow");
  r.pause_again_after_events = 3;
  server_->Enqueue(r);
  StreamingClient chat(server_.get(), kChat);
  ASSERT_TRUE(server_->WaitForPausedStreams(1, kTimeout));
  ASSERT_TRUE(chat.WaitForEvents(1));
  server_->ResumeStreams();
  ASSERT_TRUE(server_->WaitForPausedStreams(1, kTimeout));
  ASSERT_TRUE(chat.WaitForEvents(3));
  EXPECT_EQ(chat.events(), 3u);
  EXPECT_FALSE(chat.finished());
  server_->ResumeStreams();
  Received body = chat.Finish();
  EXPECT_EQ(body.error, httplib::Error::Success);
  EXPECT_EQ(ParseSse(body.body).back().data, "[DONE]");
}

TEST_F(FakeLlmStreamControlTest, WaitsAreFalseWhenNothingHappens) {
  EXPECT_FALSE(server_->WaitForPausedStreams(1, std::chrono::milliseconds(1)));
  EXPECT_FALSE(server_->WaitForAbortedStreams(1, std::chrono::milliseconds(1)));
  EXPECT_TRUE(server_->WaitForPausedStreams(0, std::chrono::milliseconds(1)));
  server_->ResumeStreams();  // with nothing paused: no effect
  EXPECT_EQ(server_->paused_streams(), 0u);
}

TEST_F(FakeLlmStreamControlTest, AStreamThatPausesAfterAResumeWaitsForTheNextOne) {
  server_->Enqueue(Paused(1));
  server_->Enqueue(Paused(1));
  StreamingClient first(server_.get(), "/v1/responses");
  ASSERT_TRUE(server_->WaitForPausedStreams(1, kTimeout));
  server_->ResumeStreams();
  EXPECT_EQ(first.Finish().error, httplib::Error::Success);

  StreamingClient second(server_.get(), "/v1/responses");
  ASSERT_TRUE(server_->WaitForPausedStreams(1, kTimeout));
  EXPECT_EQ(server_->paused_streams(), 1u);
  ASSERT_TRUE(second.WaitForEvents(1));
  EXPECT_EQ(second.events(), 1u);
  EXPECT_FALSE(second.finished());
  server_->ResumeStreams();
  Received body = second.Finish();
  EXPECT_EQ(body.error, httplib::Error::Success);
  ASSERT_FALSE(ParseSse(body.body).empty());
  EXPECT_EQ(ParseSse(body.body).back().name, "response.completed");
}

TEST_F(FakeLlmStreamControlTest, PauseAfterTheLastEventHoldsBackTheEndOfTheBody) {
  // "ok" streams as 4 chat events: the role, the text, the finish reason and [DONE].
  server_->Enqueue(Paused(4, "ok"));
  StreamingClient client(server_.get(), kChat);
  ASSERT_TRUE(server_->WaitForPausedStreams(1, kTimeout));
  ASSERT_TRUE(client.WaitForEvents(4));
  EXPECT_FALSE(client.finished());
  server_->ResumeStreams();
  Received body = client.Finish();
  EXPECT_EQ(body.error, httplib::Error::Success);
  std::vector<SseEvent> events = ParseSse(body.body);
  ASSERT_EQ(events.size(), 4u);
  EXPECT_EQ(events.back().data, "[DONE]");
}

TEST_F(FakeLlmStreamControlTest, StreamCutHonoursAPauseBeforeTheCut) {
  FakeResponse r = Paused(1, "ok");  // 4 events: the cut comes after 2
  r.fault = FakeResponse::Fault::kStreamCut;
  server_->Enqueue(r);
  StreamingClient client(server_.get(), kChat);
  ASSERT_TRUE(server_->WaitForPausedStreams(1, kTimeout));
  ASSERT_TRUE(client.WaitForEvents(1));
  EXPECT_EQ(client.events(), 1u);
  server_->ResumeStreams();
  Received body = client.Finish();
  EXPECT_EQ(body.status, 200);
  EXPECT_EQ(body.error, httplib::Error::Read);
  EXPECT_EQ(ParseSse(body.body).size(), 2u);
}

TEST(FakeLlmStreamStopTest, StoppingTheServerEndsAPausedStream) {
  auto started = FakeLlmServer::Start();
  ASSERT_TRUE(started.ok()) << started.status();
  std::unique_ptr<FakeLlmServer> server = std::move(started).value();
  server->Enqueue(Paused(1));
  StreamingClient client(server.get(), kChat);
  ASSERT_TRUE(server->WaitForPausedStreams(1, kTimeout));
  ASSERT_TRUE(client.WaitForEvents(1));
  client.ForgetServer();
  server.reset();  // would wait forever if stopping did not release the paused stream
  Received body = client.Finish();
  EXPECT_EQ(body.status, 200);
  EXPECT_NE(body.error, httplib::Error::Success);
  EXPECT_EQ(ParseSse(body.body).size(), 1u);
}

TEST_F(FakeLlmStreamControlTest, OnlyStreamsWhoseClientWentAwayCountAsAborted) {
  // A complete stream. Its connection serves the next request only after the stream's response
  // is finished with, so once that request is answered the stream has been accounted for.
  httplib::Client keep_alive(server_->base_url());
  keep_alive.set_keep_alive(true);
  auto streamed = keep_alive.Post(kChat, kStream, "application/json");
  ASSERT_TRUE(streamed);
  ASSERT_TRUE(keep_alive.Post(kChat, "{}", "application/json"));
  std::vector<RecordedRequest> requests = server_->requests();
  ASSERT_EQ(requests.size(), 2u);
  ASSERT_EQ(requests[0].connection_id, requests[1].connection_id);
  EXPECT_EQ(server_->aborted_streams(), 0u);

  // A stream cut on purpose.
  FakeResponse cut;
  cut.fault = FakeResponse::Fault::kStreamCut;
  server_->Enqueue(cut);
  EXPECT_EQ(PostAndReceive(server_->base_url(), kChat, kStream).error, httplib::Error::Read);

  // A client that hangs up once it has the two events a long stream sends before it pauses
  // (hanging up earlier could fail the second write already): the writes after the resume fail.
  server_->Enqueue(Paused(2, std::string(2000, 'x')));
  StreamingClient leaving(server_.get(), kChat, /*cancel_after=*/2);
  ASSERT_TRUE(server_->WaitForPausedStreams(1, kTimeout));
  EXPECT_EQ(leaving.Finish().error, httplib::Error::Canceled);
  EXPECT_EQ(server_->aborted_streams(), 0u);  // paused: no write has failed yet
  server_->ResumeStreams();
  EXPECT_TRUE(server_->WaitForAbortedStreams(1, kTimeout));
  EXPECT_EQ(server_->aborted_streams(), 1u);
}

}  // namespace
}  // namespace mend::testing
