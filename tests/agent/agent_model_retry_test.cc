// A transient model error is retried inside the run before the run is given up (docs/runs.md,
// "Model errors").
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <atomic>

#include "tests/agent/agent_test_support.h"
#include "tests/support/status_matchers.h"

namespace mend::agent::testing {
namespace {

using ::testing::ElementsAre;

// A clock whose sleeps return at once, moving time to their deadline: a run's pauses happen in
// virtual time on the test's own thread. Records every pause.
class SkippingClock final : public Clock {
 public:
  explicit SkippingClock(Time start) : now_(start) {}
  Time Now() override { return now_; }
  std::cv_status WaitUntil(std::condition_variable&, std::unique_lock<std::mutex>&,
                           Time deadline) override {
    SleepUntil(deadline);
    return std::cv_status::timeout;
  }
  using Clock::WaitUntil;
  void SleepUntil(Time deadline) override {
    if (on_sleep) on_sleep();
    if (deadline > now_) slept_ += deadline - now_, now_ = deadline;
  }
  Duration slept() const { return slept_; }
  std::function<void()> on_sleep;

 private:
  Time now_;
  Duration slept_{0};
};

// Answers in order from `replies`, noting the clock's time of each request.
class SequenceProvider final : public llm::LlmProvider {
 public:
  SequenceProvider(Clock& clock, std::vector<Result<llm::Completion>> replies)
      : clock_(clock), replies_(std::move(replies)) {}
  Result<llm::Completion> Complete(const llm::CompletionRequest&) override {
    asked_at.push_back(clock_.Now());
    if (next_ >= replies_.size()) return FailedPreconditionError("no more replies");
    return replies_[next_++];
  }
  std::string_view name() const override { return "sequence"; }
  std::vector<Time> asked_at;

