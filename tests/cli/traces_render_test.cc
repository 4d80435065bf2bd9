#include "cli/traces_render.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <sstream>

namespace mend::cli::traces {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

Time At(int64_t ms) { return Time{} + std::chrono::milliseconds(1'700'000'000'000 + ms); }

obs::SpanData Span(std::string id, std::string parent, std::string name, int64_t start, int64_t end,
                   std::string op) {
  obs::SpanData s;
  s.context = {std::string(32, 'a'), std::move(id), 1};
  s.parent_span_id = std::move(parent);
  s.name = std::move(name);
  s.run_id = "run-1";
  s.start = At(start);
  s.end = At(end);
  s.attributes = {{"gen_ai.operation.name", std::move(op)}};
  return s;
}

// Two attempts on one run: the first ends waiting after a denied tool call, the second (a
// resume) has a tool result replaced by a hook. Given out of order, as a store might.
std::vector<obs::SpanData> TwoAttempts() {
  obs::SpanData first =
      Span("1000000000000001", "", "invoke_agent helper", 0, 5000, "invoke_agent");
  first.attributes.push_back({"mend.attempt", std::string("send")});
  first.attributes.push_back({"mend.run.status", std::string("waiting")});
  obs::SpanData chat =
      Span("2000000000000001", first.context.span_id, "chat gpt-x", 10, 1510, "chat");
  chat.attributes.push_back({"gen_ai.response.model", std::string("gpt-x-1")});
  chat.attributes.push_back({"gen_ai.usage.input_tokens", int64_t{120}});
  chat.attributes.push_back({"gen_ai.usage.output_tokens", int64_t{7}});
  obs::SpanData denied = Span("3000000000000001", first.context.span_id, "execute_tool shell", 1600,
                              1600, "execute_tool");
  denied.status = obs::SpanStatus::kError;
  denied.status_message = "rm -rf is not allowed";
  denied.attributes.push_back({"error.type", std::string("denied")});
  denied.events = {{"heal.action",
                    At(1600),
                    {{"heal.action", std::string("deny")},
                     {"heal.reason", std::string("destructive command")}}}};
  obs::SpanData second =
      Span("4000000000000001", "", "invoke_agent helper", 60000, 62000, "invoke_agent");
  second.attributes.push_back({"mend.attempt", std::string("resume")});
  second.links = {{{std::string(32, 'b'), "5000000000000001", 1},
                   {{"mend.run.id", std::string("parent-run")}}}};
  obs::SpanData replaced = Span("6000000000000001", second.context.span_id, "execute_tool read",
                                60100, 60200, "execute_tool");
  replaced.attributes.push_back({"mend.tool.replaced_by_hook", true});
  return {replaced, second, denied, chat, first};
}

obs::RunTraceSummary SampleRun() {
  obs::RunTraceSummary r;
  r.run_id = "run-1";
  r.trace_id = std::string(32, 'a');
  r.agent = "helper";
  r.status = "completed";
  r.start = At(0);
  r.end = At(62000);
  r.attempts = 2;
  r.model_turns = 1;
  r.tool_calls = 2;
  r.tool_errors = 1;
  r.heal_actions = 1;
  r.cost_usd = 0.0125;
  return r;
}

TEST(TracesRenderTest, TreeIndentsChildrenAndOrdersByStart) {
  std::ostringstream out;
  PrintTrace(SampleRun(), TwoAttempts(), 0, Color::kNone, out);
  EXPECT_EQ(out.str(),
            "run run-1  trace aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa  5 spans\n"
            "invoke_agent helper  5s  attempt=send  status=waiting\n"
            "  chat gpt-x  1.5s  model=gpt-x-1  tokens=120/7\n"
            "  execute_tool shell  <1ms  ERROR denied: rm -rf is not allowed\n"
            "    heal deny: destructive command\n"
            "invoke_agent helper  2s  attempt=resume  fork of parent-run\n"
            "  execute_tool read  100ms  replaced by hook\n");
}

// A tool's error output often has several lines; they stay under their span instead of starting
// at the left margin in the middle of the tree.
TEST(TracesRenderTest, MultiLineErrorsAreIndentedUnderTheirSpan) {
  std::vector<obs::SpanData> spans = TwoAttempts();
  obs::SpanData& denied = spans[2];
  ASSERT_EQ(denied.name, "execute_tool shell");
  denied.status_message = "exit status 2\nstderr: make: *** [all] Error 1\r\n  in ./src\n";
  denied.events[0].attributes[1].value = std::string("twice the same\ncommand");
  std::ostringstream out;
  PrintTrace(SampleRun(), spans, 0, Color::kNone, out);
  EXPECT_EQ(out.str(),
            "run run-1  trace aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa  5 spans\n"
            "invoke_agent helper  5s  attempt=send  status=waiting\n"
            "  chat gpt-x  1.5s  model=gpt-x-1  tokens=120/7\n"
            "  execute_tool shell  <1ms  ERROR denied: exit status 2\n"
            "      stderr: make: *** [all] Error 1\n"
            "        in ./src\n"
            "    heal deny: twice the same\n"
            "        command\n"
            "invoke_agent helper  2s  attempt=resume  fork of parent-run\n"
            "  execute_tool read  100ms  replaced by hook\n");
}

TEST(TracesRenderTest, NoColourWithoutTerminalAndColourWithOne) {
  std::ostringstream plain, coloured;
  PrintTrace(SampleRun(), TwoAttempts(), 0, Color::kNone, plain);
  PrintTrace(SampleRun(), TwoAttempts(), 0, Color::kAnsi, coloured);
  EXPECT_THAT(plain.str(), Not(HasSubstr("\033[")));
  EXPECT_THAT(coloured.str(), HasSubstr("\033[31mERROR denied"));
}

TEST(TracesRenderTest, DroppedSpansGetAFooter) {
  std::ostringstream out;
  PrintTrace(SampleRun(), {}, 3, Color::kNone, out);
  EXPECT_THAT(out.str(), HasSubstr("3 spans were dropped"));
  std::ostringstream list;
  PrintRunList({}, 0, Color::kNone, list);
  EXPECT_THAT(list.str(), Not(HasSubstr("dropped")));
}

TEST(TracesRenderTest, RunListHasOneLinePerRun) {
  obs::RunTracePage page;
  page.runs = {SampleRun()};
  std::ostringstream out;
  PrintRunList(page, 2, Color::kNone, out);
  EXPECT_EQ(out.str(),
            "RUN    AGENT   STATUS     DURATION  TURNS  TOOLS         HEAL  COST\n"
            "run-1  helper  completed  1m2s      1      2 (1 failed)  1     $0.0125\n"
            "2 spans were dropped before reaching observe.db (buffer full or write errors); "
            "traces may be incomplete\n");
}

TEST(TracesRenderTest, JsonShapes) {
  obs::RunTracePage page;
  page.runs = {SampleRun()};
  page.next = obs::RunTraceCursor{At(0), "run-1"};
  const nlohmann::json list = RunListJson(page, 4);
  EXPECT_EQ(list["dropped_spans"], 4);
  // `next` is the next-page field of every paged list (pending, runs, the HTTP API);
  // `next_cursor` is the older name, kept.
  EXPECT_EQ(list["next"], obs::FormatRunTraceCursor(*page.next));
  EXPECT_EQ(list["next_cursor"], list["next"]);
  EXPECT_EQ(list["runs"][0]["duration_ms"], 62000.0);
  EXPECT_EQ(list["runs"][0]["start"], "2023-11-14T22:13:20Z");
  EXPECT_EQ(list["runs"][0]["tool_errors"], 1);

  const nlohmann::json tree = TraceJson(SampleRun(), TwoAttempts(), 0);
  EXPECT_EQ(tree["run_id"], "run-1");
  ASSERT_EQ(tree["spans"].size(), 5u);
  const nlohmann::json& replaced = tree["spans"][0];
  EXPECT_EQ(replaced["attributes"]["mend.tool.replaced_by_hook"], true);
  EXPECT_EQ(replaced["start"], "2023-11-14T22:14:20.1Z");
  EXPECT_EQ(tree["spans"][1]["parent_span_id"], nullptr);
  EXPECT_EQ(tree["spans"][1]["links"][0]["attributes"]["mend.run.id"], "parent-run");
  EXPECT_EQ(tree["spans"][2]["events"][0]["attributes"]["heal.action"], "deny");
  EXPECT_EQ(tree["spans"][2]["status"], "error");
}

}  // namespace
}  // namespace mend::cli::traces
