#pragma once

// Helpers of the PostgreSQL lesson queue's tests. They need a server: MEND_TEST_POSTGRES_URL names
// a database the tests may create schemas in (scripts/with_postgres starts a throwaway one);
// without it each test skips itself. Every test gets a schema of its own.
#include <gtest/gtest.h>
#include <libpq-fe.h>
#include <unistd.h>

#include <atomic>
#include <cstdlib>
#include <memory>
#include <string>

#include "mend/lessonq/postgres_queue.h"
#include "tests/lessonq/queue_test_util.h"

namespace mend::lessonq::testing {

inline constexpr char kNoServer[] = "MEND_TEST_POSTGRES_URL is not set (see scripts/with_postgres)";

inline std::string ServerUrl() {
  const char* url = std::getenv("MEND_TEST_POSTGRES_URL");
  return url == nullptr ? "" : url;
}

// Runs `sql` on a connection of its own, as another program would.
inline void RawExec(const std::string& sql) {
  PGconn* conn = PQconnectdb(ServerUrl().c_str());
  ASSERT_EQ(PQstatus(conn), CONNECTION_OK) << PQerrorMessage(conn);
  PQsetNoticeProcessor(
      conn, [](void*, const char*) {}, nullptr);  // "does not exist, skipping"
  PGresult* res = PQexec(conn, sql.c_str());
  ExecStatusType status = PQresultStatus(res);
  EXPECT_TRUE(status == PGRES_COMMAND_OK || status == PGRES_TUPLES_OK) << PQerrorMessage(conn);
  PQclear(res);
  PQfinish(conn);
}

// The first column of the first row `sql` returns, run on a connection of its own; "" when it
// returns no row.
inline std::string RawQuery(const std::string& sql) {
  PGconn* conn = PQconnectdb(ServerUrl().c_str());
  EXPECT_EQ(PQstatus(conn), CONNECTION_OK) << PQerrorMessage(conn);
  PGresult* res = PQexec(conn, sql.c_str());
  EXPECT_EQ(PQresultStatus(res), PGRES_TUPLES_OK) << PQerrorMessage(conn);
  std::string value;
  if (PQresultStatus(res) == PGRES_TUPLES_OK && PQntuples(res) > 0 && PQnfields(res) > 0) {
    value = PQgetvalue(res, 0, 0);
  }
  PQclear(res);
  PQfinish(conn);
  return value;
}

// A schema no other test uses. A leftover of an earlier process with the same pid is dropped.
inline std::string FreshSchema() {
  static std::atomic<int> next{0};
  std::string name = "mend_lessonq_" + std::to_string(getpid()) + "_" + std::to_string(next++);
  RawExec("DROP SCHEMA IF EXISTS \"" + name + "\" CASCADE");
  return name;
}

inline PgQueueOptions PgOptions(const std::string& schema) {
  PgQueueOptions options;
  options.url = ServerUrl();
  options.schema = schema;
  options.claim_margin = std::chrono::seconds(10);
  return options;
}

// A fixture whose tests skip without a server, each with a schema of its own.
class PgQueueTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (ServerUrl().empty()) GTEST_SKIP() << kNoServer;
    schema_ = FreshSchema();
  }

  std::unique_ptr<DurableLessonQueue> Open(QueueOptions options = TestOptions(),
                                           obs::MetricsRegistry* metrics = nullptr) {
    auto queue = OpenPostgresLessonQueue(world_.env(), options, PgOptions(schema_), metrics);
    EXPECT_TRUE(queue.ok()) << queue.status();
    return queue.ok() ? std::move(queue).value() : nullptr;
  }

  QueueWorld world_;
  std::string schema_;
};

}  // namespace mend::lessonq::testing
