#include "tests/support/fake_llm_routes.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <httplib.h>

#include <map>
#include <mutex>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "tests/support/fake_llm_server.h"
#include "tests/support/fake_llm_test_client.h"

namespace mend::testing {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::Not;
using Json = nlohmann::json;

// An instruction with the characters JSON escapes: quotes, a backslash, a newline and a tab.
constexpr char kReviewer[] = "You review code.\nAnswer \"PASS\" or \"FAIL\" (C:\\src)\tonly.";

FakeResponse Text(std::string text) {
  FakeResponse r;
  r.text = std::move(text);
  return r;
}

FakeRoute Route(std::string name, std::vector<std::string> contains,
                std::vector<FakeResponse> responses) {
  FakeRoute route;
  route.name = std::move(name);
  route.contains = std::move(contains);
  route.responses = std::move(responses);
  return route;
}

// A chat completion request with `system` as the system prompt and `user` as the question.
std::string Chat(const std::string& system, const std::string& user) {
  Json messages = Json::array();
  if (!system.empty()) messages.push_back({{"role", "system"}, {"content", system}});
  messages.push_back({{"role", "user"}, {"content", user}});
  return Json({{"model", "m"}, {"messages", messages}}).dump();
}

TEST(RequestTextsTest, CollectsSystemMessageContentPartsBlocksAndInputs) {
  Json openai = Json::parse(R"({"model":"m","messages":[
    {"role":"system","content":"sys"},
    {"role":"user","content":[{"type":"text","text":"part"},{"type":"image_url","image_url":{"url":"u"}}]},
    {"role":"assistant","content":null,"tool_calls":[{"id":"c1","type":"function",
      "function":{"name":"read_file","arguments":"{\"path\":\"args\"}"}}]},
    {"role":"tool","tool_call_id":"c1","content":"tool output"}]})");
  EXPECT_THAT(fake_llm::RequestTexts(openai), ElementsAre("sys", "part", "tool output"));

  Json anthropic = Json::parse(R"({"model":"c","system":[{"type":"text","text":"block sys"}],
    "messages":[{"role":"user","content":"hi"},
      {"role":"assistant","content":[{"type":"tool_use","id":"t1","name":"ls","input":{"d":"x"}}]},
      {"role":"user","content":[{"type":"tool_result","tool_use_id":"t1",
        "content":[{"type":"text","text":"listing"}]}]}]})");
  EXPECT_THAT(fake_llm::RequestTexts(anthropic), ElementsAre("block sys", "hi", "listing"));

  EXPECT_THAT(fake_llm::RequestTexts(Json::parse(R"({"system":"s","input":["a","b"]})")),
              ElementsAre("s", "a", "b"));
  EXPECT_THAT(fake_llm::RequestTexts(Json::parse(R"({"input":[1,2],"messages":"x"})")),
              ElementsAre("x"));
}

TEST(RouteMatchesTest, EveryStringMustOccurInOneText) {
  const std::vector<std::string> texts = {"alpha beta", "gamma"};
  EXPECT_TRUE(fake_llm::RouteMatches({}, texts));
  EXPECT_TRUE(fake_llm::RouteMatches({"beta"}, texts));
  EXPECT_TRUE(fake_llm::RouteMatches({"alpha", "gamma"}, texts));
  EXPECT_FALSE(fake_llm::RouteMatches({"alpha", "delta"}, texts));
  EXPECT_FALSE(fake_llm::RouteMatches({"beta\ngamma"}, texts));  // never across two texts
  EXPECT_FALSE(fake_llm::RouteMatches({"Alpha"}, texts));        // case-sensitive
  EXPECT_FALSE(fake_llm::RouteMatches({"x"}, {}));
}

class FakeLlmRoutesTest : public FakeLlmServerFixture {
 protected:
  std::string ChatText(const std::string& system, const std::string& user = "go") {
    return PostJson("/v1/chat/completions", Chat(system, user))["choices"][0]["message"]["content"];
  }
};

TEST_F(FakeLlmRoutesTest, FirstMatchingRouteInOrderAddedAnswers) {
  server_->AddRoute(Route("specific", {"reviewer", "strict"}, {Text("from specific")}));
  server_->AddRoute(Route("broad", {"reviewer"}, {Text("from broad")}));
  server_->AddRoute(Route("late", {"strict"}, {Text("from late")}));
  EXPECT_EQ(ChatText("you are a strict reviewer"), "from specific");
  EXPECT_EQ(ChatText("you are a lenient reviewer"), "from broad");
  EXPECT_EQ(ChatText("be strict"), "from late");
  // The strings may sit in different texts: here the system prompt and the user message.
  EXPECT_EQ(ChatText("you are a reviewer", "be strict"), "from specific");
  EXPECT_EQ(server_->RouteHits("specific"), 2);
  EXPECT_EQ(server_->RouteHits("broad"), 1);
  EXPECT_EQ(server_->RouteHits("late"), 1);
  EXPECT_EQ(server_->RouteHits("absent"), 0);
}

