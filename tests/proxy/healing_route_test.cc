// Retries before the first byte, the outage breaker and pass-through of errors, in virtual time.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <condition_variable>
#include <future>
#include <mutex>

#include "tests/proxy/proxy_fixture.h"

namespace mend::proxy {
namespace {

using ::testing::HasSubstr;
using Json = nlohmann::json;

const char kChat[] = R"({"model":"m","messages":[{"role":"user","content":"hi"}]})";

testing::FakeResponse Status(int status, std::optional<int> retry_after = std::nullopt) {
  testing::FakeResponse r;
  r.status = status;
  r.retry_after_seconds = retry_after;
  r.error_message = "upstream says " + std::to_string(status);
  return r;
}

class HealingTest : public ProxyTest {
 protected:
  void SetUp() override {
    ProxyTest::SetUp();
    upstream_->SetRequestObserver([this](const testing::RecordedRequest&) {
      std::lock_guard<std::mutex> lock(mu_);
      ++received_;
      received_cv_.notify_all();
    });
  }

  // Posts on another thread; the test moves the clock while the proxy waits.
  std::future<Reply> PostAsync(std::string body, httplib::Headers headers = {}) {
    return std::async(std::launch::async, [this, body = std::move(body), headers] {
      return Post("/v1/chat/completions", body, headers);
    });
  }
  // Once the upstream has received `requests` requests and the proxy waits to retry, lets it go
  // on after `d` of virtual time. (Counting requests first keeps the wait of the previous retry,
  // which may not have left the clock yet, from being taken for the next one.)
  void AdvanceWhenWaiting(int requests, Duration d) {
    {
      std::unique_lock<std::mutex> lock(mu_);
      received_cv_.wait(lock, [&] { return received_ >= requests; });
    }
    clock_.BlockUntilWaiters(1);
    clock_.Advance(d);
  }

  std::mutex mu_;
  std::condition_variable received_cv_;
  int received_ = 0;  // guarded by mu_
};

TEST_F(HealingTest, A429IsRetriedAfterItsRetryAfter) {
  Start();
  upstream_->Enqueue(Status(429, 3));
  std::future<Reply> reply = PostAsync(kChat);
  const Time before = clock_.Now();
  AdvanceWhenWaiting(1, std::chrono::seconds(3));
  Reply r = reply.get();
  EXPECT_EQ(r.status, 200);
  EXPECT_EQ(upstream_->request_count(), 2u);
  EXPECT_EQ(clock_.Now() - before, std::chrono::seconds(3));
  EXPECT_EQ(Metric("mend_proxy_retries_total"), 1);
}

TEST_F(HealingTest, TransientErrorsBackOffThenTheLastAnswerGoesToTheClient) {
  options_.retry.max_attempts = 3;
  Start();
  upstream_->Enqueue(Status(503));
  upstream_->Enqueue(Status(502));
  upstream_->Enqueue(Status(500));
  std::future<Reply> reply = PostAsync(kChat);
  AdvanceWhenWaiting(1, std::chrono::seconds(1));  // base delay
  AdvanceWhenWaiting(2, std::chrono::seconds(2));  // doubled
  Reply r = reply.get();
  EXPECT_EQ(r.status, 500);
  EXPECT_EQ(r.Json()["error"]["message"], "upstream says 500");
  EXPECT_EQ(upstream_->request_count(), 3u);
}

TEST_F(HealingTest, AConnectionResetIsRetriedToo) {
  Start();
  testing::FakeResponse drop;
  drop.fault = testing::FakeResponse::Fault::kDropConnection;
  upstream_->Enqueue(drop);
  std::future<Reply> reply = PostAsync(kChat);
  AdvanceWhenWaiting(1, std::chrono::seconds(1));
  EXPECT_EQ(reply.get().status, 200);
  EXPECT_EQ(upstream_->request_count(), 2u);
}

TEST_F(HealingTest, ClientErrorsPassThroughUntouchedAndAreNotRetried) {
  Start();
  testing::FakeResponse bad = Status(400);
  bad.error_type = "context_length_exceeded";
  upstream_->Enqueue(bad);
  Reply r = Post("/v1/chat/completions", kChat);
  EXPECT_EQ(r.status, 400);
  EXPECT_EQ(r.Json()["error"]["code"], "context_length_exceeded");
  EXPECT_EQ(r.Json()["error"]["message"], "upstream says 400");
  EXPECT_EQ(upstream_->request_count(), 1u);
  upstream_->Enqueue(Status(401));
  EXPECT_EQ(Post("/v1/chat/completions", kChat).status, 401);
  EXPECT_EQ(upstream_->request_count(), 2u);
}

TEST_F(HealingTest, TheBreakerOpensAnswers503AtOnceThenProbesAndCloses) {
  options_.retry.max_attempts = 1;
  options_.outage_threshold = 2;
  options_.outage_interval = std::chrono::seconds(30);
  Start();
  upstream_->Enqueue(Status(503));
  upstream_->Enqueue(Status(503));
  EXPECT_EQ(Post("/v1/chat/completions", kChat).status, 503);
  EXPECT_EQ(Post("/v1/chat/completions", kChat).status, 503);
  // Open: answered without asking the upstream.
  Reply refused = Post("/v1/chat/completions", kChat);
  EXPECT_EQ(refused.status, 503);
  EXPECT_EQ(refused.Header("Retry-After"), "30");
  EXPECT_THAT(refused.Json()["error"]["message"].get<std::string>(), HasSubstr("outage"));
  EXPECT_EQ(upstream_->request_count(), 2u);
  // The probe after the interval finds the upstream well and closes the breaker.
  clock_.Advance(std::chrono::seconds(30));
  EXPECT_EQ(Post("/v1/chat/completions", kChat).status, 200);
  EXPECT_EQ(Post("/v1/chat/completions", kChat).status, 200);
  EXPECT_EQ(upstream_->request_count(), 4u);
  EXPECT_EQ(Metric("mend_proxy_breaker_rejections_total"), 1);
}

TEST_F(HealingTest, AFailedProbeWaitsTwiceAsLong) {
  options_.retry.max_attempts = 1;
  options_.outage_threshold = 1;
  options_.outage_interval = std::chrono::seconds(10);
  Start();
  upstream_->Enqueue(Status(500));
  upstream_->Enqueue(Status(500));
  EXPECT_EQ(Post("/v1/chat/completions", kChat).status, 500);
  clock_.Advance(std::chrono::seconds(10));
  EXPECT_EQ(Post("/v1/chat/completions", kChat).status, 500);  // the probe
  Reply refused = Post("/v1/chat/completions", kChat);
  EXPECT_EQ(refused.status, 503);
  EXPECT_EQ(refused.Header("Retry-After"), "20");
}

TEST_F(HealingTest, AnUnreachableUpstreamIsA502InTheApisShape) {
  options_.upstream = "http://127.0.0.1:1/v1";
  options_.retry.max_attempts = 1;
  Start();
  Reply r = Post("/v1/chat/completions", kChat);
  EXPECT_EQ(r.status, 502);
  EXPECT_EQ(r.Json()["error"]["type"], "server_error");
  EXPECT_THAT(r.Json()["error"]["message"].get<std::string>(), HasSubstr("upstream"));
}

}  // namespace
}  // namespace mend::proxy
