// /api/v1/lessons: queue status, pending jobs, dead letters, manual lessons, enqueue and drain,
// with the server's lesson workers started and not.
#include <gmock/gmock.h>

#include <chrono>
#include <set>
#include <string>
#include <vector>

#include "mend/app/lessons.h"
#include "mend/lessonq/job.h"
#include "mend/lessonq/lesson_queue.h"
#include "mend/lessonq/wal_dir.h"
#include "tests/server/server_fixture.h"

namespace mend::server {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;
using ::testing::StartsWith;
using ::testing::UnorderedElementsAre;

constexpr char kJobId[] = "bba86ebf380b9dbc";  // docs/wal_format.md's example id for this request
constexpr char kLessonReply[] =
    "<situation>Refactoring large Go source files</situation>"
    "<mistake>Rewrote the whole file in one step and timed out</mistake>"
    "<correction>Patch large Go files with small targeted edits</correction>"
    "<tags>go, large-file</tags>";
constexpr char kSecret[] = "sk-test-never-shown-5151";

const std::set<std::string> kJobKeys = {"id",   "trigger",    "attempts", "age_seconds",
                                        "task", "last_error", "provider"};

std::set<std::string> Keys(const nlohmann::json& object) {
  std::set<std::string> keys;
  for (const auto& [key, value] : object.items()) keys.insert(key);
  return keys;
}

const nlohmann::json kExample = {{"task", "Edit main.go"},
                                 {"trigger", "error"},
                                 {"attempt", "used full rewrite"},
                                 {"outcome", "ERROR: file too large"}};

class LessonsApiTest : public ServerTest {
 protected:
  // A dead letter written straight into <home>/reflexion/dlq, as the workers leave one.
  std::string WriteDeadLetter(const std::string& task) {
    lessonq::Job job;
    job.request = {task, "tried once", "ERROR: boom", "error"};
    job.id = lessonq::JobIdFor(job.request);
    job.attempts = 5;
    job.last_error = "parse: no block";
    job.enqueued_at = job.next_attempt_at = Time(std::chrono::seconds(1'700'000'000));
    auto dlq = lessonq::WalDir::Open(*env_.fs, home_ + "/reflexion/dlq");
    EXPECT_TRUE(dlq.ok()) << dlq.status().ToString();
    if (!dlq.ok()) return "";
    EXPECT_TRUE((*dlq)->Append(job).ok());
    return job.id;
  }

  static llm::ScriptedStep Text(const std::string& text) {
    llm::ScriptedStep step;
    step.text = text;
    return step;
  }

  void ExpectError(const Reply& reply, int status, const std::string& code) {
    EXPECT_EQ(reply.status, status) << reply.text;
    EXPECT_EQ(reply.body["error"]["code"], code) << reply.text;
  }
};

TEST_F(LessonsApiTest, StatusCountsTheQueue) {
  StartServer();
  Reply empty = Get("/api/v1/lessons");
  ASSERT_EQ(empty.status, 200) << empty.text;
  EXPECT_EQ(empty.body, (nlohmann::json{{"queue_depth", 0}, {"wal_records", 0}, {"dlq_size", 0}}));
  ASSERT_EQ(Post("/api/v1/lessons/enqueue", kExample).status, 201);
  WriteDeadLetter("deploy the payments service");
  Reply counted = Get("/api/v1/lessons");
  EXPECT_EQ(counted.body,
            (nlohmann::json{{"queue_depth", 0}, {"wal_records", 1}, {"dlq_size", 1}}));
}

TEST_F(LessonsApiTest, EnqueueWritesTheJobOnceAndNeverProcessesIt) {
  StartServer({Text(kLessonReply)});
  Reply created = Post("/api/v1/lessons/enqueue", kExample);
  ASSERT_EQ(created.status, 201) << created.text;
  EXPECT_EQ(created.body["id"], kJobId);
  EXPECT_EQ(created.body["created"], true);
  EXPECT_EQ(created.body["outcome"], "accepted");
  Reply again = Post("/api/v1/lessons/enqueue", kExample);
  EXPECT_EQ(again.status, 200) << again.text;
  EXPECT_EQ(again.body["id"], kJobId);
  EXPECT_EQ(again.body["created"], false);

  Reply pending = Get("/api/v1/lessons/pending");
  ASSERT_EQ(pending.status, 200) << pending.text;
  ASSERT_EQ(pending.body["pending"].size(), 1u);
  const nlohmann::json& job = pending.body["pending"][0];
  EXPECT_EQ(Keys(job), kJobKeys);
  EXPECT_EQ(job["id"], kJobId);
  EXPECT_EQ(job["trigger"], "error");
  EXPECT_EQ(job["attempts"], 0);
  EXPECT_EQ(job["task"], "Edit main.go");
  EXPECT_TRUE(job["last_error"].is_null());
  // Without workers nothing was processed: the model was never asked.
  EXPECT_EQ(Get("/api/v1/memory?category=lesson").body["total"], 0);
}

TEST_F(LessonsApiTest, EnqueueRefusesBadBodies) {
  StartServer();
  auto without = [](const char* key) {
    nlohmann::json body = kExample;
    body.erase(key);
    return body;
  };
  auto with = [](const char* key, nlohmann::json value) {
    nlohmann::json body = kExample;
    body[key] = std::move(value);
    return body;
  };
  ExpectError(Post("/api/v1/lessons/enqueue", without("task")), 400, "INVALID_ARGUMENT");
  ExpectError(Post("/api/v1/lessons/enqueue", without("trigger")), 400, "INVALID_ARGUMENT");
  ExpectError(Post("/api/v1/lessons/enqueue", with("task", "   ")), 400, "INVALID_ARGUMENT");
  ExpectError(Post("/api/v1/lessons/enqueue", with("task", 3)), 400, "INVALID_ARGUMENT");
  Reply manual = Post("/api/v1/lessons/enqueue", with("trigger", "manual"));
  ExpectError(manual, 400, "INVALID_ARGUMENT");
  EXPECT_THAT(manual.body["error"]["message"].get<std::string>(), HasSubstr("unknown trigger"));
  ExpectError(Post("/api/v1/lessons/enqueue", with("attempt", nlohmann::json::array())), 400,
              "INVALID_ARGUMENT");
  ExpectError(Post("/api/v1/lessons/enqueue", with("outcome", 1)), 400, "INVALID_ARGUMENT");
  EXPECT_EQ(Get("/api/v1/lessons").body["wal_records"], 0);
}

TEST_F(LessonsApiTest, ManualLessonIsStoredAsAFact) {
  StartServer();
  Reply added = Post("/api/v1/lessons", {{"text", "  use targeted edits for large files "}});
  ASSERT_EQ(added.status, 201) << added.text;
  EXPECT_EQ(Keys(added.body), (std::set<std::string>{"fact_id"}));
  Reply fact = Get("/api/v1/memory/" + added.body["fact_id"].get<std::string>());
  ASSERT_EQ(fact.status, 200) << fact.text;
  EXPECT_EQ(fact.body["category"], "lesson");
  EXPECT_EQ(fact.body["content"],
            "LESSON: use targeted edits for large files\n"
            "MISTAKE: (user-supplied lesson; no automatic mistake detection)\n"
            "CORRECTION: use targeted edits for large files\n"
            "TRIGGER: manual");
  EXPECT_THAT(fact.body["tags"].get<std::vector<std::string>>(),
              UnorderedElementsAre("reflexion", "trigger:manual", "user-supplied"));
  // Nothing is queued for a manual lesson.
  EXPECT_EQ(Get("/api/v1/lessons").body["wal_records"], 0);

  ExpectError(Post("/api/v1/lessons", nlohmann::json::object()), 400, "INVALID_ARGUMENT");
  ExpectError(Post("/api/v1/lessons", {{"text", "  \n "}}), 400, "INVALID_ARGUMENT");
  ExpectError(Post("/api/v1/lessons", {{"text", false}}), 400, "INVALID_ARGUMENT");
}

TEST_F(LessonsApiTest, DeadLettersAreListedRetriedAndPurged) {
  StartServer();
  const std::string first = WriteDeadLetter("deploy the payments service");
  const std::string second = WriteDeadLetter("rotate the keys");
  Reply dead = Get("/api/v1/lessons/dead");
  ASSERT_EQ(dead.status, 200) << dead.text;
  ASSERT_EQ(dead.body["dlq"].size(), 2u);
  EXPECT_EQ(Keys(dead.body["dlq"][0]), kJobKeys);
  EXPECT_EQ(dead.body["dlq"][0]["last_error"], "parse: no block");
  EXPECT_EQ(dead.body["dlq"][0]["attempts"], 5);

  Reply retried = Post("/api/v1/lessons/dead/" + first + "/retry");
  ASSERT_EQ(retried.status, 200) << retried.text;
  EXPECT_EQ(retried.body, (nlohmann::json{{"id", first}, {"retried", true}}));
  Reply pending = Get("/api/v1/lessons/pending");
  ASSERT_EQ(pending.body["pending"].size(), 1u);
  EXPECT_EQ(pending.body["pending"][0]["id"], first);
  EXPECT_EQ(pending.body["pending"][0]["attempts"], 0);
  Reply again = Post("/api/v1/lessons/dead/" + first + "/retry");
  ExpectError(again, 404, "NOT_FOUND");
  EXPECT_EQ(again.body["error"]["message"], "no dead-lettered lesson job " + first);

  Reply purged = Post("/api/v1/lessons/dead/" + second + "/purge");
  ASSERT_EQ(purged.status, 200) << purged.text;
  EXPECT_EQ(purged.body, (nlohmann::json{{"id", second}, {"purged", true}}));
  EXPECT_FALSE(env_.fs->Exists(home_ + "/reflexion/dlq/" + second + ".wal"));
  ExpectError(Post("/api/v1/lessons/dead/" + second + "/purge"), 404, "NOT_FOUND");
  EXPECT_TRUE(Get("/api/v1/lessons/dead").body["dlq"].empty());
}

TEST_F(LessonsApiTest, DeadLetterIdsAreChecked) {
  StartServer();
  for (const std::string& bad :
       {std::string("NOT-AN-ID"), std::string("0123456789abcdeg"),
        std::string("..%2F..%2Fwal%2Fbba86ebf380b9dbc"), std::string("a/b")}) {
    ExpectError(Post("/api/v1/lessons/dead/" + bad + "/retry"), 400, "INVALID_ARGUMENT");
    ExpectError(Post("/api/v1/lessons/dead/" + bad + "/purge"), 400, "INVALID_ARGUMENT");
  }
}

TEST_F(LessonsApiTest, DrainWithoutWorkersMakesTheServerTheirOwner) {
  StartServer({Text(kLessonReply)});
  ASSERT_FALSE(runtime_->lessons.queue->owner());
  ASSERT_EQ(Post("/api/v1/lessons/enqueue", kExample).status, 201);
  Reply drained = Post("/api/v1/lessons/drain");
  ASSERT_EQ(drained.status, 200) << drained.text;
  EXPECT_EQ(drained.body, (nlohmann::json{{"succeeded", 1},
                                          {"skipped", 0},
                                          {"retried", 0},
                                          {"dead_lettered", 0},
                                          {"remaining", 0}}));
  EXPECT_TRUE(runtime_->lessons.queue->owner());
  Reply lessons = Get("/api/v1/memory?category=lesson");
  ASSERT_EQ(lessons.body["facts"].size(), 1u);
  EXPECT_THAT(lessons.body["facts"][0]["content"].get<std::string>(),
              StartsWith("LESSON: Refactoring large Go source files\n"));
  // A second drain finds nothing left and reports only what happened since the first.
  Reply second = Post("/api/v1/lessons/drain");
  ASSERT_EQ(second.status, 200) << second.text;
  EXPECT_EQ(second.body["succeeded"], 0);
  EXPECT_EQ(second.body["remaining"], 0);
}

TEST_F(LessonsApiTest, DrainWithWorkersStartedReportsWhatTheyDid) {
  StartServer({Text(kLessonReply)});
  MEND_ASSERT_OK(app::StartLessonWorkers(*runtime_));
  ASSERT_EQ(Post("/api/v1/lessons/enqueue", kExample).status, 201);
  Reply drained = Post("/api/v1/lessons/drain");
  ASSERT_EQ(drained.status, 200) << drained.text;
  // The workers may have taken the job before the drain began; the report counts it either way.
  EXPECT_EQ(drained.body["succeeded"], 1);
  EXPECT_EQ(drained.body["remaining"], 0);
  Reply status = Get("/api/v1/lessons");
  EXPECT_EQ(status.body, (nlohmann::json{{"queue_depth", 0}, {"wal_records", 0}, {"dlq_size", 0}}));
  EXPECT_EQ(Get("/api/v1/memory?category=lesson").body["total"], 1);
}

TEST_F(LessonsApiTest, RetriedDeadLetterIsProcessedByRunningWorkers) {
  StartServer({Text(kLessonReply)});
  MEND_ASSERT_OK(app::StartLessonWorkers(*runtime_));
  const std::string dead = WriteDeadLetter("Refactor the large Go file engine.go");
  ASSERT_EQ(Post("/api/v1/lessons/dead/" + dead + "/retry").status, 200);
  Reply drained = Post("/api/v1/lessons/drain");
  ASSERT_EQ(drained.status, 200) << drained.text;
  EXPECT_EQ(drained.body["succeeded"], 1);
  EXPECT_TRUE(Get("/api/v1/lessons/pending").body["pending"].empty());
  EXPECT_TRUE(Get("/api/v1/lessons/dead").body["dlq"].empty());
}

TEST_F(LessonsApiTest, DrainDeadLettersAReplyWithoutBlocks) {
  StartServer({Text("I would rather not say.")});
  ASSERT_EQ(Post("/api/v1/lessons/enqueue", kExample).status, 201);
  Reply drained = Post("/api/v1/lessons/drain");
  ASSERT_EQ(drained.status, 200) << drained.text;
  EXPECT_EQ(drained.body["dead_lettered"], 1);
  Reply dead = Get("/api/v1/lessons/dead");
  ASSERT_EQ(dead.body["dlq"].size(), 1u);
  EXPECT_EQ(dead.body["dlq"][0]["id"], kJobId);
  EXPECT_FALSE(dead.body["dlq"][0]["last_error"].get<std::string>().empty());
}

TEST_F(LessonsApiTest, DrainIsUnavailableWhileAnotherProcessOwnsTheWorkers) {
  StartServer({Text(kLessonReply)});
  lessonq::QueueOptions options;
  options.base_dir = home_ + "/reflexion";
  auto owner = lessonq::LessonQueue::Open(Env::Default(), options, nullptr);
  MEND_ASSERT_OK(owner);
  MEND_ASSERT_OK((*owner)->Start(
      [](const lessonq::Job&, const lessonq::JobContext&) -> Result<lessonq::ProcessResult> {
        return lessonq::ProcessResult::kSkipped;
      }));
  Reply drained = Post("/api/v1/lessons/drain");
  ExpectError(drained, 503, "UNAVAILABLE");
  EXPECT_THAT(drained.body["error"]["message"].get<std::string>(),
              HasSubstr("another mend process owns the lesson workers"));
  MEND_EXPECT_OK((*owner)->Shutdown(std::chrono::seconds(5)));
}

TEST_F(LessonsApiTest, NoAnswerCarriesASecret) {
  StartServer({Text(kLessonReply)}, {}, {{"provider.api_key", kSecret}});
  const std::string dead = WriteDeadLetter("deploy the payments service");
  std::vector<Reply> replies = {
      Get("/api/v1/lessons"),
      Post("/api/v1/lessons/enqueue", kExample),
      Get("/api/v1/lessons/pending"),
      Get("/api/v1/lessons/dead"),
      Post("/api/v1/lessons", {{"text", "keep secrets out of answers"}}),
      Post("/api/v1/lessons/drain"),
      Post("/api/v1/lessons/dead/" + dead + "/purge"),
      Post("/api/v1/lessons/dead/nope/retry"),
  };
  for (const Reply& reply : replies) {
    EXPECT_NE(reply.status, 0);
    EXPECT_THAT(reply.text, Not(HasSubstr(kSecret)));
  }
}

}  // namespace
}  // namespace mend::server
