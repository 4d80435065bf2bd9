#include "proxy/conversation.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>

#include "tests/support/status_matchers.h"

namespace mend::proxy {
namespace {

using ::mend::testing::StatusIs;
using ::testing::HasSubstr;
using Json = nlohmann::json;

RequestView Read(ApiShape shape, const std::string& body) {
  Result<RequestView> view = ReadRequest(shape, Json::parse(body));
  EXPECT_TRUE(view.ok()) << view.status().ToString();
  return view.ok() ? *view : RequestView();
}

// A chat history where `tool` was called with `args` and answered `result`, `times` times.
std::string ChatHistory(const std::string& tool, const std::string& args, const std::string& result,
                        int times, const std::string& tail = "") {
  Json messages = Json::array({{{"role", "system"}, {"content", "You fix things."}},
                               {{"role", "user"}, {"content", "Fix the build"}}});
  for (int i = 0; i < times; ++i) {
    const std::string id = "call_" + std::to_string(i);
    messages.push_back({{"role", "assistant"},
                        {"content", nullptr},
                        {"tool_calls",
                         {{{"id", id},
                           {"type", "function"},
                           {"function", {{"name", tool}, {"arguments", args}}}}}}});
    messages.push_back({{"role", "tool"}, {"tool_call_id", id}, {"content", result}});
  }
  Json body = {{"model", "gpt-4o"}, {"messages", messages}};
  std::string text = body.dump();
  if (!tail.empty()) {
    Json with = Json::parse(text);
    with["messages"].push_back(Json::parse(tail));
    text = with.dump();
  }
  return text;
}

TEST(ReadRequestTest, ChatTaskSystemAndExchanges) {
  RequestView view = Read(ApiShape::kChatCompletions,
                          ChatHistory("read_file", "{\"path\": \"/x\"}", "Error: no such file", 2));
  EXPECT_EQ(view.model, "gpt-4o");
  EXPECT_EQ(view.system_text, "You fix things.");
  EXPECT_EQ(view.first_user_text, "Fix the build");
  ASSERT_EQ(view.exchanges.size(), 2u);
  EXPECT_EQ(view.exchanges[0].tool, "read_file");
  EXPECT_EQ(view.exchanges[0].arguments, "{\"path\":\"/x\"}");  // canonical
  EXPECT_TRUE(view.exchanges[0].has_result);
  EXPECT_EQ(view.exchanges[1].result, "Error: no such file");
  EXPECT_TRUE(view.ends_with_tool_results);
}

TEST(ReadRequestTest, MessagesToolUseAndIsError) {
  RequestView view = Read(ApiShape::kMessages, R"({
    "model":"claude","system":[{"type":"text","text":"Sys"}],
    "messages":[
      {"role":"user","content":[{"type":"text","text":"Find it"}]},
      {"role":"assistant","content":[{"type":"tool_use","id":"t1","name":"grep","input":{"b":1,"a":2}}]},
      {"role":"user","content":[{"type":"tool_result","tool_use_id":"t1","is_error":true,
                                 "content":[{"type":"text","text":"boom"}]}]}]})");
  EXPECT_EQ(view.system_text, "Sys");
  EXPECT_EQ(view.first_user_text, "Find it");
  ASSERT_EQ(view.exchanges.size(), 1u);
  EXPECT_EQ(view.exchanges[0].arguments, "{\"a\":2,\"b\":1}");
  EXPECT_EQ(view.exchanges[0].result, "boom");
  EXPECT_TRUE(view.exchanges[0].flagged_error);
  EXPECT_TRUE(view.ends_with_tool_results);
}

TEST(ReadRequestTest, ResponsesItems) {
  RequestView view = Read(ApiShape::kResponses, R"({
    "model":"gpt","instructions":"Ins","input":[
      {"role":"user","content":"Add"},
      {"type":"function_call","call_id":"f1","name":"add","arguments":"{\"x\":1}"},
      {"type":"function_call_output","call_id":"f1","output":"{\"error\":\"bad x\"}"}]})");
  EXPECT_EQ(view.system_text, "Ins");
  EXPECT_EQ(view.first_user_text, "Add");
  ASSERT_EQ(view.exchanges.size(), 1u);
  EXPECT_EQ(view.exchanges[0].result, "{\"error\":\"bad x\"}");
  EXPECT_TRUE(view.ends_with_tool_results);
  EXPECT_EQ(Read(ApiShape::kResponses, R"({"input":"just text"})").first_user_text, "just text");
}

