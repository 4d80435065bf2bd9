// AgentOptions::stop: a run stops at its next checkpoint, stays running with its lease released,
// and a later Resume continues it without asking a model turn again or re-running a tool.
// SendOptions::on_created: the caller learns the id before the model is asked.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <memory>
#include <string>

#include "tests/agent/agent_test_support.h"
#include "tests/support/status_matchers.h"

namespace mend::agent::testing {
namespace {

using ::testing::Contains;
using ::testing::Not;

class AgentStopTest : public ::testing::TestWithParam<StoreKind> {
 protected:
  std::unique_ptr<Agent> MakeAgent(llm::LlmProvider& model, const std::string& holder,
                                   bool requires_approval = false) {
    AgentOptions options = h_.Options(model, holder);
    options.stop = &stop_;
    tool_ = std::make_shared<RecordingTool>("touch", h_.log, requires_approval);
    options.extra_tools = {tool_};
    AgentSpec spec = Harness::Spec();
    spec.tools = {"touch"};
    return std::move(Agent::Create(spec, options)).value();
  }

  // Checks the run as a stop leaves it: running at checkpoint `step`, nobody holding it.
  void ExpectStoppedAt(const std::string& run_id, int64_t step) {
    Result<store::RunRecord> record = h_.store.GetRun(run_id);
    MEND_ASSERT_OK(record);
    EXPECT_EQ(record->status, store::RunStatus::kRunning);
    EXPECT_EQ(record->step, step);
    EXPECT_FALSE(record->lease_holder.has_value());
    EXPECT_THAT(h_.EventTypes(), Contains("run.stopped"));
  }

