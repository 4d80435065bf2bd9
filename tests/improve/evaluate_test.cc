#include "mend/improve/evaluate.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <filesystem>
#include <functional>
#include <map>
#include <mutex>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "improve/evaluate_check.h"
#include "mend/base/manual_clock.h"
#include "mend/base/random.h"
#include "mend/base/utf8.h"
#include "tests/support/status_matchers.h"

namespace mend::improve {
namespace {

using ::mend::testing::StatusIs;
using nlohmann::json;
using ::testing::AllOf;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;
using ::testing::StartsWith;

// A model whose answer is a function of the request, so it can depend on the system prompt the
// candidate's text produced. Records every request. Thread-safe when `answer` is.
class FunctionProvider final : public llm::LlmProvider {
 public:
  using Answer = std::function<Result<llm::Completion>(const llm::CompletionRequest&)>;
  explicit FunctionProvider(Answer answer) : answer_(std::move(answer)) {}

  Result<llm::Completion> Complete(const llm::CompletionRequest& request) override {
    {
      std::lock_guard<std::mutex> lock(mu_);
      requests_.push_back(request);
    }
    return answer_(request);
  }
  std::string_view name() const override { return "function"; }

  std::vector<llm::CompletionRequest> requests() const {
    std::lock_guard<std::mutex> lock(mu_);
    return requests_;
  }

 private:
  const Answer answer_;
  mutable std::mutex mu_;
  std::vector<llm::CompletionRequest> requests_;
};

llm::Completion Text(std::string text, double cost = 0.25) {
  llm::Completion c;
  c.text = std::move(text);
  c.usage = {10, 5};
  c.usage_reported = true;
  c.cost_usd = cost;
  return c;
}

llm::Completion Calls(std::vector<llm::ToolCall> calls) {
  llm::Completion c = Text("", 0.125);
  c.tool_calls = std::move(calls);
  c.finish_reason = llm::FinishReason::kToolCalls;
  return c;
}

const std::string& SystemPrompt(const llm::CompletionRequest& r) { return r.messages[0].content; }
const std::string& Task(const llm::CompletionRequest& r) { return r.messages[1].content; }
size_t Turn(const llm::CompletionRequest& r) {
  size_t turn = 0;
  for (const llm::Message& m : r.messages) turn += m.role == llm::Role::kAssistant;
  return turn;
}

// Answers "good" when the system prompt says SAY-GOOD, "bad" otherwise.
Result<llm::Completion> GoodIfPromptSays(const llm::CompletionRequest& r) {
  return Text(SystemPrompt(r).find("SAY-GOOD") != std::string::npos ? "good" : "bad");
}

// Answers the task back.
Result<llm::Completion> EchoTask(const llm::CompletionRequest& r) { return Text(Task(r)); }

// Passes when the run's output is "good" (the stdin JSON is written compactly).
const std::vector<std::string> kOutputIsGood = {
    "/bin/sh", "-c",
    R"(if grep -q '"output":"good"'; then echo '{"pass": true}'; else echo '{"pass": false}'; fi)"};

constexpr char kAgentToml[] = "name = \"t\"\ntools = [\"read_file\", \"write_file\"]\n";

// Every entry below `root` (relative path) with its type and permission bits: "d700", "f600",
// "l" for a symbolic link.
std::map<std::string, std::string> Entries(const std::string& root) {
  std::map<std::string, std::string> out;
  std::error_code ec;
  for (auto it = std::filesystem::recursive_directory_iterator(root, ec);
       it != std::filesystem::recursive_directory_iterator(); it.increment(ec)) {
    struct stat st;
    if (::lstat(it->path().c_str(), &st) != 0) continue;
    std::string rel = std::filesystem::relative(it->path(), root).string();
    char mode[8];
    snprintf(mode, sizeof(mode), "%o", st.st_mode & 0777);
    out[rel] = S_ISLNK(st.st_mode) ? "l" : (S_ISDIR(st.st_mode) ? "d" : "f") + std::string(mode);
  }
  return out;
}

class EvaluateTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string pattern = JoinPath(::testing::TempDir(), "mend_evaluate_XXXXXX");
    ASSERT_NE(::mkdtemp(pattern.data()), nullptr);
    dir_ = pattern;
    agent_dir_ = Path("agent");
    Write("agent/agent.toml", kAgentToml);
    Write("agent/instructions.md", "SAY-BAD\n");
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  std::string Path(std::string_view rel) const { return JoinPath(dir_, rel); }

  void Write(std::string_view rel, std::string_view text, mode_t mode = 0600) {
    const std::string path = Path(rel);
    MEND_ASSERT_OK(fs_.CreateDirs(DirName(path)));
    MEND_ASSERT_OK(WriteFileAtomically(fs_, path, text));
    ASSERT_EQ(::chmod(path.c_str(), mode), 0);
  }
  std::string Read(std::string_view rel) {
    Result<std::string> text = ReadFileToString(fs_, Path(rel));
    return text.ok() ? *text : "<" + text.status().ToString() + ">";
  }

  EvaluateOptions Options(llm::LlmProvider* provider) {
    EvaluateOptions o;
    o.env = Env{&fs_, &clock_, &random_};
    o.provider = provider;
    o.agent_dir = agent_dir_;
    o.scratch_dir = Path("scratch");
    o.check_command = kOutputIsGood;
    o.check_timeout = std::chrono::seconds(10);
    o.repeats = 1;
    o.concurrency = 1;
    return o;
  }

