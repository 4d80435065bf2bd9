// `mend reflect ...` and chat's `/reflect` in process, on a real temporary home (the fact store is
// SQLite on disk; the lesson queue lives in <home>/reflexion) and a scripted model read from a
// file.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <stdlib.h>

#include <filesystem>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "cli/cli.h"
#include "mend/base/env.h"
#include "mend/base/file_system.h"
#include "mend/lessonq/job.h"
#include "mend/lessonq/lesson_queue.h"
#include "mend/lessonq/wal_dir.h"
#include "tests/cli/cli_home_test.h"
#include "tests/support/status_matchers.h"

namespace mend::cli {
namespace {

using ::mend::testing::IsOk;
using ::testing::AllOf;
using ::testing::HasSubstr;
using ::testing::StartsWith;

constexpr char kTask[] = "Edit main.go";
constexpr char kJobId[] = "bba86ebf380b9dbc";  // docs/wal_format.md's example id for this request
constexpr char kLessonReply[] =
    "<situation>Refactoring large Go source files</situation>"
    "<mistake>Rewrote the whole file in one step and timed out</mistake>"
    "<correction>Patch large Go files with small targeted edits</correction>"
    "<tags>go, large-file</tags>";

const std::set<std::string> kJobKeys = {"id",   "trigger",    "attempts", "age_seconds",
                                        "task", "last_error", "provider"};
// A pending job also says what it waits for.
const std::set<std::string> kPendingJobKeys = {"id",   "trigger",    "attempts", "age_seconds",
                                               "task", "last_error", "provider", "waits_for"};

class ReflectCommandTest : public CliHomeTest {
 protected:
  void SetUp() override {
    CliHomeTest::SetUp();
    Write(agent_ + "/agent.toml", "name = \"helper\"\ntools = [\"read_file\"]\n");
    Write(agent_ + "/instructions.md", "Help the user.\n");
    Script("[]");
  }

  void ScriptText(const std::string& text) {
    Script(nlohmann::json::array({{{"text", text}}}).dump());
  }

  int EnqueueExample(const std::string& extra = "") {
    std::vector<std::string> args = {"reflect",   "enqueue",
                                     "--task",    kTask,
                                     "--trigger", "error",
                                     "--attempt", "used full rewrite",
                                     "--outcome", "ERROR: file too large"};
    if (!extra.empty()) args.push_back(extra);
    return Mend(args);
  }

