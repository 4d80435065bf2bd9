// GET /api/v1/agents/{name}: one agent folder as the agent page shows it, and names that would
// reach outside serve.agents_dir refused.
#include <gmock/gmock.h>

#include <string>

#include "mend/base/file_system.h"
#include "tests/server/server_fixture.h"

namespace mend::server {
namespace {

using ::testing::HasSubstr;

class AgentsApiTest : public ServerTest {
 protected:
  // agents_dir_/writer: a built-in tool, a command tool, a skill and a check.
  void WriteWriter() {
    WriteAgent("writer");
    const std::string dir = agents_dir_ + "/writer";
    MEND_ASSERT_OK(WriteFileAtomically(
        *env_.fs, dir + "/agent.toml",
        "name = \"writer\"\ndescription = \"Writes notes.\"\ntools = [\"read_file\", "
        "\"count_words\"]\n\n[[checks]]\ntool = \"read_file\"\nkind = \"regex\"\n"
        "pattern = \"secret\"\nmust_match = false\naction = \"replace\"\nmessage = "
        "\"withheld\"\n"));
    MEND_ASSERT_OK(env_.fs->CreateDirs(dir + "/tools"));
    MEND_ASSERT_OK(WriteFileAtomically(
        *env_.fs, dir + "/tools/count_words.toml",
        "name = \"count_words\"\ndescription = \"Counts words.\"\ncommand = [\"wc\", \"-w\"]\n"
        "read_only = true\n\n[parameters]\ntype = \"object\"\n"
        "properties = { text = { type = \"string\" } }\nrequired = [\"text\"]\n"));
    MEND_ASSERT_OK(env_.fs->CreateDirs(dir + "/skills"));
    MEND_ASSERT_OK(WriteFileAtomically(
        *env_.fs, dir + "/skills/short.md",
        "---\nname: short\ndescription: Keep notes short.\n---\nThree lines at most.\n"));
  }
};

TEST_F(AgentsApiTest, ShowsInstructionsToolsWithSchemasSkillsAndChecks) {
  WriteWriter();
  StartServer();
  Reply reply = Get("/api/v1/agents/writer");
  ASSERT_EQ(reply.status, 200) << reply.text;
  const nlohmann::json& a = reply.body;
  EXPECT_EQ(a["name"], "writer");
  EXPECT_EQ(a["agent_name"], "writer");
  EXPECT_EQ(a["description"], "Writes notes.");
  EXPECT_EQ(a["instructions"], "Answer briefly.\n");
  EXPECT_EQ(a["model"], nullptr);
  EXPECT_EQ(a["canary"], nullptr);
  EXPECT_EQ(a["limits"]["max_steps"], 50);
  ASSERT_EQ(a["tools"].size(), 2u);
  EXPECT_EQ(a["tools"][0]["name"], "read_file");
  EXPECT_EQ(a["tools"][0]["kind"], "builtin");
  EXPECT_EQ(a["tools"][0]["parameters"]["type"], "object");
  EXPECT_TRUE(a["tools"][0]["parameters"]["properties"].contains("path"));
  EXPECT_EQ(a["tools"][1]["name"], "count_words");
  EXPECT_EQ(a["tools"][1]["kind"], "command");
  EXPECT_EQ(a["tools"][1]["read_only"], true);
  EXPECT_EQ(a["tools"][1]["command"], nlohmann::json::parse(R"(["wc","-w"])"));
  EXPECT_EQ(a["tools"][1]["parameters"]["required"], nlohmann::json::parse(R"(["text"])"));
  ASSERT_EQ(a["skills"].size(), 1u);
  EXPECT_EQ(a["skills"][0]["name"], "short");
  EXPECT_EQ(a["skills"][0]["body"], "Three lines at most.\n");
  EXPECT_EQ(a["checks"], nlohmann::json::parse(R"([{"tool":"read_file","kind":"regex",
    "action":"replace","message":"withheld","pattern":"secret","must_match":false}])"));
}

TEST_F(AgentsApiTest, TheNameInAgentTomlFindsItsFolder) {
  WriteAgent("folder-7");
  MEND_ASSERT_OK(WriteFileAtomically(*env_.fs, agents_dir_ + "/folder-7/agent.toml",
                                     "name = \"reviewer\"\ntools = []\n"));
  StartServer();
  Reply reply = Get("/api/v1/agents/reviewer");
  ASSERT_EQ(reply.status, 200) << reply.text;
  EXPECT_EQ(reply.body["name"], "folder-7");
  EXPECT_EQ(reply.body["agent_name"], "reviewer");
}

TEST_F(AgentsApiTest, AMissingAgentIs404) {
  WriteWriter();
  StartServer();
  Reply reply = Get("/api/v1/agents/nobody");
  EXPECT_EQ(reply.status, 404) << reply.text;
  EXPECT_EQ(reply.body["error"]["code"], "NOT_FOUND");
  // A folder without agent.toml is no agent either.
  MEND_ASSERT_OK(env_.fs->CreateDirs(agents_dir_ + "/notes"));
  EXPECT_EQ(Get("/api/v1/agents/notes").status, 404);
}

TEST_F(AgentsApiTest, NamesReachingOutsideTheAgentsFolderAreRefused) {
  WriteWriter();
  // An agent folder beside agents_dir_ that a ".." would reach.
  WriteAgent("../outside");
  StartServer();
  for (const char* path : {"/api/v1/agents/..", "/api/v1/agents/%2e%2e", "/api/v1/agents/.hidden",
                           "/api/v1/agents/a%5Cb", "/api/v1/agents/a%01b"}) {
    Reply reply = Get(path);
    EXPECT_EQ(reply.status, 400) << path << ": " << reply.text;
    EXPECT_EQ(reply.body["error"]["code"], "INVALID_ARGUMENT") << path;
  }
  // A slash, encoded or not, is decoded before routing: the name is then more than one path
  // segment and no route answers it.
  for (const char* path : {"/api/v1/agents/..%2Foutside", "/api/v1/agents/%2Fetc%2Fpasswd"}) {
    Reply reply = Get(path);
    EXPECT_EQ(reply.status, 404) << path << ": " << reply.text;
    EXPECT_THAT(reply.text, ::testing::Not(HasSubstr("Answer briefly"))) << path;
  }
}

TEST_F(AgentsApiTest, AFolderThatDoesNotLoadSaysWhy) {
  WriteAgent("broken", "[limits]\nmax_steps = -3\n");
  StartServer();
  Reply reply = Get("/api/v1/agents/broken");
  ASSERT_EQ(reply.status, 200) << reply.text;
  EXPECT_EQ(reply.body["name"], "broken");
  EXPECT_THAT(reply.body["error"].get<std::string>(), HasSubstr("max_steps"));
  EXPECT_FALSE(reply.body.contains("instructions"));
}

}  // namespace
}  // namespace mend::server
