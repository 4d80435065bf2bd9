#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <httplib.h>

#include <nlohmann/json.hpp>
#include <sstream>
#include <tuple>

#include "tests/support/fake_llm_render.h"
#include "tests/support/fake_llm_server.h"
#include "tests/support/fake_llm_test_client.h"

namespace mend::testing {
namespace {

using ::testing::ElementsAre;
using Json = nlohmann::json;

// The values of the "data:" lines of a server-sent event stream, and the "event:" names.
struct Events {
  std::vector<std::string> data;
  std::vector<std::string> names;
};

Events ParseEvents(const std::string& body) {
  Events events;
  std::istringstream in(body);
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("data: ", 0) == 0) events.data.push_back(line.substr(6));
    if (line.rfind("event: ", 0) == 0) events.names.push_back(line.substr(7));
  }
  return events;
}

class FakeLlmStreamTest : public FakeLlmServerFixture {};

TEST_F(FakeLlmStreamTest, ChatStreamsChunksThenUsageThenDone) {
  FakeResponse r;
  r.text = "a longer answer, split into pieces";
  r.tool_calls = {{"c1", "ls", R"({"dir":"."})"}};
  server_->Enqueue(r);
  auto res = Post("/v1/chat/completions",
                  R"({"model":"m","stream":true,"stream_options":{"include_usage":true}})");
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 200);
  EXPECT_EQ(res->get_header_value("Content-Type"), "text/event-stream");
  Events events = ParseEvents(res->body);
  ASSERT_GE(events.data.size(), 4u);
  EXPECT_EQ(events.data.back(), "[DONE]");
  std::string text, arguments, finish;
  for (size_t i = 0; i + 2 < events.data.size(); ++i) {
    Json chunk = Json::parse(events.data[i]);
    EXPECT_EQ(chunk["object"], "chat.completion.chunk");
    const Json& choice = chunk["choices"][0];
    const Json& delta = choice["delta"];
    if (delta.contains("content")) text += delta["content"].get<std::string>();
    if (delta.contains("tool_calls")) {
      arguments += delta["tool_calls"][0]["function"]["arguments"].get<std::string>();
    }
    if (!choice["finish_reason"].is_null()) finish = choice["finish_reason"];
  }
  EXPECT_EQ(text, r.text);
  EXPECT_EQ(arguments, R"({"dir":"."})");
  EXPECT_EQ(finish, "tool_calls");
  Json usage = Json::parse(events.data[events.data.size() - 2]);
  EXPECT_TRUE(usage["choices"].empty());
  EXPECT_EQ(usage["usage"]["total_tokens"], 15);
}

TEST_F(FakeLlmStreamTest, ChatStreamHasNoUsageUnlessAsked) {
  auto res = Post("/v1/chat/completions", R"({"stream":true})");
  ASSERT_TRUE(res);
  for (const std::string& data : ParseEvents(res->body).data) {
    if (data == "[DONE]") continue;
    EXPECT_FALSE(Json::parse(data).contains("usage"));
  }
}

TEST_F(FakeLlmStreamTest, MessagesStreamTypedEvents) {
  FakeResponse r;
  r.text = "hi";
  r.tool_calls = {{"toolu_1", "ls", "{}"}};
  server_->Enqueue(r);
  auto res = Post("/v1/messages", R"({"model":"c","stream":true})");
  ASSERT_TRUE(res);
  Events events = ParseEvents(res->body);
  EXPECT_THAT(events.names,
              ElementsAre("message_start", "ping", "content_block_start", "content_block_delta",
                          "content_block_stop", "content_block_start", "content_block_delta",
                          "content_block_stop", "message_delta", "message_stop"));
  ASSERT_EQ(events.data.size(), events.names.size());
  EXPECT_EQ(Json::parse(events.data[0])["message"]["model"], "c");
  EXPECT_EQ(Json::parse(events.data[1]), Json({{"type", "ping"}}));
  EXPECT_EQ(Json::parse(events.data[3])["delta"]["text"], "hi");
  EXPECT_EQ(Json::parse(events.data[6])["delta"]["partial_json"], "{}");
  Json delta = Json::parse(events.data[8]);
  EXPECT_EQ(delta["delta"]["stop_reason"], "tool_use");
  EXPECT_EQ(delta["usage"]["output_tokens"], 5);
}

