// The fake_llm_server executable as a separate process, driven by mend's real OpenAI provider
// over loopback: the path end-to-end tests and benchmarks rely on.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <signal.h>

#include <algorithm>
#include <charconv>
#include <memory>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "mend/base/env.h"
#include "mend/llm/factory.h"
#include "tests/support/e2e_harness.h"

namespace mend::testing {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;
using ::testing::StartsWith;

constexpr char kKey[] = "sk-fake-e2e-KEY-4242";

constexpr char kScript[] = R"([
  {"tool_calls": [{"id": "call_1", "name": "read_file", "arguments": {"path": "/notes.txt"}}]},
  {"text": "hello from the fake", "input_tokens": 7, "output_tokens": 3},
  {"status": 429, "retry_after_seconds": 3}
])";

std::vector<std::string> Lines(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

class FakeServerExecutableTest : public E2eTest {
 protected:
  // TearDown checks that the key leaks into nothing the server printed or logged.
  FakeServerExecutableTest() : E2eTest({.secret = kKey}) {}

  // Starts the server with `args` after --port 0 and returns the port of its ready line.
  Result<int> StartServer(std::vector<std::string> args) {
    MEND_ASSIGN_OR_RETURN(FakeServerProcess server, StartAnotherFakeLlm(args));
    server_ = std::move(server.process);
    return server.port;
  }

  // Stops the server with `signal` and returns how it ended and what else it printed.
  Result<ChildOutput> StopServer(int signal) { return StopFakeLlm(signal); }

  Result<std::unique_ptr<llm::LlmProvider>> Provider(int port, const std::string& key,
                                                     const std::string& kind = "openai") {
    llm::ProviderOptions options;
    options.kind = kind;
    options.model = kind == "openai" ? "gpt-4o-mini" : "claude-test";
    options.base_url = "http://127.0.0.1:" + std::to_string(port);
    options.api_key = key;
    options.timeout = kBound;
    return llm::CreateProvider(options, Env::Default());
  }

  static llm::CompletionRequest Ask() {
    llm::CompletionRequest request;
    request.messages.push_back(llm::Message::User("what do the notes say?"));
    return request;
  }
};

TEST_F(FakeServerExecutableTest, ServesTheScriptToTheRealProviderInOrder) {
  auto script = dir_->WriteFile("script.json", kScript);
  MEND_ASSERT_OK(script);
  auto port = StartServer({"--script", *script, "--api-key", kKey});
  MEND_ASSERT_OK(port);
  auto provider = Provider(*port, kKey);
  MEND_ASSERT_OK(provider);

  auto tool_call = (*provider)->Complete(Ask());
  MEND_ASSERT_OK(tool_call);
  EXPECT_EQ(tool_call->finish_reason, llm::FinishReason::kToolCalls);
  ASSERT_EQ(tool_call->tool_calls.size(), 1u);
  EXPECT_EQ(tool_call->tool_calls[0].id, "call_1");
  EXPECT_EQ(tool_call->tool_calls[0].name, "read_file");
  EXPECT_EQ(nlohmann::json::parse(tool_call->tool_calls[0].arguments),
            nlohmann::json({{"path", "/notes.txt"}}));

  auto text = (*provider)->Complete(Ask());
  MEND_ASSERT_OK(text);
  EXPECT_EQ(text->text, "hello from the fake");
  EXPECT_EQ(text->finish_reason, llm::FinishReason::kStop);
  EXPECT_TRUE(text->usage_reported);
  EXPECT_EQ(text->usage.input_tokens, 7);
  EXPECT_EQ(text->usage.output_tokens, 3);

  auto limited = (*provider)->Complete(Ask());
  EXPECT_THAT(limited, StatusIs(StatusCode::kResourceExhausted));
  EXPECT_EQ(limited.status().retry_after(), std::chrono::milliseconds(3000));
  EXPECT_EQ(limited.status().detail_code(), "http_429");
  EXPECT_EQ(ClassOf(limited.status()), ErrorClass::kTransient);
  EXPECT_TRUE(IsRetryable(limited.status()));
  captured_ += std::string(limited.status().message());

  auto stopped = StopServer(SIGTERM);
  MEND_ASSERT_OK(stopped);
  EXPECT_TRUE(stopped->status.exited);
  EXPECT_EQ(stopped->status.code, 0);
  EXPECT_EQ(stopped->err, "");
}

TEST_F(FakeServerExecutableTest, LogRecordsEveryRequestWithTheKeyRedacted) {
  auto script = dir_->WriteFile("script.json", kScript);
  MEND_ASSERT_OK(script);
  const std::string log_path = dir_->File("requests.jsonl");
  auto port = StartServer({"--script", *script, "--log", log_path});
  MEND_ASSERT_OK(port);
  auto provider = Provider(*port, kKey);
  MEND_ASSERT_OK(provider);
  MEND_EXPECT_OK((*provider)->Complete(Ask()));
  MEND_EXPECT_OK((*provider)->Complete(Ask()));
  EXPECT_THAT((*provider)->Complete(Ask()), StatusIs(StatusCode::kResourceExhausted));
  auto stopped = StopServer(SIGTERM);
  MEND_ASSERT_OK(stopped);
  EXPECT_EQ(stopped->status.code, 0);

  auto log = ReadWholeFile(log_path);
  MEND_ASSERT_OK(log);
  captured_ += *log;
  const std::vector<std::string> lines = Lines(*log);
  ASSERT_EQ(lines.size(), 3u) << *log;
  for (const std::string& line : lines) {
    const nlohmann::json request = nlohmann::json::parse(line, nullptr, false);
    ASSERT_TRUE(request.is_object()) << line;
    EXPECT_EQ(request["method"], "POST");
    EXPECT_EQ(request["path"], "/v1/chat/completions");
    EXPECT_EQ(request["headers"]["authorization"], "<redacted>");
    EXPECT_THAT(request["body"].get<std::string>(), HasSubstr("what do the notes say?"));
  }
  EXPECT_THAT(*log, Not(HasSubstr(kKey)));
}

// Two instruction sets, one of them with quotes and newlines as a real system prompt has.
constexpr char kRoutes[] = R"([
  {"name": "reviewer", "contains": "You review code.\nAnswer \"PASS\" or \"FAIL\".",
   "responses": [{"text": "PASS"}, {"text": "FAIL"}]},
  {"contains": ["You use tools.", "notes"], "cycle": false,
   "responses": [{"tool_calls": [{"id": "call_9", "name": "read_file",
                                  "arguments": {"path": "/notes.txt"}}]}]}
])";