TEST_F(FakeLlmRoutesTest, CyclingRouteWrapsAround) {
  server_->AddRoute(Route("noisy", {"grade"}, {Text("pass"), Text("fail")}));
  std::vector<std::string> answers;
  for (int i = 0; i < 5; ++i) answers.push_back(ChatText("grade this"));
  EXPECT_THAT(answers, ElementsAre("pass", "fail", "pass", "fail", "pass"));
}

TEST_F(FakeLlmRoutesTest, RepeatLastRouteKeepsItsLastResponse) {
  FakeRoute route = Route("settles", {"grade"}, {Text("first"), Text("second")});
  route.after_last = FakeRoute::AfterLast::kRepeatLast;
  server_->AddRoute(route);
  std::vector<std::string> answers;
  for (int i = 0; i < 4; ++i) answers.push_back(ChatText("grade this"));
  EXPECT_THAT(answers, ElementsAre("first", "second", "second", "second"));
}

TEST_F(FakeLlmRoutesTest, UnmatchedRequestsFallBackToTheScriptThenTheDefault) {
  server_->AddRoute(Route("grader", {"grade"}, {Text("routed")}));
  server_->Enqueue(Text("scripted"));
  server_->SetDefault(Text("default"));
  // Routed requests leave the script alone.
  EXPECT_EQ(ChatText("grade this"), "routed");
  EXPECT_EQ(ChatText("something else"), "scripted");
  EXPECT_EQ(ChatText("grade this"), "routed");
  EXPECT_EQ(ChatText("something else"), "default");
  EXPECT_EQ(PostJson("/v1/chat/completions", "{}")["choices"][0]["message"]["content"], "default");
}

TEST_F(FakeLlmRoutesTest, RouteWithoutResponsesAnswersTheDefaultAndKeepsTheScript) {
  server_->AddRoute(Route("aside", {"aside"}, {}));
  server_->Enqueue(Text("scripted"));
  server_->SetDefault(Text("default"));
  EXPECT_EQ(ChatText("an aside"), "default");
  EXPECT_EQ(server_->RouteHits("aside"), 1);
  EXPECT_EQ(ChatText("main"), "scripted");
}

TEST_F(FakeLlmRoutesTest, EmptyContainsMatchesEveryRequest) {
  server_->AddRoute(Route("all", {}, {Text("caught")}));
  server_->Enqueue(Text("scripted"));
  EXPECT_EQ(ChatText("anything"), "caught");
  EXPECT_EQ(PostJson("/v1/chat/completions", "{}")["choices"][0]["message"]["content"], "caught");
}

TEST_F(FakeLlmRoutesTest, InstructionWithQuotesAndNewlinesMatchesAsWritten) {
  server_->AddRoute(Route("reviewer", {kReviewer}, {Text("PASS")}));
  const std::string body = Chat(std::string("Preamble.\n") + kReviewer + "\nMore.", "review");
  // The body carries the instruction escaped; only the decoded text contains it verbatim.
  ASSERT_THAT(body, Not(HasSubstr(kReviewer)));
  EXPECT_EQ(PostJson("/v1/chat/completions", body)["choices"][0]["message"]["content"], "PASS");
  // Without the newline the instruction is different text and does not match.
  std::string flattened = kReviewer;
  flattened[flattened.find('\n')] = ' ';
  EXPECT_EQ(ChatText(flattened), "ok");
}

TEST_F(FakeLlmRoutesTest, AnthropicMessagesAreRoutedOnSystemBlocksAndToolResults) {
  server_->AddRoute(Route("sys", {kReviewer}, {Text("by system")}));
  server_->AddRoute(Route("result", {"listing of src"}, {Text("by tool result")}));
  Json system_blocks = {{"model", "c"},
                        {"max_tokens", 10},
                        {"system", {{{"type", "text"}, {"text", kReviewer}}}},
                        {"messages", {{{"role", "user"}, {"content", "go"}}}}};
  EXPECT_EQ(PostJson("/v1/messages", system_blocks.dump())["content"][0]["text"], "by system");
  Json tool_result = Json::parse(R"({"model":"c","max_tokens":10,"messages":[
    {"role":"user","content":[{"type":"tool_result","tool_use_id":"t1",
      "content":"listing of src: a b"}]}]})");
  EXPECT_EQ(PostJson("/v1/messages", tool_result.dump())["content"][0]["text"], "by tool result");
}

TEST_F(FakeLlmRoutesTest, ToolCallsAndErrorsWorkThroughRoutes) {
  FakeResponse call;
  call.tool_calls = {{"c1", "read_file", R"({"path":"a"})"}};
  FakeResponse limited;
  limited.status = 429;
  limited.retry_after_seconds = 2;
  server_->AddRoute(Route("agent", {"use tools"}, {call, limited}));
  Json chat = PostJson("/v1/chat/completions", Chat("use tools", "read a"));
  const Json& message = chat["choices"][0]["message"];
  ASSERT_EQ(message["tool_calls"].size(), 1u);
  EXPECT_EQ(message["tool_calls"][0]["function"]["name"], "read_file");
  EXPECT_EQ(chat["choices"][0]["finish_reason"], "tool_calls");
  auto res = Post("/v1/chat/completions", Chat("use tools", "again"));
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 429);
  EXPECT_EQ(res->get_header_value("Retry-After"), "2");
  Json messages = PostJson(
      "/v1/messages",
      R"({"model":"c","max_tokens":10,"system":"use tools","messages":[{"role":"user","content":"x"}]})");
  EXPECT_EQ(
      messages["content"][0],
      Json(
          {{"type", "tool_use"}, {"id", "c1"}, {"name", "read_file"}, {"input", {{"path", "a"}}}}));
  EXPECT_EQ(messages["stop_reason"], "tool_use");
}