  AgentText OriginalText() {
    Result<AgentText> text = ReadAgentText(fs_, agent_dir_);
    EXPECT_TRUE(text.ok()) << text.status();
    return text.ok() ? *text : AgentText{};
  }

  PosixFileSystem fs_;
  ManualClock clock_;
  SeededRandom random_{7};
  std::string dir_;
  std::string agent_dir_;
};

TEST_F(EvaluateTest, ReadAgentTextReadsInstructionsAndSkillFiles) {
  Write("agent/skills/triage.md", "---\nname: triage\ndescription: d\n---\nbody\n");
  Write("agent/skills/.backup.md", "hidden");
  Write("agent/skills/notes.txt", "not a skill");
  Result<AgentText> text = ReadAgentText(fs_, agent_dir_);
  ASSERT_TRUE(text.ok()) << text.status();
  EXPECT_EQ(text->instructions, "SAY-BAD\n");
  ASSERT_EQ(text->skills.size(), 1u);
  EXPECT_EQ(text->skills.at("skills/triage.md"), "---\nname: triage\ndescription: d\n---\nbody\n");

  Write("bare/agent.toml", kAgentToml);
  EXPECT_THAT(ReadAgentText(fs_, Path("bare")), ::mend::testing::IsOkAndHolds(AgentText{}));
  EXPECT_THAT(ReadAgentText(fs_, Path("missing")), StatusIs(StatusCode::kNotFound));
  EXPECT_THAT(ReadAgentText(fs_, Path("agent/agent.toml")), StatusIs(StatusCode::kInvalidArgument));
}

TEST_F(EvaluateTest, PassingAndFailingCasesAreScoredByTheCheck) {
  FunctionProvider model(EchoTask);
  std::vector<Case> cases = {{"a", "good", "", {}, {}}, {"b", "bad", "", {}, {}}};
  Result<ArmRuns> arm = EvaluateArm(OriginalText(), cases, Options(&model));
  ASSERT_TRUE(arm.ok()) << arm.status();
  ASSERT_EQ(arm->cases.size(), 2u);
  ASSERT_EQ(arm->cases[0].size(), 1u);
  const CaseRun& pass = arm->cases[0][0];
  EXPECT_EQ(pass.case_id, "a");
  EXPECT_EQ(pass.run_id, "a.0");
  EXPECT_EQ(pass.status, "completed");
  EXPECT_EQ(pass.output, "good");
  EXPECT_EQ(pass.error, "");
  EXPECT_DOUBLE_EQ(pass.cost_usd, 0.25);
  EXPECT_TRUE(pass.check.pass);
  EXPECT_EQ(pass.check.score, 1.0);
  EXPECT_EQ(pass.check.error, "");
  json transcript = json::parse(pass.transcript);
  ASSERT_EQ(transcript.size(), 3u);
  EXPECT_EQ(transcript[0]["role"], "system");
  EXPECT_EQ(transcript[1], (json{{"role", "user"}, {"content", "good"}}));
  EXPECT_EQ(transcript[2], (json{{"role", "assistant"}, {"content", "good"}}));

  const CaseRun& fail = arm->cases[1][0];
  EXPECT_EQ(fail.output, "bad");
  EXPECT_FALSE(fail.check.pass);
  EXPECT_EQ(fail.check.score, 0.0);
  EXPECT_EQ(fail.check.error, "");
  EXPECT_EQ(fail.score().cost_usd, 0.25);
  // The scratch folder EvaluateArm created is gone again.
  EXPECT_FALSE(fs_.Exists(Path("scratch")));
}

// A raised stop flag (a server shutting down) starts no further run: the arm has no result.
TEST_F(EvaluateTest, AStopStartsNoFurtherRunAndTheArmIsCancelled) {
  std::atomic<bool> stop{false};
  std::atomic<int> calls{0};
  FunctionProvider model([&](const llm::CompletionRequest& request) {
    ++calls;
    stop.store(true);  // raised during the first run
    return EchoTask(request);
  });
  EvaluateOptions options = Options(&model);
  options.stop = &stop;
  options.repeats = 3;
  std::vector<Case> cases = {{"a", "good", "", {}, {}}, {"b", "bad", "", {}, {}}};
  Result<ArmRuns> arm = EvaluateArm(OriginalText(), cases, options);
  EXPECT_EQ(arm.status().code(), StatusCode::kCancelled) << arm.status();
  EXPECT_EQ(calls.load(), 1);
  EXPECT_FALSE(fs_.Exists(Path("scratch")));
}

TEST_F(EvaluateTest, TheCheckReadsTheRunAndItsCaseOnStdinInTheWorkspace) {
  FunctionProvider model(EchoTask);
  EvaluateOptions o = Options(&model);
  // The check keeps its stdin and where it ran, and gives a score of its own.
  o.check_command = {"/bin/sh", "-c",
                     R"(cat > "$1"; pwd -P > "$1.cwd"; echo '{"pass":false,"score":0.5}')",
                     "check"};
  std::vector<Case> cases = {{"c", "hello", "", {Path("stdin.json")}, {"x", "y"}}};
  Result<ArmRuns> arm = EvaluateArm(OriginalText(), cases, o);
  ASSERT_TRUE(arm.ok()) << arm.status();
  const CaseRun& run = arm->cases[0][0];
  EXPECT_FALSE(run.check.pass);
  EXPECT_EQ(run.check.score, 0.5);
  json input = json::parse(Read("stdin.json"));
  EXPECT_EQ(input["task"], "hello");
  EXPECT_EQ(input["status"], "completed");
  EXPECT_EQ(input["output"], "hello");
  EXPECT_EQ(input["error"], "");
  EXPECT_EQ(input["repeat"], 0);
  EXPECT_EQ(input["transcript"], json::parse(run.transcript));
  EXPECT_EQ(input["case"], (json{{"id", "c"},
                                 {"task", "hello"},
                                 {"tags", {"x", "y"}},
                                 {"check_args", {Path("stdin.json")}}}));
  EXPECT_EQ(Read("stdin.json.cwd"),
            std::filesystem::canonical(dir_).string() + "/scratch/runs/0-0/workspace\n");
}

TEST_F(EvaluateTest, RepeatsGiveKRunsPerCaseInOrder) {
  FunctionProvider model(EchoTask);
  EvaluateOptions o = Options(&model);
  o.repeats = 3;
  std::vector<std::string> seen;
  o.on_run = [&](const CaseRun& run) {
    seen.push_back(run.case_id + "/" + std::to_string(run.repeat));
  };
  std::vector<Case> cases = {{"a", "good", "", {}, {}}, {"b", "bad", "", {}, {}}};
  Result<ArmRuns> arm = EvaluateArm(OriginalText(), cases, o);
  ASSERT_TRUE(arm.ok()) << arm.status();
  ASSERT_EQ(arm->cases.size(), 2u);
  for (size_t c = 0; c < 2; ++c) {
    ASSERT_EQ(arm->cases[c].size(), 3u);
    for (int r = 0; r < 3; ++r) {
      EXPECT_EQ(arm->cases[c][r].case_id, cases[c].id);
      EXPECT_EQ(arm->cases[c][r].repeat, r);
      EXPECT_EQ(arm->cases[c][r].run_id, cases[c].id + "." + std::to_string(r));
      EXPECT_EQ(arm->cases[c][r].check.pass, c == 0);
    }
  }
  EXPECT_THAT(seen, ElementsAre("a/0", "a/1", "a/2", "b/0", "b/1", "b/2"));
  EXPECT_EQ(model.requests().size(), 6u);
}

TEST_F(EvaluateTest, ConcurrentRunsGiveTheSameResultsAsOneAtATime) {
  FunctionProvider model(EchoTask);
  std::vector<Case> cases;
  for (int i = 0; i < 5; ++i) {
    cases.push_back({"case-" + std::to_string(i), i % 2 == 0 ? "good" : "bad", "", {}, {}});
  }
  EvaluateOptions o = Options(&model);
  o.repeats = 2;
  Result<ArmRuns> serial = EvaluateArm(OriginalText(), cases, o);
  ASSERT_TRUE(serial.ok()) << serial.status();
  o.concurrency = 4;
  int calls = 0;
  o.on_run = [&](const CaseRun&) { ++calls; };  // serialised by EvaluateArm
  Result<ArmRuns> parallel = EvaluateArm(OriginalText(), cases, o);
  ASSERT_TRUE(parallel.ok()) << parallel.status();
  EXPECT_EQ(calls, 10);
  ASSERT_EQ(parallel->cases.size(), serial->cases.size());
  for (size_t c = 0; c < cases.size(); ++c) {
    ASSERT_EQ(parallel->cases[c].size(), 2u);
    for (size_t r = 0; r < 2; ++r) {
      const CaseRun& a = serial->cases[c][r];
      const CaseRun& b = parallel->cases[c][r];
      EXPECT_EQ(b.case_id, a.case_id);
      EXPECT_EQ(b.repeat, a.repeat);
      EXPECT_EQ(b.run_id, a.run_id);
      EXPECT_EQ(b.status, a.status);
      EXPECT_EQ(b.output, a.output);
      EXPECT_EQ(b.transcript, a.transcript);
      EXPECT_EQ(b.cost_usd, a.cost_usd);
      EXPECT_EQ(b.check.pass, a.check.pass);
      EXPECT_EQ(b.check.pass, c % 2 == 0);
    }
  }
}

TEST_F(EvaluateTest, TheCandidateTextReachesTheModelAndTheOriginalFolderIsUntouched) {
  Write("agent/skills/old.md", "---\nname: old\ndescription: d\n---\nOLD-SKILL\n");
  const std::map<std::string, std::string> before = Entries(agent_dir_);
  FunctionProvider model(GoodIfPromptSays);
  AgentText text = OriginalText();
  text.instructions = "SAY-GOOD\n";
  text.skills["skills/new.md"] = "---\nname: new\ndescription: added\n---\nNEW-SKILL\n";
  std::vector<Case> cases = {{"a", "anything", "", {}, {}}};
  Result<ArmRuns> arm = EvaluateArm(text, cases, Options(&model));
  ASSERT_TRUE(arm.ok()) << arm.status();
  EXPECT_EQ(arm->cases[0][0].output, "good");
  EXPECT_TRUE(arm->cases[0][0].check.pass);
  const std::vector<llm::CompletionRequest> requests = model.requests();
  ASSERT_EQ(requests.size(), 1u);
  const std::string& prompt = SystemPrompt(requests[0]);
  EXPECT_THAT(prompt, AllOf(HasSubstr("SAY-GOOD"), HasSubstr("OLD-SKILL"), HasSubstr("NEW-SKILL")));
  EXPECT_THAT(prompt, ::testing::Not(HasSubstr("SAY-BAD")));

  EXPECT_EQ(Entries(agent_dir_), before);
  EXPECT_EQ(Read("agent/instructions.md"), "SAY-BAD\n");
  EXPECT_FALSE(fs_.Exists(Path("agent/skills/new.md")));

  // The original text gives the original answer.
  Result<ArmRuns> baseline = EvaluateArm(OriginalText(), cases, Options(&model));
  ASSERT_TRUE(baseline.ok()) << baseline.status();
  EXPECT_EQ(baseline->cases[0][0].output, "bad");
  EXPECT_FALSE(baseline->cases[0][0].check.pass);
}

// Turn 0 reads data.txt and writes out.txt; turn 1 answers with both tool results.
Result<llm::Completion> ReadThenWrite(const llm::CompletionRequest& r) {
  if (Turn(r) == 0) {
    return Calls({{"c1", "read_file", R"({"path":"data.txt"})"},
                  {"c2", "write_file", R"({"path":"out.txt","content":"new"})"}});
  }
  const size_t n = r.messages.size();
  return Text(r.messages[n - 2].content + "|" + r.messages[n - 1].content);
}

TEST_F(EvaluateTest, ShadowModeRunsReadOnlyToolsOnly) {
  Write("fixture/data.txt", "fixture-data\n");
  FunctionProvider model(ReadThenWrite);
  EvaluateOptions o = Options(&model);
  // Passes only when out.txt was not written in the run's workspace.
  o.check_command = {
      "/bin/sh", "-c",
      R"(if [ -e out.txt ]; then echo '{"pass":false}'; else echo '{"pass":true}'; fi)"};
  std::vector<Case> cases = {{"a", "go", Path("fixture"), {}, {}}};
  Result<ArmRuns> arm = EvaluateArm(OriginalText(), cases, o);
  ASSERT_TRUE(arm.ok()) << arm.status();
  const CaseRun& run = arm->cases[0][0];
  EXPECT_EQ(run.status, "completed");
  EXPECT_THAT(run.output, HasSubstr("fixture-data"));
  EXPECT_THAT(run.output,
              HasSubstr("not executed (shadow mode): write_file is not in the read-only list"));
  EXPECT_TRUE(run.check.pass) << run.check.error;
  EXPECT_DOUBLE_EQ(run.cost_usd, 0.375);
  json transcript = json::parse(run.transcript);
  ASSERT_EQ(transcript.size(), 6u);
  EXPECT_EQ(transcript[2]["tool_calls"][1]["name"], "write_file");
  EXPECT_EQ(transcript[3]["tool_call_id"], "c1");
  EXPECT_FALSE(transcript[3].contains("hook_decision"));
  EXPECT_EQ(transcript[4]["name"], "write_file");
  EXPECT_EQ(transcript[4]["hook_decision"], "supplied");
}

TEST_F(EvaluateTest, TheFoldersChecksRunWithoutAnyHookOfTheCaller) {
  Write("agent/agent.toml", std::string(kAgentToml) +
                                "\n[[checks]]\ntool = \"read_file\"\nkind = \"regex\"\n"
                                "pattern = \"fixture\"\nmust_match = false\n"
                                "action = \"replace\"\nmessage = \"withheld\"\n");
  Write("fixture/data.txt", "fixture-data\n");
  FunctionProvider model(ReadThenWrite);
  EvaluateOptions o = Options(&model);
  ASSERT_FALSE(o.add_run_hooks);
  o.check_command = {"/bin/sh", "-c", "echo '{\"pass\":true}'"};
  std::vector<Case> cases = {{"a", "go", Path("fixture"), {}, {}}};
  Result<ArmRuns> arm = EvaluateArm(OriginalText(), cases, o);
  ASSERT_TRUE(arm.ok()) << arm.status();
  const CaseRun& run = arm->cases[0][0];
  EXPECT_EQ(run.status, "completed");
  EXPECT_THAT(run.output, HasSubstr("withheld"));
  EXPECT_THAT(run.output, ::testing::Not(HasSubstr("fixture-data")));
  json transcript = json::parse(run.transcript);
  ASSERT_EQ(transcript.size(), 6u);
  EXPECT_EQ(transcript[3]["tool_call_id"], "c1");
  EXPECT_EQ(transcript[3]["is_error"], true);
  EXPECT_EQ(transcript[3]["content"], "withheld");
}

TEST_F(EvaluateTest, RunsWriteInACopyOfTheFixture) {
  // write_file is declared read-only here, so it runs: in the copy, never in the fixture.
  Write("agent/agent.toml", std::string(kAgentToml) + "[shadow]\nread_only = [\"write_file\"]\n");
  Write("fixture/data.txt", "fixture-data\n");
  Write("fixture/sub/deep.txt", "deep\n");
  FunctionProvider model([](const llm::CompletionRequest& r) -> Result<llm::Completion> {
    if (Turn(r) == 0) {
      return Calls({{"c1", "write_file", R"({"path":"data.txt","content":"changed"})"},
                    {"c2", "write_file", R"({"path":"out.txt","content":"new"})"}});
    }
    return Text("done");
  });
  EvaluateOptions o = Options(&model);
  o.repeats = 2;
  // The check sees the run's writes and the rest of the fixture.
  o.check_command = {"/bin/sh", "-c",
                     R"sh(if [ "$(cat data.txt out.txt sub/deep.txt)" = "changednewdeep" ]; )sh"
                     R"sh(then echo '{"pass":true}'; else echo '{"pass":false}'; fi)sh"};
  std::vector<Case> cases = {{"a", "go", Path("fixture"), {}, {}}};
  Result<ArmRuns> arm = EvaluateArm(OriginalText(), cases, o);
  ASSERT_TRUE(arm.ok()) << arm.status();
  // The second repeat starts from the fixture again, so its check sees the same.
  EXPECT_TRUE(arm->cases[0][0].check.pass);
  EXPECT_TRUE(arm->cases[0][1].check.pass);
  EXPECT_EQ(Read("fixture/data.txt"), "fixture-data\n");
  EXPECT_FALSE(fs_.Exists(Path("fixture/out.txt")));
}  // namespace

TEST_F(EvaluateTest, BrokenChecksFailTheirRunAndTheEvaluationGoesOn) {
  FunctionProvider model(EchoTask);
  EvaluateOptions o = Options(&model);
  o.check_command = {"/bin/sh", "-c", R"(case "$1" in
    exit1) echo 'no verdict here' >&2; echo 'second line' >&2; exit 1;;
    garbage) echo 'all good!';;
    string) echo '{"pass":"yes"}';;
    array) echo '[{"pass":true}]';;
    two) echo '{"pass":true} {"pass":true}';;
    huge) echo '{"pass":true,"score":1e999}';;
    noscore) echo '{"pass":true,"score":"high"}';;
    signal) kill -9 $$;;
    ok) echo ' {"pass": true, "reason": "fine"} ';;
  esac)",
                     "check"};
  std::vector<std::string> modes = {"exit1", "garbage", "string", "array", "two",
                                    "huge",  "noscore", "signal", "ok"};
  std::vector<Case> cases;
  for (const std::string& m : modes) cases.push_back({m, "good", "", {m}, {}});
  Result<ArmRuns> arm = EvaluateArm(OriginalText(), cases, o);
  ASSERT_TRUE(arm.ok()) << arm.status();
  std::map<std::string, CheckVerdict> verdicts;
  for (const auto& runs : arm->cases) verdicts[runs[0].case_id] = runs[0].check;
  for (const std::string& m : modes) {
    if (m == "ok") continue;
    EXPECT_FALSE(verdicts[m].pass) << m;
    EXPECT_EQ(verdicts[m].score, 0) << m;
  }
  EXPECT_EQ(verdicts["exit1"].error, "exited 1: no verdict here");
  EXPECT_THAT(verdicts["garbage"].error, StartsWith("printed no JSON object: "));
  EXPECT_EQ(verdicts["string"].error,
            R"(printed an invalid verdict: JSON key "pass": expected boolean, got string)");
  EXPECT_EQ(verdicts["array"].error, "printed no JSON object: got array");
  EXPECT_THAT(verdicts["two"].error, StartsWith("printed no JSON object: "));
  EXPECT_THAT(verdicts["huge"].error,
              AllOf(StartsWith("printed no JSON object: "), HasSubstr("number overflow")));
  EXPECT_THAT(verdicts["noscore"].error, HasSubstr("\"score\""));
  EXPECT_EQ(verdicts["signal"].error, "killed by signal 9");
  EXPECT_TRUE(verdicts["ok"].pass);
  EXPECT_EQ(verdicts["ok"].score, 1.0);
  EXPECT_EQ(verdicts["ok"].error, "");
  for (const auto& runs : arm->cases) EXPECT_EQ(runs[0].status, "completed");
}

