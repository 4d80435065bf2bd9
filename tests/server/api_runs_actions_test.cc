// The runs route group, part two: approving, denying and answering waiting runs, resuming, forking,
// the conflicts a client can run into, and a drain that stops a run at its next checkpoint.
#include <gmock/gmock.h>

#include <atomic>
#include <string>
#include <thread>

#include "mend/llm/scripted_provider.h"
#include "tests/server/api_runs_fixture.h"

namespace mend::server {
namespace {

using ::testing::HasSubstr;

// The tool messages of a run's transcript.
std::vector<nlohmann::json> ToolMessages(const nlohmann::json& run) {
  std::vector<nlohmann::json> tools;
  for (const auto& m : run["transcript"]) {
    if (m["role"] == "tool") tools.push_back(m);
  }
  return tools;
}

class RunActionsTest : public RunsApiTest {
 protected:
  // Starts the server with an agent whose `deploy` tool needs approval and a run r1 waiting on it.
  void StartWaitingForApproval(llm::ScriptedStep after) {
    WriteToolAgent("shipper", "[\"deploy\"]", {{"deploy.toml", DeployTool()}});
    StartServer({ToolStep("c1", "deploy", "{}"), std::move(after)});
    ASSERT_EQ(StartRun("shipper", "ship it", "r1").status, 202);
    nlohmann::json run = Settled("r1");
    ASSERT_EQ(run["status"], "waiting") << run.dump();
    ASSERT_EQ(run["waiting"], "approval");
    EXPECT_THAT(run["question"].get<std::string>(), HasSubstr("deploy"));
    ASSERT_EQ(run["pending_calls"].size(), 1u);
    EXPECT_EQ(run["pending_calls"][0]["name"], "deploy");
  }

