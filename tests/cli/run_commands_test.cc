// The commands that run agents (run, pending, resume, fork, approve, answer, chat, demo), in
// process, on a real temporary home (SQLite needs a disk) and a scripted model read from a file.
// A new `mend` invocation answers from the script by the conversation's position (the scripted
// provider's turn groups), so a run continued by another invocation continues its script. The
// error steps of the turn a run stopped at are replayed by the next invocation, so a test that
// lets a failed run recover writes a new script without them.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <stdlib.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "cli/cli.h"
#include "mend/base/file_system.h"
#include "tests/cli/cli_home_test.h"
#include "tests/support/status_matchers.h"

namespace mend::cli {
namespace {

using ::testing::AllOf;
using ::testing::ContainsRegex;
using ::testing::HasSubstr;
using ::testing::Not;
using ::testing::StartsWith;

constexpr char kAgentToml[] =
    "name = \"helper\"\n"
    "tools = [\"read_file\", \"ask_human\", \"deploy\"]\n"
    "workspace = \"ws\"\n";
constexpr char kDeployTool[] =
    "name = \"deploy\"\n"
    "description = \"Deploys the service.\"\n"
    "command = [\"/bin/echo\", \"deployed\"]\n"
    "requires_approval = true\n"
    "[parameters]\ntype = \"object\"\nproperties = {}\n";

class RunCommandsTest : public CliHomeTest {
 protected:
  void SetUp() override {
    CliHomeTest::SetUp();
    Write(agent_ + "/agent.toml", kAgentToml);
    Write(agent_ + "/instructions.md", "Help the user.\n");
    Write(agent_ + "/tools/deploy.toml", kDeployTool);
    Write(agent_ + "/ws/notes.txt", "the deploy window is Tuesday\n");
  }
};

TEST_F(RunCommandsTest, RunPrintsOutputOnStdoutAndSummaryOnStderr) {
  Script(R"([{"text": "Hello!", "input_tokens": 1200, "output_tokens": 34}])");
  EXPECT_EQ(MendWithModel({"run", agent_, "say hello", "--id", "r1"}), 0) << err();
  EXPECT_EQ(out(), "Hello!\n");
  EXPECT_THAT(err(), StartsWith("run r1 completed in 1 step, 1,234 tokens, $"));
}

TEST_F(RunCommandsTest, TraceparentMakesTheRunAChildOfTheCallersTrace) {
  Script(R"([{"text": "one"}, {"text": "two"}, {"text": "three"}])");
  constexpr char kTrace[] = "4bf92f3577b34da6a3ce929d0e0e4736";
  const std::string parent = std::string("00-") + kTrace + "-00f067aa0ba902b7-01";
  EXPECT_EQ(MendWithModel({"run", agent_, "a", "--id", "r1", "--json", "--traceparent", parent}), 0)
      << err();
  EXPECT_EQ(Json()["trace_id"], kTrace);

  // From the environment when there is no flag.
  env_["TRACEPARENT"] = parent;
  EXPECT_EQ(MendWithModel({"run", agent_, "b", "--id", "r2", "--json"}), 0) << err();
  EXPECT_EQ(Json()["trace_id"], kTrace);

  // A bad flag is a usage error; a bad variable is ignored with a warning.
  EXPECT_EQ(MendWithModel({"run", agent_, "c", "--traceparent", "00-nope"}), 2);
  EXPECT_THAT(err(), HasSubstr("--traceparent"));
  env_["TRACEPARENT"] = "garbage";
  EXPECT_EQ(MendWithModel({"run", agent_, "c", "--id", "r3", "--json"}), 0) << err();
  EXPECT_THAT(err(), HasSubstr("ignoring TRACEPARENT"));
  EXPECT_NE(Json()["trace_id"], kTrace);
}

TEST_F(RunCommandsTest, RunJsonHasTheStableShape) {
  Script(R"([{"tool_calls": [{"id": "c1", "name": "read_file", "arguments": {"path": "notes.txt"}}],
              "input_tokens": 10, "output_tokens": 5},
             {"text": "Tuesday", "input_tokens": 20, "output_tokens": 3}])");
  EXPECT_EQ(MendWithModel({"run", agent_, "when?", "--id", "r1", "--json"}), 0) << err();
  const nlohmann::json doc = Json();
  EXPECT_EQ(JsonKeys(doc),
            (std::set<std::string>{"run_id", "status", "output", "steps", "usage", "cost_usd",
                                   "error", "waiting", "question", "trace_id"}));
  EXPECT_EQ(doc["run_id"], "r1");
  EXPECT_EQ(doc["status"], "completed");
  // The run's trace is in observe.db under that id.
  EXPECT_TRUE(doc["trace_id"].is_string() && doc["trace_id"].get<std::string>().size() == 32)
      << doc["trace_id"];
  EXPECT_EQ(doc["output"], "Tuesday");
  EXPECT_EQ(doc["steps"], 2);
  EXPECT_EQ(doc["usage"]["input_tokens"], 30);
  EXPECT_EQ(doc["usage"]["output_tokens"], 8);
  EXPECT_TRUE(doc["cost_usd"].is_number());
  EXPECT_TRUE(doc["error"].is_null());
  EXPECT_TRUE(doc["waiting"].is_null());
  EXPECT_EQ(err(), "");
}

