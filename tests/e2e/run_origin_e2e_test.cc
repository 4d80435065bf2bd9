// Where and with what a run runs, through the real `mend` binary and the fake LLM server: an agent
// folder without `workspace` works in the caller's directory, a run keeps that workspace and its
// model when it is resumed from elsewhere or by a recovery pass started with other settings, a
// flag on resume switches the model and the change is recorded, and a missing model is a usage
// error before any run exists.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <signal.h>

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
using ::testing::Not;

constexpr char kKey[] = "sk-run-origin-KEY-4242";
constexpr char kNotes[] = "the deploy window is Tuesday 14:00\n";

// A read of notes.txt, then the answer.
constexpr char kReadScript[] = R"([
  {"tool_calls": [{"id": "c1", "name": "read_file", "arguments": {"path": "notes.txt"}}]},
  {"text": "done"}
])";

// A listing, a provider outage that fails the run, then (resumed) a read of notes.txt and the
// answer.
constexpr char kOutageScript[] = R"([
  {"tool_calls": [{"id": "c1", "name": "list_dir", "arguments": {"path": "."}}]},
  {"status": 503, "error_message": "upstream down"},
  {"tool_calls": [{"id": "c2", "name": "read_file", "arguments": {"path": "notes.txt"}}]},
  {"text": "done"}
])";

class RunOriginE2eTest : public E2eTest {
 protected:
  // No lessons: a failed run's lesson request would take a response of the server's script.
  // A scripted error is an outage that lasts: runs do not ask again themselves.
  RunOriginE2eTest()
      : E2eTest({.secret = kKey,
                 .extra_env = {"MEND_QUALITY_REFLEXION_ENABLED=false", "MEND_PROVIDER_RETRIES=0"},
                 .agent_toml = "name = \"x\"\ntools = [\"read_file\", \"list_dir\"]\n",
                 .instructions = "Answer from the notes.\n"}) {}

  void SetUp() override {
    ASSERT_NO_FATAL_FAILURE(E2eTest::SetUp());
    std::error_code error;
    std::filesystem::create_directories(dir_->File("project"), error);
    std::filesystem::create_directories(dir_->File("elsewhere"), error);
    MEND_ASSERT_OK(dir_->WriteFile("project/notes.txt", kNotes));
  }

  // With `announce`, the server prints "request <n> POST <path>" on stdout as each request
  // arrives (AwaitRequest).
  void StartServer(const char* script, bool announce = false) {
    std::vector<std::string> args = {
        "--script", WriteTestFile("script.json", script), "--api-key", kKey, "--log", LogPath()};
    if (announce) args.push_back("--announce");
    StartFakeLlm(args);
  }

  std::string LogPath() const { return dir_->File("requests.jsonl"); }

  // Blocks until the server announced request `n` (a bound, never a sleep).
  void AwaitRequest(int n) {
    auto line = server_->ReadStdoutLine(kBound);
    MEND_ASSERT_OK(line);
    ASSERT_EQ(*line, "request " + std::to_string(n) + " POST /v1/chat/completions");
  }
  std::string Url() const { return ServerUrl(); }

  // `mend --home H --json args...` run in `cwd` with env_ plus `extra_env`; H is `home` in the
  // test's directory.
  ChildOutput Mend(std::vector<std::string> args, const std::string& cwd,
                   const std::vector<std::string>& extra_env = {},
                   const std::string& home = "home") {
    args.insert(args.begin(), "--json");
    return E2eTest::Mend(std::move(args),
                         {.home = dir_->File(home), .extra_env = extra_env, .cwd = cwd});
  }

  // The JSON on stdout; an empty object when there is none (the test then fails on its fields).
  static nlohmann::json Json(const ChildOutput& out) {
    nlohmann::json parsed = nlohmann::json::parse(out.out, nullptr, false);
    return parsed.is_object() ? parsed : nlohmann::json::object();
  }

  // `mend run` of the agent with model `model` on the fake server, from `cwd`.
  nlohmann::json Run(const std::string& model, const std::string& cwd) {
    return Json(Mend({"run", dir_->File("agent"), "what do the notes say?", "--id", "r1",
                      "--provider", "openai", "--model", model, "--base-url", Url()},
                     cwd));
  }

