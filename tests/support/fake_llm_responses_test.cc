#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <httplib.h>

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "tests/support/fake_llm_routes.h"
#include "tests/support/fake_llm_server.h"
#include "tests/support/fake_llm_test_client.h"

namespace mend::testing {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::Not;
using Json = nlohmann::json;

constexpr char kResponses[] = "/v1/responses";
constexpr char kPathArguments[] = R"({"path":"a.txt"})";

// The names of `events`.
std::vector<std::string> Names(const std::vector<SseEvent>& events) {
  std::vector<std::string> names;
  for (const SseEvent& event : events) names.push_back(event.name);
  return names;
}

class FakeLlmResponsesTest : public FakeLlmServerFixture {};

TEST_F(FakeLlmResponsesTest, TextAnswerHasTheResponseObjectShape) {
  auto res = Post(kResponses, R"({"model":"gpt-test","input":"hi"})");
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 200);
  EXPECT_EQ(res->get_header_value("Content-Type"), "application/json");
  EXPECT_EQ(Json::parse(res->body), Json::parse(R"({
    "id": "resp_fake1", "object": "response", "created_at": 1700000001, "status": "completed",
    "error": null, "incomplete_details": null, "instructions": null, "max_output_tokens": null,
    "metadata": {}, "model": "gpt-test",
    "output": [{"type": "message", "id": "msg_fake1", "status": "completed", "role": "assistant",
                "content": [{"type": "output_text", "text": "ok", "annotations": []}]}],
    "parallel_tool_calls": true, "previous_response_id": null,
    "reasoning": {"effort": null, "summary": null}, "store": true, "temperature": 1.0,
    "text": {"format": {"type": "text"}}, "tool_choice": "auto", "tools": [], "top_p": 1.0,
    "truncation": "disabled", "user": null,
    "usage": {"input_tokens": 10, "input_tokens_details": {"cached_tokens": 0},
              "output_tokens": 5, "output_tokens_details": {"reasoning_tokens": 0},
              "total_tokens": 15}})"));
}

TEST_F(FakeLlmResponsesTest, ToolCallsFollowTheMessageAsFunctionCallItems) {
  FakeResponse r;
  r.text = "let me look";
  r.tool_calls = {{"call_a", "read_file", kPathArguments}, {"call_b", "ls", "{}"}};
  server_->Enqueue(r);
  r.text = "";
  server_->Enqueue(r);
  Json with_text = PostJson(kResponses, R"({"model":"m","input":"x"})");
  EXPECT_EQ(with_text["output"], Json::parse(R"([
    {"type": "message", "id": "msg_fake1", "status": "completed", "role": "assistant",
     "content": [{"type": "output_text", "text": "let me look", "annotations": []}]},
    {"type": "function_call", "id": "fc_fake1_0", "call_id": "call_a", "name": "read_file",
     "arguments": "{\"path\":\"a.txt\"}", "status": "completed"},
    {"type": "function_call", "id": "fc_fake1_1", "call_id": "call_b", "name": "ls",
     "arguments": "{}", "status": "completed"}])"));
  EXPECT_EQ(with_text["status"], "completed");
  Json calls_only = PostJson(kResponses, R"({"model":"m","input":"x"})");
  ASSERT_EQ(calls_only["output"].size(), 2u);
  EXPECT_EQ(calls_only["output"][0]["type"], "function_call");
  EXPECT_EQ(calls_only["output"][0]["id"], "fc_fake2_0");
  EXPECT_EQ(calls_only["output"][1]["call_id"], "call_b");
}

TEST_F(FakeLlmResponsesTest, RequestParametersAreRepeated) {
  Json request = Json::parse(R"({
    "model": "m", "input": "x", "instructions": "Be brief.", "max_output_tokens": 50,
    "metadata": {"k": "v"}, "parallel_tool_calls": false, "previous_response_id": "resp_prev",
    "reasoning": {"effort": "low", "summary": null}, "store": false, "temperature": 0.25,
    "text": {"format": {"type": "json_object"}}, "tool_choice": "required",
    "tools": [{"type": "function", "name": "ls", "parameters": {"type": "object"}}],
    "top_p": 0.5, "truncation": "auto", "user": "u1"})");
  Json body = PostJson(kResponses, request.dump());
  for (const char* key : {"instructions", "max_output_tokens", "metadata", "parallel_tool_calls",
                          "previous_response_id", "reasoning", "store", "temperature", "text",
                          "tool_choice", "tools", "top_p", "truncation", "user"}) {
    EXPECT_EQ(body[key], request[key]) << key;
  }
  EXPECT_FALSE(body.contains("input"));
}