TEST(ReadRequestTest, BadRequestsSayWhat) {
  EXPECT_THAT(ReadRequest(ApiShape::kChatCompletions, Json::parse(R"({"model":"m"})")),
              StatusIs(StatusCode::kInvalidArgument, HasSubstr("'messages' is a required")));
  EXPECT_THAT(ReadRequest(ApiShape::kChatCompletions, Json::parse(R"({"messages":[1]})")),
              StatusIs(StatusCode::kInvalidArgument, HasSubstr("messages[0]")));
  EXPECT_THAT(ReadRequest(ApiShape::kMessages, Json::parse(R"({"messages":[],"system":3})")),
              StatusIs(StatusCode::kInvalidArgument, HasSubstr("system")));
  EXPECT_THAT(ReadRequest(ApiShape::kResponses, Json::parse(R"({"model":"m"})")),
              StatusIs(StatusCode::kInvalidArgument, HasSubstr("'input' is a required")));
  EXPECT_THAT(
      ReadRequest(ApiShape::kChatCompletions, Json::parse(R"({"messages":[],"stream":"yes"})")),
      StatusIs(StatusCode::kInvalidArgument, HasSubstr("'stream'")));
}

ToolExchange WithResult(const std::string& text, bool flagged = false) {
  ToolExchange e;
  e.tool = "t";
  e.has_result = true;
  e.result = text;
  e.flagged_error = flagged;
  return e;
}

TEST(FailureRulesTest, BuiltInRules) {
  Result<FailureRules> rules = FailureRules::Create({});
  ASSERT_TRUE(rules.ok());
  for (const char* failed :
       {"Error: file not found", "error: cannot open", "Traceback (most recent call last):\n  x",
        "{\"error\": \"bad path\"}", "{\"isError\": true, \"content\": []}", "{\"ok\": false}",
        "{\"exit_code\": 2, \"stdout\": \"\"}", "bash: foo: command not found",
        "cat: /x: No such file or directory", "the command failed with exit code 127",
        "fatal: not a git repository", "Permission denied"}) {
    EXPECT_TRUE(rules->Classify(WithResult(failed)).has_value()) << failed;
  }
  for (const char* fine :
       {"42", "{\"error\": null, \"value\": 1}", "{\"ok\": true}", "{\"exit_code\": 0}",
        "All 3 tests passed", "no errors found", "exit code 0", ""}) {
    EXPECT_FALSE(rules->Classify(WithResult(fine)).has_value()) << fine;
  }
  EXPECT_TRUE(rules->Classify(WithResult("looks fine", /*flagged=*/true)).has_value());
  ToolExchange pending;
  pending.tool = "t";
  EXPECT_FALSE(rules->Classify(pending).has_value());
}

TEST(FailureRulesTest, PatternsAddFailuresAndBadOnesAreRefused) {
  Result<FailureRules> rules = FailureRules::Create({"HTTP 5\\d\\d"});
  ASSERT_TRUE(rules.ok());
  EXPECT_TRUE(rules->Classify(WithResult("upstream said HTTP 503")).has_value());
  EXPECT_FALSE(rules->Classify(WithResult("upstream said HTTP 200")).has_value());
  EXPECT_THAT(FailureRules::Create({"(a"}),
              StatusIs(StatusCode::kInvalidArgument, HasSubstr("proxy.failure_patterns")));
}

TEST(FailureRulesTest, TheErrorIsCutAtAUtf8Boundary) {
  Result<FailureRules> rules = FailureRules::Create({});
  std::optional<std::string> error =
      rules->Classify(WithResult("Error: " + std::string(3000, 'x')));
  ASSERT_TRUE(error.has_value());
  EXPECT_EQ(error->size(), 2000u);
}

class ConversationTest : public ::testing::Test {
 protected:
  Time t0_ = Time(std::chrono::hours(24 * 365 * 50));
  FailureRules rules_ = *FailureRules::Create({});
  Conversation conversation_ = [] {
    Conversation c;
    c.id = "c1";
    c.task = "Fix the build";
    return c;
  }();
};

TEST_F(ConversationTest, RepeatsCountFromTheHistoryNotAcrossRequests) {
  const RequestView twice =
      Read(ApiShape::kChatCompletions, ChatHistory("read_file", "{\"p\":1}", "Error: missing", 2));
  ProgressView progress = ObserveRequest(conversation_, twice, rules_, t0_);
  EXPECT_EQ(progress.repeats, 2);
  EXPECT_EQ(progress.tool, "read_file");
  // The same history again (a retried request) is still two, not four.
  progress = ObserveRequest(conversation_, twice, rules_, t0_);
  EXPECT_EQ(progress.repeats, 2);
  ASSERT_EQ(conversation_.failures.size(), 1u);
  EXPECT_EQ(conversation_.failures[0].count, 2);
}

