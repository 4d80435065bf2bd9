// agent.toml's [[checks]] and [shadow] reach the runs OpenAgent creates: a check replaces or
// annotates a tool's result, and heal.shadow keeps tools off the read-only list from running.
#include "mend/app/check_hooks.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "mend/app/runtime.h"
#include "mend/llm/scripted_provider.h"
#include "mend/obs/events.h"
#include "tests/app/agent_home_test.h"
#include "tests/support/status_matchers.h"

namespace mend::app {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

class CheckHooksTest : public AgentHomeTest {
 protected:
  void SetUp() override {
    AgentHomeTest::SetUp();
    MEND_ASSERT_OK(env_.fs->CreateDirs(agent_dir_ + "/ws"));
    MEND_ASSERT_OK(
        WriteFileAtomically(*env_.fs, agent_dir_ + "/ws/notes.txt", "token = SECRET-1234\n"));
  }

  void WriteAgentToml(const std::string& text) {
    MEND_ASSERT_OK(WriteFileAtomically(*env_.fs, agent_dir_ + "/agent.toml", text));
  }

  // A runtime whose model answers with `steps`.
  void Open(std::vector<llm::ScriptedStep> steps, std::map<std::string, std::string> flags = {}) {
    ConfigSources sources;
    sources.flags = std::move(flags);
    sources.flags["home"] = dir_ + "/home";
    Result<Config> config = LoadConfig(sources, *env_.fs);
    MEND_ASSERT_OK(config);
    auto provider = std::make_unique<llm::ScriptedProvider>(std::move(steps));
    provider_ = provider.get();
    RuntimeOptions options;
    options.provider = std::move(provider);
    options.event_log = EventLog::kNone;
    auto runtime = OpenRuntime(*config, env_, std::move(options));
    MEND_ASSERT_OK(runtime);
    runtime_ = std::move(runtime).value();
    runtime_->events->Subscribe(events_);
  }

  Result<agent::RunResult> Run(const std::string& run_id) {
    MEND_ASSIGN_OR_RETURN(std::unique_ptr<agent::Agent> agent, OpenAgent(*runtime_, agent_dir_));
    agent::SendOptions send;
    send.run_id = run_id;
    return agent->Send("look at the notes", send);
  }

  // The stored tool messages of run `id`, as JSON, in order.
  std::vector<nlohmann::json> ToolMessages(const std::string& id) {
    std::vector<nlohmann::json> tools;
    auto snapshot = runtime_->store->Load(id);
    EXPECT_THAT(snapshot, ::mend::testing::IsOk());
    if (!snapshot.ok()) return tools;
    for (const std::string& text : snapshot->messages) {
      nlohmann::json message = nlohmann::json::parse(text);
      if (message["role"] == "tool") tools.push_back(std::move(message));
    }
    return tools;
  }

  // The `heal.action` events, as "<tool> <action>".
  std::vector<std::string> HealActions() const {
    std::vector<std::string> actions;
    for (const obs::Event& e : events_->events()) {
      if (e.type() != "heal.action") continue;
      actions.push_back(nlohmann::json::parse(*e.Find("tool")).get<std::string>() + " " +
                        nlohmann::json::parse(*e.Find("action")).get<std::string>());
    }
    return actions;
  }

  static llm::ScriptedStep Call(const std::string& id, const std::string& tool,
                                const std::string& arguments) {
    llm::ScriptedStep step;
    step.tool_calls.push_back({id, tool, arguments});
    return step;
  }
  static llm::ScriptedStep Text(const std::string& text) {
    llm::ScriptedStep step;
    step.text = text;
    return step;
  }

