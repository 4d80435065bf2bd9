// Canary mode end to end in one process (mend/app/canary.h, docs/improve.md "Canary"): a model
// whose answers depend on the instructions it is given, an agent folder whose `[canary] check`
// passes a run that answered "good", and proposals that help, hurt a task kind no case covered,
// or change nothing, each canaried on half of the agent's new runs with --auto.
#include "mend/app/canary.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <atomic>
#include <filesystem>
#include <fstream>
#include <memory>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <vector>

#include "mend/agent/run_origin.h"
#include "mend/app/recovery.h"
#include "mend/app/runtime.h"
#include "mend/base/home_layout.h"
#include "mend/improve/audit.h"
#include "mend/improve/proposal.h"
#include "mend/obs/trace.h"
#include "tests/app/agent_home_test.h"
#include "tests/support/status_matchers.h"

namespace mend::app {
namespace {

using ::mend::testing::IsOk;
using ::mend::testing::StatusIs;
using ::testing::HasSubstr;
using ::testing::Not;

constexpr char kProposalId[] = "imp-20261207T100000-0a1b2c3d";
constexpr char kOtherId[] = "imp-20261207T110000-00000000";

// A task's kind and number, written "<kind>-<n>".
bool IsKind(const std::string& task, const std::string& kind) { return task.rfind(kind, 0) == 0; }
int Number(const std::string& task) { return std::stoi(task.substr(task.find('-') + 1)); }

// Answers from its system prompt and the task (the last user message):
//   - the baseline ("Answer briefly.") fails one task in three of every kind;
//   - "HELP" answers every task well;
//   - "HURT" answers "email" tasks badly (a kind no improve case covered), others well;
//   - "SAME" answers as the baseline does.
// A task naming "refuse" fails with a permanent model error; one naming "stop" sets the stop flag
// (the process going away mid-run) the first time.
class InstructionModel final : public llm::LlmProvider {
 public:
  Result<llm::Completion> Complete(const llm::CompletionRequest& request) override {
    const std::string& system = request.messages[0].content;
    std::string task;
    for (const llm::Message& m : request.messages) {
      if (m.role == llm::Role::kUser) task = m.content;
    }
    prompts.push_back(system);
    llm::Completion c;
    c.usage.input_tokens = 10;
    c.usage.output_tokens = 2;
    if (task.find("stop") != std::string::npos && stop != nullptr && !stopped) {
      // A tool call, so the turn is checkpointed before the answer: the run stops there.
      stopped = true;
      stop->store(true);
      c.tool_calls.push_back({"c1", "no_such_tool", "{}"});
      c.finish_reason = llm::FinishReason::kToolCalls;
      return c;
    }
    if (task.find("refuse") != std::string::npos) return InvalidArgumentError("model refused");
    bool good = Number(task) % 3 != 0;
    if (system.find("HELP") != std::string::npos) good = true;
    if (system.find("HURT") != std::string::npos) good = !IsKind(task, "email");
    c.text = good ? "good" : "bad";
    return c;
  }
  std::string_view name() const override { return "instruction-model"; }

  std::vector<std::string> prompts;
  std::atomic<bool>* stop = nullptr;
  bool stopped = false;
};

class CanaryTest : public AgentHomeTest {
 protected:
  void SetUp() override {
    AgentHomeTest::SetUp();
    MEND_ASSERT_OK(
        WriteFileAtomically(*env_.fs, dir_ + "/check.sh",
                            "if grep -q '\"output\":\"good\"'; then echo '{\"pass\":true}'; "
                            "else echo '{\"pass\":false}'; fi\n"));
    MEND_ASSERT_OK(WriteFileAtomically(
        *env_.fs, agent_dir_ + "/agent.toml",
        "name = \"t\"\ntools = []\n[canary]\ncheck = [\"sh\", \"" + dir_ + "/check.sh\"]\n"));
    runtime_ = Open();
  }

