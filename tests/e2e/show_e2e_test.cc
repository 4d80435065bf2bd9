// `mend show` and the origin columns of `mend pending` through the real binary, on the scripted
// provider: a completed, a failed and a waiting run, hook decisions in the transcript, and an
// agent that changed since its run started.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <system_error>
#include <vector>

#include "tests/support/e2e_harness.h"

namespace mend::testing {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

class ShowE2eTest : public E2eTest {
 protected:
  // A scripted error is an outage that lasts: runs do not ask again themselves.
  ShowE2eTest()
      : E2eTest({.extra_env = {"MEND_QUALITY_REFLEXION_ENABLED=false", "MEND_PROVIDER_RETRIES=0"},
                 .agent_toml = "name = \"helper\"\n"
                               "tools = [\"read_file\", \"write_file\", \"ask_human\"]\n",
                 .instructions = "Help.\n"}) {}

  void SetUp() override {
    ASSERT_NO_FATAL_FAILURE(E2eTest::SetUp());
    std::error_code error;
    std::filesystem::create_directories(dir_->File("project"), error);
    MEND_ASSERT_OK(dir_->WriteFile("project/notes.txt", "hi\n"));
  }

  void WriteAgent(const std::string& rest) {
    MEND_ASSERT_OK(dir_->WriteFile("agent/agent.toml", "name = \"helper\"\n" + rest));
  }

  ChildOutput Mend(std::vector<std::string> args) {
    return E2eTest::Mend(std::move(args), {.cwd = dir_->File("project")});
  }

  nlohmann::json MendJson(std::vector<std::string> args) {
    args.insert(args.begin(), "--json");
    const ChildOutput out = Mend(std::move(args));
    nlohmann::json parsed = nlohmann::json::parse(out.out, nullptr, false);
    EXPECT_TRUE(parsed.is_object()) << out.out << out.err;
    return parsed.is_object() ? parsed : nlohmann::json::object();
  }

  // `mend run` of the agent on a scripted model answering with `script`.
  nlohmann::json Run(const std::string& id, const std::string& script,
                     std::vector<std::string> extra = {}) {
    auto path = dir_->WriteFile(id + ".script.json", script);
    EXPECT_THAT(path, IsOk());
    std::vector<std::string> args = {
        "run",        dir_->File("agent"), "look at the notes", "--id",           id,
        "--provider", "scripted",          "--script-file",     path.value_or("")};
    args.insert(args.end(), extra.begin(), extra.end());
    return MendJson(std::move(args));
  }

  static std::vector<std::string> Roles(const nlohmann::json& show) {
    std::vector<std::string> roles;
    for (const nlohmann::json& m : show["transcript"]) roles.push_back(m["role"]);
    return roles;
  }
};

constexpr char kReadThenAnswer[] = R"([
  {"tool_calls": [{"id": "c1", "name": "read_file", "arguments": {"path": "notes.txt"}}],
   "input_tokens": 100, "output_tokens": 10},
  {"text": "The notes say hi.", "input_tokens": 120, "output_tokens": 8}
])";

TEST_F(ShowE2eTest, ACompletedRunShowsItsTranscriptCheckpointsAndOrigin) {
  ASSERT_EQ(Run("r1", kReadThenAnswer)["status"], "completed");
  nlohmann::json show = MendJson({"show", "r1"});
  EXPECT_EQ(show["run_id"], "r1");
  EXPECT_EQ(show["status"], "completed");
  EXPECT_EQ(show["output"], "The notes say hi.");
  EXPECT_EQ(show["steps"], 2);
  EXPECT_EQ(show["usage"], nlohmann::json({{"input_tokens", 220}, {"output_tokens", 18}}));
  EXPECT_EQ(show["workspace"], dir_->File("project"));
  EXPECT_EQ(show["agent"], "helper");
  EXPECT_EQ(show["model"]["provider"], "scripted");
  EXPECT_EQ(show["agent_changed"], nullptr);
  EXPECT_THAT(Roles(show), ElementsAre("system", "user", "assistant", "tool", "assistant"));
  const nlohmann::json& tool = show["transcript"][3];
  EXPECT_EQ(tool["content"], "hi\n");
  EXPECT_EQ(tool["name"], "read_file");
  EXPECT_EQ(tool["replaced_by_hook"], false);
  EXPECT_EQ(show["transcript"][2]["tool_calls"][0]["id"], "c1");
  // Two steps (model turns) made four checkpoints; "step" is the old name of "checkpoint".
  std::vector<int64_t> checkpoints, old_names;
  for (const nlohmann::json& c : show["checkpoints"]) {
    checkpoints.push_back(c["checkpoint"]);
    old_names.push_back(c["step"]);
  }
  EXPECT_THAT(checkpoints, ElementsAre(1, 2, 3, 4));
  EXPECT_EQ(old_names, checkpoints);

  const ChildOutput text = Mend({"show", "r1"});
  EXPECT_EQ(text.status.code, 0) << text.err;
  EXPECT_THAT(text.out, HasSubstr("workspace   " + dir_->File("project")));
  EXPECT_THAT(text.out, HasSubstr("220 input + 18 output tokens"));
  EXPECT_THAT(text.out, HasSubstr("[4] tool read_file (c1)\nhi\n"));
  EXPECT_THAT(text.out, HasSubstr("2 steps (model turns), 220 input + 18 output tokens"));
  EXPECT_THAT(text.out, HasSubstr("mend fork r1 --from-checkpoint CHECKPOINT"));
  EXPECT_THAT(text.out, HasSubstr("CHECKPOINT  MESSAGES  SAVED\n1           "));
}

