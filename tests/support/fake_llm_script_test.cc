#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "tests/support/fake_llm_server.h"
#include "tests/support/status_matchers.h"

namespace mend::testing {
namespace {

using ::testing::HasSubstr;

TEST(FakeScriptTest, ParsesEveryField) {
  auto script = ParseFakeScript(R"([
    {"status": 429, "retry_after_seconds": 2, "error_message": "slow down",
     "error_type": "rate_limit_error"},
    {"text": "hi", "input_tokens": 3, "output_tokens": 4, "finish_reason": "length",
     "omit_usage": true, "latency_ms": 7},
    {"tool_calls": [{"id": "c1", "name": "read_file", "arguments": "{\"path\":\"a\"}"},
                    {"name": "ls", "arguments": {"dir": "."}}]},
    {"fault": "drop_connection"},
    {"fault": "oversized_body", "oversize_bytes": 1024, "raw_body": "{}"},
    {"embeddings": [[0.5, 1], [2]]},
    {"fault": "stream_cut", "pause_after_events": 3, "pause_again_after_events": 5, "argument_pieces": 4}
  ])");
  ASSERT_TRUE(script.ok()) << script.status();
  ASSERT_EQ(script->size(), 7u);
  const auto& s = *script;
  EXPECT_EQ(s[0].status, 429);
  EXPECT_EQ(s[0].retry_after_seconds, 2);
  EXPECT_EQ(s[0].error_message, "slow down");
  EXPECT_EQ(s[0].error_type, "rate_limit_error");
  EXPECT_EQ(s[1].text, "hi");
  EXPECT_EQ(s[1].input_tokens, 3);
  EXPECT_EQ(s[1].output_tokens, 4);
  EXPECT_EQ(s[1].finish_reason, "length");
  EXPECT_TRUE(s[1].omit_usage);
  EXPECT_EQ(s[1].latency, std::chrono::milliseconds(7));
  ASSERT_EQ(s[2].tool_calls.size(), 2u);
  EXPECT_EQ(s[2].tool_calls[0].id, "c1");
  EXPECT_EQ(s[2].tool_calls[0].arguments, R"({"path":"a"})");
  EXPECT_EQ(s[2].tool_calls[1].id, "call_2");
  EXPECT_EQ(s[2].tool_calls[1].arguments, R"({"dir":"."})");
  EXPECT_EQ(s[3].fault, FakeResponse::Fault::kDropConnection);
  EXPECT_EQ(s[3].status, 200);
  EXPECT_EQ(s[4].fault, FakeResponse::Fault::kOversizedBody);
  EXPECT_EQ(s[4].oversize_bytes, 1024u);
  EXPECT_EQ(s[4].raw_body, "{}");
  EXPECT_EQ(s[5].embeddings, (std::vector<std::vector<float>>{{0.5f, 1.0f}, {2.0f}}));
  EXPECT_EQ(s[6].fault, FakeResponse::Fault::kStreamCut);
  EXPECT_EQ(s[6].pause_after_events, 3);
  EXPECT_EQ(s[6].pause_again_after_events, 5);
  EXPECT_EQ(s[6].argument_pieces, 4);
  // Unset, the stream keys keep their defaults.
  EXPECT_EQ(s[0].pause_after_events, -1);
  EXPECT_EQ(s[0].argument_pieces, 1);
}

TEST(FakeScriptTest, StreamKeysAcceptTheirBounds) {
  auto script = ParseFakeScript(R"([{"pause_after_events": -1}, {"pause_after_events": 0},
    {"argument_pieces": 1}, {"argument_pieces": 2147483647}])");
  ASSERT_TRUE(script.ok()) << script.status();
  EXPECT_EQ((*script)[0].pause_after_events, -1);
  EXPECT_EQ((*script)[1].pause_after_events, 0);
  EXPECT_EQ((*script)[2].argument_pieces, 1);
  EXPECT_EQ((*script)[3].argument_pieces, 2147483647);
}

TEST(FakeScriptTest, StreamKeysWithWrongTypesAreNamed) {
  struct Case {
    const char* json;
    const char* error;
  };
  for (const Case& c : {
           Case{R"([{"pause_after_events": "2"}])",
                "response 0, key pause_after_events: expected an integer >= -1, got \"2\""},
           Case{R"([{"pause_after_events": -2}])",
                "response 0, key pause_after_events: expected an integer >= -1, got -2"},
           Case{R"([{"pause_after_events": 1.5}])",
                "response 0, key pause_after_events: expected an integer >= -1, got 1.5"},
           Case{R"([{"pause_after_events": 2147483648}])",
                "response 0, key pause_after_events: expected an integer <= 2147483647"},
           Case{R"([{}, {"argument_pieces": 0}])",
                "response 1, key argument_pieces: expected an integer >= 1, got 0"},
           Case{R"([{"argument_pieces": true}])",
                "response 0, key argument_pieces: expected an integer >= 1, got true"},
           Case{R"([{"argument_pieces": [2]}])",
                "response 0, key argument_pieces: expected an integer >= 1, got [2]"},
           Case{R"([{"fault": "stream_cutt"}])", "response 0, key fault: expected a fault name"},
       }) {
    EXPECT_THAT(ParseFakeScript(c.json), StatusIs(StatusCode::kInvalidArgument, HasSubstr(c.error)))
        << c.json;
  }
}