TEST_F(EvaluateTest, ACheckThatOutlivesItsTimeoutIsKilledAndFails) {
  FunctionProvider model(EchoTask);
  EvaluateOptions o = Options(&model);
  o.check_command = {"/bin/sh", "-c",
                     R"(if [ "$1" = slow ]; then sleep 5; fi; echo '{"pass":true}')", "check"};
  o.check_timeout = std::chrono::milliseconds(500);
  std::vector<Case> cases = {{"slow", "good", "", {"slow"}, {}}, {"fast", "good", "", {}, {}}};
  Result<ArmRuns> arm = EvaluateArm(OriginalText(), cases, o);
  ASSERT_TRUE(arm.ok()) << arm.status();
  EXPECT_FALSE(arm->cases[0][0].check.pass);
  EXPECT_EQ(arm->cases[0][0].check.error, "timed out after 500ms");
  EXPECT_TRUE(arm->cases[1][0].check.pass);
}

TEST_F(EvaluateTest, ACheckThatCannotStartFailsEveryRun) {
  FunctionProvider model(EchoTask);
  EvaluateOptions o = Options(&model);
  o.check_command = {Path("no-such-check")};
  std::vector<Case> cases = {{"a", "good", "", {}, {}}};
  Result<ArmRuns> arm = EvaluateArm(OriginalText(), cases, o);
  ASSERT_TRUE(arm.ok()) << arm.status();
  EXPECT_FALSE(arm->cases[0][0].check.pass);
  EXPECT_THAT(arm->cases[0][0].check.error, StartsWith("could not start: "));
}

