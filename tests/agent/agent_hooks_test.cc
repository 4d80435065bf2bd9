#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <stdexcept>
#include <utility>

#include "agent/message_codec.h"
#include "tests/agent/agent_test_support.h"
#include "tests/support/status_matchers.h"

namespace mend::agent::testing {
namespace {

using ::testing::Contains;
using ::testing::ElementsAre;

class FixedPreTool final : public PreToolHook {
 public:
  FixedPreTool(PreToolDecision d, int* asked) : decision_(std::move(d)), asked_(asked) {}
  std::string_view name() const override { return "fixed"; }
  Result<PreToolDecision> BeforeTool(const ToolCallInfo&) override {
    ++*asked_;
    return decision_;
  }

 private:
  PreToolDecision decision_;
  int* asked_;
};

class BrokenHook final : public PreToolHook, public PostRunHook {
 public:
  explicit BrokenHook(bool throws) : throws_(throws) {}
  std::string_view name() const override { return "broken"; }
  Result<PreToolDecision> BeforeTool(const ToolCallInfo&) override {
    if (throws_) throw std::runtime_error("boom");
    return InternalError("nope");
  }
  Status AfterRun(RunOutcome&) override {
    if (throws_) throw std::runtime_error("boom");
    return InternalError("nope");
  }

 private:
  bool throws_;
};

class PostTool final : public PostToolHook {
 public:
  explicit PostTool(PostToolAction a) : action_(std::move(a)) {}
  std::string_view name() const override { return "post"; }
  Result<PostToolAction> AfterTool(const ToolCallInfo&, const ToolResult& r) override {
    seen.push_back(r.content);
    return action_;
  }
  std::vector<std::string> seen;

 private:
  PostToolAction action_;
};

struct HookSetup {
  Harness h;
  TurnProvider model{{Calls({Call("c1", "touch", "{}")}), Answer("done")}};
  std::unique_ptr<Agent> agent;
  HookSetup() {
    AgentOptions options = h.Options(model);
    options.extra_tools = {std::make_shared<RecordingTool>("touch", h.log)};
    agent = std::move(Agent::Create(Harness::Spec(), options)).value();
  }
  llm::Message ToolMessage() { return model.requests().at(1).messages.at(3); }
};

TEST(AgentHooksTest, FirstPreToolDecisionOtherThanAllowWins) {
  HookSetup s;
  int allow = 0, deny = 0, later = 0;
  s.agent->AddPreToolHook(std::make_shared<FixedPreTool>(PreToolDecision::Allow(), &allow));
  s.agent->AddPreToolHook(std::make_shared<FixedPreTool>(PreToolDecision::Deny("not here"), &deny));
  s.agent->AddPreToolHook(std::make_shared<FixedPreTool>(PreToolDecision::Supply("x"), &later));
  auto result = s.agent->Send("t");
  ASSERT_TRUE(result.ok());
  EXPECT_EQ(result->output, "done");
  EXPECT_EQ(allow, 1);
  EXPECT_EQ(deny, 1);
  EXPECT_EQ(later, 0);
  EXPECT_EQ(s.h.log->size(), 0u);
  EXPECT_TRUE(s.ToolMessage().is_error);
  EXPECT_EQ(s.ToolMessage().content, "not here");
}

TEST(AgentHooksTest, SuppliedResultReplacesTheToolAndPassesPostToolHooks) {
  HookSetup s;
  int asked = 0;
  s.agent->AddPreToolHook(
      std::make_shared<FixedPreTool>(PreToolDecision::Supply("cached"), &asked));
  s.agent->AddPostToolHook(std::make_shared<PostTool>(PostToolAction{"hint", std::nullopt}));
  ASSERT_TRUE(s.agent->Send("t").ok());
  EXPECT_EQ(s.h.log->size(), 0u);
  EXPECT_FALSE(s.ToolMessage().is_error);
  EXPECT_EQ(s.ToolMessage().content, "cached\nhint");
}

TEST(AgentHooksTest, PostToolHooksComposeInRegistrationOrder) {
  HookSetup s;
  auto first = std::make_shared<PostTool>(PostToolAction{"first hint", std::nullopt});
  auto second = std::make_shared<PostTool>(PostToolAction{"", ToolResult::Error("replaced")});
  auto third = std::make_shared<PostTool>(PostToolAction{"third hint", std::nullopt});
  s.agent->AddPostToolHook(first);
  s.agent->AddPostToolHook(second);
  s.agent->AddPostToolHook(third);
  ASSERT_TRUE(s.agent->Send("t").ok());
  EXPECT_THAT(first->seen, ElementsAre("touch did {}"));
  EXPECT_THAT(second->seen, ElementsAre("touch did {}\nfirst hint"));
  EXPECT_THAT(third->seen, ElementsAre("replaced"));
  EXPECT_EQ(s.ToolMessage().content, "replaced\nthird hint");
  EXPECT_TRUE(s.ToolMessage().is_error);
}

TEST(AgentHooksTest, FailingOrThrowingHooksAreSkippedAndReported) {
  HookSetup s;
  s.agent->AddPreToolHook(std::make_shared<BrokenHook>(false));
  s.agent->AddPreToolHook(std::make_shared<BrokenHook>(true));
  s.agent->AddPostRunHook(std::make_shared<BrokenHook>(true));
  auto result = s.agent->Send("t");
  ASSERT_TRUE(result.ok());
  EXPECT_EQ(result->status, store::RunStatus::kCompleted);
  EXPECT_EQ(s.h.log->size(), 1u);  // the tool still ran
  auto types = s.h.EventTypes();
  EXPECT_EQ(std::count(types.begin(), types.end(), "hook.failed"), 3);
}

class FlagHook final : public PostRunHook {
 public:
  FlagHook(std::string flag, std::vector<std::string>* seen)
      : flag_(std::move(flag)), seen_(seen) {}
  std::string_view name() const override { return "flag"; }
  Status AfterRun(RunOutcome& outcome) override {
    std::string note =
        flag_ + ":" + outcome.output + ":" + std::string(StatusCodeName(outcome.error.code()));
    for (const auto& [k, v] : outcome.flags) note += ":" + k;
    seen_->push_back(note);
    outcome.flags[flag_] = true;
    return OkStatus();
  }

