#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <httplib.h>

#include <nlohmann/json.hpp>
#include <sstream>

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
              ElementsAre("message_start", "content_block_start", "content_block_delta",
                          "content_block_stop", "content_block_start", "content_block_delta",
                          "content_block_stop", "message_delta", "message_stop"));
  ASSERT_EQ(events.data.size(), events.names.size());
  EXPECT_EQ(Json::parse(events.data[0])["message"]["model"], "c");
  EXPECT_EQ(Json::parse(events.data[2])["delta"]["text"], "hi");
  EXPECT_EQ(Json::parse(events.data[5])["delta"]["partial_json"], "{}");
  Json delta = Json::parse(events.data[7]);
  EXPECT_EQ(delta["delta"]["stop_reason"], "tool_use");
  EXPECT_EQ(delta["usage"]["output_tokens"], 5);
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