TEST_F(EvaluateTest, FailuresOfMendAndOfTheRunAreRecordedAndTheEvaluationGoesOn) {
  FunctionProvider model([](const llm::CompletionRequest& r) -> Result<llm::Completion> {
    if (Task(r) == "refused") return InvalidArgumentError("the model refuses");
    return Text("good");
  });
  EvaluateOptions o = Options(&model);
  int hooked = 0;
  o.add_run_hooks = [&](agent::Agent&, const agent::AgentSpec& spec) -> Status {
    EXPECT_EQ(spec.name, "t");
    return ++hooked == 1 ? InternalError("hook registry broke") : OkStatus();
  };
  // The check passes the failed run, to show that a failed run is checked.
  o.check_command = {"/bin/sh", "-c",
                     R"(if grep -q '"status":"failed"'; then echo '{"pass":true}'; )"
                     R"(else echo '{"pass":false}'; fi)"};
  std::vector<Case> cases = {{"a", "good", "", {}, {}}, {"b", "refused", "", {}, {}}};
  Result<ArmRuns> arm = EvaluateArm(OriginalText(), cases, o);
  ASSERT_TRUE(arm.ok()) << arm.status();
  const CaseRun& error = arm->cases[0][0];
  EXPECT_EQ(error.status, "error");
  EXPECT_EQ(error.error, "INTERNAL: hook registry broke");
  EXPECT_EQ(error.transcript, "[]");
  EXPECT_FALSE(error.check.pass);
  EXPECT_THAT(error.check.error, StartsWith("not checked"));
  const CaseRun& failed = arm->cases[1][0];
  EXPECT_EQ(failed.status, "failed");
  EXPECT_EQ(failed.output, "");
  EXPECT_THAT(failed.error, AllOf(StartsWith("INVALID_ARGUMENT"), HasSubstr("the model refuses")));
  EXPECT_TRUE(failed.check.pass);
}