TEST_F(RunCommandsTest, TaskComesFromStdinWhenOmitted) {
  Script(R"([{"text": "done"}])");
  EXPECT_EQ(MendWithModel({"run", agent_, "--id", "r1", "--json"}, "  the task from a pipe\n"), 0);
  EXPECT_EQ(Json()["status"], "completed");
  EXPECT_EQ(Mend({"fork", "r1", "--from-checkpoint", "1", "--json"}), 0) << err();
}

TEST_F(RunCommandsTest, EmptyTaskIsAUsageError) {
  EXPECT_EQ(MendWithModel({"run", agent_}, "   \n"), 2);
  EXPECT_THAT(err(), AllOf(StartsWith("mend: a task is needed"),
                           HasSubstr("(run 'mend run --help' for usage)")));
}

TEST_F(RunCommandsTest, FailedRunPrintsJsonAndOneErrorLineAndExitsOne) {
  Script(R"([{"error": {"code": "invalid_argument", "message": "context too long"}}])");
  EXPECT_EQ(MendWithModel({"run", agent_, "go", "--id", "r1", "--json"}), 1);
  const nlohmann::json doc = Json();
  EXPECT_EQ(doc["status"], "failed");
  EXPECT_EQ(doc["error"]["class"], "permanent");
  EXPECT_EQ(doc["error"]["retryable"], false);
  EXPECT_EQ(JsonKeys(doc["error"]),
            (std::set<std::string>{"code", "message", "class", "retryable"}));
  EXPECT_THAT(err(), AllOf(StartsWith("mend: run r1 failed: "), HasSubstr("context too long")));
  const std::string error = err();
  EXPECT_EQ(std::count(error.begin(), error.end(), '\n'), 1);
}

TEST_F(RunCommandsTest, ATransientModelErrorIsRetriedInTheRun) {
  env_["MEND_PROVIDER_RETRIES"] = "2";
  env_["MEND_PROVIDER_RETRY_DELAY"] = "10ms";
  Script(R"([{"error": {"code": "unavailable", "message": "connection reset"}},
             {"text": "answered after a retry"}])");
  EXPECT_EQ(MendWithModel({"run", agent_, "go", "--id", "r1", "--json"}), 0) << err();
  EXPECT_EQ(Json()["status"], "completed");
  EXPECT_EQ(Json()["output"], "answered after a retry");
}

TEST_F(RunCommandsTest, ABrokenAgentFolderIsInvalidInputAndExitsTwo) {
  Write(agent_ + "/agent.toml", "name = \"helper\"\ntools = [\"read_flie\"]\n");
  EXPECT_EQ(MendWithModel({"run", agent_, "go", "--json"}), 2);
  EXPECT_EQ(Json()["error"]["code"], "MEND_AGENT_FOLDER_INVALID");
  EXPECT_THAT(err(), HasSubstr("unknown tool \"read_flie\" (did you mean read_file?)"));

  Write(agent_ + "/agent.toml", kAgentToml);
  std::filesystem::rename(agent_ + "/instructions.md", agent_ + "/instruction.md");
  EXPECT_EQ(MendWithModel({"run", agent_, "go"}), 2);
  EXPECT_EQ(err(), "mend: " + agent_ +
                       "/instructions.md: missing; an agent folder needs instructions.md, the "
                       "agent's system prompt (did you mean instruction.md?)\n");
  EXPECT_EQ(MendWithModel({"run", dir_ + "/no-such-agent", "go"}), 2);
}

TEST_F(RunCommandsTest, TheWorkspaceIsRecordedAndShownInNormalForm) {
  Write(agent_ + "/agent.toml",
        "name = \"helper\"\ntools = [\"read_file\"]\nworkspace = \"../agent/./ws/\"\n");
  Script(R"([{"text": "ok"}])");
  EXPECT_EQ(MendWithModel({"run", agent_, "go", "--id", "r1"}), 0) << err();
  EXPECT_EQ(Mend({"show", "r1", "--json"}), 0) << err();
  EXPECT_EQ(Json()["workspace"], agent_ + "/ws");
  EXPECT_EQ(Mend({"show", "r1"}), 0) << err();
  EXPECT_THAT(out(), Not(HasSubstr("/../")));
}

TEST_F(RunCommandsTest, AHostedProviderWithoutAnApiKeyIsWarnedAboutBeforeTheFirstRequest) {
  // 192.0.2.0/24 is reserved for documentation: nothing answers there.
  EXPECT_EQ(Mend({"run", agent_, "go", "--provider", "openai", "--model", "m", "--base-url",
                  "http://192.0.2.1:9", "--connect-timeout", "100ms"}),
            1);
  EXPECT_THAT(err(), StartsWith("mend: warning: no API key is configured for provider openai at "
                                "http://192.0.2.1:9; requests go out without one. Set "
                                "MEND_API_KEY (or OPENAI_API_KEY)"));

  // A server on this machine (Ollama, vLLM) usually needs none: no warning.
  EXPECT_EQ(Mend({"run", agent_, "go", "--provider", "openai", "--model", "m", "--base-url",
                  "http://127.0.0.1:9"}),
            1);
  EXPECT_THAT(err(), Not(HasSubstr("warning")));

  env_["OPENAI_API_KEY"] = "sk-test-key-for-the-warning";
  EXPECT_EQ(Mend({"run", agent_, "go", "--provider", "openai", "--model", "m", "--base-url",
                  "http://192.0.2.1:9", "--connect-timeout", "100ms"}),
            1);
  EXPECT_THAT(err(), Not(HasSubstr("warning")));
}

