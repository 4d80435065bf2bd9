// Traces end to end (docs/observe.md): a real `mend run`, child of a caller's TRACEPARENT, is
// killed with SIGKILL while a model request is in flight; `mend recover --once` brings it back in
// a new process. `mend traces` then shows one trace with both attempts: the killed one, which
// never ended, and the recovery attempt with the resumed run under it. The provider requests
// carried the run's trace, and observe.db is private.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/stat.h>

#include <filesystem>
#include <memory>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <system_error>
#include <vector>

#include "tests/support/e2e_harness.h"

namespace mend::testing {
namespace {

using ::testing::HasSubstr;

constexpr char kKey[] = "sk-traces-e2e-KEY-7373";
constexpr char kChatRequest[] = " POST /v1/chat/completions";
constexpr char kCallerTrace[] = "4bf92f3577b34da6a3ce929d0e0e4736";
constexpr char kCallerSpan[] = "00f067aa0ba902b7";

// Two tool calls, a turn that hangs (the process is killed while waiting for it), and the answer
// the recovered run gets when it asks that turn again.
constexpr char kScript[] = R"([
  {"tool_calls": [{"id": "c1", "name": "list_dir", "arguments": {"path": "."}}],
   "input_tokens": 100, "output_tokens": 10},
  {"tool_calls": [{"id": "c2", "name": "read_file", "arguments": {"path": "missing.txt"}}]},
  {"text": "never delivered", "latency_ms": 60000},
  {"text": "done", "input_tokens": 300, "output_tokens": 30}
])";

std::string Attr(const nlohmann::json& span, const std::string& key) {
  const nlohmann::json& attrs = span["attributes"];
  if (!attrs.contains(key)) return "<none>";
  const nlohmann::json& v = attrs[key];
  return v.is_string() ? v.get<std::string>() : v.dump();
}

class TracesE2eTest : public E2eTest {
 protected:
  TracesE2eTest()
      : E2eTest({.secret = kKey,
                 .extra_env = {std::string("TRACEPARENT=00-") + kCallerTrace + "-" + kCallerSpan +
                               "-01"},
                 .agent_toml = "name = \"traced\"\n"
                               "tools = [\"read_file\", \"list_dir\"]\n"
                               "workspace = \"workspace\"\n",
                 .instructions = "Read the notes and answer.\n"}) {}

  void SetUp() override {
    ASSERT_NO_FATAL_FAILURE(E2eTest::SetUp());
    std::error_code error;
    std::filesystem::create_directories(dir_->File("agent/workspace"), error);
    ASSERT_FALSE(error) << error.message();
  }

  void StartServer() {
    StartFakeLlm({"--script", WriteTestFile("script.json", kScript), "--api-key", kKey, "--log",
                  dir_->File("requests.jsonl"), "--announce"});
  }

  std::vector<std::string> MendArgv(std::vector<std::string> args, bool provider) {
    return MendCommand(provider ? OnServer(std::move(args)) : args);
  }

  // Runs mend to completion; its stdout (and the exit code in *code).
  std::string Mend(std::vector<std::string> args, bool provider, int* code = nullptr) {
    const ChildOutput result =
        E2eTest::Mend(provider ? OnServer(std::move(args)) : std::move(args));
    if (code != nullptr) *code = result.status.exited ? result.status.code : -1;
    return result.out;
  }

  nlohmann::json MendJson(std::vector<std::string> args, bool provider) {
    args.insert(args.begin(), "--json");
    int code = -1;
    const std::string out = Mend(std::move(args), provider, &code);
    EXPECT_EQ(code, 0) << out;
    return nlohmann::json::parse(out, nullptr, false);
  }

  // The spans of the run's trace with `name` prefix.
  static std::vector<nlohmann::json> Spans(const nlohmann::json& trace, const std::string& prefix) {
    std::vector<nlohmann::json> out;
    if (!trace.is_object() || !trace.contains("spans")) return out;
    for (const nlohmann::json& s : trace["spans"]) {
      if (s["name"].get<std::string>().rfind(prefix, 0) == 0) out.push_back(s);
    }
    return out;
  }
};

