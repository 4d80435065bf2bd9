// The agent folder's [tool_options.<name>] reach every call of that tool, and the lease the loop
// holds outlasts the tool's timeout.

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <chrono>

#include "agent/message_codec.h"
#include "tests/agent/agent_test_support.h"
#include "tests/agent/tool_test_util.h"
#include "tests/support/status_matchers.h"

namespace mend::agent::testing {
namespace {

using ::mend::agent::tool_testing::TempWorkspace;
using std::chrono::milliseconds;
using std::chrono::seconds;
using ::testing::HasSubstr;

// Records the context of each call; answers with `output`.
class ContextTool final : public Tool {
 public:
  explicit ContextTool(std::string name) { spec_.name = std::move(name); }
  const ToolSpec& spec() const override { return spec_; }
  Result<ToolResult> Execute(std::string_view, const ToolContext& ctx) override {
    contexts.push_back(ctx);
    if (on_call) on_call();
    return ToolResult::Ok(output);
  }

  std::vector<ToolContext> contexts;
  std::function<void()> on_call;
  std::string output = "ok";

 private:
  ToolSpec spec_;
};

// The content of the first tool message the model was sent (turn 1's request).
std::string FirstToolResult(const TurnProvider& model) {
  std::vector<llm::CompletionRequest> requests = model.requests();
  for (const llm::Message& m : requests.at(1).messages) {
    if (m.role == llm::Role::kTool) return m.content;
  }
  return "<none>";
}

TEST(AgentToolOptionsTest, ToolOptionsSetTheContextOfThatToolOnly) {
  Harness h;
  TurnProvider model({Calls({Call("c1", "slow", "{}"), Call("c2", "plain", "{}")}), Answer("ok")});
  auto slow = std::make_shared<ContextTool>("slow");
  auto plain = std::make_shared<ContextTool>("plain");
  AgentSpec spec = Harness::Spec();
  spec.tool_options["slow"] = ToolOptions{seconds(300), 1024};
  AgentOptions options = h.Options(model);
  options.extra_tools = {slow, plain};
  auto agent = Agent::Create(spec, options);
  ASSERT_TRUE(agent.ok());
  ASSERT_TRUE((*agent)->Send("t", {.run_id = "r1"}).ok());
  ASSERT_EQ(slow->contexts.size(), 1u);
  EXPECT_EQ(slow->contexts[0].timeout, seconds(300));
  EXPECT_EQ(slow->contexts[0].max_output_bytes, 1024u);
  EXPECT_EQ(slow->contexts[0].call_id, "c1");
  ASSERT_EQ(plain->contexts.size(), 1u);
  EXPECT_EQ(plain->contexts[0].timeout, ToolContext{}.timeout);
  EXPECT_EQ(plain->contexts[0].max_output_bytes, ToolContext{}.max_output_bytes);
}

TEST(AgentToolOptionsTest, MaxOutputBytesCutsTheResultTheModelSees) {
  Harness h;
  TurnProvider model({Calls({Call("c1", "loud", "{}")}), Answer("ok")});
  auto loud = std::make_shared<ContextTool>("loud");
  loud->output = std::string(100'000, 'x');
  AgentSpec spec = Harness::Spec();
  spec.tool_options["loud"].max_output_bytes = 2000;
  AgentOptions options = h.Options(model);
  options.extra_tools = {loud};
  auto agent = Agent::Create(spec, options);
  ASSERT_TRUE(agent.ok());
  ASSERT_TRUE((*agent)->Send("t", {.run_id = "r1"}).ok());
  std::string seen = FirstToolResult(model);
  EXPECT_LT(seen.size(), 3000u);
  EXPECT_GE(seen.size(), 2000u);
}

// A tool may run as long as its timeout: the lease the loop holds meanwhile lasts lease_ttl past
// it, so a tool slower than lease_ttl keeps the run.
TEST(AgentToolOptionsTest, LeaseOutlastsTheToolTimeout) {
  Harness h(StoreKind::kSqlite);
  TurnProvider model({Calls({Call("c1", "slow", "{}")}), Answer("done")});
  auto slow = std::make_shared<ContextTool>("slow");
  std::optional<Time> expires_during_call;
  slow->on_call = [&] {
    expires_during_call = h.store.GetRun("r1")->lease_expires_at;
    h.clock.Advance(seconds(100));  // longer than lease_ttl, within the tool's timeout
  };
  AgentSpec spec = Harness::Spec();
  spec.tool_options["slow"].timeout = seconds(120);
  AgentOptions options = h.Options(model);
  options.extra_tools = {slow};
  Time start = h.clock.Now();
  auto agent = Agent::Create(spec, options);
  ASSERT_TRUE(agent.ok());
  auto result = (*agent)->Send("t", {.run_id = "r1"});
  ASSERT_TRUE(result.ok()) << result.status();
  EXPECT_EQ(result->output, "done");
  EXPECT_EQ(expires_during_call, start + options.lease_ttl + seconds(120));
}

TEST(AgentToolOptionsTest, ToolOptionsTimeoutBeatsTheCommandToolsOwn) {
  TempWorkspace workspace;
  Harness h;
  TurnProvider model({Calls({Call("c1", "wait", "{}")}), Answer("gave up")});
  AgentSpec spec = Harness::Spec();
  CommandToolSpec wait;
  wait.spec.name = "wait";
  wait.spec.description = "waits";
  wait.command = {"sleep", "30"};
  wait.timeout = seconds(60);
  spec.command_tools = {wait};
  spec.tools = {"wait"};
  spec.tool_options["wait"].timeout = milliseconds(200);
  spec.workspace = workspace.path();
  auto agent = Agent::Create(spec, h.Options(model));
  ASSERT_TRUE(agent.ok()) << agent.status();
  auto result = (*agent)->Send("t", {.run_id = "r1"});
  ASSERT_TRUE(result.ok()) << result.status();
  EXPECT_THAT(FirstToolResult(model), HasSubstr("timed out after 0.2s"));
  auto snapshot = h.store.Load("r1", std::nullopt);
  ASSERT_TRUE(snapshot.ok());
  auto tool_message = DecodeMessage(snapshot->messages.at(3), "r1");
  ASSERT_TRUE(tool_message.ok());
  EXPECT_TRUE(tool_message->is_error);
}

}  // namespace
}  // namespace mend::agent::testing