  Harness h_{GetParam()};
  std::atomic<bool> stop_{false};
  std::shared_ptr<RecordingTool> tool_;
};

INSTANTIATE_TEST_SUITE_P(Stores, AgentStopTest,
                         ::testing::Values(StoreKind::kFake, StoreKind::kSqlite), StoreKindName);

// A tool that gives up because the run is stopping (an MCP call cancelled) records nothing: the
// call stays pending after the last checkpoint and runs again when the run resumes.
TEST_P(AgentStopTest, AToolInterruptedByAStopRunsAgainOnResume) {
  TurnProvider model({Calls({Call("c1", "touch", "{}")}), Answer("done")});
  auto agent = MakeAgent(model, "A");
  tool_->interrupt_on_stop = true;
  tool_->on_call = [this] { stop_.store(true); };  // the stop comes while the call waits
  Result<RunResult> stopped = agent->Send("touch once", {.run_id = "r1"});
  MEND_ASSERT_OK(stopped);
  EXPECT_EQ(stopped->status, store::RunStatus::kRunning);
  EXPECT_FALSE(stopped->error.has_value());
  // Checkpoints: the start and the model turn; c1 has no result.
  ExpectStoppedAt("r1", 2);
  EXPECT_THAT(h_.EventTypes(), Not(Contains("tool.failed")));

  stop_.store(false);
  tool_->on_call = nullptr;
  auto later = MakeAgent(model, "B");
  Result<RunResult> done = later->Resume("r1");
  MEND_ASSERT_OK(done);
  EXPECT_EQ(done->status, store::RunStatus::kCompleted);
  EXPECT_EQ(h_.log->Count("c1"), 2);  // interrupted once, then run to the end
  EXPECT_EQ(model.asked(0), 1);
  EXPECT_EQ(model.asked(1), 1);
}

TEST_P(AgentStopTest, AStopDuringAToolEndsTheAttemptAtThatToolsCheckpoint) {
  TurnProvider model(
      {Calls({Call("c1", "touch", "{}")}), Calls({Call("c2", "touch", "{}")}), Answer("done")});
  auto agent = MakeAgent(model, "A");
  tool_->on_call = [this] { stop_.store(true); };  // the server begins to drain meanwhile
  Result<RunResult> stopped = agent->Send("touch twice", {.run_id = "r1"});
  MEND_ASSERT_OK(stopped);
  EXPECT_EQ(stopped->status, store::RunStatus::kRunning);
  EXPECT_FALSE(stopped->error.has_value());
  EXPECT_EQ(stopped->steps, 1);
  // Checkpoints: the start, the first model turn, c1's result. The second turn was not asked.
  ExpectStoppedAt("r1", 3);
  EXPECT_EQ(model.asked(1), 0);
  EXPECT_EQ(h_.log->Count("c1"), 1);

  // Another process (stop not raised) continues from c1's result.
  stop_.store(false);
  tool_->on_call = nullptr;
  auto later = MakeAgent(model, "B");
  Result<RunResult> done = later->Resume("r1");
  MEND_ASSERT_OK(done);
  EXPECT_EQ(done->status, store::RunStatus::kCompleted);
  EXPECT_EQ(done->output, "done");
  EXPECT_EQ(h_.log->Count("c1"), 1);
  EXPECT_EQ(h_.log->Count("c2"), 1);
  EXPECT_EQ(model.asked(0), 1);
  EXPECT_EQ(model.asked(1), 1);
}

TEST_P(AgentStopTest, AStopRaisedBeforeSendKeepsTheRunAtItsFirstCheckpoint) {
  TurnProvider model({Answer("hello")});
  auto agent = MakeAgent(model, "A");
  stop_.store(true);
  std::string created;
  bool existed_when_told = false;
  SendOptions options;
  options.run_id = "r1";
  options.on_created = [&](const std::string& id) {
    created = id;
    existed_when_told = h_.store.GetRun(id).ok();
  };
  Result<RunResult> stopped = agent->Send("say hello", options);
  MEND_ASSERT_OK(stopped);
  EXPECT_EQ(stopped->status, store::RunStatus::kRunning);
  EXPECT_EQ(created, "r1");
  EXPECT_TRUE(existed_when_told);
  EXPECT_EQ(model.asked(0), 0);
  ExpectStoppedAt("r1", 1);

  stop_.store(false);
  Result<RunResult> done = agent->Resume("r1");
  MEND_ASSERT_OK(done);
  EXPECT_EQ(done->status, store::RunStatus::kCompleted);
  EXPECT_EQ(model.asked(0), 1);
}

TEST_P(AgentStopTest, AnApprovalGivenWhileStoppingIsKeptForTheResume) {
  TurnProvider model({Calls({Call("c1", "touch", "{}")}), Answer("touched")});
  auto agent = MakeAgent(model, "A", /*requires_approval=*/true);
  Result<RunResult> waiting = agent->Send("touch it", {.run_id = "r1"});
  MEND_ASSERT_OK(waiting);
  ASSERT_EQ(waiting->status, store::RunStatus::kWaiting);
  stop_.store(true);
  Result<RunResult> approved = agent->Approve("r1");
  MEND_ASSERT_OK(approved);
  EXPECT_EQ(approved->status, store::RunStatus::kRunning);
  EXPECT_EQ(h_.log->size(), 0u);
  Result<store::RunRecord> record = h_.store.GetRun("r1");
  MEND_ASSERT_OK(record);
  EXPECT_EQ(record->waiting, "");
  EXPECT_FALSE(record->lease_holder.has_value());

  // The approval is durable: the resume runs the tool without asking anyone again.
  stop_.store(false);
  Result<RunResult> done = agent->Resume("r1");
  MEND_ASSERT_OK(done);
  EXPECT_EQ(done->status, store::RunStatus::kCompleted);
  EXPECT_EQ(h_.log->Count("c1"), 1);
  EXPECT_THAT(h_.EventTypes(), Not(Contains("run.failed")));
}

TEST_P(AgentStopTest, OnCreatedIsNotCalledWhenTheRunCannotBeCreated) {
  TurnProvider model({Answer("hi")});
  auto agent = MakeAgent(model, "A");
  MEND_ASSERT_OK(agent->Send("first", {.run_id = "r1"}).status());
  int calls = 0;
  SendOptions again;
  again.run_id = "r1";
  again.on_created = [&](const std::string&) { ++calls; };
  EXPECT_THAT(agent->Send("second", again), ::mend::testing::StatusIs(StatusCode::kAlreadyExists));
  EXPECT_EQ(calls, 0);
}

}  // namespace
}  // namespace mend::agent::testing