TEST_F(ConversationTest, ALaterSuccessOfTheSameToolResolvesAndMakesALesson) {
  std::string body = ChatHistory("read_file", "{\"p\":1}", "Error: missing", 1);
  Json j = Json::parse(body);
  j["messages"].push_back(
      {{"role", "assistant"},
       {"tool_calls",
        {{{"id", "ok1"},
          {"type", "function"},
          {"function", {{"name", "read_file"}, {"arguments", "{\"p\":2}"}}}}}}});
  j["messages"].push_back({{"role", "tool"}, {"tool_call_id", "ok1"}, {"content", "contents"}});
  ProgressView progress =
      ObserveRequest(conversation_, Read(ApiShape::kChatCompletions, j.dump()), rules_, t0_);
  EXPECT_EQ(progress.repeats, 0);  // resolved: no hint
  std::vector<lessonq::LessonRequest> lessons =
      TakeDueLessons(conversation_, t0_, std::chrono::minutes(10));
  ASSERT_EQ(lessons.size(), 1u);
  EXPECT_EQ(lessons[0].trigger, "error");
  EXPECT_EQ(lessons[0].task, "Fix the build");
  EXPECT_EQ(lessons[0].attempt, "called read_file with {\"p\":1}");
  EXPECT_EQ(lessons[0].outcome,
            "Error: missing\nWhat worked: a later call of read_file with arguments {\"p\":2} "
            "succeeded");
  // Never twice.
  EXPECT_TRUE(TakeDueLessons(conversation_, t0_, std::chrono::minutes(10)).empty());
}

TEST_F(ConversationTest, AFinalAnswerResolvesAndUnresolvedOnesWaitLessonAfter) {
  ObserveRequest(conversation_,
                 Read(ApiShape::kChatCompletions, ChatHistory("build", "{}", "Error: cc1", 1)),
                 rules_, t0_);
  EXPECT_TRUE(TakeDueLessons(conversation_, t0_ + std::chrono::minutes(9), std::chrono::minutes(10))
                  .empty());
  std::vector<lessonq::LessonRequest> late =
      TakeDueLessons(conversation_, t0_ + std::chrono::minutes(10), std::chrono::minutes(10));
  ASSERT_EQ(late.size(), 1u);
  EXPECT_THAT(late[0].outcome, HasSubstr("What worked: nothing worked within 10m"));

  Conversation other = conversation_;
  other.failures.clear();
  ObserveRequest(other,
                 Read(ApiShape::kChatCompletions, ChatHistory("build", "{}", "Error: cc1", 1)),
                 rules_, t0_);
  ObserveReply(other, "", /*has_tool_calls=*/true);
  EXPECT_TRUE(TakeDueLessons(other, t0_, std::chrono::minutes(10)).empty());
  ObserveReply(other, "I fixed it by installing gcc.", /*has_tool_calls=*/false);
  std::vector<lessonq::LessonRequest> done = TakeDueLessons(other, t0_, std::chrono::minutes(10));
  ASSERT_EQ(done.size(), 1u);
  EXPECT_THAT(done[0].outcome,
              HasSubstr("the conversation ended with the answer: I fixed it by installing gcc."));
}

TEST_F(ConversationTest, DistinctFailuresAreDistinctLessons) {
  Json j = Json::parse(ChatHistory("build", "{}", "Error: cc1", 1));
  j["messages"].push_back({{"role", "assistant"},
                           {"tool_calls",
                            {{{"id", "x"},
                              {"type", "function"},
                              {"function", {{"name", "test"}, {"arguments", "{}"}}}}}}});
  j["messages"].push_back({{"role", "tool"}, {"tool_call_id", "x"}, {"content", "FAILED: 2"}});
  ObserveRequest(conversation_, Read(ApiShape::kChatCompletions, j.dump()), rules_, t0_);
  ObserveReply(conversation_, "Done.", false);
  EXPECT_EQ(TakeDueLessons(conversation_, t0_, std::chrono::minutes(10)).size(), 2u);
}

TEST(ConversationIdTest, ScopedByWorkspaceAndStable) {
  EXPECT_EQ(ConversationIdFor("w", "s", "u"), ConversationIdFor("w", "s", "u"));
  EXPECT_NE(ConversationIdFor("w", "s", "u"), ConversationIdFor("v", "s", "u"));
  EXPECT_NE(ConversationIdFor("w", "s", "u"), ConversationIdFor("w", "su", ""));
  EXPECT_NE(SessionConversationId("w", "abc"), SessionConversationId("v", "abc"));
  EXPECT_EQ(SessionConversationId("w", "abc").size(), 32u);
}

TEST(ProgressTextTest, HintAndStopNameTheToolAndError) {
  ProgressView p{3, "read_file", "Error: missing"};
  EXPECT_THAT(ProgressHint(p), HasSubstr("`read_file` has failed 3 times"));
  EXPECT_THAT(NoProgressMessage(p), HasSubstr("not making progress"));
  EXPECT_THAT(NoProgressMessage(p), HasSubstr("Error: missing"));
}

}  // namespace
}  // namespace mend::proxy
