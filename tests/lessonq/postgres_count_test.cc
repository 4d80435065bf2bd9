// The numbers of pending and dead jobs of the PostgreSQL lesson queue come from counts that
// triggers keep in the transaction of every change, by mend or by any other writer, also while
// replicas work at once; tables of version 2 gain the counts, taken once.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <chrono>
#include <string>
#include <thread>
#include <vector>

#include "mend/lessonq/postgres_queue.h"
#include "tests/lessonq/pg_queue_test_util.h"
#include "tests/support/status_matchers.h"

namespace mend::lessonq {
namespace {

using ::mend::testing::IsOkAndHolds;
using std::chrono::seconds;
using ::testing::AllOf;
using ::testing::Field;
using testing::PgQueueTest;
using testing::RawExec;
using testing::RawQuery;
using testing::Request;
using testing::ScriptedProcessor;
using testing::TestOptions;

class PgCountTest : public PgQueueTest {
 protected:
  std::string Table(const std::string& name) { return "\"" + schema_ + "\"." + name; }

  // Stats, the sums of the counts and the rows themselves agree on `pending` and `dead`.
  void ExpectCounts(DurableLessonQueue& queue, int64_t pending, int64_t dead) {
    EXPECT_THAT(queue.Stats(), IsOkAndHolds(AllOf(Field(&QueueStats::wal_records, pending),
                                                  Field(&QueueStats::dlq_size, dead))));
    EXPECT_EQ(
        RawQuery("SELECT sum(pending) || '/' || sum(dead) FROM " + Table("lesson_queue_counts")),
        std::to_string(pending) + "/" + std::to_string(dead));
    EXPECT_EQ(RawQuery("SELECT count(*) FILTER (WHERE state = 'pending') || '/' || count(*) "
                       "FILTER (WHERE state = 'dead') FROM " +
                       Table("lesson_jobs")),
              std::to_string(pending) + "/" + std::to_string(dead));
  }

