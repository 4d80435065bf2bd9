#include "mend/heal/shadow_hook.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <memory>

#include "tests/heal/hook_test_support.h"

namespace mend::heal::testing {
namespace {

using ::testing::ElementsAre;
using Kind = agent::PreToolDecision::Kind;

TEST(ShadowHookTest, ListedToolsRunAndOthersAreSimulated) {
  ManualClock clock;
  obs::EventBus bus(clock);
  auto sink = std::make_shared<obs::MemorySink>();
  bus.Subscribe(sink);
  ShadowHook hook({{"read_file", "grep"}, &bus});
  agent::RunInfo run{"probe-1", "t", nullptr, ""};

  auto read = hook.BeforeTool(CallOf(run, "read_file"));
  ASSERT_TRUE(read.ok());
  EXPECT_EQ(read->kind, Kind::kAllow);
  EXPECT_EQ(sink->size(), 0u);

  auto write = hook.BeforeTool(CallOf(run, "write_file", "{}", 3));
  ASSERT_TRUE(write.ok());
  EXPECT_EQ(write->kind, Kind::kSupply);
  EXPECT_EQ(write->text, "not executed (shadow mode): write_file is not in the read-only list");
  ASSERT_EQ(sink->size(), 1u);
  obs::Event e = sink->events()[0];
  EXPECT_EQ(e.type(), "heal.action");
  EXPECT_EQ(e.Find("action"), "\"shadow\"");
  EXPECT_EQ(e.Find("tool"), "\"write_file\"");
  EXPECT_EQ(e.Find("run"), "\"probe-1\"");
  EXPECT_EQ(e.Find("step"), "3");
}

TEST(ShadowHookTest, EmptyListShadowsEverything) {
  ShadowHook hook({});
  agent::RunInfo run{"r", "t", nullptr, ""};
  auto decision = hook.BeforeTool(CallOf(run, "read_file"));
  ASSERT_TRUE(decision.ok());
  EXPECT_EQ(decision->kind, Kind::kSupply);
}

TEST(ShadowHookEndToEndTest, WritingToolIsNotExecutedDuringAProbe) {
  auto reader = std::make_shared<FixedTool>("lookup", "found it", /*is_error=*/false);
  auto writer = std::make_shared<FixedTool>("deploy", "deployed", /*is_error=*/false);
  AgentRig rig({CallStep("c1", "lookup", "{}"), CallStep("c2", "deploy", "{}"), TextStep("done")},
               {reader, writer});
  ASSERT_NE(rig.agent, nullptr);
  rig.agent->AddPreToolHook(
      std::make_shared<ShadowHook>(ShadowHookOptions{.read_only = {"lookup"}, .events = &rig.bus}));

  auto result = rig.agent->Send("probe");
  ASSERT_TRUE(result.ok()) << result.status();
  EXPECT_EQ(result->status, store::RunStatus::kCompleted);
  EXPECT_EQ(result->output, "done");
  EXPECT_EQ(reader->calls(), 1);
  EXPECT_EQ(writer->calls(), 0);
  EXPECT_THAT(rig.HealActions(), ElementsAre("shadow:deploy"));
  auto requests = rig.model.requests();
  ASSERT_EQ(requests.size(), 3u);
  EXPECT_EQ(requests[1].messages.back().content, "found it");
  EXPECT_EQ(requests[2].messages.back().content,
            "not executed (shadow mode): deploy is not in the read-only list");
  EXPECT_FALSE(requests[2].messages.back().is_error);
}

}  // namespace
}  // namespace mend::heal::testing
