// agent.toml's [[checks]] and `mend run --shadow` through the real `mend` executable and a scripted
// model: a check replaces a tool result (heal.action in the home's events.jsonl), and shadow mode
// keeps write_file from running while read_file still runs.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <memory>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <system_error>
#include <vector>

#include "tests/support/e2e_harness.h"

namespace mend::testing {
namespace {

using ::testing::ElementsAre;
using ::testing::IsEmpty;

constexpr char kNotes[] = "api_token = SECRET-8812\n";

class ChecksE2eTest : public E2eTest {
 protected:
  void SetUp() override {
    ASSERT_NO_FATAL_FAILURE(E2eTest::SetUp());
    std::error_code error;
    std::filesystem::create_directories(dir_->File("agent/ws"), error);
    ASSERT_FALSE(error) << error.message();
    MEND_ASSERT_OK(dir_->WriteFile("agent/ws/notes.txt", kNotes));
    MEND_ASSERT_OK(dir_->WriteFile("agent/instructions.md", "Read the notes.\n"));
  }

  // Runs `mend run` on the agent folder with the scripted model `script` and `flags`; the run's
  // id is r1.
  ChildOutput MendRun(const std::string& script, const std::vector<std::string>& flags = {}) {
    std::vector<std::string> args = {"--json",
                                     "run",
                                     dir_->File("agent"),
                                     "read the notes",
                                     "--id",
                                     "r1",
                                     "--provider",
                                     "scripted",
                                     "--script-file",
                                     WriteTestFile("script.json", script)};
    args.insert(args.end(), flags.begin(), flags.end());
    return Mend(args);
  }

  // The events of run r1 in the home's events.jsonl whose type is `type`.
  std::vector<nlohmann::json> Events(const std::string& type) {
    std::vector<nlohmann::json> found;
    for (nlohmann::json& event : ReadJsonLines(dir_->File("home/events.jsonl"))) {
      if (event.value("type", "") == type && event.value("run", "") == "r1") {
        found.push_back(std::move(event));
      }
    }
    return found;
  }

  // The `tool` field of each event.
  static std::vector<std::string> Tools(const std::vector<nlohmann::json>& events) {
    std::vector<std::string> tools;
    for (const nlohmann::json& e : events) tools.push_back(e.value("tool", ""));
    return tools;
  }

  static void ExpectCompleted(const ChildOutput& r) {
    EXPECT_EQ(r.status.code, 0) << r.err;
    const nlohmann::json doc = nlohmann::json::parse(r.out, nullptr, false);
    ASSERT_TRUE(doc.is_object()) << r.out;
    EXPECT_EQ(doc["status"], "completed");
    EXPECT_EQ(doc["output"], "done");
  }
};

constexpr char kReadNotes[] = R"([
  {"tool_calls": [{"id": "c1", "name": "read_file", "arguments": {"path": "notes.txt"}}]},
  {"text": "done"}
])";

TEST_F(ChecksE2eTest, RegexCheckFromAgentTomlReplacesTheToolResult) {
  MEND_ASSERT_OK(dir_->WriteFile("agent/agent.toml", R"(name = "checked"
tools = ["read_file"]
workspace = "ws"

[[checks]]
tool = "read_file"
kind = "regex"
pattern = "SECRET-[0-9]+"
must_match = false
action = "replace"
message = "withheld: the file holds a secret"
)"));
  ExpectCompleted(MendRun(kReadNotes));

  const std::vector<nlohmann::json> actions = Events("heal.action");
  ASSERT_EQ(actions.size(), 1u);
  EXPECT_EQ(actions[0]["tool"], "read_file");
  EXPECT_EQ(actions[0]["action"], "replace");
  EXPECT_EQ(actions[0]["reason"], "output matches /SECRET-[0-9]+/");
  const std::vector<nlohmann::json> replaced = Events("tool.replaced");
  ASSERT_EQ(replaced.size(), 1u);
  EXPECT_EQ(replaced[0]["mend.tool.replaced_by_hook"], true);
}

TEST_F(ChecksE2eTest, CommandCheckRunsAsASubprocessAndItsOutputReplacesTheResult) {
  MEND_ASSERT_OK(dir_->WriteFile("agent/agent.toml", R"(name = "checked"
tools = ["read_file"]
workspace = "ws"

[[checks]]
tool = "*"
kind = "command"
command = ["/bin/sh", "-c", "if grep -q SECRET; then echo 'a secret was withheld'; exit 3; fi"]
timeout_seconds = 20
action = "replace"
)"));
  ExpectCompleted(MendRun(kReadNotes));

  const std::vector<nlohmann::json> actions = Events("heal.action");
  ASSERT_EQ(actions.size(), 1u);
  EXPECT_EQ(actions[0]["action"], "replace");
  EXPECT_EQ(actions[0]["reason"], "check command /bin/sh failed (exit 3)");
  EXPECT_EQ(Events("tool.replaced").size(), 1u);
}

TEST_F(ChecksE2eTest, InvalidCheckFailsTheRunAtOnceNamingFileAndLine) {
  MEND_ASSERT_OK(dir_->WriteFile("agent/agent.toml", R"(name = "checked"
tools = ["read_file"]

[[checks]]
tool = "read_file"
kind = "regex"
pattern = "(unclosed"
)"));
  const ChildOutput r = MendRun(kReadNotes);
  EXPECT_EQ(r.status.code, 2);  // an invalid agent folder is input the user must fix
  EXPECT_THAT(r.err, ::testing::StartsWith("mend: " + dir_->File("agent/agent.toml") +
                                           ":7: checks[0].pattern does not compile"));
}

constexpr char kWriteThenRead[] = R"([
  {"tool_calls": [{"id": "c1", "name": "write_file",
                   "arguments": {"path": "out.txt", "content": "changed"}}]},
  {"tool_calls": [{"id": "c2", "name": "read_file", "arguments": {"path": "notes.txt"}}]},
  {"text": "done"}
])";

TEST_F(ChecksE2eTest, ShadowRunDoesNotExecuteWriteFileButRunsReadFile) {
  MEND_ASSERT_OK(dir_->WriteFile("agent/agent.toml", R"(name = "shadowed"
tools = ["write_file", "read_file"]
workspace = "ws"
)"));
  ExpectCompleted(MendRun(kWriteThenRead, {"--shadow"}));

  EXPECT_FALSE(std::filesystem::exists(dir_->File("agent/ws/out.txt")));
  const std::vector<nlohmann::json> actions = Events("heal.action");
  ASSERT_EQ(actions.size(), 1u);
  EXPECT_EQ(actions[0]["tool"], "write_file");
  EXPECT_EQ(actions[0]["action"], "shadow");
  // Only tools that really run publish tool.called.
  EXPECT_THAT(Tools(Events("tool.called")), ElementsAre("read_file"));
}

TEST_F(ChecksE2eTest, WithoutShadowTheSameRunWritesTheFile) {
  MEND_ASSERT_OK(dir_->WriteFile("agent/agent.toml", R"(name = "shadowed"
tools = ["write_file", "read_file"]
workspace = "ws"
)"));
  ExpectCompleted(MendRun(kWriteThenRead));

  auto written = ReadWholeFile(dir_->File("agent/ws/out.txt"));
  MEND_ASSERT_OK(written);
  EXPECT_EQ(*written, "changed");
  EXPECT_THAT(Events("heal.action"), IsEmpty());
  EXPECT_THAT(Tools(Events("tool.called")), ElementsAre("write_file", "read_file"));
}

}  // namespace
}  // namespace mend::testing