TEST_F(EvaluateTest, BadOptionsAreInvalidArguments) {
  FunctionProvider model(EchoTask);
  const AgentText text = OriginalText();
  const std::vector<Case> cases = {{"a", "good", "", {}, {}}};
  auto expect_invalid = [&](EvaluateOptions o, const AgentText& t, const std::vector<Case>& c,
                            const std::string& what) {
    EXPECT_THAT(EvaluateArm(t, c, o), StatusIs(StatusCode::kInvalidArgument)) << what;
    EXPECT_FALSE(fs_.Exists(Path("scratch"))) << what;
  };
  EvaluateOptions o = Options(&model);
  o.provider = nullptr;
  expect_invalid(o, text, cases, "no provider");
  o = Options(&model);
  o.env.fs = nullptr;
  expect_invalid(o, text, cases, "no file system");
  o = Options(&model);
  o.repeats = 0;
  expect_invalid(o, text, cases, "no repeats");
  o = Options(&model);
  o.concurrency = 0;
  expect_invalid(o, text, cases, "no concurrency");
  o = Options(&model);
  o.check_command = {};
  expect_invalid(o, text, cases, "no check");
  o = Options(&model);
  o.check_command = {""};
  expect_invalid(o, text, cases, "empty program");
  o = Options(&model);
  o.check_timeout = std::chrono::milliseconds(0);
  expect_invalid(o, text, cases, "no timeout");
  o = Options(&model);
  o.scratch_dir = "";
  expect_invalid(o, text, cases, "no scratch");
  for (const char* path : {"skills/../agent.toml", "agent.toml", "skills/a/b.md", "skills/.md",
                           "skills/.hidden.md", "skills/x.txt", "instructions.md"}) {
    AgentText bad = text;
    bad.skills[path] = "---\nname: x\ndescription: d\n---\n";
    expect_invalid(Options(&model), bad, cases, path);
  }
  expect_invalid(Options(&model), text, {{"a", "t", "", {}, {}}, {"a", "t", "", {}, {}}},
                 "repeated id");
  expect_invalid(Options(&model), text, {{"", "t", "", {}, {}}}, "no id");
  expect_invalid(Options(&model), text, {{"a", "t", Path("no-fixture"), {}, {}}}, "no fixture");
  EXPECT_TRUE(model.requests().empty());
}

