// agent.toml's [[checks]] and [shadow] tables: every key, every default and every error, with the
// file and line each error names.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <chrono>
#include <nlohmann/json.hpp>
#include <string>

#include "mend/agent/agent_spec.h"
#include "mend/base/file_system.h"
#include "mend/base/memory_file_system.h"
#include "tests/support/status_matchers.h"

namespace mend::agent {
namespace {

using ::mend::testing::StatusIs;
using ::testing::ElementsAre;
using ::testing::Eq;
using ::testing::HasSubstr;
using ::testing::IsEmpty;

constexpr char kDir[] = "agents/x";
// Two lines; a [[checks]] appended to it starts on line 3.
constexpr char kBase[] = "name = \"x\"\ntools = [\"read_file\", \"write_file\", \"grep\"]\n";

class AgentFolderChecksTest : public ::testing::Test {
 protected:
  void SetUp() override { Write("instructions.md", ""); }
  void Write(const std::string& rel_path, const std::string& text) {
    const std::string path = JoinPath(kDir, rel_path);
    ASSERT_TRUE(fs_.CreateDirs(DirName(path)).ok());
    ASSERT_TRUE(WriteFileAtomically(fs_, path, text).ok());
  }
  Result<AgentSpec> LoadToml(const std::string& toml) {
    Write("agent.toml", toml);
    return LoadAgentFolder(fs_, kDir);
  }
  // The error message of loading kBase followed by `rest`.
  std::string Error(const std::string& rest) {
    Result<AgentSpec> spec = LoadToml(kBase + rest);
    EXPECT_THAT(spec, StatusIs(StatusCode::kInvalidArgument));
    return std::string(spec.status().message());
  }
  // A check table on line 3 with `keys` (one per line, from line 4 on).
  std::string CheckError(const std::string& keys) { return Error("[[checks]]\n" + keys); }