TEST_F(RunCommandsTest, PendingJsonHasTheStableShape) {
  EXPECT_EQ(Mend({"pending", "--json"}), 0) << err();
  EXPECT_EQ(out(), "{\"more\":0,\"next\":null,\"runs\":[],\"total\":0}\n");

  Script(R"([{"error": {"code": "unavailable", "message": "upstream 503"}}])");
  EXPECT_EQ(MendWithModel({"run", agent_, "go", "--id", "r1"}), 1);
  EXPECT_EQ(Mend({"pending", "--json"}), 0) << err();
  const nlohmann::json doc = Json();
  ASSERT_EQ(doc["runs"].size(), 1u);
  const nlohmann::json& run = doc["runs"][0];
  EXPECT_EQ(
      JsonKeys(run),
      (std::set<std::string>{"id", "agent", "status", "steps", "checkpoint", "step", "attempts",
                             "quarantined", "next_attempt_at", "waiting", "last_error", "workspace",
                             "model", "agent_changed", "interrupted", "interruption"}));
  EXPECT_EQ(run["id"], "r1");
  EXPECT_EQ(run["agent"], "helper");
  EXPECT_EQ(run["status"], "failed");
  EXPECT_EQ(run["quarantined"], false);
  EXPECT_TRUE(run["waiting"].is_null());
  EXPECT_EQ(run["last_error"]["class"], "transient");
  EXPECT_EQ(run["last_error"]["retryable"], true);
  EXPECT_TRUE(run["step"].is_number_integer());

  EXPECT_EQ(Mend({"pending"}), 0);
  EXPECT_THAT(out(), AllOf(HasSubstr("r1"), HasSubstr("failed"), HasSubstr("upstream 503")));
}

TEST_F(RunCommandsTest, ResumeContinuesAFailedRun) {
  Script(R"([{"error": {"code": "unavailable", "message": "upstream 503"}}])");
  EXPECT_EQ(MendWithModel({"run", agent_, "go", "--id", "r1"}), 1);
  Script(R"([{"text": "recovered"}])");
  EXPECT_EQ(MendWithModel({"resume", "r1", "--json"}), 0) << err();
  EXPECT_EQ(Json()["status"], "completed");
  EXPECT_EQ(Json()["output"], "recovered");
  EXPECT_EQ(Mend({"pending", "--json"}), 0);
  EXPECT_EQ(Json()["runs"].size(), 0u);
}

TEST_F(RunCommandsTest, ForkCreatesARunThatResumes) {
  Script(
      R"([{"tool_calls": [{"id": "c1", "name": "read_file", "arguments": {"path": "notes.txt"}}]},
             {"text": "first answer"}])");
  EXPECT_EQ(MendWithModel({"run", agent_, "when?", "--id", "r1"}), 0) << err();
  EXPECT_EQ(Mend({"fork", "r1", "--from-step", "3", "--json"}), 0) << err();
  EXPECT_EQ(Json()["run_id"], "r1.fork-1");
  EXPECT_EQ(Json()["parent_id"], "r1");
  EXPECT_EQ(Json()["from_step"], 3);
  // The fork continues the conversation after the tool call: its next answer is the script's
  // second, here replaced by a new one.
  Script(
      R"([{"tool_calls": [{"id": "c1", "name": "read_file", "arguments": {"path": "notes.txt"}}]},
             {"text": "second answer"}])");
  EXPECT_EQ(MendWithModel({"resume", "r1.fork-1"}), 0) << err();
  EXPECT_EQ(out(), "second answer\n");
}

TEST_F(RunCommandsTest, ApproveRunsTheToolAndTheRunContinues) {
  Script(R"([{"tool_calls": [{"id": "c1", "name": "deploy", "arguments": {}}]},
             {"text": "deployed it"}])");
  EXPECT_EQ(MendWithModel({"run", agent_, "deploy it", "--id", "r1", "--json"}), 0) << err();
  EXPECT_EQ(Json()["status"], "waiting");
  EXPECT_EQ(Json()["waiting"], "approval");
  EXPECT_THAT(Json()["question"].get<std::string>(), HasSubstr("deploy"));

  EXPECT_EQ(Mend({"pending", "--json"}), 0);
  EXPECT_EQ(Json()["runs"][0]["waiting"], "approval");

  EXPECT_EQ(MendWithModel({"approve", "r1"}), 0) << err();
  EXPECT_EQ(out(), "deployed it\n");
}

TEST_F(RunCommandsTest, DenyReturnsTheReasonToTheModel) {
  Script(R"([{"tool_calls": [{"id": "c1", "name": "deploy", "arguments": {}}]},
             {"text": "not deploying"}])");
  EXPECT_EQ(MendWithModel({"run", agent_, "deploy it", "--id", "r1"}), 0) << err();
  EXPECT_THAT(out(), HasSubstr("mend approve r1"));
  EXPECT_EQ(MendWithModel({"approve", "r1", "--deny", "--reason", "freeze", "--json"}), 0) << err();
  EXPECT_EQ(Json()["status"], "completed");
  EXPECT_EQ(Json()["output"], "not deploying");
}