  // The request bodies the fake server logged, in arrival order.
  std::vector<nlohmann::json> Requests() { return LoggedBodies(LogPath()); }

  // The content of the last tool message of `body`'s conversation.
  static std::string LastToolResult(const nlohmann::json& body) {
    std::string content;
    for (const nlohmann::json& m : body["messages"]) {
      if (m.value("role", "") == "tool") content = m.value("content", "");
    }
    return content;
  }
};

TEST_F(RunOriginE2eTest, AFolderWithoutWorkspaceWorksInTheCallersDirectory) {
  ASSERT_NO_FATAL_FAILURE(StartServer(kReadScript));
  nlohmann::json run = Run("model-a", dir_->File("project"));
  ASSERT_TRUE(run.is_object()) << run;
  EXPECT_EQ(run["status"], "completed") << run;
  const std::vector<nlohmann::json> requests = Requests();
  ASSERT_EQ(requests.size(), 2u);
  EXPECT_EQ(LastToolResult(requests[1]), kNotes);
}

TEST_F(RunOriginE2eTest, AResumeFromElsewhereKeepsTheWorkspaceAndTheModel) {
  ASSERT_NO_FATAL_FAILURE(StartServer(kOutageScript));
  nlohmann::json failed = Run("model-a", dir_->File("project"));
  ASSERT_EQ(failed["status"], "failed") << failed;
  // No provider settings at all: the run's own provider, base URL and model are used.
  const ChildOutput resumed = Mend({"resume", "r1"}, dir_->File("elsewhere"));
  EXPECT_EQ(resumed.status.code, 0) << resumed.err;
  EXPECT_EQ(Json(resumed)["status"], "completed") << resumed.out;
  const std::vector<nlohmann::json> requests = Requests();
  ASSERT_EQ(requests.size(), 4u);
  for (const nlohmann::json& body : requests) EXPECT_EQ(body["model"], "model-a");
  EXPECT_EQ(LastToolResult(requests[3]), kNotes);  // read in the recorded workspace
}

TEST_F(RunOriginE2eTest, RecoveryWithAnotherDefaultModelKeepsTheRunsModel) {
  ASSERT_NO_FATAL_FAILURE(StartServer(kOutageScript));
  ASSERT_EQ(Run("model-a", dir_->File("project"))["status"], "failed");
  const ChildOutput recovered =
      Mend({"recover", "--once"}, dir_->File("elsewhere"),
           {"MEND_PROVIDER=openai", "MEND_MODEL=model-b", "MEND_BASE_URL=" + Url()});
  EXPECT_EQ(recovered.status.code, 0) << recovered.err;
  EXPECT_THAT(Json(recovered)["completed"], ::testing::ElementsAre("r1")) << recovered.out;
  const std::vector<nlohmann::json> requests = Requests();
  ASSERT_EQ(requests.size(), 4u);
  EXPECT_EQ(requests[2]["model"], "model-a");
  EXPECT_EQ(requests[3]["model"], "model-a");
}

// The provider flags of `mend recover` are defaults for new runs: a run it recovers keeps the
// model it recorded and records no change.
TEST_F(RunOriginE2eTest, RecoveryFlagsAreDefaultsForNewRunsOnly) {
  ASSERT_NO_FATAL_FAILURE(StartServer(kOutageScript));
  ASSERT_EQ(Run("model-a", dir_->File("project"))["status"], "failed");
  const ChildOutput recovered =
      Mend({"recover", "--once", "--provider", "openai", "--model", "model-b", "--base-url", Url()},
           dir_->File("elsewhere"));
  EXPECT_EQ(recovered.status.code, 0) << recovered.err;
  EXPECT_THAT(Json(recovered)["completed"], ::testing::ElementsAre("r1")) << recovered.out;
  const std::vector<nlohmann::json> requests = Requests();
  ASSERT_EQ(requests.size(), 4u);
  EXPECT_EQ(requests[2]["model"], "model-a");
  EXPECT_EQ(requests[3]["model"], "model-a");
  const nlohmann::json shown = Json(Mend({"show", "r1"}, dir_->path()));
  EXPECT_EQ(shown["model"]["model"], "model-a") << shown;
  EXPECT_EQ(shown["model_changes"], nlohmann::json::array()) << shown;
}

