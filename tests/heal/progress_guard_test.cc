#include "mend/heal/progress_guard.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include "tests/heal/hook_test_support.h"
#include "tests/support/status_matchers.h"

namespace mend::heal::testing {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using Kind = agent::PreToolDecision::Kind;

const agent::ToolResult kFailure = agent::ToolResult::Error("connect 10.0.0.7:5432 refused");

// Feeds `n` failures of `call` to the guard; returns the last hint.
std::string Fail(ProgressGuard& guard, const agent::ToolCallInfo& call, int n,
                 const agent::ToolResult& result = kFailure) {
  std::string hint;
  for (int i = 0; i < n; ++i) {
    auto action = guard.AfterTool(call, result);
    EXPECT_TRUE(action.ok()) << action.status();
    if (action.ok()) hint = action->append_hint;
  }
  return hint;
}

Kind DecisionFor(ProgressGuard& guard, const agent::ToolCallInfo& call) {
  auto decision = guard.BeforeTool(call);
  EXPECT_TRUE(decision.ok()) << decision.status();
  return decision.ok() ? decision->kind : Kind::kAllow;
}

TEST(NormalizeErrorTest, DigitsHexAndWhitespaceDoNotMatter) {
  EXPECT_EQ(NormalizeError("timeout  after 1500 ms\n at 0x7ffd12ab"),
            NormalizeError("timeout after 30 ms at 0x7ffe00ff"));
  EXPECT_EQ(NormalizeError("request 3f9a2c1e failed"), "request # failed");
  EXPECT_EQ(NormalizeError("  bad   file\tdeadbeef "), "bad file deadbeef");
  EXPECT_NE(NormalizeError("no such file"), NormalizeError("permission denied"));
}

TEST(ProgressGuardTest, HintsOnlyWhenTheFailureRepeats) {
  ProgressGuard guard;
  agent::RunInfo run{"r1", "task", nullptr, ""};
  auto call = CallOf(run, "fetch", R"({"url":"x"})");
  EXPECT_EQ(Fail(guard, call, 1), "");
  EXPECT_EQ(DecisionFor(guard, call), Kind::kAllow);  // one failure is not a loop
  EXPECT_EQ(Fail(guard, call, 1, agent::ToolResult::Error("connect 10.0.0.8:5432  refused")),
            "This call failed the same way 2 times: connect 10.0.0.8:5432 refused. Change the "
            "arguments or try a different approach.");
}

TEST(ProgressGuardTest, DeniesRepeatedArgumentsButAllowsNewOnes) {
  ProgressGuard guard;
  agent::RunInfo run{"r1", "task", nullptr, ""};
  Fail(guard, CallOf(run, "fetch", R"({"url":"x","n":1})"), 2);
  auto same = guard.BeforeTool(CallOf(run, "fetch", R"({ "n": 1, "url": "x" })"));
  ASSERT_TRUE(same.ok());
  EXPECT_EQ(same->kind, Kind::kDeny);
  EXPECT_THAT(same->text, HasSubstr("already failed the same way 2 times"));
  EXPECT_EQ(DecisionFor(guard, CallOf(run, "fetch", R"({"url":"y","n":1})")), Kind::kAllow);
  EXPECT_EQ(DecisionFor(guard, CallOf(run, "other", R"({"url":"x","n":1})")), Kind::kAllow);
}

TEST(ProgressGuardTest, StopsAfterMaxDenialsAndForgetsTheRun) {
  ProgressGuard guard({.repeat_threshold = 2, .max_denials = 3});
  agent::RunInfo run{"r1", "task", nullptr, ""};
  auto call = CallOf(run, "fetch");
  Fail(guard, call, 2);
  for (int i = 0; i < 3; ++i) EXPECT_EQ(DecisionFor(guard, call), Kind::kDeny) << i;
  auto stop = guard.BeforeTool(call);
  ASSERT_TRUE(stop.ok());
  EXPECT_EQ(stop->kind, Kind::kStopRun);
  EXPECT_EQ(stop->detail_code, "MEND_RUN_NO_PROGRESS");
  EXPECT_THAT(stop->text, HasSubstr("fetch kept failing the same way"));
  EXPECT_EQ(guard.tracked_runs(), 0u);
  EXPECT_EQ(DecisionFor(guard, call), Kind::kAllow);
}

TEST(ProgressGuardTest, SuccessOfTheToolEndsTheStreak) {
  ProgressGuard guard;
  agent::RunInfo run{"r1", "task", nullptr, ""};
  auto call = CallOf(run, "fetch");
  Fail(guard, call, 2);
  ASSERT_TRUE(guard.AfterTool(CallOf(run, "other"), agent::ToolResult::Ok("fine")).ok());
  EXPECT_EQ(DecisionFor(guard, call), Kind::kDeny);  // another tool's success does not reset
  ASSERT_TRUE(
      guard.AfterTool(CallOf(run, "fetch", R"({"v":2})"), agent::ToolResult::Ok("ok")).ok());
  EXPECT_EQ(DecisionFor(guard, call), Kind::kAllow);
  EXPECT_EQ(Fail(guard, call, 1), "");  // a new streak starts from one
}

TEST(ProgressGuardTest, ADifferentErrorStartsANewStreak) {
  ProgressGuard guard;
  agent::RunInfo run{"r1", "task", nullptr, ""};
  auto call = CallOf(run, "fetch");
  Fail(guard, call, 2);
  EXPECT_EQ(Fail(guard, call, 1, agent::ToolResult::Error("permission denied")), "");
  EXPECT_EQ(DecisionFor(guard, call), Kind::kAllow);
}

TEST(ProgressGuardTest, RunsAreTrackedSeparatelyAndBounded) {
  ProgressGuard guard({.max_runs = 2});
  agent::RunInfo a{"a", "t", nullptr, ""}, b{"b", "t", nullptr, ""}, c{"c", "t", nullptr, ""};
  Fail(guard, CallOf(a, "fetch"), 2);
  EXPECT_EQ(DecisionFor(guard, CallOf(b, "fetch")), Kind::kAllow);
  Fail(guard, CallOf(b, "fetch"), 2);
  Fail(guard, CallOf(c, "fetch"), 2);  // evicts a, the least recently seen
  EXPECT_EQ(guard.tracked_runs(), 2u);
  EXPECT_EQ(DecisionFor(guard, CallOf(a, "fetch")), Kind::kAllow);
  EXPECT_EQ(DecisionFor(guard, CallOf(b, "fetch")), Kind::kDeny);
  EXPECT_EQ(DecisionFor(guard, CallOf(c, "fetch")), Kind::kDeny);
}

TEST(ProgressGuardTest, PublishesHealActionEvents) {
  ManualClock clock;
  obs::EventBus bus(clock);
  auto sink = std::make_shared<obs::MemorySink>();
  bus.Subscribe(sink);
  ProgressGuard guard({.repeat_threshold = 1, .max_denials = 1, .events = &bus});
  agent::RunInfo run{"r9", "t", nullptr, ""};
  auto call = CallOf(run, "fetch", "{}", 4);
  Fail(guard, call, 1);
  EXPECT_EQ(DecisionFor(guard, call), Kind::kDeny);
  EXPECT_EQ(DecisionFor(guard, call), Kind::kStopRun);
  std::vector<std::string> actions;
  for (const obs::Event& e : sink->events()) {
    ASSERT_EQ(e.type(), "heal.action");
    EXPECT_EQ(e.Find("run"), "\"r9\"");
    EXPECT_EQ(e.Find("step"), "4");
    EXPECT_EQ(e.Find("tool"), "\"fetch\"");
    EXPECT_TRUE(e.Find("reason").has_value());
    actions.emplace_back(e.Find("action").value_or(""));
  }
  EXPECT_THAT(actions, ElementsAre("\"hint\"", "\"deny\"", "\"stop\""));
}

TEST(ProgressGuardEndToEndTest, LoopingRunHintsDeniesThenStopsWithNoProgress) {
  auto tool = std::make_shared<FixedTool>("fetch", "connection refused", /*is_error=*/true);
  std::vector<llm::ScriptedStep> script;
  for (int i = 1; i <= 6; ++i) script.push_back(CallStep("c" + std::to_string(i), "fetch", "{}"));
  script.push_back(TextStep("never reached"));
  AgentRig rig(std::move(script), {tool});
  ASSERT_NE(rig.agent, nullptr);
  auto guard = std::make_shared<ProgressGuard>(ProgressGuardOptions{.events = &rig.bus});
  rig.agent->AddPreToolHook(guard);
  rig.agent->AddPostToolHook(guard);

  auto result = rig.agent->Send("fetch it", {"run-1", ""});
  ASSERT_TRUE(result.ok()) << result.status();
  EXPECT_EQ(result->status, store::RunStatus::kFailed);
  ASSERT_TRUE(result->error.has_value());
  EXPECT_EQ(result->error->code, "MEND_RUN_NO_PROGRESS");
  EXPECT_FALSE(result->error->retryable);
  EXPECT_EQ(tool->calls(), 2);  // denied and stopped calls never ran
  EXPECT_EQ(rig.model.remaining(), 1u);
  EXPECT_THAT(rig.HealActions(),
              ElementsAre("hint:fetch", "deny:fetch", "deny:fetch", "deny:fetch", "stop:fetch"));

  auto record = rig.store.GetRun("run-1");
  ASSERT_TRUE(record.ok()) << record.status();
  EXPECT_EQ(record->status, store::RunStatus::kFailed);
  ASSERT_TRUE(record->last_error.has_value());
  EXPECT_EQ(record->last_error->code, "MEND_RUN_NO_PROGRESS");
  EXPECT_EQ(record->last_error->error_class, "permanent");
  EXPECT_FALSE(record->last_error->retryable);

  // What the model saw: the hinted second failure, then the denials.
  auto requests = rig.model.requests();
  ASSERT_EQ(requests.size(), 6u);
  EXPECT_THAT(requests[2].messages.back().content,
              HasSubstr("This call failed the same way 2 times: connection refused (attempt 2)"));
  EXPECT_THAT(requests[3].messages.back().content, HasSubstr("Not run: fetch already failed"));
  EXPECT_TRUE(requests[3].messages.back().is_error);
}

}  // namespace
}  // namespace mend::heal::testing