  MemoryFileSystem fs_;
};

TEST_F(AgentFolderChecksTest, NoChecksByDefault) {
  Result<AgentSpec> spec = LoadToml(kBase);
  MEND_ASSERT_OK(spec);
  EXPECT_THAT(spec->checks, IsEmpty());
}

TEST_F(AgentFolderChecksTest, EveryKindLoadsWithItsArguments) {
  Result<AgentSpec> spec = LoadToml(std::string(kBase) + R"(
[[checks]]
tool = "read_file"
kind = "regex"
pattern = "^ok"

[[checks]]
tool = "grep"
kind = "regex"
pattern = "password\\s*="
must_match = false
action = "replace"
message = "grep output held a password"

[[checks]]
tool = "*"
kind = "json_schema"
schema = { type = "object", required = ["ok"] }

[[checks]]
tool = "read_file"
kind = "json_schema"
schema = '{"type": "array", "items": {"type": "integer"}}'

[[checks]]
tool = "write_file"
kind = "max_bytes"
max_bytes = 512
action = "hint"

[[checks]]
tool = "*"
kind = "command"
command = ["/bin/sh", "check.sh"]
timeout_seconds = 5
)");
  MEND_ASSERT_OK(spec);
  ASSERT_EQ(spec->checks.size(), 6u);
  const CheckSpec& must = spec->checks[0];
  EXPECT_EQ(must.tool, "read_file");
  EXPECT_EQ(must.kind, CheckSpec::Kind::kRegex);
  EXPECT_EQ(must.pattern, "^ok");
  EXPECT_TRUE(must.must_match);
  EXPECT_EQ(must.action, CheckSpec::Action::kHint);
  EXPECT_EQ(must.message, "");

  const CheckSpec& must_not = spec->checks[1];
  EXPECT_EQ(must_not.pattern, "password\\s*=");
  EXPECT_FALSE(must_not.must_match);
  EXPECT_EQ(must_not.action, CheckSpec::Action::kReplace);
  EXPECT_EQ(must_not.message, "grep output held a password");

  EXPECT_EQ(spec->checks[2].tool, "*");
  EXPECT_EQ(spec->checks[2].kind, CheckSpec::Kind::kJsonSchema);
  EXPECT_EQ(nlohmann::json::parse(spec->checks[2].schema),
            nlohmann::json::parse(R"({"type": "object", "required": ["ok"]})"));
  EXPECT_EQ(nlohmann::json::parse(spec->checks[3].schema),
            nlohmann::json::parse(R"({"type": "array", "items": {"type": "integer"}})"));

  EXPECT_EQ(spec->checks[4].kind, CheckSpec::Kind::kMaxBytes);
  EXPECT_EQ(spec->checks[4].max_bytes, 512u);
  EXPECT_EQ(spec->checks[4].action, CheckSpec::Action::kHint);

  const CheckSpec& command = spec->checks[5];
  EXPECT_EQ(command.kind, CheckSpec::Kind::kCommand);
  EXPECT_THAT(command.command, ElementsAre("/bin/sh", "check.sh"));
  EXPECT_EQ(command.timeout, std::chrono::seconds(5));
}

TEST_F(AgentFolderChecksTest, CommandTimeoutIsUnsetByDefault) {
  Result<AgentSpec> spec = LoadToml(std::string(kBase) +
                                    "[[checks]]\ntool = \"*\"\nkind = \"command\"\n"
                                    "command = [\"true\"]\n");
  MEND_ASSERT_OK(spec);
  ASSERT_EQ(spec->checks.size(), 1u);
  EXPECT_FALSE(spec->checks[0].timeout.has_value());
}

TEST_F(AgentFolderChecksTest, InlineTablesInAnArrayAreChecksToo) {
  Result<AgentSpec> spec = LoadToml(
      std::string(kBase) + "checks = [{ tool = \"grep\", kind = \"max_bytes\", max_bytes = 9 }]\n");
  MEND_ASSERT_OK(spec);
  ASSERT_EQ(spec->checks.size(), 1u);
  EXPECT_EQ(spec->checks[0].max_bytes, 9u);
  EXPECT_THAT(LoadToml(std::string(kBase) + "checks = []\n"), ::mend::testing::IsOk());
}

TEST_F(AgentFolderChecksTest, ChecksMustBeAnArrayOfTables) {
  EXPECT_THAT(Error("[checks]\ntool = \"*\"\n"),
              Eq("agents/x/agent.toml:3: checks must be an array of tables, one [[checks]] per "
                 "check, got a table"));
  EXPECT_THAT(Error("checks = [\n  \"max_bytes\",\n]\n"),
              Eq("agents/x/agent.toml:4: checks[0] must be a table ([[checks]]), got a string"));
}

TEST_F(AgentFolderChecksTest, UnknownKeySuggestsTheNearestKey) {
  EXPECT_THAT(CheckError("tool = \"*\"\nkind = \"regex\"\npatern = \"x\"\n"),
              HasSubstr("agents/x/agent.toml:6: unknown key checks[0].patern (did you mean "
                        "checks[0].pattern?); accepted keys: checks[0].tool, checks[0].kind"));
  EXPECT_THAT(CheckError("tool = \"*\"\nkind = \"command\"\ntimeout = 3\n"),
              HasSubstr("agents/x/agent.toml:6: unknown key checks[0].timeout"));
}

TEST_F(AgentFolderChecksTest, ToolIsRequiredAndMustBeEnabled) {
  EXPECT_THAT(CheckError("kind = \"max_bytes\"\nmax_bytes = 3\n"),
              Eq("agents/x/agent.toml:3: checks[0]: missing required key tool (a tool of "
                 "`tools`, or \"*\" for every tool)"));
  EXPECT_THAT(CheckError("tool = \"wrte_file\"\nkind = \"max_bytes\"\nmax_bytes = 3\n"),
              Eq("agents/x/agent.toml:4: checks[0].tool \"wrte_file\" is not in tools (did you "
                 "mean write_file?); name an enabled tool, or \"*\" for every tool"));
  // A built-in tool that the agent does not enable is not checkable either.
  EXPECT_THAT(CheckError("tool = \"list_dir\"\nkind = \"max_bytes\"\nmax_bytes = 3\n"),
              HasSubstr("agents/x/agent.toml:4: checks[0].tool \"list_dir\" is not in tools"));
  EXPECT_THAT(CheckError("tool = [\"grep\"]\nkind = \"max_bytes\"\nmax_bytes = 3\n"),
              Eq("agents/x/agent.toml:4: checks[0].tool must be a string, got an array"));
}

TEST_F(AgentFolderChecksTest, KindIsRequiredAndMustBeKnown) {
  EXPECT_THAT(CheckError("tool = \"*\"\npattern = \"x\"\n"),
              Eq("agents/x/agent.toml:3: checks[0]: missing required key kind (regex, "
                 "json_schema, max_bytes or command)"));
  EXPECT_THAT(CheckError("tool = \"*\"\nkind = \"regexp\"\npattern = \"x\"\n"),
              Eq("agents/x/agent.toml:5: checks[0].kind must be regex, json_schema, max_bytes or "
                 "command, got \"regexp\" (did you mean regex?)"));
  EXPECT_THAT(CheckError("tool = \"*\"\nkind = 1\n"),
              Eq("agents/x/agent.toml:5: checks[0].kind must be a string, got 1"));
}

TEST_F(AgentFolderChecksTest, ArgumentsOfAnotherKindAreRefused) {
  EXPECT_THAT(CheckError("tool = \"*\"\nkind = \"regex\"\npattern = \"x\"\nmax_bytes = 10\n"),
              Eq("agents/x/agent.toml:7: checks[0].max_bytes does not apply to a check of kind "
                 "regex (its keys: pattern, must_match)"));
  EXPECT_THAT(
      CheckError("tool = \"*\"\nkind = \"max_bytes\"\nmax_bytes = 10\nmust_match = false\n"),
      HasSubstr("agents/x/agent.toml:7: checks[0].must_match does not apply to a check "
                "of kind max_bytes (its keys: max_bytes)"));
  EXPECT_THAT(
      CheckError("tool = \"*\"\nkind = \"json_schema\"\nschema = {}\ntimeout_seconds = 3\n"),
      HasSubstr("agents/x/agent.toml:7: checks[0].timeout_seconds does not apply to a check of "
                "kind json_schema (its keys: schema)"));
  EXPECT_THAT(CheckError("tool = \"*\"\nkind = \"command\"\ncommand = [\"true\"]\nschema = {}\n"),
              HasSubstr("checks[0].schema does not apply to a check of kind command (its keys: "
                        "command, timeout_seconds)"));
}

TEST_F(AgentFolderChecksTest, EachKindNeedsItsArgument) {
  EXPECT_THAT(CheckError("tool = \"*\"\nkind = \"regex\"\nmust_match = false\n"),
              Eq("agents/x/agent.toml:3: checks[0]: a check of kind regex needs pattern"));
  EXPECT_THAT(CheckError("tool = \"*\"\nkind = \"json_schema\"\n"),
              Eq("agents/x/agent.toml:3: checks[0]: a check of kind json_schema needs schema"));
  EXPECT_THAT(CheckError("tool = \"*\"\nkind = \"max_bytes\"\n"),
              Eq("agents/x/agent.toml:3: checks[0]: a check of kind max_bytes needs max_bytes"));
  EXPECT_THAT(CheckError("tool = \"*\"\nkind = \"command\"\ntimeout_seconds = 3\n"),
              Eq("agents/x/agent.toml:3: checks[0]: a check of kind command needs command"));
}

TEST_F(AgentFolderChecksTest, PatternMustCompileAndNotBeEmpty) {
  const std::string base = "tool = \"*\"\nkind = \"regex\"\n";
  EXPECT_THAT(CheckError(base + "pattern = \"(unclosed\"\n"),
              HasSubstr("agents/x/agent.toml:6: checks[0].pattern does not compile: invalid "
                        "pattern \"(unclosed\""));
  EXPECT_THAT(CheckError(base + "pattern = \"\"\n"),
              Eq("agents/x/agent.toml:6: checks[0].pattern must not be empty (it would match "
                 "every output)"));
  EXPECT_THAT(CheckError(base + "pattern = 3\n"),
              Eq("agents/x/agent.toml:6: checks[0].pattern must be a string, got 3"));
  EXPECT_THAT(CheckError(base + "pattern = \"x\"\nmust_match = \"no\"\n"),
              Eq("agents/x/agent.toml:7: checks[0].must_match must be true or false, got \"no\""));
}

TEST_F(AgentFolderChecksTest, SchemaMustBeUsable) {
  const std::string base = "tool = \"*\"\nkind = \"json_schema\"\n";
  EXPECT_THAT(CheckError(base + "schema = { type = \"strng\" }\n"),
              HasSubstr("agents/x/agent.toml:6: checks[0].schema is not a usable JSON Schema: "
                        "schema.type: unknown type \"strng\""));
  EXPECT_THAT(CheckError(base + "schema = { properties = { p = { pattern = \"(\" } } }\n"),
              HasSubstr("agents/x/agent.toml:6: checks[0].schema is not a usable JSON Schema"));
  EXPECT_THAT(CheckError(base + "schema = '{\"type\": '\n"),
              HasSubstr("agents/x/agent.toml:6: checks[0].schema: "));
  EXPECT_THAT(CheckError(base + "schema = 3\n"),
              Eq("agents/x/agent.toml:6: checks[0].schema must be a table (a JSON Schema written "
                 "in TOML) or a string holding JSON, got an integer"));
  EXPECT_THAT(CheckError(base + "schema = '\"text\"'\n"),
              HasSubstr("agents/x/agent.toml:6: checks[0].schema is not a usable JSON Schema"));
  EXPECT_THAT(CheckError(base + "\n[checks.schema]\nconst = 1979-05-27\n"),
              HasSubstr("agents/x/agent.toml:8: dates and times cannot appear in a JSON Schema"));
}

TEST_F(AgentFolderChecksTest, MaxBytesMustBePositiveAndBounded) {
  const std::string base = "tool = \"*\"\nkind = \"max_bytes\"\n";
  EXPECT_THAT(CheckError(base + "max_bytes = 0\n"),
              Eq("agents/x/agent.toml:6: checks[0].max_bytes must be an integer between 1 and "
                 "67108864, got 0"));
  EXPECT_THAT(CheckError(base + "max_bytes = 67108865\n"), HasSubstr("got 67108865"));
  EXPECT_THAT(CheckError(base + "max_bytes = \"1k\"\n"), HasSubstr("got \"1k\""));
}

TEST_F(AgentFolderChecksTest, CommandMustBeAnArgvAndItsTimeoutBounded) {
  const std::string base = "tool = \"*\"\nkind = \"command\"\n";
  EXPECT_THAT(CheckError(base + "command = \"sh check.sh\"\n"),
              Eq("agents/x/agent.toml:6: checks[0].command must be an array of strings (the "
                 "argv, run without a shell), e.g. checks[0].command = [\"sh\", \"check.sh\"]"));
  EXPECT_THAT(CheckError(base + "command = []\n"),
              Eq("agents/x/agent.toml:6: checks[0].command must not be empty: its first element "
                 "is the program to run"));
  EXPECT_THAT(CheckError(base + "command = [\"\", \"x\"]\n"), HasSubstr("must not be empty"));
  EXPECT_THAT(CheckError(base + "command = [\"true\", 3]\n"),
              HasSubstr("agents/x/agent.toml:6: checks[0].command must be an array of strings"));
  EXPECT_THAT(CheckError(base + "command = [\"true\"]\ntimeout_seconds = 0\n"),
              Eq("agents/x/agent.toml:7: checks[0].timeout_seconds must be an integer between 1 "
                 "and 3600, got 0"));
  EXPECT_THAT(CheckError(base + "command = [\"true\"]\ntimeout_seconds = 3601\n"),
              HasSubstr("got 3601"));
}

TEST_F(AgentFolderChecksTest, ActionAndMessageAreValidated) {
  const std::string base = "tool = \"*\"\nkind = \"max_bytes\"\nmax_bytes = 3\n";
  EXPECT_THAT(CheckError(base + "action = \"replce\"\n"),
              Eq("agents/x/agent.toml:7: checks[0].action must be hint or replace, got "
                 "\"replce\" (did you mean replace?)"));
  EXPECT_THAT(CheckError(base + "action = \"deny\"\n"),
              Eq("agents/x/agent.toml:7: checks[0].action must be hint or replace, got \"deny\""));
  EXPECT_THAT(CheckError(base + "message = \"\"\n"),
              Eq("agents/x/agent.toml:7: checks[0].message must not be empty; omit it to get a "
                 "description of the failure"));
  EXPECT_THAT(CheckError(base + "message = 5\n"),
              Eq("agents/x/agent.toml:7: checks[0].message must be a string, got 5"));
}

TEST_F(AgentFolderChecksTest, ErrorsInALaterCheckNameItsIndexAndLine) {
  EXPECT_THAT(Error("[[checks]]\ntool = \"*\"\nkind = \"max_bytes\"\nmax_bytes = 3\n\n"
                    "[[checks]]\ntool = \"grep\"\n"),
              Eq("agents/x/agent.toml:8: checks[1]: missing required key kind (regex, "
                 "json_schema, max_bytes or command)"));
}

TEST_F(AgentFolderChecksTest, ChecksMayNameCommandTools) {
  Write("tools/probe.toml",
        "name = \"probe\"\ndescription = \"d\"\ncommand = [\"true\"]\nread_only = true\n");
  Result<AgentSpec> spec = LoadToml(
      "name = \"x\"\ntools = [\"probe\"]\n[[checks]]\ntool = \"probe\"\n"
      "kind = \"max_bytes\"\nmax_bytes = 3\n");
  MEND_ASSERT_OK(spec);
  ASSERT_EQ(spec->checks.size(), 1u);
  EXPECT_EQ(spec->checks[0].tool, "probe");
}

// --- [shadow] ---

TEST_F(AgentFolderChecksTest, ShadowDefaultsToTheEnabledReadOnlyTools) {
  Write("tools/probe.toml",
        "name = \"probe\"\ndescription = \"d\"\ncommand = [\"true\"]\nread_only = true\n");
  Write("tools/mutate.toml", "name = \"mutate\"\ndescription = \"d\"\ncommand = [\"true\"]\n");
  const std::string tools =
      "tools = [\"write_file\", \"mutate\", \"grep\", \"ask_human\", \"run_command\", \"probe\", "
      "\"read_file\", \"edit_file\", \"list_dir\"]\n";
  Result<AgentSpec> spec = LoadToml("name = \"x\"\n" + tools);
  MEND_ASSERT_OK(spec);
  // ask_human declares itself read-only but would stop an unattended run for a person.
  EXPECT_THAT(spec->shadow.read_only, ElementsAre("grep", "probe", "read_file", "list_dir"));

  // A [shadow] table without read_only keeps the default.
  spec = LoadToml("name = \"x\"\n" + tools + "[shadow]\n");
  MEND_ASSERT_OK(spec);
  EXPECT_THAT(spec->shadow.read_only, ElementsAre("grep", "probe", "read_file", "list_dir"));
}

TEST_F(AgentFolderChecksTest, ShadowReadOnlyListIsKeptInOrder) {
  Result<AgentSpec> spec =
      LoadToml(std::string(kBase) + "[shadow]\nread_only = [\"write_file\", \"read_file\"]\n");
  MEND_ASSERT_OK(spec);
  EXPECT_THAT(spec->shadow.read_only, ElementsAre("write_file", "read_file"));

  spec = LoadToml(std::string(kBase) + "[shadow]\nread_only = []\n");
  MEND_ASSERT_OK(spec);
  EXPECT_THAT(spec->shadow.read_only, IsEmpty());
}

TEST_F(AgentFolderChecksTest, ShadowErrorsNameTheLine) {
  EXPECT_THAT(Error("[shadow]\nreadonly = []\n"),
              HasSubstr("agents/x/agent.toml:4: unknown key shadow.readonly (did you mean "
                        "shadow.read_only?); accepted keys: shadow.read_only"));
  EXPECT_THAT(Error("[shadow]\nread_only = [\n  \"read_file\",\n  \"list_dir\",\n]\n"),
              Eq("agents/x/agent.toml:6: shadow.read_only names \"list_dir\", which is not in "
                 "tools"));
  EXPECT_THAT(Error("[shadow]\nread_only = [\"grpe\"]\n"),
              Eq("agents/x/agent.toml:4: shadow.read_only names \"grpe\", which is not in tools "
                 "(did you mean grep?)"));
  EXPECT_THAT(Error("[shadow]\nread_only = [\"grep\",\n  \"grep\"]\n"),
              Eq("agents/x/agent.toml:5: shadow.read_only lists \"grep\" twice"));
  EXPECT_THAT(Error("[shadow]\nread_only = \"grep\"\n"),
              HasSubstr("agents/x/agent.toml:4: shadow.read_only must be an array of strings, "
                        "e.g. [\"read_file\", \"grep\"]"));
  EXPECT_THAT(Error("shadow = [\"grep\"]\n"),
              Eq("agents/x/agent.toml:3: shadow must be a table ([shadow]), got an array"));
}

}  // namespace
}  // namespace mend::agent
