// Failing tool calls in a conversation become lesson jobs; a repeated failing call gets the
// progress hint, and proxy.stop_after answers in the API's words.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "tests/proxy/proxy_fixture.h"

namespace mend::proxy {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;
using Json = nlohmann::json;

// A chat request whose history has `times` calls of read_config({"path":"/etc/app.conf"}) that
// failed, optionally followed by one that succeeded.
std::string History(int times, bool then_success = false) {
  Json messages = Json::array({{{"role", "system"}, {"content", "You configure apps."}},
                               {{"role", "user"}, {"content", "Start the app"}}});
  auto call = [&](const std::string& id, const std::string& args, const std::string& result) {
    messages.push_back({{"role", "assistant"},
                        {"content", nullptr},
                        {"tool_calls",
                         {{{"id", id},
                           {"type", "function"},
                           {"function", {{"name", "read_config"}, {"arguments", args}}}}}}});
    messages.push_back({{"role", "tool"}, {"tool_call_id", id}, {"content", result}});
  };
  for (int i = 0; i < times; ++i) {
    call("c" + std::to_string(i), R"({"path":"/etc/app.conf"})",
         "Error: no such file /etc/app.conf");
  }
  if (then_success) call("ok", R"({"path":"/srv/app/app.conf"})", "port = 8080");
  return Json({{"model", "gpt-4o"}, {"messages", messages}}).dump();
}

// The model keeps calling tools: no reply is a final answer.
testing::FakeResponse ToolCallReply() {
  testing::FakeResponse r;
  r.tool_calls = {{"c9", "read_config", R"({"path":"/x"})"}};
  return r;
}

TEST_F(ProxyTest, AFailureAndWhatWorkedBecomeOneLessonJob) {
  Start();
  upstream_->SetDefault(ToolCallReply());
  Post("/v1/chat/completions", History(1),
       {{"traceparent", "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"}});
  EXPECT_TRUE(lessons_.requests().empty());
  Post("/v1/chat/completions", History(1, /*then_success=*/true));
  std::vector<lessonq::LessonRequest> jobs = lessons_.requests();
  ASSERT_EQ(jobs.size(), 1u);
  EXPECT_EQ(jobs[0].trigger, "error");
  EXPECT_EQ(jobs[0].task, "Start the app");
  EXPECT_EQ(jobs[0].attempt, R"(called read_config with {"path":"/etc/app.conf"})");
  EXPECT_EQ(jobs[0].outcome,
            "Error: no such file /etc/app.conf\nWhat worked: a later call of read_config with "
            R"(arguments {"path":"/srv/app/app.conf"} succeeded)");
  EXPECT_EQ(jobs[0].provider, "openai");
  EXPECT_EQ(jobs[0].model, "gpt-4o-mini");
  // The same history again enqueues nothing more.
  Post("/v1/chat/completions", History(1, true));
  EXPECT_EQ(lessons_.requests().size(), 1u);
  EXPECT_EQ(Metric("mend_proxy_lessons_enqueued_total"), 1);
}

TEST_F(ProxyTest, AFinalAnswerResolvesTheFailure) {
  Start();
  testing::FakeResponse answer;
  answer.text = "The config lives in /srv/app; the app is up.";
  upstream_->Enqueue(answer);
  Post("/v1/chat/completions", History(1));
  std::vector<lessonq::LessonRequest> jobs = lessons_.requests();
  ASSERT_EQ(jobs.size(), 1u);
  EXPECT_THAT(jobs[0].outcome,
              HasSubstr("What worked: the conversation ended with the answer: The config lives in "
                        "/srv/app; the app is up."));
}

TEST_F(ProxyTest, AToolCallReplyDoesNotResolve) {
  Start();
  testing::FakeResponse again;
  again.tool_calls = {{"c9", "read_config", R"({"path":"/etc/app.conf"})"}};
  upstream_->Enqueue(again);
  Post("/v1/chat/completions", History(1));
  EXPECT_TRUE(lessons_.requests().empty());
}

TEST_F(ProxyTest, AnUnresolvedFailureBecomesALessonAfterLessonAfter) {
  options_.lesson_after = std::chrono::minutes(10);
  Start();
  testing::FakeResponse again;
  again.tool_calls = {{"c9", "read_config", "{}"}};
  upstream_->Enqueue(again);
  Post("/v1/chat/completions", History(1));
  MEND_EXPECT_OK(service_->Sweep());
  EXPECT_TRUE(lessons_.requests().empty());
  clock_.Advance(std::chrono::minutes(10));
  MEND_EXPECT_OK(service_->Sweep());
  std::vector<lessonq::LessonRequest> jobs = lessons_.requests();
  ASSERT_EQ(jobs.size(), 1u);
  EXPECT_THAT(jobs[0].outcome, HasSubstr("What worked: nothing worked within 10m"));
  MEND_EXPECT_OK(service_->Sweep());
  EXPECT_EQ(lessons_.requests().size(), 1u);
}

TEST_F(ProxyTest, LessonsKeepTheClientsScope) {
  options_.tokens = {ClientToken{"tok-a", "team-a"}};
  Start();
  upstream_->SetDefault(ToolCallReply());
  Post("/v1/chat/completions", History(1, true), {{"Authorization", "Bearer tok-a"}});
  ASSERT_EQ(lessons_.requests().size(), 1u);
  EXPECT_EQ(lessons_.requests()[0].workspace, "team-a");
}

TEST_F(ProxyTest, TheSameFailingCallGetsTheProgressHint) {
  options_.hint_after = 2;
  Start();
  upstream_->SetDefault(ToolCallReply());
  Post("/v1/chat/completions", History(1), {{"X-Mend-Memory", "off"}});
  EXPECT_THAT(LastUpstreamBody()["messages"][0]["content"].get<std::string>(),
              Not(HasSubstr("## Progress")));
  Post("/v1/chat/completions", History(2), {{"X-Mend-Memory", "off"}});
  const std::string system = LastUpstreamBody()["messages"][0]["content"];
  EXPECT_THAT(system, HasSubstr("You configure apps.\n\n## Progress\nThe tool `read_config` has "
                                "failed 2 times"));
  EXPECT_THAT(system, HasSubstr("Error: no such file /etc/app.conf"));
  // Resolved: no hint any more.
  Post("/v1/chat/completions", History(2, true), {{"X-Mend-Memory", "off"}});
  EXPECT_THAT(LastUpstreamBody()["messages"][0]["content"].get<std::string>(),
              Not(HasSubstr("## Progress")));
}

TEST_F(ProxyTest, TheHintComesAfterTheMemorySection) {
  options_.hint_after = 2;
  Start();
  upstream_->SetDefault(ToolCallReply());
  Post("/v1/chat/completions", History(2));
  EXPECT_THAT(LastUpstreamBody()["messages"][0]["content"].get<std::string>(),
              HasSubstr("You configure apps.\n\n## Long-term Memory\n- fact 1\n\n## Progress"));
}

TEST_F(ProxyTest, StopAfterAnswersThatTheAgentMadeNoProgress) {
  options_.stop_after = 3;
  Start();
  Reply reply = Post("/v1/chat/completions", History(3));
  ASSERT_EQ(reply.status, 200);
  EXPECT_EQ(reply.Header("X-Mend-No-Progress"), "true");
  const Json body = reply.Json();
  EXPECT_EQ(body["object"], "chat.completion");
  EXPECT_EQ(body["choices"][0]["finish_reason"], "stop");
  EXPECT_THAT(body["choices"][0]["message"]["content"].get<std::string>(),
              HasSubstr("not making progress"));
  EXPECT_EQ(upstream_->request_count(), 0u);
}

TEST_F(ProxyTest, StopAfterStreamsWhenTheClientStreams) {
  options_.stop_after = 2;
  Start();
  Json request = Json::parse(History(2));
  request["stream"] = true;
  request["stream_options"] = {{"include_usage", true}};
  Reply reply = Post("/v1/chat/completions", request.dump());
  ASSERT_EQ(reply.status, 200);
  EXPECT_EQ(reply.Header("Content-Type"), "text/event-stream");
  EXPECT_THAT(reply.body, HasSubstr("\"role\":\"assistant\""));
  EXPECT_THAT(reply.body, HasSubstr("\"finish_reason\":\"stop\""));
  EXPECT_THAT(reply.body, HasSubstr("\"choices\":[],"));
  EXPECT_TRUE(reply.body.ends_with("data: [DONE]\n\n"));
}

TEST_F(ProxyTest, AnthropicIsErrorBlocksAreFailures) {
  options_.upstream_kind = UpstreamKind::kAnthropic;
  Start();
  const std::string body = R"({"model":"claude","max_tokens":9,"messages":[
    {"role":"user","content":"Deploy"},
    {"role":"assistant","content":[{"type":"tool_use","id":"t1","name":"deploy","input":{"env":"prod"}}]},
    {"role":"user","content":[{"type":"tool_result","tool_use_id":"t1","is_error":true,"content":"quota"}]}]})";
  Post("/v1/messages", body);  // the fake answers with text: the conversation's final answer
  std::vector<lessonq::LessonRequest> jobs = lessons_.requests();
  ASSERT_EQ(jobs.size(), 1u);
  EXPECT_EQ(jobs[0].attempt, R"(called deploy with {"env":"prod"})");
  EXPECT_THAT(jobs[0].outcome, HasSubstr("quota\nWhat worked: the conversation ended"));
}

}  // namespace
}  // namespace mend::proxy