// --override-recorded is the explicit request: the flags then switch the runs it resumes, and
// each records the switch.
TEST_F(RunOriginE2eTest, OverrideRecordedLetsRecoveryFlagsSwitchTheRun) {
  ASSERT_NO_FATAL_FAILURE(StartServer(kOutageScript));
  ASSERT_EQ(Run("model-a", dir_->File("project"))["status"], "failed");
  const ChildOutput recovered = Mend(
      {"recover", "--once", "--model", "model-b", "--override-recorded"}, dir_->File("elsewhere"));
  EXPECT_EQ(recovered.status.code, 0) << recovered.err;
  EXPECT_THAT(Json(recovered)["completed"], ::testing::ElementsAre("r1")) << recovered.out;
  const std::vector<nlohmann::json> requests = Requests();
  ASSERT_EQ(requests.size(), 4u);
  EXPECT_EQ(requests[2]["model"], "model-b");
  const nlohmann::json shown = Json(Mend({"show", "r1"}, dir_->path()));
  EXPECT_EQ(shown["model"]["model"], "model-b") << shown;
  ASSERT_EQ(shown["model_changes"].size(), 1u) << shown;
  EXPECT_EQ(shown["model_changes"][0]["from"]["model"], "model-a");
}

// The same for `mend serve`: its recovery loop resumes the run on its recorded model, whatever
// --base-url and --model it was started with.
TEST_F(RunOriginE2eTest, ServeFlagsAreDefaultsForNewRunsOnly) {
  ASSERT_NO_FATAL_FAILURE(StartServer(kOutageScript, /*announce=*/true));
  ASSERT_EQ(Run("model-a", dir_->File("project"))["status"], "failed");
  for (int n = 1; n <= 2; ++n) ASSERT_NO_FATAL_FAILURE(AwaitRequest(n));
  // Nothing listens at the serve's own base URL: a run moved there would fail, not complete.
  std::vector<std::string> argv = {
      MEND_BINARY,   "--home",     dir_->File("home"), "serve",      "--listen",
      "127.0.0.1:0", "--provider", "openai",           "--base-url", "http://127.0.0.1:9",
      "--model",     "model-b"};
  std::vector<std::string> env = env_;
  env.push_back("MEND_SERVE_DRAIN_TIMEOUT=20s");
  auto serve = ChildProcess::Spawn(argv, env, dir_->File("elsewhere"));
  MEND_ASSERT_OK(serve);
  MEND_ASSERT_OK((*serve)->ReadStdoutLine(kBound));  // listening on ...
  // The recovery pass, at once: the resumed run's two model turns reach this server.
  for (int n = 3; n <= 4; ++n) ASSERT_NO_FATAL_FAILURE(AwaitRequest(n));
  MEND_ASSERT_OK((*serve)->Kill(SIGTERM));
  auto stopped = (*serve)->Finish(kBound);
  MEND_ASSERT_OK(stopped);
  captured_ += stopped->out + stopped->err;
  EXPECT_EQ(stopped->status.code, 0) << stopped->err;
  const std::vector<nlohmann::json> requests = Requests();
  ASSERT_EQ(requests.size(), 4u);
  EXPECT_EQ(requests[2]["model"], "model-a");
  EXPECT_EQ(requests[3]["model"], "model-a");
  const nlohmann::json shown = Json(Mend({"show", "r1"}, dir_->path()));
  EXPECT_EQ(shown["status"], "completed") << shown;
  EXPECT_EQ(shown["model"]["base_url"], Url()) << shown;
  EXPECT_EQ(shown["model_changes"], nlohmann::json::array()) << shown;
}

TEST_F(RunOriginE2eTest, AModelFlagOnResumeSwitchesTheRunAndIsRecorded) {
  ASSERT_NO_FATAL_FAILURE(StartServer(kOutageScript));
  ASSERT_EQ(Run("model-a", dir_->File("project"))["status"], "failed");
  const ChildOutput resumed = Mend({"resume", "r1", "--model", "model-c"}, dir_->path());
  EXPECT_EQ(Json(resumed)["status"], "completed") << resumed.out << resumed.err;
  const std::vector<nlohmann::json> requests = Requests();
  ASSERT_EQ(requests.size(), 4u);
  EXPECT_EQ(requests[2]["model"], "model-c");
  auto events = ReadWholeFile(dir_->File("home/events.jsonl"));
  MEND_ASSERT_OK(events);
  EXPECT_THAT(*events, HasSubstr("run.model_changed"));
  EXPECT_THAT(*events, HasSubstr("openai model-c"));
}

