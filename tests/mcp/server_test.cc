#include "mend/mcp/server.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "mend/mcp/client.h"
#include "tests/support/status_matchers.h"

namespace mend::mcp {
namespace {

using ::testing::HasSubstr;
using json = nlohmann::json;

class McpServerTest : public ::testing::Test {
 protected:
  McpServerTest() : server_(Identity(), Tools(), Resources()) {}

  static ServerIdentity Identity() {
    ServerIdentity identity;
    identity.version = "9.9.9";
    identity.instructions = "use it";
    return identity;
  }
  static std::vector<ServedTool> Tools() {
    ServedTool add;
    add.name = "add";
    add.description = "adds";
    add.input_schema = {{"type", "object"}};
    add.annotations = {{"readOnlyHint", true}};
    add.call = [](const json& args) -> Result<json> {
      if (!args.contains("a")) return InvalidArgumentError("a is required");
      return json{{"sum", args["a"].get<int>() + args.value("b", 0)}};
    };
    return {add};
  }
  static ServedResources Resources() {
    ServedResources resources;
    resources.fixed.push_back({"mend://x", "x", "the x", "text/plain"});
    resources.read = [](const std::string& uri) -> Result<std::string> {
      if (uri == "mend://x") return std::string("x text");
      return NotFoundError("no resource " + uri);
    };
    return resources;
  }

  // The answer to `request` (with "jsonrpc" and "id" 1 added), parsed.
  json Ask(const std::string& method, json params = nullptr) {
    json request = {{"jsonrpc", "2.0"}, {"id", 1}, {"method", method}};
    if (!params.is_null()) request["params"] = std::move(params);
    std::optional<std::string> answer = server_.Handle(request.dump());
    EXPECT_TRUE(answer.has_value());
    return answer.has_value() ? json::parse(*answer) : json();
  }

  McpServer server_;
};

TEST_F(McpServerTest, InitializeAgreesOnARevisionMendSpeaks) {
  json older =
      Ask("initialize", {{"protocolVersion", "2025-03-26"}, {"capabilities", json::object()}});
  EXPECT_EQ(older["result"]["protocolVersion"], "2025-03-26");
  EXPECT_EQ(older["result"]["serverInfo"]["version"], "9.9.9");
  EXPECT_EQ(older["result"]["instructions"], "use it");
  EXPECT_TRUE(older["result"]["capabilities"].contains("tools"));
  EXPECT_TRUE(older["result"]["capabilities"].contains("resources"));
  // An unknown revision gets mend's newest; the client decides.
  json future = Ask("initialize", {{"protocolVersion", "2099-01-01"}});
  EXPECT_EQ(future["result"]["protocolVersion"], "2025-11-25");
  EXPECT_EQ(server_.protocol_version(), "2025-11-25");
}

TEST_F(McpServerTest, ToolsAreListedAndCalled) {
  json list = Ask("tools/list");
  ASSERT_EQ(list["result"]["tools"].size(), 1u);
  EXPECT_EQ(list["result"]["tools"][0]["name"], "add");
  EXPECT_EQ(list["result"]["tools"][0]["annotations"]["readOnlyHint"], true);

  json ok = Ask("tools/call", {{"name", "add"}, {"arguments", {{"a", 2}, {"b", 3}}}});
  EXPECT_EQ(ok["result"]["structuredContent"]["sum"], 5);
  EXPECT_EQ(ok["result"]["content"][0]["text"], R"({"sum":5})");
  EXPECT_EQ(ok["result"]["isError"], false);
  // A tool's own error is a result the model can read, not a protocol error.
  json bad = Ask("tools/call", {{"name", "add"}, {"arguments", json::object()}});
  EXPECT_EQ(bad["result"]["isError"], true);
  EXPECT_EQ(bad["result"]["content"][0]["text"], "a is required");
  // An unknown tool and arguments that are not an object are protocol errors (-32602).
  EXPECT_EQ(Ask("tools/call", {{"name", "nope"}})["error"]["code"], kInvalidParams);
  EXPECT_EQ(Ask("tools/call", {{"name", "add"}, {"arguments", "x"}})["error"]["code"],
            kInvalidParams);
}

TEST_F(McpServerTest, ResourcesAreListedAndRead) {
  EXPECT_EQ(Ask("resources/list")["result"]["resources"][0]["uri"], "mend://x");
  json read = Ask("resources/read", {{"uri", "mend://x"}});
  EXPECT_EQ(read["result"]["contents"][0]["text"], "x text");
  EXPECT_EQ(read["result"]["contents"][0]["mimeType"], "text/plain");
  EXPECT_EQ(Ask("resources/read", {{"uri", "mend://y"}})["error"]["code"], -32002);
}

TEST_F(McpServerTest, BadMessagesGetJsonRpcErrorsAndNotificationsNothing) {
  json parse = json::parse(*server_.Handle("{not json"));
  EXPECT_EQ(parse["error"]["code"], kParseError);
  EXPECT_TRUE(parse["id"].is_null());
  json invalid = json::parse(*server_.Handle(R"({"jsonrpc":"1.0","id":1,"method":"ping"})"));
  EXPECT_EQ(invalid["error"]["code"], kInvalidRequest);
  EXPECT_FALSE(
      server_.Handle(R"({"jsonrpc":"2.0","method":"notifications/initialized"})").has_value());
  EXPECT_FALSE(server_.Handle(R"({"jsonrpc":"2.0","id":5,"result":{}})").has_value());
  json unknown = Ask("sampling/createMessage");
  EXPECT_EQ(unknown["error"]["code"], kMethodNotFound);
  EXPECT_EQ(Ask("ping")["result"], json::object());
}

}  // namespace
}  // namespace mend::mcp
