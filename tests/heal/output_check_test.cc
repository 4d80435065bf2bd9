#include "mend/heal/output_check.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <stdlib.h>
#include <unistd.h>

#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "tests/heal/hook_test_support.h"
#include "tests/support/orphan_watch.h"
#include "tests/support/status_matchers.h"

namespace mend::heal::testing {
namespace {

using ::mend::testing::ChildFate;
using ::mend::testing::KillParentAndWatchChild;
using ::mend::testing::StatusIs;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using Kind = OutputCheckSpec::Kind;

OutputCheckSpec Check(Kind kind, CheckAction action = CheckAction::kHint, std::string tool = "*") {
  OutputCheckSpec spec;
  spec.kind = kind;
  spec.action = action;
  spec.tool = std::move(tool);
  return spec;
}

OutputCheckSpec Regex(Kind kind, std::string pattern, CheckAction action = CheckAction::kHint) {
  OutputCheckSpec spec = Check(kind, action);
  spec.pattern = std::move(pattern);
  return spec;
}

// Records what it was asked and answers with a fixed outcome.
class FakeRunner final : public CheckCommandRunner {
 public:
  explicit FakeRunner(Result<CommandRun> answer) : answer_(std::move(answer)) {}
  Result<CommandRun> Run(const std::vector<std::string>& argv, const std::string& cwd,
                         std::string_view stdin_data, std::chrono::milliseconds) override {
    std::lock_guard<std::mutex> lock(mu_);
    last_argv = argv;
    last_cwd = cwd;
    last_stdin = std::string(stdin_data);
    return answer_;
  }
  std::vector<std::string> last_argv;
  std::string last_cwd;
  std::string last_stdin;