TEST_F(RunOriginE2eTest, AMissingModelIsAUsageErrorBeforeAnyRunExists) {
  const ChildOutput run =
      Mend({"run", dir_->File("agent"), "task", "--provider", "openai"}, dir_->File("project"));
  EXPECT_EQ(run.status.code, 2);
  EXPECT_THAT(run.err, HasSubstr("provider.model is not set"));
  EXPECT_THAT(run.err, HasSubstr("--model"));
  EXPECT_EQ(std::count(run.err.begin(), run.err.end(), '\n'), 1) << run.err;
  const ChildOutput pending = Mend({"pending"}, dir_->path());
  EXPECT_EQ(Json(pending)["runs"], nlohmann::json::array()) << pending.out;
}

// A real run recorded with --record replays offline from its cassette: same tool calls, same
// answer, no server.
TEST_F(RunOriginE2eTest, ARecordedRunReplaysFromItsCassette) {
  ASSERT_NO_FATAL_FAILURE(StartServer(kReadScript));
  const std::string cassette = dir_->File("cassette.json");
  const ChildOutput recorded =
      Mend({"run", dir_->File("agent"), "what do the notes say?", "--provider", "openai", "--model",
            "model-a", "--base-url", Url(), "--record", cassette},
           dir_->File("project"));
  ASSERT_EQ(Json(recorded)["status"], "completed") << recorded.out << recorded.err;
  std::error_code error;
  const auto perms = std::filesystem::status(cassette, error).permissions();
  ASSERT_FALSE(error);
  EXPECT_EQ(perms & std::filesystem::perms::all,
            std::filesystem::perms::owner_read | std::filesystem::perms::owner_write);
  auto text = ReadWholeFile(cassette);
  MEND_ASSERT_OK(text);
  EXPECT_THAT(*text, Not(HasSubstr(kKey)));
  MEND_ASSERT_OK(server_->Kill(SIGTERM));
  server_.reset();

  const ChildOutput replayed = Mend({"run", dir_->File("agent"), "what do the notes say?",
                                     "--provider", "scripted", "--script-file", cassette},
                                    dir_->File("project"), {}, "home2");
  nlohmann::json replay = Json(replayed);
  EXPECT_EQ(replay["status"], "completed") << replayed.out << replayed.err;
  EXPECT_EQ(replay["output"], "done");
  EXPECT_EQ(replay["steps"], 2);
}

// A scripted run that fails half way and is resumed by another process continues its script
// where the conversation stands instead of replaying it from the start.
TEST_F(RunOriginE2eTest, AScriptedRunResumedInAnotherProcessContinuesItsScript) {
  MEND_ASSERT_OK(dir_->WriteFile("script.json", R"({"steps": [
    {"tool_calls": [{"id": "c1", "name": "list_dir", "arguments": {"path": "."}}]},
    {"error": {"code": "unavailable", "message": "scripted outage"}},
    {"tool_calls": [{"id": "c2", "name": "read_file", "arguments": {"path": "notes.txt"}}]},
    {"text": "the window is Tuesday"}
  ]})"));
  const std::vector<std::string> scripted = {"--provider", "scripted", "--script-file",
                                             dir_->File("script.json")};
  std::vector<std::string> run = {"run", dir_->File("agent"), "when?", "--id", "s1"};
  run.insert(run.end(), scripted.begin(), scripted.end());
  ASSERT_EQ(Json(Mend(run, dir_->File("project")))["status"], "failed");
  const ChildOutput resumed = Mend({"resume", "s1"}, dir_->File("elsewhere"));
  nlohmann::json result = Json(resumed);
  EXPECT_EQ(result["status"], "completed") << resumed.out << resumed.err;
  EXPECT_EQ(result["output"], "the window is Tuesday");
  EXPECT_EQ(result["steps"], 3);
}

}  // namespace
}  // namespace mend::testing
