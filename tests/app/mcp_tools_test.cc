// An agent folder's MCP servers as app wires them (docs/mcp.md): the tools the agent gets, their
// names, read-only and approval flags, ${VAR} expansion, runs that call them (shadow mode and
// approvals included), a server that dies, and a resumed run whose tool changed. The server is
// fake_mcp_server (tests/support/fake_mcp_server_main.cc), a real child process over stdio.
#include "mend/app/mcp_tools.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <atomic>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <variant>

#include "mend/app/runtime.h"
#include "mend/base/config.h"
#include "mend/llm/scripted_provider.h"
#include "mend/obs/events.h"
#include "mend/obs/trace.h"
#include "tests/app/agent_home_test.h"
#include "tests/support/status_matchers.h"

namespace mend::app {
namespace {

using ::mend::testing::StatusIs;
using ::testing::AllOf;
using ::testing::Contains;
using ::testing::HasSubstr;
using json = nlohmann::json;

class McpToolsTest : public AgentHomeTest {
 protected:
  void SetUp() override {
    AgentHomeTest::SetUp();
    MEND_ASSERT_OK(env_.fs->CreateDirs(agent_dir_ + "/ws"));
  }

  // agent.toml with one server "fake" started with `flags` and the table's `extra` lines.
  void WriteAgent(const std::string& flags, const std::string& extra = "") {
    const std::string toml =
        "name = \"t\"\ntools = []\nworkspace = \"ws\"\n\n[[mcp_servers]]\n"
        "name = \"fake\"\ncommand = \"" FAKE_MCP_SERVER_BINARY
        "\"\n"
        "args = [" +
        flags + "]\n" + extra;
    MEND_ASSERT_OK(WriteFileAtomically(*env_.fs, agent_dir_ + "/agent.toml", toml));
  }

  Result<McpTools> Start(VariableLookup variables = ProcessVariables()) {
    MEND_ASSIGN_OR_RETURN(agent::AgentSpec spec, agent::LoadAgentFolder(*env_.fs, agent_dir_));
    McpToolsOptions options;
    options.workspace = spec.workspace;
    options.variables = std::move(variables);
    if (bus_ == nullptr) bus_ = std::make_unique<obs::EventBus>(*env_.clock);
    options.events = bus_.get();
    return StartMcpTools(spec, options);
  }

  void Open(std::vector<llm::ScriptedStep> steps, std::map<std::string, std::string> flags = {}) {
    ConfigSources sources;
    sources.flags = std::move(flags);
    sources.flags["home"] = dir_ + "/home";
    Result<Config> config = LoadConfig(sources, *env_.fs);
    MEND_ASSERT_OK(config);
    RuntimeOptions options;
    options.provider = std::make_unique<llm::ScriptedProvider>(std::move(steps));
    options.event_log = EventLog::kNone;
    options.span_processor = spans_;
    auto runtime = OpenRuntime(*config, env_, std::move(options));
    MEND_ASSERT_OK(runtime);
    runtime_ = std::move(runtime).value();
    runtime_->events->Subscribe(events_);
  }

