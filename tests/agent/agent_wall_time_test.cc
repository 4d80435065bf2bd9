// limits.max_wall_seconds counts the time a run ran (its attempts), not the time it lay crashed or
// waited (docs/runs.md, "Limits").
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "tests/agent/agent_test_support.h"
#include "tests/support/status_matchers.h"

namespace mend::agent::testing {
namespace {

using ::mend::testing::StatusIs;

// One tool call per turn for `calls` turns, then the answer.
std::vector<Result<llm::Completion>> CallsThenAnswer(int calls) {
  std::vector<Result<llm::Completion>> turns;
  for (int i = 0; i < calls; ++i) {
    turns.push_back(Calls({Call("c" + std::to_string(i), "touch", "{}")}));
  }
  turns.push_back(Answer("done"));
  return turns;
}

AgentSpec SpecWithWall(std::chrono::seconds wall) {
  AgentSpec spec = Harness::Spec();
  spec.limits.max_wall = wall;
  return spec;
}

// Drives "r1" as process A until `crash_at` (a CrashingStore save number), then leaves it dead.
void CrashRun(Harness& h, TurnProvider& model, const AgentSpec& spec,
              std::shared_ptr<RecordingTool> tool, int crash_at) {
  CrashingStore crashing(h.store, crash_at, CrashPoint::kBeforeSave);
  AgentOptions options = h.Options(model, "A", &crashing);
  options.extra_tools = {std::move(tool)};
  auto agent = Agent::Create(spec, options);
  ASSERT_TRUE(agent.ok());
  EXPECT_THAT((*agent)->Send("touch", {.run_id = "r1"}), StatusIs(StatusCode::kInternal));
  ASSERT_TRUE(crashing.crashed());
  h.MarkDead("A");
}

Result<RunResult> ResumeAsB(Harness& h, TurnProvider& model, const AgentSpec& spec,
                            std::shared_ptr<RecordingTool> tool) {
  AgentOptions options = h.Options(model, "B");
  options.extra_tools = {std::move(tool)};
  auto agent = Agent::Create(spec, options);
  if (!agent.ok()) return agent.status();
  return (*agent)->Resume("r1");
}

TEST(AgentWallTimeTest, DowntimeAfterACrashDoesNotCountAgainstTheLimit) {
  Harness h;
  TurnProvider model(CallsThenAnswer(1));
  auto tool = std::make_shared<RecordingTool>("touch", h.log);
  tool->on_call = [&] { h.clock.Advance(std::chrono::seconds(1)); };
  const AgentSpec spec = SpecWithWall(std::chrono::seconds(3));
  // Saves: 1 start, 2 turn 0, 3 the tool result: the process dies 1 s into the run.
  CrashRun(h, model, spec, tool, 3);
  h.clock.Advance(std::chrono::seconds(4));  // the run lies crashed longer than its limit

  Result<RunResult> resumed = ResumeAsB(h, model, spec, tool);
  ASSERT_TRUE(resumed.ok()) << resumed.status();
  EXPECT_EQ(resumed->status, store::RunStatus::kCompleted);
  EXPECT_FALSE(resumed->error.has_value()) << resumed->error->code;
  EXPECT_EQ(resumed->output, "done");
}

TEST(AgentWallTimeTest, TheTimeOfEveryAttemptAddsUp) {
  Harness h;
  TurnProvider model(CallsThenAnswer(2));
  auto tool = std::make_shared<RecordingTool>("touch", h.log);
  tool->on_call = [&] { h.clock.Advance(std::chrono::seconds(2)); };
  const AgentSpec spec = SpecWithWall(std::chrono::seconds(3));
  // Saves: 1 start, 2 turn 0, 3 c0's result (2 s of running), 4 turn 1: the process dies there.
  CrashRun(h, model, spec, tool, 4);
  h.clock.Advance(std::chrono::hours(1));

  // Turn 1 and c1 take 2 s more: 4 s of running in all, past the limit of 3 s.
  Result<RunResult> resumed = ResumeAsB(h, model, spec, tool);
  ASSERT_TRUE(resumed.ok()) << resumed.status();
  ASSERT_TRUE(resumed->error.has_value());
  EXPECT_EQ(resumed->error->code, "MEND_RUN_MAX_WALL");
  EXPECT_EQ(model.asked(2), 0);
}

TEST(AgentWallTimeTest, ARealErrorIsNotReplacedByTheLimitAfterDowntime) {
  Harness h;
  TurnProvider model({UnauthenticatedError("openai HTTP 401: bad key").WithDetailCode("http_401"),
                      Answer("done")});
  const AgentSpec spec = SpecWithWall(std::chrono::seconds(120));
  {
    AgentOptions options = h.Options(model, "A");
    auto agent = Agent::Create(spec, options);
    ASSERT_TRUE(agent.ok());
    Result<RunResult> failed = (*agent)->Send("t", {.run_id = "r1"});
    ASSERT_TRUE(failed.ok()) << failed.status();
    ASSERT_TRUE(failed->error.has_value());
    EXPECT_EQ(failed->error->code, "UNAUTHENTICATED");
  }
  h.clock.Advance(std::chrono::seconds(210));  // resumed 3.5 minutes later, still with a bad key

  AgentOptions options = h.Options(model, "B");
  auto agent = Agent::Create(spec, options);
  ASSERT_TRUE(agent.ok());
  Result<RunResult> resumed = (*agent)->Resume("r1");
  ASSERT_TRUE(resumed.ok()) << resumed.status();
  ASSERT_TRUE(resumed->error.has_value());
  EXPECT_EQ(resumed->error->code, "UNAUTHENTICATED");
}

TEST(AgentWallTimeTest, ActiveTimeIsKeptInTheRunState) {
  Harness h;
  TurnProvider model(CallsThenAnswer(1));
  auto tool = std::make_shared<RecordingTool>("touch", h.log);
  tool->on_call = [&] { h.clock.Advance(std::chrono::milliseconds(1500)); };
  AgentOptions options = h.Options(model);
  options.extra_tools = {tool};
  auto agent = Agent::Create(Harness::Spec(), options);
  ASSERT_TRUE(agent.ok());
  ASSERT_TRUE((*agent)->Send("t", {.run_id = "r1"}).ok());
  Result<store::RunSnapshot> snapshot = h.store.Load("r1", std::nullopt);
  ASSERT_TRUE(snapshot.ok()) << snapshot.status();
  EXPECT_THAT(snapshot->state, ::testing::HasSubstr("\"active_ms\":1500"));
}

}  // namespace
}  // namespace mend::agent::testing
