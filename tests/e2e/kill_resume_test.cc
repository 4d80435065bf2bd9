// Resume semantics end to end: a real `mend run` talking to the fake LLM server over loopback is
// killed with SIGKILL while its third model request is in flight, then `mend resume` finishes the
// run in a new process. The server's request count proves that the checkpointed model turns were
// not asked again and its last request that the tools did not run again.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <signal.h>

#include <charconv>
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

using ::testing::ElementsAre;
using ::testing::HasSubstr;

constexpr char kKey[] = "sk-kill-resume-KEY-5151";
constexpr char kChatRequest[] = " POST /v1/chat/completions";
constexpr char kNotes[] = "the deploy window is Tuesday 14:00\n";

// Four model turns: two tool calls, a turn that hangs (the process is killed while waiting for
// it), and the answer the resumed run gets when it asks that turn again.
constexpr char kScript[] = R"([
  {"tool_calls": [{"id": "c1", "name": "list_dir", "arguments": {"path": "."}}]},
  {"tool_calls": [{"id": "c2", "name": "read_file", "arguments": {"path": "notes.txt"}}]},
  {"text": "never delivered", "latency_ms": 60000},
  {"text": "done"}
])";

std::vector<std::string> Lines(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

std::string Announce(int n) { return "request " + std::to_string(n) + kChatRequest; }

class KillResumeTest : public E2eTest {
 protected:
  // TearDown checks that the key leaks into nothing either process printed.
  KillResumeTest()
      : E2eTest({.secret = kKey,
                 .agent_toml = "name = \"killed\"\n"
                               "tools = [\"read_file\", \"list_dir\"]\n"
                               "workspace = \"workspace\"\n",
                 .instructions = "Read the notes and answer.\n"}) {}

  void SetUp() override {
    ASSERT_NO_FATAL_FAILURE(E2eTest::SetUp());
    std::error_code error;
    std::filesystem::create_directories(AgentDir() + "/workspace", error);
    ASSERT_FALSE(error) << error.message();
    MEND_ASSERT_OK(dir_->WriteFile("agent/workspace/notes.txt", kNotes));
  }

  std::string AgentDir() const { return dir_->File("agent"); }
  std::string LogPath() const { return dir_->File("requests.jsonl"); }

  // Starts fake_llm_server with the script, announcing and logging every request; sets port_.
  void StartServer() {
    StartFakeLlm({"--script", WriteTestFile("script.json", kScript), "--api-key", kKey, "--log",
                  LogPath(), "--announce"});
  }

  // `mend --home H [--json] args... <provider flags>`.
  std::vector<std::string> MendArgv(std::vector<std::string> args, bool provider) {
    args.insert(args.begin(), "--json");
    return MendCommand(provider ? OnServer(std::move(args)) : args);
  }

  // Runs mend to completion and parses its JSON stdout.
  nlohmann::json MendJson(std::vector<std::string> args, bool provider) {
    return E2eTest::MendJson(provider ? OnServer(std::move(args)) : std::move(args));
  }

  // Blocks on the server's stdout until request `n` has arrived (it announces requests on arrival,
  // before their scripted latency).
  void AwaitRequest(int n) {
    auto line = server_->ReadStdoutLine(kBound);
    MEND_ASSERT_OK(line);
    ASSERT_EQ(*line, Announce(n));
  }

  // The messages of every chat request the server logged, in arrival order.
  std::vector<nlohmann::json> LoggedConversations() {
    std::vector<nlohmann::json> conversations;
    for (const nlohmann::json& body : LoggedBodies(LogPath())) {
      conversations.push_back(body.is_object() ? body.value("messages", nlohmann::json())
                                               : nlohmann::json());
    }
    return conversations;
  }
};

// The tool_call_id of every tool message, and the ids of every assistant tool call, in order.
struct ToolTrace {
  std::vector<std::string> results;
  std::vector<std::string> calls;
};

ToolTrace TraceOf(const nlohmann::json& messages) {
  ToolTrace trace;
  if (!messages.is_array()) return trace;
  for (const nlohmann::json& m : messages) {
    if (m.value("role", "") == "tool") trace.results.push_back(m.value("tool_call_id", ""));
    if (m.value("role", "") != "assistant" || !m.contains("tool_calls")) continue;
    for (const nlohmann::json& call : m["tool_calls"]) trace.calls.push_back(call.value("id", ""));
  }
  return trace;
}

// The content of the tool message answering `call_id` ("" when there is none).
std::string ToolResult(const nlohmann::json& messages, const std::string& call_id) {
  for (const nlohmann::json& m : messages) {
    if (m.value("role", "") == "tool" && m.value("tool_call_id", "") == call_id) {
      return m["content"].is_string() ? m["content"].get<std::string>() : m["content"].dump();
    }
  }
  return "";
}

TEST_F(KillResumeTest, KilledRunResumesWithoutRepeatingCheckpointedTurnsOrTools) {
  ASSERT_NO_FATAL_FAILURE(StartServer());
  auto run = ChildProcess::Spawn(
      MendArgv({"run", AgentDir(), "What do the notes say?", "--id", "r1"}, true), env_);
  MEND_ASSERT_OK(run);
  for (int n = 1; n <= 3; ++n) ASSERT_NO_FATAL_FAILURE(AwaitRequest(n));
  // Request 3 is in flight (the server holds its answer): both tool results are checkpointed.
  MEND_ASSERT_OK((*run)->Kill(SIGKILL));
  auto killed = (*run)->Finish(kBound);
  MEND_ASSERT_OK(killed);
  captured_ += killed->out + killed->err;
  EXPECT_FALSE(killed->status.exited);
  EXPECT_EQ(killed->status.signal, SIGKILL);

  const nlohmann::json pending = MendJson({"pending"}, false);
  ASSERT_TRUE(pending.is_object()) << pending;
  ASSERT_EQ(pending["runs"].size(), 1u) << pending;
  EXPECT_EQ(pending["runs"][0]["id"], "r1");
  EXPECT_EQ(pending["runs"][0]["status"], "running");
  EXPECT_EQ(pending["runs"][0]["waiting"], nullptr);
  // Durable before the kill: the first checkpoint, two model turns and two tool results.
  EXPECT_EQ(pending["runs"][0]["step"], 5);

  const nlohmann::json resumed = MendJson({"resume", "r1"}, true);
  ASSERT_TRUE(resumed.is_object()) << resumed;
  EXPECT_EQ(resumed["run_id"], "r1");
  EXPECT_EQ(resumed["status"], "completed");
  EXPECT_EQ(resumed["output"], "done");
  // Three model turns answered, each counted once (10 + 5 tokens each in the script); the turn
  // lost with the killed process is not counted.
  EXPECT_EQ(resumed["steps"], 3);
  EXPECT_EQ(resumed["usage"], nlohmann::json({{"input_tokens", 30}, {"output_tokens", 15}}));
  EXPECT_EQ(MendJson({"pending"}, false)["runs"], nlohmann::json::array());

  // Exactly one request after the kill: the turn that was in flight, asked again.
  ASSERT_NO_FATAL_FAILURE(AwaitRequest(4));
  MEND_ASSERT_OK(server_->Kill(SIGTERM));
  auto stopped = server_->Finish(kBound);
  MEND_ASSERT_OK(stopped);
  EXPECT_EQ(stopped->out, "");  // no fifth request
  EXPECT_EQ(stopped->status.code, 0) << stopped->err;

  const std::vector<nlohmann::json> conversations = LoggedConversations();
  ASSERT_EQ(conversations.size(), 4u);
  const ToolTrace last = TraceOf(conversations[3]);
  EXPECT_THAT(last.calls, ElementsAre("c1", "c2"));
  EXPECT_THAT(last.results, ElementsAre("c1", "c2"));
  EXPECT_THAT(ToolResult(conversations[3], "c1"), HasSubstr("notes.txt"));
  EXPECT_THAT(ToolResult(conversations[3], "c2"), HasSubstr("Tuesday 14:00"));
  // The resumed process asked exactly what the killed one had asked.
  EXPECT_EQ(conversations[3], conversations[2]);
  EXPECT_THAT(TraceOf(conversations[1]).results, ElementsAre("c1"));
}

// A killed run is still `running` in the store, but `pending`, `show` and `recover` say that it
// was interrupted: its process is gone.
TEST_F(KillResumeTest, AKilledRunIsShownInterruptedUntilRecoveryResumesIt) {
  ASSERT_NO_FATAL_FAILURE(StartServer());
  auto run = ChildProcess::Spawn(
      MendArgv({"run", AgentDir(), "What do the notes say?", "--id", "r1"}, true), env_);
  MEND_ASSERT_OK(run);
  const std::string pid = std::to_string((*run)->pid());
  for (int n = 1; n <= 3; ++n) ASSERT_NO_FATAL_FAILURE(AwaitRequest(n));
  MEND_ASSERT_OK((*run)->Kill(SIGKILL));
  auto killed = (*run)->Finish(kBound);
  MEND_ASSERT_OK(killed);
  captured_ += killed->out + killed->err;

  nlohmann::json pending = MendJson({"pending"}, false);
  ASSERT_EQ(pending["runs"].size(), 1u) << pending;
  nlohmann::json& listed = pending["runs"][0];
  EXPECT_EQ(listed["status"], "running");  // the stored status is unchanged
  EXPECT_EQ(listed["interrupted"], true) << listed;
  EXPECT_EQ(listed["interruption"]["reason"], "process_gone") << listed;
  EXPECT_THAT(listed["interruption"]["holder"].get<std::string>(), HasSubstr("-" + pid + "@"));

  auto table = RunProcess({MEND_BINARY, "--home", Home(), "pending"}, env_, kBound);
  MEND_ASSERT_OK(table);
  captured_ += table->out + table->err;
  const std::vector<std::string> rows = Lines(table->out);
  ASSERT_EQ(rows.size(), 2u) << table->out;
  EXPECT_THAT(rows[1], ::testing::StartsWith("r1  killed  interrupted  2 "));

  auto shown = RunProcess({MEND_BINARY, "--home", Home(), "show", "r1"}, env_, kBound);
  MEND_ASSERT_OK(shown);
  captured_ += shown->out + shown->err;
  EXPECT_THAT(shown->out, HasSubstr("status      interrupted: its process (pid " + pid + " on "));
  EXPECT_THAT(shown->out, HasSubstr("is gone; mend resume r1 or mend recover continues it\n"));
  nlohmann::json shown_json = MendJson({"show", "r1"}, false);
  EXPECT_EQ(shown_json["status"], "running");
  EXPECT_EQ(shown_json["interrupted"], true);
  EXPECT_EQ(shown_json["interruption"]["reason"], "process_gone");

  // The recovery pass says which runs it found interrupted, and brings this one back.
  nlohmann::json pass = MendJson({"recover", "--once"}, true);
  EXPECT_EQ(pass["interrupted"], nlohmann::json({"r1"})) << pass;
  EXPECT_EQ(pass["completed"], nlohmann::json({"r1"})) << pass;
  nlohmann::json done = MendJson({"show", "r1"}, false);
  EXPECT_EQ(done["status"], "completed");
  EXPECT_EQ(done["interrupted"], false);
  EXPECT_EQ(done["interruption"], nullptr);
}

}  // namespace
}  // namespace mend::testing
