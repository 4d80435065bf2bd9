// agent.toml's [[mcp_servers]] tables: every key, the defaults and every error, with the file and
// line each error names (docs/mcp.md, "An agent's MCP servers").
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>

#include "mend/agent/agent_spec.h"
#include "mend/base/file_system.h"
#include "mend/base/memory_file_system.h"
#include "tests/support/status_matchers.h"

namespace mend::agent {
namespace {

using ::mend::testing::StatusIs;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;
using ::testing::Pair;

constexpr char kDir[] = "agents/x";
// Two lines; a [[mcp_servers]] appended to it starts on line 3.
constexpr char kBase[] = "name = \"x\"\ntools = [\"read_file\"]\n";

class AgentFolderMcpTest : public ::testing::Test {
 protected:
  void SetUp() override {
    Write("instructions.md", "");
    ASSERT_TRUE(fs_.CreateDirs(JoinPath(kDir, "srv")).ok());
  }
  void Write(const std::string& rel_path, const std::string& text) {
    const std::string path = JoinPath(kDir, rel_path);
    ASSERT_TRUE(fs_.CreateDirs(DirName(path)).ok());
    ASSERT_TRUE(WriteFileAtomically(fs_, path, text).ok());
  }
  Result<AgentSpec> Load(const std::string& rest) {
    Write("agent.toml", kBase + rest);
    return LoadAgentFolder(fs_, kDir);
  }
  std::string Error(const std::string& rest) {
    Result<AgentSpec> spec = Load(rest);
    EXPECT_THAT(spec, StatusIs(StatusCode::kInvalidArgument));
    return std::string(spec.status().message());
  }