TEST_F(FakeLlmResponsesTest, UsageCanBeOmitted) {
  FakeResponse r;
  r.omit_usage = true;
  server_->Enqueue(r);
  server_->Enqueue(r);
  EXPECT_FALSE(PostJson(kResponses, "{}").contains("usage"));
  auto res = Post(kResponses, R"({"stream":true})");
  ASSERT_TRUE(res);
  std::vector<SseEvent> events = ParseSse(res->body);
  ASSERT_FALSE(events.empty());
  EXPECT_TRUE(Json::parse(events.front().data)["response"]["usage"].is_null());
  ASSERT_EQ(events.back().name, "response.completed");
  EXPECT_FALSE(Json::parse(events.back().data)["response"].contains("usage"));
}

TEST_F(FakeLlmResponsesTest, LengthFinishMakesAnIncompleteResponse) {
  FakeResponse r;
  r.text = "cut sh";
  r.finish_reason = "length";
  server_->Enqueue(r);
  server_->Enqueue(r);
  Json body = PostJson(kResponses, "{}");
  EXPECT_EQ(body["status"], "incomplete");
  EXPECT_EQ(body["incomplete_details"], Json({{"reason", "max_output_tokens"}}));
  EXPECT_EQ(body["output"][0]["status"], "incomplete");
  auto res = Post(kResponses, R"({"stream":true})");
  ASSERT_TRUE(res);
  std::vector<SseEvent> events = ParseSse(res->body);
  ASSERT_FALSE(events.empty());
  EXPECT_EQ(events.back().name, "response.incomplete");
  EXPECT_EQ(Json::parse(events.back().data)["response"]["status"], "incomplete");
}

TEST_F(FakeLlmResponsesTest, ErrorsHaveOpenAiShape) {
  FakeResponse r;
  r.status = 429;
  r.retry_after_seconds = 3;
  r.error_message = "slow down";
  server_->Enqueue(r);
  auto limited = Post(kResponses, R"({"stream":true})");
  ASSERT_TRUE(limited);
  EXPECT_EQ(limited->status, 429);
  EXPECT_EQ(limited->get_header_value("Retry-After"), "3");
  EXPECT_EQ(limited->get_header_value("Content-Type"), "application/json");
  EXPECT_EQ(Json::parse(limited->body), Json::parse(R"({"error": {"message": "slow down",
    "type": "requests", "param": null, "code": "rate_limit_exceeded"}})"));
  auto malformed = Post(kResponses, "[1]");
  ASSERT_TRUE(malformed);
  EXPECT_EQ(malformed->status, 400);
  EXPECT_EQ(Json::parse(malformed->body)["error"]["type"], "invalid_request_error");
  server_->RequireApiKey("sk-test");
  auto unauthorized = Post(kResponses, "{}");
  ASSERT_TRUE(unauthorized);
  EXPECT_EQ(unauthorized->status, 401);
  EXPECT_EQ(Json::parse(unauthorized->body)["error"]["code"], "invalid_api_key");
  EXPECT_EQ(PostStatus(kResponses, "{}", {{"Authorization", "Bearer sk-test"}}), 200);
  EXPECT_EQ(server_->request_count(), 4u);
}