 private:
  std::mutex mu_;
  Result<CommandRun> answer_;
};

agent::PostToolAction Apply(OutputCheck& check, const std::string& tool, agent::ToolResult result) {
  static const agent::RunInfo kRun{"r1", "t", nullptr, "/ws"};
  auto action = check.AfterTool(CallOf(kRun, tool), result);
  EXPECT_TRUE(action.ok()) << action.status();
  return action.ok() ? std::move(action).value() : agent::PostToolAction{};
}

std::unique_ptr<OutputCheck> Make(std::vector<OutputCheckSpec> specs,
                                  OutputCheckOptions options = {}) {
  auto made = OutputCheck::Create(std::move(specs), std::move(options));
  EXPECT_TRUE(made.ok()) << made.status();
  return made.ok() ? std::move(made).value() : nullptr;
}

TEST(OutputCheckTest, CreateRejectsUnusableChecks) {
  EXPECT_THAT(OutputCheck::Create({Regex(Kind::kMustMatch, "(unclosed")}),
              StatusIs(StatusCode::kInvalidArgument, HasSubstr("output check 0")));
  OutputCheckSpec schema = Check(Kind::kJsonSchema);
  schema.schema = "{not json";
  EXPECT_THAT(OutputCheck::Create({Check(Kind::kMaxBytes), schema}).status(),
              StatusIs(StatusCode::kInvalidArgument, HasSubstr("output check 0")));
  schema.schema = R"({"type":"strng"})";
  EXPECT_THAT(OutputCheck::Create({schema}), StatusIs(StatusCode::kInvalidArgument));
  EXPECT_THAT(OutputCheck::Create({Check(Kind::kCommand)}), StatusIs(StatusCode::kInvalidArgument));
  OutputCheckSpec no_tool = Check(Kind::kMaxBytes, CheckAction::kHint, "");
  no_tool.max_bytes = 3;
  EXPECT_THAT(OutputCheck::Create({no_tool}), StatusIs(StatusCode::kInvalidArgument));
}

TEST(OutputCheckTest, RegexChecksHintWhenTheyFail) {
  auto check = Make({Regex(Kind::kMustMatch, "^PASS"), Regex(Kind::kMustNotMatch, "Traceback")});
  ASSERT_NE(check, nullptr);
  auto pass = Apply(*check, "t", agent::ToolResult::Ok("PASS 3 tests"));
  EXPECT_EQ(pass.append_hint, "");
  EXPECT_FALSE(pass.replacement.has_value());
  auto fail = Apply(*check, "t", agent::ToolResult::Ok("FAIL\nTraceback (most recent call)"));
  EXPECT_EQ(fail.append_hint,
            "output check failed: output does not match /^PASS/\n"
            "output check failed: output matches /Traceback/");
}

// Registered as a post-run hook too, the check marks a run in which one of its checks failed,
// once: the next run starts clean.
TEST(OutputCheckTest, ARunWithAFailedCheckIsFlaggedWhenItEnds) {
  auto check = Make({Regex(Kind::kMustMatch, "^PASS")});
  ASSERT_NE(check, nullptr);
  static const agent::RunInfo kRun{"r1", "t", nullptr, "/ws"};
  agent::RunOutcome clean;
  clean.run = &kRun;
  Apply(*check, "t", agent::ToolResult::Ok("PASS"));
  ASSERT_TRUE(check->AfterRun(clean).ok());
  EXPECT_FALSE(clean.Flag(kChecksFailedFlag));
  Apply(*check, "t", agent::ToolResult::Ok("FAIL"));
  agent::RunOutcome failed;
  failed.run = &kRun;
  ASSERT_TRUE(check->AfterRun(failed).ok());
  EXPECT_TRUE(failed.Flag(kChecksFailedFlag));
  agent::RunOutcome again;
  again.run = &kRun;
  ASSERT_TRUE(check->AfterRun(again).ok());
  EXPECT_FALSE(again.Flag(kChecksFailedFlag));
}

// A tool's output is hostile input: a megabyte of it must not hang a pattern check or exhaust
// the stack (std::regex, used before, recursed once per character and backtracked
// exponentially on these).
TEST(OutputCheckTest, PatternChecksTakeLinearTimeOnLongOutput) {
  auto check = Make({Regex(Kind::kMustMatch, "^(a|aa)+$"), Regex(Kind::kMustNotMatch, "(a*)*b")});
  ASSERT_NE(check, nullptr);
  const std::string as(1 << 20, 'a');
  EXPECT_EQ(Apply(*check, "t", agent::ToolResult::Ok(as)).append_hint, "");
  EXPECT_EQ(Apply(*check, "t", agent::ToolResult::Ok(as + "b")).append_hint,
            "output check failed: output does not match /^(a|aa)+$/\n"
            "output check failed: output matches /(a*)*b/");
  EXPECT_THAT(OutputCheck::Create({Regex(Kind::kMustMatch, "(?=x)")}).status(),
              StatusIs(StatusCode::kInvalidArgument, HasSubstr("lookaround are not supported")));
}

TEST(OutputCheckTest, ChecksApplyOnlyToTheirToolAndToSuccessfulResults) {
  OutputCheckSpec spec = Check(Kind::kMaxBytes, CheckAction::kHint, "search");
  spec.max_bytes = 4;
  auto check = Make({spec});
  ASSERT_NE(check, nullptr);
  EXPECT_EQ(Apply(*check, "read", agent::ToolResult::Ok("too long")).append_hint, "");
  EXPECT_EQ(Apply(*check, "search", agent::ToolResult::Error("too long")).append_hint, "");
  EXPECT_EQ(Apply(*check, "search", agent::ToolResult::Ok("too long")).append_hint,
            "output check failed: output is 8 bytes, more than the limit of 4");
}

TEST(OutputCheckTest, JsonSchemaCheckReplacesInvalidOutput) {
  OutputCheckSpec spec = Check(Kind::kJsonSchema, CheckAction::kReplace);
  spec.schema = R"({"type":"object","required":["id"]})";
  auto check = Make({spec});
  ASSERT_NE(check, nullptr);
  EXPECT_FALSE(Apply(*check, "t", agent::ToolResult::Ok(R"({"id":1})")).replacement.has_value());
  auto missing = Apply(*check, "t", agent::ToolResult::Ok(R"({"name":"x"})"));
  ASSERT_TRUE(missing.replacement.has_value());
  EXPECT_TRUE(missing.replacement->is_error);
  EXPECT_THAT(missing.replacement->content, HasSubstr("does not match the JSON schema"));
  EXPECT_THAT(missing.replacement->content, HasSubstr("id"));
  auto not_json = Apply(*check, "t", agent::ToolResult::Ok("hello"));
  ASSERT_TRUE(not_json.replacement.has_value());
  EXPECT_THAT(not_json.replacement->content, HasSubstr("not valid JSON"));
}

TEST(OutputCheckTest, FirstReplaceEndsCheckingAndMessageOverridesTheText) {
  OutputCheckSpec size = Check(Kind::kMaxBytes, CheckAction::kReplace);
  size.max_bytes = 2;
  size.message = "output too large; ask for less";
  auto check = Make({Regex(Kind::kMustMatch, "ok"), size, Regex(Kind::kMustMatch, "never")});
  ASSERT_NE(check, nullptr);
  auto action = Apply(*check, "t", agent::ToolResult::Ok("bad"));
  ASSERT_TRUE(action.replacement.has_value());
  EXPECT_EQ(action.replacement->content, "output too large; ask for less");
  EXPECT_EQ(action.append_hint, "output check failed: output does not match /ok/");
}

TEST(OutputCheckTest, CommandCheckGetsTheOutputInTheWorkspaceAndItsStdoutIsTheHint) {
  auto runner = std::make_shared<FakeRunner>(CommandRun{1, false, "  line 3: missing semicolon\n"});
  OutputCheckSpec spec = Check(Kind::kCommand);
  spec.command = {"lint", "--stdin"};
  auto check = Make({spec}, {nullptr, runner});
  ASSERT_NE(check, nullptr);
  EXPECT_EQ(Apply(*check, "t", agent::ToolResult::Ok("int x = 1")).append_hint,
            "line 3: missing semicolon");
  EXPECT_THAT(runner->last_argv, ElementsAre("lint", "--stdin"));
  EXPECT_EQ(runner->last_cwd, "/ws");
  EXPECT_EQ(runner->last_stdin, "int x = 1");
}

TEST(OutputCheckTest, CommandCheckPassesOnExitZeroAndFailsOnTimeout) {
  OutputCheckSpec spec = Check(Kind::kCommand);
  spec.command = {"lint"};
  spec.timeout = std::chrono::milliseconds(250);
  auto passing = Make({spec}, {nullptr, std::make_shared<FakeRunner>(CommandRun{0, false, "x"})});
  ASSERT_NE(passing, nullptr);
  EXPECT_EQ(Apply(*passing, "t", agent::ToolResult::Ok("a")).append_hint, "");
  auto slow = Make({spec}, {nullptr, std::make_shared<FakeRunner>(CommandRun{-1, true, ""})});
  ASSERT_NE(slow, nullptr);
  EXPECT_EQ(Apply(*slow, "t", agent::ToolResult::Ok("a")).append_hint,
            "output check failed: check command lint timed out after 250 ms");
}

TEST(OutputCheckTest, CommandThatCannotStartFailsTheHook) {
  OutputCheckSpec spec = Check(Kind::kCommand);
  spec.command = {"lint"};
  auto check = Make({spec}, {nullptr, std::make_shared<FakeRunner>(NotFoundError("no lint"))});
  ASSERT_NE(check, nullptr);
  agent::RunInfo run{"r1", "t", nullptr, ""};
  EXPECT_THAT(check->AfterTool(CallOf(run, "t"), agent::ToolResult::Ok("a")),
              StatusIs(StatusCode::kNotFound));
}

TEST(SubprocessRunnerTest, RunsACommandWithStdinAndReportsItsExit) {
  auto runner = MakeSubprocessRunner();
  auto ok = runner->Run({"sh", "-c", "cat; echo done"}, "", "hello\n", std::chrono::seconds(10));
  ASSERT_TRUE(ok.ok()) << ok.status();
  EXPECT_EQ(ok->exit_code, 0);
  EXPECT_FALSE(ok->timed_out);
  EXPECT_EQ(ok->stdout_data, "hello\ndone\n");
  auto failed = runner->Run({"sh", "-c", "pwd; exit 3"}, "/", "", std::chrono::seconds(10));
  ASSERT_TRUE(failed.ok()) << failed.status();
  EXPECT_EQ(failed->exit_code, 3);
  EXPECT_EQ(failed->stdout_data, "/\n");
}

TEST(SubprocessRunnerTest, ChildThatIgnoresStdinDoesNotBreakTheCaller) {
  auto runner = MakeSubprocessRunner();
  std::string big(1 << 20, 'x');  // more than a pipe buffer
  auto run = runner->Run({"sh", "-c", "exit 0"}, "", big, std::chrono::seconds(10));
  ASSERT_TRUE(run.ok()) << run.status();
  EXPECT_EQ(run->exit_code, 0);
}

TEST(SubprocessRunnerTest, TimeoutKillsTheChild) {
  auto runner = MakeSubprocessRunner();
  auto run = runner->Run({"sh", "-c", "exec sleep 30"}, "", "", std::chrono::milliseconds(50));
  ASSERT_TRUE(run.ok()) << run.status();
  EXPECT_TRUE(run->timed_out);
  EXPECT_EQ(run->exit_code, -1);
}

// A command check is a child like a command tool: no keys in its environment, limits set.
TEST(SubprocessRunnerTest, ChildGetsTheScrubbedEnvironmentAndLimits) {
  const char* old = getenv("MEND_API_KEY");
  const std::optional<std::string> saved = old ? std::optional<std::string>(old) : std::nullopt;
  setenv("MEND_API_KEY", "sk-heal-check-KEY-7171", 1);
  auto runner = MakeSubprocessRunner();
  auto run = runner->Run({"sh", "-c", "echo \"[$MEND_API_KEY]\"; env | grep -c MEND_; ulimit -t"},
                         "", "", std::chrono::seconds(10));
  if (saved) {
    setenv("MEND_API_KEY", saved->c_str(), 1);
  } else {
    unsetenv("MEND_API_KEY");
  }
  ASSERT_TRUE(run.ok()) << run.status();
  EXPECT_EQ(run->stdout_data, "[]\n0\n60\n");
}

// A check command dies with the mend process that started it, like a command tool.
TEST(SubprocessRunnerTest, ChildDiesWhenTheProcessThatStartedItIsKilled) {
  std::string dir = ::testing::TempDir() + "mend-check-orphan-XXXXXX";
  ASSERT_NE(mkdtemp(dir.data()), nullptr);
  const ChildFate fate = KillParentAndWatchChild(dir + "/pid", [&] {
    (void)MakeSubprocessRunner()->Run({"sh", "-c", "echo $$ > pid; exec sleep 600"}, dir, "",
                                      std::chrono::minutes(10));
  });
  unlink((dir + "/pid").c_str());
  rmdir(dir.c_str());
  if (fate == ChildFate::kUnsupported) GTEST_SKIP() << "pidfd_open needs Linux 5.3";
  EXPECT_EQ(fate, ChildFate::kEnded) << "the check outlived the process that started it";
}

// ... and so does a process the check started and left running.
TEST(SubprocessRunnerTest, AGrandchildDiesWhenTheProcessThatStartedTheCheckIsKilled) {
  std::string dir = ::testing::TempDir() + "mend-check-orphan-XXXXXX";
  ASSERT_NE(mkdtemp(dir.data()), nullptr);
  const std::string fifo = dir + "/pid";
  const ChildFate fate = KillParentAndWatchChild(fifo, [&] {
    (void)MakeSubprocessRunner()->Run(
        {"sh", "-c", ::mend::testing::SleepingGrandchildCommand(fifo)}, dir, "",
        std::chrono::minutes(10));
  });
  unlink(fifo.c_str());
  rmdir(dir.c_str());
  if (fate == ChildFate::kUnsupported) GTEST_SKIP() << "pidfd_open needs Linux 5.3";
  EXPECT_EQ(fate, ChildFate::kEnded)
      << "a process the check started outlived the process that started the check";
}

TEST(SubprocessRunnerTest, MissingProgramIsNotFound) {
  auto runner = MakeSubprocessRunner();
  EXPECT_THAT(runner->Run({"mend-no-such-program-x"}, "", "", std::chrono::seconds(5)),
              StatusIs(StatusCode::kNotFound));
  EXPECT_THAT(runner->Run({}, "", "", std::chrono::seconds(5)),
              StatusIs(StatusCode::kInvalidArgument));
}

TEST(OutputCheckEndToEndTest, ReplacedResultIsMarkedAndHintsReachTheModel) {
  auto search = std::make_shared<FixedTool>("search", "ERROR: index offline", false);
  auto read = std::make_shared<FixedTool>("read", "plain text", false);
  AgentRig rig({CallStep("c1", "search", "{}"), CallStep("c2", "read", "{}"), TextStep("done")},
               {search, read});
  ASSERT_NE(rig.agent, nullptr);
  OutputCheckSpec no_errors = Regex(Kind::kMustNotMatch, "^ERROR", CheckAction::kReplace);
  no_errors.tool = "search";
  no_errors.message = "search is unavailable; answer from what you know";
  OutputCheckSpec json = Check(Kind::kJsonSchema, CheckAction::kHint, "read");
  json.schema = R"({"type":"object"})";
  auto check = Make({no_errors, json}, {&rig.bus, nullptr});
  ASSERT_NE(check, nullptr);
  rig.agent->AddPostToolHook(std::move(check));

  auto result = rig.agent->Send("look it up");
  ASSERT_TRUE(result.ok()) << result.status();
  EXPECT_EQ(result->status, store::RunStatus::kCompleted);
  EXPECT_THAT(rig.HealActions(), ElementsAre("replace:search", "hint:read"));
  EXPECT_TRUE(rig.HasEvent("tool.replaced"));
  auto requests = rig.model.requests();
  ASSERT_EQ(requests.size(), 3u);
  EXPECT_EQ(requests[1].messages.back().content,
            "search is unavailable; answer from what you know");
  EXPECT_TRUE(requests[1].messages.back().is_error);
  EXPECT_THAT(requests[2].messages.back().content,
              HasSubstr("plain text\noutput check failed: output is not valid JSON"));
}

}  // namespace
}  // namespace mend::heal::testing