TEST_F(FakeServerExecutableTest, RoutesAnswerByInstructionsOverBothApis) {
  auto routes = dir_->WriteFile("routes.json", kRoutes);
  MEND_ASSERT_OK(routes);
  auto script = dir_->WriteFile("script.json", R"([{"text": "scripted"}])");
  MEND_ASSERT_OK(script);
  const std::string log_path = dir_->File("requests.jsonl");
  auto port = StartServer({"--routes", *routes, "--script", *script, "--log", log_path});
  MEND_ASSERT_OK(port);
  auto openai = Provider(*port, kKey);
  MEND_ASSERT_OK(openai);
  auto anthropic = Provider(*port, kKey, "anthropic");
  MEND_ASSERT_OK(anthropic);
  auto ask = [](const std::string& system) {
    llm::CompletionRequest request = Ask();
    request.messages.insert(request.messages.begin(), llm::Message::System(system));
    return request;
  };
  const std::string reviewer = "You review code.\nAnswer \"PASS\" or \"FAIL\".\nBe brief.";

  std::vector<std::string> verdicts;
  for (llm::LlmProvider* provider : {openai->get(), anthropic->get(), openai->get()}) {
    auto verdict = provider->Complete(ask(reviewer));
    MEND_ASSERT_OK(verdict);
    verdicts.push_back(verdict->text);
  }
  EXPECT_THAT(verdicts, ::testing::ElementsAre("PASS", "FAIL", "PASS"));
  for (int i = 0; i < 2; ++i) {
    auto call = (*anthropic)->Complete(ask("You use tools."));
    MEND_ASSERT_OK(call);
    ASSERT_EQ(call->tool_calls.size(), 1u);
    EXPECT_EQ(call->tool_calls[0].id, "call_9");
    EXPECT_EQ(nlohmann::json::parse(call->tool_calls[0].arguments),
              nlohmann::json({{"path", "/notes.txt"}}));
  }
  // Neither instruction set: the script, then the default.
  auto scripted = (*openai)->Complete(ask("You translate."));
  MEND_ASSERT_OK(scripted);
  EXPECT_EQ(scripted->text, "scripted");
  auto fallback = (*openai)->Complete(ask("You translate."));
  MEND_ASSERT_OK(fallback);
  EXPECT_EQ(fallback->text, "ok");

  auto stopped = StopServer(SIGTERM);
  MEND_ASSERT_OK(stopped);
  EXPECT_EQ(stopped->status.code, 0);
  auto log = ReadWholeFile(log_path);
  MEND_ASSERT_OK(log);
  EXPECT_EQ(Lines(*log).size(), 7u) << *log;
}