TEST_F(EvaluateTest, AFolderOrTextThatDoesNotLoadStopsTheArmBeforeAnyRun) {
  FunctionProvider model(EchoTask);
  const std::vector<Case> cases = {{"a", "good", "", {}, {}}};
  EvaluateOptions o = Options(&model);
  o.agent_dir = Path("missing");
  EXPECT_THAT(EvaluateArm(AgentText{}, cases, o), StatusIs(StatusCode::kNotFound));

  AgentText text = OriginalText();
  text.skills["skills/broken.md"] = "no front matter\n";
  EXPECT_THAT(EvaluateArm(text, cases, Options(&model)),
              StatusIs(StatusCode::kInvalidArgument,
                       AllOf(StartsWith("with the candidate's text: " + agent_dir_ +
                                        "/skills/broken.md:1:"),
                             ::testing::Not(HasSubstr("scratch")))));
  EXPECT_FALSE(fs_.Exists(Path("scratch")));

  // The folder loads where it is, but its copies would look for ../proj beside themselves.
  MEND_ASSERT_OK(fs_.CreateDirs(Path("proj")));
  Write("agent/agent.toml", std::string(kAgentToml) + "workspace = \"../proj\"\n");
  EXPECT_THAT(EvaluateArm(OriginalText(), cases, Options(&model)),
              StatusIs(StatusCode::kInvalidArgument, HasSubstr("relative path out of the folder")));
  EXPECT_FALSE(fs_.Exists(Path("scratch")));
  EXPECT_TRUE(model.requests().empty());
}

