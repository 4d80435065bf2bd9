// Loading of the files beside agent.toml: instructions.md, skills/*.md and tools/*.toml.

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>

#include "mend/agent/agent_spec.h"
#include "mend/base/file_system.h"
#include "mend/base/memory_file_system.h"
#include "tests/support/status_matchers.h"

namespace mend::agent {
namespace {

using ::mend::testing::StatusIs;
using ::testing::Eq;
using ::testing::HasSubstr;

constexpr char kDir[] = "agents/x";

class AgentFolderFilesTest : public ::testing::Test {
 protected:
  void SetUp() override {
    Write("agent.toml", "name = \"x\"\ntools = [\"read_file\"]\n");
    Write("instructions.md", "You help.\n");
  }
  void Write(const std::string& rel_path, const std::string& text) {
    const std::string path = JoinPath(kDir, rel_path);
    ASSERT_TRUE(fs_.CreateDirs(DirName(path)).ok());
    ASSERT_TRUE(WriteFileAtomically(fs_, path, text).ok());
  }
  // The error message of loading the folder, which must fail with kInvalidArgument.
  std::string Error() {
    Result<AgentSpec> spec = LoadAgentFolder(fs_, kDir);
    EXPECT_THAT(spec, StatusIs(StatusCode::kInvalidArgument));
    return std::string(spec.status().message());
  }
  std::string SkillError(const std::string& text) {
    Write("skills/s.md", text);
    return Error();
  }
  std::string ToolError(const std::string& text) {
    Write("tools/t.toml", text);
    return Error();
  }