TEST_F(ShowE2eTest, AFailedRunShowsItsLastError) {
  const nlohmann::json run =
      Run("r2", R"([{"error": {"code": "invalid_argument", "message": "prompt too long"}}])");
  ASSERT_EQ(run["status"], "failed");
  nlohmann::json show = MendJson({"show", "r2"});
  EXPECT_EQ(show["status"], "failed");
  EXPECT_EQ(show["error"]["code"], "INVALID_ARGUMENT");
  EXPECT_EQ(show["error"]["retryable"], false);
  EXPECT_THAT(show["error"]["message"].get<std::string>(), HasSubstr("prompt too long"));
  const ChildOutput text = Mend({"show", "r2"});
  EXPECT_THAT(text.out, HasSubstr("last error  INVALID_ARGUMENT (permanent, not retryable)"));
}

TEST_F(ShowE2eTest, AWaitingRunShowsItsQuestionAndPendingCall) {
  const nlohmann::json run = Run("r3", R"([{"tool_calls": [{"id": "q1", "name": "ask_human",
      "arguments": {"question": "Which notes file?"}}]}])");
  ASSERT_EQ(run["status"], "waiting");
  nlohmann::json show = MendJson({"show", "r3"});
  EXPECT_EQ(show["status"], "waiting");
  EXPECT_EQ(show["waiting"], "question");
  EXPECT_EQ(show["question"], "Which notes file?");
  ASSERT_EQ(show["pending_calls"].size(), 1u);
  EXPECT_EQ(show["pending_calls"][0]["name"], "ask_human");
  const ChildOutput text = Mend({"show", "r3"});
  EXPECT_THAT(text.out, HasSubstr("status      waiting (question)"));
  EXPECT_THAT(text.out, HasSubstr("asks        Which notes file?"));
}

TEST_F(ShowE2eTest, HookDecisionsAreMarkedInTheTranscript) {
  WriteAgent(R"(tools = ["read_file", "write_file"]

[[checks]]
tool = "read_file"
kind = "regex"
pattern = "secret"
must_match = false
action = "replace"
message = "the file holds a secret"
)");
  MEND_ASSERT_OK(dir_->WriteFile("project/notes.txt", "a secret\n"));
  const nlohmann::json run = Run("r4", R"([
    {"tool_calls": [{"id": "c1", "name": "write_file", "arguments": {"path": "o.txt", "content": "x"}}]},
    {"tool_calls": [{"id": "c2", "name": "read_file", "arguments": {"path": "notes.txt"}}]},
    {"text": "done"}])",
                                 {"--shadow"});
  ASSERT_EQ(run["status"], "completed");
  nlohmann::json show = MendJson({"show", "r4"});
  EXPECT_EQ(show["shadow"], true);
  const nlohmann::json& shadowed = show["transcript"][3];
  EXPECT_EQ(shadowed["name"], "write_file");
  EXPECT_EQ(shadowed["hook_decision"], "supplied");
  const nlohmann::json& replaced = show["transcript"][5];
  EXPECT_EQ(replaced["name"], "read_file");
  EXPECT_EQ(replaced["replaced_by_hook"], true);
  EXPECT_EQ(replaced["hook_decision"], nullptr);
  const ChildOutput text = Mend({"show", "r4"});
  EXPECT_THAT(text.out, HasSubstr("write_file (c1), result given by a hook (not run)"));
  EXPECT_THAT(text.out, HasSubstr("read_file (c2), error, replaced by a hook"));
}

TEST_F(ShowE2eTest, PendingAndShowSayWhenTheAgentChanged) {
  const nlohmann::json run =
      Run("r5", R"([{"error": {"code": "unavailable", "message": "model down"}}])");
  ASSERT_EQ(run["status"], "failed");
  nlohmann::json pending = MendJson({"pending"});
  ASSERT_EQ(pending["runs"].size(), 1u);
  EXPECT_EQ(pending["runs"][0]["workspace"], dir_->File("project"));
  EXPECT_EQ(pending["runs"][0]["agent_changed"], nullptr);

  MEND_ASSERT_OK(dir_->WriteFile("agent/instructions.md", "Check the file name first.\n"));
  pending = MendJson({"pending"});
  EXPECT_EQ(pending["runs"][0]["agent_changed"], "agent changed: instructions");
  EXPECT_THAT(Mend({"pending"}).out, HasSubstr("helper (agent changed)"));
  EXPECT_EQ(MendJson({"show", "r5"})["agent_changed"], "agent changed: instructions");
}

TEST_F(ShowE2eTest, AnUnknownRunIsOneErrorLine) {
  const ChildOutput out = Mend({"show", "nope"});
  EXPECT_EQ(out.status.code, 1);
  EXPECT_EQ(out.err, "mend: no run named nope\n");
}

}  // namespace
}  // namespace mend::testing
