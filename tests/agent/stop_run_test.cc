#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <memory>
#include <string>

#include "tests/agent/agent_test_support.h"
#include "tests/support/status_matchers.h"

namespace mend::agent::testing {
namespace {

using ::testing::HasSubstr;

// Stops the run on its first `stops` calls and allows every later one.
class StoppingHook final : public PreToolHook, public PostRunHook {
 public:
  explicit StoppingHook(int stops) : stops_(stops) {}
  std::string_view name() const override { return "stopper"; }
  Result<PreToolDecision> BeforeTool(const ToolCallInfo&) override {
    if (asked_++ < stops_)
      return PreToolDecision::StopRun("no progress here", "MEND_RUN_NO_PROGRESS");
    return PreToolDecision::Allow();
  }
  Status AfterRun(RunOutcome& outcome) override {
    seen_error = outcome.error;
    return OkStatus();
  }
  Status seen_error;

 private:
  int stops_;
  int asked_ = 0;
};

struct StopSetup {
  Harness h;
  TurnProvider model{{Calls({Call("c1", "touch", "{}")}), Answer("done")}};
  std::shared_ptr<StoppingHook> hook;
  std::unique_ptr<Agent> agent;
  explicit StopSetup(int stops) : hook(std::make_shared<StoppingHook>(stops)) {
    AgentOptions options = h.Options(model);
    options.extra_tools = {std::make_shared<RecordingTool>("touch", h.log)};
    agent = std::move(Agent::Create(Harness::Spec(), options)).value();
    agent->AddPreToolHook(hook);
    agent->AddPostRunHook(hook);
  }
};

TEST(StopRunTest, StopRunFailsTheRunPermanentlyWithoutRunningTheTool) {
  StopSetup s(1);
  auto result = s.agent->Send("t", {"r1", ""});
  ASSERT_TRUE(result.ok()) << result.status();
  EXPECT_EQ(result->status, store::RunStatus::kFailed);
  ASSERT_TRUE(result->error.has_value());
  EXPECT_EQ(result->error->code, "MEND_RUN_NO_PROGRESS");
  EXPECT_EQ(result->error->message, "no progress here");
  EXPECT_EQ(result->error->error_class, "permanent");
  EXPECT_FALSE(result->error->retryable);
  EXPECT_EQ(s.h.log->size(), 0u);  // the tool did not run
  EXPECT_EQ(s.model.asked(1), 0);  // the model was not asked again

  auto record = s.h.store.GetRun("r1");
  ASSERT_TRUE(record.ok()) << record.status();
  EXPECT_EQ(record->status, store::RunStatus::kFailed);
  ASSERT_TRUE(record->last_error.has_value());
  EXPECT_EQ(record->last_error->code, "MEND_RUN_NO_PROGRESS");
  EXPECT_EQ(record->last_error->error_class, "permanent");
  EXPECT_FALSE(record->last_error->retryable);
}

TEST(StopRunTest, PostRunHooksSeeTheStopErrorAndRunFailedIsPublished) {
  StopSetup s(1);
  ASSERT_TRUE(s.agent->Send("t").ok());
  EXPECT_EQ(s.hook->seen_error.code(), StatusCode::kFailedPrecondition);
  EXPECT_EQ(s.hook->seen_error.detail_code(), "MEND_RUN_NO_PROGRESS");
  EXPECT_FALSE(IsRetryable(s.hook->seen_error));
  bool failed_with_code = false;
  for (const obs::Event& e : s.h.sink->events()) {
    if (e.type() == "run.failed") failed_with_code = e.Find("code") == "\"MEND_RUN_NO_PROGRESS\"";
  }
  EXPECT_TRUE(failed_with_code);
}

TEST(StopRunTest, StoppedCallIsRecordedSoAResumedRunContinues) {
  StopSetup s(1);
  ASSERT_TRUE(s.agent->Send("t", {"r1", ""}).ok());
  auto snapshot = s.h.store.Load("r1");
  ASSERT_TRUE(snapshot.ok()) << snapshot.status();
  ASSERT_FALSE(snapshot->messages.empty());
  EXPECT_THAT(snapshot->messages.back(), HasSubstr("no progress here"));

  // The call already has its (error) result, so resuming asks the model for the next turn.
  auto resumed = s.agent->Resume("r1");
  ASSERT_TRUE(resumed.ok()) << resumed.status();
  EXPECT_EQ(resumed->status, store::RunStatus::kCompleted);
  EXPECT_EQ(resumed->output, "done");
  EXPECT_EQ(s.h.log->size(), 0u);
  auto request = s.model.requests().back();
  ASSERT_FALSE(request.messages.empty());
  EXPECT_TRUE(request.messages.back().is_error);
  EXPECT_EQ(request.messages.back().content, "no progress here");
}

}  // namespace
}  // namespace mend::agent::testing
