#include "mend/mcp/jsonrpc.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "tests/support/status_matchers.h"

namespace mend::mcp {
namespace {

using ::mend::testing::StatusIs;
using ::testing::HasSubstr;
using ::testing::Not;

TEST(JsonRpcTest, ReadsEachKindOfMessage) {
  Result<RpcMessage> request =
      ParseRpcMessage(R"({"jsonrpc":"2.0","id":7,"method":"tools/list","params":{"cursor":"c"}})");
  MEND_ASSERT_OK(request);
  EXPECT_EQ(request->kind, RpcMessage::Kind::kRequest);
  EXPECT_EQ(request->id, 7);
  EXPECT_EQ(request->method, "tools/list");
  EXPECT_EQ(request->params["cursor"], "c");

  Result<RpcMessage> note =
      ParseRpcMessage(R"({"jsonrpc":"2.0","method":"notifications/tools/list_changed"})");
  MEND_ASSERT_OK(note);
  EXPECT_EQ(note->kind, RpcMessage::Kind::kNotification);
  EXPECT_TRUE(note->params.is_null());

  Result<RpcMessage> result = ParseRpcMessage(R"({"jsonrpc":"2.0","id":"a-1","result":{}})");
  MEND_ASSERT_OK(result);
  EXPECT_EQ(result->kind, RpcMessage::Kind::kResult);
  EXPECT_EQ(result->id, "a-1");

  Result<RpcMessage> error = ParseRpcMessage(
      R"({"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"Parse error","data":"x"}})");
  MEND_ASSERT_OK(error);
  EXPECT_EQ(error->kind, RpcMessage::Kind::kError);
  EXPECT_EQ(error->error.code, kParseError);
  EXPECT_EQ(error->error.Describe(), "-32700 Parse error: \"x\"");
}

TEST(JsonRpcTest, RefusesWhatJsonRpcAndMcpDoNotAllow) {
  const std::pair<const char*, const char*> cases[] = {
      {"{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{}", "malformed JSON"},
      {"[{\"jsonrpc\":\"2.0\",\"method\":\"ping\",\"id\":1}]", "batch"},
      {"\"hello\"", "not an object"},
      {R"({"id":1,"method":"ping"})", "\"jsonrpc\" must be \"2.0\""},
      {R"({"jsonrpc":"1.0","id":1,"method":"ping"})", "\"jsonrpc\" must be \"2.0\""},
      {R"({"jsonrpc":"2.0","id":null,"method":"ping"})", "\"id\" must be"},
      {R"({"jsonrpc":"2.0","id":1.5,"method":"ping"})", "\"id\" must be"},
      {R"({"jsonrpc":"2.0","id":true,"result":{}})", "\"id\" must be"},
      {R"({"jsonrpc":"2.0","id":1,"method":""})", "non-empty string"},
      {R"({"jsonrpc":"2.0","id":1,"method":"x","params":[1]})", "\"params\" must be an object"},
      {R"({"jsonrpc":"2.0","id":1,"method":"x","result":{}})", "cannot carry"},
      {R"({"jsonrpc":"2.0","id":1})", "exactly one"},
      {R"({"jsonrpc":"2.0","id":1,"result":{},"error":{"code":1,"message":"m"}})", "exactly one"},
      {R"({"jsonrpc":"2.0","result":{}})", "needs an \"id\""},
      {R"({"jsonrpc":"2.0","id":1,"result":[]})", "\"result\" must be an object"},
      {R"({"jsonrpc":"2.0","id":1,"error":{"message":"m"}})", "error.code"},
      {R"({"jsonrpc":"2.0","id":1,"error":{"code":1.5,"message":"m"}})", "error.code"},
      {R"({"jsonrpc":"2.0","id":1,"error":{"code":1}})", "error.message"},
      {R"({"jsonrpc":"2.0","id":1,"result":{},"extra":1})", "unknown member \"extra\""},
      {"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"\xff\"}", "malformed JSON"},
  };
  for (const auto& [text, why] : cases) {
    Result<RpcMessage> parsed = ParseRpcMessage(text);
    EXPECT_THAT(parsed, StatusIs(StatusCode::kInvalidArgument, HasSubstr(why))) << text;
  }
  // An oversized message is refused before it is parsed, and the error does not quote it whole.
  const std::string huge = "{\"x\":\"" + std::string(kMaxMessageBytes, 'a') + "\"}";
  Result<RpcMessage> big = ParseRpcMessage(huge);
  EXPECT_THAT(big, StatusIs(StatusCode::kInvalidArgument, HasSubstr("over the limit")));
  for (const std::string& garbage :
       {std::string(5000, '{'), "{\"a\":\"" + std::string(5000, 'b') + "\\u12\"}"}) {
    Result<RpcMessage> long_error = ParseRpcMessage(garbage);
    ASSERT_FALSE(long_error.ok());
    EXPECT_LT(long_error.status().message().size(), 700u);
  }
}

TEST(JsonRpcTest, WritesOneLineThatReadsBackTheSame) {
  const RpcMessage messages[] = {
      RpcMessage::Request(3, "tools/call", {{"name", "echo"}, {"arguments", {{"text", "a\nb"}}}}),
      RpcMessage::Notification("notifications/cancelled", {{"requestId", 3}}),
      RpcMessage::Result("x", {{"tools", nlohmann::json::array()}}),
      RpcMessage::Error(4, kInvalidParams, "Invalid params", {{"why", "no"}}),
  };
  for (const RpcMessage& m : messages) {
    const std::string line = SerializeRpcMessage(m);
    EXPECT_THAT(line, Not(HasSubstr("\n")));
    Result<RpcMessage> back = ParseRpcMessage(line);
    MEND_ASSERT_OK(back);
    EXPECT_EQ(back->kind, m.kind);
    EXPECT_EQ(back->id, m.id);
    EXPECT_EQ(back->method, m.method);
    EXPECT_EQ(back->params, m.params);
    EXPECT_EQ(back->error.code, m.error.code);
  }
}

}  // namespace
}  // namespace mend::mcp
