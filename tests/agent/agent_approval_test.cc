#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "tests/agent/agent_test_support.h"
#include "tests/support/status_matchers.h"

namespace mend::agent::testing {
namespace {

using ::mend::testing::StatusIs;
using ::testing::HasSubstr;

std::unique_ptr<Agent> MakeAgent(Harness& h, llm::LlmProvider& model, const std::string& holder,
                                 bool requires_approval) {
  AgentOptions options = h.Options(model, holder);
  options.extra_tools = {std::make_shared<RecordingTool>("deploy", h.log, requires_approval)};
  AgentSpec spec = Harness::Spec();
  spec.tools = {"deploy", "ask_human"};
  return std::move(Agent::Create(spec, options)).value();
}

// Waiting runs survive on the fake and on the SQLite store alike.
class AgentApprovalTest : public ::testing::TestWithParam<StoreKind> {};

INSTANTIATE_TEST_SUITE_P(Stores, AgentApprovalTest,
                         ::testing::Values(StoreKind::kFake, StoreKind::kSqlite), StoreKindName);

TEST_P(AgentApprovalTest, WaitingRunSurvivesANewAgentAndContinuesAfterApproval) {
  Harness h(GetParam());
  TurnProvider model({Calls({Call("c1", "deploy", R"({"env":"prod"})")}), Answer("deployed")});
  {
    auto agent = MakeAgent(h, model, "A", true);
    auto waiting = agent->Send("ship it", {.run_id = "r1"});
    ASSERT_TRUE(waiting.ok()) << waiting.status();
    EXPECT_EQ(waiting->status, store::RunStatus::kWaiting);
    EXPECT_EQ(waiting->waiting, "approval");
    EXPECT_THAT(waiting->question, HasSubstr("deploy"));
    EXPECT_EQ(h.log->size(), 0u);
    EXPECT_THAT(agent->Resume("r1"),
                StatusIs(StatusCode::kFailedPrecondition, HasSubstr("approve")));
    EXPECT_THAT(agent->Answer("r1", "x"), StatusIs(StatusCode::kFailedPrecondition));
  }
  auto record = h.store.GetRun("r1");
  ASSERT_TRUE(record.ok());
  EXPECT_EQ(record->status, store::RunStatus::kWaiting);
  EXPECT_EQ(record->waiting, "approval");
  EXPECT_FALSE(record->lease_holder.has_value());

  auto agent = MakeAgent(h, model, "B", true);  // a new process
  auto done = agent->Approve("r1");
  ASSERT_TRUE(done.ok()) << done.status();
  EXPECT_EQ(done->status, store::RunStatus::kCompleted);
  EXPECT_EQ(done->output, "deployed");
  EXPECT_EQ(h.log->Count("c1"), 1);
  EXPECT_EQ(model.asked(0), 1);
  EXPECT_THAT(agent->Approve("r1"), StatusIs(StatusCode::kFailedPrecondition));
  auto types = h.EventTypes();
  EXPECT_EQ(std::count(types.begin(), types.end(), "run.waiting"), 1);
}

TEST_P(AgentApprovalTest, DenyReturnsTheReasonAsAToolError) {
  Harness h(GetParam());
  TurnProvider model({Calls({Call("c1", "deploy", "{}")}), Answer("ok, not deploying")});
  auto agent = MakeAgent(h, model, "A", true);
  ASSERT_TRUE(agent->Send("ship", {.run_id = "r1"}).ok());
  auto done = agent->Deny("r1", "freeze week");
  ASSERT_TRUE(done.ok()) << done.status();
  EXPECT_EQ(done->output, "ok, not deploying");
  EXPECT_EQ(h.log->size(), 0u);
  llm::Message result = model.requests().at(1).messages.at(3);
  EXPECT_TRUE(result.is_error);
  EXPECT_THAT(result.content, HasSubstr("freeze week"));
}

TEST_P(AgentApprovalTest, AskHumanWaitsForAnAnswerThatBecomesTheToolResult) {
  Harness h(GetParam());
  TurnProvider model(
      {Calls({Call("q1", "ask_human", R"({"question":"which colour?"})")}), Answer("blue it is")});
  auto agent = MakeAgent(h, model, "A", false);
  auto waiting = agent->Send("paint", {.run_id = "r1"});
  ASSERT_TRUE(waiting.ok());
  EXPECT_EQ(waiting->waiting, "question");
  EXPECT_EQ(waiting->question, "which colour?");
  EXPECT_THAT(agent->Approve("r1"), StatusIs(StatusCode::kFailedPrecondition));
  EXPECT_THAT(agent->Resume("r1"), StatusIs(StatusCode::kFailedPrecondition, HasSubstr("answer")));
  auto done = agent->Answer("r1", "blue");
  ASSERT_TRUE(done.ok()) << done.status();
  EXPECT_EQ(done->output, "blue it is");
  llm::Message result = model.requests().at(1).messages.at(3);
  EXPECT_EQ(result.tool_call_id, "q1");
  EXPECT_EQ(result.content, "blue");
  EXPECT_FALSE(result.is_error);
}

class AskOnce final : public PreToolHook {
 public:
  std::string_view name() const override { return "ask"; }
  Result<PreToolDecision> BeforeTool(const ToolCallInfo& call) override {
    ++asked;
    return PreToolDecision::AskHuman("risky: " + call.tool);
  }
  int asked = 0;
};

TEST_P(AgentApprovalTest, ApprovedCallIsNotSentBackThroughPreToolHooks) {
  Harness h(GetParam());
  TurnProvider model({Calls({Call("c1", "deploy", "{}")}), Answer("done")});
  auto agent = MakeAgent(h, model, "A", false);
  auto hook = std::make_shared<AskOnce>();
  agent->AddPreToolHook(hook);
  auto waiting = agent->Send("t", {.run_id = "r1"});
  ASSERT_TRUE(waiting.ok());
  EXPECT_EQ(waiting->waiting, "approval");
  EXPECT_EQ(waiting->question, "risky: deploy");
  auto done = agent->Approve("r1");
  ASSERT_TRUE(done.ok()) << done.status();
  EXPECT_EQ(done->output, "done");
  EXPECT_EQ(hook->asked, 1);
  EXPECT_EQ(h.log->Count("c1"), 1);
}

TEST_P(AgentApprovalTest, WaitingTimeDoesNotCountAgainstWallLimit) {
  Harness h(GetParam());
  TurnProvider model({Calls({Call("c1", "deploy", "{}")}), Answer("done")});
  auto agent = MakeAgent(h, model, "A", true);
  ASSERT_TRUE(agent->Send("t", {.run_id = "r1"}).ok());
  h.clock.Advance(std::chrono::hours(5));  // the person took their time
  auto done = agent->Approve("r1");
  ASSERT_TRUE(done.ok());
  EXPECT_EQ(done->status, store::RunStatus::kCompleted);
}

TEST_P(AgentApprovalTest, ApproveOfUnknownRunIsNotFound) {
  Harness h(GetParam());
  TurnProvider model({});
  auto agent = MakeAgent(h, model, "A", true);
  EXPECT_THAT(agent->Approve("nope"), StatusIs(StatusCode::kNotFound));
}

}  // namespace
}  // namespace mend::agent::testing