  // A row as another program would insert it.
  void InsertRow(const std::string& id, const std::string& state) {
    RawExec("INSERT INTO " + Table("lesson_jobs") +
            " (id, state, task, attempt, outcome, trigger, run_id, traceparent, enqueued_at, "
            "next_attempt_at, attempts, last_error) VALUES ('" +
            id + "', '" + state + "', 't', 'a', 'o', 'error', '', '', 1, 1, 0, '')");
  }
};

TEST_F(PgCountTest, CountsFollowEveryChangeByAnyWriter) {
  const std::string doomed = JobIdFor(Request(1));
  ScriptedProcessor processor([&](const Job& job, const JobContext&) -> Result<ProcessResult> {
    if (job.id == doomed) return InvalidArgumentError("no <situation> block");
    return ProcessResult::kSuccess;
  });
  auto queue = Open();
  ASSERT_NE(queue, nullptr);
  ExpectCounts(*queue, 0, 0);
  for (int i = 1; i <= 3; ++i) ASSERT_TRUE(queue->Enqueue(Request(i)).ok());
  ASSERT_TRUE(queue->Enqueue(Request(1)).ok());  // deduped
  ExpectCounts(*queue, 3, 0);
  InsertRow("00000000000000aa", "dead");
  InsertRow("00000000000000bb", "pending");
  ExpectCounts(*queue, 4, 1);

  MEND_ASSERT_OK(queue->Start(processor.processor()));
  auto drained = queue->DrainNow(seconds(5));
  MEND_ASSERT_OK(drained);
  EXPECT_EQ(drained->remaining, 0);
  EXPECT_EQ(drained->dead_lettered, 1);
  ExpectCounts(*queue, 0, 2);
  MEND_ASSERT_OK(queue->Shutdown(seconds(5)));

  MEND_ASSERT_OK(queue->RetryDeadLetter(doomed));
  ExpectCounts(*queue, 1, 1);
  MEND_ASSERT_OK(queue->PurgeDeadLetter("00000000000000aa"));
  ExpectCounts(*queue, 1, 0);
  RawExec("UPDATE " + Table("lesson_jobs") + " SET state = 'dead'");
  ExpectCounts(*queue, 0, 1);
  RawExec("DELETE FROM " + Table("lesson_jobs"));
  ExpectCounts(*queue, 0, 0);
  InsertRow("00000000000000cc", "pending");
  RawExec("TRUNCATE " + Table("lesson_jobs"));
  ExpectCounts(*queue, 0, 0);
}

TEST_F(PgCountTest, CountsStayExactWhileReplicasAndProducersWorkAtOnce) {
  QueueOptions options = TestOptions();
  options.workers = 3;
  ScriptedProcessor processor([](const Job& job, const JobContext&) -> Result<ProcessResult> {
    // A fixed share of the jobs becomes dead letters, the others succeed.
    if (job.request.task.back() == '7') return InvalidArgumentError("not a lesson");
    return ProcessResult::kSuccess;
  });
  auto a = Open(options);
  auto b = Open(options);
  ASSERT_NE(a, nullptr);
  ASSERT_NE(b, nullptr);
  MEND_ASSERT_OK(a->Start(processor.processor()));
  MEND_ASSERT_OK(b->Start(processor.processor()));
  constexpr int kProducers = 4;
  constexpr int kEach = 50;
  std::vector<std::thread> producers;
  for (int p = 0; p < kProducers; ++p) {
    producers.emplace_back([&, p] {
      for (int i = 0; i < kEach; ++i) {
        EXPECT_TRUE((i % 2 == 0 ? a : b)->Enqueue(Request(p * kEach + i)).ok());
      }
    });
  }
  for (std::thread& producer : producers) producer.join();
  Result<DrainReport> drained_a = InternalError("not run");
  std::thread drain_a([&] { drained_a = a->DrainNow(seconds(60)); });
  auto drained_b = b->DrainNow(seconds(60));
  drain_a.join();
  MEND_ASSERT_OK(drained_a);
  MEND_ASSERT_OK(drained_b);
  constexpr int kDead = kProducers * kEach / 10;  // the tasks ending in 7
  ExpectCounts(*a, 0, kDead);
  MEND_ASSERT_OK(a->Shutdown(seconds(5)));
  MEND_ASSERT_OK(b->Shutdown(seconds(5)));
}

TEST_F(PgCountTest, VersionTwoTablesGainTheCountsOnce) {
  // The tables of the previous release, with two pending jobs and a dead letter.
  const std::string s = "\"" + schema_ + "\"";
  RawExec("CREATE SCHEMA " + s + "; CREATE TABLE " + s +
          ".lesson_queue_meta (key TEXT PRIMARY KEY, value TEXT NOT NULL); INSERT INTO " + s +
          ".lesson_queue_meta VALUES ('lessonq.schema_version', '2'); CREATE TABLE " + s +
          ".lesson_jobs (id TEXT NOT NULL, state TEXT NOT NULL CHECK (state IN ('pending', "
          "'dead')), task TEXT NOT NULL, attempt TEXT NOT NULL, outcome TEXT NOT NULL, trigger "
          "TEXT NOT NULL, run_id TEXT NOT NULL, traceparent TEXT NOT NULL, enqueued_at BIGINT NOT "
          "NULL, next_attempt_at BIGINT NOT NULL, attempts BIGINT NOT NULL, last_error TEXT NOT "
          "NULL, locked_until BIGINT, claim_token BIGINT, provider TEXT NOT NULL DEFAULT '', "
          "base_url TEXT NOT NULL DEFAULT '', model TEXT NOT NULL DEFAULT '', PRIMARY KEY (id, "
          "state)); CREATE INDEX lesson_jobs_due ON " +
          s +
          ".lesson_jobs (next_attempt_at, enqueued_at) WHERE state = 'pending'; CREATE SEQUENCE " +
          s + ".lesson_claim_tokens;");
  InsertRow("0000000000000001", "pending");
  InsertRow("0000000000000002", "pending");
  InsertRow("0000000000000002", "dead");
  EXPECT_THAT(ReadPostgresLessonQueueSchemaVersion(testing::ServerUrl(), schema_), IsOkAndHolds(2));
  for (int open = 0; open < 2; ++open) {
    auto queue = Open();
    ASSERT_NE(queue, nullptr);
    EXPECT_THAT(ReadPostgresLessonQueueSchemaVersion(testing::ServerUrl(), schema_),
                IsOkAndHolds(3));
    ExpectCounts(*queue, 2, 1);
  }
  auto queue = Open();
  ASSERT_NE(queue, nullptr);
  ASSERT_TRUE(queue->Enqueue(Request(1)).ok());
  ExpectCounts(*queue, 3, 1);
}

}  // namespace
}  // namespace mend::lessonq
