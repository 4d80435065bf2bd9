#include "mend/app/improve_attempt.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "mend/app/canary.h"
#include "mend/app/runtime.h"
#include "tests/app/agent_home_test.h"
#include "tests/support/status_matchers.h"

namespace mend::app {
namespace {

using ::mend::testing::IsOk;
using ::mend::testing::StatusIs;
using ::testing::ElementsAre;

// Answers "good" when its system prompt says SAY-GOOD, "bad" otherwise. Stateless.
class PromptModel final : public llm::LlmProvider {
 public:
  Result<llm::Completion> Complete(const llm::CompletionRequest& request) override {
    llm::Completion c;
    const bool good = request.messages[0].content.find("SAY-GOOD") != std::string::npos;
    c.text = good ? "good" : "bad";
    return c;
  }
  std::string_view name() const override { return "prompt-model"; }
};

// Proposes instructions that say SAY-GOOD.
class Editor final : public llm::LlmProvider {
 public:
  Result<llm::Completion> Complete(const llm::CompletionRequest&) override {
    llm::Completion c;
    c.text =
        "<file path=\"instructions.md\">\nSAY-GOOD\n</file>\n<rationale>\nsay it\n</rationale>\n";
    return c;
  }
  std::string_view name() const override { return "editor"; }
};

// Calls fake__write_note, then fake__echo, then answers as PromptModel does. Stateless: it goes by
// the tool results already in the conversation.
class McpModel final : public llm::LlmProvider {
 public:
  Result<llm::Completion> Complete(const llm::CompletionRequest& request) override {
    int results = 0;
    for (const llm::Message& m : request.messages) results += m.role == llm::Role::kTool;
    llm::Completion c;
    if (results == 0) {
      c.tool_calls.push_back({"c1", "fake__write_note", R"({"name":"n.txt","text":"x"})"});
      c.finish_reason = llm::FinishReason::kToolCalls;
    } else if (results == 1) {
      c.tool_calls.push_back({"c2", "fake__echo", R"({"text":"hi"})"});
      c.finish_reason = llm::FinishReason::kToolCalls;
    } else {
      c.text = request.messages[0].content.find("SAY-GOOD") != std::string::npos ? "good" : "bad";
    }
    return c;
  }
  std::string_view name() const override { return "mcp-model"; }
};

class ImproveAttemptTest : public AgentHomeTest {
 protected:
  void SetUp() override {
    AgentHomeTest::SetUp();
    MEND_ASSERT_OK(
        WriteFileAtomically(*env_.fs, dir_ + "/check.sh",
                            "if grep -q '\"output\":\"good\"'; then echo '{\"pass\":true}'; "
                            "else echo '{\"pass\":false}'; fi\n"));
    ConfigSources sources;
    sources.flags["home"] = dir_ + "/home";
    Result<Config> config = LoadConfig(sources, *env_.fs);
    ASSERT_THAT(config, IsOk());
    RuntimeOptions options;
    options.event_log = EventLog::kNone;
    Result<std::unique_ptr<Runtime>> runtime = OpenRuntime(*config, env_, std::move(options));
    ASSERT_THAT(runtime, IsOk());
    runtime_ = std::move(runtime).value();
    Result<agent::AgentSpec> spec = agent::LoadAgentFolder(*env_.fs, agent_dir_);
    ASSERT_THAT(spec, IsOk());
    spec_ = *spec;
  }

  ImproveRequest Request() {
    ImproveRequest request;
    request.agent_dir = agent_dir_;
    request.cases = {{"a", "one", "", {}, {}}, {"b", "two", "", {}, {}}};
    request.held_out_fraction = 0;
    request.seed = 1;
    request.candidates = 1;
    request.rounds = 1;
    request.repeats = 2;
    request.concurrency = 1;
    request.check_command = ShellCheckCommand("sh " + dir_ + "/check.sh");
    request.model = &model_;
    request.editor = &editor_;
    return request;
  }