TEST_F(FakeServerExecutableTest, MalformedRoutesExitTwoWithOneLineNamingFileRouteAndKey) {
  struct Case {
    const char* json;
    const char* where;
  };
  for (const Case& c : {Case{R"([{"contains": "a"}, {"contains": ["b", 3]}])",
                             ": route 1, key contains: expected a string or an array of strings"},
                        Case{R"([{"responses": [{"text": "a"}, {"statuss": 500}]}])",
                             ": route 0, response 1, key statuss: unknown key"},
                        Case{R"([{"contains": "a"})", ": routes file is not valid JSON"}}) {
    auto routes = dir_->WriteFile("bad_routes.json", c.json);
    MEND_ASSERT_OK(routes);
    auto result = RunProcess({FAKE_LLM_SERVER_BINARY, "--port", "0", "--routes", *routes},
                             {"PATH=/usr/bin:/bin"}, kBound);
    MEND_ASSERT_OK(result);
    EXPECT_TRUE(result->status.exited);
    EXPECT_EQ(result->status.code, 2) << c.json;
    EXPECT_EQ(result->out, "");
    const std::vector<std::string> lines = Lines(result->err);
    ASSERT_EQ(lines.size(), 1u) << result->err;
    EXPECT_THAT(lines[0], StartsWith("fake_llm_server: INVALID_ARGUMENT: " + *routes));
    EXPECT_THAT(lines[0], HasSubstr(c.where));
  }
}

TEST_F(FakeServerExecutableTest, WrongKeyIsAnAuthErrorThatDoesNotEchoEitherKey) {
  auto port = StartServer({"--api-key", kKey});
  MEND_ASSERT_OK(port);
  const std::string wrong_key = "sk-wrong-e2e-KEY-9999";
  auto provider = Provider(*port, wrong_key);
  MEND_ASSERT_OK(provider);

  auto denied = (*provider)->Complete(Ask());
  EXPECT_THAT(denied, StatusIs(StatusCode::kUnauthenticated));
  EXPECT_EQ(ClassOf(denied.status()), ErrorClass::kAuth);
  EXPECT_FALSE(IsRetryable(denied.status()));
  EXPECT_THAT(std::string(denied.status().message()), Not(HasSubstr(wrong_key)));
  captured_ += std::string(denied.status().message());
}

TEST_F(FakeServerExecutableTest, MalformedScriptExitsTwoWithOneLineNamingTheFile) {
  auto script = dir_->WriteFile("bad.json", R"([{"status": "x"}])");
  MEND_ASSERT_OK(script);
  auto result = RunProcess({FAKE_LLM_SERVER_BINARY, "--port", "0", "--script", *script},
                           {"PATH=/usr/bin:/bin"}, kBound);
  MEND_ASSERT_OK(result);
  EXPECT_TRUE(result->status.exited);
  EXPECT_EQ(result->status.code, 2);
  EXPECT_EQ(result->out, "");  // never announced itself as ready
  const std::vector<std::string> lines = Lines(result->err);
  ASSERT_EQ(lines.size(), 1u) << result->err;
  EXPECT_THAT(lines[0], StartsWith("fake_llm_server: INVALID_ARGUMENT: " + *script));
  EXPECT_THAT(lines[0], HasSubstr("status"));
}

TEST_F(FakeServerExecutableTest, MissingScriptExitsTwo) {
  const std::string missing = dir_->File("missing.json");
  auto result = RunProcess({FAKE_LLM_SERVER_BINARY, "--port", "0", "--script", missing},
                           {"PATH=/usr/bin:/bin"}, kBound);
  MEND_ASSERT_OK(result);
  EXPECT_EQ(result->status.code, 2);
  EXPECT_EQ(result->err, "fake_llm_server: NOT_FOUND: cannot read " + missing + "\n");
}

TEST_F(FakeServerExecutableTest, BadOptionsExitTwoWithOneLine) {
  for (std::vector<std::string> args :
       {std::vector<std::string>{"--port", "abc"}, std::vector<std::string>{"--bogus"}}) {
    args.insert(args.begin(), FAKE_LLM_SERVER_BINARY);
    auto result = RunProcess(args, {"PATH=/usr/bin:/bin"}, kBound);
    MEND_ASSERT_OK(result);
    EXPECT_EQ(result->status.code, 2) << args[1];
    EXPECT_EQ(result->out, "");
    EXPECT_THAT(result->err, ::testing::StartsWith("fake_llm_server: "));
    EXPECT_EQ(std::count(result->err.begin(), result->err.end(), '\n'), 1) << result->err;
  }
}

TEST_F(FakeServerExecutableTest, SigintAlsoStopsItCleanly) {
  auto port = StartServer({});
  MEND_ASSERT_OK(port);
  auto stopped = StopServer(SIGINT);
  MEND_ASSERT_OK(stopped);
  EXPECT_TRUE(stopped->status.exited);
  EXPECT_EQ(stopped->status.code, 0);
  EXPECT_EQ(stopped->out, "");
  EXPECT_EQ(stopped->err, "");
}

}  // namespace
}  // namespace mend::testing