TEST_F(EvaluateTest, AScratchFolderInUseIsRefusedAndAnEmptyOneIsKept) {
  FunctionProvider model(EchoTask);
  const std::vector<Case> cases = {{"a", "good", "", {}, {}}};
  Write("scratch/leftover", "x");
  EXPECT_THAT(EvaluateArm(OriginalText(), cases, Options(&model)),
              StatusIs(StatusCode::kAlreadyExists));
  EXPECT_EQ(Read("scratch/leftover"), "x");

  MEND_ASSERT_OK(fs_.Unlink(Path("scratch/leftover")));
  Result<ArmRuns> arm = EvaluateArm(OriginalText(), cases, Options(&model));
  ASSERT_TRUE(arm.ok()) << arm.status();
  EXPECT_TRUE(fs_.Exists(Path("scratch")));
  EXPECT_THAT(Entries(Path("scratch")), IsEmpty());
}

TEST_F(EvaluateTest, ScratchCopiesArePrivateAndHoldOnlyFilesAndFolders) {
  Write("agent/agent.toml", std::string(kAgentToml) + "workspace = \"ws\"\n");
  Write("agent/ws/project.txt", "the agent's own workspace");
  Write("agent/tools/helper.sh", "#!/bin/sh\n", 0755);
  Write("fixture/data.txt", "shared\n", 0644);
  Write("fixture/run.sh", "#!/bin/sh\n", 0755);
  Write("secret.txt", "outside\n");
  ASSERT_EQ(::symlink(Path("secret.txt").c_str(), Path("fixture/outside").c_str()), 0);
  ASSERT_EQ(::symlink("data.txt", Path("fixture/inside").c_str()), 0);
  ASSERT_EQ(::symlink(".", Path("fixture/loop").c_str()), 0);
  ASSERT_EQ(::symlink("missing", Path("fixture/dangling").c_str()), 0);
  // The model looks at the scratch folder while its run is going on.
  std::map<std::string, std::string> seen;
  const std::string scratch = Path("scratch");
  FunctionProvider model([&](const llm::CompletionRequest&) -> Result<llm::Completion> {
    seen = Entries(scratch);
    return Text("good");
  });
  std::vector<Case> cases = {{"a", "go", Path("fixture"), {}, {}}};
  Result<ArmRuns> arm = EvaluateArm(OriginalText(), cases, Options(&model));
  ASSERT_TRUE(arm.ok()) << arm.status();
  EXPECT_TRUE(arm->cases[0][0].check.pass);

  EXPECT_EQ(seen["store.db"], "f600");
  EXPECT_EQ(seen["runs/0-0/workspace/data.txt"], "f600");
  EXPECT_EQ(seen["runs/0-0/workspace/run.sh"], "f700");
  EXPECT_EQ(seen["runs/0-0/workspace/inside"], "f600");
  EXPECT_EQ(seen["runs/0-0/agent/tools/helper.sh"], "f700");
  EXPECT_EQ(seen["runs/0-0/agent/ws"], "d700");
  for (const auto& [path, mode] : seen) {
    EXPECT_THAT(mode, ::testing::AnyOf("d700", "f600", "f700")) << path;
    EXPECT_THAT(path, ::testing::Not(::testing::AnyOf(HasSubstr("outside"), HasSubstr("loop"),
                                                      HasSubstr("dangling"), HasSubstr("project"))))
        << "copied: " << path;
  }
  EXPECT_EQ(Read("fixture/data.txt"), "shared\n");
  EXPECT_FALSE(fs_.Exists(scratch));
}

TEST(CheckVerdictTest, ParsesOneObjectWithABooleanPassAndAnOptionalScore) {
  CheckVerdict v = internal::ParseVerdict("\n {\"pass\": false, \"score\": -2.5}\n\n");
  EXPECT_FALSE(v.pass);
  EXPECT_EQ(v.score, -2.5);
  EXPECT_EQ(v.error, "");
  v = internal::ParseVerdict(R"({"score": 3, "pass": true, "why": ["x"]})");
  EXPECT_TRUE(v.pass);
  EXPECT_EQ(v.score, 3);
  EXPECT_EQ(internal::ParseVerdict(R"({"pass": false})").score, 0);
  // null counts as absent, as in every JSON mend reads.
  v = internal::ParseVerdict(R"({"pass": true, "score": null})");
  EXPECT_EQ(v.score, 1);
  EXPECT_EQ(v.error, "");
  for (const char* bad : {"", "   ", "true", R"({"score": 1})", R"({"pass": null})",
                          R"({"pass": 1})", R"({"pass": true, "score": "1"})"}) {
    v = internal::ParseVerdict(bad);
    EXPECT_FALSE(v.pass) << bad;
    EXPECT_NE(v.error, "") << bad;
  }
}

