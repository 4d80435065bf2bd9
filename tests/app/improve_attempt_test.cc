#include "mend/app/improve_attempt.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

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

}  // namespace
}  // namespace mend::app