TEST_F(RunCommandsTest, ReasonWithoutDenyIsAUsageError) {
  EXPECT_EQ(Mend({"approve", "r1", "--reason", "x"}), 2);
}

TEST_F(RunCommandsTest, AnswerGivesTheModelThePersonsAnswer) {
  Script(R"([{"tool_calls": [{"id": "c1", "name": "ask_human",
                              "arguments": {"question": "Which environment?"}}]},
             {"text": "staging it is"}])");
  EXPECT_EQ(MendWithModel({"run", agent_, "deploy", "--id", "r1", "--json"}), 0) << err();
  EXPECT_EQ(Json()["waiting"], "question");
  EXPECT_EQ(Json()["question"], "Which environment?");

  EXPECT_EQ(MendWithModel({"approve", "r1"}), 1);  // it waits for an answer, not an approval
  EXPECT_EQ(MendWithModel({"answer", "r1", "staging"}), 0) << err();
  EXPECT_EQ(out(), "staging it is\n");
}

TEST_F(RunCommandsTest, UnknownRunIdExitsOne) {
  for (const std::vector<std::string>& args : std::vector<std::vector<std::string>>{
           {"resume", "nope"}, {"fork", "nope"}, {"approve", "nope"}, {"answer", "nope", "x"}}) {
    EXPECT_EQ(Mend(args), 1) << args[0];
    EXPECT_EQ(err(), "mend: no run named nope\n") << args[0];
  }
}

TEST_F(RunCommandsTest, PendingNeedsNoApiKeyOrModel) {
  env_["MEND_PROVIDER"] = "openai";  // no model, no key: only commands that call a model care
  EXPECT_EQ(Mend({"pending"}), 0) << err();
  EXPECT_EQ(out(), "no unfinished runs\n");
}

TEST_F(RunCommandsTest, ChatContinuesTheConversationAndHandlesSlashCommands) {
  Script(R"([{"text": "hello"}, {"text": "you said hi"}])");
  EXPECT_EQ(
      MendWithModel({"chat", agent_}, "hi\n/pending\nwhat did I say?\n/bogus\n/quit\nnot sent\n"),
      0)
      << err();
  EXPECT_THAT(out(), AllOf(HasSubstr("hello\n"), HasSubstr("no unfinished runs\n"),
                           HasSubstr("you said hi\n")));
  EXPECT_THAT(err(), HasSubstr("unknown chat command /bogus"));
}

TEST_F(RunCommandsTest, ChatMemoryLongtermListsTheFacts) {
  Script(R"([])");
  EXPECT_EQ(MendWithModel({"chat", agent_}, "/memory longterm\n/quit\n"), 0) << err();
  EXPECT_THAT(out(), HasSubstr("long-term memory is empty\n"));
  EXPECT_EQ(Mend({"memory", "add", "Deploys", "need", "the", "VPN", "--category", "project"}), 0);
  EXPECT_EQ(MendWithModel({"chat", agent_}, "/memory longterm\n/quit\n"), 0) << err();
  EXPECT_THAT(out(), HasSubstr("  [project] Deploys need the VPN\n"));
}

TEST_F(RunCommandsTest, RecoverOnceBringsBackAFailedRunAndReportsThePass) {
  Script(R"([{"error": {"code": "unavailable", "message": "overloaded"}}])");
  EXPECT_EQ(MendWithModel({"run", agent_, "say hi", "--id", "r1"}), 1);
  Script(R"([{"text": "hi again"}])");
  EXPECT_EQ(MendWithModel({"recover", "--once", "--json"}), 0) << err();
  const nlohmann::json report = Json();
  EXPECT_EQ(report["resumed"], nlohmann::json::array({"r1"}));
  EXPECT_EQ(report["completed"], nlohmann::json::array({"r1"}));
  EXPECT_EQ(report["quarantined"], nlohmann::json::array());
  EXPECT_EQ(report["outage"], false);
  EXPECT_EQ(report["skipped"]["leased"], 0);
  EXPECT_EQ(Mend({"pending", "--json"}), 0);
  EXPECT_EQ(Json()["runs"], nlohmann::json::array());
}

TEST_F(RunCommandsTest, RecoverOnceChargesAFailureAndPendingShowsTheNextAttempt) {
  Script(R"([{"error": {"code": "unavailable", "message": "overloaded"}}])");
  EXPECT_EQ(MendWithModel({"run", agent_, "say hi", "--id", "r1"}), 1);
  EXPECT_EQ(MendWithModel({"recover", "--once", "--json", "--interval", "10m"}), 0) << err();
  EXPECT_EQ(Json()["failed"], nlohmann::json::array({"r1"}));
  EXPECT_EQ(Mend({"pending", "--json"}), 0);
  const nlohmann::json run = Json()["runs"][0];
  EXPECT_EQ(run["attempts"], 1);
  EXPECT_TRUE(run["next_attempt_at"].is_string());
  EXPECT_EQ(run["quarantined"], false);
  EXPECT_EQ(Mend({"pending"}), 0);
  EXPECT_THAT(out(), HasSubstr("NEXT ATTEMPT"));
  // Within the backoff the next pass leaves it alone.
  EXPECT_EQ(MendWithModel({"recover", "--once", "--json", "--interval", "10m"}), 0) << err();
  EXPECT_EQ(Json()["skipped"]["backoff"], 1);
}