TEST_F(EvaluateTest, WhatTheCheckSaidIsKeptAsItsMessage) {
  FunctionProvider model(EchoTask);
  struct Check {
    std::string script;
    std::string message;
  };
  const std::vector<Check> checks = {
      // A verdict's reason, whatever it also printed on stderr.
      {R"(echo noise >&2; echo '{"pass": false, "reason": "expected cm, got inches"}')",
       "expected cm, got inches"},
      // A verdict without a reason: what it wrote on stderr.
      {R"(echo 'line one' >&2; echo '  line two  ' >&2; echo '{"pass": false}')",
       "line one\n  line two"},
      {R"(echo '{"pass": false, "reason": 7}')", ""},
      // No valid verdict: stderr, else stdout.
      {R"(echo 'Traceback: boom' >&2; exit 3)", "Traceback: boom"},
      {R"(echo 'FAILED: 2 of 3 tests'; exit 1)", "FAILED: 2 of 3 tests"},
      {R"(echo 'not json at all')", "not json at all"},
  };
  for (const Check& check : checks) {
    EvaluateOptions o = Options(&model);
    o.check_command = {"/bin/sh", "-c", check.script};
    Result<ArmRuns> arm = EvaluateArm(OriginalText(), {{"a", "bad", "", {}, {}}}, o);
    ASSERT_TRUE(arm.ok()) << arm.status();
    EXPECT_EQ(arm->cases[0][0].check.message, check.message) << check.script;
    EXPECT_FALSE(arm->cases[0][0].check.pass) << check.script;
  }
}

TEST_F(EvaluateTest, HugeOrBinaryCheckOutputGivesABoundedMessage) {
  FunctionProvider model(EchoTask);
  EvaluateOptions o = Options(&model);
  // 1 MiB of random bytes (NULs, invalid UTF-8, escapes) on both streams, then a failing exit.
  o.check_command = {"/bin/sh", "-c",
                     "head -c 1048576 /dev/urandom; head -c 1048576 /dev/urandom >&2; exit 1"};
  Result<ArmRuns> arm = EvaluateArm(OriginalText(), {{"a", "bad", "", {}, {}}}, o);
  ASSERT_TRUE(arm.ok()) << arm.status();
  const CheckVerdict& v = arm->cases[0][0].check;
  EXPECT_FALSE(v.pass);
  EXPECT_THAT(v.error, StartsWith("exited 1"));
  EXPECT_LE(v.message.size(), internal::kMaxCheckMessageBytes + 3);
  EXPECT_THAT(v.message, ::testing::EndsWith("..."));
  EXPECT_TRUE(IsValidUtf8(v.message));
}

TEST(CheckVerdictTest, MessageExcerptsAreBoundedByLinesAndBytes) {
  EXPECT_EQ(internal::CheckMessageExcerpt(""), "");
  EXPECT_EQ(internal::CheckMessageExcerpt(" \n\t "), "");
  EXPECT_EQ(internal::CheckMessageExcerpt("\n  why\nit failed\n\n"), "why\nit failed");
  std::string lines;
  for (int i = 1; i <= 30; ++i) lines += "line " + std::to_string(i) + "\n";
  const std::string cut = internal::CheckMessageExcerpt(lines);
  EXPECT_THAT(cut, AllOf(StartsWith("line 1\n"), ::testing::EndsWith("line 20...")));
  const std::string long_line(10000, 'x');
  EXPECT_EQ(internal::CheckMessageExcerpt(long_line),
            std::string(internal::kMaxCheckMessageBytes, 'x') + "...");
  // Invalid bytes are repaired and a cut never splits a character.
  const std::string repaired = internal::CheckMessageExcerpt(std::string(5000, '\xff'));
  EXPECT_TRUE(IsValidUtf8(repaired));
  EXPECT_LE(repaired.size(), internal::kMaxCheckMessageBytes + 3);
  EXPECT_EQ(internal::ParseVerdict(R"({"pass": true, "reason": "fine"})").message, "fine");
  EXPECT_EQ(internal::ParseVerdict(R"({"pass": true, "reason": ["x"]})").message, "");
}

TEST_F(EvaluateTest, CheckEvaluationRefusesWhatEvaluateArmWouldWithoutARun) {
  FunctionProvider model(EchoTask);
  const std::vector<Case> good = {{"a", "good", "", {}, {}}};
  MEND_EXPECT_OK(CheckEvaluation(OriginalText(), good, Options(&model)));
  EXPECT_THAT(
      CheckEvaluation(OriginalText(), {{"a", "t", Path("no-fixture"), {}, {}}}, Options(&model)),
      StatusIs(StatusCode::kInvalidArgument, HasSubstr("is not a folder")));
  MEND_ASSERT_OK(fs_.CreateDirs(Path("proj")));
  Write("agent/agent.toml", std::string(kAgentToml) + "workspace = \"../proj\"\n");
  EXPECT_THAT(CheckEvaluation(OriginalText(), good, Options(&model)),
              StatusIs(StatusCode::kInvalidArgument, HasSubstr("relative path out of the folder")));
  EXPECT_TRUE(model.requests().empty());
  EXPECT_FALSE(fs_.Exists(Path("scratch")));
}

TEST(CheckVerdictTest, TimeoutsAreWrittenInTheLargestExactUnit) {
  EXPECT_EQ(internal::FormatTimeout(std::chrono::milliseconds(200)), "200ms");
  EXPECT_EQ(internal::FormatTimeout(std::chrono::milliseconds(1500)), "1500ms");
  EXPECT_EQ(internal::FormatTimeout(std::chrono::seconds(30)), "30s");
  EXPECT_EQ(internal::FormatTimeout(std::chrono::minutes(2)), "2m");
}

}  // namespace
}  // namespace mend::improve
