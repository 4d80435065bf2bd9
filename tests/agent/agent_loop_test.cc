#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "tests/agent/agent_test_support.h"
#include "tests/support/status_matchers.h"

namespace mend::agent::testing {
namespace {

using ::mend::testing::StatusIs;
using ::testing::ElementsAre;
using ::testing::HasSubstr;

std::unique_ptr<Agent> MakeAgent(Harness& h, llm::LlmProvider& model, AgentSpec spec,
                                 std::vector<std::shared_ptr<Tool>> tools) {
  AgentOptions options = h.Options(model);
  options.extra_tools = std::move(tools);
  auto agent = Agent::Create(std::move(spec), options);
  EXPECT_TRUE(agent.ok());
  return std::move(agent).value();
}

TEST(AgentLoopTest, CreateNeedsProviderStoreAndClock) {
  Harness h;
  TurnProvider model({});
  AgentOptions options = h.Options(model);
  options.store = nullptr;
  EXPECT_THAT(Agent::Create(Harness::Spec(), options), StatusIs(StatusCode::kInvalidArgument));
  options = h.Options(model);
  options.provider = nullptr;
  EXPECT_THAT(Agent::Create(Harness::Spec(), options), StatusIs(StatusCode::kInvalidArgument));
}

TEST(AgentLoopTest, SpecToolsComeFromBuiltinsAndUnknownOnesAreRejected) {
  Harness h;
  TurnProvider model({Answer("ok")});
  AgentSpec spec = Harness::Spec();
  spec.tools = {"read_file", "ask_human"};
  auto agent = MakeAgent(h, model, spec, {std::make_shared<RecordingTool>("touch", h.log)});
  ASSERT_TRUE(agent->Send("t").ok());
  std::vector<std::string> names;
  const auto requests = model.requests();
  for (const auto& def : requests[0].tools) names.push_back(def.name);
  EXPECT_THAT(names, ElementsAre("touch", "read_file", "ask_human"));

  spec.tools = {"teleport"};
  EXPECT_THAT(Agent::Create(spec, h.Options(model)),
              StatusIs(StatusCode::kInvalidArgument, HasSubstr("teleport")));
}

TEST(AgentLoopTest, ToolResultsReachTheModelAndUsageAddsUp) {
  Harness h;
  TurnProvider model({Calls({Call("c1", "touch", R"({"f":"a"})")}), Answer("done")});
  auto agent =
      MakeAgent(h, model, Harness::Spec(), {std::make_shared<RecordingTool>("touch", h.log)});
  auto result = agent->Send("touch a", {.run_id = "r1"});
  ASSERT_TRUE(result.ok()) << result.status();
  EXPECT_EQ(result->status, store::RunStatus::kCompleted);
  EXPECT_EQ(result->output, "done");
  EXPECT_EQ(result->steps, 2);
  EXPECT_EQ(result->input_tokens, 20);
  EXPECT_EQ(result->output_tokens, 10);
  EXPECT_DOUBLE_EQ(result->cost_usd, 0.002);

  auto requests = model.requests();
  ASSERT_EQ(requests.size(), 2u);
  ASSERT_EQ(requests[0].tools.size(), 1u);
  EXPECT_EQ(requests[0].tools[0].name, "touch");
  const auto& second = requests[1].messages;
  ASSERT_EQ(second.size(), 4u);  // system, user, assistant, tool
  EXPECT_EQ(second[0].role, llm::Role::kSystem);
  EXPECT_EQ(second[1].content, "touch a");
  EXPECT_EQ(second[3].tool_call_id, "c1");
  EXPECT_EQ(second[3].content, R"(touch did {"f":"a"})");
  auto record = h.store.GetRun("r1");
  ASSERT_TRUE(record.ok());
  EXPECT_EQ(record->status, store::RunStatus::kCompleted);
  EXPECT_EQ(record->agent, "helper");
  EXPECT_FALSE(record->lease_holder.has_value());  // released
}

TEST(AgentLoopTest, SystemPromptHasInstructionsSkillsAndSectionsInOrder) {
  Harness h;
  TurnProvider model({Answer("ok")});
  AgentSpec spec = Harness::Spec();
  spec.skills.push_back({"grep-first", "search before editing", "Use grep.", "skills/g.md"});
  auto agent = MakeAgent(h, model, spec, {});
  struct Section final : PreRunHook {
    std::string text;
    explicit Section(std::string t) : text(std::move(t)) {}
    std::string_view name() const override { return "section"; }
    Result<std::string> ContextSection(const RunInfo& run) override {
      return run.task.empty() ? "" : text;
    }
  };
  agent->AddPreRunHook(std::make_shared<Section>("## Long-term Memory\n- fact"));
  agent->AddPreRunHook(std::make_shared<Section>(""));
  ASSERT_TRUE(agent->Send("go").ok());
  EXPECT_EQ(model.requests()[0].messages[0].content,
            "You help.\n\n## Skill: grep-first\nsearch before editing\n\nUse grep.\n\n"
            "## Long-term Memory\n- fact");
}

TEST(AgentLoopTest, BadToolCallsGoBackToTheModelAsToolErrors) {
  Harness h;
  TurnProvider model({Calls({Call("c1", "touch", "{not json"), Call("c2", "nope", "{}"),
                             Call("c3", "touch", "[1]")}),
                      Answer("recovered")});
  auto agent =
      MakeAgent(h, model, Harness::Spec(), {std::make_shared<RecordingTool>("touch", h.log)});
  auto result = agent->Send("t");
  ASSERT_TRUE(result.ok()) << result.status();
  EXPECT_EQ(result->output, "recovered");
  EXPECT_EQ(h.log->size(), 0u);
  const auto messages = model.requests()[1].messages;
  ASSERT_EQ(messages.size(), 6u);
  for (size_t i = 3; i < 6; ++i) EXPECT_TRUE(messages[i].is_error) << i;
  EXPECT_THAT(messages[4].content, HasSubstr("unknown tool"));
  auto types = h.EventTypes();
  EXPECT_EQ(std::count(types.begin(), types.end(), "tool.failed"), 3);
}

TEST(AgentLoopTest, HostileToolOutputIsCutAndSurvivesTheCheckpoint) {
  Harness h;
  TurnProvider model({Calls({Call("c1", "touch", "{}")}), Answer("ok")});
  auto tool = std::make_shared<RecordingTool>("touch", h.log);
  tool->output = std::string(300 * 1024, 'x') + "\xff\xfe";
  auto agent = MakeAgent(h, model, Harness::Spec(), {tool});
  ASSERT_TRUE(agent->Send("t", {.run_id = "r1"}).ok());
  const std::string seen = model.requests()[1].messages[3].content;
  EXPECT_LT(seen.size(), 257u * 1024);
  EXPECT_THAT(seen, HasSubstr("truncated"));
}

TEST(AgentLoopTest, ProviderErrorFailsTheRunAndResumeAsksAgain) {
  Harness h;
  TurnProvider model({Calls({Call("c1", "touch", "{}")}),
                      Result<llm::Completion>(UnavailableError("503 from upstream"))});
  auto agent =
      MakeAgent(h, model, Harness::Spec(), {std::make_shared<RecordingTool>("touch", h.log)});
  auto failed = agent->Send("t", {.run_id = "r1"});
  ASSERT_TRUE(failed.ok()) << failed.status();
  EXPECT_EQ(failed->status, store::RunStatus::kFailed);
  ASSERT_TRUE(failed->error.has_value());
  EXPECT_EQ(failed->error->code, "UNAVAILABLE");
  EXPECT_EQ(failed->error->error_class, "transient");
  EXPECT_TRUE(failed->error->retryable);
  auto record = h.store.GetRun("r1");
  ASSERT_TRUE(record.ok());
  EXPECT_EQ(record->status, store::RunStatus::kFailed);
  EXPECT_EQ(record->last_error->code, "UNAVAILABLE");

  model.SetTurn(1, Answer("second try"));
  auto resumed = agent->Resume("r1");
  ASSERT_TRUE(resumed.ok()) << resumed.status();
  EXPECT_EQ(resumed->output, "second try");
  EXPECT_EQ(model.asked(0), 1);
  EXPECT_EQ(model.asked(1), 2);
  EXPECT_EQ(h.log->size(), 1u);
  record = h.store.GetRun("r1");
  EXPECT_EQ(record->status, store::RunStatus::kCompleted);
  EXPECT_FALSE(record->last_error.has_value());
}

TEST(AgentLoopTest, MaxStepsFailsPermanently) {
  Harness h;
  TurnProvider model(
      {Calls({Call("c1", "touch", "{}")}), Calls({Call("c2", "touch", "{}")}), Answer("never")});
  AgentSpec spec = Harness::Spec();
  spec.limits.max_steps = 2;
  auto agent = MakeAgent(h, model, spec, {std::make_shared<RecordingTool>("touch", h.log)});
  auto result = agent->Send("t");
  ASSERT_TRUE(result.ok());
  EXPECT_EQ(result->status, store::RunStatus::kFailed);
  EXPECT_EQ(result->error->code, "MEND_RUN_MAX_STEPS");
  EXPECT_EQ(result->error->error_class, "permanent");
  EXPECT_FALSE(result->error->retryable);
  EXPECT_EQ(result->steps, 2);
  EXPECT_EQ(model.asked(2), 0);
}

TEST(AgentLoopTest, MaxCostFailsTheRun) {
  Harness h;
  TurnProvider model({Calls({Call("c1", "touch", "{}")}, 0.6),
                      Calls({Call("c2", "touch", "{}")}, 0.6), Answer("never")});
  auto agent =
      MakeAgent(h, model, Harness::Spec(), {std::make_shared<RecordingTool>("touch", h.log)});
  auto result = agent->Send("t");
  ASSERT_TRUE(result.ok());
  EXPECT_EQ(result->error->code, "MEND_RUN_MAX_COST");
  EXPECT_DOUBLE_EQ(result->cost_usd, 1.2);
}

TEST(AgentLoopTest, MaxWallFailsTheRun) {
  Harness h;
  TurnProvider model({Calls({Call("c1", "touch", "{}")}), Answer("never")});
  auto tool = std::make_shared<RecordingTool>("touch", h.log);
  // Within the lease the loop takes for a tool (lease_ttl + the tool's timeout), past max_wall.
  tool->on_call = [&] { h.clock.Advance(std::chrono::seconds(21)); };
  AgentSpec spec = Harness::Spec();
  spec.limits.max_wall = std::chrono::seconds(20);
  auto agent = MakeAgent(h, model, spec, {tool});
  auto result = agent->Send("t");
  ASSERT_TRUE(result.ok()) << result.status();
  EXPECT_EQ(result->error->code, "MEND_RUN_MAX_WALL");
  EXPECT_EQ(model.asked(1), 0);
}

TEST(AgentLoopTest, EventsDescribeTheRun) {
  Harness h;
  TurnProvider model({Calls({Call("c1", "touch", "{}")}), Answer("done")});
  auto agent =
      MakeAgent(h, model, Harness::Spec(), {std::make_shared<RecordingTool>("touch", h.log)});
  ASSERT_TRUE(agent->Send("t", {.run_id = "r1"}).ok());
  EXPECT_THAT(h.EventTypes(), ElementsAre("run.started", "step.completed", "tool.called",
                                          "step.completed", "run.completed"));
  auto events = h.sink->events();
  EXPECT_EQ(*events[0].Find("agent"), "\"helper\"");
  EXPECT_EQ(*events[2].Find("call_id"), "\"c1\"");
  EXPECT_EQ(*events[2].Find("step"), "1");
  EXPECT_EQ(*events[4].Find("steps"), "2");

  TurnProvider broken({Result<llm::Completion>(PermissionDeniedError("no"))});
  auto other = MakeAgent(h, broken, Harness::Spec(), {});
  h.sink->Clear();
  ASSERT_TRUE(other->Send("t", {.run_id = "r2"}).ok());
  events = h.sink->events();
  ASSERT_EQ(events.back().type(), "run.failed");
  EXPECT_EQ(*events.back().Find("class"), "\"auth\"");
  EXPECT_EQ(*events.back().Find("code"), "\"PERMISSION_DENIED\"");
}

TEST(AgentLoopTest, ContinueFromStartsWithThePreviousConversation) {
  Harness h;
  TurnProvider first({Answer("hello")});
  auto a = MakeAgent(h, first, Harness::Spec(), {});
  ASSERT_TRUE(a->Send("hi", {.run_id = "turn1"}).ok());
  TurnProvider second({Answer("unused"), Answer("again")});
  auto b = MakeAgent(h, second, Harness::Spec(), {});
  auto result = b->Send("more", {.run_id = "turn2", .continue_from = "turn1"});
  ASSERT_TRUE(result.ok()) << result.status();
  EXPECT_EQ(result->output, "again");
  const auto messages = second.requests()[0].messages;
  ASSERT_EQ(messages.size(), 4u);
  EXPECT_EQ(messages[1].content, "hi");
  EXPECT_EQ(messages[2].content, "hello");
  EXPECT_EQ(messages[3].content, "more");
}

TEST(AgentLoopTest, DuplicateRunIdIsAlreadyExists) {
  Harness h;
  TurnProvider model({Answer("a")});
  auto agent = MakeAgent(h, model, Harness::Spec(), {});
  ASSERT_TRUE(agent->Send("t", {.run_id = "same"}).ok());
  EXPECT_THAT(agent->Send("t", {.run_id = "same"}), StatusIs(StatusCode::kAlreadyExists));
  auto generated = agent->Send("t");
  ASSERT_TRUE(generated.ok());
  EXPECT_THAT(generated->run_id, ::testing::StartsWith("run-"));
}

}  // namespace
}  // namespace mend::agent::testing