  // A dead letter written straight into <home>/reflexion/dlq, as the workers leave one.
  std::string WriteDeadLetter(const std::string& task, const std::string& last_error) {
    lessonq::Job job;
    job.request = {task, "tried once", "ERROR: boom", "error"};
    job.id = lessonq::JobIdFor(job.request);
    job.attempts = 5;
    job.last_error = last_error;
    job.enqueued_at = job.next_attempt_at = Time(std::chrono::seconds(1'700'000'000));
    Result<std::unique_ptr<lessonq::WalDir>> dlq =
        lessonq::WalDir::Open(fs_, home_ + "/reflexion/dlq");
    EXPECT_THAT(dlq, IsOk());
    if (!dlq.ok()) return "";
    Result<bool> created = (*dlq)->Append(job);
    EXPECT_THAT(created, IsOk());
    return job.id;
  }
};

TEST_F(ReflectCommandTest, StatusShowsCountsAndHint) {
  ASSERT_EQ(Mend({"reflect", "--json"}), 0) << err();
  nlohmann::json doc = Json();
  EXPECT_EQ(JsonKeys(doc), (std::set<std::string>{"queue_depth", "wal_records", "dlq_size"}));
  EXPECT_EQ(doc["wal_records"], 0);
  EXPECT_EQ(doc["dlq_size"], 0);

  ASSERT_EQ(EnqueueExample(), 0) << err();
  WriteDeadLetter("another task", "no lesson block");
  ASSERT_EQ(Mend({"reflect", "--json"}), 0) << err();
  doc = Json();
  EXPECT_EQ(doc["queue_depth"], 0);  // this process does not own the workers
  EXPECT_EQ(doc["wal_records"], 1);
  EXPECT_EQ(doc["dlq_size"], 1);

  ASSERT_EQ(Mend({"reflect"}), 0) << err();
  EXPECT_EQ(out(),
            "lesson queue: depth 0, 1 pending in the WAL, 1 in the dead letter queue\n"
            "subcommands: mend reflect add TEXT | enqueue --task T --trigger TRIGGER | list | "
            "failed | retry ID | purge ID | drain\n");
}

TEST_F(ReflectCommandTest, AddStoresAManualLessonFact) {
  ASSERT_EQ(Mend({"reflect", "add", "patch", "large", "files,", "never", "rewrite", "--json"}), 0)
      << err();
  const nlohmann::json added = Json();
  EXPECT_EQ(JsonKeys(added), (std::set<std::string>{"fact_id"}));
  const std::string id = added["fact_id"];

  ASSERT_EQ(Mend({"memory", "show", id, "--json"}), 0) << err();
  const nlohmann::json fact = Json();
  EXPECT_EQ(fact["category"], "lesson");
  EXPECT_EQ(fact["content"],
            "LESSON: patch large files, never rewrite\n"
            "MISTAKE: (user-supplied lesson; no automatic mistake detection)\n"
            "CORRECTION: patch large files, never rewrite\n"
            "TRIGGER: manual");
  EXPECT_THAT(fact["tags"].get<std::vector<std::string>>(),
              ::testing::IsSupersetOf({"reflexion", "trigger:manual", "user-supplied"}));

  ASSERT_EQ(Mend({"reflect", "add", "check the deploy window first"}), 0) << err();
  EXPECT_THAT(out(), StartsWith("stored lesson "));
  ASSERT_EQ(Mend({"memory", "list", "--category", "lesson", "--json"}), 0) << err();
  EXPECT_EQ(Json()["facts"].size(), 2u);
}

TEST_F(ReflectCommandTest, AddWithEmptyTextIsAUsageError) {
  EXPECT_EQ(Mend({"reflect", "add", "   "}), 2);
  EXPECT_THAT(err(), StartsWith("mend: the lesson's text is empty"));
  EXPECT_EQ(Mend({"reflect", "add"}), 2);
}

TEST_F(ReflectCommandTest, EnqueueWritesTheRecordOnceAndNeverProcesses) {
  ASSERT_EQ(EnqueueExample("--json"), 0) << err();
  nlohmann::json doc = Json();
  EXPECT_EQ(JsonKeys(doc), (std::set<std::string>{"id", "created"}));
  EXPECT_EQ(doc["id"], kJobId);
  EXPECT_EQ(doc["created"], true);
  EXPECT_TRUE(fs_.Exists(home_ + "/reflexion/wal/" + kJobId + ".wal"));

  ASSERT_EQ(EnqueueExample("--json"), 0) << err();
  EXPECT_EQ(Json()["created"], false);
  ASSERT_EQ(EnqueueExample(), 0) << err();
  EXPECT_EQ(out(), std::string("lesson job ") + kJobId + " is already pending\n");

  // Nothing was processed: the job is still pending with no attempt made.
  ASSERT_EQ(Mend({"reflect", "list", "--json"}), 0) << err();
  doc = Json();
  ASSERT_EQ(doc["pending"].size(), 1u);
  EXPECT_EQ(doc["pending"][0]["attempts"], 0);
  EXPECT_EQ(doc["pending"][0]["task"], kTask);
}

TEST_F(ReflectCommandTest, EnqueueValidatesItsArguments) {
  EXPECT_EQ(Mend({"reflect", "enqueue", "--task", "t", "--trigger", "manual"}), 2);
  EXPECT_THAT(err(), StartsWith("mend: unknown trigger 'manual'"));
  EXPECT_EQ(Mend({"reflect", "enqueue", "--trigger", "error"}), 2);
  EXPECT_EQ(Mend({"reflect", "enqueue", "--task", " ", "--trigger", "error"}), 2);
  for (const char* trigger : {"error", "hallucination", "low_quality"}) {
    EXPECT_EQ(Mend({"reflect", "enqueue", "--task", "t", "--trigger", trigger}), 0) << err();
  }
}

TEST_F(ReflectCommandTest, ListAndFailedHaveTheStableShapes) {
  ASSERT_EQ(EnqueueExample(), 0) << err();
  const std::string dead = WriteDeadLetter("deploy the payments service", "parse: no block");

  ASSERT_EQ(Mend({"reflect", "list", "--json"}), 0) << err();
  nlohmann::json doc = Json();
  EXPECT_EQ(JsonKeys(doc), (std::set<std::string>{"pending", "dlq"}));
  ASSERT_EQ(doc["pending"].size(), 1u);
  ASSERT_EQ(doc["dlq"].size(), 1u);
  EXPECT_EQ(JsonKeys(doc["pending"][0]), kPendingJobKeys);
  EXPECT_EQ(JsonKeys(doc["dlq"][0]), kJobKeys);
  EXPECT_TRUE(doc["pending"][0]["provider"].is_null());  // typed by hand: none recorded
  EXPECT_TRUE(doc["pending"][0]["waits_for"].is_null());
  EXPECT_EQ(doc["pending"][0]["id"], kJobId);
  EXPECT_EQ(doc["pending"][0]["trigger"], "error");
  EXPECT_TRUE(doc["pending"][0]["last_error"].is_null());
  EXPECT_EQ(doc["dlq"][0]["id"], dead);
  EXPECT_EQ(doc["dlq"][0]["attempts"], 5);
  EXPECT_EQ(doc["dlq"][0]["last_error"], "parse: no block");
  EXPECT_GT(doc["dlq"][0]["age_seconds"].get<int64_t>(), 0);

  ASSERT_EQ(Mend({"reflect", "failed", "--json"}), 0) << err();
  doc = Json();
  EXPECT_EQ(JsonKeys(doc), (std::set<std::string>{"dlq"}));
  EXPECT_EQ(doc["dlq"][0]["id"], dead);

  ASSERT_EQ(Mend({"reflect", "list"}), 0) << err();
  EXPECT_THAT(out(), AllOf(StartsWith(std::string("pending (1):\n  ") + kJobId +
                                      " [trigger=error attempts=0 age="),
                           HasSubstr("s]\n    task: Edit main.go\ndead letter queue (1):\n  " +
                                     dead + " [trigger=error attempts=5 age="),
                           HasSubstr("    task: deploy the payments service\n"
                                     "    last error: parse: no block\n")));
  ASSERT_EQ(Mend({"reflect", "failed"}), 0) << err();
  EXPECT_THAT(out(), StartsWith("dead letter queue (1):\n  " + dead));
}

TEST_F(ReflectCommandTest, RetryMovesADeadLetterBack) {
  const std::string dead = WriteDeadLetter("deploy the payments service", "parse: no block");
  ASSERT_EQ(Mend({"reflect", "retry", dead, "--json"}), 0) << err();
  EXPECT_EQ(Json(), (nlohmann::json{{"id", dead}, {"retried", true}}));

  ASSERT_EQ(Mend({"reflect", "list", "--json"}), 0) << err();
  const nlohmann::json doc = Json();
  EXPECT_TRUE(doc["dlq"].empty());
  ASSERT_EQ(doc["pending"].size(), 1u);
  EXPECT_EQ(doc["pending"][0]["id"], dead);
  EXPECT_EQ(doc["pending"][0]["attempts"], 0);

  EXPECT_EQ(Mend({"reflect", "retry", dead}), 1);
  EXPECT_EQ(err(), "mend: no dead-lettered lesson job " + dead + "\n");
  EXPECT_EQ(Mend({"reflect", "retry", "NOT-AN-ID"}), 2);
  EXPECT_THAT(err(), HasSubstr("not a lesson job id"));
}

TEST_F(ReflectCommandTest, PurgeDeletesADeadLetter) {
  const std::string dead = WriteDeadLetter("deploy the payments service", "parse: no block");
  ASSERT_EQ(Mend({"reflect", "purge", dead}), 0) << err();
  EXPECT_EQ(out(), "purged " + dead + " from the dead letter queue\n");
  EXPECT_FALSE(fs_.Exists(home_ + "/reflexion/dlq/" + dead + ".wal"));

  EXPECT_EQ(Mend({"reflect", "purge", dead, "--json"}), 1);
  EXPECT_EQ(Json()["error"]["code"], "NOT_FOUND");
  EXPECT_EQ(Mend({"reflect", "purge", "0123456789abcdeg"}), 2);
}

TEST_F(ReflectCommandTest, DrainStoresTheLessonAndRecallFindsIt) {
  ASSERT_EQ(Mend({"reflect", "enqueue", "--task", "Refactor the large Go file engine.go",
                  "--trigger", "error", "--attempt", "rewrote engine.go at once", "--outcome",
                  "ERROR: provider timeout"}),
            0)
      << err();
  ScriptText(kLessonReply);
  ASSERT_EQ(MendWithModel({"reflect", "drain", "--json"}), 0) << err();
  EXPECT_EQ(Json(), (nlohmann::json{{"succeeded", 1},
                                    {"skipped", 0},
                                    {"retried", 0},
                                    {"dead_lettered", 0},
                                    {"remaining", 0}}));

  ASSERT_EQ(Mend({"memory", "list", "--category", "lesson", "--json"}), 0) << err();
  const nlohmann::json facts = Json()["facts"];
  ASSERT_EQ(facts.size(), 1u);
  EXPECT_EQ(facts[0]["content"],
            "LESSON: Refactoring large Go source files\n"
            "MISTAKE: Rewrote the whole file in one step and timed out\n"
            "CORRECTION: Patch large Go files with small targeted edits\n"
            "TRIGGER: error");

  ASSERT_EQ(Mend({"memory", "recall", "Refactor the large Go file manager.go", "--json"}), 0)
      << err();
  EXPECT_THAT(Json()["section"].get<std::string>(),
              HasSubstr("CORRECTION: Patch large Go files with small targeted edits"));
}

TEST_F(ReflectCommandTest, DrainDeadLettersAReplyWithoutBlocks) {
  ASSERT_EQ(EnqueueExample(), 0) << err();
  ScriptText("I would rather not say.");
  ASSERT_EQ(MendWithModel({"reflect", "drain"}), 0) << err();
  EXPECT_EQ(out(), "drained: 0 stored, 0 skipped, 0 to retry, 1 dead-lettered, 0 still pending\n");

  ASSERT_EQ(Mend({"reflect", "failed", "--json"}), 0) << err();
  const nlohmann::json dlq = Json()["dlq"];
  ASSERT_EQ(dlq.size(), 1u);
  EXPECT_EQ(dlq[0]["id"], kJobId);
  EXPECT_FALSE(dlq[0]["last_error"].get<std::string>().empty());
}

TEST_F(ReflectCommandTest, DrainFailsWhileAnotherProcessOwnsTheWorkers) {
  lessonq::QueueOptions options;
  options.base_dir = home_ + "/reflexion";
  Result<std::unique_ptr<lessonq::LessonQueue>> owner =
      lessonq::LessonQueue::Open(Env::Default(), options, nullptr);
  ASSERT_THAT(owner, IsOk());
  MEND_ASSERT_OK((*owner)->Start(
      [](const lessonq::Job&, const lessonq::JobContext&) -> Result<lessonq::ProcessResult> {
        return lessonq::ProcessResult::kSkipped;
      }));

  EXPECT_EQ(MendWithModel({"reflect", "drain"}), 1);
  EXPECT_THAT(err(), AllOf(StartsWith("mend: another mend process owns the lesson workers"),
                           HasSubstr("reflexion")));
  MEND_EXPECT_OK((*owner)->Shutdown(std::chrono::seconds(5)));
}

TEST_F(ReflectCommandTest, ChatReflectCommands) {
  const std::string dead = WriteDeadLetter("deploy the payments service", "parse: no block");
  ASSERT_EQ(MendWithModel({"chat", agent_},
                          "/reflect always run the migrations first\n"
                          "/reflect\n"
                          "/reflect list\n"
                          "/reflect lsit\n"
                          "/reflect retry\n"
                          "/config quality\n"
                          "/reflect purge " +
                              dead +
                              "\n"
                              "/reflect failed\n"
                              "/quit\n"),
            0)
      << err();
  EXPECT_THAT(out(),
              AllOf(HasSubstr("stored lesson "),
                    HasSubstr("subcommands: /reflect <lesson text> | list | failed"),
                    HasSubstr("pending (0):\ndead letter queue (1):\n  " + dead),
                    HasSubstr("reflexion.queue.workers"), HasSubstr("quality.verify.enabled"),
                    HasSubstr("purged " + dead), HasSubstr("dead letter queue (0):\n")));
  EXPECT_THAT(err(), AllOf(HasSubstr("mend: unknown /reflect subcommand 'lsit'"),
                           HasSubstr("mend: usage: /reflect retry <id>")));

  ASSERT_EQ(Mend({"memory", "list", "--category", "lesson", "--json"}), 0) << err();
  const nlohmann::json facts = Json()["facts"];
  ASSERT_EQ(facts.size(), 1u);
  EXPECT_THAT(facts[0]["content"].get<std::string>(),
              StartsWith("LESSON: always run the migrations first\nMISTAKE: (user-supplied"));
}

TEST_F(ReflectCommandTest, ChatRetriesADeadLetterAndRefusesABadId) {
  const std::string dead = WriteDeadLetter("deploy the payments service", "parse: no block");
  ASSERT_EQ(MendWithModel({"chat", agent_},
                          "/reflect retry not-an-id\n/reflect retry " + dead + "\n/quit\n"),
            0)
      << err();
  EXPECT_THAT(out(), HasSubstr("moved " + dead + " back to the queue (attempts reset)\n"));
  EXPECT_THAT(err(), HasSubstr("mend: 'not-an-id' is not a lesson job id"));
  // What happens next is the chat's own workers' business (they own the queue), so the DLQ is not
  // inspected here: the retried job may already be back after failing on the empty script.
}

TEST_F(ReflectCommandTest, MigrateNeedsThePostgresBackend) {
  EXPECT_EQ(Mend({"reflect", "migrate"}), 2);
  EXPECT_THAT(err(), HasSubstr("reflexion.queue.backend = postgres"));
}

TEST_F(ReflectCommandTest, ThePostgresBackendWithoutAPostgresStoreUrlIsRefusedClearly) {
  env_["MEND_QUALITY_REFLEXION_QUEUE_BACKEND"] = "postgres";
  EXPECT_NE(Mend({"reflect"}), 0);
  EXPECT_THAT(err(), AllOf(HasSubstr("store.url"), HasSubstr("postgres:// URL")));
}

}  // namespace
}  // namespace mend::cli
