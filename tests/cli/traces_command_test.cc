// `mend traces` on a home whose observe.db is filled through SpanStore.
#include <gmock/gmock.h>

#include "mend/obs/span_store.h"
#include "tests/cli/cli_home_test.h"

namespace mend::cli {
namespace {

using ::testing::HasSubstr;

obs::SpanData Attempt(int n, std::string run, int64_t start_s) {
  obs::SpanData s;
  std::string hex = std::to_string(n);
  s.context = {std::string(32 - hex.size(), '0') + hex, std::string(16 - hex.size(), '0') + hex, 1};
  s.name = "invoke_agent helper";
  s.run_id = std::move(run);
  s.start = Time{} + std::chrono::seconds(1'700'000'000 + start_s);
  s.end = s.start + std::chrono::seconds(2);
  s.attributes = {{"gen_ai.operation.name", std::string("invoke_agent")},
                  {"gen_ai.agent.name", std::string("helper")},
                  {"mend.run.status", std::string("completed")}};
  return s;
}

class TracesCommandTest : public CliHomeTest {
 protected:
  void Fill(int runs, int64_t dropped = 0) {
    auto store = obs::SpanStore::Open(home_ + "/observe.db");
    ASSERT_TRUE(store.ok()) << store.status().ToString();
    std::vector<obs::SpanData> spans;
    for (int i = 1; i <= runs; ++i) spans.push_back(Attempt(i, "run-" + std::to_string(i), i));
    MEND_ASSERT_OK((*store)->Write(spans, dropped));
  }
};

TEST_F(TracesCommandTest, NoObserveDbIsAnEmptyList) {
  EXPECT_EQ(Mend({"traces"}), 0) << err();
  EXPECT_THAT(out(), HasSubstr("no traces yet"));
  EXPECT_EQ(Mend({"traces", "--json"}), 0);
  EXPECT_EQ(Json(), nlohmann::json::parse(
                        R"({"runs":[],"next":null,"next_cursor":null,"dropped_spans":0})"));
}

TEST_F(TracesCommandTest, ListsNewestFirstAndPages) {
  Fill(3, 5);
  ASSERT_EQ(Mend({"traces", "--json", "--limit", "2"}), 0) << err();
  nlohmann::json page = Json();
  ASSERT_EQ(page["runs"].size(), 2u);
  EXPECT_EQ(page["runs"][0]["run_id"], "run-3");
  EXPECT_EQ(page["dropped_spans"], 5);
  EXPECT_EQ(
      JsonKeys(page["runs"][0]),
      (std::set<std::string>{"run_id", "trace_id", "agent", "status", "start", "end", "duration_ms",
                             "attempts", "model_turns", "tool_calls", "tool_errors", "heal_actions",
                             "cost_usd", "input_tokens", "output_tokens"}));
  ASSERT_TRUE(page["next"].is_string());
  EXPECT_EQ(page["next_cursor"], page["next"]);
  ASSERT_EQ(Mend({"traces", "--json", "--limit", "2", "--before", page["next"].get<std::string>()}),
            0);
  EXPECT_EQ(Json()["runs"].size(), 1u);
  EXPECT_EQ(Json()["runs"][0]["run_id"], "run-1");
  EXPECT_TRUE(Json()["next"].is_null());
  EXPECT_TRUE(Json()["next_cursor"].is_null());

  ASSERT_EQ(Mend({"traces", "--limit", "2"}), 0);
  EXPECT_THAT(out(), HasSubstr("run-3  helper  completed"));
  EXPECT_THAT(out(), HasSubstr("5 spans were dropped"));
  EXPECT_THAT(out(), HasSubstr("next page: mend traces --limit 2 --before "));
  EXPECT_THAT(out(), ::testing::Not(HasSubstr("\033[")));
}

TEST_F(TracesCommandTest, OneRunShowsItsTree) {
  Fill(2);
  ASSERT_EQ(Mend({"traces", "run-2"}), 0) << err();
  EXPECT_THAT(out(), HasSubstr("invoke_agent helper  2s"));
  ASSERT_EQ(Mend({"traces", "run-2", "--json"}), 0);
  EXPECT_EQ(Json()["run_id"], "run-2");
  EXPECT_EQ(Json()["spans"].size(), 1u);
  EXPECT_EQ(JsonKeys(Json()),
            (std::set<std::string>{"run_id", "trace_id", "dropped_spans", "spans"}));
}

TEST_F(TracesCommandTest, UnknownRunExitsOne) {
  Fill(1);
  EXPECT_EQ(Mend({"traces", "nope"}), 1);
  EXPECT_EQ(err(), "mend: no trace of run nope in observe.db\n");
}

TEST_F(TracesCommandTest, RunWithoutObserveDbExitsOne) {
  EXPECT_EQ(Mend({"traces", "run-1"}), 1);
  EXPECT_EQ(err(), "mend: no trace of run run-1 in observe.db\n");
}

TEST_F(TracesCommandTest, BadFlagsAreUsageErrors) {
  EXPECT_EQ(Mend({"traces", "--limit", "0"}), 2);
  EXPECT_EQ(Mend({"traces", "--before", "garbage"}), 2);
  EXPECT_THAT(err(), HasSubstr("--before"));
}

}  // namespace
}  // namespace mend::cli
