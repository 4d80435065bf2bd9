// The MCP client against fake_mcp_server (tests/support/fake_mcp_server_main.cc), a real child
// process over stdio that misbehaves on request.
#include "mend/mcp/client.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <signal.h>

#include <atomic>
#include <fstream>
#include <sstream>

#include "tests/e2e/temp_dir.h"
#include "tests/support/status_matchers.h"

namespace mend::mcp {
namespace {

using ::mend::testing::ScopedTempDir;
using ::mend::testing::StatusIs;
using ::testing::AllOf;
using ::testing::Contains;
using ::testing::HasSubstr;
using ::testing::SizeIs;
using json = nlohmann::json;

class McpClientTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto dir = ScopedTempDir::Create();
    MEND_ASSERT_OK(dir);
    dir_ = std::move(dir).value();
    log_ = dir_->File("server.log");
  }

  StdioOptions Stdio(std::vector<std::string> flags) {
    StdioOptions options;
    options.argv = {FAKE_MCP_SERVER_BINARY, "--log", log_};
    options.argv.insert(options.argv.end(), flags.begin(), flags.end());
    options.cwd = dir_->path();
    options.grace = std::chrono::milliseconds(200);
    return options;
  }

  Result<std::unique_ptr<Client>> Connect(std::vector<std::string> flags,
                                          ClientOptions options = {}) {
    return ConnectWith(Stdio(std::move(flags)), std::move(options));
  }

  Result<std::unique_ptr<Client>> ConnectWith(StdioOptions stdio, ClientOptions options) {
    options.name = "fake";
    MEND_ASSIGN_OR_RETURN(std::unique_ptr<Transport> transport,
                          MakeStdioTransport(std::move(stdio)));
    return Client::Connect(std::move(transport), std::move(options));
  }

  // Every message the server received, in order (the first line is its pid).
  std::vector<json> Received() {
    std::ifstream in(log_);
    std::vector<json> messages;
    std::string line;
    while (std::getline(in, line)) {
      if (line.rfind("pid ", 0) == 0) continue;
      messages.push_back(json::parse(line, nullptr, false));
    }
    return messages;
  }

  pid_t ServerPid() {
    std::ifstream in(log_);
    std::string word;
    pid_t pid = -1;
    in >> word >> pid;
    return pid;
  }

  std::unique_ptr<ScopedTempDir> dir_;
  std::string log_;
};

TEST_F(McpClientTest, InitializesListsAndCallsTools) {
  auto client = Connect({});
  MEND_ASSERT_OK(client);
  EXPECT_EQ((*client)->protocol_version(), "2025-11-25");
  EXPECT_EQ((*client)->server_info()["name"], "fake-mcp");
  EXPECT_TRUE((*client)->alive());

  Result<std::vector<ToolInfo>> tools = (*client)->ListTools();
  MEND_ASSERT_OK(tools);
  ASSERT_THAT(*tools, SizeIs(8));
  const ToolInfo& echo = (*tools)[0];
  EXPECT_EQ(echo.name, "echo");
  EXPECT_TRUE(echo.read_only_hint);
  EXPECT_FALSE(echo.destructive_hint);
  EXPECT_EQ(echo.input_schema["required"][0], "text");
  // Absent annotations take the specification's defaults: not read-only, destructive.
  const ToolInfo& write = (*tools)[1];
  EXPECT_FALSE(write.read_only_hint);
  EXPECT_TRUE(write.destructive_hint);
  EXPECT_TRUE(write.annotations.is_null());

  Result<CallResult> call =
      (*client)->CallTool("echo", {{"text", "hi there"}}, std::chrono::seconds(10));
  MEND_ASSERT_OK(call);
  EXPECT_FALSE(call->is_error);
  EXPECT_EQ(RenderToolResult(call->result, 1000), "hi there");
  MEND_EXPECT_OK((*client)->Ping());

  // The handshake went in the specification's order.
  const std::vector<json> received = Received();
  ASSERT_GE(received.size(), 2u);
  EXPECT_EQ(received[0]["method"], "initialize");
  EXPECT_EQ(received[0]["params"]["clientInfo"]["name"], "mend");
  EXPECT_EQ(received[1]["method"], "notifications/initialized");
  EXPECT_FALSE(received[1].contains("id"));
}