TEST(FakeScriptTest, EveryFaultNameParses) {
  auto script = ParseFakeScript(R"([{"fault":"none"},{"fault":"malformed_json"},
    {"fault":"truncated_body"},{"fault":"html_error_page"},{"fault":"drop_connection"},
    {"fault":"empty_body"},{"fault":"non_utf8"},{"fault":"oversized_body"},
    {"fault":"stream_cut"}])");
  ASSERT_TRUE(script.ok()) << script.status();
  ASSERT_EQ(script->size(), 9u);
  EXPECT_EQ((*script)[1].fault, FakeResponse::Fault::kMalformedJson);
  EXPECT_EQ((*script)[7].fault, FakeResponse::Fault::kOversizedBody);
  EXPECT_EQ((*script)[8].fault, FakeResponse::Fault::kStreamCut);
}

TEST(FakeScriptTest, EmptyArrayIsAnEmptyScript) {
  auto script = ParseFakeScript("[]");
  ASSERT_TRUE(script.ok());
  EXPECT_TRUE(script->empty());
}

TEST(FakeScriptTest, MalformedJsonIsInvalidArgument) {
  EXPECT_THAT(ParseFakeScript("[{\"text\": "),
              StatusIs(StatusCode::kInvalidArgument, HasSubstr("not valid JSON")));
}

TEST(FakeScriptTest, NonArrayIsInvalidArgument) {
  EXPECT_THAT(ParseFakeScript(R"({"text":"hi"})"),
              StatusIs(StatusCode::kInvalidArgument, HasSubstr("array")));
  EXPECT_THAT(ParseFakeScript("[1]"),
              StatusIs(StatusCode::kInvalidArgument, HasSubstr("response 0")));
}

TEST(FakeScriptTest, UnknownKeyIsNamed) {
  EXPECT_THAT(ParseFakeScript(R"([{"text":"a"},{"stauts":500}])"),
              StatusIs(StatusCode::kInvalidArgument, HasSubstr("response 1, key stauts")));
}

TEST(FakeScriptTest, WrongTypesAreInvalidArgument) {
  for (const char* bad :
       {R"([{"status":"429"}])", R"([{"status":99}])", R"([{"latency_ms":-1}])", R"([{"text":1}])",
        R"([{"omit_usage":1}])", R"([{"fault":"explode"}])", R"([{"tool_calls":[{"id":"x"}]}])",
        R"([{"tool_calls":[{"name":"a","id":1}]}])", R"([{"embeddings":[["x"]]}])"}) {
    EXPECT_THAT(ParseFakeScript(bad), StatusIs(StatusCode::kInvalidArgument)) << bad;
  }
}

TEST(FakeScriptTest, SingleResponseParses) {
  auto response = ParseFakeResponse(R"({"text":"default","output_tokens":9})");
  ASSERT_TRUE(response.ok()) << response.status();
  EXPECT_EQ(response->text, "default");
  EXPECT_EQ(response->output_tokens, 9);
  EXPECT_THAT(ParseFakeResponse("[]"), StatusIs(StatusCode::kInvalidArgument));
}

TEST(FakeRoutesTest, ParsesEveryKey) {
  auto routes = ParseFakeRoutes(R"([
    {"name": "reviewer", "contains": ["You review code.\nSay \"PASS\"", "diff"],
     "responses": [{"text": "PASS"}, {"tool_calls": [{"name": "ls"}]}], "cycle": false},
    {"contains": "grade", "responses": [{"status": 429}]},
    {"name": "aside"}
  ])");
  ASSERT_TRUE(routes.ok()) << routes.status();
  ASSERT_EQ(routes->size(), 3u);
  const FakeRoute& reviewer = (*routes)[0];
  EXPECT_EQ(reviewer.name, "reviewer");
  EXPECT_THAT(reviewer.contains, ::testing::ElementsAre("You review code.\nSay \"PASS\"", "diff"));
  ASSERT_EQ(reviewer.responses.size(), 2u);
  EXPECT_EQ(reviewer.responses[0].text, "PASS");
  ASSERT_EQ(reviewer.responses[1].tool_calls.size(), 1u);
  EXPECT_EQ(reviewer.responses[1].tool_calls[0].id, "call_1");
  EXPECT_EQ(reviewer.after_last, FakeRoute::AfterLast::kRepeatLast);
  const FakeRoute& grade = (*routes)[1];
  EXPECT_EQ(grade.name, "");
  EXPECT_THAT(grade.contains, ::testing::ElementsAre("grade"));
  EXPECT_EQ(grade.responses[0].status, 429);
  EXPECT_EQ(grade.after_last, FakeRoute::AfterLast::kCycle);
  EXPECT_TRUE((*routes)[2].contains.empty());
  EXPECT_TRUE((*routes)[2].responses.empty());
}

TEST(FakeRoutesTest, ErrorsNameTheRouteAndKey) {
  struct Case {
    const char* json;
    const char* where;
  };
  for (const Case& c : {
           Case{R"([{"text":"a"}])", "route 0, key text: unknown key"},
           Case{R"([{}, {"contains": 3}])", "route 1, key contains: expected a string or an array"},
           Case{R"([{"contains": ["a", 1]}])", "route 0, key contains: expected"},
           Case{R"([{"name": 1}])", "route 0, key name: expected a string"},
           Case{R"([{"cycle": "yes"}])", "route 0, key cycle: expected true or false"},
           Case{R"([{"responses": {"text": "a"}}])", "route 0, key responses: expected an array"},
           Case{R"([{"responses": [{}, {"statuss": 1}]}])",
                "route 0, response 1, key statuss: unknown key"},
           Case{R"([{"responses": [{"status": "x"}]}])", "route 0, response 0, key status"},
           Case{"[1]", "route 0: expected a JSON object"},
           Case{R"({"contains": "a"})", "routes must be a JSON array"},
           Case{"[{", "routes file is not valid JSON"},
       }) {
    EXPECT_THAT(ParseFakeRoutes(c.json), StatusIs(StatusCode::kInvalidArgument, HasSubstr(c.where)))
        << c.json;
  }
}

}  // namespace
}  // namespace mend::testing
