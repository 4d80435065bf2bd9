#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "agent/message_codec.h"
#include "agent/run_state.h"
#include "tests/support/status_matchers.h"

namespace mend::agent {
namespace {

using ::mend::testing::StatusIs;
using ::testing::HasSubstr;

TEST(AgentCodecTest, MessagesRoundTrip) {
  std::vector<llm::Message> messages = {
      llm::Message::System("sys"), llm::Message::User("hi \"there\"\n"),
      llm::Message::Assistant("", {{"c1", "read_file", R"({"path":"a"})"}, {"c2", "x", "{bad"}}),
      llm::Message::ToolResult("c1", "read_file", "boom", true)};
  for (const llm::Message& m : messages) {
    auto back = DecodeMessage(EncodeMessage(m), "r1");
    ASSERT_TRUE(back.ok()) << back.status();
    EXPECT_EQ(back->role, m.role);
    EXPECT_EQ(back->content, m.content);
    EXPECT_EQ(back->tool_call_id, m.tool_call_id);
    EXPECT_EQ(back->name, m.name);
    EXPECT_EQ(back->is_error, m.is_error);
    ASSERT_EQ(back->tool_calls.size(), m.tool_calls.size());
    for (size_t i = 0; i < m.tool_calls.size(); ++i) {
      EXPECT_EQ(back->tool_calls[i].arguments, m.tool_calls[i].arguments);
    }
  }
}

TEST(AgentCodecTest, ReplacedByHookRoundTripsAndOldRowsDecodeWithoutIt) {
  llm::Message tool = llm::Message::ToolResult("c1", "grep", "checked");
  std::string marked = EncodeMessage(tool, MessageMeta{true});
  EXPECT_THAT(marked, HasSubstr(R"("replaced_by_hook":true)"));
  MessageMeta meta;
  auto back = DecodeMessage(marked, "r1", &meta);
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_EQ(back->content, "checked");
  EXPECT_TRUE(meta.replaced_by_hook);

  EXPECT_THAT(EncodeMessage(tool), ::testing::Not(HasSubstr("replaced_by_hook")));
  // A row written before the field existed.
  auto old = DecodeMessage(R"({"role":"tool","content":"x","tool_call_id":"c1"})", "r1", &meta);
  ASSERT_TRUE(old.ok());
  EXPECT_FALSE(meta.replaced_by_hook);
  EXPECT_THAT(DecodeMessage(R"({"role":"tool","replaced_by_hook":"yes"})", "r1"),
              StatusIs(StatusCode::kDataLoss));
}

TEST(AgentCodecTest, CorruptMessageIsDataLossNamingTheRun) {
  for (const char* text : {"", "[]", R"({"role":"wizard"})", R"({"content":"x"})",
                           R"({"role":"assistant","tool_calls":[{"id":1}]})"}) {
    EXPECT_THAT(DecodeMessage(text, "run-7"),
                StatusIs(StatusCode::kDataLoss, HasSubstr("run run-7")))
        << text;
  }
}

TEST(AgentCodecTest, RunStateRoundTrips) {
  RunState s;
  s.steps = 3;
  s.input_tokens = 100;
  s.output_tokens = 7;
  s.cost_usd = 0.25;
  s.started_at = Time(std::chrono::milliseconds(1'700'000'000'123));
  s.pending = {{"c1", "deploy", "{}"}};
  s.waiting = "approval";
  s.waiting_call_id = "c1";
  s.question = "run deploy?";
  s.waiting_since = s.started_at + std::chrono::seconds(5);
  s.approved_call_id = "c0";
  auto back = DecodeRunState(EncodeRunState(s), "r1");
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_EQ(back->steps, 3);
  EXPECT_EQ(back->input_tokens, 100);
  EXPECT_DOUBLE_EQ(back->cost_usd, 0.25);
  EXPECT_EQ(back->started_at, s.started_at);
  ASSERT_EQ(back->pending.size(), 1u);
  EXPECT_EQ(back->pending[0].name, "deploy");
  EXPECT_EQ(back->waiting, "approval");
  EXPECT_EQ(back->question, "run deploy?");
  EXPECT_EQ(back->waiting_since, s.waiting_since);
  EXPECT_EQ(back->approved_call_id, "c0");
}

TEST(AgentCodecTest, CorruptRunStateIsDataLoss) {
  EXPECT_THAT(DecodeRunState("{", "r9"), StatusIs(StatusCode::kDataLoss, HasSubstr("run r9")));
  EXPECT_THAT(DecodeRunState(R"({"steps":-1})", "r9"), StatusIs(StatusCode::kDataLoss));
  EXPECT_THAT(DecodeRunState(R"({"steps":"2"})", "r9"), StatusIs(StatusCode::kDataLoss));
}

}  // namespace
}  // namespace mend::agent