TEST_F(FakeLlmResponsesTest, StreamSendsTheTypedEventSequence) {
  FakeResponse r;
  r.text = "Hello, streaming world";  // 22 bytes: deltas of 8, 8 and 6
  r.tool_calls = {{"call_1", "read_file", kPathArguments}};
  r.argument_pieces = 2;
  server_->Enqueue(r);
  auto res = Post(kResponses, R"({"model":"gpt-test","input":"hi","stream":true})");
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 200);
  EXPECT_EQ(res->get_header_value("Content-Type"), "text/event-stream");
  EXPECT_THAT(res->body, Not(HasSubstr("[DONE]")));
  std::vector<SseEvent> events = ParseSse(res->body);
  EXPECT_THAT(
      Names(events),
      ElementsAre("response.created", "response.in_progress", "response.output_item.added",
                  "response.content_part.added", "response.output_text.delta",
                  "response.output_text.delta", "response.output_text.delta",
                  "response.output_text.done", "response.content_part.done",
                  "response.output_item.done", "response.output_item.added",
                  "response.function_call_arguments.delta",
                  "response.function_call_arguments.delta", "response.function_call_arguments.done",
                  "response.output_item.done", "response.completed"));
  ASSERT_EQ(events.size(), 16u);
  std::vector<Json> data;
  for (size_t i = 0; i < events.size(); ++i) {
    data.push_back(Json::parse(events[i].data));
    EXPECT_EQ(data[i]["type"], events[i].name);
    EXPECT_EQ(data[i]["sequence_number"], i);
  }

  const Json& created = data[0]["response"];
  EXPECT_EQ(created["id"], "resp_fake1");
  EXPECT_EQ(created["status"], "in_progress");
  EXPECT_EQ(created["model"], "gpt-test");
  EXPECT_EQ(created["output"], Json::array());
  EXPECT_TRUE(created["usage"].is_null());
  EXPECT_EQ(data[1]["response"], created);

  EXPECT_EQ(data[2], Json::parse(R"({"type": "response.output_item.added", "sequence_number": 2,
    "output_index": 0, "item": {"type": "message", "id": "msg_fake1", "status": "in_progress",
    "role": "assistant", "content": []}})"));
  EXPECT_EQ(data[3], Json::parse(R"({"type": "response.content_part.added", "sequence_number": 3,
    "item_id": "msg_fake1", "output_index": 0, "content_index": 0,
    "part": {"type": "output_text", "text": "", "annotations": []}})"));
  EXPECT_EQ(data[4], Json::parse(R"({"type": "response.output_text.delta", "sequence_number": 4,
    "item_id": "msg_fake1", "output_index": 0, "content_index": 0, "delta": "Hello, s",
    "logprobs": []})"));
  EXPECT_EQ(data[5]["delta"], "treaming");
  EXPECT_EQ(data[6]["delta"], " world");
  EXPECT_EQ(data[7], Json::parse(R"({"type": "response.output_text.done", "sequence_number": 7,
    "item_id": "msg_fake1", "output_index": 0, "content_index": 0,
    "text": "Hello, streaming world", "logprobs": []})"));
  const Json full_text = {
      {"type", "output_text"}, {"text", "Hello, streaming world"}, {"annotations", Json::array()}};
  EXPECT_EQ(data[8]["part"], full_text);
  EXPECT_EQ(data[8]["item_id"], "msg_fake1");
  const Json message = {{"type", "message"},
                        {"id", "msg_fake1"},
                        {"status", "completed"},
                        {"role", "assistant"},
                        {"content", Json::array({full_text})}};
  EXPECT_EQ(data[9]["item"], message);
  EXPECT_EQ(data[9]["output_index"], 0);

  EXPECT_EQ(data[10], Json::parse(R"({"type": "response.output_item.added", "sequence_number": 10,
    "output_index": 1, "item": {"type": "function_call", "id": "fc_fake1_0", "call_id": "call_1",
    "name": "read_file", "arguments": "", "status": "in_progress"}})"));
  EXPECT_EQ(data[11], Json::parse(R"({"type": "response.function_call_arguments.delta",
    "sequence_number": 11, "item_id": "fc_fake1_0", "output_index": 1, "delta": "{\"path\":"})"));
  EXPECT_EQ(data[12]["delta"], R"("a.txt"})");
  EXPECT_EQ(data[13], Json::parse(R"({"type": "response.function_call_arguments.done",
    "sequence_number": 13, "item_id": "fc_fake1_0", "output_index": 1, "name": "read_file",
    "arguments": "{\"path\":\"a.txt\"}"})"));
  const Json call = {{"type", "function_call"},     {"id", "fc_fake1_0"},
                     {"call_id", "call_1"},         {"name", "read_file"},
                     {"arguments", kPathArguments}, {"status", "completed"}};
  EXPECT_EQ(data[14]["item"], call);
  EXPECT_EQ(data[14]["output_index"], 1);

  const Json& completed = data[15]["response"];
  EXPECT_EQ(completed["id"], "resp_fake1");
  EXPECT_EQ(completed["status"], "completed");
  EXPECT_EQ(completed["output"], Json::array({message, call}));
  EXPECT_EQ(completed["usage"]["total_tokens"], 15);
  // The final object is the one a request without "stream" gets, but for the sequence.
  server_->Enqueue(r);
  Json plain = PostJson(kResponses, R"({"model":"gpt-test","input":"hi"})");
  Json renumbered = completed;
  renumbered["id"] = "resp_fake2";
  renumbered["created_at"] = 1700000002;
  renumbered["output"][0]["id"] = "msg_fake2";
  renumbered["output"][1]["id"] = "fc_fake2_0";
  EXPECT_EQ(plain, renumbered);
}