  std::unique_ptr<Runtime> Open(int64_t max_runs = 60) {
    ConfigSources sources;
    sources.flags["home"] = dir_ + "/home";
    sources.env["MEND_IMPROVE_CANARY_MAX_RUNS"] = std::to_string(max_runs);
    sources.env["MEND_IMPROVE_CANARY_MIN_RUNS"] = "20";
    Result<Config> config = LoadConfig(sources, *env_.fs);
    EXPECT_THAT(config, IsOk());
    RuntimeOptions options;
    options.event_log = EventLog::kNone;
    options.provider = std::make_unique<ProviderRef>(model_);
    options.span_processor = spans_;
    Result<std::unique_ptr<Runtime>> runtime = OpenRuntime(*config, env_, std::move(options));
    EXPECT_THAT(runtime, IsOk());
    return runtime.ok() ? std::move(runtime).value() : nullptr;
  }

  // A provider that forwards to the test's model, so several runtimes share it.
  class ProviderRef final : public llm::LlmProvider {
   public:
    explicit ProviderRef(llm::LlmProvider& model) : model_(model) {}
    Result<llm::Completion> Complete(const llm::CompletionRequest& r) override {
      return model_.Complete(r);
    }
    std::string_view name() const override { return model_.name(); }

   private:
    llm::LlmProvider& model_;
  };

  // A queued proposal `id` replacing instructions.md with `text`.
  void Propose(Runtime& runtime, const std::string& id, const std::string& text) {
    MEND_ASSERT_OK(env_.fs->CreateDirs(home::AttemptDir(runtime.home, id)));
    improve::AgentText base;
    base.instructions = "Answer briefly.\n";
    improve::AgentText after;
    after.instructions = text;
    Result<improve::AttemptStore*> attempts = runtime.Attempts();
    ASSERT_THAT(attempts, IsOk());
    MEND_ASSERT_OK((*attempts)->PutProposal(
        improve::MakeProposal(id, agent_dir_, base, after, env_.clock->Now())));
  }

  // Sends `n` runs of alternating kinds ("email-i", "code-i"), ids "r<first + i>".
  void Send(Runtime& runtime, int first, int n) {
    for (int i = first; i < first + n; ++i) {
      Result<std::unique_ptr<agent::Agent>> agent = OpenAgent(runtime, agent_dir_);
      ASSERT_THAT(agent, IsOk());
      agent::SendOptions options;
      options.run_id = "r" + std::to_string(i);
      const std::string task = (i % 2 == 0 ? "email-" : "code-") + std::to_string(i);
      ASSERT_THAT((*agent)->Send(task, options), IsOk());
    }
  }

  std::string Instructions() {
    Result<std::string> text = ReadFileToString(*env_.fs, agent_dir_ + "/instructions.md");
    EXPECT_THAT(text, IsOk());
    return text.ok() ? *text : "";
  }

  agent::RunOrigin OriginOf(Runtime& runtime, const std::string& run_id) {
    Result<store::RunRecord> run = runtime.store->GetRun(run_id);
    EXPECT_THAT(run, IsOk());
    Result<agent::RunOrigin> origin = agent::ParseRunOrigin(run.ok() ? run->metadata : "", run_id);
    EXPECT_THAT(origin, IsOk());
    return origin.ok() ? *origin : agent::RunOrigin();
  }

  std::vector<nlohmann::json> AuditLines(const std::string& id) {
    std::vector<nlohmann::json> lines;
    std::ifstream in(home::AttemptDir(runtime_->home, id) + "/canary.jsonl");
    for (std::string line; std::getline(in, line);) lines.push_back(nlohmann::json::parse(line));
    return lines;
  }