TEST_F(TracesE2eTest, KilledRunRecoveredIsOneTraceWithTwoAttempts) {
  ASSERT_NO_FATAL_FAILURE(StartServer());
  auto run = ChildProcess::Spawn(
      MendArgv({"run", dir_->File("agent"), "What is there?", "--id", "r1"}, true), env_);
  MEND_ASSERT_OK(run);
  for (int n = 1; n <= 3; ++n) {
    auto line = server_->ReadStdoutLine(kBound);
    MEND_ASSERT_OK(line);
    ASSERT_EQ(*line, "request " + std::to_string(n) + kChatRequest);
  }
  // The writer puts spans in observe.db in the background, within a second of their end: wait
  // (bounded) until the killed process's first two turns are there, so the kill cuts a known
  // state. Each look is a separate read-only `mend traces` process.
  nlohmann::json before;
  for (auto deadline = std::chrono::steady_clock::now() + kBound;
       std::chrono::steady_clock::now() < deadline;) {
    int code = -1;
    const std::string out = Mend({"--json", "traces", "r1"}, false, &code);
    if (code != 0) continue;
    before = nlohmann::json::parse(out, nullptr, false);
    if (Spans(before, "chat").size() >= 2 && Spans(before, "execute_tool").size() >= 2) break;
  }
  ASSERT_GE(Spans(before, "chat").size(), 2u) << before.dump(2);
  MEND_ASSERT_OK((*run)->Kill(SIGKILL));
  auto killed = (*run)->Finish(kBound);
  MEND_ASSERT_OK(killed);
  captured_ += killed->out + killed->err;
  EXPECT_EQ(killed->status.signal, SIGKILL);

  const nlohmann::json recovered = MendJson({"recover", "--once"}, true);
  ASSERT_TRUE(recovered.is_object()) << recovered;
  EXPECT_EQ(recovered["completed"], nlohmann::json::array({"r1"})) << recovered;

  const nlohmann::json trace = MendJson({"traces", "r1"}, false);
  ASSERT_TRUE(trace.is_object()) << trace;
  EXPECT_EQ(trace["trace_id"], kCallerTrace);  // the caller's TRACEPARENT
  for (const nlohmann::json& s : trace["spans"]) EXPECT_EQ(s["trace_id"], kCallerTrace) << s;

  const std::vector<nlohmann::json> attempts = Spans(trace, "invoke_agent");
  ASSERT_EQ(attempts.size(), 2u) << trace.dump(2);
  const nlohmann::json& first = attempts[0];
  const nlohmann::json& second = attempts[1];
  EXPECT_EQ(first["parent_span_id"], kCallerSpan);
  EXPECT_EQ(Attr(first, "mend.attempt"), "send");
  EXPECT_EQ(Attr(first, "mend.span.in_progress"), "true");  // killed: it never ended
  EXPECT_EQ(Attr(second, "mend.attempt"), "resume");
  EXPECT_EQ(Attr(second, "mend.run.status"), "completed");
  EXPECT_EQ(second["status"], "ok");

  const std::vector<nlohmann::json> recovery = Spans(trace, "mend.recovery.attempt");
  ASSERT_EQ(recovery.size(), 1u);
  EXPECT_TRUE(recovery[0]["parent_span_id"].is_null()) << recovery[0];
  EXPECT_EQ(second["parent_span_id"], recovery[0]["span_id"]);
  EXPECT_EQ(Attr(recovery[0], "mend.recovery.outcome"), "completed");
  EXPECT_EQ(Attr(recovery[0], "mend.recovery.attempt"), "1");

  // Turns 1 and 2 under the killed attempt; the asked-again turn 3 under the resumed one. The
  // hanging request of the killed process never ended, so it has no span.
  const std::vector<nlohmann::json> chats = Spans(trace, "chat");
  ASSERT_EQ(chats.size(), 3u) << trace.dump(2);
  EXPECT_EQ(chats[0]["parent_span_id"], first["span_id"]);
  EXPECT_EQ(chats[1]["parent_span_id"], first["span_id"]);
  EXPECT_EQ(chats[2]["parent_span_id"], second["span_id"]);
  EXPECT_EQ(Attr(chats[0], "gen_ai.usage.input_tokens"), "100");
  EXPECT_EQ(Attr(chats[0], "gen_ai.request.model"), "gpt-4o-mini");
  const std::vector<nlohmann::json> tools = Spans(trace, "execute_tool");
  ASSERT_EQ(tools.size(), 2u);
  EXPECT_EQ(Attr(tools[0], "gen_ai.tool.name"), "list_dir");
  EXPECT_EQ(tools[0]["status"], "ok");
  EXPECT_EQ(tools[1]["status"], "error");  // missing.txt
  EXPECT_EQ(Attr(tools[1], "error.type"), "tool_error");

  // Every provider request carried the trace in its traceparent header.
  auto log = ReadWholeFile(dir_->File("requests.jsonl"));
  MEND_ASSERT_OK(log);
  std::istringstream lines(*log);
  int traced = 0;
  for (std::string line; std::getline(lines, line);) {
    const nlohmann::json request = nlohmann::json::parse(line, nullptr, false);
    const std::string header = request["headers"].is_object()
                                   ? request["headers"].value("traceparent", "")
                                   : std::string();
    EXPECT_THAT(header, ::testing::StartsWith(std::string("00-") + kCallerTrace + "-")) << line;
    traced += !header.empty();
  }
  EXPECT_EQ(traced, 4);

  // The list: one line for r1 with both attempts; the text tree says the first never ended.
  const nlohmann::json list = MendJson({"traces"}, false);
  ASSERT_EQ(list["runs"].size(), 1u) << list;
  EXPECT_EQ(list["runs"][0]["run_id"], "r1");
  EXPECT_EQ(list["runs"][0]["attempts"], 2);
  EXPECT_EQ(list["runs"][0]["model_turns"], 3);
  EXPECT_EQ(list["runs"][0]["tool_errors"], 1);
  EXPECT_EQ(list["runs"][0]["status"], "completed");
  const std::string text = Mend({"traces", "r1"}, false);
  EXPECT_THAT(text, HasSubstr("did not end"));
  EXPECT_THAT(text, HasSubstr("mend.recovery.attempt"));

  struct stat st {};
  ASSERT_EQ(stat((Home() + "/observe.db").c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600u);
}

}  // namespace
}  // namespace mend::testing