 private:
  Clock& clock_;
  std::vector<Result<llm::Completion>> replies_;
  size_t next_ = 0;
};

Status ConnectionReset() {
  return UnavailableError("POST http://127.0.0.1:1/v1/chat/completions: connection reset")
      .WithDetailCode("transport");
}

Status BadBody() {
  return UnavailableError("openai HTTP 200 with a non-JSON body (text/html): <html>")
      .WithDetailCode("bad_response");
}

struct RetryHarness {
  RetryHarness() : clock(h.clock.Now()) {}
  Result<RunResult> Send(SequenceProvider& model, ModelRetry retry = {}) {
    AgentOptions options = h.Options(model);
    options.env.clock = &clock;
    options.model_retry = retry;
    auto agent = Agent::Create(Harness::Spec(), options);
    if (!agent.ok()) return agent.status();
    return (*agent)->Send("t", {.run_id = "r1"});
  }
  std::vector<obs::Event> Events(std::string_view type) const {
    std::vector<obs::Event> out;
    for (const obs::Event& e : h.sink->events()) {
      if (e.type() == type) out.push_back(e);
    }
    return out;
  }
  Harness h;
  SkippingClock clock;
};

TEST(AgentModelRetryTest, AConnectionResetIsRetriedAndTheRunCompletes) {
  RetryHarness r;
  SequenceProvider model(r.clock, {ConnectionReset(), Answer("done")});
  Result<RunResult> result = r.Send(model);
  ASSERT_TRUE(result.ok()) << result.status();
  EXPECT_EQ(result->status, store::RunStatus::kCompleted);
  EXPECT_EQ(result->output, "done");
  ASSERT_EQ(model.asked_at.size(), 2u);
  EXPECT_EQ(model.asked_at[1] - model.asked_at[0], std::chrono::seconds(1));
  ASSERT_EQ(r.Events("model.retry").size(), 1u);
}

TEST(AgentModelRetryTest, PausesDoubleAndTheRetriesAreBounded) {
  RetryHarness r;
  SequenceProvider model(r.clock, {BadBody(), BadBody(), BadBody(), Answer("never")});
  Result<RunResult> result = r.Send(model, {.retries = 2,
                                            .first_delay = std::chrono::seconds(1),
                                            .max_delay = std::chrono::seconds(30)});
  ASSERT_TRUE(result.ok()) << result.status();
  EXPECT_EQ(result->status, store::RunStatus::kFailed);
  ASSERT_TRUE(result->error.has_value());
  EXPECT_EQ(result->error->code, "UNAVAILABLE");
  EXPECT_TRUE(result->error->retryable);
  ASSERT_EQ(model.asked_at.size(), 3u);
  EXPECT_EQ(model.asked_at[1] - model.asked_at[0], std::chrono::seconds(1));
  EXPECT_EQ(model.asked_at[2] - model.asked_at[1], std::chrono::seconds(2));
}

TEST(AgentModelRetryTest, RetryAfterSetsTheLongerPause) {
  RetryHarness r;
  SequenceProvider model(
      r.clock,
      {ResourceExhaustedError("rate limited", std::chrono::seconds(5)).WithDetailCode("http_429"),
       Answer("done")});
  Result<RunResult> result = r.Send(model);
  ASSERT_TRUE(result.ok()) << result.status();
  EXPECT_EQ(result->status, store::RunStatus::kCompleted);
  ASSERT_EQ(model.asked_at.size(), 2u);
  EXPECT_EQ(model.asked_at[1] - model.asked_at[0], std::chrono::seconds(5));
  ASSERT_EQ(r.Events("model.retry").size(), 1u);
}

TEST(AgentModelRetryTest, ARetryAfterBeyondTheLongestPauseIsLeftToRecovery) {
  RetryHarness r;
  SequenceProvider model(
      r.clock,
      {ResourceExhaustedError("rate limited", std::chrono::minutes(10)).WithDetailCode("http_429"),
       Answer("done")});
  Result<RunResult> result = r.Send(model);
  ASSERT_TRUE(result.ok()) << result.status();
  EXPECT_EQ(result->status, store::RunStatus::kFailed);
  EXPECT_EQ(result->error->code, "RESOURCE_EXHAUSTED");
  EXPECT_EQ(model.asked_at.size(), 1u);
  EXPECT_EQ(r.clock.slept(), Duration(0));
}

TEST(AgentModelRetryTest, PermanentAndAuthErrorsAreNotRetried) {
  for (const Status& error : {UnauthenticatedError("openai HTTP 401").WithDetailCode("http_401"),
                              InvalidArgumentError("openai HTTP 400").WithDetailCode("http_400")}) {
    RetryHarness r;
    SequenceProvider model(r.clock, {error, Answer("never")});
    Result<RunResult> result = r.Send(model);
    ASSERT_TRUE(result.ok()) << result.status();
    EXPECT_EQ(result->status, store::RunStatus::kFailed) << error;
    EXPECT_EQ(model.asked_at.size(), 1u) << error;
  }
}

TEST(AgentModelRetryTest, NoRetriesWhenTurnedOff) {
  RetryHarness r;
  SequenceProvider model(r.clock, {ConnectionReset(), Answer("never")});
  Result<RunResult> result = r.Send(model, {.retries = 0});
  ASSERT_TRUE(result.ok()) << result.status();
  EXPECT_EQ(result->status, store::RunStatus::kFailed);
  EXPECT_EQ(model.asked_at.size(), 1u);
}

TEST(AgentModelRetryTest, AStopDuringThePauseLeavesTheRunRunning) {
  RetryHarness r;
  std::atomic<bool> stop{false};
  r.clock.on_sleep = [&] { stop = true; };  // the server shuts down while the run pauses
  SequenceProvider model(r.clock, {ConnectionReset(), Answer("done")});
  AgentOptions options = r.h.Options(model);
  options.env.clock = &r.clock;
  options.model_retry = {};
  options.stop = &stop;
  auto agent = Agent::Create(Harness::Spec(), options);
  ASSERT_TRUE(agent.ok());
  Result<RunResult> result = (*agent)->Send("t", {.run_id = "r1"});
  ASSERT_TRUE(result.ok()) << result.status();
  EXPECT_EQ(result->status, store::RunStatus::kRunning);
  EXPECT_FALSE(result->error.has_value()) << result->error->code << ": " << result->error->message;
  EXPECT_EQ(model.asked_at.size(), 1u);
}

TEST(AgentModelRetryTest, PausesDoNotCountAgainstTheWallLimit) {
  RetryHarness r;
  SequenceProvider model(r.clock, {ConnectionReset(), ConnectionReset(), Answer("done")});
  AgentSpec spec = Harness::Spec();
  spec.limits.max_wall = std::chrono::seconds(2);
  AgentOptions options = r.h.Options(model);
  options.env.clock = &r.clock;
  options.model_retry = {
      .retries = 2, .first_delay = std::chrono::seconds(2), .max_delay = std::chrono::seconds(30)};
  auto agent = Agent::Create(spec, options);
  ASSERT_TRUE(agent.ok());
  Result<RunResult> result = (*agent)->Send("t", {.run_id = "r1"});
  ASSERT_TRUE(result.ok()) << result.status();
  EXPECT_EQ(result->status, store::RunStatus::kCompleted);
  EXPECT_EQ(r.clock.slept(), std::chrono::seconds(6));
}

}  // namespace
}  // namespace mend::agent::testing