  PromptModel model_;
  Editor editor_;
  std::unique_ptr<Runtime> runtime_;
  agent::AgentSpec spec_;
};

TEST(ShellCheckCommandTest, PassesTheCasesArgumentsToTheCommandLine) {
  EXPECT_THAT(ShellCheckCommand("./check.sh --strict"),
              ElementsAre("/bin/sh", "-c", "./check.sh --strict \"$@\"", "mend-check"));
}

TEST_F(ImproveAttemptTest, AutoModeAppliesTheProposalItRecorded) {
  ImproveRequest request = Request();
  request.mode = ProposalMode::kAuto;
  std::mutex mu;
  std::vector<std::string> lines;
  request.on_progress = [&](const std::string& line) {
    std::lock_guard<std::mutex> lock(mu);
    lines.push_back(line);
  };
  Result<ImproveAttempt> attempt = RunImproveAttempt(*runtime_, spec_, request);
  ASSERT_THAT(attempt, IsOk());
  EXPECT_EQ(attempt->report.result.decision.outcome, improve::GateOutcome::kProposal);
  ASSERT_TRUE(attempt->proposal.has_value());
  EXPECT_EQ(attempt->report.runs, 8);  // 2 cases x 2 repeats x (baseline, candidate)
  Result<std::string> instructions = ReadFileToString(*env_.fs, agent_dir_ + "/instructions.md");
  ASSERT_THAT(instructions, IsOk());
  EXPECT_EQ(*instructions, "SAY-GOOD\n");
  ASSERT_FALSE(lines.empty());
  EXPECT_EQ(lines.front(), "improve: baseline 1/4 runs; best so far 0/0 training runs pass");
  Result<improve::AttemptStore*> attempts = runtime_->Attempts();
  ASSERT_THAT(attempts, IsOk());
  EXPECT_THAT((*attempts)->GetProposal(attempt->report.attempt_id), IsOk());
  EXPECT_FALSE(
      std::filesystem::exists(dir_ + "/home/improve-scratch-" + std::to_string(::getpid())));
}

// With improve.canary.share, auto mode canaries the proposal (deciding on its own) and leaves the
// folder as it is until the canary promotes it.
TEST_F(ImproveAttemptTest, AutoModeWithACanaryShareCanariesTheProposal) {
  ConfigSources sources;
  sources.flags["home"] = dir_ + "/home";
  sources.env["MEND_IMPROVE_CANARY_SHARE"] = "30";
  Result<Config> config = LoadConfig(sources, *env_.fs);
  ASSERT_THAT(config, IsOk());
  RuntimeOptions options;
  options.event_log = EventLog::kNone;
  runtime_.reset();
  Result<std::unique_ptr<Runtime>> runtime = OpenRuntime(*config, env_, std::move(options));
  ASSERT_THAT(runtime, IsOk());
  runtime_ = std::move(runtime).value();
  ImproveRequest request = Request();
  request.mode = ProposalMode::kAuto;
  Result<ImproveAttempt> attempt = RunImproveAttempt(*runtime_, spec_, request);
  ASSERT_THAT(attempt, IsOk());
  ASSERT_TRUE(attempt->proposal.has_value());
  EXPECT_EQ(attempt->proposal->status, improve::ProposalStatus::kQueued);
  Result<std::string> instructions = ReadFileToString(*env_.fs, agent_dir_ + "/instructions.md");
  ASSERT_THAT(instructions, IsOk());
  EXPECT_EQ(*instructions, "Answer briefly.\n");
  Result<improve::CanaryStore*> canaries = Canaries(*runtime_);
  ASSERT_THAT(canaries, IsOk());
  Result<improve::Canary> canary = (*canaries)->Get(attempt->report.attempt_id);
  ASSERT_THAT(canary, IsOk());
  EXPECT_EQ(canary->state, improve::CanaryState::kRunning);
  EXPECT_EQ(canary->percent, 30);
  EXPECT_TRUE(canary->auto_decide);
}

TEST_F(ImproveAttemptTest, ManualModeLeavesTheFolderAlone) {
  Result<ImproveAttempt> attempt = RunImproveAttempt(*runtime_, spec_, Request());
  ASSERT_THAT(attempt, IsOk());
  ASSERT_TRUE(attempt->proposal.has_value());
  Result<std::string> instructions = ReadFileToString(*env_.fs, agent_dir_ + "/instructions.md");
  ASSERT_THAT(instructions, IsOk());
  EXPECT_EQ(*instructions, "Answer briefly.\n");
}

TEST_F(ImproveAttemptTest, InputsTheEvaluationRefusesAreMarkedBeforeAnythingIsRecorded) {
  ImproveRequest request = Request();
  request.cases[0].workspace = dir_ + "/check.sh";  // a file, not a folder
  Result<ImproveAttempt> attempt = RunImproveAttempt(*runtime_, spec_, request);
  EXPECT_THAT(attempt.status(), StatusIs(StatusCode::kInvalidArgument));
  EXPECT_EQ(attempt.status().detail_code(), kImproveInputRefusedDetail);
  EXPECT_FALSE(std::filesystem::exists(dir_ + "/home/improve"));
}

// Improve's evaluation runs get the folder's MCP tools, a server per run, under shadow mode:
// the read-only tool runs, the other gets a shadow result and never reaches the server.
TEST_F(ImproveAttemptTest, EvaluationRunsGetTheMcpToolsUnderShadowMode) {
  const std::string log = dir_ + "/mcp.log";
  MEND_ASSERT_OK(env_.fs->CreateDirs(dir_ + "/mcp-cwd"));
  MEND_ASSERT_OK(WriteFileAtomically(
      *env_.fs, agent_dir_ + "/agent.toml",
      "name = \"t\"\ntools = []\n[[mcp_servers]]\nname = \"fake\"\ncommand = "
      "\"" FAKE_MCP_SERVER_BINARY "\"\nargs = [\"--log\", \"" +
          log + "\"]\ncwd = \"" + dir_ + "/mcp-cwd\"\nread_only = [\"echo\"]\n"));
  Result<agent::AgentSpec> spec = agent::LoadAgentFolder(*env_.fs, agent_dir_);
  ASSERT_THAT(spec, IsOk());
  McpModel model;
  ImproveRequest request = Request();
  request.model = &model;
  Result<ImproveAttempt> attempt = RunImproveAttempt(*runtime_, *spec, request);
  ASSERT_THAT(attempt, IsOk());
  EXPECT_EQ(attempt->report.runs, 8);
  int initializes = 0, echoes = 0, writes = 0;
  std::ifstream in(log);
  for (std::string line; std::getline(in, line);) {
    if (line.find("\"initialize\"") != std::string::npos) ++initializes;
    if (line.find("\"tools/call\"") == std::string::npos) continue;
    if (line.find("\"echo\"") != std::string::npos) ++echoes;
    if (line.find("\"write_note\"") != std::string::npos) ++writes;
  }
  EXPECT_EQ(initializes, 8);  // one server per run
  EXPECT_EQ(echoes, 8);
  EXPECT_EQ(writes, 0);
  EXPECT_FALSE(std::filesystem::exists(dir_ + "/mcp-cwd/n.txt"));
}

}  // namespace
}  // namespace mend::app