TEST_F(McpClientTest, AnOlderRevisionIsAcceptedAndAnUnknownOneRefused) {
  auto old = Connect({"--version", "2024-11-05"});
  MEND_ASSERT_OK(old);
  EXPECT_EQ((*old)->protocol_version(), "2024-11-05");
  (*old)->Close();

  auto future = Connect({"--version", "2099-01-01"});
  EXPECT_THAT(future, StatusIs(StatusCode::kFailedPrecondition,
                               AllOf(HasSubstr("fake"), HasSubstr("2099-01-01"))));
}

TEST_F(McpClientTest, ToolListsArePagedToTheEnd) {
  auto client = Connect({"--tools", "25", "--page-size", "4", "--list-changed-after-call"});
  MEND_ASSERT_OK(client);
  Result<std::vector<ToolInfo>> tools = (*client)->ListTools();
  MEND_ASSERT_OK(tools);
  EXPECT_THAT(*tools, SizeIs(33));
  EXPECT_EQ(tools->back().name, "tool_24");
  int pages = 0;
  for (const json& m : Received()) pages += m.value("method", "") == "tools/list";
  EXPECT_EQ(pages, 9);

  // list_changed is remembered until the tools are listed again.
  EXPECT_FALSE((*client)->tools_changed());
  MEND_ASSERT_OK((*client)->CallTool("echo", {{"text", "x"}}, std::chrono::seconds(10)));
  MEND_ASSERT_OK((*client)->Ping());  // the notification came before the ping's answer
  EXPECT_TRUE((*client)->tools_changed());
  MEND_ASSERT_OK((*client)->ListTools());
  EXPECT_FALSE((*client)->tools_changed());
}

TEST_F(McpClientTest, AToolErrorIsAResultAndAnUnknownToolAnRpcError) {
  auto client = Connect({});
  MEND_ASSERT_OK(client);
  Result<CallResult> fail = (*client)->CallTool("fail", json::object(), std::chrono::seconds(10));
  MEND_ASSERT_OK(fail);
  EXPECT_TRUE(fail->is_error);
  EXPECT_THAT(RenderToolResult(fail->result, 1000), HasSubstr("no such record"));
  EXPECT_THAT((*client)->CallTool("nope", json::object(), std::chrono::seconds(10)),
              StatusIs(StatusCode::kInvalidArgument, HasSubstr("-32602 Unknown tool")));
  EXPECT_TRUE((*client)->alive());
}

TEST_F(McpClientTest, ACallThatTakesTooLongIsCancelled) {
  auto client = Connect({});
  MEND_ASSERT_OK(client);
  Result<CallResult> slow =
      (*client)->CallTool("slow", json::object(), std::chrono::milliseconds(100));
  EXPECT_THAT(slow, StatusIs(StatusCode::kDeadlineExceeded, HasSubstr("cancelled")));
  // A stop flag that is set cancels a call too.
  std::atomic<bool> stop{true};
  EXPECT_THAT((*client)->CallTool("slow", json::object(), std::chrono::seconds(60), &stop),
              StatusIs(StatusCode::kCancelled));
  // The server got both cancellations before the ping that follows them.
  MEND_ASSERT_OK((*client)->Ping());
  std::vector<int64_t> cancelled;
  std::vector<int64_t> slow_ids;
  for (const json& m : Received()) {
    if (m.value("method", "") == "notifications/cancelled") {
      cancelled.push_back(m["params"]["requestId"].get<int64_t>());
    }
    if (m.value("method", "") == "tools/call") slow_ids.push_back(m["id"].get<int64_t>());
  }
  EXPECT_EQ(cancelled, slow_ids);
  EXPECT_TRUE((*client)->alive());
}

TEST_F(McpClientTest, AServerThatDiesMidCallIsUnavailableAndSaysWhy) {
  auto client = Connect({});
  MEND_ASSERT_OK(client);
  Result<CallResult> crash = (*client)->CallTool("crash", json::object(), std::chrono::seconds(30));
  EXPECT_THAT(crash,
              StatusIs(StatusCode::kUnavailable,
                       AllOf(HasSubstr("MCP server fake: the server exited with status 3"),
                             HasSubstr("its stderr ended with: fake_mcp_server: crashing"))));
  EXPECT_FALSE((*client)->alive());
  EXPECT_THAT((*client)->stderr_tail(), HasSubstr("crashing on purpose"));
  EXPECT_THAT((*client)->Ping(), StatusIs(StatusCode::kUnavailable));
}