TEST_F(FakeLlmResponsesTest, ToolOnlyStreamHasNoMessageEvents) {
  FakeResponse r;
  r.tool_calls = {{"call_1", "ls", "{}"}, {"call_2", "pwd", "{}"}};
  server_->Enqueue(r);
  auto res = Post(kResponses, R"({"stream":true})");
  ASSERT_TRUE(res);
  std::vector<SseEvent> events = ParseSse(res->body);
  EXPECT_THAT(
      Names(events),
      ElementsAre("response.created", "response.in_progress", "response.output_item.added",
                  "response.function_call_arguments.delta", "response.function_call_arguments.done",
                  "response.output_item.done", "response.output_item.added",
                  "response.function_call_arguments.delta", "response.function_call_arguments.done",
                  "response.output_item.done", "response.completed"));
  ASSERT_EQ(events.size(), 11u);
  EXPECT_EQ(Json::parse(events[3].data)["output_index"], 0);
  EXPECT_EQ(Json::parse(events[3].data)["item_id"], "fc_fake1_0");
  EXPECT_EQ(Json::parse(events[7].data)["output_index"], 1);
  EXPECT_EQ(Json::parse(events[7].data)["item_id"], "fc_fake1_1");
}

TEST(RequestTextsTest, CollectsResponsesInstructionsInputItemsAndToolOutputs) {
  Json request = Json::parse(R"({"model": "m", "instructions": "You grade.", "input": [
    {"role": "user", "content": "plain"},
    {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "part"},
      {"type": "input_image", "image_url": "u"}]},
    {"type": "function_call", "call_id": "c1", "name": "ls", "arguments": "{\"d\":\"args\"}"},
    {"type": "function_call_output", "call_id": "c1", "output": "tool said hi"},
    {"type": "other", "output": "not a tool result"}]})");
  EXPECT_THAT(fake_llm::RequestTexts(request),
              ElementsAre("You grade.", "plain", "part", "tool said hi"));
  EXPECT_THAT(fake_llm::RequestTexts(Json::parse(R"({"instructions": ["x"], "input": "s"})")),
              ElementsAre("s"));
}

TEST_F(FakeLlmResponsesTest, RoutesMatchInstructionsAndToolOutputs) {
  FakeRoute grader;
  grader.name = "grader";
  grader.contains = {"You grade."};
  FakeResponse pass;
  pass.text = "PASS";
  grader.responses = {pass};
  FakeRoute after_tool;
  after_tool.name = "after_tool";
  after_tool.contains = {"tool said hi"};
  FakeResponse done;
  done.text = "done";
  after_tool.responses = {done};
  server_->AddRoute(grader);
  server_->AddRoute(after_tool);
  Json graded = PostJson(kResponses, R"({"instructions": "You grade.", "input": "diff"})");
  EXPECT_EQ(graded["output"][0]["content"][0]["text"], "PASS");
  Json continued = PostJson(kResponses, R"({"input": [
    {"type": "function_call_output", "call_id": "c1", "output": "tool said hi"}]})");
  EXPECT_EQ(continued["output"][0]["content"][0]["text"], "done");
  EXPECT_EQ(server_->RouteHits("grader"), 1);
  EXPECT_EQ(server_->RouteHits("after_tool"), 1);
}

}  // namespace
}  // namespace mend::testing