  // The content of each stored tool message of run `id`, in order.
  std::vector<std::string> ToolResults(const std::string& id) {
    std::vector<std::string> results;
    auto snapshot = runtime_->store->Load(id);
    EXPECT_THAT(snapshot, ::mend::testing::IsOk());
    if (!snapshot.ok()) return results;
    for (const std::string& text : snapshot->messages) {
      json message = json::parse(text);
      if (message["role"] == "tool") results.push_back(message["content"].get<std::string>());
    }
    return results;
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

  bool Exists(const std::string& rel) { return std::filesystem::exists(agent_dir_ + "/ws/" + rel); }

  std::unique_ptr<obs::EventBus> bus_;
  std::unique_ptr<Runtime> runtime_;
  std::shared_ptr<obs::MemorySink> events_ = std::make_shared<obs::MemorySink>();
  std::shared_ptr<obs::MemorySpanProcessor> spans_ = std::make_shared<obs::MemorySpanProcessor>();
};

// The text of attribute `key` of `span`, or "" when it has none.
std::string TextAttribute(const obs::SpanData& span, std::string_view key) {
  const obs::AttributeValue* value = obs::FindAttribute(span.attributes, key);
  if (value == nullptr || !std::holds_alternative<std::string>(*value)) return "";
  return std::get<std::string>(*value);
}

TEST_F(McpToolsTest, EachToolIsNamedAfterItsServerWithItsFlags) {
  WriteAgent("",
             "read_only = [\"fail\"]\ntrust_annotations = true\n"
             "requires_approval = \"destructive\"\n");
  Result<McpTools> mcp = Start();
  MEND_ASSERT_OK(mcp);
  ASSERT_EQ(mcp->servers.size(), 1u);
  EXPECT_EQ(mcp->servers[0].protocol_version, "2025-11-25");
  std::map<std::string, const McpToolView*> views;
  for (const McpToolView& view : mcp->views) views[view.name] = &view;
  ASSERT_EQ(views.size(), 8u);
  ASSERT_TRUE(views.count("fake__echo"));
  // echo says it is read-only and not destructive, and the folder trusts annotations.
  EXPECT_TRUE(views["fake__echo"]->read_only);
  EXPECT_FALSE(views["fake__echo"]->requires_approval);
  // fail is listed read-only; it has no annotations, so it counts as destructive.
  EXPECT_TRUE(views["fake__fail"]->read_only);
  EXPECT_TRUE(views["fake__fail"]->requires_approval);
  EXPECT_FALSE(views["fake__write_note"]->read_only);
  EXPECT_TRUE(views["fake__write_note"]->requires_approval);
  EXPECT_THAT(mcp->read_only, Contains("fake__echo"));
  const agent::ToolSpec& spec = mcp->tools[0]->spec();
  EXPECT_EQ(spec.name, "fake__echo");
  EXPECT_THAT(spec.description, HasSubstr("(tool echo of MCP server fake)"));
  EXPECT_EQ(json::parse(spec.parameters)["required"][0], "text");
}

TEST_F(McpToolsTest, AnAllowListKeepsOnlyItsToolsAndNamesAMissingOne) {
  WriteAgent("", "tools = [\"echo\", \"env\"]\n");
  Result<McpTools> mcp = Start();
  MEND_ASSERT_OK(mcp);
  ASSERT_EQ(mcp->tools.size(), 2u);
  EXPECT_EQ(mcp->tools[1]->spec().name, "fake__env");
  // Without annotations trusted or a read_only list, nothing runs in shadow mode.
  EXPECT_TRUE(mcp->read_only.empty());

  WriteAgent("", "tools = [\"echo\", \"ehco\"]\n");
  EXPECT_THAT(Start(), StatusIs(StatusCode::kInvalidArgument,
                                AllOf(HasSubstr("agent.toml:5: mcp_servers.fake.tools names "
                                                "\"ehco\", which the server does not offer"),
                                      HasSubstr("it offers: echo, write_note, env"))));
}

TEST_F(McpToolsTest, VariablesAreExpandedForTheServerOnly) {
  WriteAgent("", "env = { FAKE_GREETING = \"hello ${WHO}\" }\n");
  const VariableLookup lookup = [](const std::string& name) -> std::optional<std::string> {
    if (name == "WHO") return "world";
    return std::nullopt;
  };
  Result<McpTools> mcp = Start(lookup);
  MEND_ASSERT_OK(mcp);
  const agent::Tool* env = nullptr;
  for (const auto& tool : mcp->tools) {
    if (tool->spec().name == "fake__env") env = tool.get();
  }
  ASSERT_NE(env, nullptr);
  agent::ToolContext ctx;
  Result<agent::ToolResult> value =
      const_cast<agent::Tool*>(env)->Execute(R"({"name":"FAKE_GREETING"})", ctx);
  MEND_ASSERT_OK(value);
  EXPECT_EQ(value->content, "hello world");
  // The tool's description and schema, what a checkpoint or a span could hold, do not carry it.
  EXPECT_THAT(env->spec().description, ::testing::Not(HasSubstr("world")));

  EXPECT_THAT(Start([](const std::string&) { return std::nullopt; }),
              StatusIs(StatusCode::kInvalidArgument,
                       HasSubstr("mcp_servers.fake.env.FAKE_GREETING uses ${WHO}, which is not "
                                 "set")));
}

TEST_F(McpToolsTest, AServerThatCannotStartNamesItsLine) {
  MEND_ASSERT_OK(WriteFileAtomically(*env_.fs, agent_dir_ + "/agent.toml",
                                     "name = \"t\"\ntools = []\n[[mcp_servers]]\nname = "
                                     "\"gone\"\ncommand = \"/nonexistent/srv\"\n"));
  EXPECT_THAT(Start(),
              StatusIs(StatusCode::kNotFound, AllOf(HasSubstr("agent.toml:3: mcp_servers.gone"),
                                                    HasSubstr("MCP server gone"))));
}

TEST_F(McpToolsTest, ARunCallsMcpToolsAndShadowModeRunsOnlyReadOnlyOnes) {
  WriteAgent("", "read_only = [\"echo\"]\n");
  Open({Call("c1", "fake__write_note", R"({"name":"n.txt","text":"hi"})"),
        Call("c2", "fake__echo", R"({"text":"ping"})"), Text("done")});
  {
    auto agent = OpenAgent(*runtime_, agent_dir_);
    MEND_ASSERT_OK(agent);
    agent::SendOptions send;
    send.run_id = "real";
    Result<agent::RunResult> run = (*agent)->Send("write a note", send);
    MEND_ASSERT_OK(run);
    EXPECT_EQ(run->status, store::RunStatus::kCompleted);
  }
  EXPECT_TRUE(Exists("n.txt"));
  EXPECT_THAT(ToolResults("real"), ::testing::ElementsAre("wrote n.txt", "ping"));

  // The same under shadow mode: the write gets a shadow result, the read-only echo runs.
  ASSERT_TRUE(std::filesystem::remove(agent_dir_ + "/ws/n.txt"));
  Open({Call("c1", "fake__write_note", R"({"name":"n.txt","text":"hi"})"),
        Call("c2", "fake__echo", R"({"text":"ping"})"), Text("done")},
       {{"heal.shadow", "true"}});
  {
    auto agent = OpenAgent(*runtime_, agent_dir_);
    MEND_ASSERT_OK(agent);
    agent::SendOptions send;
    send.run_id = "shadow";
    MEND_ASSERT_OK((*agent)->Send("write a note", send));
  }
  EXPECT_FALSE(Exists("n.txt"));
  const std::vector<std::string> results = ToolResults("shadow");
  ASSERT_EQ(results.size(), 2u);
  EXPECT_NE(results[0], "wrote n.txt");
  EXPECT_EQ(results[1], "ping");
}

TEST_F(McpToolsTest, ApprovalPausesTheRunAndShowsServerToolAndArguments) {
  WriteAgent("", "requires_approval = [\"write_note\"]\n");
  Open({Call("c1", "fake__write_note", R"({"name":"a.txt","text":"x"})"), Text("done")});
  auto agent = OpenAgent(*runtime_, agent_dir_);
  MEND_ASSERT_OK(agent);
  agent::SendOptions send;
  send.run_id = "ask";
  Result<agent::RunResult> run = (*agent)->Send("write", send);
  MEND_ASSERT_OK(run);
  EXPECT_EQ(run->waiting, "approval");
  EXPECT_THAT(run->question, AllOf(HasSubstr("fake__write_note"), HasSubstr("a.txt")));
  EXPECT_FALSE(Exists("a.txt"));
  Result<agent::RunResult> approved = (*agent)->Approve("ask");
  MEND_ASSERT_OK(approved);
  EXPECT_EQ(approved->status, store::RunStatus::kCompleted);
  EXPECT_TRUE(Exists("a.txt"));
}

TEST_F(McpToolsTest, AServerThatDiesIsRestartedOnceAndItsCallIsAToolError) {
  WriteAgent("");
  Open({Call("c1", "fake__crash", "{}"), Call("c2", "fake__echo", R"({"text":"back"})"),
        Call("c3", "fake__crash", "{}"), Call("c4", "fake__echo", R"({"text":"again"})"),
        Text("done")});
  auto agent = OpenAgent(*runtime_, agent_dir_);
  MEND_ASSERT_OK(agent);
  agent::SendOptions send;
  send.run_id = "crashy";
  Result<agent::RunResult> run = (*agent)->Send("go", send);
  MEND_ASSERT_OK(run);
  EXPECT_EQ(run->status, store::RunStatus::kCompleted);
  const std::vector<std::string> results = ToolResults("crashy");
  ASSERT_EQ(results.size(), 4u);
  EXPECT_THAT(results[0], AllOf(HasSubstr("MCP server fake: the server exited with status 3"),
                                HasSubstr("started again for the next call")));
  EXPECT_EQ(results[1], "back");
  EXPECT_THAT(results[2], HasSubstr("exited with status 3"));
  EXPECT_THAT(results[3], HasSubstr("stopped again after its restart"));

  // Each call's execute_tool span names the server and the tool, and the error when there is one.
  std::vector<obs::SpanData> calls;
  for (const obs::SpanData& span : spans_->spans()) {
    if (span.name.rfind("execute_tool fake__", 0) == 0) calls.push_back(span);
  }
  ASSERT_EQ(calls.size(), 4u);
  for (const obs::SpanData& span : calls) EXPECT_EQ(TextAttribute(span, "mcp.server"), "fake");
  EXPECT_EQ(TextAttribute(calls[0], "mcp.tool"), "crash");
  EXPECT_THAT(TextAttribute(calls[0], "mcp.error"), HasSubstr("exited with status 3"));
  EXPECT_EQ(TextAttribute(calls[1], "mcp.tool"), "echo");
  EXPECT_EQ(TextAttribute(calls[1], "mcp.error"), "");
}

TEST_F(McpToolsTest, AResumedRunStopsWhenAToolItUsedChanged) {
  WriteAgent("", "requires_approval = [\"write_note\"]\n");
  Open({Call("c1", "fake__echo", R"({"text":"x"})"),
        Call("c2", "fake__write_note", R"({"name":"b.txt","text":"x"})"), Text("done")});
  {
    auto agent = OpenAgent(*runtime_, agent_dir_);
    MEND_ASSERT_OK(agent);
    agent::SendOptions send;
    send.run_id = "changed";
    Result<agent::RunResult> run = (*agent)->Send("go", send);
    MEND_ASSERT_OK(run);
    ASSERT_EQ(run->waiting, "approval");
  }
  // The server now defines echo, which the run called, with another schema.
  WriteAgent("\"--alt-schema\"", "requires_approval = [\"write_note\"]\n");
  auto agent = OpenAgentForRun(*runtime_, "changed");
  MEND_ASSERT_OK(agent);
  EXPECT_THAT((*agent)->Approve("changed"),
              StatusIs(StatusCode::kFailedPrecondition, HasSubstr("fake__echo")));
  EXPECT_FALSE(Exists("b.txt"));
}

// Raises `stop` when a tool.called event names `tool` (the bus is synchronous: the call is
// about to be sent).
class StopOnCall final : public obs::EventSink {
 public:
  StopOnCall(std::atomic<bool>& stop, std::string tool) : stop_(stop), tool_(std::move(tool)) {}
  Status Write(const obs::Event& event) override {
    const std::optional<std::string_view> tool = event.Find("tool");
    if (event.type() == "tool.called" && tool.has_value() && *tool == "\"" + tool_ + "\"") {
      stop_.store(true);
    }
    return OkStatus();
  }