// 16 bytes: three pieces of 5, 5 and 6 bytes.
constexpr char kPathArguments[] = R"({"path":"a.txt"})";

TEST_F(FakeLlmStreamTest, ChatStreamSendsEachToolCallsArgumentsInPieces) {
  FakeResponse r;
  r.tool_calls = {{"c1", "read_file", kPathArguments}, {"c2", "ls", "{}"}};
  r.argument_pieces = 3;
  server_->Enqueue(r);
  auto res = Post("/v1/chat/completions", R"({"model":"m","stream":true})");
  ASSERT_TRUE(res);
  // Each tool call delta as (index, id or "", arguments), in stream order.
  std::vector<std::tuple<int, std::string, std::string>> deltas;
  for (const std::string& data : ParseEvents(res->body).data) {
    if (data == "[DONE]") continue;
    const Json chunk = Json::parse(data);
    const Json& delta = chunk["choices"][0]["delta"];
    if (!delta.contains("tool_calls")) continue;
    ASSERT_EQ(delta["tool_calls"].size(), 1u);
    const Json& call = delta["tool_calls"][0];
    deltas.emplace_back(call["index"].get<int>(), call.value("id", ""),
                        call["function"]["arguments"].get<std::string>());
  }
  using D = std::tuple<int, std::string, std::string>;
  EXPECT_THAT(deltas, ElementsAre(D{0, "c1", ""}, D{0, "", R"({"pat)"}, D{0, "", R"(h":"a)"},
                                  D{0, "", R"(.txt"})"}, D{1, "c2", ""}, D{1, "", ""},
                                  D{1, "", "{"}, D{1, "", "}"}));
}

TEST_F(FakeLlmStreamTest, MessagesStreamSendsArgumentsAsSeveralInputJsonDeltas) {
  FakeResponse r;
  r.tool_calls = {{"toolu_1", "read_file", kPathArguments}};
  r.argument_pieces = 3;
  server_->Enqueue(r);
  auto res = Post("/v1/messages", R"({"model":"c","stream":true})");
  ASSERT_TRUE(res);
  Events events = ParseEvents(res->body);
  EXPECT_THAT(events.names,
              ElementsAre("message_start", "ping", "content_block_start", "content_block_delta",
                          "content_block_delta", "content_block_delta", "content_block_stop",
                          "message_delta", "message_stop"));
  ASSERT_EQ(events.data.size(), events.names.size());
  std::vector<std::string> pieces;
  for (size_t i = 3; i < 6; ++i) {
    Json event = Json::parse(events.data[i]);
    EXPECT_EQ(event["index"], 0);
    EXPECT_EQ(event["delta"]["type"], "input_json_delta");
    pieces.push_back(event["delta"]["partial_json"]);
  }
  EXPECT_THAT(pieces, ElementsAre(R"({"pat)", R"(h":"a)", R"(.txt"})"));
}

TEST(SplitIntoTest, SplitsEvenlyWithoutBreakingUtf8) {
  using fake_llm::SplitInto;
  EXPECT_THAT(SplitInto("abcdef", 3), ElementsAre("ab", "cd", "ef"));
  EXPECT_THAT(SplitInto("abcdefg", 2), ElementsAre("abc", "defg"));
  EXPECT_THAT(SplitInto("ab", 4), ElementsAre("", "a", "", "b"));
  EXPECT_THAT(SplitInto("abc", 0), ElementsAre("abc"));
  EXPECT_THAT(SplitInto("", 2), ElementsAre("", ""));
  // "\xC3\xA9" is one character in two bytes; a boundary inside it moves past it.
  EXPECT_THAT(SplitInto("\xC3\xA9\xC3\xA9", 4), ElementsAre("\xC3\xA9", "", "\xC3\xA9", ""));
  EXPECT_THAT(SplitInto("a\xC3\xA9", 2), ElementsAre("a", "\xC3\xA9"));
}

TEST_F(FakeLlmStreamTest, ErrorsAreNotStreamed) {
  FakeResponse r;
  r.status = 429;
  server_->Enqueue(r);
  auto res = Post("/v1/chat/completions", R"({"stream":true})");
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 429);
  EXPECT_EQ(res->get_header_value("Content-Type"), "application/json");
}

}  // namespace
}  // namespace mend::testing