  MemoryFileSystem fs_;
};

TEST_F(AgentFolderMcpTest, NoServersByDefault) {
  Result<AgentSpec> spec = Load("");
  MEND_ASSERT_OK(spec);
  EXPECT_THAT(spec->mcp_servers, IsEmpty());
}

TEST_F(AgentFolderMcpTest, AStdioServerLoadsWithEveryKey) {
  Result<AgentSpec> spec = Load(R"(
[[mcp_servers]]
name = "files"
command = "npx"
args = ["-y", "@modelcontextprotocol/server-filesystem", "/srv"]
env = { HOME_DIR = "/home/${USER}", TOKEN = "${GITHUB_TOKEN}" }
cwd = "srv"
tools = ["read_file", "write_file", "list_directory"]
read_only = ["read_file", "list_directory"]
requires_approval = ["write_file"]
timeout = 30
max_result_bytes = 4096

[[mcp_servers]]
name = "web"
url = "https://example.com/mcp"
headers = { Authorization = "Bearer ${WEB_TOKEN}" }
trust_annotations = true
requires_approval = "destructive"
)");
  MEND_ASSERT_OK(spec);
  ASSERT_EQ(spec->mcp_servers.size(), 2u);
  const McpServerSpec& files = spec->mcp_servers[0];
  EXPECT_EQ(files.name, "files");
  EXPECT_EQ(files.line, 4);
  EXPECT_THAT(files.command,
              ElementsAre("npx", "-y", "@modelcontextprotocol/server-filesystem", "/srv"));
  // Variables stay as written; they are expanded when the server starts.
  EXPECT_THAT(files.env,
              ElementsAre(Pair("HOME_DIR", "/home/${USER}"), Pair("TOKEN", "${GITHUB_TOKEN}")));
  EXPECT_EQ(files.cwd, "agents/x/srv");
  ASSERT_TRUE(files.tools.has_value());
  EXPECT_THAT(*files.tools, ElementsAre("read_file", "write_file", "list_directory"));
  EXPECT_THAT(files.read_only, ElementsAre("read_file", "list_directory"));
  EXPECT_THAT(files.requires_approval, ElementsAre("write_file"));
  EXPECT_FALSE(files.approve_destructive);
  EXPECT_EQ(files.timeout, std::chrono::seconds(30));
  EXPECT_EQ(files.max_result_bytes, 4096u);

  const McpServerSpec& web = spec->mcp_servers[1];
  EXPECT_EQ(web.url, "https://example.com/mcp");
  EXPECT_TRUE(web.command.empty());
  EXPECT_THAT(web.headers, ElementsAre(Pair("Authorization", "Bearer ${WEB_TOKEN}")));
  EXPECT_TRUE(web.trust_annotations);
  EXPECT_TRUE(web.approve_destructive);
  EXPECT_FALSE(web.tools.has_value());
  // Defaults.
  EXPECT_EQ(web.timeout, std::chrono::seconds(60));
  EXPECT_EQ(web.max_result_bytes, 32u * 1024);
}

TEST_F(AgentFolderMcpTest, MistakesNameTheFileAndLine) {
  EXPECT_EQ(Error("[[mcp_servers]]\ncommand = \"x\"\n"),
            "agents/x/agent.toml:3: mcp_servers[0] needs a name");
  EXPECT_EQ(Error("[[mcp_servers]]\nname = \"a__b\"\ncommand = \"x\"\n"),
            "agents/x/agent.toml:4: mcp_servers[0].name \"a__b\" is not a valid server name: use "
            "1 to 64 characters of a-z, 0-9, '_' and '-', starting with a letter or digit, "
            "without \"__\" (tools are named <server>__<tool>)");
  EXPECT_THAT(Error("[[mcp_servers]]\nname = \"s\"\n"),
              HasSubstr("agent.toml:3: mcp_servers.s needs either command"));
  EXPECT_THAT(Error("[[mcp_servers]]\nname = \"s\"\ncommand = \"x\"\nurl = \"http://h\"\n"),
              HasSubstr("not both"));
  EXPECT_THAT(Error("[[mcp_servers]]\nname = \"s\"\ncommand = \"npx -y server\"\n"),
              HasSubstr("agent.toml:5: mcp_servers.s.command is the program alone; put its "
                        "arguments in args"));
  EXPECT_THAT(Error("[[mcp_servers]]\nname = \"s\"\nurl = \"ftp://h\"\n"),
              HasSubstr("agent.toml:5: mcp_servers.s.url must start with http:// or https://"));
  EXPECT_THAT(Error("[[mcp_servers]]\nname = \"s\"\nurl = \"http://h\"\nenv = { A = \"b\" }\n"),
              HasSubstr("agent.toml:6: mcp_servers.s.env is for a server started by command"));
  EXPECT_THAT(Error("[[mcp_servers]]\nname = \"s\"\ncommand = \"x\"\nheaders = { A = \"b\" }\n"),
              HasSubstr("agent.toml:6: mcp_servers.s.headers is for a server reached by url"));
  EXPECT_THAT(Error("[[mcp_servers]]\nname = \"s\"\ncommand = \"x\"\nenv = { A = \"${B\" }\n"),
              HasSubstr("agent.toml:6: mcp_servers.s.env.A: \"${\" without its closing \"}\""));
  EXPECT_THAT(Error("[[mcp_servers]]\nname = \"s\"\ncommand = \"x\"\nenv = { A = \"${1X}\" }\n"),
              HasSubstr("${1X} is not a variable name"));
  EXPECT_THAT(Error("[[mcp_servers]]\nname = \"s\"\ncommand = \"x\"\nenv = { A = 3 }\n"),
              HasSubstr("mcp_servers.s.env.A must be a string, got an integer"));
  EXPECT_THAT(Error("[[mcp_servers]]\nname = \"s\"\ncommand = \"x\"\ntools = [\"read\"]\n"
                    "read_only = [\"raed\"]\n"),
              HasSubstr("agent.toml:7: mcp_servers.s.read_only names \"raed\", which "
                        "mcp_servers.s.tools leaves out (did you mean read?)"));
  EXPECT_THAT(
      Error("[[mcp_servers]]\nname = \"s\"\ncommand = \"x\"\nrequires_approval = \"all\"\n"),
      HasSubstr("requires_approval must be \"destructive\" or an array of tool names"));
  EXPECT_THAT(Error("[[mcp_servers]]\nname = \"s\"\ncommand = \"x\"\ntimeout = 0\n"),
              HasSubstr("mcp_servers.s.timeout must be an integer between 1 and 3600, got 0"));
  EXPECT_THAT(Error("[[mcp_servers]]\nname = \"s\"\ncommand = \"x\"\ntimeot = 5\n"),
              HasSubstr("agent.toml:6: unknown key mcp_servers[0].timeot (did you mean "
                        "mcp_servers[0].timeout?)"));
  EXPECT_THAT(Error("[[mcp_servers]]\nname = \"s\"\ncommand = \"x\"\n"
                    "[[mcp_servers]]\nname = \"s\"\ncommand = \"y\"\n"),
              HasSubstr("agent.toml:7: two MCP servers are named \"s\" (the other on line 3)"));
  EXPECT_THAT(Error("mcp_servers = \"files\"\n"),
              HasSubstr("agent.toml:3: mcp_servers must be an array of tables"));
}

}  // namespace
}  // namespace mend::agent
