#include "agent/command_tool.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>

#include "mend/agent/tool_registry.h"
#include "tests/agent/tool_test_util.h"
#include "tests/support/status_matchers.h"

namespace mend::agent {
namespace {

using ::mend::agent::tool_testing::TempWorkspace;
using ::testing::EndsWith;
using ::testing::HasSubstr;
using ::testing::StartsWith;

class CommandToolTest : public ::testing::Test {
 protected:
  CommandToolTest() : ctx_(ws_.Context()) {}

  // Registers a tool running `argv`, with a schema requiring {"text": string}.
  void Add(std::vector<std::string> argv,
           std::optional<std::chrono::milliseconds> timeout = std::nullopt) {
    CommandToolSpec spec;
    spec.spec.name = "ext";
    spec.spec.description = "an external tool";
    spec.spec.parameters =
        R"({"type":"object","properties":{"text":{"type":"string"}},"required":["text"]})";
    spec.command = std::move(argv);
    spec.timeout = timeout;
    spec.path = "tools/ext.toml";
    MEND_ASSERT_OK(registry_.Register(MakeCommandTool(spec, agent_dir_.path())));
  }
  void Script(const std::string& name, const std::string& body) {
    agent_dir_.Write(name, "#!/bin/sh\n" + body);
    std::filesystem::permissions(agent_dir_.Abs(name), std::filesystem::perms::owner_all);
  }
  ToolResult Call(const std::string& args) { return registry_.Invoke("ext", args, ctx_); }

  TempWorkspace ws_;
  TempWorkspace agent_dir_;
  ToolRegistry registry_;
  ToolContext ctx_;
};

TEST_F(CommandToolTest, ArgumentsGoToStdinAndStdoutIsTheResult) {
  Add({"cat"});
  const ToolResult r = Call(R"({"text":"hi"})");
  EXPECT_FALSE(r.is_error) << r.content;
  EXPECT_EQ(r.content, R"({"text":"hi"})");
}

TEST_F(CommandToolTest, RelativeScriptRunsFromTheAgentFolderInTheWorkspace) {
  Script("tools/where.sh", "cat >/dev/null; pwd -P\n");
  Add({"./tools/where.sh"});
  EXPECT_EQ(Call(R"({"text":"x"})").content, ws_.path() + "\n");
}

TEST_F(CommandToolTest, AgentDirAndWorkspaceAreReplacedInEveryArgument) {
  agent_dir_.Write("tools/wc.sh", "cat >/dev/null; echo \"$1 $(pwd -P)\"\n");
  Add({"/bin/sh", "${AGENT_DIR}/tools/wc.sh", "ws=${WORKSPACE}"});
  const ToolResult r = Call(R"({"text":"x"})");
  EXPECT_FALSE(r.is_error) << r.content;
  EXPECT_EQ(r.content, "ws=" + ws_.path() + " " + ws_.path() + "\n");
}

TEST_F(CommandToolTest, AFailingCallSaysWhenAnArgumentIsAFileOfTheAgentFolder) {
  agent_dir_.Write("tools/wc.sh", "wc -c\n");
  Add({"/bin/sh", "tools/wc.sh"});
  const ToolResult r = Call(R"({"text":"x"})");
  EXPECT_TRUE(r.is_error);
  EXPECT_THAT(r.content, HasSubstr("(tools/wc.sh is a file of the agent folder, and commands run "
                                   "in the workspace: write ${AGENT_DIR}/tools/wc.sh in "
                                   "tools/ext.toml)"));
}

TEST_F(CommandToolTest, NonZeroExitIsAnErrorWithStderr) {
  Script("fail.sh", "echo partial; echo 'bad input' >&2; exit 2\n");
  Add({"./fail.sh"});
  const ToolResult r = Call(R"({"text":"x"})");
  EXPECT_TRUE(r.is_error);
  EXPECT_THAT(r.content, StartsWith("partial\n[exit code: 2]"));
  EXPECT_THAT(r.content, EndsWith("stderr:\nbad input\n"));
}

TEST_F(CommandToolTest, SchemaMismatchNeverRunsTheCommand) {
  Script("touch.sh", "touch ran\n");
  Add({"./touch.sh"});
  EXPECT_THAT(Call(R"({"text":1})").content, HasSubstr("$.text: expected string"));
  EXPECT_FALSE(std::filesystem::exists(ws_.Abs("ran")));
}

TEST_F(CommandToolTest, TimeoutKillsTheCommand) {
  Add({"sleep", "30"}, std::chrono::milliseconds(200));
  const ToolResult r = Call(R"({"text":"x"})");
  EXPECT_TRUE(r.is_error);
  EXPECT_THAT(r.content, HasSubstr("tool ext timed out after 0.2s"));
}

TEST_F(CommandToolTest, ChildThatIgnoresStdinDoesNotBlockALargeWrite) {
  Add({"true"});
  const std::string big(4 * 1024 * 1024, 'x');
  const ToolResult r = Call(R"({"text":")" + big + "\"}");
  EXPECT_FALSE(r.is_error) << r.content.substr(0, 200);
}

TEST_F(CommandToolTest, MissingProgramIsAnErrorResult) {
  Add({"/nonexistent/program"});
  const ToolResult r = Call(R"({"text":"x"})");
  EXPECT_TRUE(r.is_error);
  EXPECT_THAT(r.content, HasSubstr("tool ext could not start"));
}

TEST_F(CommandToolTest, HostileOutputIsSanitizedAndCapped) {
  Script("spew.sh", "cat >/dev/null; printf '\\377\\376'; head -c 3000000 /dev/zero\n");
  Add({"./spew.sh"});
  ctx_.max_output_bytes = 1000;
  const ToolResult r = Call(R"({"text":"x"})");
  EXPECT_FALSE(r.is_error);
  EXPECT_THAT(r.content, StartsWith("\xEF\xBF\xBD\xEF\xBF\xBD"));
  EXPECT_THAT(r.content, HasSubstr("of 3000002 bytes shown]"));
  EXPECT_LT(r.content.size(), 1100u);
}

}  // namespace
}  // namespace mend::agent