// The text of a streamed answer: the concatenated content deltas of a chat completion stream or
// the text_delta pieces of a messages stream.
std::string StreamedText(const std::string& body) {
  std::string text;
  std::istringstream lines(body);
  for (std::string line; std::getline(lines, line);) {
    if (line.rfind("data: {", 0) != 0) continue;
    Json event = Json::parse(line.substr(6));
    if (event.contains("choices") && !event["choices"].empty() &&
        event["choices"][0]["delta"].contains("content")) {
      text += event["choices"][0]["delta"]["content"].get<std::string>();
    }
    if (event.value("type", "") == "content_block_delta" && event["delta"].contains("text")) {
      text += event["delta"]["text"].get<std::string>();
    }
  }
  return text;
}

TEST_F(FakeLlmRoutesTest, RoutedAnswersStream) {
  server_->AddRoute(Route("streamer", {"stream me"}, {Text("a routed stream in pieces")}));
  Json chat = Json::parse(Chat("stream me", "go"));
  chat["stream"] = true;
  auto res = Post("/v1/chat/completions", chat.dump());
  ASSERT_TRUE(res);
  EXPECT_EQ(res->get_header_value("Content-Type"), "text/event-stream");
  EXPECT_THAT(res->body, HasSubstr("data: [DONE]"));
  EXPECT_EQ(StreamedText(res->body), "a routed stream in pieces");
  auto messages =
      Post("/v1/messages", R"({"model":"c","stream":true,"system":"stream me","messages":[]})");
  ASSERT_TRUE(messages);
  EXPECT_THAT(messages->body, HasSubstr("event: message_stop"));
  EXPECT_EQ(StreamedText(messages->body), "a routed stream in pieces");
  EXPECT_EQ(server_->RouteHits("streamer"), 2);
}

TEST_F(FakeLlmRoutesTest, RoutedRequestsAreRecordedAndObserved) {
  int observed = 0;
  std::mutex mu;
  server_->SetRequestObserver([&](const RecordedRequest&) {
    std::lock_guard<std::mutex> lock(mu);
    ++observed;
  });
  server_->AddRoute(Route("r", {"grade"}, {Text("routed")}));
  const std::string body = Chat("grade", "x");
  EXPECT_EQ(PostJson("/v1/chat/completions", body)["choices"][0]["message"]["content"], "routed");
  std::vector<RecordedRequest> requests = server_->requests();
  ASSERT_EQ(requests.size(), 1u);
  EXPECT_EQ(requests[0].body, body);
  EXPECT_EQ(observed, 1);
}

TEST_F(FakeLlmRoutesTest, ClearRoutesFallsBackAndForgetsHits) {
  server_->AddRoute(Route("r", {"grade"}, {Text("routed")}));
  EXPECT_EQ(ChatText("grade"), "routed");
  server_->ClearRoutes();
  EXPECT_EQ(server_->RouteHits("r"), 0);
  EXPECT_EQ(ChatText("grade"), "ok");
  server_->AddRoute(Route("r", {"grade"}, {Text("again"), Text("later")}));
  EXPECT_EQ(ChatText("grade"), "again");  // a new route starts at its first response
}

TEST_F(FakeLlmRoutesTest, ConcurrentRequestsGetEachCycledResponseExactlyAsOften) {
  constexpr int kThreads = 8;
  constexpr int kRequestsPerThread = 50;
  server_->AddRoute(Route("noisy", {kReviewer}, {Text("pass"), Text("fail")}));
  server_->Enqueue(Text("scripted"));
  const std::string body = Chat(kReviewer, "review");
  std::mutex mu;
  std::map<std::string, int> counts;
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&] {
      httplib::Client client(server_->base_url());
      client.set_keep_alive(true);
      for (int i = 0; i < kRequestsPerThread; ++i) {
        auto res = client.Post("/v1/chat/completions", body, "application/json");
        std::string answer = "<no answer>";
        if (res && res->status == 200) {
          answer = Json::parse(res->body)["choices"][0]["message"]["content"];
        }
        std::lock_guard<std::mutex> lock(mu);
        ++counts[answer];
      }
    });
  }
  for (std::thread& thread : threads) thread.join();
  EXPECT_EQ(counts, (std::map<std::string, int>{{"fail", 200}, {"pass", 200}}));
  EXPECT_EQ(server_->RouteHits("noisy"), kThreads * kRequestsPerThread);
  EXPECT_EQ(ChatText("unrouted"), "scripted");
}

}  // namespace
}  // namespace mend::testing
