#include "mend/heal/agent_checks.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <chrono>

#include "tests/support/status_matchers.h"

namespace mend::heal {
namespace {

using ::mend::testing::StatusIs;
using ::testing::ElementsAre;

TEST(ToOutputCheckSpecTest, EveryKindAndActionMaps) {
  using HealKind = OutputCheckSpec::Kind;
  agent::CheckSpec check;
  check.tool = "grep";
  check.pattern = "x+";
  OutputCheckSpec spec = ToOutputCheckSpec(check);
  EXPECT_EQ(spec.kind, HealKind::kMustMatch);
  EXPECT_EQ(spec.tool, "grep");
  EXPECT_EQ(spec.pattern, "x+");
  EXPECT_EQ(spec.action, CheckAction::kHint);
  EXPECT_EQ(spec.timeout, OutputCheckSpec().timeout);

  check.must_match = false;
  check.action = agent::CheckSpec::Action::kReplace;
  check.message = "m";
  spec = ToOutputCheckSpec(check);
  EXPECT_EQ(spec.kind, HealKind::kMustNotMatch);
  EXPECT_EQ(spec.action, CheckAction::kReplace);
  EXPECT_EQ(spec.message, "m");

  check.kind = agent::CheckSpec::Kind::kJsonSchema;
  check.schema = R"({"type":"object"})";
  spec = ToOutputCheckSpec(check);
  EXPECT_EQ(spec.kind, HealKind::kJsonSchema);
  EXPECT_EQ(spec.schema, R"({"type":"object"})");

  check.kind = agent::CheckSpec::Kind::kMaxBytes;
  check.max_bytes = 77;
  spec = ToOutputCheckSpec(check);
  EXPECT_EQ(spec.kind, HealKind::kMaxBytes);
  EXPECT_EQ(spec.max_bytes, 77u);

  check.kind = agent::CheckSpec::Kind::kCommand;
  check.command = {"/bin/sh", "c.sh"};
  check.timeout = std::chrono::seconds(3);
  spec = ToOutputCheckSpec(check);
  EXPECT_EQ(spec.kind, HealKind::kCommand);
  EXPECT_THAT(spec.command, ElementsAre("/bin/sh", "c.sh"));
  EXPECT_EQ(spec.timeout, std::chrono::seconds(3));
}

TEST(OutputCheckForAgentTest, NoChecksNoHook) {
  agent::AgentSpec spec;
  Result<std::unique_ptr<OutputCheck>> hook = OutputCheckForAgent(spec);
  ASSERT_TRUE(hook.ok()) << hook.status();
  EXPECT_EQ(*hook, nullptr);
}

TEST(OutputCheckForAgentTest, TheFoldersChecksBecomeOneHook) {
  agent::AgentSpec spec;
  agent::CheckSpec check;
  check.tool = "*";
  check.kind = agent::CheckSpec::Kind::kMaxBytes;
  check.max_bytes = 4;
  spec.checks.push_back(check);
  Result<std::unique_ptr<OutputCheck>> hook = OutputCheckForAgent(spec);
  ASSERT_TRUE(hook.ok()) << hook.status();
  ASSERT_NE(*hook, nullptr);
  EXPECT_EQ((*hook)->name(), "output-check");
}

TEST(OutputCheckForAgentTest, ACheckThatCannotBeBuiltIsAnInvalidArgument) {
  agent::AgentSpec spec;
  agent::CheckSpec check;
  check.tool = "*";
  check.kind = agent::CheckSpec::Kind::kMaxBytes;
  check.max_bytes = 0;
  spec.checks.push_back(check);
  EXPECT_THAT(OutputCheckForAgent(spec).status(), StatusIs(StatusCode::kInvalidArgument));
}

}  // namespace
}  // namespace mend::heal
