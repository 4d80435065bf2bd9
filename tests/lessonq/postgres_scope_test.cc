// The PostgreSQL lesson queue keeps each job's provider and claims only the jobs of its workers'
// scope (WorkerScope); version 1 tables gain the provider columns in place.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <chrono>
#include <string>

#include "mend/lessonq/postgres_queue.h"
#include "tests/lessonq/pg_queue_test_util.h"
#include "tests/support/status_matchers.h"

namespace mend::lessonq {
namespace {

using ::mend::testing::IsOkAndHolds;
using std::chrono::seconds;
using ::testing::ElementsAre;
using ::testing::IsEmpty;
using testing::PgOptions;
using testing::PgQueueTest;
using testing::RawExec;
using testing::Request;
using testing::ScriptedProcessor;
using testing::TestOptions;
using ::testing::UnorderedElementsAre;

constexpr char kLocal[] = "http://127.0.0.1:11434/v1";
constexpr char kHosted[] = "https://llm.example.com/v1";

LessonRequest On(int i, const std::string& base_url) {
  LessonRequest request = Request(i);
  request.provider = "openai";
  request.base_url = base_url;
  request.model = "some-model";
  return request;
}

WorkerScope Endpoint(const std::string& base_url, JobsTaken jobs = JobsTaken::kAll) {
  return WorkerScope{LessonEndpoint{"openai", base_url}, jobs};
}

TEST_F(PgQueueTest, AJobOfAnotherProviderIsNeitherClaimedNorCharged) {
  auto producer = Open();
  ASSERT_NE(producer, nullptr);
  MEND_ASSERT_OK(producer->Enqueue(On(1, kLocal)).status());
  MEND_ASSERT_OK(producer->Enqueue(On(2, kHosted)).status());
  MEND_ASSERT_OK(producer->Enqueue(Request(3)).status());  // no provider recorded
  {
    auto hosted = Open();
    ASSERT_NE(hosted, nullptr);
    ScriptedProcessor processor;
    MEND_ASSERT_OK(hosted->Start(processor.processor(), Endpoint(kHosted)));
    auto drained = hosted->DrainNow(seconds(5));
    MEND_ASSERT_OK(drained);
    EXPECT_EQ(drained->succeeded, 2);
    EXPECT_EQ(drained->remaining, 1);
    // Its workers wait on the clock rather than claiming the local job over and over.
    world_.clock.BlockUntilWaiters(TestOptions().workers + 1);
    world_.clock.Advance(seconds(3));
    drained = hosted->DrainNow(seconds(5));
    MEND_ASSERT_OK(drained);
    EXPECT_EQ(drained->succeeded + drained->dead_lettered + drained->retried, 0);
    EXPECT_THAT(processor.ids(),
                UnorderedElementsAre(JobIdFor(On(2, kHosted)), JobIdFor(Request(3))));
    MEND_ASSERT_OK(hosted->Shutdown(seconds(1)));
  }
  auto pending = producer->Pending();
  MEND_ASSERT_OK(pending);
  ASSERT_EQ(pending->size(), 1u);
  EXPECT_EQ((*pending)[0].request, On(1, kLocal));  // the provider round-trips
  EXPECT_EQ((*pending)[0].attempts, 0);
  EXPECT_EQ((*pending)[0].last_error, "");
  EXPECT_THAT(producer->DeadLetters(), IsOkAndHolds(IsEmpty()));

  auto local = Open();
  ASSERT_NE(local, nullptr);
  ScriptedProcessor processor;
  MEND_ASSERT_OK(local->Start(processor.processor(), Endpoint(std::string(kLocal) + "/")));
  auto drained = local->DrainNow(seconds(5));
  MEND_ASSERT_OK(drained);
  EXPECT_EQ(drained->succeeded, 1);
  EXPECT_EQ(drained->remaining, 0);
  EXPECT_THAT(processor.ids(), ElementsAre(JobIdFor(On(1, kLocal))));
}

TEST_F(PgQueueTest, OwnScopeClaimsOnlyTheJobsEnqueuedThroughIt) {
  auto earlier = Open();
  ASSERT_NE(earlier, nullptr);
  MEND_ASSERT_OK(earlier->Enqueue(On(1, kLocal)).status());
  MEND_ASSERT_OK(earlier->Enqueue(On(2, kLocal)).status());
  auto run = Open();
  ASSERT_NE(run, nullptr);
  ScriptedProcessor processor;
  MEND_ASSERT_OK(run->Start(processor.processor(), Endpoint(kLocal, JobsTaken::kOwn)));
  auto drained = run->DrainNow(seconds(5));
  MEND_ASSERT_OK(drained);
  EXPECT_EQ(drained->succeeded, 0);
  EXPECT_EQ(drained->remaining, 2);
  // Deduped onto the earlier job, first, while the worker is parked: a worker may claim the job as
  // soon as its id is the queue's, and must not finish it before the dedupe.
  world_.clock.BlockUntilWaiters(TestOptions().workers + 1);
  MEND_ASSERT_OK(run->Enqueue(On(2, kLocal)).status());
  MEND_ASSERT_OK(run->Enqueue(On(3, kLocal)).status());
  drained = run->DrainNow(seconds(5));
  MEND_ASSERT_OK(drained);
  EXPECT_EQ(drained->succeeded, 2);
  EXPECT_EQ(drained->remaining, 1);
  EXPECT_THAT(processor.ids(),
              UnorderedElementsAre(JobIdFor(On(3, kLocal)), JobIdFor(On(2, kLocal))));
  MEND_ASSERT_OK(run->Shutdown(seconds(1)));
  auto pending = earlier->Pending();
  MEND_ASSERT_OK(pending);
  ASSERT_EQ(pending->size(), 1u);
  EXPECT_EQ((*pending)[0].id, JobIdFor(On(1, kLocal)));
}

TEST_F(PgQueueTest, VersionOneTablesGainTheProviderColumnsOnce) {
  // The tables and a pending row as the previous release wrote them.
  const std::string s = "\"" + schema_ + "\"";
  RawExec("CREATE SCHEMA " + s + "; CREATE TABLE " + s +
          ".lesson_queue_meta (key TEXT PRIMARY KEY, value TEXT NOT NULL); INSERT INTO " + s +
          ".lesson_queue_meta VALUES ('lessonq.schema_version', '1'); CREATE TABLE " + s +
          ".lesson_jobs (id TEXT NOT NULL, state TEXT NOT NULL CHECK (state IN ('pending', "
          "'dead')), task TEXT NOT NULL, attempt TEXT NOT NULL, outcome TEXT NOT NULL, trigger "
          "TEXT NOT NULL, run_id TEXT NOT NULL, traceparent TEXT NOT NULL, enqueued_at BIGINT NOT "
          "NULL, next_attempt_at BIGINT NOT NULL, attempts BIGINT NOT NULL, last_error TEXT NOT "
          "NULL, locked_until BIGINT, claim_token BIGINT, PRIMARY KEY (id, state)); CREATE INDEX "
          "lesson_jobs_due ON " +
          s +
          ".lesson_jobs (next_attempt_at, enqueued_at) WHERE state = 'pending'; CREATE SEQUENCE " +
          s + ".lesson_claim_tokens; INSERT INTO " + s + ".lesson_jobs VALUES ('" +
          JobIdFor(Request(1)) +
          "', 'pending', 'task 1', 'attempt', 'outcome', 'error', 'run-1', '', 1, 1, 2, 'x', "
          "NULL, NULL)");
  EXPECT_THAT(ReadPostgresLessonQueueSchemaVersion(testing::ServerUrl(), schema_), IsOkAndHolds(1));
  for (int open = 0; open < 2; ++open) {
    auto queue = Open();
    ASSERT_NE(queue, nullptr);
    EXPECT_THAT(ReadPostgresLessonQueueSchemaVersion(testing::ServerUrl(), schema_),
                IsOkAndHolds(PostgresLessonQueueSchemaVersion()));
    auto pending = queue->Pending();
    MEND_ASSERT_OK(pending);
    ASSERT_EQ(pending->size(), 1u);
    LessonRequest expected = Request(1);
    expected.run_id = "run-1";
    EXPECT_EQ((*pending)[0].request, expected);  // no provider recorded
    EXPECT_EQ((*pending)[0].attempts, 2);
  }
  EXPECT_EQ(PostgresLessonQueueSchemaVersion(), 3);
}

}  // namespace
}  // namespace mend::lessonq
