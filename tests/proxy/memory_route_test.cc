// The memory section on the proxy's model routes: where it goes, that later turns get it byte
// for byte, scopes, and the opt-out.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "tests/proxy/proxy_fixture.h"

namespace mend::proxy {
namespace {

using ::testing::HasSubstr;
using Json = nlohmann::json;

const char kChat[] =
    R"({"model":"gpt-4o","messages":[{"role":"system","content":"You fix builds."},{"role":"user","content":"Fix the build"}],"temperature":0.2,"x-vendor":{"keep":[1,2.50]}})";

TEST_F(ProxyTest, ChatGetsTheSectionAtTheEndOfTheSystemMessageAndTheReplyIsUntouched) {
  Start();
  testing::FakeResponse answer;
  answer.text = "Done.";
  upstream_->Enqueue(answer);
  Reply reply = Post("/v1/chat/completions", kChat);
  ASSERT_EQ(reply.status, 200) << reply.body;
  EXPECT_EQ(reply.Json()["choices"][0]["message"]["content"], "Done.");
  EXPECT_EQ(reply.Header("Content-Type"), "application/json");
  // Every byte but the system message's content as the client sent it.
  EXPECT_EQ(
      LastUpstreamRaw(),
      R"({"model":"gpt-4o","messages":[{"role":"system","content":"You fix builds.\n\n## Long-term Memory\n- fact 1"},{"role":"user","content":"Fix the build"}],"temperature":0.2,"x-vendor":{"keep":[1,2.50]}})");
  EXPECT_EQ(memory_.tasks(), std::vector<std::string>{"Fix the build"});
  // The upstream got the configured key, never mend's headers.
  std::vector<testing::RecordedRequest> requests = upstream_->requests();
  EXPECT_EQ(requests.back().Header("Authorization"), "Bearer sk-upstream");
  EXPECT_EQ(requests.back().path, "/v1/chat/completions");
}

TEST_F(ProxyTest, LaterTurnsGetTheIdenticalSectionAndSurviveARestart) {
  Start();
  Post("/v1/chat/completions", kChat);
  const std::string first = LastUpstreamBody()["messages"][0]["content"];
  Json later = Json::parse(kChat);
  later["messages"].push_back({{"role", "assistant"}, {"content", "Which build?"}});
  later["messages"].push_back({{"role", "user"}, {"content", "The C++ one"}});
  Post("/v1/chat/completions", later.dump());
  EXPECT_EQ(LastUpstreamBody()["messages"][0]["content"], first);
  Restart();
  Post("/v1/chat/completions", later.dump());
  EXPECT_EQ(LastUpstreamBody()["messages"][0]["content"], first);
  EXPECT_EQ(memory_.calls(), 1);
}

TEST_F(ProxyTest, XMendSessionNamesTheConversationAndXMendTaskItsTask) {
  Start();
  Post("/v1/chat/completions", kChat, {{"X-Mend-Session", "s1"}, {"X-Mend-Task", "Repair CI"}});
  // Another first message, same session: the same conversation.
  Json other = Json::parse(kChat);
  other["messages"][1]["content"] = "something else";
  Post("/v1/chat/completions", other.dump(), {{"X-Mend-Session", "s1"}});
  EXPECT_EQ(memory_.tasks(), std::vector<std::string>{"Repair CI"});
  Post("/v1/chat/completions", other.dump(), {{"X-Mend-Session", "s2"}});
  EXPECT_EQ(memory_.calls(), 2);
}

TEST_F(ProxyTest, MemoryOffSendsTheClientsBytes) {
  Start();
  Post("/v1/chat/completions", kChat, {{"X-Mend-Memory", "off"}});
  EXPECT_EQ(LastUpstreamRaw(), kChat);
  EXPECT_EQ(memory_.calls(), 0);
}

TEST_F(ProxyTest, WithoutASystemMessageOneIsCreated) {
  Start();
  Post("/v1/chat/completions", R"({"model":"m","messages":[{"role":"user","content":"hi"}]})");
  EXPECT_EQ(
      LastUpstreamRaw(),
      R"({"model":"m","messages":[{"role":"system","content":"## Long-term Memory\n- fact 1"},{"role":"user","content":"hi"}]})");
}

TEST_F(ProxyTest, AFailedRecallLeavesThisRequestWithoutAndTheNextOneTries) {
  Start();
  memory_.set_fail(true);
  Reply reply = Post("/v1/chat/completions", kChat);
  EXPECT_EQ(reply.status, 200);
  EXPECT_EQ(LastUpstreamRaw(), kChat);
  memory_.set_fail(false);
  Post("/v1/chat/completions", kChat);
  EXPECT_THAT(LastUpstreamBody()["messages"][0]["content"].get<std::string>(),
              HasSubstr("## Long-term Memory"));
}

TEST_F(ProxyTest, ARequestWithoutATaskRecallsNothing) {
  Start();
  const std::string continuation =
      R"({"model":"gpt-4o","previous_response_id":"resp_1","input":[{"type":"function_call_output","call_id":"f1","output":"42"}]})";
  Reply reply = Post("/v1/responses", continuation);
  EXPECT_EQ(reply.status, 200);
  EXPECT_EQ(memory_.calls(), 0);
  EXPECT_EQ(LastUpstreamRaw(), continuation);
}

TEST_F(ProxyTest, AnEmptySectionAddsNothing) {
  options_.memory = false;
  Start();
  Post("/v1/chat/completions", kChat);
  EXPECT_EQ(LastUpstreamRaw(), kChat);
}

TEST_F(ProxyTest, MessagesGetTheSectionInSystemStringOrBlocks) {
  options_.upstream_kind = UpstreamKind::kAnthropic;
  Start();
  Post(
      "/v1/messages",
      R"({"model":"claude","max_tokens":10,"system":"Be kind.","messages":[{"role":"user","content":"hi"}]})");
  EXPECT_EQ(LastUpstreamBody()["system"], "Be kind.\n\n## Long-term Memory\n- fact 1");
  EXPECT_EQ(upstream_->requests().back().Header("x-api-key"), "sk-upstream");
  EXPECT_EQ(upstream_->requests().back().Header("anthropic-version"), "2023-06-01");
  Post(
      "/v1/messages",
      R"({"model":"claude","max_tokens":10,"system":[{"type":"text","text":"Blocks."}],"messages":[{"role":"user","content":"other"}]})");
  EXPECT_EQ(
      LastUpstreamBody()["system"],
      Json::parse(
          R"([{"type":"text","text":"Blocks."},{"type":"text","text":"## Long-term Memory\n- fact 2"}])"));
}

TEST_F(ProxyTest, TokensScopeMemoryAndAreRequired) {
  options_.tokens = {ClientToken{"tok-a", "team-a"}, ClientToken{"tok-b", "team-b"}};
  Start();
  Reply refused = Post("/v1/chat/completions", kChat);
  EXPECT_EQ(refused.status, 401);
  EXPECT_EQ(refused.Json()["error"]["code"], "invalid_api_key");
  EXPECT_EQ(upstream_->request_count(), 0u);
  EXPECT_EQ(Post("/v1/chat/completions", kChat, {{"Authorization", "Bearer tok-x"}}).status, 401);
  // A header cannot move a token's conversations into another scope.
  EXPECT_EQ(Post("/v1/chat/completions", kChat,
                 {{"Authorization", "Bearer tok-a"}, {"X-Mend-Workspace", "team-b"}})
                .status,
            200);
  Post("/v1/chat/completions", kChat, {{"x-api-key", "tok-b"}});
  EXPECT_EQ(memory_.workspaces(), (std::vector<std::string>{"team-a", "team-b"}));
  // The client's token is not the upstream's key.
  EXPECT_EQ(upstream_->requests().back().Header("Authorization"), "Bearer sk-upstream");
  EXPECT_EQ(upstream_->requests().back().Header("x-api-key"), "");
}

TEST_F(ProxyTest, ForwardClientKeySendsTheClientsOwnKey) {
  options_.forward_client_key = true;
  options_.tokens = {ClientToken{"tok-a", "team-a"}};
  Start();
  EXPECT_EQ(Post("/v1/chat/completions", kChat,
                 {{"Authorization", "Bearer sk-client"}, {"X-Mend-Token", "tok-a"}})
                .status,
            200);
  EXPECT_EQ(upstream_->requests().back().Header("Authorization"), "Bearer sk-client");
  EXPECT_EQ(upstream_->requests().back().Header("X-Mend-Token"), "");
}

TEST_F(ProxyTest, WithoutTokensTheWorkspaceHeaderChoosesTheScope) {
  Start();
  Post("/v1/chat/completions", kChat, {{"X-Mend-Workspace", "/src/app"}});
  EXPECT_EQ(memory_.workspaces(), std::vector<std::string>{"/src/app"});
}

}  // namespace
}  // namespace mend::proxy
