// A run records where and with what it started (workspace, model, agent fingerprint), and keeps
// to it when it is resumed by another Agent: another caller directory, another model, an agent
// that changed.
#include "mend/agent/run_origin.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "agent/held_run.h"
#include "tests/agent/agent_test_support.h"
#include "tests/support/status_matchers.h"

namespace mend::agent::testing {
namespace {

using ::mend::testing::IsOk;
using ::mend::testing::StatusIs;
using ::testing::HasSubstr;

// A tool that answers with the workspace it was given.
class WhereTool final : public Tool {
 public:
  explicit WhereTool(std::string description = "says where it runs") {
    spec_.name = "where";
    spec_.description = std::move(description);
  }
  const ToolSpec& spec() const override { return spec_; }
  Result<ToolResult> Execute(std::string_view, const ToolContext& ctx) override {
    return ToolResult::Ok("workspace=" + ctx.workspace);
  }

 private:
  ToolSpec spec_;
};

// A run that calls `where`, then waits at turn 1 on a model that fails until it is fixed.
struct Fixture {
  Harness h;
  TurnProvider model{
      {Calls({Call("c1", "where", "{}")}), UnavailableError("model down"), Answer("done")}};

  AgentOptions Options(const std::string& holder, const std::string& caller_dir,
                       const std::string& tool_description = "says where it runs") {
    AgentOptions o = h.Options(model, holder);
    o.caller_dir = caller_dir;
    o.extra_tools = {std::make_shared<WhereTool>(tool_description)};
    return o;
  }
  std::unique_ptr<Agent> Make(AgentSpec spec, AgentOptions options) {
    auto agent = Agent::Create(std::move(spec), std::move(options));
    EXPECT_THAT(agent, IsOk());
    return agent.ok() ? std::move(agent).value() : nullptr;
  }
  RunOrigin Origin(const std::string& id) {
    Result<store::RunRecord> run = h.store.GetRun(id);
    EXPECT_THAT(run, IsOk());
    Result<RunOrigin> origin = ParseRunOrigin(run.ok() ? run->metadata : "", id);
    EXPECT_THAT(origin, IsOk());
    return origin.ok() ? *origin : RunOrigin{};
  }
  // Starts run r1 from /home/ann/project; it fails at turn 1 (the model is down).
  void StartFailing(AgentOptions options) {
    auto agent = Make(Harness::Spec(), std::move(options));
    Result<RunResult> first = agent->Send("where am I", {.run_id = "r1"});
    ASSERT_THAT(first, IsOk());
    ASSERT_EQ(first->status, store::RunStatus::kFailed);
    model.SetTurn(1, Calls({Call("c2", "where", "{}")}));
    model.SetTurn(2, Answer("done"));
  }
};

TEST(RunOriginTest, MetadataRoundTripKeepsOtherKeys) {
  RunOrigin origin;
  origin.kind = "send";
  origin.workspace = "/srv/app";
  origin.model = {"openai", "http://127.0.0.1:9", "gpt-x"};
  origin.model_changes.push_back(
      {{"openai", "", "a"}, {"openai", "", "b"}, "2026-01-01T00:00:00Z"});
  origin.fingerprint.agent_toml = "aa";
  origin.fingerprint.tools["read_file"] = "bb";
  origin.shadow = true;
  origin.prompt_prefix_bytes = 12;
  Result<std::string> text = WriteRunOrigin(R"({"flags":{"x":true}})", origin, "r1");
  ASSERT_THAT(text, IsOk());
  EXPECT_EQ(nlohmann::json::parse(*text)["flags"]["x"], true);
  Result<RunOrigin> back = ParseRunOrigin(*text, "r1");
  ASSERT_THAT(back, IsOk());
  EXPECT_EQ(back->workspace, "/srv/app");
  EXPECT_EQ(back->model, origin.model);
  ASSERT_EQ(back->model_changes.size(), 1u);
  EXPECT_EQ(back->model_changes[0].to.model, "b");
  EXPECT_EQ(back->fingerprint, origin.fingerprint);
  EXPECT_TRUE(back->shadow);
  EXPECT_EQ(back->prompt_prefix_bytes, 12u);
}

TEST(RunOriginTest, EmptyMetadataIsAnEmptyOrigin) {
  Result<RunOrigin> origin = ParseRunOrigin("", "r1");
  ASSERT_THAT(origin, IsOk());
  EXPECT_TRUE(origin->workspace.empty());
  EXPECT_TRUE(origin->model.empty());
  EXPECT_TRUE(origin->fingerprint.empty());
}

TEST(RunOriginTest, CorruptMetadataIsDataLossNamingTheRun) {
  EXPECT_THAT(ParseRunOrigin("[1]", "r7"), StatusIs(StatusCode::kDataLoss, HasSubstr("run r7")));
  EXPECT_THAT(ParseRunOrigin(R"({"workspace":3})", "r7"), StatusIs(StatusCode::kDataLoss));
  EXPECT_THAT(ParseRunOrigin(R"({"model":{"name":1}})", "r7"), StatusIs(StatusCode::kDataLoss));
}

TEST(RunOriginTest, DescribesModels) {
  EXPECT_EQ(DescribeRunModel({"openai", "", "gpt-x"}), "openai gpt-x");
  EXPECT_EQ(DescribeRunModel({"openai", "http://h:1", ""}), "openai (default model) at http://h:1");
  EXPECT_EQ(DescribeRunModel({}), "(not recorded)");
}

TEST(RunOriginTest, ComparesFingerprints) {
  AgentFingerprint a{"t", "i", "s", {{"read_file", "1"}, {"grep", "2"}}};
  AgentFingerprint b{"t2", "i", "s2", {{"read_file", "9"}, {"list_dir", "3"}}};
  AgentChanges changes = CompareFingerprints(a, b);
  EXPECT_TRUE(changes.any());
  EXPECT_EQ(changes.Describe(),
            "agent.toml, skills, tool grep removed, tool read_file changed, tool list_dir added");
  EXPECT_FALSE(CompareFingerprints(a, a).any());
  EXPECT_FALSE(CompareFingerprints({}, b).any());  // nothing recorded: nothing to compare
}

TEST(RunOriginTest, RefreshSystemPromptReplacesOnlyTheInstructions) {
  EXPECT_EQ(RefreshSystemPrompt("old\n\n## Long-term Memory\nx", 3, "new rules"),
            "new rules\n\n## Long-term Memory\nx");
  EXPECT_EQ(RefreshSystemPrompt("old", 3, "new"), "new");
  EXPECT_EQ(RefreshSystemPrompt("## Long-term Memory\nx", 0, "new"),
            "new\n\n## Long-term Memory\nx");
  EXPECT_EQ(RefreshSystemPrompt("old\n\nsection", 3, ""), "section");
  EXPECT_EQ(RefreshSystemPrompt("short", 99, "new"), "short");  // does not fit: unchanged
}

TEST(RunOriginTest, SendRecordsWorkspaceModelAndFingerprint) {
  Fixture f;
  AgentOptions options = f.Options("A", "/home/ann/project");
  options.run_model = {"openai", "http://127.0.0.1:9", "gpt-a"};
  auto agent = f.Make(Harness::Spec(), options);
  ASSERT_THAT(agent->Send("where am I", {.run_id = "r1"}), IsOk());
  RunOrigin origin = f.Origin("r1");
  EXPECT_EQ(origin.kind, "send");
  EXPECT_EQ(origin.workspace, "/home/ann/project");
  EXPECT_EQ(origin.model, options.run_model);
  EXPECT_EQ(origin.fingerprint.instructions.size(), 64u);
  EXPECT_EQ(origin.fingerprint.tools.count("where"), 1u);
  EXPECT_EQ(origin.prompt_prefix_bytes, std::string("You help.").size());
  // The tool ran in the caller's directory.
  EXPECT_EQ(f.model.requests().at(1).messages.back().content, "workspace=/home/ann/project");
}

TEST(RunOriginTest, TheAgentsWorkspaceWinsOverTheCallersDirectory) {
  Fixture f;
  AgentSpec spec = Harness::Spec();
  spec.workspace = "/srv/agent-ws";
  auto agent = f.Make(spec, f.Options("A", "/home/ann/project"));
  ASSERT_THAT(agent->Send("where am I", {.run_id = "r1"}), IsOk());
  EXPECT_EQ(f.Origin("r1").workspace, "/srv/agent-ws");
}

TEST(RunOriginTest, ResumeFromAnotherDirectoryUsesTheRecordedWorkspace) {
  Fixture f;
  f.StartFailing(f.Options("A", "/home/ann/project"));
  auto other = f.Make(Harness::Spec(), f.Options("B", "/tmp/elsewhere"));
  Result<RunResult> resumed = other->Resume("r1");
  ASSERT_THAT(resumed, IsOk());
  EXPECT_EQ(resumed->status, store::RunStatus::kCompleted);
  EXPECT_EQ(f.model.requests().back().messages.back().content, "workspace=/home/ann/project");
}

TEST(RunOriginTest, ChangedInstructionsReachTheResumedRun) {
  Fixture f;
  f.StartFailing(f.Options("A", "/p"));
  AgentSpec changed = Harness::Spec();
  changed.instructions = "You help, and you check the file name first.";
  auto other = f.Make(changed, f.Options("B", "/p"));
  ASSERT_THAT(other->Resume("r1"), IsOk());
  const llm::Message system = f.model.requests().back().messages.front();
  EXPECT_EQ(system.content, "You help, and you check the file name first.");
  EXPECT_THAT(f.h.EventTypes(), ::testing::Contains("run.agent_changed"));
  // The stored conversation keeps the prompt the run started with.
  Result<store::RunSnapshot> snapshot = f.h.store.Load("r1");
  ASSERT_THAT(snapshot, IsOk());
  EXPECT_THAT(snapshot->messages.front(), HasSubstr("\"You help.\""));
}

TEST(RunOriginTest, AToolTheRunUsedThatIsGoneStopsTheResume) {
  Fixture f;
  f.StartFailing(f.Options("A", "/p"));
  AgentOptions without = f.h.Options(f.model, "B");
  auto other = f.Make(Harness::Spec(), without);
  EXPECT_THAT(other->Resume("r1"),
              StatusIs(StatusCode::kFailedPrecondition, HasSubstr("tool where")));
  Result<store::RunRecord> run = f.h.store.GetRun("r1");
  ASSERT_THAT(run, IsOk());
  EXPECT_EQ(run->status, store::RunStatus::kFailed);  // left as it was
  EXPECT_FALSE(run->lease_holder.has_value());        // and not held
}

TEST(RunOriginTest, AToolWithAnotherDefinitionStopsTheResume) {
  Fixture f;
  f.StartFailing(f.Options("A", "/p"));
  auto other = f.Make(Harness::Spec(), f.Options("B", "/p", "now does something else"));
  EXPECT_THAT(other->Resume("r1"),
              StatusIs(StatusCode::kFailedPrecondition, HasSubstr("where, whose definition")));
}

TEST(RunOriginTest, AModelChosenOnResumeIsRecorded) {
  Fixture f;
  AgentOptions first = f.Options("A", "/p");
  first.run_model = {"openai", "", "gpt-a"};
  f.StartFailing(first);
  AgentOptions second = f.Options("B", "/p");
  second.run_model = {"openai", "", "gpt-b"};
  auto other = f.Make(Harness::Spec(), second);
  ASSERT_THAT(other->Resume("r1"), IsOk());
  RunOrigin origin = f.Origin("r1");
  EXPECT_EQ(origin.model.model, "gpt-b");
  ASSERT_EQ(origin.model_changes.size(), 1u);
  EXPECT_EQ(origin.model_changes[0].from.model, "gpt-a");
  EXPECT_EQ(origin.model_changes[0].to.model, "gpt-b");
  EXPECT_THAT(f.h.EventTypes(), ::testing::Contains("run.model_changed"));
}

TEST(RunOriginTest, TheSameModelOnResumeRecordsNoChange) {
  Fixture f;
  AgentOptions first = f.Options("A", "/p");
  first.run_model = {"openai", "", "gpt-a"};
  f.StartFailing(first);
  AgentOptions second = f.Options("B", "/p");
  second.run_model = first.run_model;
  auto other = f.Make(Harness::Spec(), second);
  ASSERT_THAT(other->Resume("r1"), IsOk());
  EXPECT_TRUE(f.Origin("r1").model_changes.empty());
  EXPECT_THAT(f.h.EventTypes(), ::testing::Not(::testing::Contains("run.model_changed")));
}

TEST(RunOriginTest, ForksKeepTheOrigin) {
  Fixture f;
  f.StartFailing(f.Options("A", "/home/ann/project"));
  auto agent = f.Make(Harness::Spec(), f.Options("B", "/elsewhere"));
  Result<std::string> fork = agent->Fork("r1", std::nullopt);
  ASSERT_THAT(fork, IsOk());
  EXPECT_EQ(f.Origin(*fork).workspace, "/home/ann/project");
}

}  // namespace
}  // namespace mend::agent::testing