TEST_F(RunCommandsTest, RecoverOnceTakesAtMostMaxRunsPerPassAndSaysHowManyWait) {
  for (const char* id : {"r1", "r2"}) {
    Script(R"([{"error": {"code": "unavailable", "message": "overloaded"}}])");
    EXPECT_EQ(MendWithModel({"run", agent_, "say hi", "--id", id}), 1);
  }
  Script(R"([{"text": "hi again"}])");
  EXPECT_EQ(MendWithModel({"recover", "--once", "--json", "--max-runs-per-pass", "1"}), 0) << err();
  EXPECT_EQ(Json()["completed"], nlohmann::json::array({"r1"}));
  EXPECT_EQ(Json()["skipped"]["deferred"], 1);
  Script(R"([{"text": "hi again"}])");
  EXPECT_EQ(MendWithModel({"recover", "--once", "--max-runs-per-pass", "1"}), 0) << err();
  EXPECT_THAT(out(), HasSubstr("completed: 1 r2"));
  EXPECT_THAT(out(), Not(HasSubstr("left for the next pass")));
  EXPECT_EQ(Mend({"recover", "--once", "--max-runs-per-pass", "0"}), 2);
}

TEST_F(RunCommandsTest, RecoverOnceTextNamesTheEndpointInAnOutage) {
  // Each process takes the script's steps in turn: every request it sends fails the same way.
  Script(R"([{"error": {"code": "unavailable", "message": "overloaded"}},
             {"error": {"code": "unavailable", "message": "overloaded"}},
             {"error": {"code": "unavailable", "message": "overloaded"}}])");
  for (const char* id : {"r1", "r2", "r3", "r4"}) {
    EXPECT_EQ(MendWithModel({"run", agent_, "say hi", "--id", id}), 1);
  }
  EXPECT_EQ(MendWithModel({"recover", "--once"}), 0) << err();
  EXPECT_THAT(out(), HasSubstr("resumed: 3 r1 r2 r3\ninterrupted: 0\n"));
  EXPECT_THAT(out(), HasSubstr("waiting for their endpoint to come back: 1 due runs\n"));
  EXPECT_THAT(out(), ContainsRegex("provider outage at scripted \\(default URL\\) since "
                                   "[0-9TZ:-]+: its runs wait; next probe at [0-9TZ:-]+\n"));
  EXPECT_THAT(err(), HasSubstr("provider outage at scripted (default URL): its runs wait"));
}

TEST_F(RunCommandsTest, RecoverReadsItsLimitsFromTheEnvironment) {
  Script(R"([{"error": {"code": "unavailable", "message": "overloaded"}}])");
  EXPECT_EQ(MendWithModel({"run", agent_, "say hi", "--id", "r1"}), 1);
  env_["MEND_RECOVER_MAX_ATTEMPTS"] = "1";
  EXPECT_EQ(MendWithModel({"recover", "--once", "--json"}), 0) << err();
  EXPECT_EQ(Json()["quarantined"], nlohmann::json::array({"r1"}));
  EXPECT_EQ(Mend({"pending"}), 0);
  EXPECT_THAT(out(), HasSubstr("never (quarantined)"));
}

TEST_F(RunCommandsTest, RecoverRejectsBadFlags) {
  EXPECT_EQ(Mend({"recover", "--once", "--interval", "soon"}), 2);
  EXPECT_THAT(err(), HasSubstr("--interval"));
  EXPECT_EQ(Mend({"recover", "--once", "--max-attempts", "0"}), 2);
}

TEST_F(RunCommandsTest, DemoGuardStopsTheLoopAndRecoveryBringsTheOutageRunBack) {
  EXPECT_EQ(Mend({"demo", "--json"}), 0) << err();
  const nlohmann::json heal = Json()["heal"];
  EXPECT_EQ(heal["looping_status"], "failed");
  EXPECT_EQ(heal["looping_error"], "MEND_RUN_NO_PROGRESS");
  EXPECT_EQ(heal["looping_retryable"], false);
  EXPECT_EQ(heal["looping_tool_executions"], 2);  // the denied repeats never ran
  ASSERT_EQ(heal["heal_actions"].size(), 5u);
  EXPECT_THAT(heal["heal_actions"][0].get<std::string>(), ::testing::StartsWith("hint: "));
  EXPECT_THAT(heal["heal_actions"][4].get<std::string>(), ::testing::StartsWith("stop: "));
  EXPECT_EQ(heal["outage_status"], "failed");
  EXPECT_EQ(heal["outage_error"], "UNAVAILABLE");
  EXPECT_EQ(heal["recovery"]["resumed"].size(), 1u);
  EXPECT_EQ(heal["recovery"]["completed"], heal["recovery"]["resumed"]);
  // The guard-stopped runs of the heal and the reflexion stories are both left alone.
  EXPECT_EQ(heal["recovery"]["skipped_non_retryable"], 2);
  EXPECT_EQ(heal["outage_final_status"], "completed");
  // The stopped runs (this one and the reflexion story's) stay listed, failed and not retryable,
  // for a person to look at.
  EXPECT_EQ(Mend({"pending", "--json"}), 0);
  ASSERT_EQ(Json()["runs"].size(), 2u);
  EXPECT_EQ(Json()["runs"][0]["last_error"]["code"], "MEND_RUN_NO_PROGRESS");
  EXPECT_EQ(Json()["runs"][1]["last_error"]["code"], "MEND_RUN_NO_PROGRESS");
}