 private:
  std::atomic<bool>& stop_;
  const std::string tool_;
};

TEST_F(McpToolsTest, AStopCancelsTheCallInFlightWhichRunsAgainOnResume) {
  const std::string log = dir_ + "/mcp.log";
  WriteAgent("\"--log\", \"" + log + "\"", "timeout = 1\n");
  Open({Call("c1", "fake__slow", "{}"), Text("done")});
  std::atomic<bool> stop{false};
  runtime_->events->Subscribe(std::make_shared<StopOnCall>(stop, "fake__slow"));
  {
    auto agent = OpenAgent(*runtime_, agent_dir_, ProviderUse::kDrivesRuns, &stop);
    MEND_ASSERT_OK(agent);
    agent::SendOptions send;
    send.run_id = "stopped";
    Result<agent::RunResult> run = (*agent)->Send("wait", send);
    MEND_ASSERT_OK(run);
    EXPECT_EQ(run->status, store::RunStatus::kRunning);
  }
  EXPECT_TRUE(ToolResults("stopped").empty());  // no result: the call is still pending
  // The server was told: the call's request id came back in notifications/cancelled.
  std::ifstream in(log);
  std::vector<json> calls, cancels;
  for (std::string line; std::getline(in, line);) {
    if (line.rfind("pid ", 0) == 0) continue;
    const json m = json::parse(line, nullptr, false);
    if (m.value("method", "") == "tools/call") calls.push_back(m);
    if (m.value("method", "") == "notifications/cancelled") cancels.push_back(m);
  }
  ASSERT_EQ(calls.size(), 1u);
  ASSERT_EQ(cancels.size(), 1u);
  EXPECT_EQ(cancels[0]["params"]["requestId"], calls[0]["id"]);

  // Resumed without a stop, the call runs again; this time its timeout (1 s) ends it.
  stop.store(false);
  auto agent = OpenAgentForRun(*runtime_, "stopped");
  MEND_ASSERT_OK(agent);
  Result<agent::RunResult> resumed = (*agent)->Resume("stopped");
  MEND_ASSERT_OK(resumed);
  EXPECT_EQ(resumed->status, store::RunStatus::kCompleted);
  const std::vector<std::string> results = ToolResults("stopped");
  ASSERT_EQ(results.size(), 1u);
  EXPECT_THAT(results[0], HasSubstr("did not answer tools/call within 1000 ms"));
}

}  // namespace
}  // namespace mend::app