TEST_F(McpClientTest, AMalformedLineBreaksTheSessionNotTheCaller) {
  auto client = Connect({"--malformed-on-list"});
  MEND_ASSERT_OK(client);
  EXPECT_THAT((*client)->ListTools(),
              StatusIs(StatusCode::kUnavailable,
                       AllOf(HasSubstr("MCP server fake"), HasSubstr("malformed JSON-RPC"))));
  EXPECT_FALSE((*client)->alive());
}

TEST_F(McpClientTest, AServerThatNeverAnswersTimesOut) {
  ClientOptions options;
  options.request_timeout = std::chrono::milliseconds(200);
  auto client = Connect({"--mute"}, options);
  EXPECT_THAT(client, StatusIs(StatusCode::kDeadlineExceeded,
                               AllOf(HasSubstr("fake"), HasSubstr("initialize"))));
}

TEST_F(McpClientTest, AProgramThatDoesNotExistIsNotFound) {
  StdioOptions stdio;
  stdio.argv = {"/nonexistent/mcp-server"};
  stdio.cwd = dir_->path();
  EXPECT_THAT(ConnectWith(stdio, {}), StatusIs(StatusCode::kNotFound));
  EXPECT_THAT(MakeStdioTransport(StdioOptions{}), StatusIs(StatusCode::kInvalidArgument));
}

TEST_F(McpClientTest, AFloodOfStderrIsBounded) {
  StdioOptions stdio = Stdio({"--stderr-lines", "5000"});
  std::vector<std::string> lines;
  stdio.max_stderr_lines = 50;
  stdio.on_stderr = [&lines](const std::string& line) { lines.push_back(line); };
  auto client = ConnectWith(stdio, {});
  MEND_ASSERT_OK(client);
  MEND_ASSERT_OK((*client)->ListTools());
  EXPECT_LE((*client)->stderr_tail().size(), 4096u);
  (*client)->Close();
  ASSERT_THAT(lines, SizeIs(51));
  EXPECT_EQ(lines[0], "fake_mcp_server: log line 0");
  EXPECT_EQ(lines.back(), "(4950 more lines of stderr dropped)");
}

TEST_F(McpClientTest, CloseEndsAServerThatIgnoresSigterm) {
  auto client = Connect({"--ignore-term"});
  MEND_ASSERT_OK(client);
  const pid_t pid = ServerPid();
  ASSERT_GT(pid, 0);
  // The server outlives the end of its stdin and ignores SIGTERM: Close ends with SIGKILL and
  // reaps it.
  (*client)->Close();
  EXPECT_NE(kill(pid, 0), 0);
  EXPECT_FALSE((*client)->alive());
}

TEST(RenderToolResultTest, SummarisesWhatIsNotTextAndCutsOnACharacter) {
  const json image = {
      {"content", json::array({{{"type", "image"}, {"data", "aGVsbG8h"}, {"mimeType", "image/png"}},
                               {{"type", "resource"},
                                {"resource", {{"uri", "file:///a.txt"}, {"text", "inside"}}}},
                               {{"type", "resource_link"}, {"uri", "file:///b"}, {"name", "b"}}})}};
  EXPECT_EQ(RenderToolResult(image, 1000),
            "[image: image/png, about 6 bytes, not shown]\n[resource file:///a.txt]\ninside\n"
            "[resource link: b file:///b]");
  const json structured = {{"content", json::array()}, {"structuredContent", {{"n", 1}}}};
  EXPECT_EQ(RenderToolResult(structured, 1000), R"({"n":1})");
  const json text = {
      {"content", json::array({{{"type", "text"}, {"text", std::string(300, 'x') + "é"}}})}};
  const std::string cut = RenderToolResult(text, 120);
  EXPECT_LE(cut.size(), 120u);
  EXPECT_THAT(cut, HasSubstr("[mend: the result was cut to 120 of its 302 bytes]"));
  EXPECT_EQ(RenderToolResult(json("not an object"), 100), "");
  // Members of the wrong type are summarised, never thrown on (found by mcp_jsonrpc_fuzz).
  const json odd = {{"content", json::array({{{"type", {{"uri", "x"}}}},
                                             {{"type", "resource"}, {"resource", {{"uri", 3}}}}})}};
  EXPECT_EQ(RenderToolResult(odd, 1000),
            "[untyped content, not shown]\n[resource : binary, about 0 bytes, not shown]");
}

}  // namespace
}  // namespace mend::mcp