TEST_F(RunCommandsTest, DemoLessonGoesThroughTheQueueAndSurvivesTheCrash) {
  EXPECT_EQ(Mend({"demo", "--json"}), 0) << err();
  const nlohmann::json reflexion = Json()["reflexion"];
  EXPECT_EQ(reflexion["failing_status"], "failed");
  EXPECT_EQ(reflexion["failing_error"], "MEND_RUN_NO_PROGRESS");
  const std::string job = reflexion["lesson_job_id"];
  EXPECT_THAT(job, ::testing::MatchesRegex("[0-9a-f]{16}"));
  EXPECT_EQ(reflexion["replay"]["succeeded"], 1);
  EXPECT_EQ(reflexion["replay"]["dead_lettered"], 0);
  EXPECT_EQ(reflexion["lesson"],
            "LESSON: Fixing a setting of the nightly report job\n"
            "MISTAKE: Guessed the file name settings.cfg and kept reading it after read_file said "
            "it does not exist\n"
            "CORRECTION: The nightly report job's settings live in settings.conf; read that file "
            "directly\n"
            "TRIGGER: error");
  EXPECT_EQ(reflexion["lesson_id"], Json()["memory"]["lesson_id"]);
  // The processed job left the WAL; the lesson fact carries the failed task as provenance.
  EXPECT_FALSE(fs_.Exists(home_ + "/reflexion/wal/" + job + ".wal"));
  EXPECT_EQ(Mend({"memory", "show", reflexion["lesson_id"].get<std::string>(), "--json"}), 0)
      << err();
  EXPECT_THAT(out(), HasSubstr("retries must be at most 5"));
  EXPECT_THAT(Json()["tags"],
              ::testing::IsSupersetOf({"nightly-report", "reflexion", "trigger:error"}));
  auto lessons = ReadFileToString(fs_, home_ + "/reflexion/LESSONS.md");
  MEND_ASSERT_OK(lessons);
  EXPECT_THAT(*lessons, HasSubstr("Fixing a setting of the nightly report job"));
}

TEST_F(RunCommandsTest, DemoCrashesAndResumesWithoutRepeatingSteps) {
  EXPECT_EQ(Mend({"demo"}), 0) << err();
  EXPECT_THAT(out(), AllOf(HasSubstr("simulated crash"), HasSubstr("resumes"),
                           HasSubstr("completed steps were not repeated"),
                           HasSubstr("| ## Long-term Memory"),
                           HasSubstr("the reflexion hook wrote lesson job "),
                           HasSubstr("a new process replayed the WAL: 1 lesson stored"),
                           HasSubstr("it received no long-term memory")));
  // It ends with the trace of the crashed-and-resumed run: both attempts, in one trace.
  const std::string text = out();
  const size_t trace = text.find("\ntrace of run-");
  ASSERT_NE(trace, std::string::npos) << text;
  const std::string tree = text.substr(trace);
  EXPECT_THAT(tree, AllOf(HasSubstr("attempt=send"), HasSubstr("simulated crash"),
                          HasSubstr("attempt=resume  status=completed"),
                          HasSubstr("execute_tool edit_file"),
                          HasSubstr("ERROR tool_error: no such file or directory")));
  EXPECT_EQ(err(), "");
}

TEST_F(RunCommandsTest, DemoJsonCountsRequestsAndToolExecutions) {
  EXPECT_EQ(Mend({"demo", "--json"}), 0) << err();
  const nlohmann::json doc = Json();
  EXPECT_EQ(doc["status"], "completed");
  EXPECT_EQ(doc["repeated_steps"], 0);
  const nlohmann::json& requests = doc["model_requests"];
  EXPECT_EQ(requests["before_crash"].get<int>() + requests["after_resume"].get<int>(),
            requests["scripted"].get<int>());
  EXPECT_GT(requests["after_resume"].get<int>(), 0);
  for (const auto& [id, n] : doc["tool_executions"].items()) EXPECT_EQ(n, 1) << id;
  EXPECT_EQ(doc["tool_failures"], 1);
  EXPECT_EQ(doc["trace_id"].get<std::string>().size(), 32u);
  EXPECT_EQ(doc["crash"]["status"], "running");
  EXPECT_GT(doc["cost_usd"].get<double>(), 0.0);
  // The agent really edited its workspace, once.
  auto settings = ReadFileToString(fs_, home_ + "/demo-agent/workspace/settings.conf");
  MEND_ASSERT_OK(settings);
  EXPECT_THAT(*settings, HasSubstr("retries = 3\n"));
  EXPECT_THAT(*settings, HasSubstr("timeout_seconds = 30\n"));
}