  llm::ScriptedProvider* provider_ = nullptr;
  std::shared_ptr<obs::MemorySink> events_ = std::make_shared<obs::MemorySink>();
  std::unique_ptr<Runtime> runtime_;
};

TEST_F(CheckHooksTest, CheckFromAgentTomlReplacesTheResultAndTheConversationMarksIt) {
  WriteAgentToml(R"(name = "t"
tools = ["read_file"]
workspace = "ws"

[[checks]]
tool = "read_file"
kind = "regex"
pattern = "SECRET-[0-9]+"
must_match = false
action = "replace"
message = "withheld: the file holds a secret"
)");
  Open({Call("c1", "read_file", R"({"path": "notes.txt"})"), Text("done")});
  auto result = Run("r1");
  MEND_ASSERT_OK(result);
  EXPECT_EQ(result->status, store::RunStatus::kCompleted);

  const std::vector<nlohmann::json> tools = ToolMessages("r1");
  ASSERT_EQ(tools.size(), 1u);
  EXPECT_EQ(tools[0]["content"], "withheld: the file holds a secret");
  EXPECT_EQ(tools[0].value("replaced_by_hook", false), true);
  EXPECT_EQ(tools[0].value("is_error", false), true);
  // The model saw the replacement, never the secret.
  const std::vector<llm::CompletionRequest> requests = provider_->requests();
  ASSERT_EQ(requests.size(), 2u);
  EXPECT_EQ(requests[1].messages.back().content, "withheld: the file holds a secret");
  EXPECT_THAT(HealActions(), ElementsAre("read_file replace"));
}

TEST_F(CheckHooksTest, HintCheckAppendsItsMessageWithoutMarkingTheResult) {
  WriteAgentToml(R"(name = "t"
tools = ["read_file"]
workspace = "ws"

[[checks]]
tool = "*"
kind = "max_bytes"
max_bytes = 5
)");
  Open({Call("c1", "read_file", R"({"path": "notes.txt"})"), Text("done")});
  MEND_ASSERT_OK(Run("r1"));
  const std::vector<nlohmann::json> tools = ToolMessages("r1");
  ASSERT_EQ(tools.size(), 1u);
  const std::string content = tools[0]["content"];
  EXPECT_THAT(content, HasSubstr("SECRET-1234"));
  EXPECT_THAT(content, HasSubstr("output check failed: output is"));
  EXPECT_FALSE(tools[0].contains("replaced_by_hook"));
  EXPECT_THAT(HealActions(), ElementsAre("read_file hint"));
}

TEST_F(CheckHooksTest, ShadowModeRunsOnlyTheReadOnlyTools) {
  WriteAgentToml(R"(name = "t"
tools = ["write_file", "read_file"]
workspace = "ws"
)");
  Open({Call("c1", "write_file", R"({"path": "out.txt", "content": "x"})"),
        Call("c2", "read_file", R"({"path": "notes.txt"})"), Text("done")},
       {{"heal.shadow", "true"}});
  auto result = Run("r1");
  MEND_ASSERT_OK(result);
  EXPECT_EQ(result->status, store::RunStatus::kCompleted);
  EXPECT_FALSE(std::filesystem::exists(agent_dir_ + "/ws/out.txt"));
  const std::vector<nlohmann::json> tools = ToolMessages("r1");
  ASSERT_EQ(tools.size(), 2u);
  EXPECT_EQ(tools[0]["content"],
            "not executed (shadow mode): write_file is not in the read-only list");
  EXPECT_THAT(tools[1]["content"].get<std::string>(), HasSubstr("SECRET-1234"));
  EXPECT_THAT(HealActions(), ElementsAre("write_file shadow"));
}

// Resuming a run that started in shadow mode, from an invocation without heal.shadow, must not run
// the tools the run simulated: the run recorded its mode.
TEST_F(CheckHooksTest, ARunStartedInShadowModeIsResumedInShadowMode) {
  WriteAgentToml(R"(name = "t"
tools = ["write_file", "read_file"]
workspace = "ws"
)");
  llm::ScriptedStep outage;
  outage.error = UnavailableError("model down");
  Open({Call("c1", "read_file", R"({"path": "notes.txt"})"), outage}, {{"heal.shadow", "true"}});
  auto failed = Run("r1");
  MEND_ASSERT_OK(failed);
  ASSERT_EQ(failed->status, store::RunStatus::kFailed);

  // The write is asked for whether the script is read from its start or by position.
  const llm::ScriptedStep write =
      Call("c2", "write_file", R"({"path": "out.txt", "content": "x"})");
  Open({write, write, Text("done")});
  auto agent = OpenAgentForRun(*runtime_, "r1");
  MEND_ASSERT_OK(agent);
  auto resumed = (*agent)->Resume("r1");
  MEND_ASSERT_OK(resumed);
  EXPECT_EQ(resumed->status, store::RunStatus::kCompleted);
  EXPECT_FALSE(std::filesystem::exists(agent_dir_ + "/ws/out.txt"));
  EXPECT_THAT(HealActions(), ::testing::Contains("write_file shadow"));
}

TEST_F(CheckHooksTest, ShadowModeUsesTheFolderListAndSkipsApproval) {
  WriteAgentToml(R"(name = "t"
tools = ["run_command", "write_file", "read_file"]
workspace = "ws"

[shadow]
read_only = ["write_file"]
)");
  // run_command needs approval; in shadow mode it does not run, so nobody is asked.
  Open({Call("c1", "run_command", R"({"command": "touch ran"})"),
        Call("c2", "write_file", R"({"path": "out.txt", "content": "x"})"),
        Call("c3", "read_file", R"({"path": "notes.txt"})"), Text("done")},
       {{"heal.shadow", "true"}});
  auto result = Run("r1");
  MEND_ASSERT_OK(result);
  EXPECT_EQ(result->status, store::RunStatus::kCompleted);
  EXPECT_FALSE(std::filesystem::exists(agent_dir_ + "/ws/ran"));
  EXPECT_TRUE(std::filesystem::exists(agent_dir_ + "/ws/out.txt"));
  EXPECT_THAT(HealActions(), ElementsAre("run_command shadow", "read_file shadow"));
}

TEST_F(CheckHooksTest, WithoutShadowModeEveryToolRuns) {
  WriteAgentToml(R"(name = "t"
tools = ["write_file"]
workspace = "ws"

[shadow]
read_only = []
)");
  Open({Call("c1", "write_file", R"({"path": "out.txt", "content": "x"})"), Text("done")});
  MEND_ASSERT_OK(Run("r1"));
  EXPECT_TRUE(std::filesystem::exists(agent_dir_ + "/ws/out.txt"));
  EXPECT_TRUE(HealActions().empty());
}

}  // namespace
}  // namespace mend::app
