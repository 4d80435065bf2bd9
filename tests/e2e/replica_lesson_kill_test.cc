// The PostgreSQL lesson queue with a real worker process killed by SIGKILL while it holds a job:
// the job stays claimed until the claim expires (job_timeout + claim_margin), then a worker of
// another process takes it, with the dead worker's claim counted as a failed attempt. Needs a
// server named by MEND_TEST_POSTGRES_URL and skips without one. This process runs on a
// ManualClock started at the real time, so the expiry is reached without waiting.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <libpq-fe.h>
#include <signal.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <future>
#include <memory>
#include <string>

#include "mend/base/env.h"
#include "mend/base/manual_clock.h"
#include "mend/lessonq/postgres_queue.h"
#include "tests/e2e/scratch_database.h"
#include "tests/support/e2e_harness.h"

namespace mend::testing {
namespace {

constexpr std::chrono::seconds kBound(30);

void DropSchema(const std::string& schema) {
  PGconn* conn = PQconnectdb(PostgresServerUrl().c_str());
  ASSERT_EQ(PQstatus(conn), CONNECTION_OK) << PQerrorMessage(conn);
  PQsetNoticeProcessor(
      conn, [](void*, const char*) {}, nullptr);
  PGresult* res = PQexec(conn, ("DROP SCHEMA IF EXISTS " + schema + " CASCADE").c_str());
  EXPECT_EQ(PQresultStatus(res), PGRES_COMMAND_OK) << PQerrorMessage(conn);
  PQclear(res);
  PQfinish(conn);
}

class ReplicaLessonKillTest : public E2eTest {};

TEST_F(ReplicaLessonKillTest, AJobWhoseWorkerWasKilledIsTakenOverAfterItsClaimExpires) {
  if (PostgresServerUrl().empty()) GTEST_SKIP() << "MEND_TEST_POSTGRES_URL is not set";
  const std::string schema = "mend_lesson_kill_" + std::to_string(getpid());
  ASSERT_NO_FATAL_FAILURE(DropSchema(schema));

  auto child = ChildProcess::Spawn({LESSON_PG_KILL_CHILD_BINARY, PostgresServerUrl(), schema}, {});
  MEND_ASSERT_OK(child);
  auto line = (*child)->ReadStdoutLine(kBound);
  MEND_ASSERT_OK(line);
  ASSERT_TRUE(line->starts_with("processing ")) << *line;
  EXPECT_TRUE(line->ends_with(" 1")) << *line;
  const std::string id = line->substr(11, 16);
  MEND_ASSERT_OK((*child)->Kill(SIGKILL));
  auto killed = (*child)->Finish(kBound);
  MEND_ASSERT_OK(killed);
  EXPECT_EQ(killed->status.signal, SIGKILL);

  ManualClock clock(SystemClock::Default()->Now());
  Env env = Env::Default();
  env.clock = &clock;
  lessonq::QueueOptions options;
  options.workers = 1;
  lessonq::PgQueueOptions pg;
  pg.url = PostgresServerUrl();
  pg.schema = schema;
  auto queue = lessonq::OpenPostgresLessonQueue(env, options, pg, nullptr);
  MEND_ASSERT_OK(queue);
  auto pending = (*queue)->Pending();
  MEND_ASSERT_OK(pending);
  ASSERT_EQ(pending->size(), 1u);
  EXPECT_EQ(pending->front().id, id);

  std::promise<lessonq::Job> taken;
  MEND_ASSERT_OK((*queue)->Start(
      [&](const lessonq::Job& job, const lessonq::JobContext&) -> Result<lessonq::ProcessResult> {
        taken.set_value(job);
        return lessonq::ProcessResult::kSuccess;
      }));
  std::future<lessonq::Job> job = taken.get_future();
  clock.BlockUntilWaiters(2);  // the worker found nothing claimable, and the poller
  EXPECT_EQ(job.wait_for(std::chrono::seconds(0)), std::future_status::timeout);

  clock.Advance(options.job_timeout + pg.claim_margin + std::chrono::seconds(1));
  ASSERT_EQ(job.wait_for(kBound), std::future_status::ready);
  const lessonq::Job retried = job.get();
  EXPECT_EQ(retried.id, id);
  EXPECT_EQ(retried.attempts, 2);  // the killed worker's attempt, then this one
  EXPECT_THAT(retried.last_error, ::testing::HasSubstr("claim expired"));
  auto drained = (*queue)->DrainNow(kBound);
  MEND_ASSERT_OK(drained);
  EXPECT_EQ(drained->remaining, 0);
  queue->reset();
  DropSchema(schema);
}

}  // namespace
}  // namespace mend::testing
