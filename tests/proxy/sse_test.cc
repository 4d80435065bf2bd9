#include "proxy/sse.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "tests/support/status_matchers.h"

namespace mend::proxy {
namespace {

using ::mend::testing::StatusIs;

std::vector<SseEvent> ParseAll(std::string_view text, size_t chunk) {
  SseParser parser;
  std::vector<SseEvent> events;
  for (size_t i = 0; i < text.size(); i += chunk) {
    EXPECT_TRUE(parser.Feed(text.substr(i, chunk), events).ok());
  }
  return events;
}

TEST(SseParserTest, SameEventsWhateverTheChunking) {
  const std::string text =
      "event: message_start\ndata: {\"a\":1}\n\n: a comment\n\ndata:x\r\ndata: y\r\n\r\n"
      "id: 7\revent:e\rdata: z\r\r";
  for (size_t chunk : {1u, 2u, 3u, 7u, 1000u}) {
    std::vector<SseEvent> events = ParseAll(text, chunk);
    ASSERT_EQ(events.size(), 3u) << "chunk " << chunk;
    EXPECT_EQ(events[0].event, "message_start");
    EXPECT_EQ(events[0].data, "{\"a\":1}");
    EXPECT_EQ(events[1].event, "");
    EXPECT_EQ(events[1].data, "x\ny");
    EXPECT_EQ(events[2].event, "e");
    EXPECT_EQ(events[2].id, "7");
    EXPECT_EQ(events[2].data, "z");
  }
}

TEST(SseParserTest, AnEventWithoutDataIsNotDispatchedAndACutEventIsPending) {
  SseParser parser;
  std::vector<SseEvent> events;
  ASSERT_TRUE(parser.Feed("event: ping\n\n", events).ok());
  EXPECT_TRUE(events.empty());
  EXPECT_FALSE(parser.pending());
  ASSERT_TRUE(parser.Feed("data: {\"half\":", events).ok());
  EXPECT_TRUE(events.empty());
  EXPECT_TRUE(parser.pending());
}

TEST(SseParserTest, AnOversizedEventFailsAndStaysFailed) {
  SseParser parser(16);
  std::vector<SseEvent> events;
  EXPECT_THAT(parser.Feed("data: " + std::string(32, 'x'), events),
              StatusIs(StatusCode::kResourceExhausted));
  EXPECT_THAT(parser.Feed("\n\n", events), StatusIs(StatusCode::kResourceExhausted));
  EXPECT_TRUE(events.empty());
}

void Observe(StreamObserver& observer, std::string_view text) {
  SseParser parser;
  std::vector<SseEvent> events;
  ASSERT_TRUE(parser.Feed(text, events).ok());
  for (const SseEvent& e : events) observer.OnEvent(e);
}

TEST(StreamObserverTest, ChatJoinsTextToolCallsByIndexAndUsage) {
  StreamObserver observer(ApiShape::kChatCompletions);
  Observe(observer,
          "data: "
          "{\"model\":\"m1\",\"choices\":[{\"index\":0,\"delta\":{\"role\":\"assistant\","
          "\"content\":\"\"}}]}\n\n"
          "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"Hel\"}}]}\n\n"
          "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"lo\"}}]}\n\n"
          "data: "
          "{\"choices\":[{\"index\":0,\"delta\":{\"tool_calls\":[{\"index\":0,\"id\":\"c1\","
          "\"function\":{\"name\":\"read\",\"arguments\":\"\"}}]}}]}\n\n"
          "data: "
          "{\"choices\":[{\"index\":0,\"delta\":{\"tool_calls\":[{\"index\":1,\"id\":\"c2\","
          "\"function\":{\"name\":\"ls\",\"arguments\":\"{}\"}}]}}]}\n\n"
          "data: "
          "{\"choices\":[{\"index\":0,\"delta\":{\"tool_calls\":[{\"index\":0,\"function\":{"
          "\"arguments\":\"{\\\"p\\\":\"}}]}}]}\n\n"
          "data: "
          "{\"choices\":[{\"index\":0,\"delta\":{\"tool_calls\":[{\"index\":0,\"function\":{"
          "\"arguments\":\"1}\"}}]}}]}\n\n"
          "data: {\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"tool_calls\"}]}\n\n"
          "data: {\"choices\":[],\"usage\":{\"prompt_tokens\":12,\"completion_tokens\":3}}\n\n");
  const ReplySummary& s = observer.summary();
  EXPECT_FALSE(s.complete);
  Observe(observer, "data: [DONE]\n\n");
  EXPECT_TRUE(s.complete);
  EXPECT_EQ(s.model, "m1");
  EXPECT_EQ(s.text, "Hello");
  ASSERT_EQ(s.tool_calls.size(), 2u);
  EXPECT_EQ(s.tool_calls[0].id, "c1");
  EXPECT_EQ(s.tool_calls[0].name, "read");
  EXPECT_EQ(s.tool_calls[0].arguments, "{\"p\":1}");
  EXPECT_EQ(s.tool_calls[1].name, "ls");
  EXPECT_EQ(s.finish_reason, "tool_calls");
  EXPECT_EQ(s.input_tokens, 12);
  EXPECT_EQ(s.output_tokens, 3);
}

TEST(StreamObserverTest, ChatErrorEventIsRecorded) {
  StreamObserver observer(ApiShape::kChatCompletions);
  Observe(observer, "data: {\"error\":{\"message\":\"overloaded\",\"type\":\"server_error\"}}\n\n");
  EXPECT_EQ(observer.summary().error, "overloaded");
  EXPECT_FALSE(observer.summary().complete);
}

TEST(StreamObserverTest, MessagesEvents) {
  StreamObserver observer(ApiShape::kMessages);
  Observe(observer,
          "event: message_start\ndata: "
          "{\"type\":\"message_start\",\"message\":{\"model\":\"claude\",\"usage\":{\"input_"
          "tokens\":20,\"output_tokens\":1}}}\n\n"
          "event: ping\ndata: {\"type\":\"ping\"}\n\n"
          "event: content_block_start\ndata: "
          "{\"type\":\"content_block_start\",\"index\":0,\"content_block\":{\"type\":\"text\","
          "\"text\":\"\"}}\n\n"
          "event: content_block_delta\ndata: "
          "{\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"text_delta\","
          "\"text\":\"Hi\"}}\n\n"
          "event: content_block_start\ndata: "
          "{\"type\":\"content_block_start\",\"index\":1,\"content_block\":{\"type\":\"tool_use\","
          "\"id\":\"tu1\",\"name\":\"grep\",\"input\":{}}}\n\n"
          "event: content_block_delta\ndata: "
          "{\"type\":\"content_block_delta\",\"index\":1,\"delta\":{\"type\":\"input_json_delta\","
          "\"partial_json\":\"{\\\"q\\\"\"}}\n\n"
          "event: content_block_delta\ndata: "
          "{\"type\":\"content_block_delta\",\"index\":1,\"delta\":{\"type\":\"input_json_delta\","
          "\"partial_json\":\":2}\"}}\n\n"
          "event: message_delta\ndata: "
          "{\"type\":\"message_delta\",\"delta\":{\"stop_reason\":\"tool_use\"},\"usage\":{"
          "\"output_tokens\":9}}\n\n"
          "event: message_stop\ndata: {\"type\":\"message_stop\"}\n\n");
  const ReplySummary& s = observer.summary();
  EXPECT_TRUE(s.complete);
  EXPECT_EQ(s.model, "claude");
  EXPECT_EQ(s.text, "Hi");
  ASSERT_EQ(s.tool_calls.size(), 1u);
  EXPECT_EQ(s.tool_calls[0].arguments, "{\"q\":2}");
  EXPECT_EQ(s.finish_reason, "tool_use");
  EXPECT_EQ(s.input_tokens, 20);
  EXPECT_EQ(s.output_tokens, 9);
}

TEST(StreamObserverTest, ResponsesEvents) {
  StreamObserver observer(ApiShape::kResponses);
  Observe(observer,
          "event: response.created\ndata: "
          "{\"type\":\"response.created\",\"response\":{\"model\":\"gpt\",\"status\":\"in_"
          "progress\"}}\n\n"
          "event: response.output_text.delta\ndata: "
          "{\"type\":\"response.output_text.delta\",\"delta\":\"Yes\"}\n\n"
          "event: response.output_item.done\ndata: "
          "{\"type\":\"response.output_item.done\",\"item\":{\"type\":\"function_call\",\"call_"
          "id\":\"f1\",\"name\":\"add\",\"arguments\":\"{}\"}}\n\n"
          "event: response.completed\ndata: "
          "{\"type\":\"response.completed\",\"response\":{\"model\":\"gpt\",\"status\":"
          "\"completed\",\"usage\":{\"input_tokens\":4,\"output_tokens\":2}}}\n\n");
  const ReplySummary& s = observer.summary();
  EXPECT_TRUE(s.complete);
  EXPECT_EQ(s.text, "Yes");
  ASSERT_EQ(s.tool_calls.size(), 1u);
  EXPECT_EQ(s.tool_calls[0].name, "add");
  EXPECT_EQ(s.finish_reason, "completed");
  EXPECT_EQ(s.input_tokens, 4);
}

TEST(ParseReplyTest, EachApi) {
  Result<ReplySummary> chat = ParseReply(
      ApiShape::kChatCompletions,
      R"({"model":"m","choices":[{"index":0,"message":{"role":"assistant","content":null,"tool_calls":[{"id":"c","type":"function","function":{"name":"f","arguments":"{}"}}]},"finish_reason":"tool_calls"}],"usage":{"prompt_tokens":5,"completion_tokens":2}})");
  ASSERT_TRUE(chat.ok());
  EXPECT_EQ(chat->tool_calls.size(), 1u);
  EXPECT_EQ(chat->input_tokens, 5);
  EXPECT_TRUE(chat->complete);
  Result<ReplySummary> messages = ParseReply(
      ApiShape::kMessages,
      R"({"model":"c","content":[{"type":"text","text":"done"}],"stop_reason":"end_turn","usage":{"input_tokens":3,"output_tokens":1}})");
  ASSERT_TRUE(messages.ok());
  EXPECT_EQ(messages->text, "done");
  EXPECT_EQ(messages->finish_reason, "end_turn");
  Result<ReplySummary> responses = ParseReply(
      ApiShape::kResponses,
      R"({"model":"g","status":"completed","output":[{"type":"message","content":[{"type":"output_text","text":"ok"}]}],"usage":{"input_tokens":1,"output_tokens":1}})");
  ASSERT_TRUE(responses.ok());
  EXPECT_EQ(responses->text, "ok");
  EXPECT_THAT(ParseReply(ApiShape::kChatCompletions, "<html>"),
              StatusIs(StatusCode::kInvalidArgument));
}

}  // namespace
}  // namespace mend::proxy