  // Outlives the runtime (ServerTest::TearDown closes it) in the tests that use it.
  ManualClock clock_;
};

TEST_F(RunActionsTest, AnApprovedRunRunsTheToolAndCompletes) {
  StartWaitingForApproval(TextStep("shipped"));
  Reply approved = Post("/api/v1/runs/r1/approve");
  ASSERT_EQ(approved.status, 202) << approved.text;
  EXPECT_EQ(approved.body, (nlohmann::json{{"run_id", "r1"}, {"status", "running"}}));
  nlohmann::json run = Settled("r1");
  EXPECT_EQ(run["status"], "completed");
  EXPECT_EQ(run["output"], "shipped");
  std::vector<nlohmann::json> tools = ToolMessages(run);
  ASSERT_EQ(tools.size(), 1u);
  EXPECT_EQ(tools[0]["name"], "deploy");
  EXPECT_EQ(tools[0]["tool_call_id"], "c1");
  EXPECT_EQ(tools[0]["is_error"], false);
  EXPECT_THAT(tools[0]["content"].get<std::string>(), HasSubstr("deployed"));
  const nlohmann::json& call = run["transcript"][2]["tool_calls"][0];
  EXPECT_EQ(call["name"], "deploy");
  EXPECT_EQ(call["arguments"], "{}");
  // Nothing waits any more.
  Reply again = Post("/api/v1/runs/r1/approve");
  EXPECT_EQ(again.status, 409);
  EXPECT_EQ(again.body["error"]["code"], "FAILED_PRECONDITION");
}

TEST_F(RunActionsTest, ADeniedCallReachesTheModelAsAToolError) {
  StartWaitingForApproval(TextStep("not deploying then"));
  EXPECT_EQ(Post("/api/v1/runs/r1/deny", {{"reason", 5}}).status, 400);
  ASSERT_EQ(Post("/api/v1/runs/r1/deny", {{"reason", "freeze week"}}).status, 202);
  nlohmann::json run = Settled("r1");
  EXPECT_EQ(run["status"], "completed");
  EXPECT_EQ(run["output"], "not deploying then");
  std::vector<nlohmann::json> tools = ToolMessages(run);
  ASSERT_EQ(tools.size(), 1u);
  EXPECT_EQ(tools[0]["is_error"], true);
  EXPECT_THAT(tools[0]["content"].get<std::string>(), HasSubstr("freeze week"));
}

TEST_F(RunActionsTest, AnAnswerBecomesTheToolResult) {
  WriteToolAgent("painter", "[\"ask_human\"]");
  StartServer(
      {ToolStep("q1", "ask_human", R"({"question":"which colour?"})"), TextStep("blue it is")});
  ASSERT_EQ(StartRun("painter", "paint", "r1").status, 202);
  nlohmann::json waiting = Settled("r1");
  ASSERT_EQ(waiting["status"], "waiting");
  EXPECT_EQ(waiting["waiting"], "question");
  EXPECT_EQ(waiting["question"], "which colour?");
  // An answer needs text; approval does not apply to a question.
  EXPECT_EQ(Post("/api/v1/runs/r1/answer").status, 400);
  EXPECT_EQ(Post("/api/v1/runs/r1/approve").status, 409);
  EXPECT_EQ(Post("/api/v1/runs/r1/resume").status, 409);
  ASSERT_EQ(Post("/api/v1/runs/r1/answer", {{"text", "blue"}}).status, 202);
  nlohmann::json run = Settled("r1");
  EXPECT_EQ(run["status"], "completed");
  std::vector<nlohmann::json> tools = ToolMessages(run);
  ASSERT_EQ(tools.size(), 1u);
  EXPECT_EQ(tools[0]["content"], "blue");
  EXPECT_EQ(Post("/api/v1/runs/r1/answer", {{"text", "again"}}).status, 409);
}

TEST_F(RunActionsTest, ActionsThatDoNotApplyAreConflicts) {
  StartWaitingForApproval(TextStep("done"));
  Reply resume = Post("/api/v1/runs/r1/resume");
  EXPECT_EQ(resume.status, 409);
  EXPECT_THAT(resume.body["error"]["message"].get<std::string>(), HasSubstr("approve"));
  EXPECT_EQ(Post("/api/v1/runs/r1/answer", {{"text", "x"}}).status, 409);
  ASSERT_EQ(Post("/api/v1/runs/r1/approve").status, 202);
  ASSERT_EQ(Settled("r1")["status"], "completed");
  for (const char* action : {"resume", "approve", "deny"}) {
    Reply reply = Post(std::string("/api/v1/runs/r1/") + action);
    EXPECT_EQ(reply.status, 409) << action;
    EXPECT_EQ(reply.body["error"]["code"], "FAILED_PRECONDITION") << action;
  }
}

TEST_F(RunActionsTest, AFailedRunIsResumedToCompletion) {
  WriteAgent("helper");
  llm::ScriptedStep outage;
  outage.error = UnavailableError("upstream 503");
  StartServer({outage, TextStep("second time lucky")});
  ASSERT_EQ(StartRun("helper", "try", "r1").status, 202);
  nlohmann::json failed = Settled("r1");
  ASSERT_EQ(failed["status"], "failed");
  EXPECT_EQ(failed["last_error"]["code"], "UNAVAILABLE");
  EXPECT_EQ(failed["last_error"]["retryable"], true);
  ASSERT_EQ(Post("/api/v1/runs/r1/resume").status, 202);
  nlohmann::json run = Settled("r1");
  EXPECT_EQ(run["status"], "completed");
  EXPECT_EQ(run["output"], "second time lucky");
  EXPECT_EQ(run["last_error"], nullptr);
}

TEST_F(RunActionsTest, AForkIsANewRunFromACheckpointWithoutAModelCall) {
  WriteAgent("helper");
  auto owned = std::make_unique<llm::ScriptedProvider>(std::vector{TextStep("answer")});
  const llm::ScriptedProvider& script = *owned;
  StartWith(std::move(owned));
  ASSERT_EQ(StartRun("helper", "task", "r1").status, 202);
  ASSERT_EQ(Settled("r1")["status"], "completed");
  const size_t asked = script.requests().size();

  Reply newest = Post("/api/v1/runs/r1/fork");
  ASSERT_EQ(newest.status, 201) << newest.text;
  EXPECT_EQ(newest.body["run_id"], "r1.fork-1");
  EXPECT_EQ(newest.body["parent_id"], "r1");
  EXPECT_EQ(newest.body["from_checkpoint"], 2);
  EXPECT_EQ(newest.body["from_step"], 2);  // the old name
  Reply first = Post("/api/v1/runs/r1/fork", {{"from_checkpoint", 1}});
  ASSERT_EQ(first.status, 201) << first.text;
  EXPECT_EQ(first.body["run_id"], "r1.fork-2");
  // The old name of the field is still read.
  Reply old_name = Post("/api/v1/runs/r1/fork", {{"from_step", 1}});
  ASSERT_EQ(old_name.status, 201) << old_name.text;
  EXPECT_EQ(old_name.body["run_id"], "r1.fork-3");
  nlohmann::json fork = Get("/api/v1/runs/r1.fork-2").body;
  EXPECT_EQ(fork["status"], "running");
  EXPECT_EQ(fork["parent"], (nlohmann::json{{"id", "r1"}, {"checkpoint", 1}, {"step", 1}}));
  EXPECT_EQ(fork["transcript"].size(), 2u);  // system and task: the answer came after checkpoint 1
  EXPECT_EQ(script.requests().size(), asked);

  for (const nlohmann::json& bad :
       {nlohmann::json{{"from_step", 3}}, nlohmann::json{{"from_step", -1}},
        nlohmann::json{{"from_step", "1"}}, nlohmann::json{{"from_step", 1.5}}}) {
    Reply reply = Post("/api/v1/runs/r1/fork", bad);
    EXPECT_EQ(reply.status, 400) << bad.dump() << ": " << reply.text;
  }
}

// A run whose model turn is in flight when the server drains: the turn is checkpointed, the run
// stops there with its lease released, and a later resume (here through a new server on the same
// home) continues without asking that turn again or running anything twice.
TEST_F(RunActionsTest, ADrainStopsRunsAtTheirNextCheckpoint) {
  // The drain waits on the runtime's clock; a manual one tells the test when it waits.
  env_.clock = &clock_;
  WriteToolAgent("lister", "[\"list_dir\"]");
  auto owned = std::make_unique<HeldProvider>(
      std::vector<llm::Completion>{CallAnswer("c1", "list_dir", R"({"path":"."})"),
                                   TextAnswer("listed")},
      /*hold_call=*/0);
  HeldProvider& model = *owned;
  StartWith(std::move(owned), {{"observe.enabled", "false"}});
  ASSERT_EQ(StartRun("lister", "list the files", "r1").status, 202);
  model.WaitForCall(0);

  // While the run is driven here, nothing else may drive it.
  Reply busy = Post("/api/v1/runs/r1/resume");
  EXPECT_EQ(busy.status, 409);
  EXPECT_EQ(busy.body["error"]["code"], "ALREADY_EXISTS");
  EXPECT_EQ(Get("/api/v1/runs/r1").body["driven_here"], true);

  std::atomic<int> in_flight{-1};
  std::thread stopper([&] { in_flight = server_->Stop(); });
  clock_.BlockUntilWaiters(1);  // the drain has begun: runs are asked to stop
  model.Release();
  stopper.join();
  EXPECT_EQ(in_flight.load(), 0);

  Result<store::RunRecord> stopped = runtime_->store->GetRun("r1");
  MEND_ASSERT_OK(stopped);
  EXPECT_EQ(stopped->status, store::RunStatus::kRunning);
  EXPECT_EQ(stopped->step, 2);  // the start and the model turn; the tool has not run
  EXPECT_FALSE(stopped->lease_holder.has_value());
  EXPECT_EQ(model.calls(), 1);

  Restart();
  ASSERT_EQ(Post("/api/v1/runs/r1/resume").status, 202);
  nlohmann::json run = Settled("r1");
  EXPECT_EQ(run["status"], "completed");
  EXPECT_EQ(run["output"], "listed");
  EXPECT_EQ(model.calls(), 2);
  EXPECT_EQ(ToolMessages(run).size(), 1u);
}

}  // namespace
}  // namespace mend::server