  MemoryFileSystem fs_;
};

constexpr char kTool[] = "name = \"check\"\ndescription = \"d\"\ncommand = [\"sh\"]\n";

TEST_F(AgentFolderFilesTest, AMissingInstructionsFileIsAnError) {
  ASSERT_TRUE(fs_.Unlink(JoinPath(kDir, "instructions.md")).ok());
  Result<AgentSpec> spec = LoadAgentFolder(fs_, kDir);
  EXPECT_THAT(spec, StatusIs(StatusCode::kNotFound,
                             Eq("agents/x/instructions.md: missing; an agent folder needs "
                                "instructions.md, the agent's system prompt")));
  EXPECT_EQ(spec.status().detail_code(), kAgentFolderInvalidDetail);
}

TEST_F(AgentFolderFilesTest, AMisnamedInstructionsFileIsNamedInTheError) {
  ASSERT_TRUE(fs_.Unlink(JoinPath(kDir, "instructions.md")).ok());
  for (const std::string name :
       {"instruction.md", "Instructions.md", "INSTRUCTIONS.md", "instructions.txt"}) {
    SCOPED_TRACE(name);
    Write(name, "You help.\n");
    Result<AgentSpec> spec = LoadAgentFolder(fs_, kDir);
    EXPECT_THAT(spec, StatusIs(StatusCode::kNotFound,
                               HasSubstr("instructions.md: missing; an agent folder needs "
                                         "instructions.md, the agent's system prompt (did you "
                                         "mean " +
                                         name + "?)")));
    ASSERT_TRUE(fs_.Unlink(JoinPath(kDir, name)).ok());
  }
}

TEST_F(AgentFolderFilesTest, AnEmptyInstructionsFileIsAllowed) {
  Write("instructions.md", "");
  Result<AgentSpec> spec = LoadAgentFolder(fs_, kDir);
  MEND_ASSERT_OK(spec);
  EXPECT_EQ(spec->instructions, "");
}

TEST_F(AgentFolderFilesTest, CommandVariablesAreChecked) {
  EXPECT_THAT(ToolError("name = \"check\"\ndescription = \"d\"\n"
                        "command = [\"sh\", \"${AGENTDIR}/tools/wc.sh\"]\n"),
              Eq("agents/x/tools/t.toml:3: command[1]: unknown variable ${AGENTDIR} (did you mean "
                 "${AGENT_DIR}?); commands may use ${AGENT_DIR} and ${WORKSPACE}"));
  EXPECT_THAT(
      ToolError("name = \"check\"\ndescription = \"d\"\ncommand = [\"sh\", \"${WORKSPACE\"]\n"),
      HasSubstr("command[1]: unterminated ${ in \"${WORKSPACE\""));
}

TEST_F(AgentFolderFilesTest, InstructionsMustBeUtf8) {
  Write("instructions.md", "line one\nbad \xff byte\n");
  EXPECT_THAT(Error(), Eq("agents/x/instructions.md:2: not valid UTF-8"));
}

TEST_F(AgentFolderFilesTest, InstructionsOverTheSizeLimitAreRejected) {
  Write("instructions.md", std::string(256 * 1024 + 1, 'a'));
  EXPECT_THAT(Error(), HasSubstr("agents/x/instructions.md: file is 262145 bytes"));
}

TEST_F(AgentFolderFilesTest, SkillFrontMatterAllowsQuotesCommentsAndCrlf) {
  Write(
      "skills/s.md",
      "---\r\n# a comment\r\nname: 'it''s'\r\ndescription: \"say \\\"hi\\\"\"\r\n---\r\nBody\r\n");
  Write("skills/t.md", "---\nname: \"ok-name\"\ndescription: 'x: y'\n---\n");
  // 'it''s' is not a valid name; check the description parsing on a valid file first.
  Result<AgentSpec> spec = LoadAgentFolder(fs_, kDir);
  EXPECT_THAT(spec, StatusIs(StatusCode::kInvalidArgument,
                             HasSubstr("agents/x/skills/s.md:3: invalid skill name \"it's\"")));
  Write("skills/s.md",
        "---\r\n# a comment\r\nname: quoted\r\ndescription: \"say \\\"hi\\\"\"\r\n---\r\nBody\r\n");
  spec = LoadAgentFolder(fs_, kDir);
  MEND_ASSERT_OK(spec);
  ASSERT_EQ(spec->skills.size(), 2u);
  EXPECT_EQ(spec->skills[0].description, "say \"hi\"");
  EXPECT_EQ(spec->skills[0].body, "Body\r\n");
  EXPECT_EQ(spec->skills[1].name, "ok-name");
  EXPECT_EQ(spec->skills[1].description, "x: y");
  EXPECT_EQ(spec->skills[1].body, "");
}

TEST_F(AgentFolderFilesTest, SkillWithoutFrontMatterIsAnError) {
  EXPECT_THAT(SkillError("# Just markdown\n"),
              HasSubstr("agents/x/skills/s.md:1: missing front matter"));
}

TEST_F(AgentFolderFilesTest, UnclosedFrontMatterIsAnError) {
  EXPECT_THAT(SkillError("---\nname: a\ndescription: b\n"),
              HasSubstr("agents/x/skills/s.md:1: the front matter opened here is not closed"));
}

TEST_F(AgentFolderFilesTest, SkillNeedsNameAndDescription) {
  EXPECT_THAT(SkillError("---\ndescription: b\n---\n"),
              Eq("agents/x/skills/s.md:1: the front matter needs a non-empty name:"));
  EXPECT_THAT(SkillError("---\nname: a\ndescription:\n---\n"),
              Eq("agents/x/skills/s.md:3: the front matter needs a non-empty description:"));
}

TEST_F(AgentFolderFilesTest, SkillFrontMatterErrorsNameTheLine) {
  EXPECT_THAT(SkillError("---\nname: a\ndescripton: b\n---\n"),
              HasSubstr("agents/x/skills/s.md:3: unknown front matter key descripton (did you "
                        "mean description?)"));
  EXPECT_THAT(SkillError("---\nname: a\n\njust text\n---\n"),
              Eq("agents/x/skills/s.md:4: expected `key: value` in the front matter"));
  EXPECT_THAT(SkillError("---\nname: a\nname: b\n---\n"),
              Eq("agents/x/skills/s.md:3: name is already set on line 2"));
  EXPECT_THAT(SkillError("---\nname: \"a\n---\n"),
              Eq("agents/x/skills/s.md:2: the quoted value of name is not closed"));
}

TEST_F(AgentFolderFilesTest, DuplicateSkillNamesAreAnError) {
  Write("skills/a.md", "---\nname: same\ndescription: a\n---\n");
  Write("skills/b.md", "---\ndescription: b\nname: same\n---\n");
  EXPECT_THAT(Error(), Eq("agents/x/skills/b.md:3: duplicate skill name \"same\" (also in "
                          "skills/a.md)"));
}

TEST_F(AgentFolderFilesTest, CommandToolDefaultsAndEnabling) {
  Write("tools/check.toml", kTool);
  Write("agent.toml", "name = \"x\"\ntools = [\"check\"]\n");
  Result<AgentSpec> spec = LoadAgentFolder(fs_, kDir);
  MEND_ASSERT_OK(spec);
  ASSERT_EQ(spec->command_tools.size(), 1u);
  const CommandToolSpec& tool = spec->command_tools[0];
  EXPECT_EQ(tool.path, "tools/check.toml");
  EXPECT_EQ(tool.command, std::vector<std::string>{"sh"});
  EXPECT_FALSE(tool.spec.read_only);
  EXPECT_TRUE(tool.spec.requires_approval);  // runs arbitrary programs: ask by default
  EXPECT_FALSE(tool.timeout.has_value());
  EXPECT_EQ(nlohmann::json::parse(tool.spec.parameters),
            nlohmann::json::parse(R"({"type":"object","properties":{}})"));
}

TEST_F(AgentFolderFilesTest, ReadOnlyCommandToolNeedsNoApprovalUnlessAsked) {
  Write("tools/a.toml", std::string(kTool) + "read_only = true\ntimeout_seconds = 5\n");
  Write("tools/b.toml",
        "name = \"b\"\ndescription = \"d\"\ncommand = [\"x\"]\nread_only = "
        "true\nrequires_approval = true\n");
  Result<AgentSpec> spec = LoadAgentFolder(fs_, kDir);
  MEND_ASSERT_OK(spec);
  ASSERT_EQ(spec->command_tools.size(), 2u);
  EXPECT_FALSE(spec->command_tools[0].spec.requires_approval);
  EXPECT_EQ(spec->command_tools[0].timeout, std::chrono::seconds(5));
  EXPECT_TRUE(spec->command_tools[1].spec.requires_approval);
}

TEST_F(AgentFolderFilesTest, ParametersFromTomlTableOrJsonString) {
  Write("tools/a.toml", std::string(kTool) +
                            "[parameters]\ntype = \"object\"\nrequired = [\"path\"]\n"
                            "[parameters.properties.path]\ntype = \"string\"\n");
  Write("tools/b.toml",
        "name = \"b\"\ndescription = \"d\"\ncommand = [\"x\"]\nparameters = "
        "'{\"type\": \"object\", \"properties\": {\"n\": {\"type\": \"integer\"}}}'\n");
  Result<AgentSpec> spec = LoadAgentFolder(fs_, kDir);
  MEND_ASSERT_OK(spec);
  EXPECT_EQ(nlohmann::json::parse(spec->command_tools[0].spec.parameters),
            nlohmann::json::parse(R"({"type":"object","required":["path"],
                                      "properties":{"path":{"type":"string"}}})"));
  EXPECT_EQ(nlohmann::json::parse(spec->command_tools[1].spec.parameters)["properties"]["n"],
            nlohmann::json::parse(R"({"type":"integer"})"));
}

TEST_F(AgentFolderFilesTest, InvalidParametersAreErrors) {
  EXPECT_THAT(ToolError(std::string(kTool) + "parameters = '{\"type\": '\n"),
              HasSubstr("agents/x/tools/t.toml:4: parameters: malformed JSON"));
  EXPECT_THAT(ToolError(std::string(kTool) + "parameters = '[1]'\n"),
              HasSubstr("agents/x/tools/t.toml:4: parameters must be a JSON Schema object with "
                        "\"type\": \"object\""));
  EXPECT_THAT(ToolError(std::string(kTool) + "[parameters]\ntype = \"string\"\n"),
              HasSubstr("agents/x/tools/t.toml:4: parameters must be a JSON Schema object"));
  EXPECT_THAT(ToolError(std::string(kTool) + "parameters = 3\n"),
              HasSubstr("agents/x/tools/t.toml:4: parameters must be a table"));
  EXPECT_THAT(
      ToolError(std::string(kTool) + "[parameters]\ntype = \"object\"\nwhen = 1979-05-27\n"),
      HasSubstr("agents/x/tools/t.toml:6: dates and times cannot appear"));
}

TEST_F(AgentFolderFilesTest, CommandMustBeANonEmptyArray) {
  EXPECT_THAT(ToolError("name = \"c\"\ndescription = \"d\"\ncommand = \"sh check.sh\"\n"),
              HasSubstr("agents/x/tools/t.toml:3: command must be an array of strings (the argv, "
                        "run without a shell), e.g. command = [\"sh\", \"check.sh\"]"));
  EXPECT_THAT(ToolError("name = \"c\"\ndescription = \"d\"\ncommand = []\n"),
              HasSubstr("agents/x/tools/t.toml:3: command must not be empty"));
  EXPECT_THAT(ToolError("name = \"c\"\ndescription = \"d\"\n"),
              Eq("agents/x/tools/t.toml:1: missing required key command"));
}

TEST_F(AgentFolderFilesTest, ToolFileErrorsNameTheLine) {
  EXPECT_THAT(ToolError(std::string(kTool) + "readonly = true\n"),
              HasSubstr("agents/x/tools/t.toml:4: unknown key readonly (did you mean "
                        "read_only?)"));
  EXPECT_THAT(ToolError(std::string(kTool) + "read_only = \"yes\"\n"),
              Eq("agents/x/tools/t.toml:4: read_only must be true or false, got \"yes\""));
  EXPECT_THAT(ToolError(std::string(kTool) + "timeout_seconds = 0\n"),
              HasSubstr("agents/x/tools/t.toml:4: timeout_seconds must be an integer between 1"));
  EXPECT_THAT(ToolError("description = \"d\"\nname = \"read_file\"\ncommand = [\"x\"]\n"),
              HasSubstr("agents/x/tools/t.toml:2: tool name \"read_file\" is taken by a built-in"));
  EXPECT_THAT(ToolError("name = \"c\"\ncommand = [\"x\"]\n"),
              HasSubstr("agents/x/tools/t.toml:1: a tool needs a non-empty description"));
  EXPECT_THAT(ToolError("name = \"c\"\ndescription = \"d\"\ncommand = [\"x\"\n"),
              HasSubstr("agents/x/tools/t.toml:3:16: invalid TOML"));
}

TEST_F(AgentFolderFilesTest, DuplicateToolNamesAreAnError) {
  Write("tools/a.toml", kTool);
  Write("tools/b.toml", "description = \"d\"\ncommand = [\"y\"]\nname = \"check\"\n");
  EXPECT_THAT(Error(), Eq("agents/x/tools/b.toml:3: duplicate tool name \"check\" (also in "
                          "tools/a.toml)"));
}

TEST_F(AgentFolderFilesTest, UnknownToolErrorListsCommandTools) {
  Write("tools/check.toml", kTool);
  Write("agent.toml", "name = \"x\"\ntools = [\"chek\"]\n");
  EXPECT_THAT(Error(), HasSubstr("agents/x/agent.toml:2: unknown tool \"chek\" (did you mean "
                                 "check?); available tools: read_file, write_file, edit_file, "
                                 "list_dir, grep, run_command, ask_human, check"));
}

}  // namespace
}  // namespace mend::agent