TEST_F(RunCommandsTest, DemoLessonReachesTheSimilarTaskOnly) {
  EXPECT_EQ(Mend({"demo", "--json"}), 0) << err();
  const nlohmann::json memory = Json()["memory"];
  const std::string section = memory["similar_section"];
  EXPECT_THAT(section, ::testing::StartsWith("## Long-term Memory\n"));
  EXPECT_THAT(section, HasSubstr("- [lesson] LESSON: Fixing a setting of the nightly report job\n"
                                 "  MISTAKE: Guessed the file name settings.cfg and kept reading"));
  EXPECT_EQ(memory["similar_status"], "completed");
  EXPECT_EQ(memory["similar_steps"], 3);
  EXPECT_EQ(memory["similar_tool_failures"], 0);
  EXPECT_EQ(memory["unrelated_received_memory"], false);
  EXPECT_EQ(memory["unrelated_status"], "completed");
  EXPECT_EQ(memory["lesson_helped"], 1);
  // `mend memory recall` shows exactly the section the run received.
  EXPECT_EQ(Mend({"memory", "recall", memory["similar_task"].get<std::string>()}), 0) << err();
  EXPECT_EQ(out(), section + "\n");
}

TEST_F(RunCommandsTest, DemoImproveQueuesATestedProposalThatApplyWrites) {
  EXPECT_EQ(Mend({"demo", "--json"}), 0) << err();
  const nlohmann::json improve = Json()["improve"];
  EXPECT_EQ(improve["outcome"], "proposal");
  ASSERT_EQ(improve["cases"].size(), 3u);  // the two stopped runs and the haiku case
  EXPECT_EQ(improve["held_out"], "haiku");
  EXPECT_EQ(improve["runs"], 12);  // 3 cases x 2 repeats x (baseline, candidate)
  EXPECT_THAT(improve["card"].get<std::string>(),
              HasSubstr("+When a file you need does not exist, say so in one sentence and stop"));
  const std::string id = improve["attempt_id"];

  EXPECT_EQ(Mend({"improve", "list", "--json"}), 0) << err();
  ASSERT_EQ(Json()["attempts"].size(), 1u);
  EXPECT_EQ(Json()["attempts"][0]["attempt_id"], id);
  EXPECT_EQ(Json()["attempts"][0]["proposal"], "queued");
  EXPECT_EQ(Mend({"improve", "show", id, "--json"}), 0) << err();
  EXPECT_EQ(Json()["recomputed_matches"], true);
  EXPECT_EQ(Json()["proposal"]["files"], nlohmann::json::array({"instructions.md"}));

  // Nothing changed until a person applies it.
  const std::string instructions = home_ + "/demo-agent/instructions.md";
  EXPECT_THAT(*ReadFileToString(fs_, instructions), Not(HasSubstr("does not exist")));
  EXPECT_EQ(Mend({"improve", "apply", id}), 0) << err();
  EXPECT_THAT(*ReadFileToString(fs_, instructions),
              HasSubstr("When a file you need does not exist, say so in one sentence and stop"));
  EXPECT_THAT(*ReadFileToString(fs_, home_ + "/improve/" + id + "/backup/instructions.md"),
              Not(HasSubstr("does not exist")));
  EXPECT_EQ(Mend({"improve", "apply", id}), 1);
  EXPECT_THAT(err(), HasSubstr("already applied"));
  EXPECT_EQ(Mend({"improve", "reject", "imp-20990101T000000-00000000"}), 1);
  EXPECT_THAT(err(), HasSubstr("no improve attempt named"));
}

// `improve apply --canary`, `improve canary`, `promote` and `rollback` on the demo's proposal:
// bad flags are usage errors, a running canary leaves the folder alone and refuses a plain apply,
// and a person's rollback against the rule is recorded as such.
TEST_F(RunCommandsTest, ACanaryOfTheDemosProposalIsStartedShownAndRolledBack) {
  ASSERT_EQ(Mend({"demo", "--json"}), 0) << err();
  const std::string id = Json()["improve"]["attempt_id"];
  const std::string instructions = home_ + "/demo-agent/instructions.md";
  const std::string before = *ReadFileToString(fs_, instructions);
  EXPECT_EQ(Mend({"improve", "apply", id, "--auto"}), 2);
  EXPECT_THAT(err(), HasSubstr("--auto needs --canary PERCENT"));
  EXPECT_EQ(Mend({"improve", "apply", id, "--canary", "150"}), 2);
  EXPECT_THAT(err(), HasSubstr("--canary must be a percent in (0, 100]"));
  EXPECT_EQ(Mend({"improve", "apply", id, "--canary", "100"}), 0) << err();
  EXPECT_THAT(out(), HasSubstr("canary of proposal " + id));
  EXPECT_THAT(out(),
              HasSubstr("100% of new runs take the proposal; waits for promote or rollback"));
  // A run of the agent now takes the proposal, and says so.
  Script(R"([{"text": "Done.", "output_tokens": 5}])");
  ASSERT_EQ(MendWithModel({"run", home_ + "/demo-agent", "say done", "--json"}), 0) << err();
  const std::string run_id = Json()["run_id"];
  EXPECT_EQ(Mend({"show", run_id, "--json"}), 0) << err();
  EXPECT_EQ(Json()["arm"], id);
  EXPECT_EQ(Json()["canary"], id);
  EXPECT_EQ(Mend({"show", run_id}), 0) << err();
  EXPECT_THAT(out(), HasSubstr(id + " (the proposal's files, canaried)"));
  EXPECT_EQ(*ReadFileToString(fs_, instructions), before);
  EXPECT_EQ(Mend({"improve", "canary", id, "--json"}), 0) << err();
  EXPECT_EQ(Json()["state"], "running");
  EXPECT_EQ(Json()["percent"], 100);
  EXPECT_EQ(Json()["auto"], false);
  EXPECT_EQ(Json()["arms"][1]["runs"], 1);
  EXPECT_EQ(Json()["arms"][1]["successes"], 1);
  EXPECT_EQ(Json()["recommendation"]["verdict"], "continue");
  EXPECT_EQ(Mend({"improve", "apply", id}), 1);
  EXPECT_THAT(err(), HasSubstr("is being canaried"));
  EXPECT_EQ(Mend({"improve", "rollback", id, "--json"}), 0) << err();
  EXPECT_EQ(Json()["state"], "rolled_back");
  EXPECT_EQ(Json()["verdict"], "roll_back_manual");
  EXPECT_EQ(*ReadFileToString(fs_, instructions), before);
  EXPECT_EQ(Mend({"improve", "list", "--json"}), 0) << err();
  EXPECT_EQ(Json()["attempts"][0]["proposal"], "rejected");
  EXPECT_EQ(Mend({"improve", "promote", id}), 1);
  EXPECT_THAT(err(), HasSubstr(id));
  EXPECT_EQ(Mend({"improve", "canary", "imp-20990101T000000-00000000"}), 1);
  EXPECT_THAT(err(), HasSubstr("no canary"));
}

