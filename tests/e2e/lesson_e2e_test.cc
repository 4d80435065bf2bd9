// Reflexion end to end with the real binaries: a `mend run` fails against the fake LLM server, its
// lesson worker asks the model for the lesson and the process is killed with SIGKILL while that
// request is in flight; a later `mend reflect drain` (a new process) replays the WAL, the model
// answers, and `mend memory recall` for a similar task shows the lesson.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <signal.h>

#include <charconv>
#include <chrono>
#include <filesystem>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <system_error>
#include <vector>

#include "tests/support/e2e_harness.h"

namespace mend::testing {
namespace {

using ::testing::HasSubstr;

constexpr char kKey[] = "sk-lesson-e2e-KEY-7373";
constexpr char kTask[] = "Rotate the TLS certificate of the billing gateway.";
constexpr char kSimilarTask[] = "Rotate the TLS certificate of the billing gateway again.";

// The run's only model turn fails permanently; the lesson worker's request hangs (the process is
// killed meanwhile); the drain in the next process gets the lesson.
constexpr char kScript[] = R"([
  {"status": 400, "error_type": "context_length_exceeded",
   "error_message": "the certificate bundle pasted into the prompt is too long"},
  {"text": "never delivered", "latency_ms": 60000},
  {"text": "<situation>Rotating the TLS certificate of the billing gateway</situation>\n<mistake>Pasted the whole certificate bundle into the prompt</mistake>\n<correction>Refer to the certificate by its file path instead of pasting it</correction>\n<tags>tls, certificate, billing-gateway</tags>"}
])";

class LessonE2eTest : public E2eTest {
 protected:
  LessonE2eTest()
      : E2eTest({.secret = kKey,
                 .agent_toml = "name = \"gateway\"\ntools = []\n",
                 .instructions = "Operate the billing gateway.\n"}) {}

  void StartServer() {
    std::vector<std::string> args = {"--script", WriteTestFile("script.json", kScript)};
    for (const std::string& flag : ApiKeyFlags()) args.push_back(flag);
    args.push_back("--announce");
    StartFakeLlm(args);
  }

  std::vector<std::string> Argv(std::vector<std::string> args, bool provider) {
    args.insert(args.begin(), "--json");
    return MendCommand(provider ? OnServer(std::move(args)) : args);
  }

  nlohmann::json MendJson(std::vector<std::string> args, bool provider) {
    const nlohmann::json result =
        E2eTest::MendJson(provider ? OnServer(std::move(args)) : std::move(args));
    EXPECT_THAT(captured_, ::testing::Not(HasSubstr(kKey)));
    return result;
  }
};

TEST_F(LessonE2eTest, FailedRunLeavesALessonThatSurvivesAKillAndIsRecalled) {
  ASSERT_NO_FATAL_FAILURE(StartServer());
  auto run = ChildProcess::Spawn(Argv({"run", dir_->File("agent"), kTask}, true), env_);
  MEND_ASSERT_OK(run);
  // Request 1 is the run's turn (it fails); request 2 is the lesson worker's, held by the server.
  for (int n = 1; n <= 2; ++n) {
    auto line = server_->ReadStdoutLine(kBound);
    MEND_ASSERT_OK(line);
    ASSERT_EQ(*line, "request " + std::to_string(n) + " POST /v1/chat/completions");
  }
  // The lesson job is written before the failure is recorded (docs/hooks.md), so the worker's
  // request can arrive first: wait until the run is recorded failed, then kill the process while
  // the lesson request is still in flight.
  const auto deadline = std::chrono::steady_clock::now() + kBound;
  for (;;) {
    const nlohmann::json polled = MendJson({"pending"}, false);
    if (polled["runs"].size() == 1 && polled["runs"][0]["status"] == "failed") break;
    ASSERT_LT(std::chrono::steady_clock::now(), deadline) << polled;
  }
  MEND_ASSERT_OK((*run)->Kill(SIGKILL));
  auto killed = (*run)->Finish(kBound);
  MEND_ASSERT_OK(killed);
  EXPECT_FALSE(killed->status.exited);
  // The run ended failed before the process was killed.
  const nlohmann::json pending = MendJson({"pending"}, false);
  ASSERT_EQ(pending["runs"].size(), 1u) << pending;
  EXPECT_EQ(pending["runs"][0]["status"], "failed");

  nlohmann::json status = MendJson({"reflect"}, false);
  EXPECT_EQ(status["wal_records"], 1) << status;
  nlohmann::json listed = MendJson({"reflect", "list"}, false);
  ASSERT_EQ(listed["pending"].size(), 1u) << listed;
  EXPECT_EQ(listed["pending"][0]["task"], kTask);
  EXPECT_EQ(listed["pending"][0]["trigger"], "error");

  const nlohmann::json drained = MendJson({"reflect", "drain"}, true);
  EXPECT_EQ(drained["succeeded"], 1) << drained;
  EXPECT_EQ(drained["remaining"], 0) << drained;

  const nlohmann::json recall = MendJson({"memory", "recall", kSimilarTask}, false);
  ASSERT_EQ(recall["facts"].size(), 1u) << recall;
  EXPECT_EQ(recall["facts"][0]["category"], "lesson");
  EXPECT_THAT(recall["section"].get<std::string>(),
              HasSubstr("CORRECTION: Refer to the certificate by its file path"));
  status = MendJson({"reflect"}, false);
  EXPECT_EQ(status["wal_records"], 0) << status;
  EXPECT_EQ(status["dlq_size"], 0) << status;
}

TEST_F(LessonE2eTest, ExitGivesUpOnAHungLessonAtTheDrainTimeoutAndKeepsTheJob) {
  ASSERT_NO_FATAL_FAILURE(StartServer());
  // The lesson request is held for a minute; the process may wait only one second for it.
  env_.push_back("MEND_QUALITY_REFLEXION_QUEUE_DRAIN_TIMEOUT=1s");
  auto run = RunProcess(Argv({"run", dir_->File("agent"), kTask}, true), env_, kBound);
  MEND_ASSERT_OK(run);
  EXPECT_TRUE(run->status.exited) << run->err;
  EXPECT_EQ(run->status.code, 1) << run->err;  // the run failed; the exit did not hang
  const nlohmann::json result = nlohmann::json::parse(run->out, nullptr, false);
  ASSERT_TRUE(result.is_object()) << run->out;
  EXPECT_EQ(result["status"], "failed");
  // The abandoned attempt is not held against the job: it waits in the WAL, untouched.
  const nlohmann::json listed = MendJson({"reflect", "list"}, false);
  ASSERT_EQ(listed["pending"].size(), 1u) << listed;
  EXPECT_EQ(listed["pending"][0]["attempts"], 0);
  const nlohmann::json drained = MendJson({"reflect", "drain"}, true);
  EXPECT_EQ(drained["succeeded"], 1) << drained;
}

}  // namespace
}  // namespace mend::testing