 private:
  std::string flag_;
  std::vector<std::string>* seen_;
};

TEST(AgentHooksTest, PostRunHooksSeeEarlierFlagsAndTheError) {
  HookSetup s;
  std::vector<std::string> seen;
  s.agent->AddPostRunHook(std::make_shared<FlagHook>("verified", &seen));
  s.agent->AddPostRunHook(std::make_shared<FlagHook>("refined", &seen));
  auto result = s.agent->Send("t");
  ASSERT_TRUE(result.ok());
  EXPECT_THAT(seen, ElementsAre("verified:done:OK", "refined:done:OK:verified"));
  EXPECT_TRUE(result->flags.at("verified"));
  EXPECT_TRUE(result->flags.at("refined"));

  seen.clear();
  s.model.SetTurn(0, Result<llm::Completion>(UnavailableError("down")));
  auto failed = s.agent->Send("t");
  ASSERT_TRUE(failed.ok());
  EXPECT_THAT(seen, Contains("verified::UNAVAILABLE"));
}

// A process killed between a failure and its record: the hooks (the reflexion hook writes the
// lesson job there) have seen the failure, and the run is still running, so recovery resumes it.
// Recorded first, a failed run would never come back to its hooks and the lesson would be lost.
TEST(AgentHooksTest, PostRunHooksSeeAFailureBeforeItIsRecorded) {
  Harness h;
  TurnProvider model{{Result<llm::Completion>(InvalidArgumentError("the request is malformed"))}};
  CrashingStore dying(h.store, /*crash_at=*/1000, CrashPoint::kBeforeSave);
  dying.CrashWhenRecordingFailure();
  auto agent = std::move(Agent::Create(Harness::Spec(), h.Options(model, "A", &dying))).value();
  std::vector<std::string> seen;
  agent->AddPostRunHook(std::make_shared<FlagHook>("reflected", &seen));
  auto result = agent->Send("t", SendOptions{.run_id = "r1"});
  EXPECT_FALSE(result.ok());
  ASSERT_TRUE(dying.crashed());
  EXPECT_THAT(seen, ElementsAre("reflected::INVALID_ARGUMENT"));
  auto record = h.store.GetRun("r1");
  MEND_ASSERT_OK(record);
  EXPECT_EQ(record->status, store::RunStatus::kRunning);
}

// The event of type `type`, or null.
const obs::Event* FindEvent(const std::vector<obs::Event>& events, std::string_view type) {
  for (const obs::Event& e : events) {
    if (e.type() == type) return &e;
  }
  return nullptr;
}

// The stored tool message of run `id` and whether it is marked as replaced by a hook.
std::pair<llm::Message, bool> StoredToolMessage(Harness& h, const std::string& id) {
  auto snapshot = h.store.Load(id, std::nullopt);
  EXPECT_TRUE(snapshot.ok());
  for (const std::string& text : snapshot->messages) {
    MessageMeta meta;
    auto m = DecodeMessage(text, id, &meta);
    EXPECT_TRUE(m.ok());
    if (m.ok() && m->role == llm::Role::kTool) return {*m, meta.replaced_by_hook};
  }
  ADD_FAILURE() << "run " << id << " has no tool message";
  return {};
}

TEST(AgentHooksTest, ReplacedResultIsMarkedStoredAndReported) {
  HookSetup s;
  s.agent->AddPostToolHook(
      std::make_shared<PostTool>(PostToolAction{"", ToolResult::Ok("checked output")}));
  s.agent->AddPostToolHook(std::make_shared<PostTool>(PostToolAction{"a hint", std::nullopt}));
  auto result = s.agent->Send("t", {.run_id = "r1"});
  ASSERT_TRUE(result.ok());
  auto [message, replaced] = StoredToolMessage(s.h, "r1");
  EXPECT_EQ(message.content, "checked output\na hint");
  EXPECT_TRUE(replaced);  // a later hint does not unmark it
  auto events = s.h.sink->events();
  const obs::Event* event = FindEvent(events, "tool.replaced");
  ASSERT_NE(event, nullptr);
  EXPECT_EQ(*event->Find("mend.tool.replaced_by_hook"), "true");
  EXPECT_EQ(*event->Find("call_id"), "\"c1\"");
  EXPECT_EQ(*event->Find("tool"), "\"touch\"");
}

TEST(AgentHooksTest, HintOnlyResultIsNotMarkedReplaced) {
  HookSetup s;
  s.agent->AddPostToolHook(std::make_shared<PostTool>(PostToolAction{"a hint", std::nullopt}));
  ASSERT_TRUE(s.agent->Send("t", {.run_id = "r1"}).ok());
  auto [message, replaced] = StoredToolMessage(s.h, "r1");
  EXPECT_EQ(message.content, "touch did {}\na hint");
  EXPECT_FALSE(replaced);
  EXPECT_EQ(FindEvent(s.h.sink->events(), "tool.replaced"), nullptr);
}

// The post-run flags end up under "flags" in the run's metadata, next to what was there.
nlohmann::json StoredMetadata(Harness& h, const std::string& id) {
  auto record = h.store.GetRun(id);
  EXPECT_TRUE(record.ok());
  return nlohmann::json::parse(record.ok() ? record->metadata : "{}");
}

TEST(AgentHooksTest, PostRunFlagsAreStoredInTheRunMetadata) {
  HookSetup s;
  std::vector<std::string> seen;
  s.agent->AddPostRunHook(std::make_shared<FlagHook>("verified", &seen));
  ASSERT_TRUE(s.agent->Send("t", {.run_id = "done"}).ok());
  nlohmann::json done = StoredMetadata(s.h, "done");
  EXPECT_EQ(done["kind"], "send");
  EXPECT_EQ(done["flags"], nlohmann::json({{"verified", true}}));

  s.model.SetTurn(0, Result<llm::Completion>(UnavailableError("down")));
  auto failed = s.agent->Send("t", {.run_id = "failed"});
  ASSERT_TRUE(failed.ok());
  EXPECT_EQ(failed->status, store::RunStatus::kFailed);
  EXPECT_EQ(StoredMetadata(s.h, "failed")["flags"], nlohmann::json({{"verified", true}}));
}

TEST(AgentHooksTest, RunWithoutFlagsLeavesTheMetadataAlone) {
  HookSetup s;
  ASSERT_TRUE(s.agent->Send("t", {.run_id = "r1"}).ok());
  const nlohmann::json metadata = StoredMetadata(s.h, "r1");
  EXPECT_EQ(metadata["kind"], "send");
  EXPECT_FALSE(metadata.contains("flags")) << metadata;
}

}  // namespace
}  // namespace mend::agent::testing