// The CLI path of --from-failures and --mode auto, on the demo's two stopped runs. The scripted
// model answers in order, so with --concurrency 1 the baseline's four runs, the editor and the
// candidate's four runs take the script's steps in turn.
TEST_F(RunCommandsTest, ImproveFromFailuresInAutoModeAppliesAPassingProposal) {
  ASSERT_EQ(Mend({"demo", "--json"}), 0) << err();
  std::string steps;
  for (int i = 0; i < 4; ++i) steps += R"({"text": "Done.", "output_tokens": 5},)";
  steps +=
      R"({"text": "<file path=\"instructions.md\">\nSay when a file is missing.\n</file>\n"},)";
  for (int i = 0; i < 4; ++i)
    steps += R"({"text": "The file is missing; stopped.", "output_tokens": 5},)";
  steps.pop_back();
  Script("[" + steps + "]");
  const std::string agent = home_ + "/demo-agent";
  // What an attempt killed meanwhile left behind goes; a live process's scratch stays.
  const std::string stale = home_ + "/improve-scratch-999999999";
  const std::string live = home_ + "/improve-scratch-" + std::to_string(getppid());
  Write(stale + "/runs/x/workspace/file.txt", "left behind\n");
  Write(live + "/file.txt", "in use\n");
  ASSERT_EQ(
      MendWithModel(
          {"improve", agent, "--from-failures", "--held-out", "0", "--repeats", "2", "--candidates",
           "1", "--rounds", "1", "--concurrency", "1", "--mode", "auto", "--check",
           "grep -q missing && echo '{\"pass\":true}' || echo '{\"pass\":false}'", "--json"}),
      0)
      << err();
  const nlohmann::json doc = Json();
  EXPECT_EQ(doc["outcome"], "proposal") << doc.dump();
  ASSERT_EQ(doc["cases"].size(), 2u);  // the reflexion story's and the heal story's stopped runs
  for (const auto& c : doc["cases"]) {
    EXPECT_THAT(c["id"].get<std::string>(), StartsWith("run-"));
    EXPECT_EQ(c["verdict"], "better");
  }
  EXPECT_EQ(doc["runs"], 8);
  EXPECT_EQ(doc["proposal"]["status"], "applied");
  EXPECT_EQ(*ReadFileToString(fs_, agent + "/instructions.md"), "Say when a file is missing.\n");
  EXPECT_FALSE(std::filesystem::exists(stale));
  EXPECT_TRUE(std::filesystem::exists(live + "/file.txt"));
  // The editor saw the stopped runs' reports.
  const std::string id = doc["attempt_id"];
  auto request = ReadFileToString(fs_, home_ + "/improve/" + id + "/editor/1-1.request.txt");
  ASSERT_TRUE(request.ok());
  EXPECT_THAT(*request, HasSubstr("MEND_RUN_NO_PROGRESS"));
  EXPECT_THAT(*request, HasSubstr("<untrusted-data source="));

  // Bad flags are usage errors before anything runs.
  EXPECT_EQ(
      MendWithModel({"improve", agent, "--from-failures", "--check", "true", "--repeats", "1"}), 2);
  EXPECT_THAT(err(), HasSubstr("--repeats"));
  EXPECT_EQ(MendWithModel({"improve", agent, "--check", "true"}), 2);
  EXPECT_THAT(err(), HasSubstr("--cases FILE and --from-failures"));
  EXPECT_EQ(MendWithModel({"improve", agent, "--cases", dir_ + "/none.jsonl", "--check", "true"}),
            1);
  EXPECT_THAT(err(), HasSubstr("none.jsonl"));
}

}  // namespace
}  // namespace mend::cli