  InstructionModel model_;
  std::shared_ptr<obs::MemorySpanProcessor> spans_ = std::make_shared<obs::MemorySpanProcessor>();
  std::unique_ptr<Runtime> runtime_;
};

// The arm of a run's attempt span, "<none>" without one.
std::string ArmOfSpan(const obs::SpanData& span, std::string_view key) {
  const obs::AttributeValue* v = obs::FindAttribute(span.attributes, key);
  const auto* s = v == nullptr ? nullptr : std::get_if<std::string>(v);
  return s == nullptr ? "<none>" : *s;
}

TEST_F(CanaryTest, AProposalThatHelpsIsPromotedAfterTheMinimum) {
  Propose(*runtime_, kProposalId, "HELP\n");
  ASSERT_THAT(StartCanary(*runtime_, kProposalId, 50, /*auto_decide=*/true), IsOk());
  EXPECT_EQ(Instructions(), "Answer briefly.\n");  // the folder is untouched while it runs
  EXPECT_TRUE(std::filesystem::exists(home::AttemptDir(runtime_->home, kProposalId) +
                                      "/canary/instructions.md"));
  int sent = 0;
  for (; sent < 200; sent += 10) {
    Send(*runtime_, sent, 10);
    Result<improve::Canary> c = (*Canaries(*runtime_))->Get(kProposalId);
    ASSERT_THAT(c, IsOk());
    if (c->state != improve::CanaryState::kRunning) break;
  }
  Result<CanaryReport> report = ReadCanary(*runtime_, kProposalId);
  ASSERT_THAT(report, IsOk());
  EXPECT_EQ(report->canary.state, improve::CanaryState::kPromoted);
  EXPECT_EQ(report->canary.verdict, "promote");
  EXPECT_GE(report->baseline.outcomes.runs, 20);
  EXPECT_GE(report->proposal.outcomes.runs, 20);
  EXPECT_EQ(report->proposal.outcomes.successes, report->proposal.outcomes.runs);
  EXPECT_GT(report->baseline.outcomes.checks_failed, 0);
  EXPECT_EQ(report->proposal.outcomes.input_tokens, 10 * report->proposal.outcomes.steps);
  // Promotion wrote the proposal as `improve apply` does, with a backup.
  EXPECT_EQ(Instructions(), "HELP\n");
  EXPECT_TRUE(std::filesystem::exists(home::AttemptDir(runtime_->home, kProposalId) +
                                      "/backup/instructions.md"));
  Result<improve::Proposal> p = (*runtime_->Attempts())->GetProposal(kProposalId);
  ASSERT_THAT(p, IsOk());
  EXPECT_EQ(p->status, improve::ProposalStatus::kApplied);
  // Recomputable: the recorded counts give the recorded verdict under the recorded rule.
  std::vector<nlohmann::json> lines = AuditLines(kProposalId);
  ASSERT_EQ(lines.size(), 2u);
  EXPECT_EQ(lines[0]["event"], "started");
  EXPECT_EQ(lines[1]["verdict"], "promote");
  improve::ArmOutcomes b, q;
  b.runs = lines[1]["baseline"]["runs"];
  b.successes = lines[1]["baseline"]["successes"];
  b.cost_usd = lines[1]["baseline"]["cost_usd"];
  q.runs = lines[1]["proposal"]["runs"];
  q.successes = lines[1]["proposal"]["successes"];
  q.cost_usd = lines[1]["proposal"]["cost_usd"];
  Result<improve::CanaryDecision> again = improve::DecideCanary(b, q, report->canary.rule);
  ASSERT_THAT(again, IsOk());
  EXPECT_EQ(again->verdict, improve::CanaryVerdict::kPromote);
  // New runs have no arm any more.
  Send(*runtime_, 1000, 1);
  EXPECT_EQ(OriginOf(*runtime_, "r1000").arm, "");
}

TEST_F(CanaryTest, AProposalThatHurtsAnUncoveredKindIsRolledBackAndLeavesNoRunOnIt) {
  Propose(*runtime_, kProposalId, "HURT\n");
  ASSERT_THAT(StartCanary(*runtime_, kProposalId, 50, /*auto_decide=*/true), IsOk());
  for (int sent = 0; sent < 200; sent += 10) {
    Send(*runtime_, sent, 10);
    if ((*Canaries(*runtime_))->Get(kProposalId)->state != improve::CanaryState::kRunning) break;
  }
  Result<CanaryReport> report = ReadCanary(*runtime_, kProposalId);
  ASSERT_THAT(report, IsOk());
  EXPECT_EQ(report->canary.state, improve::CanaryState::kRolledBack);
  EXPECT_EQ(report->canary.verdict, "roll_back");
  EXPECT_GE(report->rule.probability_worse, 0.95);
  EXPECT_EQ(Instructions(), "Answer briefly.\n");
  Result<improve::Proposal> p = (*runtime_->Attempts())->GetProposal(kProposalId);
  ASSERT_THAT(p, IsOk());
  EXPECT_EQ(p->status, improve::ProposalStatus::kRejected);
  EXPECT_THAT(p->note, HasSubstr("canary rolled back"));
  // No run is left on the proposal: new runs take the folder, and none records an arm.
  model_.prompts.clear();
  Send(*runtime_, 1000, 4);
  for (const std::string& prompt : model_.prompts) EXPECT_THAT(prompt, Not(HasSubstr("HURT")));
  EXPECT_EQ(OriginOf(*runtime_, "r1001").arm, "");
}

TEST_F(CanaryTest, ANeutralProposalIsRolledBackAsUnprovenAtTheMaximum) {
  runtime_ = Open(/*max_runs=*/30);
  Propose(*runtime_, kProposalId, "SAME\nAnswer briefly.\n");
  ASSERT_THAT(StartCanary(*runtime_, kProposalId, 50, /*auto_decide=*/true), IsOk());
  int sent = 0;
  for (; sent < 400; sent += 10) {
    Send(*runtime_, sent, 10);
    if ((*Canaries(*runtime_))->Get(kProposalId)->state != improve::CanaryState::kRunning) break;
  }
  Result<CanaryReport> report = ReadCanary(*runtime_, kProposalId);
  ASSERT_THAT(report, IsOk());
  EXPECT_EQ(report->canary.state, improve::CanaryState::kRolledBack);
  EXPECT_EQ(report->canary.verdict, "roll_back_unproven");
  EXPECT_GE(report->baseline.outcomes.runs, 30);
  EXPECT_GE(report->proposal.outcomes.runs, 30);
  EXPECT_EQ(Instructions(), "Answer briefly.\n");
}

TEST_F(CanaryTest, WithoutAutoTheRuleRecommendsAndAPersonDecides) {
  Propose(*runtime_, kProposalId, "HELP\n");
  ASSERT_THAT(StartCanary(*runtime_, kProposalId, 50, /*auto_decide=*/false), IsOk());
  Send(*runtime_, 0, 80);
  Result<CanaryReport> report = ReadCanary(*runtime_, kProposalId);
  ASSERT_THAT(report, IsOk());
  EXPECT_EQ(report->canary.state, improve::CanaryState::kRunning);
  EXPECT_EQ(report->rule.verdict, improve::CanaryVerdict::kPromote);
  EXPECT_THAT(CanaryReportText(*report),
              HasSubstr("next: mend improve promote " + std::string(kProposalId)));
  nlohmann::json j = CanaryReportJson(*report);
  EXPECT_EQ(j["recommendation"]["verdict"], "promote");
  EXPECT_EQ(j["arms"][0]["arm"], "baseline");
  // `improve apply` of the canaried proposal, or of another for the agent, is refused meanwhile.
  EXPECT_THAT(RefuseWhileCanary(*runtime_, agent_dir_, kProposalId),
              StatusIs(StatusCode::kFailedPrecondition));
  Propose(*runtime_, kOtherId, "OTHER\n");
  EXPECT_THAT(StartCanary(*runtime_, kOtherId, 10, false), StatusIs(StatusCode::kAlreadyExists));
  Result<improve::Canary> promoted = PromoteCanary(*runtime_, kProposalId);
  ASSERT_THAT(promoted, IsOk());
  EXPECT_EQ(promoted->verdict, "promote");
  EXPECT_THAT(promoted->reason, HasSubstr("by hand"));
  EXPECT_EQ(Instructions(), "HELP\n");
  EXPECT_THAT(RollbackCanary(*runtime_, kProposalId), StatusIs(StatusCode::kFailedPrecondition));
}

TEST_F(CanaryTest, ARunStoppedBetweenAssignmentAndOutcomeKeepsItsArmOnResume) {
  Propose(*runtime_, kProposalId, "HELP\n");
  ASSERT_THAT(StartCanary(*runtime_, kProposalId, 100, /*auto_decide=*/false), IsOk());
  std::atomic<bool> stop{false};
  model_.stop = &stop;
  {
    Result<std::unique_ptr<agent::Agent>> agent =
        OpenAgent(*runtime_, agent_dir_, ProviderUse::kDrivesRuns, &stop);
    ASSERT_THAT(agent, IsOk());
    agent::SendOptions options;
    options.run_id = "r-stop";
    Result<agent::RunResult> result = (*agent)->Send("code-3 stop", options);
    ASSERT_THAT(result, IsOk());
    EXPECT_EQ(result->status, store::RunStatus::kRunning);  // stopped at a checkpoint
  }
  EXPECT_EQ(OriginOf(*runtime_, "r-stop").arm, kProposalId);
  Result<std::vector<improve::CanaryRunOutcome>> none =
      (*Canaries(*runtime_))->Outcomes(kProposalId);
  ASSERT_THAT(none, IsOk());
  EXPECT_TRUE(none->empty());
  // Another process resumes it: the run takes the proposal's files again, unchanged.
  std::unique_ptr<Runtime> other = Open();
  model_.prompts.clear();
  Result<std::unique_ptr<agent::Agent>> agent = OpenAgentForRun(*other, "r-stop");
  ASSERT_THAT(agent, IsOk());
  Result<agent::RunResult> resumed = (*agent)->Resume("r-stop");
  ASSERT_THAT(resumed, IsOk());
  EXPECT_EQ(resumed->status, store::RunStatus::kCompleted);
  EXPECT_EQ(resumed->output, "good");
  ASSERT_FALSE(model_.prompts.empty());
  EXPECT_THAT(model_.prompts.back(), HasSubstr("HELP"));
  Result<std::vector<improve::CanaryRunOutcome>> outcomes =
      (*Canaries(*other))->Outcomes(kProposalId);
  ASSERT_THAT(outcomes, IsOk());
  ASSERT_EQ(outcomes->size(), 1u);
  EXPECT_EQ((*outcomes)[0].arm, kProposalId);
  EXPECT_EQ((*outcomes)[0].run.status, store::RunStatus::kCompleted);
}

TEST_F(CanaryTest, TwoProcessesOnOneHomeDecideOnce) {
  Propose(*runtime_, kProposalId, "HELP\n");
  ASSERT_THAT(StartCanary(*runtime_, kProposalId, 50, /*auto_decide=*/true), IsOk());
  std::unique_ptr<Runtime> other = Open();
  for (int sent = 0; sent < 200; sent += 10) {
    Send(sent % 20 == 0 ? *runtime_ : *other, sent, 10);
    if ((*Canaries(*runtime_))->Get(kProposalId)->state != improve::CanaryState::kRunning) break;
  }
  // Both settle again: the decided canary is not decided twice.
  Result<std::optional<improve::Canary>> first = SettleCanary(*runtime_, kProposalId);
  Result<std::optional<improve::Canary>> second = SettleCanary(*other, kProposalId);
  ASSERT_THAT(first, IsOk());
  ASSERT_THAT(second, IsOk());
  EXPECT_FALSE(first->has_value());
  EXPECT_FALSE(second->has_value());
  std::vector<nlohmann::json> lines = AuditLines(kProposalId);
  ASSERT_EQ(lines.size(), 2u);
  EXPECT_EQ(lines[1]["verdict"], "promote");
  EXPECT_EQ(Instructions(), "HELP\n");
}

// A chat's turns continue one another: each turn stays on the arm of the turn it continues, so a
// conversation never changes instructions halfway, whatever the new turns' ids would draw.
TEST_F(CanaryTest, ATurnThatContinuesARunStaysOnItsArm) {
  Propose(*runtime_, kProposalId, "HELP\n");
  // A conversation begun before the canary goes on with the baseline.
  Result<std::unique_ptr<agent::Agent>> plain = OpenAgent(*runtime_, agent_dir_);
  ASSERT_THAT(plain, IsOk());
  agent::SendOptions first;
  first.run_id = "before";
  ASSERT_THAT((*plain)->Send("code-1", first), IsOk());
  ASSERT_THAT(StartCanary(*runtime_, kProposalId, 50, /*auto_decide=*/false), IsOk());
  Result<std::unique_ptr<agent::Agent>> agent = OpenAgent(*runtime_, agent_dir_);
  ASSERT_THAT(agent, IsOk());
  for (const std::string start : {"before", "t0"}) {
    std::string previous = start;
    if (start == "t0") {
      agent::SendOptions options;
      options.run_id = start;
      ASSERT_THAT((*agent)->Send("code-2", options), IsOk());
    }
    const std::string arm = start == "before" ? "baseline" : OriginOf(*runtime_, start).arm;
    for (int i = 0; i < 8; ++i) {
      agent::SendOptions options;
      options.run_id = start + "-turn" + std::to_string(i);
      options.continue_from = previous;
      ASSERT_THAT((*agent)->Send("code-" + std::to_string(i), options), IsOk());
      EXPECT_EQ(OriginOf(*runtime_, options.run_id).arm, arm) << options.run_id;
      previous = options.run_id;
    }
  }
}

// A proposal never changes agent.toml, so both arms of a canaried agent share one start of the
// folder's MCP servers.
TEST_F(CanaryTest, BothArmsShareOneStartOfTheFoldersMcpServers) {
  const std::string log = dir_ + "/mcp.log";
  MEND_ASSERT_OK(WriteFileAtomically(*env_.fs, agent_dir_ + "/agent.toml",
                                     "name = \"t\"\ntools = []\n[[mcp_servers]]\nname = \"fake\"\n"
                                     "command = \"" FAKE_MCP_SERVER_BINARY
                                     "\"\nargs = [\"--log\", \"" +
                                         log + "\"]\n"));
  Propose(*runtime_, kProposalId, "HELP\n");
  ASSERT_THAT(StartCanary(*runtime_, kProposalId, 50, /*auto_decide=*/false), IsOk());
  {
    Result<std::unique_ptr<agent::Agent>> agent = OpenAgent(*runtime_, agent_dir_);
    ASSERT_THAT(agent, IsOk());
    for (int i = 0; i < 10; ++i) {
      agent::SendOptions options;
      options.run_id = "r" + std::to_string(i);
      ASSERT_THAT((*agent)->Send("code-" + std::to_string(i), options), IsOk());
    }
  }
  std::set<std::string> arms;
  for (int i = 0; i < 10; ++i) arms.insert(OriginOf(*runtime_, "r" + std::to_string(i)).arm);
  EXPECT_EQ(arms, (std::set<std::string>{"baseline", kProposalId}));
  int initializes = 0;
  std::ifstream in(log);
  for (std::string line; std::getline(in, line);) {
    if (line.find("\"initialize\"") != std::string::npos) ++initializes;
  }
  EXPECT_EQ(initializes, 1);
}

// A proposal that adds a skill: a run of its arm gets the skill in its prompt although the folder
// has no skills/ yet, and names its arm in its trace; a baseline run gets neither.
TEST_F(CanaryTest, TheProposalsArmReadsItsFilesOverTheFolderAndNamesItsArm) {
  MEND_ASSERT_OK(env_.fs->CreateDirs(home::AttemptDir(runtime_->home, kProposalId)));
  improve::AgentText base;
  base.instructions = "Answer briefly.\n";
  improve::AgentText after = base;
  after.skills["skills/triage.md"] =
      "---\nname: triage\ndescription: SKILL-TRIAGE sorts the inbox\n---\nSort by sender.\n";
  MEND_ASSERT_OK((*runtime_->Attempts())
                     ->PutProposal(improve::MakeProposal(kProposalId, agent_dir_, base, after,
                                                         env_.clock->Now())));
  ASSERT_THAT(StartCanary(*runtime_, kProposalId, 50, /*auto_decide=*/false), IsOk());
  Send(*runtime_, 0, 12);
  int proposal_runs = 0;
  for (int i = 0; i < 12; ++i) {
    const std::string id = "r" + std::to_string(i);
    const bool takes = improve::TakesProposal(kProposalId, id, 50);
    proposal_runs += takes;
    const agent::RunOrigin origin = OriginOf(*runtime_, id);
    EXPECT_EQ(origin.arm, takes ? std::string(kProposalId) : "baseline") << id;
    EXPECT_EQ(origin.canary, kProposalId);
  }
  ASSERT_GT(proposal_runs, 0);
  ASSERT_LT(proposal_runs, 12);
  int with_skill = 0;
  for (const std::string& prompt : model_.prompts)
    with_skill += prompt.find("SKILL-TRIAGE") != std::string::npos;
  EXPECT_EQ(with_skill, proposal_runs);
  EXPECT_FALSE(std::filesystem::exists(agent_dir_ + "/skills"));
  int traced = 0;
  for (const obs::SpanData& span : spans_->spans()) {
    if (span.name.rfind("invoke_agent", 0) != 0) continue;
    ++traced;
    const std::string arm = ArmOfSpan(span, "mend.canary.arm");
    EXPECT_TRUE(arm == "baseline" || arm == kProposalId) << arm;
    EXPECT_EQ(ArmOfSpan(span, "mend.canary.proposal"), kProposalId);
  }
  EXPECT_EQ(traced, 12);
}

// Recovery's quarantine of a canaried run counts for the run's arm, keeping what its last ending
// recorded; a run of no canary is left alone.
TEST_F(CanaryTest, AQuarantinedRunCountsForItsArm) {
  Propose(*runtime_, kProposalId, "HELP\n");
  ASSERT_THAT(StartCanary(*runtime_, kProposalId, 100, /*auto_decide=*/false), IsOk());
  {
    Result<std::unique_ptr<agent::Agent>> agent = OpenAgent(*runtime_, agent_dir_);
    ASSERT_THAT(agent, IsOk());
    agent::SendOptions send;
    send.run_id = "r0";
    Result<agent::RunResult> failed = (*agent)->Send("code-1 refuse", send);
    ASSERT_THAT(failed, IsOk());
    ASSERT_EQ(failed->status, store::RunStatus::kFailed);
  }
  Result<std::vector<improve::CanaryRunOutcome>> before =
      (*Canaries(*runtime_))->Outcomes(kProposalId);
  ASSERT_THAT(before, IsOk());
  ASSERT_EQ(before->size(), 1u);
  EXPECT_EQ((*before)[0].run.status, store::RunStatus::kFailed);
  store::RunUpdate update;
  update.status = store::RunStatus::kQuarantined;
  MEND_ASSERT_OK(runtime_->store->UpdateUnleased("r0", update));
  heal::RecoveryOptions options = RecoveryOptionsFor(*runtime_);
  ASSERT_TRUE(options.on_quarantined);
  options.on_quarantined("r0");
  Result<CanaryReport> report = ReadCanary(*runtime_, kProposalId);
  ASSERT_THAT(report, IsOk());
  EXPECT_EQ(report->proposal.outcomes.runs, 1);
  EXPECT_EQ(report->proposal.outcomes.quarantined, 1);
  EXPECT_EQ(report->proposal.outcomes.successes, 0);
  EXPECT_EQ(report->proposal.outcomes.steps, (*before)[0].run.steps);
  MEND_ASSERT_OK(RecordQuarantinedCanaryRun(*runtime_, "r0"));  // again: still one run
  EXPECT_EQ(ReadCanary(*runtime_, kProposalId)->proposal.outcomes.runs, 1);
}

TEST_F(CanaryTest, ABadShareOrAProposalNotQueuedIsRefused) {
  Propose(*runtime_, kProposalId, "HELP\n");
  EXPECT_THAT(StartCanary(*runtime_, kProposalId, 0, false),
              StatusIs(StatusCode::kInvalidArgument));
  EXPECT_THAT(StartCanary(*runtime_, kProposalId, 101, false),
              StatusIs(StatusCode::kInvalidArgument));
  EXPECT_THAT(StartCanary(*runtime_, "imp-20261207T120000-11111111", 10, false),
              StatusIs(StatusCode::kNotFound));
  MEND_ASSERT_OK(
      improve::RejectProposal(*env_.clock, **runtime_->Attempts(), kProposalId, "no").status());
  EXPECT_THAT(StartCanary(*runtime_, kProposalId, 10, false),
              StatusIs(StatusCode::kFailedPrecondition));
}

}  // namespace
}  // namespace mend::app
